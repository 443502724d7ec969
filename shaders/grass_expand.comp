// Grass blades expanded from the chunks' ground cover, on the GPU, as
// sylva-systems' `expand_blades` makes them on the CPU (docs/design/grass.md,
// "Blades from the field on the GPU"): per cell, its blade count and kind from
// the cover samples by the same integer hash, its ground from the chunk's
// surface and material textures, then each blade's hashed place, turn and size.
// Every float step is `precise` and in the CPU's order, so both give the same
// bits. Blades a pusher moves are drawn live: the host lists them by cell
// (binding 4), and each takes its live slot from there. Two phases (push
// constants): 0, one thread per cell of a chunk's rectangle, appending its
// blades to its layer's part of the blade buffer; 1, one thread per layer,
// clamping each indirect draw to the part's room.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"

layout(local_size_x = 8, local_size_y = 8) in;

struct Rule {
    vec4 bounds;       // gradient from, to; height from, to
    vec4 scale_share;  // scale from, to; share of each cell's blades; reach (m) for culling
    uvec4 misc;        // materials, colour (RGBA8), vertices per blade
};
layout(std430, set = 1, binding = 0) readonly buffer Rules {
    uint kind_layer[256]; // per cover kind: its layer's place + 1 (0: not drawn)
    Rule rules[];
};
layout(std430, set = 1, binding = 1) buffer Wanted { uint wanted[]; };     // blades per layer
layout(std430, set = 1, binding = 2) buffer Commands { uint commands[]; }; // 4 words per layer
layout(std430, set = 1, binding = 3) writeonly buffer Blades { uint blades[]; };
// Live blades (LiveCells): [0] the cell count; per cell, from word 4: x, z, first, blades,
// sorted by (z, x); then the slots, blade b of a cell at 4 + 4 * count + first + b.
layout(std430, set = 1, binding = 4) readonly buffer Live { uint live[]; };

layout(set = 2, binding = 0) uniform sampler2D u_surface;   // ground height, water depth
layout(set = 2, binding = 1) uniform usampler2D u_material;
layout(std430, set = 2, binding = 2) readonly buffer Cover { uint samples[]; };

layout(push_constant) uniform Expand {
    ivec4 origin; // xy: world cell of the chunk's cell (0, 0)
    uvec4 cover;  // x: seed, y: cells between samples, z: samples per side
    uvec4 rect;   // the cells expanded: x0, z0, x1, z1
    vec4 lod;     // x: full-density distance, y: cut-off (m), z: cell size, w: 1 to cull, 0 to keep all
    uvec4 sizes;  // x: phase, y: blades per layer part, z: layers, w: blades in all parts
} pc;

const uint NONE = 0xffffffffu;
const float TAU = 6.28318530717958647692;

uint pcg(uint v) {
    uint state = v * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

uint blade_hash(ivec2 cell, uint index, uint purpose) {
    return pcg(pc.cover.x ^ pcg(uint(cell.x) ^ pcg(uint(cell.y) ^ pcg(index ^ pcg(purpose)))));
}

float unit(uint h) {
    return float(h >> 8u) * (1.0 / 16777216.0);
}

// CoverField::cell: the cell's blade count and kind, in integers.
uvec2 cell_cover(uint x, uint z, ivec2 world) {
    uint s = pc.cover.y;
    uint side = pc.cover.z;
    uint i = x / s;
    uint j = z / s;
    if (i + 1u >= side || j + 1u >= side) {
        return uvec2(0u, 255u);
    }
    uint fx = 2u * (x % s) + 1u;
    uint fz = 2u * (z % s) + 1u;
    uint c = j * side + i;
    uint corners[4] = uint[](c, c + 1u, c + side, c + side + 1u);
    uint weight[4] = uint[]((2u * s - fx) * (2u * s - fz), fx * (2u * s - fz), (2u * s - fx) * fz, fx * fz);
    uint parts[4];
    uint total = 0u;
    for (int k = 0; k < 4; ++k) {
        parts[k] = weight[k] * (samples[corners[k]] & 0xffffu);
        total += parts[k];
    }
    if (total == 0u) {
        return uvec2(0u, 255u);
    }
    uint denominator = 256u * 4u * s * s;
    uint h = blade_hash(world, NONE, 0xc0feu);
    uint count = total / denominator + (h % denominator < total % denominator ? 1u : 0u);
    uint pick = blade_hash(world, NONE, 0x4b1du) % total;
    for (int k = 0; k < 4; ++k) {
        if (pick < parts[k]) {
            return uvec2(count, (samples[corners[k]] >> 16u) & 0xffu);
        }
        pick -= parts[k];
    }
    return uvec2(count, 255u);
}

// CoverRule::allows, step by step in its order.
bool allows(Rule r, vec4 h, uint material) {
    precise float dx = h.y - h.x + h.w - h.z;
    precise float dz = h.z - h.x + h.w - h.y;
    precise float gradient = dx * dx + dz * dz;
    precise float height = 0.25 * (h.x + h.y + h.z + h.w);
    uint bit = min(material, 31u);
    return r.bounds.x <= gradient && gradient <= r.bounds.y && r.bounds.z <= height && height <= r.bounds.w
        && ((r.misc.x >> bit) & 1u) == 1u;
}

// The live table's entry of `world`, or NONE: a binary search over cells sorted by (z, x).
uint live_cell(ivec2 world) {
    uint lo = 0u;
    uint hi = live[0];
    while (lo < hi) {
        uint mid = (lo + hi) / 2u;
        ivec2 c = ivec2(live[4u + 4u * mid], live[5u + 4u * mid]);
        if (c == world) {
            return mid;
        }
        if (c.y < world.y || (c.y == world.y && c.x < world.x)) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return NONE;
}

// Whether a sphere may be seen through the view (tree_cull.comp's test).
bool in_frustum(mat4 m, vec3 c, float r) {
    vec4 r0 = vec4(m[0][0], m[1][0], m[2][0], m[3][0]);
    vec4 r1 = vec4(m[0][1], m[1][1], m[2][1], m[3][1]);
    vec4 r2 = vec4(m[0][2], m[1][2], m[2][2], m[3][2]);
    vec4 r3 = vec4(m[0][3], m[1][3], m[2][3], m[3][3]);
    vec4 planes[6] = vec4[](r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2);
    for (int k = 0; k < 6; ++k) {
        if (dot(planes[k].xyz, c) + planes[k].w < -r * length(planes[k].xyz)) {
            return false;
        }
    }
    return true;
}

void finalize() {
    uint l = gl_GlobalInvocationID.x;
    if (gl_GlobalInvocationID.y == 0u && l < pc.sizes.z) {
        commands[4u * l + 1u] = min(wanted[l], pc.sizes.y);
    }
}

void main() {
    if (pc.sizes.x == 1u) {
        finalize();
        return;
    }
    uint x = pc.rect.x + gl_GlobalInvocationID.x;
    uint z = pc.rect.y + gl_GlobalInvocationID.y;
    if (x >= pc.rect.z || z >= pc.rect.w) {
        return;
    }
    ivec2 world = pc.origin.xy + ivec2(x, z);
    uvec2 cover = cell_cover(x, z, world);
    if (cover.x == 0u || kind_layer[cover.y] == 0u) {
        return;
    }
    uint layer = kind_layer[cover.y] - 1u;
    Rule r = rules[layer];
    ivec2 at = ivec2(x, z);
    vec2 s00 = texelFetch(u_surface, at, 0).xy;
    vec2 s10 = texelFetch(u_surface, at + ivec2(1, 0), 0).xy;
    vec2 s01 = texelFetch(u_surface, at + ivec2(0, 1), 0).xy;
    vec2 s11 = texelFetch(u_surface, at + ivec2(1, 1), 0).xy;
    if (s00.y > 0.0 || s10.y > 0.0 || s01.y > 0.0 || s11.y > 0.0) {
        return;
    }
    vec4 h = vec4(s00.x, s10.x, s01.x, s11.x);
    if (!allows(r, h, texelFetch(u_material, at, 0).r)) {
        return;
    }
    float cell_size = pc.lod.z;
    float keep = 1.0;
    if (pc.lod.w > 0.0) {
        vec3 centre = vec3((vec2(world) + 0.5) * cell_size, 0.25 * (h.x + h.y + h.z + h.w)).xzy;
        float reach = 0.75 * cell_size + r.scale_share.w;
        float d = distance(centre, g.camera.xyz);
        keep = 1.0 - clamp((d - pc.lod.x) / max(pc.lod.y - pc.lod.x, 1e-3), 0.0, 1.0);
        if (keep <= 0.0 || !in_frustum(g.view_proj, centre, reach)) {
            return;
        }
    }
    precise float round_up = unit(blade_hash(world, NONE, 0x5eedu));
    precise float share = r.scale_share.z * keep;
    precise float want = float(cover.x) * share + round_up;
    uint count = min(uint(want), cover.x);
    if (count == 0u) {
        return;
    }
    uint part = pc.sizes.y;
    uint all = pc.sizes.w;
    uint first = atomicAdd(wanted[layer], count);
    uint lived = live_cell(world);
    uint slots = lived == NONE ? 0u : live[7u + 4u * lived];
    uint slot_base = lived == NONE ? 0u : 4u + 4u * live[0] + live[6u + 4u * lived];
    for (uint b = 0u; b < count && first + b < part; ++b) {
        uint i = layer * part + first + b;
        precise float u = unit(blade_hash(world, b, 1u));
        precise float v = unit(blade_hash(world, b, 2u));
        precise float yaw = unit(blade_hash(world, b, 3u)) * TAU;
        precise float size = unit(blade_hash(world, b, 4u));
        precise float y = (h.x * (1.0 - u) + h.y * u) * (1.0 - v) + (h.z * (1.0 - u) + h.w * u) * v;
        precise float rx = (float(world.x) + u) * cell_size;
        precise float rz = (float(world.y) + v) * cell_size;
        precise float scale = r.scale_share.x + (r.scale_share.y - r.scale_share.x) * size;
        blades[3u * i] = floatBitsToUint(rx);
        blades[3u * i + 1u] = floatBitsToUint(y);
        blades[3u * i + 2u] = floatBitsToUint(rz);
        blades[3u * all + i] = floatBitsToUint(yaw);
        blades[4u * all + i] = floatBitsToUint(scale);
        blades[5u * all + i] = r.misc.y;
        blades[6u * all + i] = b < slots ? live[slot_base + b] : NONE;
    }
}
