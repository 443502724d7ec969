// The far field: one grid over the whole field; each sample's height and its
// drop under the streamed chunks come from the field's texture (vertex
// texture fetch). The sea is the flat surface at its level wherever the
// ground lies below it. Sinking the samples the chunks cover hides the field
// under them; the field stays one surface, so no crack opens at their edge.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "ground.glsl"

layout(set = 1, binding = 0) uniform sampler2D u_field; // r: ground height, g: drop under the chunks

layout(push_constant) uniform Field {
    vec4 origin; // x, z: world position of sample (0, 0), y: sea level, w: spacing
    ivec4 size;  // x: samples per side
} pc;

layout(location = 0) in vec3 a_sample; // xy: sample coordinates

layout(location = 0) out vec3 v_world;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec2 v_noise;      // the ground's macro and detail noise
layout(location = 3) out float v_depth;     // metres of sea over the ground (< 0: dry)
layout(location = 4) flat out float v_sea;  // the sea level

float height(ivec2 c) {
    return texelFetch(u_field, clamp(c, ivec2(0), ivec2(pc.size.x - 1)), 0).r;
}

void main() {
    ivec2 c = ivec2(a_sample.xy);
    float spacing = pc.origin.w;
    float sea = pc.origin.y;
    vec2 hd = texelFetch(u_field, c, 0).rg;
    float l = height(c - ivec2(1, 0));
    float r = height(c + ivec2(1, 0));
    float b = height(c - ivec2(0, 1));
    float f = height(c + ivec2(0, 1));
    v_normal = normalize(vec3(l - r, 2.0 * spacing, b - f));
    float top = max(hd.r, sea) - hd.g;
    vec3 p = vec3(pc.origin.x + float(c.x) * spacing, top, pc.origin.z + float(c.y) * spacing);
    v_noise = ground_noise(p.xz);
    v_depth = sea - hd.r;
    v_sea = sea;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
