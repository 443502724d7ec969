// Terrain colour: slope, height and water decide what shows: rock on steep
// slopes, grass on gentle soil (patchy on weathered
// rock), sand on sand and by the water, snow above the snow line, and water
// tinted by its depth with the sky reflected. Fogged toward the sky. The
// material properties and noise come interpolated from terrain.vert.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "ground.glsl"

layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_rock;
layout(location = 3) in vec4 v_ground; // x: soil, y: sand, z: macro noise, w: detail noise
layout(location = 4) in vec2 v_water;  // x: water depth, y: water depth next door
layout(location = 5) flat in vec2 v_snow;

layout(location = 0) out vec4 o_colour;

const vec3 SAND = vec3(0.38, 0.31, 0.20);
const vec3 SNOW = vec3(0.82, 0.85, 0.90);
const vec3 DEEP_WATER = vec3(0.006, 0.035, 0.06);

// The dry ground's colour by material, slope and height.
vec3 land_albedo(vec3 n) {
    float macro = v_ground.z;
    float detail = v_ground.w;
    // Slope: 0 flat, 0.23 at 40°, 0.36 at 50°; the noise frays the rock line.
    float slope = 1.0 - n.y;
    float steep = smoothstep(0.22, 0.36, slope + (detail - 0.5) * 0.1);
    vec3 rock = v_rock * mix(0.88, 1.12, detail);
    vec3 grass = grass_albedo(vec2(macro, detail));
    // Soil below 1 grows grass in patches where the noise is high enough.
    float cover = smoothstep(0.8 - v_ground.x, 1.2 - v_ground.x, detail * 0.5 + macro * 0.5 + v_ground.x * 0.5);
    vec3 c = mix(rock, grass, cover * (1.0 - steep));
    float sand = max(v_ground.y, smoothstep(0.02, 0.25, v_water.y)) * (1.0 - steep);
    c = mix(c, SAND * mix(0.85, 1.1, detail), sand);
    float snow_line = v_snow.x + (macro - 0.5) * v_snow.y * 2.0;
    // By hand rather than smoothstep: without snow the line is at the float maximum.
    float t = clamp((v_world.y - snow_line) / v_snow.y, 0.0, 1.0);
    float snow = t * t * (3.0 - 2.0 * t) * (1.0 - smoothstep(0.25, 0.45, slope));
    c = mix(c, SNOW, snow);
    return c * mix(0.92, 1.08, macro);
}

// Lambert sun plus sky light, stronger on faces that see more sky.
vec3 light(vec3 albedo, vec3 n) {
    vec3 sky = g.ambient.rgb * (0.55 + 0.45 * n.y);
    return albedo * (sky + g.sun_colour.rgb * sunlight(v_world) * max(dot(n, to_sun()), 0.0));
}

// Water over lit ground `floor_lit`: the ground fades with depth into dark
// blue (red is absorbed first, so shallows look green), the sky reflects at
// grazing angles and the sun glints.
vec3 water(vec3 floor_lit, float depth) {
    vec3 view = normalize(v_world - g.camera.xyz);
    vec3 through = exp(-depth * vec3(1.6, 0.55, 0.35));
    vec3 body = floor_lit * through + DEEP_WATER * (g.ambient.rgb + g.sun_colour.rgb) * (1.0 - through);
    float fresnel = 0.02 + 0.98 * pow(1.0 - max(-view.y, 0.0), 5.0);
    vec3 r = vec3(view.x, -view.y, view.z);
    vec3 glint = g.sun_colour.rgb * 4.0 * pow(max(dot(r, to_sun()), 0.0), 400.0);
    return mix(body, sky_colour(r), fresnel) + glint;
}

void main() {
    vec3 n = normalize(v_normal);
    float wet = smoothstep(0.01, 0.08, v_water.x);
    // Ground under water is darker (wet) before the water tints it.
    vec3 c = light(land_albedo(n) * mix(1.0, 0.6, wet), n);
    if (wet > 0.0) {
        c = mix(c, water(c, v_water.x), wet);
    }
    o_colour = vec4(fogged(c, v_world), 1.0);
}
