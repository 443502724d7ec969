//! Dynamics: fixed roots, deflection against height, gust response, thread independence.

use glam::Vec3;
use sylva_systems::grass::{BladeField, BladeKernel, BladeShape, Dynamics, Gust, Segment, Wind, WindField};

fn field(shape: &BladeShape, blades: usize) -> BladeField {
    let d = Dynamics::default();
    let roots = (0..blades)
        .map(|i| Vec3::new(i as f32 * 0.37, 0.0, (i % 7) as f32 * 0.41))
        .collect();
    BladeField::new(BladeKernel::new(shape, &d), roots, 11, d.initial_offset)
}

fn light() -> WindField {
    WindField {
        winds: vec![Wind {
            seed: 2,
            power_offset: 1.0,
            power_amplitude: 2.0,
            polar_amplitude: 0.1,
            azimuth_amplitude: 0.2,
            frequency: 1.0,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    }
}

#[test]
fn presets_are_valid() {
    for s in [
        BladeShape::blade(1, 0.3, Segment::default()),
        BladeShape::blade(2, 0.3, Segment::default()),
        BladeShape::blade(6, 0.3, Segment::default()),
        BladeShape::tuft(5, 0.25, 0.3, Segment::default()),
        BladeShape::shrub(4, 0.4, Segment::default()),
    ] {
        s.validate().unwrap();
    }
    assert!(BladeShape::blade(20, 0.3, Segment::default()).validate().is_err());
}

#[test]
fn roots_never_move_and_links_keep_their_length() {
    for shape in [
        BladeShape::blade(6, 0.3, Segment::default()),
        BladeShape::shrub(4, 0.4, Segment::default()),
    ] {
        let mut f = field(&shape, 50);
        let wind = light();
        for _ in 0..1200 {
            f.step(&wind);
        }
        let n = shape.len();
        for b in 0..50 {
            assert_eq!(f.x(b, 0), Vec3::ZERO);
            assert_eq!(f.v(b, 0), Vec3::ZERO);
            for i in 1..n {
                let p = shape.parent[i] as usize;
                let rest = (shape.rest[i] - shape.rest[p]).length();
                let len = (f.x(b, i) - f.x(b, p)).length();
                assert!((len - rest).abs() < 0.02 * rest, "blade {b} link {i}: {len} vs {rest}");
            }
        }
    }
}

#[test]
fn deflection_grows_with_distance_from_the_root() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let mut f = field(&shape, 20);
    let wind = light();
    for _ in 0..960 {
        f.step(&wind);
    }
    let mut max = [0.0f32; 7];
    for _ in 0..960 {
        f.step(&wind);
        for b in 0..20 {
            for (i, m) in max.iter_mut().enumerate().skip(1) {
                *m = m.max((f.x(b, i) - shape.rest[i]).length());
            }
        }
    }
    for i in 1..6 {
        assert!(
            max[i + 1] > max[i],
            "particle {}: {} ≤ {}: {max:?}",
            i + 1,
            max[i + 1],
            max[i]
        );
    }
    assert!(max[6] > 0.01, "the tip hardly moves: {max:?}");
}

#[test]
fn blades_keep_swinging_after_a_short_gust_then_decay() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let calm = WindField::default();
    let gusty = WindField {
        winds: vec![],
        gusts: vec![Gust {
            center: Vec3::ZERO,
            radius: 1.0,
            start: 1.0,
            duration: 0.2,
            velocity: Vec3::X * 6.0,
        }],
    };
    let (mut a, mut b) = (field(&shape, 1), field(&shape, 1));
    let tip = |f: &BladeField| f.x(0, 6);
    let mut during = 0.0f32;
    let mut after = 0.0f32;
    let mut late = 0.0f32;
    let mut crossings = 0;
    let mut last_sign = 0.0f32;
    for _ in 0..(240 * 8) {
        a.step(&calm);
        b.step(&gusty);
        let t = b.time;
        let d = (tip(&b) - tip(&a)).x;
        if (1.0..1.2).contains(&t) {
            during = during.max(d.abs());
        } else if (1.2..5.0).contains(&t) {
            after = after.max(d.abs());
            if d.signum() != last_sign && last_sign != 0.0 {
                crossings += 1;
            }
            last_sign = d.signum();
        } else if t >= 7.0 {
            late = late.max(d.abs());
        }
    }
    assert!(during > 0.01, "the gust barely moved the tip: {during}");
    assert!(after > 0.3 * during, "no swing after the gust: {after} vs {during}");
    assert!(
        crossings >= 2,
        "the tip does not swing back and forth after the gust ({crossings} crossings)"
    );
    assert!(late < 0.2 * after, "no decay: {late} vs {after}");
}

#[test]
fn stepping_is_identical_on_one_and_two_threads() {
    let shape = BladeShape::tuft(4, 0.25, 0.3, Segment::default());
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut f = field(&shape, 1000);
                for _ in 0..100 {
                    f.step(&light());
                }
                (0..f.blades())
                    .flat_map(|b| (0..shape.len()).map(move |i| (b, i)))
                    .map(|(b, i)| (f.x(b, i), f.v(b, i)))
                    .collect::<Vec<_>>()
            })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn gravity_needs_the_initial_offset_to_bend() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let d = Dynamics {
        initial_offset: 0.0,
        ..Dynamics::default()
    };
    let mut still = BladeField::new(BladeKernel::new(&shape, &d), vec![Vec3::ZERO], 1, 0.0);
    let mut sag = field(&shape, 1);
    for _ in 0..480 {
        still.step(&WindField::default());
        sag.step(&WindField::default());
    }
    assert_eq!(still.x(0, 6).x, 0.0);
    assert_eq!(still.x(0, 6).z, 0.0);
    assert!(sag.x(0, 6).y < shape.rest[6].y);
}

#[test]
fn advancing_several_steps_equals_stepping_one_at_a_time() {
    // Crosses wind lattice time nodes (frequency 1.5/s) and a gust; 37 blades leave a partial block.
    let shape = BladeShape::shrub(3, 0.4, Segment::default());
    let wind = WindField {
        winds: vec![
            Wind {
                frequency: 1.5,
                ..light().winds[0]
            },
            Wind {
                seed: 5,
                from: 0.5,
                ..light().winds[0]
            },
        ],
        gusts: vec![Gust {
            center: Vec3::new(3.0, 0.0, 1.0),
            radius: 4.0,
            start: 0.3,
            duration: 0.4,
            velocity: Vec3::new(4.0, 0.5, -2.0),
        }],
    };
    let (mut a, mut b) = (field(&shape, 37), field(&shape, 37));
    for _ in 0..(240 * 2) {
        a.step(&wind);
    }
    for k in [1, 7, 24, 100, 348] {
        b.advance(&wind, k);
    }
    assert_eq!((a.steps, a.time), (b.steps, b.time));
    for blade in 0..37 {
        for i in 0..shape.len() {
            assert_eq!((a.x(blade, i), a.v(blade, i)), (b.x(blade, i), b.v(blade, i)));
        }
    }
    assert!((a.x(36, shape.len() - 1) - shape.rest[shape.len() - 1]).length() > 1e-3);
}

#[test]
fn the_default_step_agrees_with_a_three_times_finer_one_for_every_preset() {
    // The fixed step is a speed/accuracy choice: at 1/240 s every preset's motion under
    // turbulent wind and a gust stays within a few percent of a converged run (1/720 s).
    let wind = WindField {
        winds: vec![Wind {
            power_amplitude: 3.0,
            polar_amplitude: 0.2,
            azimuth_amplitude: 0.4,
            frequency: 0.8,
            ..light().winds[0]
        }],
        gusts: vec![Gust {
            center: Vec3::ZERO,
            radius: 3.0,
            start: 2.0,
            duration: 0.3,
            velocity: Vec3::X * 8.0,
        }],
    };
    for shape in [
        BladeShape::blade(1, 0.3, Segment::default()),
        BladeShape::blade(2, 0.3, Segment::default()),
        BladeShape::blade(6, 0.3, Segment::default()),
        BladeShape::tuft(5, 0.25, 0.3, Segment::default()),
        BladeShape::shrub(4, 0.4, Segment::default()),
    ] {
        let run = |per_frame: u64| {
            let d = Dynamics {
                step_seconds: Dynamics::default().step_seconds * 8.0 / per_frame as f32,
                ..Dynamics::default()
            };
            let mut f = BladeField::new(BladeKernel::new(&shape, &d), vec![Vec3::new(0.3, 0.0, 0.2)], 11, 0.001);
            let mut out = Vec::new();
            for _ in 0..(30 * 8) {
                f.advance(&wind, per_frame);
                out.extend((1..shape.len()).map(|i| f.x(0, i) - shape.rest[i]));
            }
            out
        };
        let (default, fine) = (run(8), run(24));
        let err: f32 = default.iter().zip(&fine).map(|(a, b)| (*a - *b).length_squared()).sum();
        let size: f32 = fine.iter().map(|d| d.length_squared()).sum();
        let rel = (err / size).sqrt();
        assert!(rel < 0.05, "{} particles: rms deviation {rel}", shape.len());
        assert!(size.sqrt() > 0.0, "no motion");
    }
}
