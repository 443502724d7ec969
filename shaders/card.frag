// Far trees as impostor cards: the atlas cell of the nearest baked direction, or of the view
// from above (card.vert), each faded in by dither over its share. Colour and
// normal are averaged over the pixel's footprint (the atlas has no mip levels); coverage is
// the cell's at the pixel's centre, going out as alpha (to coverage), as the geometry's leaves
// test their shape once per pixel. Lit like lit.glsl from the baked normal turned by the
// tree's yaw: sun (shadowed), sky ambient, fog toward the sky.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "dither.glsl"

layout(set = 1, binding = 0) uniform sampler2D u_colour;
layout(set = 1, binding = 1) uniform sampler2D u_normal;

layout(location = 0) in vec2 v_uv;
layout(location = 1) in vec3 v_world;
layout(location = 2) flat in float v_column;
layout(location = 3) flat in vec2 v_turn;
layout(location = 4) flat in vec2 v_keep; // the dither thresholds kept, [x, y)

layout(location = 0) out vec4 o_colour;

// Atlas columns: the bake directions around the up axis and the view from above (COLUMNS in
// impostors.rs).
const float COLUMNS = 9.0;

// Taps per side of the footprint average.
const int TAPS = 4;

void main() {
    // The footprint's axes in atlas coordinates, taken before any fragment is discarded.
    vec2 across = dFdx(v_uv) * vec2(1.0 / COLUMNS, 1.0);
    vec2 down = dFdy(v_uv) * vec2(1.0 / COLUMNS, 1.0);
    if (dithered_out(v_keep)) {
        discard;
    }
    vec2 uv = vec2((v_column + v_uv.x) / COLUMNS, v_uv.y);
    // Coverage at the pixel's centre, as the geometry has it: a leaf tests its shape once per
    // pixel and covers every sample of a pixel whose centre it holds, so a far crown of leaves
    // about a pixel wide is opaque where it is drawn. The footprint's average share instead
    // let the ground through 1 to 3 of 4 samples of nearly every pixel of such a crown: a
    // pale, frosted tree. (Filtered, the centre still shades an outline within a texel.)
    float centre = texture(u_colour, uv).a;
    // Texels at the outline are averaged with the clear ones around (black, transparent,
    // and a zero normal that is no leaf): colour, normal and leaf flag come out weighted by
    // coverage, and divided by it they are the surface's again. (A clear normal pointing
    // anywhere would pull the outline's normals toward it: up, and a sunlit pale rim.)
    vec4 albedo = vec4(0.0);
    vec3 m = vec3(0.0);
    float leaf = 0.0;
    for (int i = 0; i < TAPS; i++) {
        for (int j = 0; j < TAPS; j++) {
            vec2 at = uv + across * ((float(i) + 0.5) / float(TAPS) - 0.5) + down * ((float(j) + 0.5) / float(TAPS) - 0.5);
            albedo += texture(u_colour, at);
            vec4 packed = texture(u_normal, at);
            m += packed.xyz * 2.0 - 1.0;
            leaf += packed.a;
        }
    }
    albedo /= float(TAPS * TAPS);
    if (albedo.a < 1.0 / 32.0) {
        discard;
    }
    // The model's frame turned by the yaw about +Y (glam's Quat::from_rotation_y).
    vec3 n = normalize(vec3(m.x * v_turn.x + m.z * v_turn.y, m.y, -m.x * v_turn.y + m.z * v_turn.x));
    vec3 colour = albedo.rgb / albedo.a;
    float leafy = leaf / (albedo.a * float(TAPS * TAPS));
    // A leaf is lit on the side the camera sees (leaf.frag), not the side the bake saw: from
    // above, that is the side facing the sky.
    if (leafy > 0.5 && dot(n, g.camera.xyz - v_world) < 0.0) {
        n = -n;
    }
    float facing = dot(n, to_sun());
    float sun = sunlight(v_world);
    // Leaves facing away from the sun glow with what they let through, as in leaf.frag.
    vec3 through = colour * vec3(1.3, 1.2, 0.6) * 0.55 * max(-facing, 0.0) * leafy;
    vec3 lit = colour * (g.ambient.rgb + g.sun_colour.rgb * sun * max(facing, 0.0)) + g.sun_colour.rgb * sun * through;
    o_colour = vec4(fogged(lit, v_world), centre);
}
