//! The user-path suite: what the bundled scenes cost on their own settings,
//! from the state a user starts in, as one table (`cargo bench --bench suite`).
//!
//! The criterion benches time kernels from a prepared state; this suite runs
//! what users run. Terrain: thesis landscape 1 with its own 8 layer slots and
//! schedule, each kernel timed on its own pass as the schedule calls it, over
//! the first 200 iterations from the landscape as generated (what every
//! streamed chunk erodes from) and over 200 iterations after 1000 settling
//! ones; hydraulic erosion also at 1024² from fresh. A schedule row times
//! each iteration whole as `Eroder::step` runs it for users, every due pass
//! together (aging runs inside the pass before it). Each kernel's bandwidth
//! share divides its counted traffic (reads plus writes per cell, as in
//! `benches/terrain.rs`) by a 512 MiB copy on the same threads, measured in
//! the same run.
//!
//! Arguments after `--`: `quick` runs 40 iterations per terrain phase and
//! settles for 200 (a smoke run); `terrain` runs only the terrain rows,
//! `fresh` only those from fresh (for runs side by side with a peer) and
//! `scenes` only the other scenes' rows.

use std::time::{Duration, Instant};

use rayon::prelude::*;
use sylva::Scene;
use sylva::systems::terrain::{Eroder, ScheduleParams, TerrainBalance, TerrainChunk, TerrainParams};
use sylva::systems::world::WorldGen;

/// Bytes a large copy moves each way: well beyond the caches.
const COPY_BYTES: usize = 512 << 20;

/// One row of the table: a name, what was timed, and its timings.
struct Row {
    name: String,
    /// Per-pass (or per-run) durations.
    times: Vec<Duration>,
    /// Counted traffic of one pass, in bytes, where a bandwidth share means something.
    bytes: Option<f64>,
}

impl Row {
    /// A row without a bandwidth share.
    fn timed(name: &str, times: Vec<Duration>) -> Self {
        Row {
            name: name.to_string(),
            times,
            bytes: None,
        }
    }

    fn quantile(&self, q: f64) -> f64 {
        let mut ms: Vec<f64> = self.times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        ms[((ms.len() - 1) as f64 * q).round() as usize]
    }
}

/// How long the suite runs.
struct Plan {
    iterations: u64,
    settle: u64,
    only_terrain: bool,
    only_fresh: bool,
    only_scenes: bool,
}

impl Plan {
    fn from_args() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "quick");
        Plan {
            iterations: if quick { 40 } else { 200 },
            settle: if quick { 200 } else { 1000 },
            only_terrain: args.iter().any(|a| a == "terrain" || a == "fresh"),
            only_fresh: args.iter().any(|a| a == "fresh"),
            only_scenes: args.iter().any(|a| a == "scenes"),
        }
    }
}

fn main() {
    let plan = Plan::from_args();
    let threads = rayon::current_num_threads();
    let copy = copy_bandwidth();
    println!(
        "suite: {threads} threads, copy bandwidth {:.1} GB/s (512 MiB, read + write)",
        copy / 1e9
    );
    let mut rows = if plan.only_scenes {
        Vec::new()
    } else {
        terrain_rows(&plan)
    };
    if !plan.only_terrain {
        rows.extend(scene_rows());
    }
    print_table(&rows, copy);
}

/// The best of five 512 MiB copies on the global pool, 1 MiB per task, in
/// bytes (read plus write) per second.
fn copy_bandwidth() -> f64 {
    let src = vec![1u8; COPY_BYTES];
    let mut dst = vec![0u8; COPY_BYTES];
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            dst.par_chunks_mut(1 << 20)
                .zip(src.par_chunks(1 << 20))
                .for_each(|(d, s)| d.copy_from_slice(s));
            t.elapsed()
        })
        .min()
        .expect("five copies");
    std::hint::black_box(&dst);
    2.0 * COPY_BYTES as f64 / best.as_secs_f64()
}

/// Thesis landscape 1 as its scene file has it, at `size`², its spring at
/// the centre.
fn landscape(size: u32) -> TerrainParams {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/landscape1.ron");
    let mut p = Scene::load(path.as_ref())
        .expect("preset loads")
        .terrain
        .expect("preset has terrain");
    p.size = size;
    for spring in &mut p.hydraulic.springs {
        spring.cell = [i64::from(size / 2); 2];
    }
    p
}

/// The kernels of the schedule, each as the scene's params with only that
/// kernel due, and the bytes per cell its planes move on 8 slots (see
/// `benches/terrain.rs`: hydraulic 134, thermal 38 + 4 more slots × 2 B,
/// aging 6 B per slot).
fn kernels(p: &TerrainParams) -> [(&'static str, TerrainParams, f64); 3] {
    let s = p.schedule;
    let only = |water_every, thermal_every, aging_every| TerrainParams {
        schedule: ScheduleParams {
            water_every,
            thermal_every,
            aging_every,
        },
        ..p.clone()
    };
    [
        ("hydraulic", only(s.water_every, 0, 0), 134.0),
        ("thermal", only(0, s.thermal_every, 0), 46.0),
        ("aging", only(0, 0, s.aging_every), 48.0),
    ]
}

/// Runs iterations `from..from + count` of the full schedule on `chunk`,
/// each kernel's pass timed on its own, in the schedule's order.
fn erode_timed(chunk: &mut TerrainChunk, p: &TerrainParams, from: u64, count: u64) -> [Vec<Duration>; 3] {
    let kernels = kernels(p);
    let mut eroder = Eroder::default();
    let mut books = TerrainBalance::default();
    let mut times: [Vec<Duration>; 3] = Default::default();
    for iteration in from..from + count {
        for ((_, only, _), times) in kernels.iter().zip(&mut times) {
            let due = [
                only.schedule.water_every,
                only.schedule.thermal_every,
                only.schedule.aging_every,
            ]
            .into_iter()
            .any(|every| every > 0 && iteration % u64::from(every) == 0);
            let t = Instant::now();
            eroder.step(chunk, only, 1, iteration, &mut books);
            if due {
                times.push(t.elapsed());
            }
        }
    }
    times
}

/// Runs iterations `from..from + count` of the whole schedule on `chunk`,
/// each iteration timed whole.
fn schedule_timed(chunk: &mut TerrainChunk, p: &TerrainParams, from: u64, count: u64) -> Vec<Duration> {
    let mut eroder = Eroder::default();
    let mut books = TerrainBalance::default();
    (from..from + count)
        .map(|iteration| {
            let t = Instant::now();
            eroder.step(chunk, p, 1, iteration, &mut books);
            t.elapsed()
        })
        .collect()
}

fn terrain_rows(plan: &Plan) -> Vec<Row> {
    let mut rows = Vec::new();
    for size in [512u32, 1024] {
        let p = landscape(size);
        let cells = f64::from(size).powi(2);
        let mut chunk = p
            .generator
            .generate(1, [0, 0], p.size, p.max_layers)
            .expect("landscape generates");
        let whole = |chunk: &TerrainChunk, from| schedule_timed(&mut chunk.clone(), &p, from, plan.iterations);
        let fresh_whole = (size == 512).then(|| whole(&chunk, 1));
        let fresh = erode_timed(&mut chunk, &p, 1, plan.iterations);
        let names = kernels(&p).map(|(name, _, bytes)| (name, bytes));
        let mut push = |state: &str, times: [Vec<Duration>; 3], whole: Option<Vec<Duration>>| {
            for ((name, bytes), times) in names.iter().zip(times) {
                if whole.is_some() || *name == "hydraulic" {
                    rows.push(Row {
                        name: format!("landscape1 {size}² {name}, {state}"),
                        times,
                        bytes: Some(bytes * cells),
                    });
                }
            }
            if let Some(times) = whole {
                rows.push(Row::timed(&format!("landscape1 {size}² schedule, {state}"), times));
            }
        };
        push("fresh", fresh, fresh_whole);
        if size == 512 && !plan.only_fresh {
            erode_timed(&mut chunk, &p, plan.iterations + 1, plan.settle - plan.iterations);
            let settled_whole = whole(&chunk, plan.settle + 1);
            push(
                "settled",
                erode_timed(&mut chunk, &p, plan.settle + 1, plan.iterations),
                Some(settled_whole),
            );
        }
    }
    rows
}

/// A bundled scene, loaded.
fn scene(name: &str) -> Scene {
    let path = format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
    Scene::load(path.as_ref()).expect("bundled scene loads")
}

/// `runs` timings of `f`, after one untimed run.
fn timed(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    f();
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

/// The bundled scenes' other work, as their commands run it: the Fig. 6.1b
/// tree (`sylva tree`: the scene built, its grammar derived, interpreted and
/// meshed, on the global pool), the forest built, the meadow's grass baked
/// (`sylva grass`), and one world chunk (`sylva fly`'s generation, on one
/// pool thread) with its basin domain solved and with it known.
fn scene_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let fig = scene("thesis/fig6_1b.ron");
    let mut stages = Vec::new();
    let whole = timed(20, || {
        let built = sylva::build_all(&fig, 0).expect("fig6_1b builds");
        let s = built.tree.expect("fig6_1b grows a tree").stats;
        stages.push(Duration::from_secs_f64(
            (s.derive_ms + s.interpret_ms + s.mesh_ms) * 1e-3,
        ));
    });
    stages.remove(0);
    rows.push(Row::timed("fig6_1b tree: derive + interpret + mesh", stages));
    rows.push(Row::timed("fig6_1b tree: whole build", whole));
    let forest = scene("forest.ron");
    rows.push(Row::timed(
        "forest: build (1,200 trees)",
        timed(3, || drop(sylva::build_all(&forest, 0).expect("forest builds"))),
    ));
    let mut meadow = scene("meadow.ron");
    if let Some(grass) = &mut meadow.grass {
        grass.bake_file = None;
    }
    rows.push(Row::timed(
        "meadow: grass baked",
        timed(5, || drop(sylva::build_all(&meadow, 0).expect("meadow builds"))),
    ));
    rows.extend(world_rows());
    rows
}

/// One chunk of the default world on one thread, where a river runs: with
/// its domains solved in the same call (a chunk in new country) and known.
fn world_rows() -> Vec<Row> {
    let world = Scene::world();
    let params = world.world.expect("the world scene has a world");
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool starts");
    let new_gen = || WorldGen::new(params.clone(), world.seed);
    let river = new_gen().domains().expect("the world has basins").domain([0, 0]).rivers[0].points[0];
    let at = river / params.chunk_size();
    let coord = [at.x.floor() as i32, at.y.floor() as i32];
    let cold = timed(3, || {
        let fresh = new_gen();
        one.install(|| drop(fresh.chunk(coord)));
    });
    let known = new_gen();
    let warm = timed(5, || one.install(|| drop(known.chunk(coord))));
    vec![
        Row::timed("world: one chunk, its domains solved", cold),
        Row::timed("world: one chunk, its domains known", warm),
    ]
}

fn print_table(rows: &[Row], copy: f64) {
    println!(
        "{:44} {:>6} {:>9} {:>9} {:>9} {:>11}",
        "what", "runs", "min ms", "median ms", "p99 ms", "bandwidth"
    );
    for r in rows {
        let median = r.quantile(0.5);
        let share = r
            .bytes
            .map(|b| format!("{:5.1} %", 100.0 * b / (median * 1e-3) / copy))
            .unwrap_or_default();
        println!(
            "{:44} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>11}",
            r.name,
            r.times.len(),
            r.quantile(0.0),
            median,
            r.quantile(0.99),
            share
        );
    }
}
