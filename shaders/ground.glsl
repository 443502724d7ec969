// What the ground's colour is made of, shared by the terrain (terrain.vert
// samples the noise, terrain.frag colours with it) and the grass (grass.vert
// tints blades by the ground they stand on and fades far ones into it).

float hash(vec2 p) {
    p = fract(p * vec2(0.1031, 0.1030));
    p += dot(p, p.yx + 33.33);
    return fract((p.x + p.y) * p.x);
}

// Smooth value noise in [0, 1]: one lattice value per unit, blended.
float value_noise(vec2 p) {
    vec2 i = floor(p);
    vec2 f = p - i;
    f = f * f * (3.0 - 2.0 * f);
    float a = hash(i);
    float b = hash(i + vec2(1.0, 0.0));
    float c = hash(i + vec2(0.0, 1.0));
    float d = hash(i + vec2(1.0, 1.0));
    return mix(mix(a, b, f.x), mix(c, d, f.x), f.y);
}

// The ground's noise at world (x, z): x, macro (over about 400 m); y, detail
// (over 5 to 23 m).
vec2 ground_noise(vec2 xz) {
    float detail = value_noise(xz / 23.0) * 0.6 + value_noise(xz / 5.0) * 0.4;
    return vec2(value_noise(xz / 420.0), detail);
}

// The colour of grassy ground with that noise: lush to dry.
vec3 grass_albedo(vec2 noise) {
    const vec3 LUSH = vec3(0.06, 0.14, 0.03);
    const vec3 DRY = vec3(0.20, 0.20, 0.07);
    return mix(LUSH, DRY, clamp(noise.x * 0.9 + noise.y * 0.5 - 0.2, 0.0, 1.0));
}
