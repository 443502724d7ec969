// The sun's shadow map (set 0, binding 1: vk/src/shadow.rs) and how much sun
// reaches a point. Fragment shaders only; needs globals.glsl.

layout(set = 0, binding = 1) uniform sampler2DShadow u_shadow;

// The share of sunlight reaching `world`: 1 in the open, 1 − strength in full
// shadow. Four filtered comparisons (each blends a 2 × 2 texel square) soften
// the edge; the map's rim fades to unshadowed, so its end is not a line.
float sunlight(vec3 world) {
    if (g.shadow.x <= 0.0) {
        return 1.0;
    }
    vec4 c = g.light_view_proj * vec4(world, 1.0);
    vec3 ndc = c.xyz / c.w;
    vec2 uv = ndc.xy * 0.5 + 0.5;
    vec2 rim = min(uv, 1.0 - uv);
    float inside = smoothstep(0.0, 0.05, min(rim.x, rim.y));
    if (inside <= 0.0 || ndc.z >= 1.0) {
        return 1.0;
    }
    float t = g.shadow.y;
    float lit = 0.0;
    lit += texture(u_shadow, vec3(uv + vec2(-0.5, -0.5) * t, ndc.z));
    lit += texture(u_shadow, vec3(uv + vec2(0.5, -0.5) * t, ndc.z));
    lit += texture(u_shadow, vec3(uv + vec2(-0.5, 0.5) * t, ndc.z));
    lit += texture(u_shadow, vec3(uv + vec2(0.5, 0.5) * t, ndc.z));
    return 1.0 - g.shadow.x * inside * (1.0 - 0.25 * lit);
}
