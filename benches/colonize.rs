//! Space colonization growth time (attractor sampling + trunk + growth to termination).
//!
//! `fig5_11a` / `fig5_11b`: the thesis Fig. 5.11 presets (N = 5000 in a sphere of r = 1000,
//! N_I = 1000, d_k = 100, d_i = 250, D = 20, T = (0, 0, 0.2), max_NG = 2 / 1000; thesis 1.12 s /
//! 6.08 s; target ≤ 10 ms each). `uniform_100k`: the same growth parameters on 100,000
//! attractors uniform in the same sphere (target ≤ 0.28 s on 2 cores).

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use sylva::systems::colonize::{ColonizeParams, Colonizer, Sampling};

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

fn uniform_100k(c: &mut Criterion) {
    let mut p = preset("fig5_11a");
    p.colonize.count = 100_000;
    p.colonize.regions[0].sampling = Sampling::Uniform;
    let mut group = c.benchmark_group("colonize");
    group.sample_size(10);
    group.bench_function("uniform_100k", |b| b.iter(|| grow(&p.colonize, p.seed)));
    group.finish();
}

criterion_group!(benches, fig5_11, uniform_100k);
criterion_main!(benches);
