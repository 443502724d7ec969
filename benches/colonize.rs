//! Space colonization growth time (attractor sampling + trunk + growth to termination).
//!
//! `fig5_11a` / `fig5_11b`: the thesis Fig. 5.11 presets (N = 5000 in a sphere of r = 1000,
//! N_I = 1000, d_k = 100, d_i = 250, D = 20, T = (0, 0, 0.2), max_NG = 2 / 1000; thesis 1.12 s /
//! 6.08 s; target ≤ 10 ms each). `uniform_100k`: the same growth parameters on 100,000
//! attractors uniform in the same sphere (target ≤ 0.28 s on 2 cores); `uniform_1m`: one million
//! (target ≤ 3.3 s). `speedup_100k/*`: the grid growth and the brute-force oracle on the same
//! 100,000 attractors with N_I = 10 (the oracle compares every attractor with every node each
//! iteration, so a full run takes about a minute; criterion would need ten). The full-run ratio
//! comes from the ignored test `oracle_equals_grid_growth_at_100k` in `systems/tests/colonize_oracle.rs`,
//! which also checks both grow the identical tree.

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use sylva::systems::colonize::oracle::grow_brute_force;
use sylva::systems::colonize::{ColonizeParams, Colonizer, Sampling, sample_regions};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Preset {
    seed: u64,
    colonize: ColonizeParams,
}

fn preset(name: &str) -> Preset {
    let path = format!("{}/scenes/thesis/{name}.ron", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("preset exists");
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(&text)
        .expect("preset parses")
}

fn grow(p: &ColonizeParams, seed: u64) -> usize {
    let mut c = Colonizer::new(p, seed).expect("valid preset");
    c.run();
    c.nodes()
}

fn fig5_11(c: &mut Criterion) {
    let mut group = c.benchmark_group("colonize");
    for name in ["fig5_11a", "fig5_11b"] {
        let p = preset(name);
        group.bench_function(name, |b| b.iter(|| grow(&p.colonize, p.seed)));
    }
    group.finish();
}

/// The Fig. 5.11a preset with `count` attractors uniform in its sphere.
fn uniform(count: u32) -> Preset {
    let mut p = preset("fig5_11a");
    p.colonize.count = count;
    p.colonize.regions[0].sampling = Sampling::Uniform;
    p
}

fn uniform_large(c: &mut Criterion) {
    let mut group = c.benchmark_group("colonize");
    group.sample_size(10);
    for (name, count) in [("uniform_100k", 100_000), ("uniform_1m", 1_000_000)] {
        let p = uniform(count);
        group.bench_function(name, |b| b.iter(|| grow(&p.colonize, p.seed)));
    }
    group.finish();
}

fn speedup_100k(c: &mut Criterion) {
    let mut p = uniform(100_000);
    p.colonize.iterations = 10;
    let points = sample_regions(&p.colonize.regions, &[], p.colonize.count, p.seed).expect("valid preset");
    let targets = [p.colonize.regions[0].shape.centre_and_reach()];
    let mut group = c.benchmark_group("speedup_100k");
    group.sample_size(10);
    group.bench_function("grid", |b| {
        b.iter(|| {
            let mut c = Colonizer::with_attractors(&p.colonize, points.clone(), &targets).expect("valid preset");
            c.run();
            c.nodes()
        })
    });
    group.bench_function("oracle", |b| {
        b.iter(|| grow_brute_force(&p.colonize, &points, &targets).iterations)
    });
    group.finish();
}

criterion_group!(benches, fig5_11, uniform_large, speedup_100k);
criterion_main!(benches);
