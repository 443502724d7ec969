// Leaves in the shadow map: the card cut to the leaf's shape; depth only.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "leaf_shape.glsl"

layout(location = 3) in vec2 v_card;

void main() {
    if (outside_leaf(v_card)) {
        discard;
    }
}
