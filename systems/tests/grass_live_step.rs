//! The live step: live blades take 1/120 s RK4 steps where the bake takes 1/240 s. Every
//! preset stays stable at it under a strong wind and close to the bake step's motion; the
//! stable-step estimate is checked against where the motion really blows up; shapes too stiff
//! for the live step take substeps.

use glam::Vec3;
use sylva_runtime::Validate;
use sylva_systems::grass::dynamics::RK4_HALF_DISC;
use sylva_systems::grass::interaction::{MAX_LIVE_STEP, MAX_LIVE_SUBSTEPS, MIN_LIVE_STEP, substeps_needed};
use sylva_systems::grass::{
    BakeSettings, BladeField, BladeKernel, BladeShape, Dynamics, Gust, LiveGrass, LiveSettings, Pusher, Segment, Wind,
    WindField, bake,
};

/// The shipped presets (scenes/grass/*.ron).
fn presets() -> [(&'static str, BladeShape); 5] {
    let d = Segment::default();
    [
        ("blade1", BladeShape::blade(1, 0.3, d)),
        ("blade2", BladeShape::blade(2, 0.3, d)),
        ("blade6", BladeShape::blade(6, 0.3, d)),
        ("tuft", BladeShape::tuft(5, 0.25, 0.3, d)),
        ("shrub", BladeShape::shrub(4, 0.4, d)),
    ]
}

/// Far stronger than any shipped scene: 4–12 m/s, fast turbulence, and a 12 m/s gust at 2 s.
fn storm() -> WindField {
    WindField {
        winds: vec![Wind {
            seed: 5,
            power_offset: 4.0,
            power_amplitude: 8.0,
            polar_amplitude: 0.4,
            azimuth_amplitude: 0.8,
            frequency: 2.0,
            deviation: 1.5,
            spacing: 1.0,
            ..Wind::default()
        }],
        gusts: vec![Gust {
            center: Vec3::ZERO,
            radius: 3.0,
            start: 2.0,
            duration: 0.3,
            velocity: Vec3::X * 12.0,
        }],
    }
}

const BLADES: usize = 16;

/// Ten seconds of `BLADES` blades of `shape` stepping `h` under `wind`: the displacements
/// from rest every 1/60 s (when `h` divides it) and the peak kinetic energy of each half.
fn run(shape: &BladeShape, h: f32, wind: &WindField) -> (Vec<Vec3>, [f32; 2]) {
    let d = Dynamics {
        step_seconds: h,
        ..Dynamics::default()
    };
    let roots = (0..BLADES)
        .map(|i| Vec3::new(i as f32 * 0.53, 0.0, (i % 5) as f32 * 0.71))
        .collect();
    let mut f = BladeField::new(BladeKernel::new(shape, &d), roots, 11, d.initial_offset);
    let steps = (10.0 / h).round() as u64;
    let per_frame = (((1.0 / 60.0) / h).round() as u64).max(1);
    let (mut poses, mut peak) = (Vec::new(), [0.0f32; 2]);
    for s in 1..=steps {
        f.step(wind);
        let energy: f32 = (0..BLADES)
            .flat_map(|b| (1..shape.len()).map(move |i| (b, i)))
            .map(|(b, i)| 0.5 * shape.segment[i].mass * f.v(b, i).length_squared())
            .sum();
        let half = &mut peak[usize::from(s * 2 > steps)];
        *half = half.max(if energy.is_finite() { energy } else { f32::INFINITY });
        if s % per_frame == 0 {
            poses.extend(
                (0..BLADES)
                    .flat_map(|b| (1..shape.len()).map(move |i| (b, i)))
                    .map(|(b, i)| f.x(b, i)),
            );
        }
    }
    for (k, p) in poses.iter_mut().enumerate() {
        *p -= shape.rest[1 + k % (shape.len() - 1)];
    }
    (poses, peak)
}

/// |1 + z + z²/2 + z³/6 + z⁴/24| for z = (re, im).
fn rk4_gain(re: f64, im: f64) -> f64 {
    let mul = |(a, b): (f64, f64), (c, d): (f64, f64)| (a * c - b * d, a * d + b * c);
    let z = (re, im);
    let (mut sum, mut term) = ((1.0, 0.0), (1.0, 0.0));
    for k in 1..=4 {
        term = mul(term, z);
        term = (term.0 / k as f64, term.1 / k as f64);
        sum = (sum.0 + term.0, sum.1 + term.1);
    }
    sum.0.hypot(sum.1)
}

#[test]
fn the_half_disc_constant_is_inside_rk4s_stability_region_and_nearly_tight() {
    let arc = |r: f64| {
        (0..=2000).map(move |k| {
            let a = std::f64::consts::FRAC_PI_2 * (1.0 + k as f64 / 2000.0);
            (r * a.cos(), r * a.sin())
        })
    };
    for j in 1..=100 {
        let r = f64::from(RK4_HALF_DISC) * j as f64 / 100.0;
        for (re, im) in arc(r) {
            assert!(rk4_gain(re, im) <= 1.0 + 1e-12, "unstable at {re} + {im}i");
        }
    }
    assert!(arc(2.63).any(|(re, im)| rk4_gain(re, im) > 1.0));
}

#[test]
fn every_preset_is_stable_at_the_live_step_in_a_storm() {
    let wind = storm();
    for (name, shape) in presets() {
        let kernel = BladeKernel::new(&shape, &Dynamics::default());
        assert!(
            kernel.stable_step() >= MAX_LIVE_STEP,
            "{name}: estimated stable step {} below the live step",
            kernel.stable_step()
        );
        let (_, reference) = run(&shape, Dynamics::default().step_seconds, &wind);
        let (_, live) = run(&shape, MAX_LIVE_STEP, &wind);
        // No growth: the second five seconds (turbulence only) peak no higher than the
        // first (the gust), and no higher than the bake step's within 10 %.
        assert!(
            live[1] <= live[0],
            "{name}: kinetic energy grew from {} to {}",
            live[0],
            live[1]
        );
        assert!(
            live[1] <= 1.1 * reference[1],
            "{name}: peak kinetic energy {} against {} at 1/240 s",
            live[1],
            reference[1]
        );
    }
}

#[test]
fn the_live_step_follows_the_bake_steps_motion() {
    // Relative rms deviation of every particle's displacement, sampled at 60 Hz over 10 s of
    // the storm, and the largest deviation of the final pose (metres).
    let wind = storm();
    for (name, shape) in presets() {
        let (reference, _) = run(&shape, Dynamics::default().step_seconds, &wind);
        let (live, _) = run(&shape, MAX_LIVE_STEP, &wind);
        assert_eq!(live.len(), reference.len());
        let err: f32 = live
            .iter()
            .zip(&reference)
            .map(|(a, b)| (*a - *b).length_squared())
            .sum();
        let size: f32 = reference.iter().map(|d| d.length_squared()).sum();
        let rel = (err / size).sqrt();
        let last = BLADES * (shape.len() - 1);
        let worst = (live[live.len() - last..]
            .iter()
            .zip(&reference[reference.len() - last..]))
        .map(|(a, b)| a.distance(*b))
        .fold(0.0f32, f32::max);
        assert!(size > 0.0, "{name}: no motion");
        assert!(rel < 0.05, "{name}: rms deviation {rel}");
        assert!(worst < 0.01, "{name}: final pose {worst} m off");
    }
}

#[test]
fn the_stable_step_estimate_lies_below_the_step_that_blows_up() {
    let wind = storm();
    let (_, calm) = run(&presets()[2].1, Dynamics::default().step_seconds, &wind);
    for (name, shape) in presets() {
        let limit = BladeKernel::new(&shape, &Dynamics::default()).stable_step();
        let (_, at_limit) = run(&shape, limit, &wind);
        assert!(at_limit[1] <= at_limit[0], "{name}: unstable at its estimate {limit}");
    }
    // The estimate is not vacuous: the stiffest preset blows up at 1.5 times it.
    let blade6 = &presets()[2].1;
    let limit = BladeKernel::new(blade6, &Dynamics::default()).stable_step();
    let (_, beyond) = run(blade6, 1.5 * limit, &wind);
    assert!(beyond[1] > 10.0 * calm[1], "blade6 stable at 1.5 × {limit}: {beyond:?}");
}

#[test]
fn a_shape_too_stiff_for_the_live_step_takes_substeps_and_stays_bounded() {
    let feather = Segment {
        mass: 0.0002,
        ..Segment::default()
    };
    let shape = BladeShape::blade(6, 0.3, feather);
    let d = Dynamics::default();
    let kernel = BladeKernel::new(&shape, &d);
    assert!(kernel.stable_step() < MAX_LIVE_STEP / 2.0);
    let (baked, _) = bake(
        &shape,
        &d,
        &WindField::default(),
        &BakeSettings {
            cells: 2,
            frames: 4,
            max_warmup_seconds: 0.5,
            ..BakeSettings::default()
        },
    )
    .unwrap();
    let settings = LiveSettings::default();
    let mut g = LiveGrass::new(kernel.clone(), vec![Vec3::ZERO], settings);
    let substeps = g.substeps();
    assert_eq!(substeps, (MAX_LIVE_STEP / kernel.stable_step()).ceil() as u32);
    assert_eq!(g.step_seconds(), MAX_LIVE_STEP);
    let pusher = Pusher {
        center: Vec3::new(0.1, 0.2, 0.0),
        radius: 0.12,
    };
    for _ in 0..240 {
        g.step(&baked, &storm(), &[pusher]);
    }
    assert_eq!(g.live_blades(), 1);
    for i in 1..shape.len() {
        let p = g.position(&baked, 0, i);
        assert!(p.is_finite() && p.length() <= 0.3 * 1.01, "particle {i} at {p}");
    }
    // The presets need no substeps.
    for (name, shape) in presets() {
        let g = LiveGrass::new(BladeKernel::new(&shape, &d), vec![Vec3::ZERO], settings);
        assert_eq!(g.substeps(), 1, "{name}");
    }
}

#[test]
fn live_settings_refuse_steps_beyond_the_tested_range() {
    assert!(LiveSettings::default().validate().is_ok());
    // A live step of 1e-9 s ran a billion steps per second, and the f32 live clock stopped
    // advancing one second in, looping forever (docs/design/limits.md, "Live grass steps").
    for step_seconds in [
        0.0,
        -1.0,
        f32::NAN,
        1e-9,
        MIN_LIVE_STEP * 0.99,
        1.0 / 60.0,
        MAX_LIVE_STEP * 1.01,
    ] {
        let s = LiveSettings {
            step_seconds,
            ..LiveSettings::default()
        };
        assert!(s.validate().is_err(), "{step_seconds}");
    }
    let smaller = LiveSettings {
        step_seconds: 1.0 / 240.0,
        ..LiveSettings::default()
    };
    assert!(smaller.validate().is_ok());
}

/// A blade of near-massless segments asks for billions of RK4 substeps per live step (a stall
/// once a walker touched it). `LiveGrass` caps them; `grass::install` refuses the shape
/// (docs/design/limits.md, "Live grass steps").
#[test]
fn substeps_are_capped_for_blades_too_stiff_for_any_live_step() {
    let dust = Segment {
        mass: 1e-30,
        ..Segment::default()
    };
    let shape = BladeShape::blade(3, 0.3, dust);
    let kernel = BladeKernel::new(&shape, &Dynamics::default());
    assert!(substeps_needed(&kernel, MIN_LIVE_STEP) > 1e9);
    let g = LiveGrass::new(kernel, vec![Vec3::ZERO], LiveSettings::default());
    assert_eq!(g.substeps(), MAX_LIVE_SUBSTEPS);
}
