// Grass blades: one quad per link (parent row → child row), instanced per
// blade. Each row is the particle's rest position turned by the instance's yaw
// and scaled, plus its displacement: baked (fetched from the layer's motion
// texture) or live (a pushed blade). Far blades thin out and vanish (LOD): by a
// hash of the instance here, or already in the expansion (grass_expand.comp),
// where this shader only widens the blades that are left.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "ground.glsl"

layout(set = 1, binding = 0) uniform sampler3D u_motion;
struct Particle {
    vec4 rest_width; // xyz: rest position from the root (m), w: width (m)
    uvec4 parent;    // x: parent particle
};
layout(std430, set = 1, binding = 1) readonly buffer Shape { Particle particles[]; };
layout(std430, set = 1, binding = 2) readonly buffer Live { vec4 live[]; }; // [slot][link]

layout(push_constant) uniform Layer {
    vec4 field; // cells, cell size, frames, seconds per frame
    vec4 play;  // wind power, time × wave speed, links, RGB8 scale (0: RGBA16F)
    vec4 lod;   // full-density distance, cut-off distance, tallest rest height, 1: thinned already
} pc;

#include "grass_fetch.glsl"

layout(location = 0) in vec3 a_root;
layout(location = 1) in float a_yaw;
layout(location = 2) in float a_scale;
layout(location = 3) in vec4 a_colour;
layout(location = 4) in uint a_live;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;

const uint BAKED = 0xffffffffu;

vec3 turn(vec3 v, float c, float s) {
    return vec3(c * v.x + s * v.z, v.y, -s * v.x + c * v.z);
}

vec3 position(uint p, float c, float s) {
    vec3 rest = turn(particles[p].rest_width.xyz, c, s) * a_scale;
    if (p == 0u) {
        return a_root + rest;
    }
    int link = int(p) - 1;
    vec3 d = a_live == BAKED
        ? grass_fetch(u_motion, pc.field, pc.play.w, link, a_root.xz, pc.play.y, pc.play.x)
        : live[a_live * uint(pc.play.z) + uint(link)].xyz;
    return a_root + rest + d;
}

// Integer hash of the instance, for the LOD's thinning.
float keep_rank(uint i) {
    i ^= i >> 16;
    i *= 0x7feb352du;
    i ^= i >> 15;
    i *= 0x846ca68bu;
    i ^= i >> 16;
    return float(i >> 8) / 16777216.0;
}

void main() {
    float dist = distance(a_root, g.camera.xyz);
    float keep = 1.0 - clamp((dist - pc.lod.x) / max(pc.lod.y - pc.lod.x, 1e-3), 0.0, 1.0);
    bool thinned = pc.lod.w > 0.5;
    // Fewer blades further out stand wider, so the sward keeps its cover as it thins.
    float widen = thinned ? min(inversesqrt(max(keep, 1e-3)), 2.0) : 1.0;
    if (!thinned && keep_rank(uint(gl_InstanceIndex)) >= keep) {
        // Outside the clip volume: the whole blade is discarded before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_colour = vec3(0.0);
        v_normal = vec3(0.0, 1.0, 0.0);
        v_world = a_root;
        return;
    }
    uint child = uint(gl_VertexIndex / 6) + 1u;
    uint parent = particles[child].parent.x;
    int corner = gl_VertexIndex % 6;
    // Two triangles: (parent −, parent +, child +), (parent −, child +, child −).
    bool upper = corner == 2 || corner == 4 || corner == 5;
    float side = (corner == 1 || corner == 2 || corner == 4) ? 0.5 : -0.5;
    float c = cos(a_yaw);
    float s = sin(a_yaw);
    vec3 p0 = position(parent, c, s);
    vec3 p1 = position(child, c, s);
    vec3 along = p1 - p0;
    // The blade's width axis is its own yawed x, made perpendicular to the link. Taking it
    // from the bend instead (cross(along, up)) turned every blade in a field to face the wind
    // alike, so one side of the camera saw their lit faces and the other their backs: a seam
    // that followed the camera.
    vec3 width_axis = turn(vec3(1.0, 0.0, 0.0), c, s);
    vec3 dir = dot(along, along) > 1e-12 ? normalize(along) : vec3(0.0, 1.0, 0.0);
    vec3 across = width_axis - dir * dot(width_axis, dir);
    across = dot(across, across) > 1e-12 ? normalize(across) : normalize(cross(dir, turn(vec3(0.0, 0.0, 1.0), c, s)));
    uint row = upper ? child : parent;
    vec3 p = (upper ? p1 : p0) + across * side * particles[row].rest_width.w * a_scale * widen;
    vec3 n = cross(across, along);
    v_normal = dot(n, n) > 1e-12 ? normalize(n) : vec3(0.0, 1.0, 0.0);
    // Darker toward the root: self-shadowing inside the sward.
    float height = particles[row].rest_width.y / max(pc.lod.z, 1e-6);
    // Tinted by the ground it stands on, and fading into it with distance as the blades
    // thin out, so the sward's end is no edge.
    vec2 noise = ground_noise(a_root.xz);
    vec3 blade = linear_colour(a_colour.rgb) * mix(0.85, 1.15, noise.y);
    blade = mix(blade, grass_albedo(noise), smoothstep(0.5 * pc.lod.x, pc.lod.y, dist));
    v_colour = blade * mix(0.35, 1.0, clamp(height, 0.0, 1.0));
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
