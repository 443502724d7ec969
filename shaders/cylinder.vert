// Instanced tapered cylinders: one instance per segment (start, end, radii, colour).
// The tube mesh gives per vertex the normal's part in the ring plane (xy), the
// position along the axis (z, 0 to 1) and the normal's part along the axis (w,
// non-zero on the end domes).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(location = 0) in vec4 a_ring;
layout(location = 1) in vec3 i_start;
layout(location = 2) in vec3 i_end;
layout(location = 3) in float i_start_radius;
layout(location = 4) in float i_end_radius;
layout(location = 5) in vec4 i_colour;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;

void main() {
    vec3 axis = i_end - i_start;
    float len = length(axis);
    vec3 w = len > 1e-8 ? axis / len : vec3(0.0, 1.0, 0.0);
    // Any vector not parallel to the axis spans the ring plane with it.
    vec3 helper = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(helper, w));
    vec3 v = cross(w, u);
    vec3 n = a_ring.x * u + a_ring.y * v + a_ring.w * w;
    float r = mix(i_start_radius, i_end_radius, a_ring.z);
    vec3 p = mix(i_start, i_end, a_ring.z) + n * r;
    v_colour = linear_colour(i_colour.rgb);
    v_normal = n;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
