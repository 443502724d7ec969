// The leaf cut from its card (card coordinates in [-1, 1]², stalk at x = -1,
// tip at x = 1), shared by leaf.frag and leaf_shadow.frag so a leaf's shadow
// has its shape.

// Half the leaf's width at x in [-1, 1]: round at the stalk, pointed at the tip.
float half_width(float x) {
    float s = clamp(0.5 * (x + 1.0), 0.0, 1.0);
    return sqrt(s) * pow(1.0 - s, 0.8);
}

// True outside the leaf: the fragment is discarded.
bool outside_leaf(vec2 card) {
    return abs(card.y) > half_width(card.x);
}
