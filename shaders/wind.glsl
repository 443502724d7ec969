// The wind of sylva-systems' grass::wind, evaluated from the frame's `g.wind`: per wind three
// lattice value noises over ground × time (node values hashed by rng::hash_words, normal by
// Box–Muller, cosine-interpolated), summed, plus gusts. `WindField::sample` is its CPU
// mirror; the wind probe (wind_probe.comp) compares the two. 64-bit words are uvec2 (lo, hi).

uvec2 add64(uvec2 a, uvec2 b) {
    uint carry;
    uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}

uvec2 mul64(uvec2 a, uvec2 b) {
    uint hi, lo;
    umulExtended(a.x, b.x, hi, lo);
    return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}

// a ^ (a >> s), 0 < s < 32.
uvec2 xor_shift(uvec2 a, int s) {
    return a ^ uvec2((a.x >> s) | (a.y << (32 - s)), a.y >> s);
}

// rng::mix64 (SplitMix64's finaliser).
uvec2 mix64(uvec2 x) {
    x = add64(x, uvec2(0x7F4A7C15u, 0x9E3779B9u));
    x = mul64(xor_shift(x, 30), uvec2(0x1CE4E5B9u, 0xBF58476Du));
    x = mul64(xor_shift(x, 27), uvec2(0x133111EBu, 0x94D049BBu));
    return xor_shift(x, 31);
}

// An i64 lattice coordinate as the u64 word the CPU hashes, mixed.
uvec2 mix_word(int i) {
    return mix64(uvec2(uint(i), i < 0 ? 0xFFFFFFFFu : 0u));
}

// Wind::node: the standard-normal value of a hash, scaled by the deviation, clamped.
float wind_node(uvec2 h, float deviation) {
    float u1 = max(float(h.y >> 8) * (1.0 / 16777216.0), 1e-7);
    float u2 = float(((h.y & 0xFFu) << 16) | (h.x >> 16)) * (1.0 / 16777216.0);
    float z = sqrt(-2.0 * log(u1)) * cos(6.2831853 * u2);
    return clamp(z * deviation, -1.0, 1.0);
}

float wind_cosine(float f) {
    return (1.0 - cos(3.14159265 * f)) * 0.5;
}

// Wind::spatial: wind k's three noises at ground cell (ix, iz) + (fx, fz), time node it.
vec3 wind_spatial(int k, ivec2 ix, vec2 f, uvec2 mt) {
    uvec2 mx0 = mix_word(ix.x), mx1 = mix_word(ix.x + 1);
    uvec2 mz0 = mix_word(ix.y), mz1 = mix_word(ix.y + 1);
    uvec4 k01 = g.wind.keys[2 * k];
    uvec2 keys[3] = uvec2[](k01.xy, k01.zw, g.wind.keys[2 * k + 1].xy);
    float deviation = g.wind.lattice[k].y;
    vec3 out_ = vec3(0.0);
    for (int w = 0; w < 3; w++) {
        uvec2 a0 = mix64(keys[w] ^ mx0), a1 = mix64(keys[w] ^ mx1);
        float n00 = wind_node(mix64(mix64(a0 ^ mz0) ^ mt), deviation);
        float n10 = wind_node(mix64(mix64(a1 ^ mz0) ^ mt), deviation);
        float n01 = wind_node(mix64(mix64(a0 ^ mz1) ^ mt), deviation);
        float n11 = wind_node(mix64(mix64(a1 ^ mz1) ^ mt), deviation);
        float a = n00 * (1.0 - f.x) + n10 * f.x;
        float b = n01 * (1.0 - f.x) + n11 * f.x;
        out_[w] = a * (1.0 - f.y) + b * f.y;
    }
    return out_;
}

// Wind::sample for wind k.
vec3 wind_one(int k, vec3 pos, float t) {
    vec4 span = g.wind.span[k];
    if (!(t >= span.x && t < span.y)) {
        return vec3(0.0);
    }
    vec4 lattice = g.wind.lattice[k];
    vec2 gp = pos.xz / lattice.z;
    vec2 c0 = floor(gp);
    vec2 f = vec2(wind_cosine(gp.x - c0.x), wind_cosine(gp.y - c0.y));
    ivec2 ix = ivec2(c0);
    float gt = t * lattice.x;
    float t0 = floor(gt);
    float ft = wind_cosine(gt - t0);
    int it = int(t0);
    vec3 n = wind_spatial(k, ix, f, mix_word(it)) * (1.0 - ft) + wind_spatial(k, ix, f, mix_word(it + 1)) * ft;
    vec4 p = g.wind.power[k];
    float strength = p.x + p.y * (n.x + 1.0) * 0.5;
    float polar = p.z * n.y;
    float azimuth = p.w * n.z;
    vec3 d = vec3(span.z, 0.0, span.w);
    vec3 side = vec3(-d.z, 0.0, d.x);
    return strength * (d * (cos(polar) * cos(azimuth)) + vec3(0.0, 1.0, 0.0) * sin(polar) + side * (cos(polar) * sin(azimuth)));
}

// Gust::sample for gust k.
vec3 wind_gust(int k, vec3 pos, float t) {
    vec4 time = g.wind.gust_time[k];
    float u = (t - time.x) / time.y;
    if (!(u >= 0.0 && u < 1.0)) {
        return vec3(0.0);
    }
    vec4 place = g.wind.gust_place[k];
    vec2 d = pos.xz - place.xy;
    float r2 = dot(d, d) / (place.z * place.z);
    if (r2 >= 1.0) {
        return vec3(0.0);
    }
    return g.wind.gust_velocity[k].xyz * ((1.0 - r2) * (1.0 - r2) * sin(3.14159265 * u));
}

// WindField::sample: the winds and gusts at `pos`, wind time `t` (m/s).
vec3 wind_sample(vec3 pos, float t) {
    vec3 sum = vec3(0.0);
    for (int k = 0; k < int(g.wind.count.x); k++) {
        sum += wind_one(k, pos, t);
    }
    for (int k = 0; k < int(g.wind.count.y); k++) {
        sum += wind_gust(k, pos, t);
    }
    return sum;
}
