// The sky along each pixel's ray (unprojected through the inverse
// view-projection): gradient, horizon haze, sun glow and disc; where the
// world has a sea, a ray that goes down meets it instead, out to the
// horizon (what covers a pixel nearer was drawn before the sky).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "sea.glsl"

layout(location = 0) in vec2 v_ndc;
layout(location = 1) flat in vec2 v_sea; // x: the sea's level, y: 1 where there is a sea

layout(location = 0) out vec4 o_colour;

void main() {
    vec4 near = g.inv_view_proj * vec4(v_ndc, 0.0, 1.0);
    vec4 far = g.inv_view_proj * vec4(v_ndc, 1.0, 1.0);
    vec3 dir = normalize(far.xyz / far.w - near.xyz / near.w);
    vec3 eye = g.camera.xyz;
    if (v_sea.y > 0.5 && dir.y < 0.0 && eye.y > v_sea.x) {
        vec3 at = eye + dir * ((v_sea.x - eye.y) / dir.y);
        o_colour = vec4(fogged(sea_colour(at), at), 1.0);
        return;
    }
    o_colour = vec4(sky_colour(dir) + sun_disc(dir), 1.0);
}
