// The wind crowns sway in, read from the frame's wind grid (set 0, binding 2): wind_grid.comp
// evaluates wind.glsl once per node before the frame draws, so a leaf vertex reads four
// nodes instead of hashing the lattice itself (six vertices a leaf, a shadow pass besides).
// The grid follows the camera; beyond it a crown reads its border, where its sway is well
// under a pixel.

layout(std430, set = 0, binding = 2) readonly buffer WindGrid {
    vec4 wind_nodes[]; // per node, row by row along +x: wind velocity × power (m/s)
};

// The wind at `p` (m/s, times the wind's power), bilinear between the grid's nodes; still air
// when the grid is off.
vec3 crown_wind(vec3 p) {
    int n = int(g.wind_grid.w);
    if (n < 2) {
        return vec3(0.0);
    }
    vec2 cell = clamp((p.xz - g.wind_grid.xy) / g.wind_grid.z, vec2(0.0), vec2(float(n - 1)));
    ivec2 i = min(ivec2(cell), ivec2(n - 2));
    vec2 f = cell - vec2(i);
    int k = i.y * n + i.x;
    vec3 a = mix(wind_nodes[k].xyz, wind_nodes[k + 1].xyz, f.x);
    vec3 b = mix(wind_nodes[k + n].xyz, wind_nodes[k + n + 1].xyz, f.x);
    return mix(a, b, f.y);
}
