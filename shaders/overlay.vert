// Overlay quads (glyphs and their box) in pixels, top left at (0, 0): six vertices per
// instance, each carrying its own 5 × 8 pixels for overlay.frag.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(location = 0) in vec4 i_rect;   // x0, y0, x1, y1 in pixels
layout(location = 1) in uvec2 i_bits;  // rows 0–3, rows 4–7: bit 8 r + c lights column c of row r
layout(location = 2) in vec4 i_colour;

layout(location = 0) out vec2 v_cell;
layout(location = 1) flat out uvec2 v_bits;
layout(location = 2) flat out vec4 v_colour;

const vec2 CORNERS[6] = vec2[](
    vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0),
    vec2(0.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0)
);

void main() {
    vec2 corner = CORNERS[gl_VertexIndex];
    vec2 pixel = mix(i_rect.xy, i_rect.zw, corner);
    v_cell = corner * vec2(5.0, 8.0);
    v_bits = i_bits;
    v_colour = i_colour;
    // Vulkan's clip space has y down, like pixel rows.
    gl_Position = vec4(pixel / g.viewport.xy * 2.0 - 1.0, 0.0, 1.0);
}
