// Leaves: one card per instance (six vertices), centred on the leaf, in the plane its normal
// gives, turned about the normal by a hash of the position. The whole card sways by a wind
// offset that is a function of its position, its tree, the time and the frame's wind only.
// A tree's leaves give their pixels to its impostor card as it fades in (tree.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"

layout(push_constant) uniform Leaf {
    vec4 play; // x: time (s)
    vec4 lod;  // x: pixels per metre at 1 m, y: leaf length drawn whole (px), z: smallest share,
               // w: the fade band's largest half width, as a share of the drawn share
    vec4 card; // xyz: the card's fade (tree.glsl's `lod`; x 0: no cards for these trees)
} pc;

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec3 i_normal;
layout(location = 2) in float i_size;
layout(location = 3) in vec4 i_colour;
layout(location = 4) in float i_rank;
layout(location = 5) in vec4 i_anchor; // the tree's root from i_position, and height (0: a loose leaf)

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
vec3 sway(vec3 p, vec4 tree, float phase) {
    vec3 w = crown_wind(p);
    float speed = length(w);
    float flutter = sin(pc.play.x * (3.0 + 0.5 * speed) + phase * 6.2832) * speed / (speed + 2.0);
    return tree_lean(tree, p, w) + 0.3 * g.wind.play.z * flutter * vec3(0.6, 0.5, -0.6);
}

void main() {
    // Far leaves: only the share (length on screen / full length)² of them is drawn, the
    // lowest ranks, each grown by 1/√share so the crown keeps its cover.
    float pixels = i_size * pc.lod.x / max(distance(i_position, g.camera.xyz), 1e-3);
    // Ranks around the share fade out over a band (wholly drawn below it, gone above it), so
    // a leaf leaving thins out by dither.glsl instead of popping; the band is even about the
    // share, so as many leaves are drawn on average, and it closes where the share stops
    // changing: every leaf drawn, or the smallest share.
    float share = clamp(pow(pixels / pc.lod.y, 2.0), pc.lod.z, 1.0);
    float half_band = pc.lod.w * (share - pc.lod.z) * (1.0 - share) / (1.0 - pc.lod.z);
    float kept = half_band > 0.0 ? clamp((share + half_band - i_rank) / (2.0 * half_band), 0.0, 1.0) : float(i_rank < share);
    // A thinning leaf keeps the top of the thresholds, the card the bottom.
    vec4 tree = vec4(i_position + i_anchor.xyz, i_anchor.w);
    v_keep = vec2(max(1.0 - kept, card_share(tree, pc.card.xyz)), 1.0);
    if (v_keep.x >= 1.0) {
        // Outside the clip volume: the card is dropped before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_colour = vec3(0.0);
        v_normal = vec3(0.0, 1.0, 0.0);
        v_world = i_position;
        v_card = vec2(0.0);
        return;
    }
    float size = i_size * inversesqrt(share);
    vec3 h = hash3(i_position * 7.31);
    vec3 n = normalize(i_normal);
    vec3 helper = abs(n.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 t0 = normalize(cross(helper, n));
    vec3 b0 = cross(n, t0);
    float a = h.x * 6.2832;
    vec3 t = cos(a) * t0 + sin(a) * b0;
    vec3 b = cross(n, t);
    vec2 c = CORNERS[gl_VertexIndex];
    vec3 p = i_position + (t * c.x + b * c.y) * (0.5 * size) + sway(i_position, tree, h.y);
    // A little lighter or darker, a little yellower or bluer: no two leaves alike.
    vec3 tint = vec3(1.0 + 0.25 * (h.z - 0.5), 1.0, 1.0 - 0.3 * (h.z - 0.5));
    v_colour = linear_colour(i_colour.rgb) * tint * (0.8 + 0.4 * h.y);
    v_normal = n;
    v_world = p;
    v_card = c;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
