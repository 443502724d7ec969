// Points as screen-aligned squares of a fixed pixel size: six vertices per instance.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec4 i_colour;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_world;

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
    vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

void main() {
    vec4 clip = g.view_proj * vec4(i_position, 1.0);
    clip.xy += CORNERS[gl_VertexIndex] * g.viewport.z / g.viewport.xy * clip.w;
    v_colour = linear_colour(i_colour.rgb);
    v_world = i_position;
    gl_Position = clip;
}
