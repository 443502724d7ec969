// The sky seen along a direction and the fog that fades surfaces into it.
// The sky pass and every fragment shader use these, so a distant surface
// melts into exactly the sky behind it. Needs globals.glsl.

// Direction toward the sun.
vec3 to_sun() {
    return -normalize(g.sun_dir.xyz);
}

// The sky along `dir` (unit length) without the sun's disc: zenith to a
// brighter horizon above, horizon haze darkening to the ground haze below,
// and the glow of light scattered around the sun.
vec3 sky_colour(vec3 dir) {
    float y = dir.y;
    // Height above the horizon with its corner rounded over about 2°: the
    // brightest sky meets the haze below with no crease, which the eye would
    // see as a bright line along the horizon.
    float up = sqrt(y * y + 0.0009) - 0.03;
    // A cubic falls off quickly above the horizon, keeping the upper sky blue.
    float t = y > 0.0 ? 1.0 - pow(1.0 - up, 3.0) : 0.0;
    vec3 above = mix(g.horizon.rgb, g.zenith.rgb, t);
    vec3 below = mix(g.horizon.rgb, g.ground_haze.rgb, smoothstep(0.0, 0.3, -y));
    vec3 c = y >= 0.0 ? above : below;
    float mu = max(dot(dir, to_sun()), 0.0);
    // Forward scattering: a wide halo and a tight bright core.
    float glow = 0.18 * pow(mu, 6.0) + 0.35 * pow(mu, 96.0);
    return c + g.sun_colour.rgb * glow;
}

// The sun's disc (about 0.6° across) along `dir`, added to the sky pass only.
vec3 sun_disc(vec3 dir) {
    float mu = dot(dir, to_sun());
    return g.sun_colour.rgb * 8.0 * smoothstep(0.99993, 0.99996, mu);
}

// How much fog lies between the eye and `world`: density falling off
// exponentially with height, integrated along the ray in closed form.
float fog_amount(vec3 world) {
    vec3 eye = g.camera.xyz;
    float dist = distance(world, eye);
    float k = g.zenith.w;
    float dy = world.y - eye.y;
    // The mean of e^(−k·h) over the ray's heights, relative to the eye's.
    float spread = abs(k * dy) > 1e-4 ? (1.0 - exp(-k * dy)) / (k * dy) : 1.0;
    float depth = g.horizon.w * dist * exp(-k * eye.y) * spread;
    return 1.0 - exp(-max(depth, 0.0));
}

// `colour` at `world`, faded toward the sky behind it.
vec3 fogged(vec3 colour, vec3 world) {
    vec3 dir = normalize(world - g.camera.xyz);
    return mix(colour, sky_colour(dir), fog_amount(world));
}
