// Instanced tapered cylinders: one instance per segment (start, end, radii, colour).
// The tube mesh gives per vertex the normal's part in the ring plane (xy), the
// position along the axis (z, 0 to 1) and the normal's part along the axis (w,
// non-zero on the end domes). Each ring mesh is drawn over the radii on screen it
// serves; near a threshold both neighbouring rings draw and dither.glsl splits the
// pixels between them by the fade. A tree's segments lean in the wind, more the higher up
// they are, and give their pixels to the tree's impostor card as it fades in (tree.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "sway.glsl"
#include "tree.glsl"

layout(push_constant) uniform Ring {
    // x: radius on screen (px) at which this ring has faded in halfway, y: at which the next
    // finer ring has (0: none), z: pixels per metre at 1 m (0: no fade, keep every pixel),
    // w: the fade band's half width as a factor of the radius on screen, negative in the
    // shadow map (depth only, no dither: each instance is drawn by the ring with the larger
    // share, so the band is not rasterised twice)
    vec4 fade;
    vec4 card; // xyz: the card's fade (tree.glsl's `lod`; x 0: no cards for these trees)
} pc;

layout(location = 0) in vec4 a_ring;
layout(location = 1) in vec3 i_start;
layout(location = 2) in vec3 i_end;
layout(location = 3) in float i_start_radius;
layout(location = 4) in float i_end_radius;
layout(location = 5) in vec4 i_colour;
layout(location = 6) in vec4 i_anchor; // the tree's root from i_start, and height (0: no tree)

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;
layout(location = 3) flat out vec2 v_keep;

// How far a level whose threshold is `from` pixels has faded in at `px` pixels: 0 below
// from / band, 1 above from × band, even in log(px) between (a fixed share per zoom step).
float faded_in(float px, float from) {
    return from <= 0.0 ? 0.0 : clamp(0.5 + 0.5 * log2(px / from) / log2(abs(pc.fade.w)), 0.0, 1.0);
}

void main() {
    vec4 tree = vec4(i_start + i_anchor.xyz, i_anchor.w);
    // Wood of no tree holds still; a tree's bends from its root up.
    vec3 start = i_start, end = i_end;
    if (tree.w > 0.0) {
        start += tree_lean(tree, i_start, crown_wind(i_start));
        end += tree_lean(tree, i_end, crown_wind(i_end));
    }
    vec3 axis = end - start;
    float len = length(axis);
    vec3 w = len > 1e-8 ? axis / len : vec3(0.0, 1.0, 0.0);
    // The fade is per instance (every vertex agrees), from the segment's nearest point:
    // never nearer than its cluster's box nor farther than its far corner, the distances
    // the renderer picked this instance's rings with.
    vec3 eye = g.camera.xyz;
    float along = len > 1e-8 ? clamp(dot(eye - start, w), 0.0, len) : 0.0;
    float px = max(i_start_radius, i_end_radius) * pc.fade.z / max(distance(eye, start + w * along), 1e-3);
    v_keep = pc.fade.z > 0.0 ? vec2(faded_in(px, pc.fade.y), faded_in(px, pc.fade.x)) : vec2(0.0, 1.0);
    if (pc.fade.w < 0.0) {
        v_keep = v_keep.x <= 0.5 && 0.5 < v_keep.y ? vec2(0.0, 1.0) : vec2(0.0);
    }
    // The card keeps the thresholds below its share.
    v_keep.x = max(v_keep.x, card_share(tree, pc.card.xyz));
    if (v_keep.y <= v_keep.x) {
        // Wholly the other level's: outside the clip volume, dropped before rasterisation.
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_colour = vec3(0.0);
        v_normal = w;
        v_world = start;
        return;
    }
    // Any vector not parallel to the axis spans the ring plane with it.
    vec3 helper = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(helper, w));
    vec3 v = cross(w, u);
    vec3 n = a_ring.x * u + a_ring.y * v + a_ring.w * w;
    float r = mix(i_start_radius, i_end_radius, a_ring.z);
    vec3 p = mix(start, end, a_ring.z) + n * r;
    v_colour = linear_colour(i_colour.rgb);
    v_normal = n;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
