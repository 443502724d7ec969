// The lit surface of cylinders: sun (shadowed), sky ambient and fog toward the sky. Needs
// globals.glsl, atmosphere.glsl and shadow.glsl.

vec4 lit_surface(vec3 colour, vec3 normal, vec3 world) {
    vec3 n = normalize(normal);
    vec3 lit = colour * (g.ambient.rgb + g.sun_colour.rgb * sunlight(world) * max(dot(n, to_sun()), 0.0));
    return vec4(fogged(lit, world), 1.0);
}
