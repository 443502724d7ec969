//! Terrain kernels at the thesis's test size, 512² with 4 layers, on 2 threads.
//!
//! Targets (issue 5): hydraulic ≤ 1.5 ms per iteration, thermal ≥ 500
//! iterations/s, aging ≥ 1000 checks/s, 4096² × 4 layers generated in ≤ 3 s.
//! `memcpy_64mib` measures this machine's copy bandwidth in the same run, so
//! each kernel can be read as a fraction of it.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sylva::Scene;
use sylva::systems::terrain::{Eroder, ScheduleParams, TerrainBalance, TerrainParams};

fn landscape() -> TerrainParams {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/landscape1.ron");
    let mut p = Scene::load(path.as_ref())
        .expect("preset loads")
        .terrain
        .expect("preset has terrain");
    p.max_layers = 4;
    p
}

fn kernels(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool starts");
    let base = landscape();
    let mut group = c.benchmark_group("terrain_512");
    group.throughput(Throughput::Elements(u64::from(base.size).pow(2)));
    let only = |water_every, thermal_every, aging_every| TerrainParams {
        schedule: ScheduleParams {
            water_every,
            thermal_every,
            aging_every,
        },
        ..base.clone()
    };
    for (name, params) in [
        ("hydraulic", only(1, 0, 0)),
        ("thermal", only(0, 1, 0)),
        ("aging", only(0, 0, 1)),
    ] {
        let mut chunk = pool
            .install(|| params.generator.generate(1, [0, 0], params.size, params.max_layers))
            .unwrap();
        let mut eroder = Eroder::default();
        let mut books = TerrainBalance::default();
        let mut iteration = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                iteration += 1;
                pool.install(|| eroder.step(&mut chunk, &params, 1, iteration, &mut books));
            })
        });
    }
    group.finish();
}

fn generation(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool starts");
    let params = landscape();
    let mut group = c.benchmark_group("terrain_generate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(4096 * 4096));
    group.bench_function("multilayer_4096", |b| {
        b.iter(|| pool.install(|| params.generator.generate(1, [0, 0], 4096, 4).map(|c| c.size())))
    });
    group.finish();
}

fn bandwidth(c: &mut Criterion) {
    const BYTES: usize = 64 << 20;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool starts");
    let src = vec![1u8; BYTES];
    let mut dst = vec![0u8; BYTES];
    let mut group = c.benchmark_group("machine");
    // Read plus write, as the kernels' traffic is counted.
    group.throughput(Throughput::Bytes(2 * BYTES as u64));
    group.bench_function("memcpy_64mib", |b| {
        b.iter(|| {
            pool.install(|| {
                use rayon::prelude::*;
                dst.par_chunks_mut(1 << 20)
                    .zip(src.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            })
        })
    });
    group.finish();
}

criterion_group!(benches, kernels, generation, bandwidth);
criterion_main!(benches);
