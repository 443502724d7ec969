// Unlit points, fogged toward the sky like everything else.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_world;

layout(location = 0) out vec4 o_colour;

void main() {
    o_colour = vec4(fogged(v_colour, v_world), 1.0);
}
