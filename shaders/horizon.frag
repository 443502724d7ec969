// The far field's colour: grass on gentle ground, forest canopy where the
// biomes grow it, rock on steep, sand by the sea, the open sea over the ground it covers; lit by the sun (no shadows so
// far out) and the sky, and fogged like every surface, so it fades into the
// haze as the chunks do.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "ground.glsl"
#include "sea.glsl"

layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec2 v_noise;
layout(location = 3) in float v_depth;
layout(location = 4) flat in float v_sea;
layout(location = 5) in float v_canopy;

layout(location = 0) out vec4 o_colour;

const vec3 ROCK = vec3(0.25, 0.24, 0.23);
const vec3 SAND = vec3(0.38, 0.31, 0.20);
// Forest seen from afar: the canopy's dark green, which covers most gentle ground.
const vec3 CANOPY = vec3(0.035, 0.07, 0.025);

void main() {
    vec3 n = normalize(v_normal);
    float slope = 1.0 - n.y;
    // A slope over 64 m is gentler than the gullies the chunks' erosion cuts into it,
    // whose rock shows at a distance as a share of grey: rock comes in on gentler
    // slopes than on the chunks, and never wholly.
    float steep = 0.75 * smoothstep(0.03, 0.2, slope + (v_noise.y - 0.5) * 0.08);
    // Crowns where the world's biomes grow forest (their share of the ground), broken up a
    // little by the noise so a forest is no flat sheet.
    float crowns = clamp(v_canopy * mix(0.8, 1.2, v_noise.x), 0.0, 1.0);
    vec3 green = mix(grass_albedo(v_noise), CANOPY, crowns);
    // The chunks' granite shows between patches of soil, a third of the ground or so
    // where it is gentle.
    // Trees darken the chunks' ground a little where they stand.
    vec3 albedo = 0.92 * mix(green, ROCK * mix(0.88, 1.12, v_noise.y), max(steep, 0.35) * (1.0 - 0.8 * crowns));
    // A beach a few metres above the sea.
    albedo = mix(albedo, SAND, smoothstep(-6.0, -1.0, v_depth) * (1.0 - steep));
    vec3 sky = g.ambient.rgb * (0.55 + 0.45 * n.y);
    vec3 c = albedo * (sky + g.sun_colour.rgb * max(dot(n, to_sun()), 0.0));
    if (v_depth > 0.0) {
        c = sea_colour(vec3(v_world.x, v_sea, v_world.z));
    }
    o_colour = vec4(fogged(c, v_world), 1.0);
}
