// The far field: one grid over the whole field; each sample's height and its
// drop under the streamed chunks come from the field's texture (vertex
// texture fetch). The sea is the flat surface at its level wherever the
// ground lies below it. Sinking the samples the chunks cover hides the field
// under them; the field stays one surface, so no crack opens at their edge.
// Forests (the field's canopy share) stand on the ground as a layer of crowns,
// rising only well beyond the chunks, so the seam keeps no step.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "ground.glsl"

layout(set = 1, binding = 0) uniform sampler2D u_field; // r: ground height, g: drop under the chunks, b: canopy share

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
layout(location = 5) out float v_canopy;    // share of the ground under crowns

// How tall the far forests stand, metres, and from where to where they rise (distance
// from the eye, metres: beyond the streamed chunks' trees).
const float CANOPY_METRES = 14.0;
const float RISE_FROM = 700.0;
const float RISE_TO = 1400.0;

// The ground plus its crowns (where they rise) at sample `c`.
float height(ivec2 c, float rise) {
    vec4 t = texelFetch(u_field, clamp(c, ivec2(0), ivec2(pc.size.x - 1)), 0);
    return t.r + t.b * rise;
}

void main() {
    ivec2 c = ivec2(a_sample.xy);
    float spacing = pc.origin.w;
    float sea = pc.origin.y;
    vec3 hdc = texelFetch(u_field, c, 0).rgb;
    vec2 at = vec2(pc.origin.x + float(c.x) * spacing, pc.origin.z + float(c.y) * spacing);
    float rise = CANOPY_METRES * smoothstep(RISE_FROM, RISE_TO, distance(at, g.camera.xz));
    float l = height(c - ivec2(1, 0), rise);
    float r = height(c + ivec2(1, 0), rise);
    float b = height(c - ivec2(0, 1), rise);
    float f = height(c + ivec2(0, 1), rise);
    v_normal = normalize(vec3(l - r, 2.0 * spacing, b - f));
    float crowns = hdc.r > sea ? hdc.b * rise : 0.0;
    float top = max(hdc.r, sea) + crowns - hdc.g;
    vec3 p = vec3(at.x, top, at.y);
    v_canopy = hdc.b;
    v_noise = ground_noise(p.xz);
    v_depth = sea - hdc.r;
    v_sea = sea;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
