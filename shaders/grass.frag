// Grass: two-sided sun lighting (the normal faces the viewer), sky ambient
// and fog toward the sky.
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
    n = gl_FrontFacing ? n : -n;
    vec3 l = to_sun();
    // Thin blades pass some light through: the lit side's half reaches the back.
    float sun = max(dot(n, l), 0.0) + 0.5 * max(-dot(n, l), 0.0);
    vec3 lit = v_colour * (g.ambient.rgb + g.sun_colour.rgb * sunlight(v_world) * sun);
    o_colour = vec4(fogged(lit, v_world), 1.0);
}
