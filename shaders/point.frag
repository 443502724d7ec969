// Unlit points, fogged like everything else.
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
layout(location = 1) in vec3 v_world;

layout(location = 0) out vec4 o_colour;

void main() {
    float fog = 1.0 - exp(-distance(v_world, g.camera.xyz) * g.sky.w);
    o_colour = vec4(mix(v_colour, g.sky.rgb, fog), 1.0);
}
