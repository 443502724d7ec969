// Leaves: the card cut to a pointed leaf (stalk at x = -1, tip at x = 1), lit from both sides
// with light shining through, sky ambient and fog toward the sky (atmosphere.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "leaf_shape.glsl"
#include "dither.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_world;
layout(location = 3) in vec2 v_card;
layout(location = 4) flat in vec2 v_keep; // the dither thresholds kept, [x, y)

layout(location = 0) out vec4 o_colour;

void main() {
    if (outside_leaf(v_card) || dithered_out(v_keep)) {
        discard;
    }
    vec3 n = normalize(v_normal);
    n = gl_FrontFacing ? n : -n;
    float facing = dot(n, to_sun());
    float sun = sunlight(v_world);
    // The side away from the sun glows with what the leaf lets through, yellower.
    vec3 through = v_colour * vec3(1.3, 1.2, 0.6) * 0.55 * max(-facing, 0.0);
    float rib = 1.0 - 0.2 * exp(-abs(v_card.y) * 40.0);
    vec3 lit = v_colour * rib * (g.ambient.rgb + g.sun_colour.rgb * sun * max(facing, 0.0)) + g.sun_colour.rgb * sun * through;
    o_colour = vec4(fogged(lit, v_world), 1.0);
}
