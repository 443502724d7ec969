// Far trees as impostor cards: per tree a quad about the middle of its height (six vertices)
// facing the camera about the vertical and tilted toward it, textured from the atlas cell of
// the baked direction nearest the camera's (in the tree's frame: its yaw removed), and a
// level quad turned with the tree, textured from the view from above (six more): a side view
// seen from high up is a tilted picture of a trunk, not a crown. Across the camera's
// elevations ABOVE ± VIEW_FADE the two cross-fade by dither with overlapping shares: the
// view from above comes in below ABOVE while the side view is whole, and the side view goes
// out above it while the view from above is whole, so the crown never thins (each view's
// leaves lie elsewhere; complementary halves of each would halve it). Trees large on screen keep their
// geometry: the card fades in by dither as the tree's height on screen falls from
// CARD_PIXELS × band to CARD_PIXELS (vk/src/impostors.rs).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "tree.glsl"

layout(push_constant) uniform Cards {
    // x: pixels per metre at 1 m, y: height on screen (px) below which the card is whole,
    // z: the fade band's factor (> 1), w: the atlas's rows (models)
    vec4 lod;
    // x: the camera's elevation over a tree (radians) above which it is seen from above,
    // y: the half width of the cross-fade of the two views about it (radians)
    vec4 above;
} pc;

layout(location = 0) in vec3 i_position;
layout(location = 1) in float i_yaw;
layout(location = 2) in vec4 i_card; // half width, bottom, top (m, scaled), atlas row

layout(location = 0) out vec2 v_uv;
layout(location = 1) out vec3 v_world;
layout(location = 2) flat out float v_column; // the atlas column (baked view)
layout(location = 3) flat out vec2 v_turn;    // cos, sin of the yaw
layout(location = 4) flat out vec2 v_keep;    // the dither thresholds kept, [x, y)

// Bake directions around the up axis (DIRECTIONS in impostors.rs); the view from above is
// the column after them.
const float DIRECTIONS = 8.0;

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0),
    vec2(-1.0, 0.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

void main() {
    vec3 to_eye = g.camera.xyz - i_position;
    float distance = max(length(to_eye), 1e-3);
    float keep = card_share(vec4(i_position, i_card.z - i_card.y), pc.lod.xyz);
    float elevation = asin(clamp(to_eye.y / distance, -1.0, 1.0));
    bool level = gl_VertexIndex >= 6;
    // This view's share of the thresholds the card keeps, [0, keep): the side view the
    // bottom, the view from above the top, overlapping in the band.
    float side = clamp((pc.above.x + pc.above.y - elevation) / pc.above.y, 0.0, 1.0);
    float top = clamp((elevation - pc.above.x + pc.above.y) / pc.above.y, 0.0, 1.0);
    v_keep = level ? vec2(keep * (1.0 - top), keep) : vec2(0.0, keep * side);
    vec2 flat_eye = to_eye.xz;
    v_turn = vec2(cos(i_yaw), sin(i_yaw));
    v_world = i_position;
    if (v_keep.x >= v_keep.y || (!level && dot(flat_eye, flat_eye) < 1e-8)) {
        // Near enough for the geometry alone, or not this view: dropped before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_uv = vec2(0.0);
        v_column = 0.0;
        return;
    }
    vec2 c = CORNERS[gl_VertexIndex % 6];
    float middle = 0.5 * (i_card.y + i_card.z);
    vec3 p;
    if (level) {
        // The model's square (x, z) in ±half width, turned by the yaw (glam's
        // Quat::from_rotation_y); the bake's image runs +x across and +z down.
        vec2 m = vec2(c.x, 2.0 * c.y - 1.0) * i_card.x;
        p = i_position + vec3(m.x * v_turn.x + m.y * v_turn.y, middle, -m.x * v_turn.y + m.y * v_turn.x);
        v_column = DIRECTIONS;
        v_uv = vec2(0.5 + 0.5 * c.x, (i_card.w + c.y) / pc.lod.w);
    } else {
        vec2 e = normalize(flat_eye);
        // The camera's angle about +Y in the tree's frame, in bake steps.
        float steps = (atan(e.x, e.y) - i_yaw) * DIRECTIONS / 6.2831853;
        v_column = mod(floor(steps + 0.5), DIRECTIONS);
        vec3 right = vec3(e.y, 0.0, -e.x);
        vec3 up = normalize(cross(to_eye / distance, right));
        p = i_position + vec3(0.0, middle, 0.0) + right * (c.x * i_card.x) + up * (mix(i_card.y, i_card.z, c.y) - middle);
        // Across the cell, and down the atlas: image rows run top down, as the bake drew them.
        v_uv = vec2(0.5 + 0.5 * c.x, (i_card.w + 1.0 - c.y) / pc.lod.w);
    }
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
