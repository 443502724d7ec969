//! The world's terrain, on the bundled world scene's own settings, one thread
//! (each chunk is generated on one pool thread while others make other chunks).
//!
//! `world/domain`: one basin domain solved from scratch (partition, uplift,
//! stream-power erosion, rivers), target ≤ 1 s.
//! `world/chunk_terrain`: one chunk's ground with its domains solved: the
//! region with its erosion apron generated, shaped by the basins, eroded from
//! its fresh state and cut out, target ≤ 100 ms.
//! `world/chunk_terrain_no_apron`: the same square without the apron and the
//! erosion, to read the apron's and the erosion's share.
//! `world/chunk`: the whole chunk (terrain with placement's apron, trees, grass, hash).

use criterion::{Criterion, criterion_group, criterion_main};
use sylva::Scene;
use sylva::systems::world::{Domains, WorldGen};

fn world(c: &mut Criterion) {
    let scene = Scene::world();
    let params = scene.world.expect("the world scene has a world");
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut g = c.benchmark_group("world");
    g.sample_size(10);
    let basins = params.terrain.basins.clone().expect("the world has basins");
    g.bench_function("domain", |b| {
        b.iter(|| {
            let domains = Domains::new(basins.clone(), params.chunk_size(), scene.seed, 0);
            one.install(|| domains.domain([0, 0]).rivers.len())
        })
    });
    let world_gen = WorldGen::new(params.clone(), scene.seed);
    let n = params.chunk_cells;
    // A chunk on the island of domain (0, 0), its domains solved once beforehand.
    let river = world_gen.domains().unwrap().domain([0, 0]).rivers[0].points[0] / params.chunk_size();
    let coord = [river.x.floor() as i32, river.y.floor() as i32];
    let origin = coord.map(|c| i64::from(c) * i64::from(n));
    one.install(|| world_gen.chunk(coord));
    g.bench_function("chunk_terrain", |b| {
        b.iter(|| one.install(|| world_gen.region(origin, n)))
    });
    let mut bare = params.clone();
    bare.terrain.erosion = None;
    let bare = WorldGen::new(bare, scene.seed);
    one.install(|| bare.chunk(coord));
    g.bench_function("chunk_terrain_no_apron", |b| {
        b.iter(|| one.install(|| bare.region(origin, n)))
    });
    g.bench_function("chunk", |b| b.iter(|| one.install(|| world_gen.chunk(coord))));
    g.finish();
}

criterion_group!(benches, world);
criterion_main!(benches);
