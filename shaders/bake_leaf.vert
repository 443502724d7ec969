// Impostor bake: a tree model's leaves as leaf.vert draws them near (every leaf, full size,
// the same hashed turn and tint), without sway, seen from one bake direction, orthographic.
#version 450

layout(push_constant) uniform Bake {
    mat4 view_proj; // the model's frame to the atlas cell's clip space
    vec4 toward;    // xyz: unit direction from the model toward the bake camera
} pc;

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec3 i_normal;
layout(location = 2) in float i_size;
layout(location = 3) in vec4 i_colour;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec2 v_card;
layout(location = 3) flat out vec4 v_toward;

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
    vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

// leaf.vert's hash: the same leaf gets the same turn and tint.
vec3 hash3(vec3 p) {
    p = fract(p * vec3(0.1031, 0.1030, 0.0973));
    p += dot(p, p.yxz + 33.33);
    return fract((p.xxy + p.yxx) * p.zyx);
}

void main() {
    vec3 h = hash3(i_position * 7.31);
    // Far crowns as leaf.vert draws them: a sixteenth of the leaves, each grown 4×.
    if (fract(h.x * 17.0 + h.z * 5.0) >= 1.0 / 16.0) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_colour = vec3(0.0);
        v_normal = vec3(0.0, 1.0, 0.0);
        v_card = vec2(0.0);
        v_toward = vec4(0.0);
        return;
    }
    vec3 n = normalize(i_normal);
    vec3 helper = abs(n.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 t0 = normalize(cross(helper, n));
    vec3 b0 = cross(n, t0);
    float a = h.x * 6.2832;
    vec3 t = cos(a) * t0 + sin(a) * b0;
    vec3 b = cross(n, t);
    vec2 c = CORNERS[gl_VertexIndex];
    vec3 p = i_position + (t * c.x + b * c.y) * (2.0 * i_size);
    vec3 tint = vec3(1.0 + 0.25 * (h.z - 0.5), 1.0, 1.0 - 0.3 * (h.z - 0.5));
    v_colour = pow(i_colour.rgb, vec3(2.2)) * tint * (0.8 + 0.4 * h.y);
    v_normal = n;
    v_card = c;
    // w = 1: a thin card lit from whichever side faces the camera.
    v_toward = vec4(pc.toward.xyz, 1.0);
    gl_Position = pc.view_proj * vec4(p, 1.0);
}
