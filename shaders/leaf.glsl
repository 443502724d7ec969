// One vertex of a leaf card, shared by leaf.vert (a batch's leaves, in world space) and
// instanced_leaf.vert (a model's leaves placed per tree): six vertices a card, centred on the
// leaf, in the plane its normal gives, turned about the normal by a hash of the position. The
// whole card sways by a wind offset that is a function of its position, its tree, the time and
// the frame's wind only. A tree's leaves give their pixels to its impostor card as it fades in
// (tree.glsl). Needs globals.glsl, sway.glsl and tree.glsl.

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;
layout(location = 3) out vec2 v_card;
layout(location = 4) flat out vec2 v_keep; // the dither thresholds kept, [x, y)

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
    vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

// Three values in [0, 1) from a position (a cheap integer-free hash; stable per leaf).
vec3 hash3(vec3 p) {
    p = fract(p * vec3(0.1031, 0.1030, 0.0973));
    p += dot(p, p.yxz + 33.33);
    return fract((p.xxy + p.yxx) * p.zyx);
}

// Leaves lean with their twigs in the wind the grass moves in (tree.glsl) and flutter on top,
// faster and wider as the wind rises.
vec3 sway(vec3 p, vec4 tree, float phase, float time) {
    vec3 w = crown_wind(p);
    float speed = length(w);
    float flutter = sin(time * (3.0 + 0.5 * speed) + phase * 6.2832) * speed / (speed + 2.0);
    return tree_lean(tree, p, w) + 0.3 * g.wind.play.z * flutter * vec3(0.6, 0.5, -0.6);
}

// Corner `corner` of the leaf at `position` (normal, size, sRGB colour, keep rank in [0, 1))
// of `tree` (its anchor; w 0: a loose leaf) at `time` seconds. `lod`: x, pixels per metre at
// 1 m; y, the leaf length drawn whole (px); z, the smallest share; w, the fade band's largest
// half width, as a share of the drawn share. `card`: the card's fade (tree.glsl's `lod`).
// `nearest`: the distance (m) the leaf is thinned as if it were no nearer than (0: where it is).
void leaf_vertex(int corner, vec3 position, vec3 normal, float size, vec3 colour, float rank, vec4 tree, float time, vec4 lod, vec3 card, float nearest) {
    // Far leaves: only the share (length on screen / full length)² of them is drawn, the
    // lowest ranks, each grown by 1/√share so the crown keeps its cover.
    float pixels = size * lod.x / max(distance(position, g.camera.xyz), max(nearest, 1e-3));
    // Ranks around the share fade out over a band (wholly drawn below it, gone above it), so
    // a leaf leaving thins out by dither.glsl instead of popping; the band is even about the
    // share, so as many leaves are drawn on average, and it closes where the share stops
    // changing: every leaf drawn, or the smallest share.
    float share = clamp(pow(pixels / lod.y, 2.0), lod.z, 1.0);
    float half_band = lod.w * (share - lod.z) * (1.0 - share) / (1.0 - lod.z);
    float kept = half_band > 0.0 ? clamp((share + half_band - rank) / (2.0 * half_band), 0.0, 1.0) : float(rank < share);
    // A thinning leaf keeps the top of the thresholds, the card the bottom.
    v_keep = vec2(max(1.0 - kept, card_share(tree, card)), 1.0);
    if (v_keep.x >= 1.0) {
        // Outside the clip volume: the card is dropped before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_colour = vec3(0.0);
        v_normal = vec3(0.0, 1.0, 0.0);
        v_world = position;
        v_card = vec2(0.0);
        return;
    }
    float grown = size * inversesqrt(share);
    vec3 h = hash3(position * 7.31);
    vec3 n = normalize(normal);
    vec3 helper = abs(n.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 t0 = normalize(cross(helper, n));
    vec3 b0 = cross(n, t0);
    float a = h.x * 6.2832;
    vec3 t = cos(a) * t0 + sin(a) * b0;
    vec3 b = cross(n, t);
    vec2 c = CORNERS[corner];
    vec3 p = position + (t * c.x + b * c.y) * (0.5 * grown) + sway(position, tree, h.y, time);
    // A little lighter or darker, a little yellower or bluer: no two leaves alike.
    vec3 tint = vec3(1.0 + 0.25 * (h.z - 0.5), 1.0, 1.0 - 0.3 * (h.z - 0.5));
    v_colour = linear_colour(colour) * tint * (0.8 + 0.4 * h.y);
    v_normal = n;
    v_world = p;
    v_card = c;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
