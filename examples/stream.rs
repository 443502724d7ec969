//! Streaming a world in your own engine loop: no window, no Vulkan.
//!
//! Builds the chunk streamer of a world scene, flies one viewer straight ahead
//! at 80 m/s with a hand-written 60 Hz clock, and handles what arrives the way
//! an engine with its own world and renderer would: a ready chunk brings its
//! terrain columns, its trees (species, variant, position), its grass blades, its
//! drawn trees as instances of the world's tree models and its ground samples; an
//! evicted chunk is dropped.
//!
//! Run: `cargo run --release --no-default-features --example stream [scene.ron]`

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sylva::runtime::glam::Vec3;
use sylva::runtime::stream::{StreamEvent, Viewer};
use sylva::systems::world::{ReadyChunk, WorldStreamer};

/// What our engine keeps per chunk.
struct OurChunk {
    trees: usize,
    blades: usize,
    drawn: usize,
    highest: f32,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = match std::env::args().nth(1) {
        Some(path) => sylva::Scene::load(path.as_ref())?,
        None => sylva::Scene::world(),
    };
    let params = scene.world.as_ref().ok_or("the scene has no `world` section")?;

    // Our engine hands the streamer its own generation pool: one thread, so the
    // other core stays with the game.
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(1).build()?);
    let t = Instant::now();
    let mut world = WorldStreamer::new(params, scene.seed, Some(pool))?;
    println!(
        "`{}`: species grown and grass baked in {:.0} ms",
        scene.name,
        t.elapsed().as_secs_f64() * 1e3
    );

    let mut ours: BTreeMap<[i32; 2], OurChunk> = BTreeMap::new();
    let (speed, dt) = (80.0f32, 1.0 / 60.0);
    let start = scene.camera.position;
    let started = Instant::now();
    for frame in 0..60 * 20 {
        let viewer = Viewer {
            position: start + Vec3::X * speed * dt * frame as f32,
            forward: Vec3::X,
        };
        let f = world.update_with(&[viewer], |event| match event {
            StreamEvent::Ready { coord, payload } => {
                let chunk = keep(&payload);
                println!(
                    "frame {frame:4}: + chunk {coord:?}: {} trees ({} drawn), {} blades, highest {:.1} m, hash {:016x}",
                    chunk.trees, chunk.drawn, chunk.blades, chunk.highest, payload.payload.hash
                );
                ours.insert(coord, chunk);
            }
            StreamEvent::Evicted { coord } => {
                ours.remove(&coord);
                println!("frame {frame:4}: - chunk {coord:?}");
            }
        });
        if frame % 300 == 0 {
            println!(
                "frame {frame:4}: viewer at x = {:.0} m, {} chunks resident, {} holes",
                viewer.position.x, f.resident, f.holes
            );
        }
        // Our own frame pacing.
        let due = started + Duration::from_secs_f32(dt * (frame + 1) as f32);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
    let s = world.stats();
    println!(
        "{} installed, {} evicted, {} cancelled; ready p95 {:.0} ms; {} trees and {} blades resident",
        s.installed,
        s.evicted,
        s.cancelled,
        s.ready.quantile_ms(0.95),
        ours.values().map(|c| c.trees).sum::<usize>(),
        ours.values().map(|c| c.blades).sum::<usize>()
    );
    Ok(())
}

/// What our engine takes from a ready chunk (a real one would upload the render data).
fn keep(ready: &ReadyChunk) -> OurChunk {
    OurChunk {
        trees: ready.payload.trees.len(),
        blades: ready.grass.iter().map(|g| g.root.len()).sum(),
        drawn: ready.trees.len(),
        highest: ready.patch.height.iter().copied().fold(f32::MIN, f32::max),
    }
}
