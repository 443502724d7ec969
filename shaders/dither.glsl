// Screen-door cross-fades: a surface drawn at two levels of detail keeps complementary
// pixels of each (the same threshold per pixel, disjoint kept intervals), so depth stays
// opaque and nothing blends, and a level fading out thins without a pop. Fragment shaders only.

// A 4 × 4 ordered-dither (Bayer) threshold in (0, 1) for this pixel: neighbouring pixels get
// thresholds far apart, so any kept share reads as an even grey rather than clumps.
float dither_threshold() {
    const float BAYER[16] = float[](
        0.0, 8.0, 2.0, 10.0,
        12.0, 4.0, 14.0, 6.0,
        3.0, 11.0, 1.0, 9.0,
        15.0, 7.0, 13.0, 5.0
    );
    ivec2 p = ivec2(gl_FragCoord.xy) & 3;
    return (BAYER[p.y * 4 + p.x] + 0.5) / 16.0;
}

// Whether this pixel belongs to the level that keeps thresholds in [keep.x, keep.y).
bool dithered_out(vec2 keep) {
    float h = dither_threshold();
    return h < keep.x || h >= keep.y;
}
