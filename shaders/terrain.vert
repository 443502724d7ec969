// Terrain: one shared grid mesh of sample coordinates; heights, water and the
// top material come from the chunk's textures (vertex texture fetch). What
// varies slowly (material properties, macro noise, the water level) is worked
// out here per sample and interpolated; the ground's height, normal and fine
// detail are the fragment shader's, per pixel, so coarse grids far away and
// fine ones close up light alike. A ring of skirt vertices hangs below the
// border so chunks drawn with different grids show no cracks between them.
// The shadow map draws the same vertices with the sun's constants.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "ground.glsl"

layout(set = 1, binding = 0) uniform sampler2D u_surface;   // r: ground height, g: water depth
layout(set = 1, binding = 1) uniform usampler2D u_material; // top material id, 255: bare

layout(push_constant) uniform Chunk {
    vec4 origin_cell; // xyz: world position of sample (0, 0), w: cell size
    ivec4 size;       // x: samples per side
    vec4 levels;      // x: snow line (world height), y: metres over which snow fades in, z: time, seconds,
                      // w: the sea's level (world height; far below the ground without a sea)
} pc;

layout(location = 0) in vec3 a_sample; // xy: sample coordinates, z: skirt drop in cells (0: surface)

layout(location = 0) out vec3 v_world;
layout(location = 1) out vec3 v_normal; // the skirt's and the coarse grid's normal
layout(location = 2) out vec3 v_rock;   // colour of the material's bare rock face
layout(location = 3) out vec4 v_ground; // x: soil (grass grows), y: sand, z: macro noise, w: detail noise
layout(location = 4) out vec3 v_water;  // x: water level, y: water depth next door (shores), z: flow (0 still, 1 steep)
layout(location = 5) flat out vec4 v_snow; // xy: snow line and fade, z: time, w: cell size
layout(location = 6) out vec3 v_cell;   // xy: sample coordinates, z: 1 on the skirt
layout(location = 7) flat out int v_size;
layout(location = 8) out float v_floor; // ground height above the chunk's origin
layout(location = 9) out vec2 v_strata; // x: thickness of the rock's beds, metres; y: how much beds differ
layout(location = 10) flat out float v_sea; // the sea's level above the chunk's origin

// Linear colours of exposed rock in material byte order: granite, marble,
// slate, limestone, sandstone, sand, regolith (loose ground on a steep face
// shows as dark weathered rock).
const vec3 ROCK[7] = vec3[](
    vec3(0.25, 0.24, 0.23),
    vec3(0.38, 0.37, 0.35),
    vec3(0.15, 0.16, 0.18),
    vec3(0.33, 0.31, 0.27),
    vec3(0.36, 0.30, 0.24),
    vec3(0.30, 0.27, 0.23),
    vec3(0.24, 0.22, 0.20)
);
// How readily grass covers gentle ground of each material: fully on soil,
// in patches on weathered sedimentary rock, barely on hard rock.
const float SOIL[7] = float[](0.15, 0.1, 0.1, 0.5, 0.5, 0.0, 1.0);
// How the rock is bedded, per material: granite in thick sheets of faint
// tints (its sheeting joints), marble in massive beds, slate in thin
// laminae, limestone and sandstone in strongly banded beds; sand and
// weathered regolith in loose, faint layers.
const vec2 STRATA[7] = vec2[](
    vec2(2.6, 0.45),
    vec2(1.8, 0.3),
    vec2(0.35, 0.6),
    vec2(1.1, 0.75),
    vec2(0.8, 0.9),
    vec2(0.5, 0.3),
    vec2(1.4, 0.35)
);
const vec3 BARE = vec3(0.08, 0.08, 0.08);
const vec3 EARTH = vec3(0.12, 0.09, 0.07);
const uint SAND = 5u;
// Water shallower than this is a wet film, not water.
const float WET = 0.01;

vec2 fetch(ivec2 c) {
    return texelFetch(u_surface, clamp(c, ivec2(0), ivec2(pc.size.x - 1)), 0).rg;
}

// The water level drawn at a sample: the mean surface of its wet
// neighbourhood (which calms the cell-to-cell sloshing of the water
// simulation), never above the highest neighbouring surface, so a lone wet
// sample (a spring, a raindrop) is a pool instead of a needle of water.
float water_top(vec2 hw, vec4 s, vec4 wet) {
    float mean = (hw.r + hw.g + dot(s, wet)) / (1.0 + dot(wet, vec4(1.0)));
    float rim = max(max(s.x, s.y), max(s.z, s.w));
    return max(hw.r, min(mean, rim));
}

void main() {
    ivec2 c = ivec2(a_sample.xy);
    float cell = pc.origin_cell.w;
    vec2 hw = fetch(c);
    vec2 l = fetch(c - ivec2(1, 0));
    vec2 r = fetch(c + ivec2(1, 0));
    vec2 b = fetch(c - ivec2(0, 1));
    vec2 f = fetch(c + ivec2(0, 1));
    v_normal = normalize(vec3(l.r - r.r, 2.0 * cell, b.r - f.r));
    vec4 s = vec4(l.r + l.g, r.r + r.g, b.r + b.g, f.r + f.g);
    vec4 wet = step(vec4(WET), vec4(l.g, r.g, b.g, f.g));
    float top = hw.g < WET ? hw.r : water_top(hw, s, wet);
    // A dry sample beside water (diagonals too: they share a cell with it)
    // takes its wet neighbours' mean level, as a wet one takes its
    // neighbourhood's, so levels along a shore agree; the level minus the
    // ground per pixel then crosses zero where the ground rises out of the
    // water (a smooth shore) rather than halfway between samples. Far from
    // water the level lies well below the ground.
    vec2 dl = fetch(c + ivec2(-1, -1));
    vec2 dr = fetch(c + ivec2(1, -1));
    vec2 ul = fetch(c + ivec2(-1, 1));
    vec2 ur = fetch(c + ivec2(1, 1));
    vec4 sd = vec4(dl.r + dl.g, dr.r + dr.g, ul.r + ul.g, ur.r + ur.g);
    vec4 wet_d = step(vec4(WET), vec4(dl.g, dr.g, ul.g, ur.g));
    float wet_count = dot(wet + wet_d, vec4(1.0));
    float beside = wet_count > 0.0 ? (dot(s, wet) + dot(sd, wet_d)) / wet_count : 1e9;
    // A lone wet sample keeps a shallow pool where its level was clamped.
    float level = hw.g >= WET ? max(top, hw.r + min(hw.g, 0.25)) : beside < 1e8 ? beside : hw.r - 1.0;
    // How steeply the water's surface falls: rivers on a slope flow, seas and
    // lakes lie still (a shore sample counts with its water's level, not its ground).
    float own = hw.g < WET && beside < 1e8 ? beside : top;
    vec4 surf = mix(vec4(own), s, greaterThan(wet, vec4(0.5)));
    float fall = length(vec2(surf.x - surf.y, surf.z - surf.w)) / (2.0 * cell);
    v_water = vec3(level, max(max(l.g, r.g), max(b.g, f.g)), smoothstep(0.01, 0.12, fall));
    uint m = texelFetch(u_material, c, 0).r;
    // A skirt seen at the world's edge is a cut through the ground: earth, bare.
    bool skirt = a_sample.z > 0.0;
    v_rock = skirt ? EARTH : m < 7u ? ROCK[m] : BARE;
    vec3 p = pc.origin_cell.xyz + vec3(float(c.x) * cell, top - a_sample.z * cell, float(c.y) * cell);
    float soil = skirt || m >= 7u ? 0.0 : SOIL[m];
    v_ground = vec4(soil, !skirt && m == SAND ? 1.0 : 0.0, ground_noise(p.xz));
    v_strata = skirt || m >= 7u ? vec2(1.4, 0.0) : STRATA[m];
    v_sea = pc.levels.w - pc.origin_cell.y;
    v_snow = vec4(pc.levels.xyz, cell);
    v_cell = vec3(a_sample.xy, skirt ? 1.0 : 0.0);
    v_size = pc.size.x;
    v_floor = hw.r - a_sample.z * cell;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
