// Points as screen-aligned squares of a fixed pixel size: six vertices per instance.
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

layout(location = 0) in vec3 i_position;
layout(location = 1) in vec4 i_colour;

layout(location = 0) out vec3 v_colour;
layout(location = 1) out vec3 v_world;

const vec2 CORNERS[6] = vec2[](
    vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0),
    vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0)
);

void main() {
    vec4 clip = g.view_proj * vec4(i_position, 1.0);
    clip.xy += CORNERS[gl_VertexIndex] * g.viewport.z / g.viewport.xy * clip.w;
    v_colour = i_colour.rgb;
    v_world = i_position;
    gl_Position = clip;
}
