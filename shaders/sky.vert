// The sky: one triangle covering the screen at the far plane (depth 1), so
// it fills exactly the pixels no surface was drawn on.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(push_constant) uniform Sea {
    vec4 sea; // x: the sea's level, y: 1 where there is a sea
} pc;

layout(location = 0) out vec2 v_ndc;
layout(location = 1) flat out vec2 v_sea;

void main() {
    // Vertices (−1, −1), (3, −1), (−1, 3): the triangle's inside covers clip space.
    vec2 ndc = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2)) * 2.0 - 1.0;
    v_ndc = ndc;
    v_sea = pc.sea.xy;
    gl_Position = vec4(ndc, 1.0, 1.0);
}
