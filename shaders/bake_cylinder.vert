// Impostor bake: a tree model's cylinders (cylinder.vert's mesh and instances, no fade) seen
// from one of the bake directions, orthographic; unlit, for the colour and normal atlases.
#version 450

layout(push_constant) uniform Bake {
    mat4 view_proj; // the model's frame to the atlas cell's clip space
    vec4 toward;    // xyz: unit direction from the model toward the bake camera
} pc;

layout(location = 0) in vec4 a_ring;
layout(location = 1) in vec3 i_start;
layout(location = 2) in vec3 i_end;
layout(location = 3) in float i_start_radius;
layout(location = 4) in float i_end_radius;
layout(location = 5) in vec4 i_colour;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec2 v_card;
layout(location = 3) flat out vec4 v_toward;

void main() {
    vec3 axis = i_end - i_start;
    float len = length(axis);
    vec3 w = len > 1e-8 ? axis / len : vec3(0.0, 1.0, 0.0);
    vec3 helper = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(helper, w));
    vec3 v = cross(w, u);
    vec3 n = a_ring.x * u + a_ring.y * v + a_ring.w * w;
    vec3 p = mix(i_start, i_end, a_ring.z) + n * mix(i_start_radius, i_end_radius, a_ring.z);
    v_colour = pow(i_colour.rgb, vec3(2.2));
    v_normal = n;
    // The card's centre (inside every leaf): bake.frag cuts nothing.
    v_card = vec2(0.0);
    // w = 0: a surface with its own outward normal, never turned toward the camera.
    v_toward = vec4(pc.toward.xyz, 0.0);
    gl_Position = pc.view_proj * vec4(p, 1.0);
}
