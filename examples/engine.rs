//! An engine with its own renderer and its own loop: Sylva streams the world, the mesh kit
//! makes the triangles, and the engine's own work runs on the generation pool.
//!
//! 1. The same ring of chunks is made twice by stepping (the host's clock, so both runs see
//!    the same chunks): once with Sylva's render batches, once with the mesh kit's meshes
//!    only; the bytes and generation-pool milliseconds per chunk of each are printed.
//! 2. A flight at 40 m/s, paced at 60 Hz by the engine's own clock: a hook on the pool turns
//!    each chunk's meshes into the engine's interleaved vertex buffers, so the main thread only
//!    takes them; the install time per frame is printed (p50, p99, max).
//! 3. The chunk under the viewer at the end and its eight neighbours, with their water and
//!    trees (the kit's coarsest level of detail, placed), are written as one Wavefront OBJ
//!    with vertex colours, the ground at its second level (every other sample).
//!
//! Run: `cargo run --release --no-default-features --example engine [scene.ron] [--out region.obj]`

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sylva::rayon;
use sylva::runtime::glam::Vec3;
use sylva::runtime::stream::{StreamEvent, Viewer};
use sylva::systems::mesh_kit::{Mesh, MeshKit, TreeLods};
use sylva::systems::world::{ChunkParts, ReadyChunk, WorldParams, WorldStreamer};

/// The chunks our engine holds, by coordinate.
type Resident = BTreeMap<[i32; 2], ReadyChunk>;

/// What our engine uploads per chunk: interleaved vertices (position, normal, colour as four
/// floats: ten floats a vertex) and 32-bit indices, ground then water.
struct EngineChunk {
    vertices: Vec<[f32; 10]>,
    indices: Vec<u32>,
}

/// The engine's own vertex format, made on the generation pool.
fn interleave(meshes: &[&Mesh]) -> EngineChunk {
    let mut out = EngineChunk {
        vertices: Vec::new(),
        indices: Vec::new(),
    };
    for m in meshes {
        let base = out.vertices.len() as u32;
        for ((p, n), c) in m.positions.iter().zip(&m.normals).zip(&m.colours) {
            let c = c.map(|v| f32::from(v) / 255.0);
            out.vertices
                .push([p.x, p.y, p.z, n.x, n.y, n.z, c[0], c[1], c[2], c[3]]);
        }
        out.indices.extend(m.indices.iter().map(|i| i + base));
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut scene_path, mut out) = (None, std::path::PathBuf::from("engine-region.obj"));
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next().ok_or("--out needs a path")?.into(),
            _ => scene_path = Some(a),
        }
    }
    let scene = match scene_path {
        Some(path) => sylva::Scene::load(path.as_ref())?,
        None => sylva::Scene::world(),
    };
    let mut params = scene.world.clone().ok_or("the scene has no `world` section")?;
    // A ring of a few hundred metres: what an engine streams in detail around its camera.
    params.load_radius = params.load_radius.min(2.0 * params.chunk_size());
    params.evict_radius = params.evict_radius.min(3.0 * params.chunk_size());
    // The engine's generation pool: one thread, so the other core stays with the game.
    let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(1).build()?);
    let start = Viewer {
        position: scene.camera.position,
        forward: Vec3::X,
    };

    compare_parts(&params, scene.seed, &pool, start)?;
    let (world, chunks, viewer) = fly(&params, scene.seed, &pool, start)?;
    let size = params.chunk_size();
    let under = [
        (viewer.position.x / size).floor() as i32,
        (viewer.position.z / size).floor() as i32,
    ];
    let near: Resident = chunks
        .into_iter()
        .filter(|(c, _)| (c[0] - under[0]).abs() <= 1 && (c[1] - under[1]).abs() <= 1)
        .collect();
    write_region(&world.mesh_kit(), &near, &out)?;
    Ok(())
}

/// The ring around `start` made with Sylva's render batches, then with the kit's meshes only.
fn compare_parts(
    params: &WorldParams,
    seed: u64,
    pool: &Arc<rayon::ThreadPool>,
    start: Viewer,
) -> Result<(), Box<dyn std::error::Error>> {
    for (name, parts) in [
        ("Sylva's render batches", ChunkParts::RENDERER),
        ("mesh kit only", ChunkParts::MESHES),
    ] {
        let mut world = WorldStreamer::new(params, seed, Some(Arc::clone(pool)))?.with_parts(parts)?;
        let (mut chunks, mut bytes) = (0u64, 0u64);
        world.settle_with(&[start], |event| {
            if let StreamEvent::Ready { payload, .. } = event {
                chunks += 1;
                bytes += payload.upload_bytes();
            }
        })?;
        let p = world.prepared();
        let ms = |ns: &std::sync::atomic::AtomicU64| {
            ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6 / chunks.max(1) as f64
        };
        println!(
            "{name:>22}: {chunks} chunks, {:.2} MB and {:.1} ms (render batches {:.1} ms, meshes {:.1} ms) per chunk beyond generating it",
            bytes as f64 / 1e6 / chunks.max(1) as f64,
            ms(&p.render_ns) + ms(&p.meshes_ns),
            ms(&p.render_ns),
            ms(&p.meshes_ns),
        );
    }
    Ok(())
}

/// A paced flight whose hook makes the engine's buffers on the pool; returns the world, the
/// chunks resident at the end (ready chunks with their meshes) and the viewer there.
fn fly(
    params: &WorldParams,
    seed: u64,
    pool: &Arc<rayon::ThreadPool>,
    start: Viewer,
) -> Result<(WorldStreamer, Resident, Viewer), Box<dyn std::error::Error>> {
    let mut world = WorldStreamer::new(params, seed, Some(Arc::clone(pool)))?
        .with_parts(ChunkParts::MESHES)?
        .with_hook(|ready: &ReadyChunk, _: &MeshKit| {
            let m = ready.meshes.as_ref().expect("meshes were asked for");
            interleave(&[&m.ground[0], &m.water])
        })?;
    let mut resident = Resident::new();
    let mut uploaded = 0usize;
    world.settle_with(&[start], |event| {
        if let StreamEvent::Ready { coord, payload } = event {
            resident.insert(coord, payload);
        }
    })?;
    let (speed, dt) = (40.0f32, 1.0 / 60.0);
    let mut install_ms = Vec::new();
    let started = Instant::now();
    let mut viewer = start;
    for frame in 0..60 * 15 {
        viewer.position = start.position + Vec3::X * speed * dt * frame as f32;
        let f = world.update_with(&[viewer], |event| match event {
            StreamEvent::Ready { coord, mut payload } => {
                // What the hook made on the pool; a real engine uploads it here.
                match payload.take_hosted::<EngineChunk>() {
                    Some(Ok(chunk)) => uploaded += chunk.vertices.len() * 40 + chunk.indices.len() * 4,
                    Some(Err(e)) => eprintln!("{e}"),
                    None => {}
                }
                resident.insert(coord, payload);
            }
            StreamEvent::Evicted { coord } => {
                resident.remove(&coord);
            }
        });
        install_ms.push(f.install_ms);
        let due = started + Duration::from_secs_f32(dt * (frame + 1) as f32);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
    install_ms.sort_by(f64::total_cmp);
    let q = |p: f64| install_ms[((install_ms.len() - 1) as f64 * p).round() as usize];
    let s = world.stats();
    println!(
        "flight: {} frames, {} chunks installed, {} evicted, {:.1} MB of engine buffers taken; main-thread install per frame p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; hook {:.1} ms per chunk on the pool",
        install_ms.len(),
        s.installed,
        s.evicted,
        uploaded as f64 / 1e6,
        q(0.5),
        q(0.99),
        q(1.0),
        world.prepared().hook_ns.load(std::sync::atomic::Ordering::Relaxed) as f64
            / 1e6
            / world
                .prepared()
                .hooked
                .load(std::sync::atomic::Ordering::Relaxed)
                .max(1) as f64
    );
    world.settle_with(&[viewer], |event| match event {
        StreamEvent::Ready { coord, payload } => {
            resident.insert(coord, payload);
        }
        StreamEvent::Evicted { coord } => {
            resident.remove(&coord);
        }
    })?;
    Ok((world, resident, viewer))
}

/// The ground, water and trees of `chunks` as one OBJ file.
fn write_region(
    kit: &MeshKit,
    chunks: &BTreeMap<[i32; 2], ReadyChunk>,
    out: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let models: Vec<TreeLods> = (0..kit.tree_count()).map(|m| kit.tree(m)).collect::<Result<_, _>>()?;
    let mut w = BufWriter::new(std::fs::File::create(out)?);
    writeln!(
        w,
        "# Sylva: {} chunks with their water and trees, Y up, metres",
        chunks.len()
    )?;
    let mut next = 1;
    let mut trees = 0;
    for (coord, ready) in chunks {
        let m = ready.meshes.as_ref().ok_or("meshes were asked for")?;
        next = m.ground[1.min(m.ground.len() - 1)].write_obj(
            &format!("ground_{}_{}", coord[0], coord[1]),
            next,
            &mut w,
        )?;
        if !m.water.is_empty() {
            next = m
                .water
                .write_obj(&format!("water_{}_{}", coord[0], coord[1]), next, &mut w)?;
        }
        let mut wood = Mesh::default();
        for t in &ready.payload.trees {
            let Some(model) = kit.content().model_id(usize::from(t.species), usize::from(t.variant)) else {
                continue;
            };
            let level = models[model as usize].levels.last().ok_or("a tree has levels")?;
            wood.append_placed(&level.bark, t.position, t.yaw, t.scale);
            wood.append_placed(&level.leaves, t.position, t.yaw, t.scale);
            trees += 1;
        }
        next = wood.write_obj(&format!("trees_{}_{}", coord[0], coord[1]), next, &mut w)?;
    }
    w.flush()?;
    println!(
        "wrote {} ({} chunks, {trees} trees, {} vertices)",
        out.display(),
        chunks.len(),
        next - 1
    );
    Ok(())
}
