// Evaluates the leaves' wind (wind.glsl) for a list of queries, so tests can compare what
// the vertex shader computes with WindField::sample.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

#include "globals.glsl"
#include "wind.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Queries { vec4 queries[]; }; // x, y, z, wind time
layout(std430, set = 0, binding = 2) writeonly buffer Results { vec4 results[]; };

layout(push_constant) uniform Probe {
    uvec4 count; // x: queries
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count.x) {
        return;
    }
    vec4 q = queries[i];
    results[i] = vec4(wind_sample(q.xyz, q.w), 0.0);
}
