// Sun, sky ambient and fog toward the sky for lit surfaces (cylinders).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_world;

layout(location = 0) out vec4 o_colour;

void main() {
    vec3 n = normalize(v_normal);
    vec3 lit = v_colour * (g.ambient.rgb + g.sun_colour.rgb * sunlight(v_world) * max(dot(n, to_sun()), 0.0));
    o_colour = vec4(fogged(lit, v_world), 1.0);
}
