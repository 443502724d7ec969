// Sun, sky ambient and fog toward the sky for lit surfaces (cylinders) drawn whole: no
// discard, so the depth test may run before shading.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "lit.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_world;

layout(location = 0) out vec4 o_colour;

void main() {
    o_colour = lit_surface(v_colour, v_normal, v_world);
}
