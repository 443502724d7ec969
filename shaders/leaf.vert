// Leaves of a batch: one card per instance (six vertices), drawn by leaf.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"
#include "leaf.glsl"

layout(push_constant) uniform Leaf {
    vec4 play; // x: time (s)
    vec4 lod;  // leaf_vertex's `lod`
    vec4 card; // xyz: the card's fade (tree.glsl's `lod`; x 0: no cards for these trees)
} pc;

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec3 i_normal;
layout(location = 2) in float i_size;
layout(location = 3) in vec4 i_colour;
layout(location = 4) in float i_rank;
layout(location = 5) in vec4 i_anchor; // the tree's root from i_position, and height (0: a loose leaf)

void main() {
    vec4 tree = vec4(i_position + i_anchor.xyz, i_anchor.w);
    leaf_vertex(gl_VertexIndex, i_position, i_normal, i_size, i_colour.rgb, i_rank, tree, pc.play.x, pc.lod, pc.card.xyz, 0.0);
}
