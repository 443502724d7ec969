// Instanced tapered cylinders: one instance per segment (start, end, radii, colour, tree
// anchor), drawn by cylinder.glsl. Each ring mesh is drawn over the radii on screen it
// serves; near a threshold both neighbouring rings draw and dither.glsl splits the pixels
// between them by the fade.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"
#include "cylinder.glsl"

layout(push_constant) uniform Ring {
    vec4 fade; // cylinder_vertex's `fade`
    vec4 card; // xyz: the card's fade (tree.glsl's `lod`; x 0: no cards for these trees)
} pc;

layout(location = 0) in vec4 a_ring;
layout(location = 1) in vec3 i_start;
layout(location = 2) in vec3 i_end;
layout(location = 3) in float i_start_radius;
layout(location = 4) in float i_end_radius;
layout(location = 5) in vec4 i_colour;
layout(location = 6) in vec4 i_anchor; // the tree's root from i_start, and height (0: no tree)

void main() {
    vec4 tree = vec4(i_start + i_anchor.xyz, i_anchor.w);
    cylinder_vertex(a_ring, i_start, i_end, vec2(i_start_radius, i_end_radius), i_colour.rgb, tree, pc.fade, pc.card.xyz);
}
