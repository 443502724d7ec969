//! Live grass in the world (systems/src/world/live_grass.rs, docs/design/grass.md, "Live
//! grass in the world"): a walker's or a host's pusher makes the ground cover's blades
//! near it live; they are the blades every expansion makes, listed by cell with their
//! displacements for a renderer, the same on any thread count, and they go back to the
//! bake once the pusher is gone.

use std::collections::BTreeMap;
use std::sync::Arc;

use sylva::Scene;
use sylva::runtime::extract::{GrassBatch, LiveCells};
use sylva::runtime::glam::Vec3;
use sylva::runtime::stream::Viewer;
use sylva::runtime::{App, AppConfig};
use sylva::systems::grass::{Pusher, Walk, Walker};
use sylva::systems::world::{Blade, WorldGen, WorldLive, WorldParams, WorldStreamer, expand_blades};

/// The bundled world with 64-cell chunks, and the inner 8 m square of its grassiest chunk
/// with the most blades: the world, the chunk's blades (share 1), and the square's centre.
fn meadow() -> (WorldParams, u64, Vec<Blade>, Vec3) {
    let scene = Scene::world();
    let mut w = scene.world.expect("the world scene has a world");
    w.chunk_cells = 64;
    w.load_radius = 1.5 * w.chunk_size();
    w.evict_radius = 2.5 * w.chunk_size();
    w.near_radius = None;
    if let Some(b) = &mut w.terrain.basins {
        b.domain_chunks = 64;
    }
    let g = WorldGen::new(w.clone(), scene.seed);
    let n = w.chunk_cells;
    let chunk = (0..40)
        .map(|k| g.chunk([k % 8 - 4, k / 8 - 2]))
        .max_by_key(|c| {
            let mut blades = Vec::new();
            expand_blades(c, &w.grass.species, [0, 0, n, n], 1.0, &mut blades);
            blades.len()
        })
        .expect("chunks");
    let mut best: Option<(usize, Vec<Blade>)> = None;
    // Inner squares only, so the walks below stay on this chunk.
    for tz in 1..n / 8 - 1 {
        for tx in 1..n / 8 - 1 {
            let mut blades = Vec::new();
            let rect = [tx * 8, tz * 8, tx * 8 + 8, tz * 8 + 8];
            expand_blades(&chunk, &w.grass.species, rect, 1.0, &mut blades);
            if best.as_ref().is_none_or(|b| blades.len() > b.0) {
                best = Some((blades.len(), blades));
            }
        }
    }
    let (count, square) = best.expect("chunks");
    assert!(count > 500, "the densest 8 m square holds {count} blades");
    let centre = square.iter().map(|b| b.root).sum::<Vec3>() / count as f32;
    let mut blades = Vec::new();
    expand_blades(&chunk, &w.grass.species, [0, 0, n, n], 1.0, &mut blades);
    (w, scene.seed, blades, centre)
}

/// An app streaming `params` around `centre` on `threads` threads, settled.
fn world_app(params: &WorldParams, seed: u64, centre: Vec3, threads: usize) -> (App, WorldStreamer) {
    let mut app = App::new(AppConfig {
        threads,
        seed,
        ..AppConfig::default()
    })
    .unwrap();
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap());
    let mut w = WorldStreamer::new(params, seed, Some(pool)).unwrap();
    w.install(&mut app);
    let viewer = [Viewer {
        position: centre + Vec3::Y * 2.0,
        forward: Vec3::X,
    }];
    w.settle(&mut app, &viewer, |_| {});
    (app, w)
}

/// The live blades' particle-1.. displacements and the batch's live table.
type LiveFrame = (Vec<([i32; 2], u32, u8, Vec<Vec3>)>, LiveCells);

fn live_frame(app: &App) -> LiveFrame {
    let live = app.world.resources.get::<WorldLive>().unwrap();
    let links = {
        let grass = app.world.resources.get::<GrassBatch>().unwrap();
        grass.layers[0].shape.rest.len() - 1
    };
    let mut blades: BTreeMap<([i32; 2], u32, u8), Vec<Vec3>> = BTreeMap::new();
    for i in 1..=links {
        for (cell, index, kind, d) in live.displacements(i) {
            blades.entry((cell, index, kind)).or_default().push(d);
        }
    }
    let table = app.world.resources.get::<GrassBatch>().unwrap().live.clone();
    (blades.into_iter().map(|((c, i, k), d)| (c, i, k, d)).collect(), table)
}

#[test]
fn a_walker_pushes_the_blades_every_expansion_makes_identically_on_any_thread_count() {
    let (mut params, seed, blades, centre) = meadow();
    params.grass.walkers = vec![Walker {
        walk: Walk::Orbit {
            center: (centre.x, centre.z),
            radius: 2.0,
        },
        ..Walker::default()
    }];
    let reach = params.grass.live.reach + Walker::default().radius;
    let roots: BTreeMap<([i32; 2], u32), Vec3> = blades.iter().map(|b| ((b.cell, b.index), b.root)).collect();
    let mut frames = Vec::new();
    for threads in [1, 7] {
        let (mut app, _w) = world_app(&params, seed, centre, threads);
        // One second of walking, a frame at a time.
        for _ in 0..60 {
            app.advance(1);
        }
        let (live, table) = live_frame(&app);
        assert!(live.len() > 20, "{threads} threads: {} live blades", live.len());
        assert!(table.is_consistent());
        let grass = app.world.resources.get::<GrassBatch>().unwrap();
        let mut pushed = 0.0f32;
        for (cell, index, kind, d) in &live {
            // The blade is one the library's expansion makes, near the walker's circle.
            let root = roots
                .get(&(*cell, *index))
                .unwrap_or_else(|| panic!("live blade {index} of cell {cell:?} is not an expanded blade"));
            let off_circle = (Vec3::new(root.x - centre.x, 0.0, root.z - centre.z).length() - 2.0).abs();
            assert!(
                off_circle <= reach + 1e-3,
                "a blade {off_circle} m from the walk went live"
            );
            // The renderer finds it by cell and index, with the same displacements.
            let slot = table.slot(*cell, *index).expect("a live blade has a slot") as usize;
            let layer = &grass.layers[usize::from(*kind)];
            assert_eq!(&layer.live_displacement[slot * d.len()..(slot + 1) * d.len()], &d[..]);
            pushed = pushed.max(d.iter().map(|v| v.length()).fold(0.0, f32::max));
        }
        assert!(pushed > 0.05, "the walker bent no blade by more than {pushed} m");
        frames.push((live, table));
    }
    assert_eq!(frames[0], frames[1], "1 and 7 threads differ");
}

#[test]
fn a_hosts_pusher_makes_blades_live_and_they_return_to_the_bake_after_it_leaves() {
    let (params, seed, blades, centre) = meadow();
    let (mut app, _w) = world_app(&params, seed, centre, 2);
    let ground = blades
        .iter()
        .min_by(|a, b| a.root.distance(centre).total_cmp(&b.root.distance(centre)))
        .unwrap()
        .root
        .y;
    let feet = app.world.entities.spawn((Pusher {
        center: Vec3::new(centre.x, ground + 0.2, centre.z),
        radius: 0.3,
    },));
    app.advance(30);
    let held = {
        let live = app.world.resources.get::<WorldLive>().unwrap();
        assert!(live.live_blades() > 20, "{} live blades", live.live_blades());
        live.held_blades()
    };
    assert!(held >= 500, "{held} blades held around the pusher");
    assert!(!app.world.resources.get::<GrassBatch>().unwrap().live.cells.is_empty());
    app.world.entities.despawn(feet).unwrap();
    // Hold (1.5 s) and blend (0.5 s) pass; then the tiles are let go.
    app.advance(150);
    let live = app.world.resources.get::<WorldLive>().unwrap();
    assert_eq!((live.live_blades(), live.held_blades()), (0, 0));
    let grass = app.world.resources.get::<GrassBatch>().unwrap();
    assert!(grass.live.cells.is_empty() && grass.layers.iter().all(|l| l.live_displacement.is_empty()));
}
