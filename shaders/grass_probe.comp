// Evaluates the grass fetch for a list of queries, so tests can compare what
// the vertex shader computes with BakedGrass::sample.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) uniform sampler3D u_motion;
layout(std430, set = 0, binding = 1) readonly buffer Queries { vec4 queries[]; }; // link, x, z, time
layout(std430, set = 0, binding = 2) writeonly buffer Results { vec4 results[]; };

layout(push_constant) uniform Probe {
    vec4 field; // cells, cell size, frames, seconds per frame
    vec4 play;  // wind power, wave speed, links, RGB8 scale (0: RGBA16F)
    uvec4 count; // x: queries
} pc;

#include "grass_fetch.glsl"

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count.x) {
        return;
    }
    vec4 q = queries[i];
    vec3 d = grass_fetch(u_motion, pc.field, pc.play.w, int(q.x), q.yz, q.w * pc.play.y, pc.play.x);
    results[i] = vec4(d, 0.0);
}
