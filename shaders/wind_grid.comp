// The frame's wind grid: wind.glsl at every node (sway.glsl reads it), at the frame's wind time.
#version 450
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

#include "globals.glsl"
#include "wind.glsl"

layout(std430, set = 0, binding = 2) writeonly buffer WindGrid { vec4 wind_nodes[]; };

layout(push_constant) uniform Grid {
    vec4 time; // x: the frame's time (s)
} pc;

void main() {
    int n = int(g.wind_grid.w);
    int k = int(gl_GlobalInvocationID.x);
    if (k >= n * n) {
        return;
    }
    vec2 xz = g.wind_grid.xy + vec2(k % n, k / n) * g.wind_grid.z;
    vec3 w = wind_sample(vec3(xz.x, 0.0, xz.y), pc.time.x * g.wind.play.x) * g.wind.play.y;
    wind_nodes[k] = vec4(w, 0.0);
}
