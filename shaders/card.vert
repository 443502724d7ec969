// Far trees as impostor cards: one quad per tree (six vertices) about the middle of its
// height, turned to face the camera about the vertical and tilted toward it (seen from
// above, an upright card would shrink to a line), textured from the atlas cell of the baked
// direction nearest the camera's (in the tree's frame: its yaw removed). Not a dither of the
// two nearest: their leaves lie apart, and every other pixel of each halves the crown. Trees large on screen keep their geometry: the card
// fades in by dither as the tree's height on screen falls from CARD_PIXELS × band to
// CARD_PIXELS (vk/src/impostors.rs).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(push_constant) uniform Cards {
    // x: pixels per metre at 1 m, y: height on screen (px) below which the card is whole,
    // z: the fade band's factor (> 1), w: the atlas's rows (models)
    vec4 lod;
} pc;

layout(location = 0) in vec3 i_position;
layout(location = 1) in float i_yaw;
layout(location = 2) in vec4 i_card; // half width, bottom, top (m, scaled), atlas row

layout(location = 0) out vec2 v_uv;
layout(location = 1) out vec3 v_world;
layout(location = 2) flat out float v_column; // the atlas column (baked direction)
layout(location = 3) flat out vec3 v_turn;  // cos, sin of the yaw; the card's share kept

// Bake directions around the up axis (DIRECTIONS in impostors.rs).
const float DIRECTIONS = 8.0;

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0),
    vec2(-1.0, 0.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

void main() {
    vec3 to_eye = g.camera.xyz - i_position;
    float px = (i_card.z - i_card.y) * pc.lod.x / max(length(to_eye), 1e-3);
    float keep = clamp(log2(pc.lod.y * pc.lod.z / px) / log2(pc.lod.z), 0.0, 1.0);
    vec2 flat_eye = to_eye.xz;
    if (keep <= 0.0 || dot(flat_eye, flat_eye) < 1e-8) {
        // Near enough for the geometry alone: dropped before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_uv = vec2(0.0);
        v_world = i_position;
        v_column = 0.0;
        v_turn = vec3(1.0, 0.0, 0.0);
        return;
    }
    vec2 e = normalize(flat_eye);
    // The camera's angle about +Y in the tree's frame, in bake steps.
    float steps = (atan(e.x, e.y) - i_yaw) * DIRECTIONS / 6.2831853;
    v_column = mod(floor(steps + 0.5), DIRECTIONS);
    vec3 right = vec3(e.y, 0.0, -e.x);
    vec3 up = normalize(cross(normalize(to_eye), right));
    vec2 c = CORNERS[gl_VertexIndex];
    float middle = 0.5 * (i_card.y + i_card.z);
    vec3 p = i_position + vec3(0.0, middle, 0.0) + right * (c.x * i_card.x) + up * (mix(i_card.y, i_card.z, c.y) - middle);
    // Across the cell, and down the atlas: image rows run top down, as the bake drew them.
    v_uv = vec2(0.5 + 0.5 * c.x, (i_card.w + 1.0 - c.y) / pc.lod.w);
    v_world = p;
    v_turn = vec3(cos(i_yaw), sin(i_yaw), keep);
    gl_Position = g.view_proj * vec4(p, 1.0);
}
