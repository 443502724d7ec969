//! Grass dynamics throughput.
//!
//! `bake_128x128_6seg_1000_steps`: the baking kernel on a 128 × 128 field of
//! 6-particle blades (one blade per cell) under a turbulent wind, 1,000 RK4
//! steps, 2 threads (target ≥ 100 M particle-RK4-steps/s).
//! `live_100k_one_60hz_frame`: 100,000 live blades advanced by one 60 Hz frame at
//! the live step ([`LiveSettings::step_seconds`]: ⌈(1/60 s) / step⌉ RK4 steps, 2 at
//! the default 1/120 s; the bake keeps its 1/240 s) on one thread (target: within a
//! 16.7 ms frame).
//!
//! Both advance the field the way their callers do: the bake in runs of
//! `record_every` steps between recorded frames, the live frame in one run.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use sylva::systems::grass::{
    BakeSettings, BladeField, BladeKernel, BladeShape, Dynamics, LiveSettings, Segment, Wind, WindField,
};

fn wind() -> WindField {
    WindField {
        winds: vec![Wind {
            seed: 1,
            power_offset: 1.0,
            power_amplitude: 3.0,
            polar_amplitude: 0.2,
            azimuth_amplitude: 0.4,
            frequency: 0.8,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    }
}

/// `blades` 6-particle blades on a grid `side` blades wide, stepping `step_seconds`.
fn field(blades: usize, side: usize, step_seconds: f32) -> BladeField {
    let d = Dynamics {
        step_seconds,
        ..Dynamics::default()
    };
    let kernel = BladeKernel::new(&BladeShape::blade(6, 0.3, Segment::default()), &d);
    let roots = (0..blades)
        .map(|i| Vec3::new((i % side) as f32 * 0.1, 0.0, (i / side) as f32 * 0.1))
        .collect();
    BladeField::new(kernel, roots, 3, d.initial_offset)
}

fn bake(c: &mut Criterion) {
    const STEPS: u64 = 1000;
    let run = BakeSettings::default().record_every as u64;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
    let wind = wind();
    let mut f = field(128 * 128, 128, Dynamics::default().step_seconds);
    let mut g = c.benchmark_group("grass");
    g.sample_size(10);
    g.throughput(Throughput::Elements(128 * 128 * 6 * STEPS));
    g.bench_function("bake_128x128_6seg_1000_steps", |b| {
        b.iter(|| {
            pool.install(|| {
                let mut done = 0;
                while done < STEPS {
                    let k = run.min(STEPS - done);
                    f.advance(&wind, k);
                    done += k;
                }
            })
        })
    });
    g.finish();
}

fn live(c: &mut Criterion) {
    const BLADES: usize = 100_000;
    let step = LiveSettings::default().step_seconds;
    let steps = (1.0 / 60.0 / step as f64).ceil() as u64;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    let wind = wind();
    let mut f = field(BLADES, 316, step);
    let mut g = c.benchmark_group("grass");
    g.sample_size(10);
    g.throughput(Throughput::Elements(BLADES as u64));
    g.bench_function("live_100k_one_60hz_frame", |b| {
        b.iter(|| pool.install(|| f.advance(&wind, steps)))
    });
    g.finish();
}

criterion_group!(benches, bake, live);
criterion_main!(benches);
