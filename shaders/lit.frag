// Sun, sky ambient and fog toward the sky for lit surfaces (cylinders); a ring fading
// against its neighbour keeps only its share of the pixels (dither.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
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
    vec3 n = normalize(v_normal);
    vec3 lit = v_colour * (g.ambient.rgb + g.sun_colour.rgb * sunlight(v_world) * max(dot(n, to_sun()), 0.0));
    o_colour = vec4(fogged(lit, v_world), 1.0);
}
