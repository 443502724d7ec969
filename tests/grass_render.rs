//! The Vulkan grass path on lavapipe with validation: the shader's motion fetch
//! (run through the probe compute shader) against `BakedGrass::sample`, in both
//! texel layouts, and a headless patch of blades that is visible, moves with
//! the wind and leaves the validation layer silent.
//!
//! Without a Vulkan driver the tests print `SKIPPED` and pass unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use sylva::runtime::extract::{Camera, GrassBatch, GrassLayer, GrassShape, Sun};
use sylva::runtime::glam::Vec3;
use sylva::systems::grass::extraction::motion;
use sylva::systems::grass::{
    BakeSettings, BakedGrass, BladeShape, Dynamics, Segment, TextureLayout, Wind, WindField, bake,
};
use sylva::vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva::vk::{FrameInput, Renderer};

/// Largest difference, metres, between the shader's fetch and the CPU sampler.
/// Texels decode exactly on both sides (f16 → f32 and the RGB8 bytes are exact);
/// what differs is the frame position `t / frame_seconds` wrapped by GPU `floor`
/// and CPU `rem_euclid`, and the FMA-free vs fused blend: a few ulps of a
/// ≤ 64-frame position times a ≤ 0.3 m texel difference stays far below this.
const TOLERANCE: f32 = 2e-5;

const BLADE_HEIGHT: f32 = 0.3;

fn baked(layout: TextureLayout) -> BakedGrass {
    let wind = WindField {
        winds: vec![Wind {
            seed: 5,
            power_offset: 2.0,
            power_amplitude: 4.0,
            polar_amplitude: 0.2,
            azimuth_amplitude: 0.4,
            frequency: 0.8,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    };
    let settings = BakeSettings {
        cells: 4,
        cell_size: 0.5,
        record_every: 12,
        frames: 8,
        max_warmup_seconds: 1.0,
        layout,
        ..BakeSettings::default()
    };
    bake(
        &BladeShape::blade(3, BLADE_HEIGHT, Segment::default()),
        &Dynamics::default(),
        &wind,
        &settings,
    )
    .expect("bake")
    .0
}

/// A layer drawing `baked` with `n × n` blades 0.1 m apart from the origin.
fn layer(baked: &BakedGrass, n: usize) -> GrassLayer {
    let rest: Vec<Vec3> = (0..=baked.links)
        .map(|k| Vec3::Y * BLADE_HEIGHT * k as f32 / baked.links as f32)
        .collect();
    let particles = rest.len();
    let mut l = GrassLayer {
        shape: GrassShape {
            parent: (0..particles as u32).map(|p| p.saturating_sub(1)).collect(),
            width: (0..particles)
                .map(|p| 0.04 * (1.0 - p as f32 / particles as f32))
                .collect(),
            rest,
        },
        motion: motion(baked),
        generation: 1,
        ..GrassLayer::default()
    };
    for i in 0..n * n {
        l.root.push(Vec3::new((i % n) as f32 * 0.1, 0.0, (i / n) as f32 * 0.1));
        l.yaw.push(i as f32 * 0.7);
        l.scale.push(1.0);
        l.colour.push([30, 200, 30, 255]);
        l.live_slot.push(u32::MAX);
    }
    l.dirty.mark(0, (n * n) as u32);
    l
}

/// Queries at cell centres (the fetch is nearest-cell, so boundaries are avoided)
/// over several field periods on both sides of zero, and times around every frame,
/// the loop seam and negative times.
fn queries(b: &BakedGrass) -> Vec<(u32, f32, f32, f32)> {
    let period = b.frames as f32 * b.frame_seconds;
    let mut times: Vec<f32> = (0..=2 * b.frames)
        .map(|k| k as f32 * 0.5 * b.frame_seconds + 0.013)
        .collect();
    times.extend([
        0.0,
        period - 1e-3,
        period,
        period + 1e-3,
        -0.37,
        -period - 0.2,
        3.0 * period + 0.05,
    ]);
    let mut q = Vec::new();
    for link in 0..b.links {
        for (k, &t) in times.iter().enumerate() {
            for cx in [-9i32, -4, -1, 0, 1, 3, 6] {
                let cz = (cx * 3 + k as i32) % 11 - 5;
                let centre = |c: i32| (c as f32 + 0.5) * b.cell_size;
                q.push((link, centre(cx), centre(cz), t));
            }
        }
    }
    q
}

#[test]
fn the_shader_fetch_matches_the_cpu_sampler_in_both_layouts() {
    let Some(mut r) = renderer_or_skip(16, 16) else { return };
    for layout in [TextureLayout::Rgba16F, TextureLayout::ThesisRgb8] {
        let b = baked(layout);
        let l = layer(&b, 1);
        let q = queries(&b);
        let (wind_power, wave_speed) = (1.5, 1.25);
        let gpu = r.probe_grass(&l, wind_power, wave_speed, &q).expect("probe");
        assert_eq!(gpu.len(), q.len());
        let mut largest = 0.0f32;
        let mut moving = 0;
        for (&(link, x, z, t), g) in q.iter().zip(&gpu) {
            let cpu = b.sample(link, x, z, t, wind_power, wave_speed);
            let err = (cpu - *g).abs().max_element();
            assert!(
                err <= TOLERANCE,
                "{layout:?} link {link} at ({x}, {z}) t {t}: GPU {g} vs CPU {cpu}"
            );
            largest = largest.max(err);
            moving += usize::from(cpu.length() > 1e-3);
        }
        // The comparison means something only if the bake moves the blades.
        assert!(
            moving > q.len() / 2,
            "{layout:?}: only {moving} of {} samples move",
            q.len()
        );
        eprintln!("{layout:?}: {} queries, largest difference {largest:e} m", q.len());
    }
    let b = baked(TextureLayout::Rgba16F);
    let e = r
        .probe_grass(&layer(&b, 1), 1.0, 1.0, &[(b.links, 0.0, 0.0, 0.0)])
        .unwrap_err();
    assert!(e.to_string().contains("link"), "{e}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

fn camera() -> Camera {
    Camera {
        position: Vec3::new(0.45, 0.35, 1.6),
        target: Vec3::new(0.45, 0.12, 0.45),
        fov_y_degrees: 50.0,
        near: 0.05,
        far: 100.0,
    }
}

fn frame(r: &mut Renderer, grass: &mut GrassBatch, camera: Camera) -> sylva::vk::FrameStats {
    r.render(FrameInput {
        grass: Some(grass),
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .expect("render")
}

/// Pixels where green clearly dominates (grass; the sky is blue).
fn green_pixels(pixels: &[u8]) -> usize {
    pixels
        .chunks_exact(4)
        .filter(|p| p[1] > 40 && p[1] as i32 > p[0] as i32 + 20 && p[1] as i32 > p[2] as i32 + 20)
        .count()
}

#[test]
fn a_patch_of_grass_is_drawn_and_moves_with_the_wind() {
    let Some(mut r) = renderer_or_skip(96, 72) else { return };
    let b = baked(TextureLayout::Rgba16F);
    let mut grass = GrassBatch {
        layers: vec![layer(&b, 10)],
        wind_power: 0.0,
        wave_speed: 1.0,
        time: 0.3,
        ..GrassBatch::default()
    };
    let still = frame(&mut r, &mut grass, camera());
    assert_eq!((still.draw_calls, still.grass, still.batches_culled), (1, 100, 0));
    assert!(
        still.upload_bytes >= 100 * 28,
        "instances went up: {}",
        still.upload_bytes
    );
    let calm = r.read_pixels();
    let visible = green_pixels(&calm);
    assert!(visible > 96 * 72 / 20, "only {visible} grass pixels");

    // Nothing changed: nothing goes up again.
    let steady = frame(&mut r, &mut grass, camera());
    assert_eq!((steady.upload_bytes, steady.allocations, steady.frees), (0, 0, 0));
    assert_eq!(r.read_pixels(), calm);

    grass.wind_power = 3.0;
    frame(&mut r, &mut grass, camera());
    let windy = r.read_pixels();
    let changed = calm
        .chunks_exact(4)
        .zip(windy.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed > 50, "wind moved only {changed} pixels");
    assert!(green_pixels(&windy) > 96 * 72 / 20);

    // A live blade draws its own displacement: a far push moves pixels too.
    let l = &mut grass.layers[0];
    l.live_displacement = vec![
        Vec3::new(0.2, -0.05, 0.0),
        Vec3::new(0.3, -0.1, 0.0),
        Vec3::new(0.35, -0.2, 0.0),
    ];
    l.live_slot[55] = 0;
    l.dirty.mark(55, 56);
    grass.wind_power = 0.0;
    let pushed = frame(&mut r, &mut grass, camera());
    assert_eq!(pushed.upload_bytes, 28 + 3 * 16);
    assert_ne!(r.read_pixels(), calm);

    // Looking away culls the layer.
    let away = Camera {
        target: Vec3::new(0.45, 0.35, 5.0),
        ..camera()
    };
    let culled = frame(&mut r, &mut grass, away);
    assert_eq!((culled.draw_calls, culled.grass, culled.batches_culled), (0, 0, 1));

    // An inconsistent layer is an error, not a crash.
    grass.layers[0].yaw.pop();
    let e = r
        .render(FrameInput {
            grass: Some(&mut grass),
            camera: camera(),
            ..FrameInput::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("grass layer 0"), "{e}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
