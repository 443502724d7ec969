// Terrain: one shared grid mesh of sample coordinates; heights, water and the
// top material come from the chunk's textures (vertex texture fetch).
#version 450

layout(set = 0, binding = 0) uniform Globals {
    mat4 view_proj;
    vec4 camera;     // xyz: eye position
    vec4 sun_dir;    // xyz: direction the light travels
    vec4 sun_colour; // rgb
    vec4 sky;        // rgb: sky and fog colour, w: fog density per metre
    vec4 ambient;    // rgb: sky light reaching every surface
    vec4 viewport;   // xy: size in pixels, z: point size in pixels
} g;

layout(set = 1, binding = 0) uniform sampler2D u_surface;   // r: ground height, g: water depth
layout(set = 1, binding = 1) uniform usampler2D u_material; // top material id, 255: bare

layout(push_constant) uniform Chunk {
    vec4 origin_cell; // xyz: world position of sample (0, 0), w: cell size
    ivec4 size;       // x: samples per side
} pc;

layout(location = 0) in vec2 a_sample;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;

// Linear colours of the rock types in byte order: granite, marble, slate,
// limestone, sandstone, sand, regolith.
const vec3 PALETTE[7] = vec3[](
    vec3(0.30, 0.28, 0.27),
    vec3(0.70, 0.69, 0.66),
    vec3(0.18, 0.20, 0.23),
    vec3(0.58, 0.54, 0.42),
    vec3(0.55, 0.36, 0.22),
    vec3(0.72, 0.62, 0.38),
    vec3(0.22, 0.32, 0.12)
);
const vec3 WATER = vec3(0.05, 0.18, 0.35);
const vec3 BARE = vec3(0.1, 0.1, 0.1);

float surface(ivec2 c) {
    c = clamp(c, ivec2(0), ivec2(pc.size.x - 1));
    vec2 hw = texelFetch(u_surface, c, 0).rg;
    return hw.r + hw.g;
}

void main() {
    ivec2 c = ivec2(a_sample);
    float cell = pc.origin_cell.w;
    vec2 hw = texelFetch(u_surface, c, 0).rg;
    float hl = surface(c - ivec2(1, 0));
    float hr = surface(c + ivec2(1, 0));
    float hb = surface(c - ivec2(0, 1));
    float hf = surface(c + ivec2(0, 1));
    v_normal = normalize(vec3(hl - hr, 2.0 * cell, hb - hf));
    uint m = texelFetch(u_material, c, 0).r;
    vec3 ground = m < 7u ? PALETTE[m] : BARE;
    v_colour = mix(ground, WATER, smoothstep(0.002, 0.05, hw.g));
    vec3 p = pc.origin_cell.xyz + vec3(float(c.x) * cell, hw.r + hw.g, float(c.y) * cell);
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
