// One vertex of a tapered cylinder (a branch segment), shared by cylinder.vert (a batch's
// segments, in world space) and instanced_cylinder.vert (a model's segments placed per tree).
// The tube mesh gives per vertex the normal's part in the ring plane (xy), the position along
// the axis (z, 0 to 1) and the normal's part along the axis (w, non-zero on the end domes).
// A tree's segments lean in the wind, more the higher up they are, and give their pixels to
// the tree's impostor card as it fades in (tree.glsl). Needs globals.glsl, sway.glsl and
// tree.glsl.

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_normal;
layout(location = 2) out vec3 v_world;
layout(location = 3) flat out vec2 v_keep;

// How far a level whose threshold is `from` pixels has faded in at `px` pixels: 0 below
// from / band, 1 above from × band, even in log(px) between (a fixed share per zoom step).
float faded_in(float px, float from, float band) {
    return from <= 0.0 ? 0.0 : clamp(0.5 + 0.5 * log2(px / from) / log2(band), 0.0, 1.0);
}

// The vertex `ring` of the segment from `start` to `end` (radii at each end, an sRGB colour)
// of `tree` (its anchor: root and height; w 0: no tree). `fade`: x, the radius on screen
// (px) at which this ring has faded in halfway; y, at which the next finer ring has (0:
// none); z, pixels per metre at 1 m (0: no ring fade, keep every pixel); w, the fade band's
// half width as a factor of the radius on screen, negative in the shadow map (depth only, no
// dither: each instance is drawn by the ring with the larger share). `card`: the card's fade
// (tree.glsl's `lod`; x 0: no card for this tree).
void cylinder_vertex(vec4 ring, vec3 start, vec3 end, vec2 radii, vec3 colour, vec4 tree, vec4 fade, vec3 card) {
    // Wood of no tree holds still; a tree's bends from its root up.
    if (tree.w > 0.0) {
        start += tree_lean(tree, start, crown_wind(start));
        end += tree_lean(tree, end, crown_wind(end));
    }
    vec3 axis = end - start;
    float len = length(axis);
    vec3 w = len > 1e-8 ? axis / len : vec3(0.0, 1.0, 0.0);
    // The fade is per instance (every vertex agrees), from the segment's nearest point:
    // never nearer than its cluster's box nor farther than its far corner, the distances
    // the renderer picked this instance's rings with.
    vec3 eye = g.camera.xyz;
    float along = len > 1e-8 ? clamp(dot(eye - start, w), 0.0, len) : 0.0;
    float px = max(radii.x, radii.y) * fade.z / max(distance(eye, start + w * along), 1e-3);
    float band = abs(fade.w);
    v_keep = fade.z > 0.0 ? vec2(faded_in(px, fade.y, band), faded_in(px, fade.x, band)) : vec2(0.0, 1.0);
    if (fade.w < 0.0) {
        v_keep = v_keep.x <= 0.5 && 0.5 < v_keep.y ? vec2(0.0, 1.0) : vec2(0.0);
    }
    // The card keeps the thresholds below its share.
    v_keep.x = max(v_keep.x, card_share(tree, card));
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
    vec3 n = ring.x * u + ring.y * v + ring.w * w;
    float r = mix(radii.x, radii.y, ring.z);
    vec3 p = mix(start, end, ring.z) + n * r;
    v_colour = linear_colour(colour);
    v_normal = n;
    v_world = p;
    gl_Position = g.view_proj * vec4(p, 1.0);
}
