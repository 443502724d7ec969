// A model's leaves placed per tree: instance i of a draw is leaf i % n of the tree at place
// i / n of its bucket's list, n the most leaves a tree of the bucket asks for (the lowest
// ranks first); the tree turns and scales its model's leaves, then leaf.glsl thins and draws
// them.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_ARB_shader_draw_parameters : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"
#define WORK_ACCESS readonly
#include "instanced.glsl"
#include "leaf.glsl"

layout(push_constant) uniform Draw {
    uvec4 draw; // x: the word holding the first model's bucket's base, y: the first model, z: the word holding its leaves, w: the lists' first word
    vec4 play;  // x: time (s), y: leaf_vertex's `nearest` (the shadow map's; 0 in view)
    vec4 lod;   // leaf_vertex's `lod`
    vec4 card;  // xyz: the card's fade (tree.glsl's `lod`; x 0: none)
} pc;

void main() {
    // One draw of a multi-draw per model, in the models' order.
    uint draw = uint(gl_DrawIDARB);
    Model m = models[pc.draw.y + draw];
    uint n = max(work[pc.draw.z + draw], 1u);
    uint i = uint(gl_InstanceIndex);
    Placed t = tree_at(work[pc.draw.w + work[pc.draw.x + draw] + i / n]);
    ModelLeaf l = model_leaves[m.first.y + i % n];
    vec3 position = t.position + turned(l.place.xyz, t.yaw) * t.scale;
    vec3 normal = turned(l.normal.xyz, t.yaw);
    vec4 tree = vec4(t.position, m.shape.x * t.scale);
    leaf_vertex(gl_VertexIndex, position, normal, l.place.w * t.scale, unpackUnorm4x8(l.colour.x).rgb, l.normal.w, tree, pc.play.x, pc.lod, pc.card.xyz, pc.play.y);
}
