//! Embedding in an engine with its own renderer (docs/embedding.md): the mesh kit's meshes
//! meet across chunk borders and hold their bounds, the same on any thread count; a host
//! chooses the parts a chunk carries, runs its own work on the pool, and steps streaming by its
//! own clock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sylva::Scene;
use sylva::runtime::glam::Vec3;
use sylva::runtime::stream::{StreamEvent, Viewer};
use sylva::systems::mesh_kit::{GROUND_LEVELS, Mesh, MeshKit, TREE_LEVELS};
use sylva::systems::world::{ChunkParts, HookError, ReadyChunk, WorldError, WorldGen, WorldParams, WorldStreamer};

/// The bundled world with chunks of 64 cells and a load radius of a chunk and a bit, so a
/// settled ring is a few chunks.
fn world() -> (WorldParams, u64) {
    let scene = Scene::world();
    let mut w = scene.world.expect("the world scene has a world");
    w.chunk_cells = 64;
    w.load_radius = 1.2 * w.chunk_size();
    w.evict_radius = 2.0 * w.chunk_size();
    w.near_radius = None;
    if let Some(b) = &mut w.terrain.basins {
        b.domain_chunks = 64;
    }
    (w, scene.seed)
}

fn pool(threads: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap())
}

/// The chunk at the middle of the longest river of basin domain (0, 0): land, with water.
fn by_a_river(g: &WorldGen) -> [i32; 2] {
    let domain = g.domains().expect("the world has basins").domain([0, 0]);
    let river = domain.rivers.iter().max_by_key(|r| r.points.len()).expect("rivers");
    let mid = river.points[river.points.len() / 2] / g.params().chunk_size();
    [mid.x.floor() as i32, mid.y.floor() as i32]
}

/// A viewer standing over chunk `c`.
fn over(g: &WorldGen, c: [i32; 2]) -> Viewer {
    let s = g.params().chunk_size();
    Viewer {
        position: Vec3::new((c[0] as f32 + 0.5) * s, 200.0, (c[1] as f32 + 0.5) * s),
        forward: Vec3::X,
    }
}

/// The vertex of grid column `x`, row `z` of a ground mesh of `k` vertices a side.
fn grid(m: &Mesh, k: usize, x: usize, z: usize) -> (Vec3, Vec3) {
    let i = z * k + x;
    (m.positions[i], m.normals[i])
}

#[test]
fn neighbouring_ground_meshes_share_border_vertices_and_normals_bit_for_bit() {
    let (params, seed) = world();
    let g = WorldGen::new(params.clone(), seed);
    let world = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let kit = world.mesh_kit();
    let c = by_a_river(&g);
    let (here, east, south) = (g.chunk(c), g.chunk([c[0] + 1, c[1]]), g.chunk([c[0], c[1] + 1]));
    let n = params.chunk_cells as usize;
    let r = n + 1;
    // The ring east of `here` is `east`'s second column: the neighbour's own samples.
    let ring_east = &here.surface.ring[2 * (r + 2) + r..];
    let second: Vec<f32> = (0..r).map(|z| east.surface.height[z * r + 1]).collect();
    assert_eq!(
        ring_east.iter().map(|h| h.to_bits()).collect::<Vec<_>>(),
        second.iter().map(|h| h.to_bits()).collect::<Vec<_>>()
    );
    let mut slopes = 0;
    for level in 0..GROUND_LEVELS {
        let k = n / (1 << level) + 1;
        let (a, b, s) = (
            kit.ground(&here, level).unwrap(),
            kit.ground(&east, level).unwrap(),
            kit.ground(&south, level).unwrap(),
        );
        assert_eq!(
            a.triangle_count(),
            2 * (k - 1) * (k - 1) + 4 * 2 * (k - 1),
            "grid and four skirts"
        );
        for j in 0..k {
            let (pa, na) = grid(&a, k, k - 1, j);
            let (pb, nb) = grid(&b, k, 0, j);
            assert_eq!(
                (pa.to_array().map(f32::to_bits), na.to_array().map(f32::to_bits)),
                (pb.to_array().map(f32::to_bits), nb.to_array().map(f32::to_bits)),
                "east border, row {j}, level {level}"
            );
            let (pa, na) = grid(&a, k, j, k - 1);
            let (ps, ns) = grid(&s, k, j, 0);
            assert_eq!((pa, na), (ps, ns), "south border, column {j}, level {level}");
            slopes += usize::from(na.y < 0.999);
            assert!((na.length() - 1.0).abs() < 1e-5);
        }
        // Every triangle of the grid faces up.
        for t in a.indices[..6 * (k - 1) * (k - 1)].chunks_exact(3) {
            let [p, q, r] = [t[0], t[1], t[2]].map(|i| a.positions[i as usize]);
            assert!((q - p).cross(r - p).y > 0.0);
        }
    }
    assert!(
        slopes > 0,
        "the border crosses sloping ground, so the normals are a test"
    );
    assert!(
        kit.ground(&here, GROUND_LEVELS).is_err(),
        "a level beyond the last is an error"
    );
    let water = kit.water(&here).unwrap();
    assert!(!water.is_empty(), "the chunk by the river has water");
    for (p, i) in water.positions.iter().zip(0..) {
        assert!(p.y.is_finite(), "vertex {i}");
    }
}

#[test]
fn a_variant_mesh_holds_every_vertex_in_its_bounds_and_thins_with_its_levels() {
    let (params, seed) = world();
    let world = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let kit = world.mesh_kit();
    assert!(kit.tree_count() > 0);
    for m in 0..kit.tree_count() {
        let t = kit.tree(m).unwrap();
        assert_eq!(t.levels.len(), TREE_LEVELS);
        assert_eq!(kit.tree_bounds(m).unwrap(), t.bounds);
        for (l, level) in t.levels.iter().enumerate() {
            for p in level.bark.positions.iter().chain(&level.leaves.positions) {
                assert!(t.bounds.contains(*p), "model {m} level {l}: {p} outside {:?}", t.bounds);
            }
            for n in level.bark.normals.iter().chain(&level.leaves.normals) {
                assert!((n.length() - 1.0).abs() < 1e-4, "model {m} level {l}");
            }
            assert!(
                level
                    .bark
                    .indices
                    .iter()
                    .all(|&i| (i as usize) < level.bark.vertex_count())
            );
            assert!(
                level
                    .leaves
                    .indices
                    .iter()
                    .all(|&i| (i as usize) < level.leaves.vertex_count())
            );
        }
        let tris: Vec<usize> = t
            .levels
            .iter()
            .map(|l| l.bark.triangle_count() + l.leaves.triangle_count())
            .collect();
        assert!(tris.windows(2).all(|w| w[0] > w[1]), "model {m}: {tris:?}");
        assert!(!t.levels[0].leaves.is_empty() && t.height > 0.0, "model {m}");
    }
    assert!(kit.tree(kit.tree_count()).is_err());
}

/// Every chunk of the settled ring around `viewer`, with its meshes, on `threads` threads.
fn meshes_on(threads: usize, params: &WorldParams, seed: u64, viewer: Viewer) -> BTreeMap<[i32; 2], (Vec<Mesh>, Mesh)> {
    let mut world = WorldStreamer::new(params, seed, Some(pool(threads)))
        .unwrap()
        .with_parts(ChunkParts::MESHES)
        .unwrap();
    let mut out = BTreeMap::new();
    world
        .settle_with(&[viewer], |event| {
            if let StreamEvent::Ready { coord, payload } = event {
                let m = payload.meshes.expect("meshes were asked for");
                out.insert(coord, (m.ground, m.water));
            }
        })
        .unwrap();
    out
}

#[test]
fn kit_meshes_are_the_same_on_1_and_7_threads() {
    let (params, seed) = world();
    let g = WorldGen::new(params.clone(), seed);
    let viewer = over(&g, by_a_river(&g));
    let one = meshes_on(1, &params, seed, viewer);
    let seven = meshes_on(7, &params, seed, viewer);
    assert!(one.len() >= 4, "{} chunks", one.len());
    assert_eq!(one, seven);
    let trees = |threads| {
        let world = WorldStreamer::new(&params, seed, Some(pool(threads))).unwrap();
        let kit: MeshKit = world.mesh_kit();
        pool(threads).install(|| (0..kit.tree_count()).map(|m| kit.tree(m).unwrap()).collect::<Vec<_>>())
    };
    assert_eq!(trees(1), trees(7));
}

#[test]
fn a_host_without_render_batches_never_builds_them_and_its_hook_runs_on_the_pool_once_per_chunk() {
    let (params, seed) = world();
    let g = WorldGen::new(params.clone(), seed);
    let c = by_a_river(&g);
    let main = std::thread::current().id();
    let mut world = WorldStreamer::new(&params, seed, Some(pool(2)))
        .unwrap()
        .with_parts(ChunkParts::MESHES)
        .unwrap()
        .with_hook(move |ready: &ReadyChunk, _: &MeshKit| {
            if ready.payload.coord == c {
                panic!("the host's hook fails on {c:?}");
            }
            (
                std::thread::current().id(),
                ready.payload.coord,
                ready.meshes.as_ref().map(|m| m.ground[0].triangle_count()),
            )
        })
        .unwrap();
    let mut seen = BTreeSet::new();
    let mut failed = Vec::new();
    world
        .settle_with(&[over(&g, c)], |event| {
            let StreamEvent::Ready { coord, mut payload } = event else {
                return;
            };
            assert!(payload.trees.is_empty() && payload.grass.is_empty() && payload.patch.height.is_empty());
            match payload.take_hosted::<(std::thread::ThreadId, [i32; 2], Option<usize>)>() {
                Some(Ok((thread, at, triangles))) => {
                    assert_ne!(thread, main, "the hook runs on the generation pool");
                    assert_eq!(at, coord);
                    assert!(triangles.is_some_and(|t| t > 0), "the hook sees the meshes");
                    assert!(seen.insert(coord), "once per chunk");
                }
                Some(Err(e)) => failed.push(e),
                None => panic!("no hook output for {coord:?}"),
            }
            assert!(payload.take_hosted::<u8>().is_none(), "taken once");
        })
        .unwrap();
    assert!(
        matches!(failed.as_slice(), [HookError::Panicked { coord, message }] if *coord == c && message.contains("fails")),
        "{failed:?}"
    );
    let p = world.prepared();
    let chunks = seen.len() as u64 + 1;
    assert_eq!(p.render.load(Ordering::Relaxed), 0, "no render batch built");
    assert_eq!(p.meshes.load(Ordering::Relaxed), chunks);
    assert_eq!(p.hooked.load(Ordering::Relaxed), chunks);
    assert_eq!(p.hook_panics.load(Ordering::Relaxed), 1);
    // The same world for Sylva's renderer builds its batches and no meshes.
    let mut world = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    world
        .settle_with(&[over(&g, c)], |event| {
            if let StreamEvent::Ready { payload, .. } = event {
                assert!(payload.meshes.is_none() && payload.hosted.is_none() && !payload.patch.height.is_empty());
            }
        })
        .unwrap();
    assert_eq!(world.prepared().render.load(Ordering::Relaxed), chunks);
    assert_eq!(world.prepared().meshes.load(Ordering::Relaxed), 0);
}

#[test]
fn stepped_streaming_gives_the_chunk_hashes_of_paced_streaming() {
    let (params, seed) = world();
    let g = WorldGen::new(params.clone(), seed);
    let c = by_a_river(&g);
    let path = [over(&g, c), over(&g, [c[0] + 2, c[1]])];
    let mut paced = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let mut stepped = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let mut steps = 0;
    for v in path {
        while !paced.is_settled(&[v]) {
            paced.update_with(&[v], |_| {});
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // Stepping by the host's clock: whole frames, however slow the machine.
        while !stepped.is_settled(&[v]) {
            stepped.step(&[v], 1.0 / 60.0, |_| {}).unwrap();
            steps += 1;
        }
    }
    assert_eq!(paced.hashes(), stepped.hashes());
    assert!(stepped.hashes().len() >= 6);
    assert!(
        steps <= stepped.hashes().len(),
        "each step hands over at least one chunk: {steps} steps"
    );
}

#[test]
fn bad_host_input_is_a_clear_error() {
    let (params, seed) = world();
    let none = ChunkParts {
        tree_instances: false,
        ground_patch: false,
        blades: false,
        meshes: false,
    };
    let e = WorldStreamer::new(&params, seed, Some(pool(1)))
        .unwrap()
        .with_parts(none)
        .err()
        .expect("refused");
    assert!(matches!(e, WorldError::NoParts), "{e}");
    assert!(e.to_string().contains("ask for nothing"));
    // Blades listed on the CPU at the bundled world's 32 per m² would be millions a chunk.
    let mut dense = params.clone();
    dense.chunk_cells = 256;
    let blades = ChunkParts { blades: true, ..none };
    let e = WorldStreamer::new(&dense, seed, Some(pool(1)))
        .unwrap()
        .with_parts(blades)
        .err()
        .expect("refused");
    assert!(matches!(e, WorldError::TooManyBlades { .. }), "{e}");
    assert!(e.to_string().contains("lower draw.blades_per_m2"), "{e}");
    dense.draw.blades_per_m2 = 2.0;
    let listed = WorldStreamer::new(&dense, seed, Some(pool(1)))
        .unwrap()
        .with_parts(blades);
    assert!(listed.is_ok(), "2 blades per m² list");
    let mut world = WorldStreamer::new(&params, seed, Some(pool(1))).unwrap();
    let v = Viewer {
        position: Vec3::ZERO,
        forward: Vec3::X,
    };
    for dt in [f64::NAN, -1.0 / 60.0, f64::INFINITY, 1e9] {
        let e = world.step(&[v], dt, |_| {}).unwrap_err();
        assert!(e.to_string().contains("finite number of seconds"), "{dt}: {e}");
    }
    world.step(&[v], 0.5, |_| {}).unwrap();
    let e = world.with_parts(ChunkParts::MESHES).err().expect("refused");
    assert!(
        matches!(e, WorldError::Started(_)) && e.to_string().contains("before the first update"),
        "{e}"
    );
}

#[test]
fn a_blade_stands_at_its_root_and_sways_in_the_wind() {
    let (params, seed) = world();
    let world = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let kit = world.mesh_kit();
    assert!(kit.grass_count() > 0);
    let root = Vec3::new(12.0, 30.0, -7.0);
    for k in 0..kit.grass_count() {
        let links = world.content().grass[k].shape.rest.len() - 1;
        let rest = kit.blade(k, root, 0.7, 1.2, None).unwrap();
        assert_eq!((rest.vertex_count(), rest.triangle_count()), (4 * links, 2 * links));
        assert!((rest.positions[0] - root).length() < 0.1 && (rest.positions[1] - root).length() < 0.1);
        // A leaning blade's rows tilt with it, so a corner may dip by half a row's width.
        let shape = &world.content().grass[k].shape;
        let half = 0.5 * 1.2 * shape.width.iter().fold(0.0f32, |a, &w| a.max(w));
        let lowest = rest.positions.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
        assert!(lowest >= root.y - half - 1e-4, "a blade at rest stands up: {lowest}");
        let top = rest.positions.iter().map(|p| p.y).fold(f32::NEG_INFINITY, f32::max);
        let tallest = shape.rest.iter().map(|r| r.y).fold(0.0f32, f32::max);
        assert!(top - root.y > 0.5 * 1.2 * tallest, "it is as tall as its shape");
        let swaying: Vec<Mesh> = (0..8)
            .map(|i| kit.blade(k, root, 0.7, 1.2, Some(i as f32 * 0.37)).unwrap())
            .collect();
        assert!(
            swaying.iter().any(|m| m.positions != rest.positions),
            "species {k} moves in the world's wind"
        );
        for m in &swaying {
            // The root row turns with the first link, about the root, which stays.
            let mid = 0.5 * (m.positions[0] + m.positions[1]);
            assert!((mid - root).length() < 1e-5, "the root never moves: {mid}");
        }
    }
    assert!(kit.blade(kit.grass_count(), root, 0.0, 1.0, None).is_err());
}

#[test]
fn a_variants_cards_show_it_from_eight_sides_and_above() {
    let (params, seed) = world();
    let world = WorldStreamer::new(&params, seed, Some(pool(2))).unwrap();
    let kit = world.mesh_kit();
    for m in 0..kit.tree_count() {
        let cards = kit.tree_cards(m, 64).unwrap();
        assert_eq!(cards.len(), sylva::systems::mesh_kit::CARD_VIEWS);
        let bounds = kit.tree_bounds(m).unwrap();
        for (k, c) in cards.iter().enumerate() {
            assert_eq!(c.rgba.len(), (c.width * c.height * 4) as usize);
            assert_eq!(c.height, 64, "model {m} view {k}");
            let alpha: Vec<u8> = c.rgba.chunks_exact(4).map(|p| p[3]).collect();
            let covered = alpha.iter().filter(|&&a| a == 255).count();
            assert!(alpha.iter().all(|&a| a == 0 || a == 255));
            assert!(
                covered > alpha.len() / 50,
                "model {m} view {k}: {covered} of {} pixels",
                alpha.len()
            );
            assert!(covered < alpha.len(), "model {m} view {k}: the background shows");
            if k < 8 {
                assert!(
                    (c.size.y - (bounds.max.y - bounds.min.y)).abs() < 1e-3,
                    "as tall as the tree"
                );
                assert!(c.from.y.abs() < 1e-6);
            }
        }
        assert_eq!(cards[8].from, Vec3::Y);
        assert_eq!(kit.tree_cards(m, 64).unwrap(), cards, "deterministic");
    }
    assert!(kit.tree_cards(kit.tree_count(), 64).is_err());
}
