//! The world's contracts (docs/design/architecture.md, "The world: a chunk is a pure
//! function" and "Placement across borders"): a chunk is a pure function of
//! (scene, seed, coordinate) whatever the visit order, thread count or cache;
//! placement keeps its min distances across chunk borders; chunks meet without
//! seams; residency and batches stay bounded on a long flight.

use std::collections::BTreeMap;
use std::sync::Arc;

use sylva::Scene;
use sylva::runtime::App;
use sylva::runtime::extract::{GrassBatch, TerrainBatch, TreeInstances, TreeModels};
use sylva::runtime::glam::{Vec2, Vec3};
use sylva::runtime::stream::Viewer;
use sylva::systems::ecology::Layer;
use sylva::systems::terrain::TerrainChunk;
use sylva::systems::world::{
    TreeInstance, WorldBatch, WorldGen, WorldParams, WorldState, WorldStreamer, expand_blades, packed,
};

/// The bundled world with small chunks, so tests stay quick.
fn world(chunk_cells: u32) -> (WorldParams, u64) {
    let scene = Scene::world();
    let mut w = scene.world.expect("the world scene has a world");
    w.chunk_cells = chunk_cells;
    w.load_radius = 2.5 * w.chunk_size();
    w.evict_radius = 3.5 * w.chunk_size();
    w.near_radius = None;
    // Domains of up to 4 km as in the scene, so the coast still fits a domain.
    if let Some(b) = &mut w.terrain.basins {
        b.domain_chunks = (4096 / chunk_cells).min(64);
    }
    (w, scene.seed)
}

/// The chunk at the middle of the longest river of basin domain (0, 0): land.
fn by_a_river(g: &WorldGen) -> [i32; 2] {
    let domain = g.domains().expect("the world has basins").domain([0, 0]);
    let river = domain
        .rivers
        .iter()
        .max_by_key(|r| r.points.len())
        .expect("the domain has rivers");
    let mid = river.points[river.points.len() / 2] / g.params().chunk_size();
    [mid.x.floor() as i32, mid.y.floor() as i32]
}

fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap())
}

#[test]
fn a_chunk_is_the_same_in_any_visit_order_thread_count_and_cache_state() {
    let (params, seed) = world(64);
    let coords: Vec<[i32; 2]> = (-1..=1).flat_map(|z| (-1..=1).map(move |x| [x, z])).collect();
    let reference: BTreeMap<[i32; 2], u64> = {
        let g = WorldGen::new(params.clone(), seed);
        coords.iter().map(|&c| (c, g.chunk(c).hash)).collect()
    };
    for threads in [1, 2, 7] {
        // A fresh generator, the chunks in reverse order, several at once.
        let g = WorldGen::new(params.clone(), seed);
        let hashes: BTreeMap<[i32; 2], u64> = pool(threads).install(|| {
            use rayon::prelude::*;
            coords.par_iter().rev().map(|&c| (c, g.chunk(c).hash)).collect()
        });
        assert_eq!(hashes, reference, "{threads} threads");
    }
    let other = WorldGen::new(params.clone(), seed + 1);
    assert_ne!(other.chunk([0, 0]).hash, reference[&[0, 0]], "the seed matters");

    // Through the streamer: cold cache, warm cache, then every file corrupted.
    let dir = tempfile::tempdir().unwrap();
    let viewer = [Viewer {
        position: Vec3::new(32.0, 100.0, 32.0),
        forward: Vec3::X,
    }];
    let stream = |threads| {
        let mut app = App::new(Default::default()).unwrap();
        let mut w = WorldStreamer::new(&params, seed, Some(pool(threads)))
            .unwrap()
            .with_cache(dir.path())
            .unwrap();
        w.install(&mut app);
        w.settle(&mut app, &viewer, |_| {});
        (w.hashes().clone(), w.stats().clone())
    };
    let (cold, s) = stream(2);
    assert_eq!((s.from_cache, s.cache_rejected), (0, 0));
    let (warm, s) = stream(1);
    assert_eq!(s.generated, 0);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xA5;
        std::fs::write(&path, &bytes).unwrap();
    }
    let (fixed, s) = stream(7);
    assert_eq!(s.cache_rejected, s.generated);
    assert!(s.cache_rejected >= 9, "{s:?}");
    assert_eq!(cold, warm);
    assert_eq!(cold, fixed);
    for (c, h) in &reference {
        assert_eq!(cold[c], *h, "chunk {c:?}");
    }
}

#[test]
fn trees_keep_their_min_distance_and_blades_their_cells_across_chunk_borders() {
    for seed in 0..4u64 {
        let (mut params, _) = world(48);
        for t in &mut params.trees {
            // Every slope and material: the test is about distances, not where species grow.
            t.placement.rules = Default::default();
        }
        let g = WorldGen::new(params.clone(), seed);
        // A 3 × 3 block on land (by the longest river) somewhere else for every seed.
        let at = by_a_river(&g).map(|c| c - 1);
        let block: Vec<_> = (0..3)
            .flat_map(|z| (0..3).map(move |x| [at[0] + x, at[1] + z]))
            .map(|c| g.chunk(c))
            .collect();
        // Canopy and understory space themselves apart; a shrub may stand under a tree.
        let trees: Vec<(Vec2, f32, [i32; 2], bool)> = block
            .iter()
            .flat_map(|c| {
                c.trees.iter().map(|t| {
                    let d = params.trees[usize::from(t.species)].placement.min_distance;
                    let canopy = g.biomes().layer_of(usize::from(t.species)) == Some(Layer::Canopy);
                    (Vec2::new(t.position.x, t.position.z), d, c.coord, canopy)
                })
            })
            .collect();
        let mut across = 0;
        for (i, a) in trees.iter().enumerate() {
            for b in trees[i + 1..].iter().filter(|b| b.3 == a.3) {
                let d = a.0.distance(b.0);
                assert!(
                    d >= a.1.max(b.1) * 0.999,
                    "seed {seed}: trees {d} m apart in {:?} and {:?}",
                    a.2,
                    b.2
                );
                across += usize::from(a.2 != b.2 && d < 2.0 * a.1.max(b.1));
            }
        }
        assert!(across > 0, "seed {seed}: no close pair across a border was tested");
        // Each chunk expands the blades of its own cells only: none falls outside it.
        let size = params.chunk_size();
        let mut blades = 0;
        for c in &block {
            let mut out = Vec::new();
            let n = params.chunk_cells;
            expand_blades(c, &params.grass.species, [0, 0, n, n], 1.0, &mut out);
            let lo = Vec2::new(c.coord[0] as f32, c.coord[1] as f32) * size;
            for b in &out {
                let at = Vec2::new(b.root.x, b.root.z) - lo;
                // At the far edge f32 may round a root onto the border itself.
                assert!(
                    at.min_element() >= 0.0 && at.max_element() <= size,
                    "seed {seed}: blade {at} of {:?}",
                    c.coord
                );
            }
            blades += out.len();
        }
        assert!(blades > 1000, "seed {seed}: {blades} blades");
    }
}

#[test]
fn chunks_meet_without_seams_and_match_the_generator() {
    let (params, seed) = world(64);
    let g = WorldGen::new(params.clone(), seed);
    let (a, b, c) = (g.chunk([0, 0]), g.chunk([1, 0]), g.chunk([0, 1]));
    let r = a.surface.resolution as usize;
    for k in 0..r {
        // The last column of (0, 0) is the first of (1, 0); its last row the first of (0, 1).
        assert_eq!(a.surface.height[k * r + r - 1], b.surface.height[k * r]);
        assert_eq!(a.surface.height[(r - 1) * r + k], c.surface.height[k]);
        assert_eq!(a.surface.material[k * r + r - 1], b.surface.material[k * r]);
    }
    let n = params.chunk_cells;
    let direct: TerrainChunk = g.region([i64::from(n), 0], n).terrain.crop(0, 0, n, [1, 0]).unwrap();
    assert_eq!(
        b.terrain,
        packed::settle_terrain(&direct),
        "the apron does not change the chunk's own columns"
    );
}

/// Every drawn tree is a placed tree of a resident chunk (an entity), an instance of one of
/// the world's models.
fn assert_instances_are_placed_trees(app: &App, models: &TreeModels, trees: &TreeInstances) {
    let placed: std::collections::HashSet<[u32; 3]> = (app.world.entities.query::<&TreeInstance>().iter())
        .map(|t| t.position.to_array().map(f32::to_bits))
        .collect();
    for t in 0..trees.len() {
        assert!((trees.model[t] as usize) < models.models.len(), "tree {t}");
        assert!(
            placed.contains(&trees.position[t].to_array().map(f32::to_bits)),
            "tree {t}"
        );
        assert!(trees.scale[t] > 0.0);
    }
}

#[test]
fn residency_and_batches_stay_bounded_on_a_long_flight() {
    let (params, seed) = world(32);
    let mut app = App::new(Default::default()).unwrap();
    let mut w = WorldStreamer::new(&params, seed, Some(pool(1))).unwrap();
    w.install(&mut app);
    let size = params.chunk_size();
    // Chunks whose square lies within the evict radius: a bound on what may be resident.
    let bound = ((2.0 * params.evict_radius / size).ceil() as usize + 2).pow(2);
    let mut most_slots = 0;
    let mut first_ring = None;
    for step in 0..40 {
        let viewer = [Viewer {
            position: Vec3::new(step as f32 * size * 0.75, 100.0, step as f32 * size * 0.3),
            forward: Vec3::X,
        }];
        w.settle(&mut app, &viewer, |_| {});
        let res = &app.world.resources;
        let resident = res.get::<WorldState>().unwrap().resident();
        assert!(resident <= bound, "{resident} resident chunks");
        // The first ring, around a chunk corner, is the most the load radius holds: the
        // flight holds as many, not the chunks it left behind within the evict radius too.
        let first = *first_ring.get_or_insert(resident);
        assert!(
            resident <= first && resident as f64 >= 0.95 * first as f64,
            "step {step}: {resident} resident chunks, {first} in the first ring"
        );
        assert_eq!(res.get::<TerrainBatch>().unwrap().patches.len(), resident);
        let batch = res.get::<WorldBatch>().unwrap();
        let slots = batch.trees.len();
        assert!(slots <= bound, "{slots} tree slots");
        if step % 10 == 0 {
            for trees in &batch.trees {
                assert_instances_are_placed_trees(&app, &batch.models, trees);
            }
        }
        drop(batch);
        most_slots = most_slots.max(slots);
        let terrain_entities = app.world.entities.query::<&TerrainChunk>().iter().count();
        assert_eq!(terrain_entities, resident);
    }
    let s = w.stats();
    assert!(s.evicted > 100, "{s:?}");
    assert_eq!(
        s.installed - s.evicted,
        app.world.resources.get::<WorldState>().unwrap().resident() as u64
    );
    // Blade runs are reused: the layer holds at most the resident blades plus the gaps left by evictions.
    let grass = app.world.resources.get::<GrassBatch>().unwrap();
    let live: usize = grass.layers[0].scale.iter().filter(|&&s| s > 0.0).count();
    assert!(
        grass.layers[0].len() <= 3 * live.max(1000),
        "{} slots for {live} blades",
        grass.layers[0].len()
    );
    assert!(most_slots > 0);
}

/// Share of the land nodes of a 2 km square of the lattice in a comb: a valley between two
/// ridges one node away, along x or along z (each curving by more than a metre).
fn combed_nodes(params: &WorldParams, seed: u64) -> f64 {
    let g = WorldGen::new(params.clone(), seed);
    let domains = g.domains().expect("the world has basins");
    let sea = params.terrain.basins.as_ref().unwrap().sea_level;
    let n = 128;
    let (h, _) = domains.heights([-64, -64], n, n);
    // Second differences along x and z: positive in a valley, negative on a ridge.
    let curve = |i: usize, step: usize| h[i - step] + h[i + step] - 2.0 * h[i];
    let (mut land, mut combs) = (0u32, 0u32);
    for z in 2..n - 2 {
        for x in 2..n - 2 {
            let i = z * n + x;
            if h[i] < sea + 1.0 {
                continue;
            }
            land += 1;
            let comb =
                |step: usize| curve(i, step) > 1.0 && curve(i - step, step) < -1.0 && curve(i + step, step) < -1.0;
            if comb(1) || comb(n) {
                combs += 1;
            }
        }
    }
    assert!(land > 4000, "{land} land nodes");
    f64::from(combs) / f64::from(land)
}

#[test]
fn hillslopes_keep_the_lattice_from_cutting_a_comb_of_valleys() {
    let (params, seed) = world(256);
    let mut bare = params.clone();
    bare.terrain.basins.as_mut().unwrap().solver.diffusion = 0.0;
    let (with, without) = (combed_nodes(&params, seed), combed_nodes(&bare, seed));
    assert!(
        with < 0.35 * without && with < 0.1,
        "combed: {with:.4} of the land with hillslopes, {without:.4} without"
    );
}

#[test]
fn understory_species_are_drawn_as_shrubs() {
    let (params, seed) = world(64);
    let content = sylva::systems::world::grow_content(&params, seed).unwrap();
    let models = content.tree_models();
    assert_eq!(models.shrubs.len(), models.models.len());
    for (s, t) in params.trees.iter().enumerate() {
        let shrub = ["hazel", "juniper"].contains(&t.species.name.as_str());
        let first = content.model_id(s, 0).unwrap() as usize;
        assert_eq!(models.shrubs[first], shrub, "{}", t.species.name);
    }
}
