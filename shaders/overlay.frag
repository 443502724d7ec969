// An overlay glyph: its pixel under this fragment lit or not; blended over the frame.
#version 450

layout(location = 0) in vec2 v_cell;
layout(location = 1) flat in uvec2 v_bits;
layout(location = 2) flat in vec4 v_colour;

layout(location = 0) out vec4 o_colour;

void main() {
    ivec2 cell = clamp(ivec2(floor(v_cell)), ivec2(0), ivec2(4, 7));
    uint word = cell.y < 4 ? v_bits.x : v_bits.y;
    uint bit = uint((cell.y & 3) * 8 + cell.x);
    if (((word >> bit) & 1u) == 0u) {
        discard;
    }
    o_colour = v_colour;
}
