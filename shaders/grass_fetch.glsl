// The baked grass fetch, shared by grass.vert and grass_probe.comp and mirrored
// on the CPU by BakedGrass::sample: nearest field cell (wrapping, negative
// coordinates included), two frames mixed linearly, the last frame blending
// into the first at the loop seam, times the wind power.
//
// motion: cells × cells × (links · frames) texels, z = link · frames + frame.
// field: x cells per side, y cell size (m), z frames, w seconds per frame.
// rgb8_scale: 0 for RGBA16F texels (metres), else metres per byte step of an
// RGBA8 UNORM texel holding the thesis's (byte − 128) encoding.

vec3 grass_texel(sampler3D motion, ivec3 c, float rgb8_scale) {
    vec4 t = texelFetch(motion, c, 0);
    return rgb8_scale > 0.0 ? (round(t.rgb * 255.0) - 128.0) * rgb8_scale : t.rgb;
}

// Displacement of particle `link + 1` of a blade rooted at world `xz`, at
// playback time `t` (seconds × wave speed).
vec3 grass_fetch(sampler3D motion, vec4 field, float rgb8_scale, int link, vec2 xz, float t, float wind_power) {
    int n = int(field.x);
    ivec2 cell = ivec2(floor(xz / field.y));
    cell = ((cell % n) + n) % n;
    float frames = field.z;
    float f = t / field.w;
    f = f - frames * floor(f / frames);
    int f0 = min(int(floor(f)), int(frames) - 1);
    int f1 = (f0 + 1) % int(frames);
    float w = f - float(f0);
    int base = link * int(frames);
    vec3 a = grass_texel(motion, ivec3(cell, base + f0), rgb8_scale);
    vec3 b = grass_texel(motion, ivec3(cell, base + f1), rgb8_scale);
    return (a * (1.0 - w) + b * w) * wind_power;
}
