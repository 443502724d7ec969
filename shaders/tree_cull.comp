// Culling and level of detail of the resident trees, on the GPU, in three phases (the push
// constants say which) over the frame's work (instanced.glsl):
// 0. per tree: its level from its height on screen (the card's measure, tree.glsl), whether
//    its bounding sphere is in view and in the shadow map; counted per bucket;
// 1. one thread: each bucket's base in the lists (buckets in order) and its indirect
//    commands, instance counts the bucket's trees times the parts its level draws;
// 2. per tree: written into its buckets' lists.
// A pass's commands of one level lie model after model, so the CPU records one multi-draw
// per level and part (segments, leaves), whatever the tree and model counts.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#define WORK_ACCESS
#include "instanced.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Cull {
    uvec4 counts; // x: phase, y: table entries, z: models, w: 1 to cull by the view, 0 to keep every tree
    uvec4 rings;  // index count of each ring (4, 8, 16 sides) in the one ring mesh
    uvec4 ring_first;  // each ring's first index there
    uvec4 ring_base;   // each ring's first vertex there
    vec4 lod;     // x: pixels per metre of tree height at 1 m, y: the distance (m) at which a pixel is a shadow map texel,
                  // z: the least share of leaves the shadow map draws, w: how far shadows reach (m)
    vec4 from[2]; // the heights on screen (px) from which each level draws; below the last a tree is its card alone
    vec4 leaf;    // x: pixels per metre at 1 m, y: leaf length drawn whole (px), z: smallest share, w: fade band (leaf.glsl's `lod`)
} pc;

// How many of a model's `n` leaves a tree whose nearest leaf may be `near` metres away asks
// for, as leaf.glsl thins them: the share its largest leaf's size on screen asks for and the
// fade band above it.
uint leaves_asked(Model m, float scale, float near, float least) {
    float pixels = m.shape.y * scale * pc.leaf.x / max(near, 1e-3);
    float share = clamp(pow(pixels / pc.leaf.y, 2.0), least, 1.0);
    float faded = share + pc.leaf.w * (share - least) * (1.0 - share) / (1.0 - least);
    return min(uint(ceil(float(m.first.z) * faded)), m.first.z);
}

// The level a tree of model `m` at `scale` draws at `away` metres from the camera, by its
// height on screen (the card's measure, tree.glsl); NONE where it is its card alone.
uint level_at(Model m, float scale, float away) {
    float px = m.shape.x * scale * pc.lod.x / max(away, 1e-3);
    uint level = NONE;
    for (uint k = LEVELS; k > 0u; --k) {
        if (px >= pc.from[(k - 1u) / 4u][(k - 1u) % 4u]) {
            level = k - 1u;
        }
    }
    return level;
}

// The planes of what `m` sees (Vulkan depth 0..1; those of vk/src/cull.rs's Frustum): left,
// right, bottom, top, near, far; a point p is inside all where dot(plane.xyz, p) + plane.w >= 0.
void frustum_planes(mat4 m, out vec4 planes[6]) {
    vec4 r0 = vec4(m[0][0], m[1][0], m[2][0], m[3][0]);
    vec4 r1 = vec4(m[0][1], m[1][1], m[2][1], m[3][1]);
    vec4 r2 = vec4(m[0][2], m[1][2], m[2][2], m[3][2]);
    vec4 r3 = vec4(m[0][3], m[1][3], m[2][3], m[3][3]);
    planes = vec4[](r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2);
}

// Whether a sphere at `c` of radius `r` may be seen through `m`.
bool in_frustum(mat4 m, vec3 c, float r) {
    vec4 planes[6];
    frustum_planes(m, planes);
    for (int k = 0; k < 6; ++k) {
        if (dot(planes[k].xyz, c) + planes[k].w < -r * length(planes[k].xyz)) {
            return false;
        }
    }
    return true;
}

// How far below a tree's bounding sphere its shadow is followed, metres: ground falling
// further than this under the shadow's path, beside the view, is rare.
const float SHADOW_DROP = 100.0;

// Whether a sphere at `c` of radius `r` may shade what the view shows within `reach` metres:
// swept along the sun's light until it has sunk SHADOW_DROP metres below itself, it is not
// wholly outside one of the planes of the view's frustum cut at `reach`. A tree in the shadow
// map but behind the camera, or beside or beyond the view, casts nothing that is seen.
bool shades_view(vec3 c, float r, float reach) {
    vec4 planes[6];
    frustum_planes(g.view_proj, planes);
    // The far plane moved in to `reach` ahead of the camera.
    vec3 ahead = normalize(planes[4].xyz);
    planes[5] = vec4(-ahead, dot(ahead, g.camera.xyz) + reach);
    vec3 light = normalize(g.sun_dir.xyz);
    vec3 sunk = c + light * (2.0 * r + SHADOW_DROP) / max(-light.y, 0.05);
    for (int k = 0; k < 6; ++k) {
        float l = length(planes[k].xyz);
        bool from = dot(planes[k].xyz, c) + planes[k].w < -r * l;
        bool to = dot(planes[k].xyz, sunk) + planes[k].w < -r * l;
        if (from && to) {
            return false;
        }
    }
    return true;
}

uint bucket(uint pass, uint level, uint model) {
    return (pass * LEVELS + level) * pc.counts.z + model;
}

void main() {
    uint buckets = PASSES * LEVELS * pc.counts.z;
    uint levels_at = 13u * buckets;
    uint lists_at = levels_at + pc.counts.y;
    uint t = gl_GlobalInvocationID.x;
    if (pc.counts.x == 1u) {
        if (t != 0u) {
            return;
        }
        uint running = 0u;
        for (uint b = 0u; b < buckets; ++b) {
            uint n = work[b];
            work[buckets + b] = running;
            work[2u * buckets + b] = running;
            running += n;
            uint model = b % pc.counts.z;
            uint level = (b / pc.counts.z) % LEVELS;
            uint c = 3u * buckets + 5u * b;
            uint ring = models[model].ring[level];
            work[c] = pc.rings[ring];
            work[c + 1u] = n * models[model].cylinders[level];
            work[c + 2u] = pc.ring_first[ring];
            work[c + 3u] = pc.ring_base[ring];
            work[c + 4u] = 0u;
            uint l = 8u * buckets + 4u * b;
            work[l] = 6u;
            work[l + 1u] = n * work[12u * buckets + b];
            work[l + 2u] = 0u;
            work[l + 3u] = 0u;
        }
        return;
    }
    if (t >= pc.counts.y) {
        return;
    }
    Placed tree = tree_at(t);
    if (pc.counts.x == 0u) {
        uint seen = NONE, casts = NONE;
        if (tree.model < pc.counts.z) {
            Model m = models[tree.model];
            float away = distance(g.camera.xyz, tree.position);
            uint level = level_at(m, tree.scale, away);
            vec3 c = tree.position + turned(m.sphere.xyz, tree.yaw) * tree.scale;
            float r = m.sphere.w * tree.scale;
            float near = distance(g.camera.xyz, c) - r;
            uint asked = leaves_asked(m, tree.scale, near, pc.leaf.z);
            if (level != NONE && (pc.counts.w == 0u || in_frustum(g.view_proj, c, r))) {
                seen = level;
                uint b = bucket(0u, seen, tree.model);
                atomicAdd(work[b], 1u);
                atomicMax(work[12u * buckets + b], asked);
            }
            // The shadow map draws a tree as if it were no nearer than where a pixel is one of
            // its texels, finer detail being lost in it; a card casts no shadow, its tree's
            // coarsest geometry does.
            bool shades = pc.counts.w == 0u || shades_view(c, r, pc.lod.w);
            if (shades && in_frustum(g.light_view_proj, c, r)) {
                casts = min(level_at(m, tree.scale, max(away, pc.lod.y)), LEVELS - 1u);
                uint b = bucket(1u, casts, tree.model);
                atomicAdd(work[b], 1u);
                atomicMax(work[12u * buckets + b], leaves_asked(m, tree.scale, max(near, pc.lod.y), pc.lod.z));
            }
        }
        work[levels_at + t] = seen | (casts << 8);
        return;
    }
    uint word = work[levels_at + t];
    uint seen = word & 255u, casts = (word >> 8) & 255u;
    if (seen != NONE) {
        uint at = atomicAdd(work[2u * buckets + bucket(0u, seen, tree.model)], 1u);
        work[lists_at + at] = t;
    }
    if (casts != NONE) {
        uint at = atomicAdd(work[2u * buckets + bucket(1u, casts, tree.model)], 1u);
        work[lists_at + at] = t;
    }
}
