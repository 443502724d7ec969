// Lit cylinders fading against a neighbouring ring: each keeps only its share of the pixels
// (dither.glsl), then is lit as lit.frag lights it.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "lit.glsl"
#include "dither.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_world;
layout(location = 3) flat in vec2 v_keep;

layout(location = 0) out vec4 o_colour;

void main() {
    if (dithered_out(v_keep)) {
        discard;
    }
    o_colour = lit_surface(v_colour, v_normal, v_world);
}
