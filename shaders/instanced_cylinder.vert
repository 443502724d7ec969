// A model's segments placed per tree: instance i of a draw is segment i % n of the tree at
// place i / n of its bucket's list, n the segments the bucket's level draws (the thickest
// first); the tree turns and scales its model's segments, then cylinder.glsl draws them.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_ARB_shader_draw_parameters : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"
#define WORK_ACCESS readonly
#include "instanced.glsl"
#include "cylinder.glsl"

layout(push_constant) uniform Draw {
    uvec4 draw; // x: the word holding the first model's bucket's base, y: the first model, z: level, w: the lists' first word
    vec4 fade;  // cylinder_vertex's `fade` (z 0: no ring fade; w −1 in the shadow map)
    vec4 card;  // xyz: the card's fade (tree.glsl's `lod`; x 0: none)
} pc;

layout(location = 0) in vec4 a_ring;

void main() {
    // One draw of a multi-draw per model, in the models' order.
    uint model = pc.draw.y + uint(gl_DrawIDARB);
    Model m = models[model];
    uint n = max(m.cylinders[pc.draw.z], 1u);
    uint i = uint(gl_InstanceIndex);
    Placed t = tree_at(work[pc.draw.w + work[pc.draw.x + uint(gl_DrawIDARB)] + i / n]);
    Segment s = segments[m.first.x + i % n];
    vec3 start = t.position + turned(s.start.xyz, t.yaw) * t.scale;
    vec3 end = t.position + turned(s.end.xyz, t.yaw) * t.scale;
    vec4 tree = vec4(t.position, m.shape.x * t.scale);
    vec2 radii = vec2(s.start.w, s.end.w) * t.scale;
    cylinder_vertex(a_ring, start, end, radii, unpackUnorm4x8(s.colour.x).rgb, tree, pc.fade, pc.card.xyz);
}
