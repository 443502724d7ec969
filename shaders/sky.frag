// The sky along each pixel's ray (unprojected through the inverse
// view-projection): gradient, horizon haze, sun glow and disc.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"

layout(location = 0) in vec2 v_ndc;

layout(location = 0) out vec4 o_colour;

void main() {
    vec4 near = g.inv_view_proj * vec4(v_ndc, 0.0, 1.0);
    vec4 far = g.inv_view_proj * vec4(v_ndc, 1.0, 1.0);
    vec3 dir = normalize(far.xyz / far.w - near.xyz / near.w);
    o_colour = vec4(sky_colour(dir) + sun_disc(dir), 1.0);
}
