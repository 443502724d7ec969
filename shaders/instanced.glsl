// Trees drawn as instances of their models (vk/src/instanced_trees.rs), set 1: the models
// (bounds, first parts, segments drawn per level), their segments and leaves in the model's
// frame (root at the origin, Y up, metres), the table of resident trees (five words each:
// position, yaw and scale as halves, model; EMPTY for a free entry), and the frame's work:
// per bucket (pass, level, model) a count, a base and a cursor, its indirect commands (5 and
// 4 words) and the leaves its trees ask for, then each tree's levels, and the lists of trees
// per bucket. A shader that only reads
// the work defines WORK_ACCESS as readonly before including this.

// Levels of detail (LEVELS in instanced_trees.rs): 0 to 4 solid, 5 fading into the card.
const uint LEVELS = 6u;
// The view, then the shadow map.
const uint PASSES = 2u;
// A table entry no tree holds.
const uint EMPTY = 0xffffffffu;
// A tree a pass leaves out.
const uint NONE = 255u;
// Words per tree in the table.
const uint TREE_WORDS = 5u;

struct Segment {
    vec4 start;    // xyz: start, w: start radius
    vec4 end;      // xyz: end, w: end radius
    uvec4 colour;  // x: RGBA8, sRGB
};

struct ModelLeaf {
    vec4 place;    // xyz: position, w: size
    vec4 normal;   // xyz: normal, w: keep rank in [0, 1)
    uvec4 colour;  // x: RGBA8, sRGB
};

struct Model {
    vec4 sphere;             // xyz: centre, w: radius of a sphere about the model
    vec4 shape;              // x: height (the anchor's and the card's measure), y: largest leaf
    uvec4 first;             // x: first segment, y: first leaf, z: leaves
    uint cylinders[LEVELS];  // segments drawn per level (the thickest first)
    uint ring[LEVELS];       // the ring each level's segments are drawn with (0: 4 sides, 1: 8, 2: 16)
};

layout(std430, set = 1, binding = 0) readonly buffer Models { Model models[]; };
layout(std430, set = 1, binding = 1) readonly buffer Segments { Segment segments[]; };
layout(std430, set = 1, binding = 2) readonly buffer ModelLeaves { ModelLeaf model_leaves[]; };
layout(std430, set = 1, binding = 3) readonly buffer Trees { uint tree_words[]; };
layout(std430, set = 1, binding = 4) WORK_ACCESS buffer Work { uint work[]; };

// One resident tree.
struct Placed {
    vec3 position;
    float yaw;
    float scale;
    uint model;
};

Placed tree_at(uint t) {
    uint k = TREE_WORDS * t;
    Placed p;
    p.position = uintBitsToFloat(uvec3(tree_words[k], tree_words[k + 1u], tree_words[k + 2u]));
    vec2 turn_and_scale = unpackHalf2x16(tree_words[k + 3u]);
    p.yaw = turn_and_scale.x;
    p.scale = turn_and_scale.y;
    p.model = tree_words[k + 4u];
    return p;
}

// `p` turned by `yaw` about +Y (glam's Quat::from_rotation_y).
vec3 turned(vec3 p, float yaw) {
    float c = cos(yaw), s = sin(yaw);
    return vec3(p.x * c + p.z * s, p.y, -p.x * s + p.z * c);
}
