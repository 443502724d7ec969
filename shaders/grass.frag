// Grass: two-sided sun lighting (the normal faces the viewer), sky ambient
// and distance fog.
#version 450

layout(set = 0, binding = 0) uniform Globals {
    mat4 view_proj;
    vec4 camera;     // xyz: eye position
    vec4 sun_dir;    // xyz: direction the light travels
    vec4 sun_colour; // rgb
    vec4 sky;        // rgb: sky and fog colour, w: fog density per metre
    vec4 ambient;    // rgb: sky light reaching every surface
    vec4 viewport;   // xy: size in pixels, z: point size in pixels
} g;

layout(location = 0) in vec3 v_colour;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_world;

layout(location = 0) out vec4 o_colour;

void main() {
    vec3 n = normalize(v_normal);
    n = gl_FrontFacing ? n : -n;
    vec3 to_sun = -normalize(g.sun_dir.xyz);
    // Thin blades pass some light through: the lit side's half reaches the back.
    float sun = max(dot(n, to_sun), 0.0) + 0.5 * max(-dot(n, to_sun), 0.0);
    vec3 lit = v_colour * (g.ambient.rgb + g.sun_colour.rgb * sun);
    float fog = 1.0 - exp(-distance(v_world, g.camera.xyz) * g.sky.w);
    o_colour = vec4(mix(lit, g.sky.rgb, fog), 1.0);
}
