// Leaves in the shadow map: the card cut to the leaf's shape; depth only.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "leaf_shape.glsl"
#include "dither.glsl"

layout(location = 3) in vec2 v_card;
layout(location = 4) flat in float v_keep;

void main() {
    if (outside_leaf(v_card) || dithered_out(vec2(0.0, v_keep))) {
        discard;
    }
}
