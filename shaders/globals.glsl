// The per-frame constants at set 0, binding 0: `Block` in vk/src/globals.rs
// (std140). Fields are only ever appended, so a shader that still declares
// an older prefix of this block (grass.vert) reads the same bytes.
// The wind crowns sway in: `WindBlock` in vk/src/wind.rs, evaluated by wind.glsl.
struct SwayWinds {
    uvec4 count;          // x: winds, y: gusts
    vec4 play;            // x: wind seconds per frame second, y: velocity factor, z: sway (m)
    uvec4 keys[8];        // per wind, two: (noise 0 key lo, hi, noise 1 lo, hi), (noise 2 lo, hi)
    vec4 power[4];        // per wind: smallest strength, its modulation (m/s), polar, azimuth amplitude
    vec4 lattice[4];      // per wind: nodes per second, deviation, spacing (m)
    vec4 span[4];         // per wind: on, off (s), main direction x, z
    vec4 gust_place[4];   // per gust: centre x, z, radius (m)
    vec4 gust_time[4];    // per gust: start, duration (s)
    vec4 gust_velocity[4]; // per gust: peak velocity (m/s)
};

layout(set = 0, binding = 0) uniform Globals {
    mat4 view_proj;
    vec4 camera;        // xyz: eye position
    vec4 sun_dir;       // xyz: direction the light travels
    vec4 sun_colour;    // rgb
    vec4 horizon;       // rgb: sky at the horizon (haze), w: fog density per metre at height 0
    vec4 ambient;       // rgb: sky light reaching every surface
    vec4 viewport;      // xy: size in pixels, z: point size in pixels
    mat4 inv_view_proj; // clip space back to world space, for the sky's rays
    vec4 zenith;        // rgb: sky straight up, w: fog height falloff per metre
    vec4 ground_haze;   // rgb: haze below the horizon
    mat4 light_view_proj; // world to the shadow map's clip space (Vulkan depth 0..1)
    vec4 shadow;        // x: share of sunlight a shadow takes (0: none), y: one texel in uv
    SwayWinds wind;     // the wind crowns sway in
    vec4 wind_grid;     // xy: the wind grid's first node (x, z), z: metres between nodes,
                        // w: nodes per side (0: still air; sway.glsl)
} g;

// Batch colours are sRGB bytes, as scene files write them; light is summed in
// linear values (the target encodes sRGB again on write).
vec3 linear_colour(vec3 srgb) {
    return pow(srgb, vec3(2.2));
}
