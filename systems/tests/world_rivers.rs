//! Two-scale terrain (docs/design/architecture.md, "Two-scale terrain"): chunks eroded
//! with an apron equal a monolithic run bit for bit, and the basins' rivers
//! continue across chunk borders.

use rayon::prelude::*;
use sylva_systems::terrain::basin::BasinParams;
use sylva_systems::terrain::{Fbm, GeneratorParams, LayerSpec, Material, Source, TerrainChunk, Thickness, Transport};
use sylva_systems::world::{ChunkErosion, RiverPath, WorldBasins, WorldGen, WorldParams, WorldTerrain, packed, stitch};

const SEED: u64 = 11;

/// A small world: chunks of 64 cells of 4 m, domains of 8 chunks on a 32 m lattice.
fn world(transport: Transport) -> WorldParams {
    let mut erosion = ChunkErosion {
        iterations: 5,
        ..ChunkErosion::default()
    };
    erosion.hydraulic.transport = transport;
    WorldParams {
        chunk_cells: 64,
        cell_size: 4.0,
        terrain: WorldTerrain {
            generator: GeneratorParams {
                height: Some(Source::Fbm(Fbm {
                    frequency: 0.05,
                    amplitude: 2.0,
                    octaves: 3,
                    ..Fbm::default()
                })),
                layers: vec![
                    LayerSpec {
                        material: Material::Granite,
                        thickness: Thickness::Share(0.9),
                    },
                    LayerSpec {
                        material: Material::Regolith,
                        thickness: Thickness::Share(0.1),
                    },
                ],
            },
            max_layers: 4,
            basins: Some(WorldBasins {
                domain_chunks: 8,
                node_spacing: 32.0,
                coast: 300.0,
                coast_noise: 150.0,
                river_area: 0.05,
                solver: BasinParams {
                    steps: 120,
                    ..BasinParams::default()
                },
                ..WorldBasins::default()
            }),
            erosion: Some(erosion),
        },
        ..WorldParams::default()
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
}

/// The rivers of domain (0, 0), longest first.
fn rivers(g: &WorldGen) -> Vec<RiverPath> {
    let mut r = g.domains().expect("the world has basins").domain([0, 0]).rivers.clone();
    r.sort_by_key(|r| std::cmp::Reverse(r.points.len()));
    r
}

/// The chunk holding the middle of the longest river of domain (0, 0).
fn on_a_river(g: &WorldGen) -> [i32; 2] {
    let r = &rivers(g)[0];
    let mid = r.points[r.points.len() / 2] / g.params().chunk_size();
    [mid.x.floor() as i32, mid.y.floor() as i32]
}

/// 3 × 3 chunks generated one by one, in two orders on 1 and 2 threads, equal
/// the same cells of one monolithic region eroded in one piece, for every
/// transport: each chunk's own region holds the same columns, water, sediment
/// and flows bit for bit, and the stored chunk holds those columns as the store
/// keeps them (docs/design/chunk-store.md).
#[test]
fn chunks_equal_a_monolithic_run_bit_for_bit() {
    for transport in [Transport::Flux, Transport::ThesisFlux, Transport::SemiLagrangian] {
        let g = WorldGen::new(world(transport), SEED);
        let centre = on_a_river(&g);
        let n = g.params().chunk_cells;
        let first = [centre[0] - 1, centre[1] - 1];
        let whole = g.region(first.map(|c| i64::from(c) * i64::from(n)), 3 * n);
        let coords: Vec<[i32; 2]> = (0..3)
            .flat_map(|z| (0..3).map(move |x| [first[0] + x, first[1] + z]))
            .collect();
        let expected: Vec<TerrainChunk> = coords
            .iter()
            .map(|c| {
                let local = [(c[0] - first[0]) as u32 * n, (c[1] - first[1]) as u32 * n];
                whole.terrain.crop(local[0], local[1], n, *c).unwrap()
            })
            .collect();
        assert!(
            expected.iter().any(|c| c.water().iter().any(|&w| w > 0.0)),
            "{transport:?}: the erosion ran"
        );
        for (threads, reversed) in [(1, false), (2, true)] {
            let g = WorldGen::new(world(transport), SEED);
            let mut order = coords.clone();
            if reversed {
                order.reverse();
            }
            let got: Vec<([i32; 2], TerrainChunk, TerrainChunk)> = pool(threads).install(|| {
                order
                    .par_iter()
                    .map(|&c| {
                        let origin = c.map(|c| i64::from(c) * i64::from(n));
                        let own = g.region(origin, n).terrain.crop(0, 0, n, c).unwrap();
                        (c, own, g.chunk(c).terrain)
                    })
                    .collect()
            });
            for (c, own, stored) in got {
                let k = coords.iter().position(|&x| x == c).unwrap();
                assert!(
                    own == expected[k],
                    "{transport:?}: region of {c:?} on {threads} threads"
                );
                assert!(
                    stored == packed::settle_terrain(&expected[k]),
                    "{transport:?}: stored chunk {c:?} on {threads} threads"
                );
            }
        }
    }
}

/// Over 8 × 8 chunks, every river crossing a chunk border is found on both
/// sides within a cell, with the same drainage area within 1 %.
#[test]
fn rivers_continue_across_chunk_borders() {
    let g = WorldGen::new(world(Transport::Flux), SEED);
    let c = on_a_river(&g);
    let s = stitch(&g, [c[0] - 4, c[1] - 4], [c[0] + 3, c[1] + 3], || {}).unwrap();
    assert_eq!(s.report.border_mismatches, 0);
    assert!(
        s.report.border_crossings >= 4,
        "only {} crossings",
        s.report.border_crossings
    );
    assert_eq!(s.report.chunks, 64);
    assert!(
        s.report.river_depression_max <= 1.0,
        "a closed depression {} m deep on a river",
        s.report.river_depression_max
    );
    let d = s.report.drainage.expect("the map drains");
    assert!(d.largest_area > 0.2e6, "largest drainage area {} m²", d.largest_area);
}

/// A river's water surface descends strictly to its mouth, which is the sea
/// (the domain's fixed base level) or a point of a larger river.
#[test]
fn river_beds_descend_to_an_outlet() {
    let g = WorldGen::new(world(Transport::Flux), SEED);
    let basins = g.params().terrain.basins.clone().unwrap();
    let all = rivers(&g);
    assert!(all.len() >= 5, "{} rivers", all.len());
    for r in &all {
        assert!(r.level.windows(2).all(|w| w[1] < w[0]), "a river rises");
        let mouth = *r.points.last().unwrap();
        let to_sea = *r.level.last().unwrap() == basins.sea_floor;
        let joins = all.iter().any(|o| {
            !std::ptr::eq(o, r)
                && o.points.len() > r.points.len().min(2)
                && o.points.iter().any(|p| p.distance(mouth) <= basins.node_spacing)
        });
        assert!(to_sea || joins, "a river ends at {mouth} on land");
    }
}

/// The chunk on a river holds water in its channel and lists where the
/// river crosses its border.
#[test]
fn chunks_hold_river_water() {
    let g = WorldGen::new(world(Transport::Flux), SEED);
    let chunk = g.chunk(on_a_river(&g));
    let wet = chunk.surface.water.iter().filter(|&&d| d > 0.0).count();
    assert!(wet > 0, "no water in the river's chunk");
    assert!(!chunk.rivers.is_empty());
}
