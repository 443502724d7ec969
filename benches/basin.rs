//! Basin-scale stream-power erosion (`terrain::basin::solve`) with the
//! default parameters (40 steps of 5e4 yr, n = 1, no diffusion), on squares of
//! 16 m nodes drained over their whole border, from 1 m of white noise: the
//! worst start for the first step's depression fill, which must flood every
//! node through its heap.
//!
//! `solve_256`: a 4 km domain. `solve_1024`: 16 km, target ≤ 1 s on one core.
//! `route_1024`: the same domain with 0 steps, i.e. the fixed cost of a solve
//! (incision table, the fill of the noise, routing), so that
//! (`solve_1024` − `route_1024`) / 40 is the cost of one step once the
//! network drains.

use criterion::{Criterion, criterion_group, criterion_main};
use sylva::runtime::rng::{hash_words, unit_f32};
use sylva::systems::terrain::basin::{BasinGrid, BasinParams, solve};

/// A `w × w` domain's planes: noise heights, uplift 1, fixed border.
fn domain(w: usize) -> (Vec<f32>, Vec<f32>, Vec<bool>) {
    let initial = (0..w * w).map(|i| unit_f32(hash_words(&[1, i as u64]))).collect();
    let fixed = (0..w * w)
        .map(|i| i % w == 0 || i % w == w - 1 || i / w == 0 || i / w == w - 1)
        .collect();
    (initial, vec![1.0; w * w], fixed)
}

fn bench_solve(c: &mut Criterion, name: &str, w: usize, steps: u32) {
    let (initial, uplift, fixed) = domain(w);
    let grid = BasinGrid {
        width: w,
        height: w,
        spacing: 16.0,
        initial: &initial,
        uplift: &uplift,
        fixed: &fixed,
    };
    let params = BasinParams {
        steps,
        ..BasinParams::default()
    };
    let mut group = c.benchmark_group("basin");
    if w > 256 {
        group.sample_size(10);
    }
    group.bench_function(name, |b| b.iter(|| solve(&grid, &params).expect("valid domain")));
    group.finish();
}

fn basin(c: &mut Criterion) {
    let steps = BasinParams::default().steps;
    bench_solve(c, "solve_256", 256, steps);
    bench_solve(c, "solve_1024", 1024, steps);
    bench_solve(c, "route_1024", 1024, 0);
}

criterion_group!(benches, basin);
criterion_main!(benches);
