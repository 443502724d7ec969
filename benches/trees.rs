//! Tree pipeline throughput.
//!
//! `fig6_1b_pipeline`: thesis Fig. 6.1b (13,121 segments, 206,658 vertices) from
//! grammar text to mesh on one thread: parse, derive, turtle, curve reduction,
//! radii and mesh (thesis: 0.233 s on a 3.3 GHz desktop; target ≤ 5 ms). Every
//! iteration grows the whole tree again from the grammar text, through one
//! `TreeBuilder` kept across iterations, as a forest grows tree after tree: the
//! buffers are reused, nothing computed is (the first, allocating tree is in the
//! warm-up; `grow_lsystem_tree` is the same pipeline with fresh buffers).
//! `ten_million_modules`: the same grammar at n = 13 (13.55 M modules, 3.19 M
//! segments) derived in parallel and interpreted (target ≤ 1.5 s on 2 cores).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sylva::Scene;
use sylva::systems::lsystem::{DeriveOptions, LSystem, interpret};
use sylva::systems::species::TreeBuilder;

fn fig_6_1b() -> sylva::TreeScene {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig6_1b.ron");
    Scene::load(path.as_ref())
        .expect("preset loads")
        .tree
        .expect("preset has a tree")
}

fn pipeline(c: &mut Criterion) {
    let t = fig_6_1b();
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool starts");
    let mut group = c.benchmark_group("trees");
    group.throughput(Throughput::Elements(13_121));
    let mut builder = TreeBuilder::new();
    group.bench_function("fig6_1b_pipeline", |b| {
        b.iter(|| {
            one_thread.install(|| {
                let tree = builder.grow(&t.lsystem, &t.radii, &t.mesh, 1).expect("grows");
                tree.stats.vertices
            })
        })
    });
    group.finish();
}

fn ten_million(c: &mut Criterion) {
    let t = fig_6_1b();
    let system = LSystem::parse(&t.lsystem.grammar).expect("grammar parses");
    let options = DeriveOptions {
        module_limit: 50_000_000,
        ..t.lsystem.derive_options(1)
    };
    let turtle = t.lsystem.turtle_options();
    let two_threads = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool starts");
    let mut group = c.benchmark_group("trees");
    group.sample_size(10);
    group.throughput(Throughput::Elements(13_551_739));
    group.bench_function("ten_million_modules", |b| {
        b.iter(|| {
            two_threads.install(|| {
                let word = system.derive(13, &options).expect("derives");
                interpret(&word, &turtle).expect("draws").graph.len()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, pipeline, ten_million);
criterion_main!(benches);
