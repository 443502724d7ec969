// Impostor bake: albedo (linear; the sRGB atlas encodes it) with coverage in alpha, and the
// surface normal in the model's frame packed into [0, 1] with 1 in alpha for a leaf (lit
// through from behind, as leaf.frag), 0 for bark.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "leaf_shape.glsl"

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec2 v_card;
layout(location = 3) flat in vec4 v_toward;

layout(location = 0) out vec4 o_colour;
layout(location = 1) out vec4 o_normal;

void main() {
    if (outside_leaf(v_card)) {
        discard;
    }
    vec3 n = normalize(v_normal);
    if (v_toward.w > 0.5 && dot(n, v_toward.xyz) < 0.0) {
        n = -n;
    }
    o_colour = vec4(v_colour, 1.0);
    o_normal = vec4(n * 0.5 + 0.5, v_toward.w);
}
