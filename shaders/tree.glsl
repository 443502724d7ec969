// What the cylinders and leaves of a tree share with its impostor card and its wind, from the
// tree's anchor (`TreeAnchor`: xyz its root, w its height; 0: the part is of no tree), and
// the card's own fade (card.vert). Needs globals.glsl.

// The share of dither thresholds the tree's card keeps, [0, share): card.vert's fade from the
// same root and height, so the geometry keeps the other pixels, [share, 1), and the two
// cross-fade without doubling. `lod`: x, pixels per metre of tree height at 1 m as the card
// measures it (0: no card for this tree); y, the card's height on screen (px) below which it
// is whole; z, the fade band's factor (> 1).
float card_share(vec4 tree, vec3 lod) {
    if (lod.x <= 0.0 || tree.w <= 0.0) {
        return 0.0;
    }
    float px = tree.w * lod.x / max(distance(g.camera.xyz, tree.xyz), 1e-3);
    return clamp(log2(lod.y * lod.z / px) / log2(lod.z), 0.0, 1.0);
}

// How far the wind `wind` leans a tree's part at `p` (m): toward the wind, saturating (half
// the sway at 4 m/s, never the whole), and more the higher up the tree the part is, so the
// root stays put and a joint (one point, shared by its segments and the leaf on it) stays
// closed. A loose leaf (no tree) leans fully.
vec3 tree_lean(vec4 tree, vec3 p, vec3 wind) {
    float up = tree.w > 0.0 ? clamp((p.y - tree.y) / tree.w, 0.0, 1.0) : 1.0;
    return g.wind.play.z * up * up * wind / (length(wind) + 4.0);
}
