//! Wind: ranges, zero defaults, seeds, caching, switching on and off.

use glam::Vec3;
use sylva_systems::grass::wind::WindCache;
use sylva_systems::grass::{Gust, Wind, WindField};

fn turbulent(seed: u64) -> Wind {
    Wind {
        seed,
        power_offset: 2.0,
        power_amplitude: 3.0,
        polar_amplitude: 0.3,
        azimuth_amplitude: 0.5,
        frequency: 1.5,
        deviation: 2.0,
        spacing: 3.0,
        direction: 0.7,
        ..Wind::default()
    }
}

fn points() -> impl Iterator<Item = (Vec3, f32)> {
    (0..4000).map(|i| {
        let f = i as f32;
        (
            Vec3::new((f * 0.731).sin() * 40.0, 0.0, (f * 0.377).cos() * 40.0 - 3.0),
            f * 0.0123,
        )
    })
}

#[test]
fn strength_and_deflections_stay_within_their_ranges() {
    let w = turbulent(3);
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    for (p, t) in points() {
        let (s, polar, az) = w.components(p, t);
        assert!((2.0..=5.0).contains(&s), "strength {s}");
        assert!(polar.abs() <= 0.3 + 1e-6 && az.abs() <= 0.5 + 1e-6, "{polar} {az}");
        let v = w.sample(p, t);
        assert!((v.length() - s).abs() < 1e-4);
        let up = (v.y / v.length()).asin();
        assert!(up.abs() <= 0.3 + 1e-4, "elevation {up}");
        lo = lo.min(s);
        hi = hi.max(s);
    }
    // The range is actually used, not collapsed to its middle.
    assert!(lo < 2.6 && hi > 4.4, "{lo}..{hi}");
}

#[test]
fn all_zero_parameters_mean_no_wind() {
    let field = WindField {
        winds: vec![Wind {
            seed: 9,
            ..Wind::default()
        }],
        gusts: vec![],
    };
    for (p, t) in points() {
        assert_eq!(field.sample(p, t), Vec3::ZERO);
    }
}

#[test]
fn same_seed_repeats_and_different_seeds_differ() {
    let (a, b, c) = (turbulent(1), turbulent(1), turbulent(2));
    let mut differ = 0;
    for (p, t) in points() {
        assert_eq!(a.sample(p, t), b.sample(p, t));
        if (a.sample(p, t) - c.sample(p, t)).length() > 0.1 {
            differ += 1;
        }
    }
    assert!(differ > 3000, "only {differ} of 4000 samples differ");
}

#[test]
fn cached_sampling_equals_direct_sampling() {
    let field = WindField {
        winds: vec![
            turbulent(5),
            Wind {
                direction: 2.0,
                ..turbulent(6)
            },
        ],
        gusts: vec![Gust {
            center: Vec3::ZERO,
            radius: 5.0,
            start: 1.0,
            duration: 1.0,
            velocity: Vec3::X * 3.0,
        }],
    };
    let root = Vec3::new(1.3, 0.0, -2.2);
    let mut cache = WindCache::default();
    for step in 0..2000 {
        let t = step as f32 / 240.0;
        assert_eq!(
            field.sample_cached(root, t, &mut cache),
            field.sample(root, t),
            "t = {t}"
        );
    }
}

#[test]
fn winds_switch_on_and_off_and_sum() {
    let a = Wind {
        from: 1.0,
        until: 2.0,
        ..turbulent(1)
    };
    let b = turbulent(2);
    let field = WindField {
        winds: vec![a, b],
        gusts: vec![],
    };
    let p = Vec3::new(0.5, 0.0, 0.5);
    assert_eq!(field.sample(p, 0.5), b.sample(p, 0.5));
    assert_eq!(field.sample(p, 1.5), a.sample(p, 1.5) + b.sample(p, 1.5));
    assert_ne!(a.sample(p, 1.5), Vec3::ZERO);
    assert_eq!(field.sample(p, 2.5), b.sample(p, 2.5));
}

#[test]
fn turbulence_turns_with_the_main_direction() {
    let a = turbulent(4);
    let b = Wind {
        direction: a.direction + 1.0,
        ..a
    };
    let rot = glam::Quat::from_rotation_y(-1.0);
    for (p, t) in points().take(200) {
        assert!((rot * a.sample(p, t) - b.sample(p, t)).length() < 1e-4);
    }
}

#[test]
fn a_gust_is_local_and_time_limited() {
    let g = Gust {
        center: Vec3::ZERO,
        radius: 2.0,
        start: 1.0,
        duration: 0.5,
        velocity: Vec3::X * 4.0,
    };
    assert_eq!(g.sample(Vec3::ZERO, 0.99), Vec3::ZERO);
    assert_eq!(g.sample(Vec3::ZERO, 1.5), Vec3::ZERO);
    assert_eq!(g.sample(Vec3::new(2.1, 0.0, 0.0), 1.25), Vec3::ZERO);
    assert!((g.sample(Vec3::ZERO, 1.25) - Vec3::X * 4.0).length() < 1e-5);
}
