//! `sylva terrain --region`: a rectangle of a world's chunks generated chunk by chunk,
//! stitched, measured and drawn.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use sylva::systems::world::{RegionReport, WorldGen, stitch};

use super::print_drainage;
use crate::cli::Common;
use crate::cli::common::{count, load, write_json};
use crate::cli::output_paths;
use crate::cli::progress;
use crate::cli::region_files::{EcologyOutputs, Pictures};

/// The report `terrain --region` writes.
#[derive(Serialize)]
struct Report<'a> {
    scene: &'a str,
    seed: u64,
    threads: usize,
    wall_ms: f64,
    terrain: &'a RegionReport,
}

/// Runs `sylva terrain SCENE --region X0,Z0,X1,Z1`.
pub(super) fn run(
    path: &Path,
    r: [i32; 4],
    (pictures, ecology): (&Pictures, &EcologyOutputs),
    common: &Common,
) -> Result<(), String> {
    let outputs: Vec<_> = pictures.outputs().into_iter().chain(ecology.outputs()).collect();
    output_paths::check_all(common, &outputs)?;
    let scene = load(path, common)?;
    let Some(params) = scene.world.clone() else {
        return Err(format!(
            "{}: --region needs a scene with a `world` section",
            path.display()
        ));
    };
    let t0 = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(common.thread_count())
        .build()
        .map_err(|e| e.to_string())?;
    let world = WorldGen::new(params, scene.seed);
    // Wide: the spans of a region across the i32 range multiply past i64 (`stitch` refuses it).
    let chunks = (i128::from(r[2]) - i128::from(r[0]) + 1) * (i128::from(r[3]) - i128::from(r[1]) + 1);
    let bar = progress::bar(u64::try_from(chunks).unwrap_or(u64::MAX), &scene.name, "chunks");
    let stitched = pool
        .install(|| stitch(&world, [r[0], r[1]], [r[2], r[3]], || bar.inc(1)))
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let wall = t0.elapsed();
    let t = &stitched.report;
    println!(
        "{}: chunks ({}, {}) to ({}, {}), {}, {} × {} cells of {} m in {:.2} s on {}",
        scene.name,
        r[0],
        r[1],
        r[2],
        r[3],
        count(t.chunks as u64, "chunk"),
        stitched.field.width,
        stitched.field.depth,
        t.cell_size,
        wall.as_secs_f64(),
        count(pool.current_num_threads() as u64, "thread")
    );
    if let Some(d) = &t.drainage {
        print_drainage(d);
    }
    println!(
        "  rivers across chunk borders: {} matched, {} mismatched; deepest closed depression on a river {:.3} m",
        t.border_crossings, t.border_mismatches, t.river_depression_max
    );
    pictures.write(&stitched.field)?;
    ecology.write(&world, &stitched.chunks)?;
    if let Some(out) = &common.report {
        let report = Report {
            scene: &scene.name,
            seed: scene.seed,
            threads: pool.current_num_threads(),
            wall_ms: wall.as_secs_f64() * 1e3,
            terrain: t,
        };
        write_json(out, &report)?;
    }
    Ok(())
}
