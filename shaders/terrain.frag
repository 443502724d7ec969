// Terrain colour: slope, height and water decide what shows: rock on steep
// slopes, grass on gentle soil (patchy on weathered rock, with bare earth
// between tufts close up), sand on sand and by the water, snow above the
// snow line, and water tinted by its depth with the sky reflected. The
// ground's height and normal are per pixel, from the chunk's heights; close
// up, a few octaves of noise roughen colour and normal, fading out as a
// pixel grows larger than they are. Fogged toward the sky.
#version 450
#extension GL_GOOGLE_include_directive : require

#include "globals.glsl"
#include "atmosphere.glsl"
#include "shadow.glsl"
#include "ground.glsl"

layout(set = 1, binding = 0) uniform sampler2D u_surface; // r: ground height, g: water depth

layout(location = 0) in vec3 v_world;
layout(location = 1) in vec3 v_normal;
layout(location = 2) in vec3 v_rock;
layout(location = 3) in vec4 v_ground; // x: soil, y: sand, z: macro noise, w: detail noise
layout(location = 4) in vec3 v_water;  // x: water level, y: water depth next door, z: flow
layout(location = 5) flat in vec4 v_snow; // xy: snow line and fade, z: time, w: cell size
layout(location = 6) in vec3 v_cell;   // xy: sample coordinates, z: > 0 on the skirt
layout(location = 7) flat in int v_size;
layout(location = 8) in float v_floor;
layout(location = 9) in vec2 v_strata; // x: thickness of the rock's beds, y: how much beds differ
layout(location = 10) flat in float v_sea; // the sea's level above the chunk's origin

layout(location = 0) out vec4 o_colour;

const vec3 SAND = vec3(0.38, 0.31, 0.20);
const vec3 SNOW = vec3(0.82, 0.85, 0.90);
const vec3 EARTH = vec3(0.13, 0.095, 0.065);
const vec3 DEEP_WATER = vec3(0.006, 0.035, 0.06);
// What flowing water carries: silt scatters a dull green-brown.
const vec3 SILT = vec3(0.05, 0.06, 0.04);

// Cubic Hermite weights at t for (value 0, slope 0, value 1, slope 1).
vec4 hermite(float t) {
    float t2 = t * t;
    float t3 = t2 * t;
    return vec4(2.0 * t3 - 3.0 * t2 + 1.0, t3 - 2.0 * t2 + t, 3.0 * t2 - 2.0 * t3, t3 - t2);
}

// The ground under this pixel: height (metres above the chunk's origin) and
// normal. Four gathers fetch the 4 × 4 samples around the pixel's cell; the
// central differences at its four corners (one-sided at the patch's border,
// where the texture clamps) are its slopes. The normal blends them, so it is
// smooth across cells whatever grid the chunk is drawn with; the height is
// a cubic through the corners with those slopes, whose contours (the shore)
// run smoothly instead of in the arcs a bilinear height draws in each cell.
float ground_here(out vec3 normal) {
    float n = float(v_size);
    vec2 p = clamp(v_cell.xy, vec2(0.0), vec2(n - 1.0));
    vec2 i0 = min(floor(p), vec2(n - 2.0));
    vec2 f = p - i0;
    // Each gather returns the 2 × 2 texels around a texel corner: x (0, 1), y (1, 1), z (1, 0), w (0, 0).
    vec4 a = textureGather(u_surface, i0 / n, 0);
    vec4 b = textureGather(u_surface, (i0 + vec2(2.0, 0.0)) / n, 0);
    vec4 c = textureGather(u_surface, (i0 + vec2(0.0, 2.0)) / n, 0);
    vec4 d = textureGather(u_surface, (i0 + vec2(2.0, 2.0)) / n, 0);
    // Corners (0, 0), (1, 0), (0, 1), (1, 1) of the cell.
    vec4 h = vec4(a.y, b.x, c.z, d.w);
    vec4 dx = vec4(b.x - a.x, b.y - a.y, d.w - c.w, d.z - c.z);
    vec4 dz = vec4(c.z - a.z, d.w - b.w, c.y - a.y, d.x - b.x);
    vec2 span0 = min(i0 + 1.0, n - 1.0) - max(i0 - 1.0, 0.0);
    vec2 span1 = min(i0 + 2.0, n - 1.0) - i0;
    vec4 sx = dx / vec4(span0.x, span1.x, span0.x, span1.x);
    vec4 sz = dz / vec4(span0.y, span0.y, span1.y, span1.y);
    vec4 w = vec4((1.0 - f.x) * (1.0 - f.y), f.x * (1.0 - f.y), (1.0 - f.x) * f.y, f.x * f.y);
    vec2 grad = vec2(dot(sx, w), dot(sz, w)) / v_snow.w;
    normal = normalize(vec3(-grad.x, 1.0, -grad.y));
    vec4 hx = hermite(f.x);
    float row0 = dot(hx, vec4(h.x, sx.x, h.y, sx.y));
    float row1 = dot(hx, vec4(h.z, sx.z, h.w, sx.w));
    return dot(hermite(f.y), vec4(row0, mix(sz.x, sz.y, f.x), row1, mix(sz.z, sz.w, f.x)));
}

// Value noise (ground.glsl's) with its gradient: (value in [0, 1], d/dx, d/dy).
vec3 noise_grad(vec2 p) {
    vec2 i = floor(p);
    vec2 f = p - i;
    vec2 u = f * f * (3.0 - 2.0 * f);
    vec2 du = 6.0 * f * (1.0 - f);
    float a = hash(i);
    float b = hash(i + vec2(1.0, 0.0));
    float c = hash(i + vec2(0.0, 1.0));
    float d = hash(i + vec2(1.0, 1.0));
    float k = a - b - c + d;
    return vec3(a + (b - a) * u.x + (c - a) * u.y + k * u.x * u.y, du * vec2(b - a + k * u.y, c - a + k * u.x));
}

// Fine ground detail at world (x, z): four octaves with wavelengths from
// 3.2 m down to 16 cm (clumps to tufts), each faded out as a
// pixel (`footprint` metres) grows to a third of it, early, since a CPU
// rasterizer pays for every octave it runs. x: value around 0 (within
// ±0.6); yz: the slope of a relief whose bumps are as high as they are
// wide times the octave's amplitude, so fine octaves roughen the light no
// more than coarse ones.
vec3 fine_detail(vec2 xz, float footprint) {
    vec3 sum = vec3(0.0);
    float freq = 0.31;
    float amp = 0.36;
    for (int k = 0; k < 4; k++) {
        float keep = 1.0 - smoothstep(0.12, 0.35, footprint * freq);
        if (keep <= 0.0) {
            break;
        }
        // Each octave turned, so the lattices do not line up.
        bool turn = (k & 1) == 1;
        vec2 q = (turn ? vec2(xz.y, -xz.x) : xz) + float(k) * 17.0;
        vec3 v = noise_grad(q * freq);
        vec2 g = turn ? vec2(-v.z, v.y) : v.yz;
        sum += keep * amp * vec3(v.x - 0.5, g);
        freq *= 2.7;
        amp *= 0.78;
    }
    return sum;
}

// Fine detail on ground of normal `n`: laid over x and z on gentle ground,
// over a vertical plane on steep faces (where noise over x and z would
// stretch down the fall line in streaks), blended between. x: value; yzw:
// the slope it tilts the normal by, per world axis.
vec4 surface_detail(vec3 n, float footprint) {
    vec3 w = n * n;
    w *= w;
    w /= w.x + w.y + w.z;
    vec4 sum = vec4(0.0);
    if (w.y > 0.1) {
        vec3 d = fine_detail(v_world.xz, footprint);
        sum += w.y * vec4(d.x, d.y, 0.0, d.z);
    }
    if (w.x > 0.1) {
        vec3 d = fine_detail(v_world.zy, footprint);
        sum += w.x * vec4(d.x, 0.0, d.z, d.y);
    }
    if (w.z > 0.1) {
        vec3 d = fine_detail(v_world.xy, footprint);
        sum += w.z * vec4(d.x, d.y, d.z, 0.0);
    }
    return sum;
}

// The ground's surface as the light sees it: its colour, the slope its
// detail tilts the normal by (per world axis), and how wet it is (0 dry, 1
// soaked: darker, smoother, with a sheen).
struct Ground {
    vec3 albedo;
    vec3 tilt;
    float wet;
};

// Rock strata: beds about `v_strata.x` metres thick laid along world
// height, so a cliff shows them level whichever way it faces and
// neighbouring chunks share them. They dip gently across the world and wave
// with the ground's detail noise (and, close up, the fine noise), as folded
// and eroded beds do; a noise along height makes some beds thick and others
// thin. Each bed has its own tint and hardness: hard beds stand out rounded,
// soft ones recede, a seam parts two (sharp or faint), thin laminae streak
// each, and joints crack each bed upright where a noise over x and z
// crosses its middle, a noise of its own per bed so they stagger like
// courses of masonry. Relief, seams, joints and laminae fade as a pixel grows
// to a share of what they span, the tints once a bed is a few pixels high,
// so far cliffs neither shimmer nor alias into bands. `beds` is how many beds
// a pixel spans by their count alone: where one rock meets another the
// thickness changes within a cell, and hundreds of metres up that crowds
// hundreds of beds into it, which would speckle. `exposed` (0 to 1) is how
// bare the face lays its beds: on gentle rock weathering hides them. Returns
// the colour factor; `lean` is the relief's slope along world height.
vec3 strata(float fine_value, float footprint, float beds, float exposed, out float lean) {
    float thick = v_strata.x;
    float contrast = v_strata.y * exposed;
    float warp = dot(v_world.xz, vec2(0.031, -0.017)) + (v_ground.w - 0.5) * 2.5 + fine_value * 0.3 * thick;
    float s = (v_world.y + warp) / thick;
    // Its slope stays under the beds' own, so no bed folds back over another.
    s += (value_noise(vec2(s * 0.37, 4.1)) - 0.5) * 1.4;
    float bed = floor(s);
    float t = s - bed;
    float tint = hash(vec2(bed, 0.37));
    float hard = hash(vec2(bed, 1.91));
    float pixel = max(footprint / thick, beds);
    float relief = (1.0 - smoothstep(0.08, 0.3, pixel)) * min(contrast * 3.0, 1.0);
    // A bulge 12 % of the bed high at the hardest, rounded: its slope over height.
    lean = relief * hard * 0.48 * (1.0 - 2.0 * t);
    float seam = relief * mix(0.15, 0.5, tint) * (1.0 - smoothstep(0.0, 0.04 + pixel, min(t, 1.0 - t)));
    float spacing = thick * 6.0;
    float course = floor(bed / 3.0);
    float crack = abs(value_noise(v_world.xz / spacing + course * 7.31) - 0.5);
    float joint = relief * step(0.4, hash(vec2(course, 5.3))) * (1.0 - smoothstep(0.0, 0.015 + 1.5 * footprint / spacing, crack));
    float laminae = (1.0 - smoothstep(0.1, 0.3, pixel * 7.0)) * sin(s * 43.98);
    vec3 c = mix(vec3(0.8, 0.82, 0.86), vec3(1.2, 1.12, 1.0), tint) * mix(0.88, 1.08, hard);
    c = mix(vec3(1.0), c, contrast * (1.0 - smoothstep(0.2, 0.5, pixel)));
    return c * (1.0 - seam) * (1.0 - 0.35 * joint) * (1.0 + 0.06 * contrast * laminae);
}

// One grid of pebbles `size` metres apart at world (x, z): in most cells a
// rounded, oblong pebble of its own size, place, turn and shade. x: how much
// of the pixel is pebble; y: its shade around 0; zw: the slope of its dome.
vec4 pebble_grid(vec2 xz, float size) {
    vec2 q = xz / size;
    vec2 i = floor(q);
    float a = hash(i);
    float b = hash(i + 19.19);
    float c = hash(i + 7.7);
    float turn = b * 6.283;
    vec2 axis = vec2(cos(turn), sin(turn));
    vec2 f = q - i - 0.5 - (vec2(a, b) - 0.5) * 0.3;
    // Along the pebble's long axis and across it, each over its half-length.
    vec2 d = vec2(dot(f, axis), dot(f, vec2(-axis.y, axis.x))) / (vec2(0.46, 0.28) * mix(0.75, 1.0, c));
    float inside = (1.0 - smoothstep(0.55, 1.0, dot(d, d))) * step(0.12, c);
    // The dome's slope, turned back to x and z.
    vec2 g = -0.6 * inside * (d.x * axis + d.y * vec2(-axis.y, axis.x));
    return vec4(inside, a - 0.5, g);
}

// River gravel: pebbles of two sizes (7 and 13 cm, the larger on a turned
// grid, lying over the smaller) on darker grit, each faded to its layer's
// mean as a pixel grows to a share of a pebble. Returns the colour; `slope`
// is the pebbles' relief.
vec3 gravel(vec3 stone, float footprint, out vec2 slope) {
    vec2 xz = v_world.xz;
    vec4 small = pebble_grid(xz + 0.5, 0.07);
    vec4 big = pebble_grid(vec2(xz.y, -xz.x), 0.13);
    big.zw = vec2(-big.w, big.z);
    float keep_small = 1.0 - smoothstep(0.15, 0.4, footprint / 0.07);
    float keep_big = 1.0 - smoothstep(0.15, 0.4, footprint / 0.13);
    small.x *= keep_small;
    big.x *= keep_big;
    // A pebble covers about 0.3 of its cell: the grit's share shows between.
    vec3 c = stone * mix(0.7, 1.0, 1.0 - keep_small);
    c = mix(c, stone * (1.0 + small.y * 0.7), small.x);
    c = mix(c * mix(0.88, 1.0, 1.0 - keep_big), stone * (1.0 + big.y * 0.7), big.x);
    slope = mix(small.zw * small.x, big.zw, big.x);
    return c;
}

// The ground by material, slope and height, with the fine detail `fine`,
// `above_water` metres over the nearest river's or lake's level (where one
// is within a cell) and `above_sea` over the sea's: rock with its strata on
// steep faces, grass on gentle soil (patchy on weathered rock, with bare
// earth between tufts close up), sand on sand and on beaches up to about
// 2 m above the sea (rippled where dry), gravel in river and lake beds and
// on their banks, snow above the snow line where the ground (or a ledge of
// its strata) is gentle enough to hold it; wet in the sea's swash and on
// banks just above the water.
Ground land(vec3 n, vec4 fine, float footprint, float above_water, float above_sea) {
    float macro = v_ground.z;
    float detail = v_ground.w;
    // Slope: 0 flat, 0.23 at 40°, 0.36 at 50°; the noise frays the rock line.
    float slope = 1.0 - n.y;
    float steep = smoothstep(0.22, 0.36, slope + (detail - 0.5) * 0.1 + fine.x * 0.06);
    vec3 grass = grass_albedo(vec2(macro, detail + fine.x * 0.8)) * (1.0 + fine.x * 1.2);
    grass = mix(grass, EARTH, smoothstep(-0.22, -0.36, fine.x) * 0.8);
    // Soil below 1 grows grass in patches where the noise is high enough.
    float cover = smoothstep(0.8 - v_ground.x, 1.2 - v_ground.x, detail * 0.5 + macro * 0.5 + v_ground.x * 0.5 + fine.x * 0.3);
    float green = cover * (1.0 - steep);
    Ground gr;
    gr.albedo = grass;
    gr.tilt = fine.yzw * 0.3;
    // Outside the branch below, where derivatives are defined.
    float beds = fwidth(v_world.y / v_strata.x);
    // Rock where the grass leaves it; the strata are paid for only there. Its beds show
    // where a face is steep enough to be kept bare (from about 33°, whole from 46°); gentler
    // rock is weathered, lichen-mottled and strewn with its own broken stones, since level
    // beds on it would read as contour lines (docs/design/rendering.md, "The ground close up").
    vec3 rock_tilt = vec3(0.0);
    if (green < 1.0) {
        float lean;
        float exposed = smoothstep(0.16, 0.3, slope + fine.x * 0.04);
        vec3 rock = v_rock * strata(fine.x, footprint, beds, exposed, lean) * mix(0.88, 1.12, detail) * (1.0 + fine.x * 0.9);
        rock_tilt = lean * (vec3(0.0, 1.0, 0.0) - n * n.y);
        float weathered = 1.0 - exposed;
        float lichen = smoothstep(0.5, 0.8, value_noise(v_world.xz * 0.9 + 17.0) + fine.x * 0.4) * weathered;
        rock = mix(rock, rock * vec3(0.8, 0.86, 0.7), lichen * 0.7);
        vec4 stones = pebble_grid(v_world.xz + 3.7, 0.3);
        stones.x *= weathered * (1.0 - smoothstep(0.15, 0.4, footprint / 0.3));
        rock = mix(rock * (1.0 - 0.12 * weathered), v_rock * (1.0 + stones.y * 0.6), stones.x);
        rock_tilt += vec3(stones.z, 0.0, stones.w) * stones.x;
        gr.albedo = mix(rock, grass, green);
        gr.tilt = fine.yzw * mix(0.6, 0.3, green) + rock_tilt * (1.0 - green);
    }
    float beach = 1.0 - smoothstep(1.2, 2.4, above_sea + (detail - 0.5) * 1.5 + fine.x * 0.5);
    float sand = max(v_ground.y, beach) * (1.0 - steep);
    // Wind ripples 12 cm apart across a steady wind, bent by the noise; the water smooths them.
    float swash = 1.0 - smoothstep(0.25, 0.8, above_sea + (detail - 0.5) * 0.4 + fine.x * 0.2);
    float damp = 1.0 - smoothstep(0.0, 0.25, above_water);
    gr.wet = max(swash, damp);
    if (sand > 0.0) {
        float keep = (1.0 - smoothstep(0.02, 0.05, footprint)) * (1.0 - gr.wet);
        float phase = dot(v_world.xz, vec2(0.8, 0.6)) * 52.4 + fine.x * 9.0;
        float ripple = sin(phase) * keep;
        vec3 dry = SAND * mix(0.85, 1.1, detail) * (1.0 + fine.x * 0.35) * (1.0 + ripple * 0.06);
        vec3 tilt = fine.yzw * 0.1;
        tilt.xz += cos(phase) * keep * 0.26 * vec2(0.8, 0.6);
        gr.albedo = mix(gr.albedo, dry, sand);
        gr.tilt = mix(gr.tilt, tilt, sand);
    }
    // Water above the sea's level is a river's or a lake's: gravel under it and up its banks.
    float fresh = smoothstep(0.1, 0.4, above_sea - above_water);
    float bed = fresh * (1.0 - smoothstep(0.1, 0.4, above_water + fine.x * 0.3)) * (1.0 - steep);
    if (bed > 0.0) {
        vec2 pebbles;
        vec3 stone = mix(v_rock, vec3(0.36, 0.34, 0.31), 0.5) * (1.0 + fine.x * 0.4);
        gr.albedo = mix(gr.albedo, gravel(stone, footprint, pebbles), bed);
        gr.tilt = mix(gr.tilt, fine.yzw * 0.15 + vec3(pebbles.x, 0.0, pebbles.y), bed);
    }
    // Snow holds where the ground, tilted by its strata, is gentle: on ledges of a cliff too.
    vec3 held = normalize(n - rock_tilt * (1.0 - green));
    float snow_line = v_snow.x + (macro - 0.5) * v_snow.y * 2.0;
    // By hand rather than smoothstep: without snow the line is at the float maximum.
    float t = clamp((v_world.y - snow_line) / v_snow.y, 0.0, 1.0);
    float snow = t * t * (3.0 - 2.0 * t) * (1.0 - smoothstep(0.3, 0.45, 1.0 - held.y + fine.x * 0.1));
    gr.albedo = mix(gr.albedo, SNOW * (1.0 + fine.x * 0.1), snow);
    gr.tilt = mix(gr.tilt, fine.yzw * 0.1, snow);
    gr.albedo *= mix(0.92, 1.08, macro);
    gr.wet *= 1.0 - snow;
    gr.tilt *= 1.0 - 0.7 * gr.wet;
    return gr;
}

// Lambert sun plus sky light, stronger on faces that see more sky.
vec3 light(vec3 albedo, vec3 n, float sun) {
    vec3 sky = g.ambient.rgb * (0.55 + 0.45 * n.y);
    return albedo * (sky + g.sun_colour.rgb * sun * max(dot(n, to_sun()), 0.0));
}

// Water `depth` metres deep over lit ground `floor_lit`: the ground fades
// with depth into dark blue (red is absorbed first, so shallows look green;
// flowing water is murkier with silt); the sky reflects, less so where
// ripples break the mirror (flowing or shallow water) and darker near the
// horizon, which valleys hide; ripples drift with time and the sun glints.
vec3 water(vec3 floor_lit, float depth, float flow, float near, float sun) {
    vec3 view = normalize(v_world - g.camera.xyz);
    float t = v_snow.z;
    vec2 q = v_world.xz;
    vec3 r1 = noise_grad(q * 0.45 + vec2(0.21, 0.13) * t);
    vec3 r2 = noise_grad(vec2(q.y, -q.x) * 1.3 + vec2(-0.17, 0.29) * t * (1.0 + 2.0 * flow));
    vec2 slope = (r1.yz * 0.45 + r2.yz * 1.3 * 0.5) * mix(0.04, 0.16, flow) * near;
    vec3 n = normalize(vec3(-slope.x, 1.0, -slope.y));
    vec3 through = exp(-depth * mix(vec3(1.6, 0.55, 0.35), vec3(2.4, 1.6, 1.4), flow));
    vec3 scatter = mix(DEEP_WATER, SILT, flow);
    vec3 body = floor_lit * through + scatter * (g.ambient.rgb + g.sun_colour.rgb * sun) * (1.0 - through);
    float fresnel = 0.02 + 0.98 * pow(1.0 - max(-dot(view, n), 0.0), 5.0);
    float calm = (1.0 - flow) * smoothstep(0.1, 1.5, depth);
    fresnel = min(fresnel, mix(0.3, 1.0, calm));
    vec3 r = reflect(view, n);
    r.y = max(r.y, 0.01);
    vec3 sky = sky_colour(normalize(r)) * mix(mix(0.45, 0.9, calm), 1.0, smoothstep(0.0, 0.25, r.y));
    vec3 glint = g.sun_colour.rgb * 4.0 * sun * pow(max(dot(r, to_sun()), 0.0), 400.0);
    return mix(body, sky, fresnel) + glint;
}

void main() {
    bool skirt = v_cell.z > 0.0;
    vec3 n = normalize(v_normal);
    float footprint = max(length(dFdx(v_world)), length(dFdy(v_world))) + 1e-4;
    // Where a pixel spans cells, the grid's own heights and normals are as good and cheaper.
    float ground = v_floor;
    if (!skirt && footprint < 2.0 * v_snow.w) {
        ground = ground_here(n);
    }
    vec3 base = n;
    vec4 fine = surface_detail(base, footprint);
    float depth = skirt ? -1.0 : v_water.x - ground;
    Ground gr = land(base, fine, footprint, -depth, skirt ? 1e9 : ground - v_sea);
    n = normalize(n - gr.tilt);
    // The shadow map holds this same surface: looked up a texel and a half off
    // it along the normal, a lit slope does not shadow itself.
    float texel = 2.0 * g.shadow.y / length(vec3(g.light_view_proj[0][0], g.light_view_proj[1][0], g.light_view_proj[2][0]));
    float sun = sunlight(v_world + base * 1.5 * texel);
    // The shore is where the level crosses the ground, soft over about a pixel.
    float edge = max(fwidth(depth) * 1.5, 0.01);
    float wet = smoothstep(0.0, edge, depth);
    vec3 c = light(gr.albedo * mix(1.0, 0.5, gr.wet), n, sun);
    // Wet ground above the water mirrors a little sky and glints in the sun.
    if (gr.wet > 0.0 && wet < 1.0) {
        vec3 view = normalize(v_world - g.camera.xyz);
        vec3 r = reflect(view, n);
        float fresnel = 0.02 + 0.98 * pow(1.0 - max(-dot(view, n), 0.0), 5.0);
        vec3 sky = sky_colour(normalize(vec3(r.x, max(r.y, 0.01), r.z)));
        vec3 glint = g.sun_colour.rgb * sun * pow(max(dot(r, to_sun()), 0.0), 60.0);
        c += gr.wet * (1.0 - wet) * (sky * fresnel * 0.15 + glint * 0.5);
    }
    if (wet > 0.0) {
        float flow = v_water.z;
        float near = 1.0 - smoothstep(0.15, 0.6, footprint * 0.45);
        vec3 w = water(c, max(depth, 0.0), flow, near, sun);
        // Foam where the water thins out on the shore, and in streaks on rapids.
        float streak = noise_grad(vec2(v_world.x * 0.9, v_world.z * 0.9) + v_snow.z * vec2(0.3, -0.4)).x;
        float foam = (1.0 - smoothstep(0.0, 0.12, depth)) * mix(0.6, 0.3 + 0.5 * streak, near);
        foam = max(foam, flow * smoothstep(0.55, 0.8, streak) * 0.5 * near);
        w = mix(w, light(vec3(0.75), vec3(0.0, 1.0, 0.0), sun), foam * 0.6);
        c = mix(c, w, wet);
    }
    o_colour = vec4(fogged(c, v_world), 1.0);
}
