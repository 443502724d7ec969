//! The wind crowns sway in on lavapipe with validation: `shaders/wind.glsl` (run through the
//! wind probe) against `WindField::sample`, winds and gusts, and the wind a scene hands the
//! renderer.
//!
//! Without a Vulkan driver the GPU test prints `SKIPPED` and passes unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use sylva::Scene;
use sylva::runtime::extract::SwayWind;
use sylva::runtime::glam::Vec3;
use sylva::systems::grass::wind::breeze;
use sylva::systems::grass::{Gust, Wind, WindField};
use sylva::vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};

/// Largest difference per component, m/s, between the shader and the CPU. Both hash the
/// lattice nodes bit for bit; what differs is the GPU's `log`, `cos` and `sin` (Vulkan
/// requires sin and cos within 2⁻¹¹ absolute, a few 10⁻⁴ m/s at these 2–7 m/s winds) and
/// fused multiply-adds. One wrong hash bit moves a node value by about the deviation, a
/// wind by metres per second.
const TOLERANCE: f32 = 5e-3;

fn field() -> WindField {
    let turbulent = Wind {
        seed: 0xDEAD_BEEF_1234,
        power_offset: 1.0,
        power_amplitude: 4.0,
        polar_amplitude: 0.3,
        azimuth_amplitude: 0.9,
        frequency: 0.7,
        deviation: 1.3,
        spacing: 3.0,
        direction: 2.5,
        ..Wind::default()
    };
    WindField {
        winds: vec![
            turbulent,
            Wind {
                seed: 9,
                from: 1.0,
                until: 4.0,
                spacing: 7.5,
                direction: -0.4,
                ..turbulent
            },
        ],
        gusts: vec![Gust {
            center: Vec3::new(-2.0, 0.0, 3.0),
            radius: 6.0,
            start: 0.5,
            duration: 3.0,
            velocity: Vec3::new(3.0, 0.5, -2.0),
        }],
    }
}

#[test]
fn the_shaders_wind_is_the_grass_wind() {
    let Some(mut r) = renderer_or_skip(8, 8) else {
        return;
    };
    let field = field();
    let mut queries = Vec::new();
    for i in 0..24 {
        for j in 0..12 {
            let p = Vec3::new(i as f32 * 1.37 - 15.0, 4.0, j as f32 * 2.11 - 9.0);
            queries.push((p, (i * 12 + j) as f32 * 0.0173));
        }
    }
    // Far from the origin, late: large lattice coordinates on both sides of zero.
    queries.push((Vec3::new(-4321.5, 0.0, 9876.25), 1234.5));
    queries.push((Vec3::new(70_000.0, 0.0, -65_000.0), 3.2));
    let gpu = r.probe_wind(&field.sway(1.0, 1.0), &queries).expect("probe");
    assert_eq!(gpu.len(), queries.len());
    let mut largest = 0.0f32;
    for (&(p, t), g) in queries.iter().zip(&gpu) {
        let cpu = field.sample(p, t);
        let err = (cpu - *g).abs().max_element();
        assert!(err <= TOLERANCE, "at {p} t {t}: GPU {g} vs CPU {cpu}");
        largest = largest.max(err);
    }
    // The comparison means something only where the wind varies: over space and time.
    let speeds: Vec<f32> = queries.iter().map(|&(p, t)| field.sample(p, t).length()).collect();
    let (low, high) = speeds
        .iter()
        .fold((f32::MAX, 0.0f32), |(a, b), &s| (a.min(s), b.max(s)));
    assert!(high - low > 2.0, "winds between {low} and {high} m/s");
    eprintln!("{} queries, largest difference {largest:e} m/s", queries.len());
    let mut crowded = field.sway(1.0, 1.0);
    crowded.gusts = vec![crowded.gusts[0]; 5];
    assert!(r.probe_wind(&crowded, &queries).is_err(), "five gusts are one too many");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

fn scene_wind(text: &str) -> SwayWind {
    let scene = Scene::from_str(text, "wind.ron").unwrap();
    let app = sylva::build(&scene, 1).unwrap();
    app.world.resources.get::<SwayWind>().unwrap().clone()
}

#[test]
fn crowns_sway_in_the_grass_wind_or_a_breeze() {
    assert_eq!(scene_wind("()"), breeze().sway(1.0, 1.0), "no grass: a breeze");
    assert!(breeze().sway(1.0, 1.0).blows());
    let grass = r#"(grass: (
        species: [(scatter: (count: 1))],
        bake: (cells: 2, frames: 4, max_warmup_seconds: 0.1),
        wind: (winds: [(seed: 3, power_offset: 2.0, frequency: 1.0, deviation: 1.0)]),
        wind_power: 0.5,
        wave_speed: 2.0,
    ))"#;
    let wind = scene_wind(grass);
    let expected = WindField {
        winds: vec![Wind {
            seed: 3,
            power_offset: 2.0,
            frequency: 1.0,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: Vec::new(),
    };
    assert_eq!(wind, expected.sway(0.5, 2.0), "the grass's wind, power and speed");
}
