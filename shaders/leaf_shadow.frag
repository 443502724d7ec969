// Leaves in the shadow map: the card cut to the leaf's shape; depth only.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "leaf_shape.glsl"
#include "dither.glsl"

layout(location = 3) in vec2 v_card;
layout(location = 4) flat in vec2 v_keep; // the dither thresholds kept, [x, y)

void main() {
    if (outside_leaf(v_card) || dithered_out(v_keep)) {
        discard;
    }
}
