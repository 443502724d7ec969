// The open sea, far from any shore: what terrain.frag's water comes to in
// deep, still water seen from afar (ripples finer than a pixel, the sun
// unshadowed), so the field's sea and the sky pass's meet the chunks' water
// in one colour. Needs globals.glsl and atmosphere.glsl.

// Deep water's own colour (terrain.frag's `DEEP_WATER`).
const vec3 OPEN_SEA = vec3(0.006, 0.035, 0.06);

// The sea at `world` (on its surface): light scattered in the water under the
// sky's reflection, with the sun's glint.
vec3 sea_colour(vec3 world) {
    vec3 view = normalize(world - g.camera.xyz);
    vec3 body = OPEN_SEA * (g.ambient.rgb + g.sun_colour.rgb);
    float fresnel = 0.02 + 0.98 * pow(1.0 - max(-view.y, 0.0), 5.0);
    vec3 r = reflect(view, vec3(0.0, 1.0, 0.0));
    r.y = max(r.y, 0.01);
    vec3 sky = sky_colour(normalize(r)) * mix(0.9, 1.0, smoothstep(0.0, 0.25, r.y));
    vec3 glint = g.sun_colour.rgb * 4.0 * pow(max(dot(r, to_sun()), 0.0), 400.0);
    return mix(body, sky, fresnel) + glint;
}
