//! `sylva terrain`: a scene's terrain generated, eroded, measured and drawn as PNGs; with
//! `--region`, a world's chunks stitched into one map (its own module, [`region`]).

mod region;

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use sylva::Report;
use sylva::systems::terrain::Heightfield;
use sylva::systems::terrain::basin::Drainage;

use crate::cli::Common;
use crate::cli::common::{build, count, load, parse_region, write_report};
use crate::cli::output_paths;
use crate::cli::region_files::{EcologyOutputs, Pictures};
use crate::cli::{estimate, progress};

/// The flags of `sylva terrain`.
#[derive(Args)]
pub(crate) struct TerrainArgs {
    /// Scene file with a `terrain` section (or a `world` one, with `--region`).
    scene: PathBuf,
    /// Erosion iterations to run (not with `--region`: a world's chunks erode as the scene says).
    #[arg(long, default_value_t = 100)]
    iterations: u32,
    /// Chunks `x0,z0,x1,z1` (inclusive) of a world scene, generated chunk by chunk and stitched.
    #[arg(long, value_name = "X0,Z0,X1,Z1", value_parser = parse_region, allow_hyphen_values = true)]
    region: Option<[i32; 4]>,
    #[command(flatten)]
    pictures: Pictures,
    #[command(flatten)]
    ecology: EcologyOutputs,
}

/// Runs `sylva terrain`.
pub(crate) fn run(args: &TerrainArgs, common: &Common) -> Result<(), String> {
    match args.region {
        Some(r) => region::run(&args.scene, r, (&args.pictures, &args.ecology), common),
        None => scene_terrain(&args.scene, args.iterations, &args.pictures, common),
    }
}

/// A scene's own terrain, eroded `iterations` times.
fn scene_terrain(path: &Path, iterations: u32, pictures: &Pictures, common: &Common) -> Result<(), String> {
    output_paths::check_all(common, &pictures.outputs())?;
    let scene = load(path, common)?;
    if scene.terrain.is_none() {
        let hint = if scene.world.is_some() {
            " (a world scene: add --region X0,Z0,X1,Z1)"
        } else {
            ""
        };
        return Err(format!("{}: the scene has no `terrain` section{hint}", path.display()));
    }
    let t0 = Instant::now();
    let mut app = build(&scene, common)?.app;
    let bar = progress::bar(u64::from(iterations), &scene.name, "iterations");
    let paced = Instant::now();
    for iteration in 1..=iterations {
        // Only the last iteration is extracted, for the pictures and the report.
        if iteration == iterations {
            app.advance(1);
        } else {
            app.advance_headless(1);
        }
        bar.inc(1);
        estimate::after_step(iteration, iterations, "iterations", paced, common.force, &bar)?;
    }
    bar.finish_and_clear();
    let wall = t0.elapsed();
    let report = Report::gather(&app, &scene.name, wall).map_err(|e| e.to_string())?;
    if let Some(t) = &report.terrain {
        println!(
            "{}: {} cells, {}, {} in {:.2} s on {}",
            scene.name,
            t.cells,
            count(t.layers, "layer"),
            count(t.iterations, "iteration"),
            wall.as_secs_f64(),
            count(report.threads as u64, "thread")
        );
        let error = |e: Option<f64>| e.map_or("not kept".to_string(), |e| format!("{e:.3e}"));
        println!(
            "  score {:.4} -> {:.4} (corrected {:.4}); water error {}, material error {}",
            t.score_before,
            t.score_after,
            t.score_corrected,
            error(t.water_balance_error),
            error(t.material_balance_error)
        );
        let (p50, p99) = (t.p50_ms_per_pass, t.p99_ms_per_pass);
        let kernels = [
            ("hydraulic", t.hydraulic_ms_per_iter, p50.hydraulic, p99.hydraulic),
            ("thermal", t.thermal_ms_per_iter, p50.thermal, p99.thermal),
            ("aging", t.aging_ms_per_iter, p50.aging, p99.aging),
        ];
        // Aging runs inside the water or thermal pass before it where one is
        // due, and then has no passes of its own to time.
        let ages = scene.terrain.as_ref().is_some_and(|p| p.schedule.aging_every > 0);
        let passes: Vec<String> = kernels
            .iter()
            .map(|&(name, mean, p50, p99)| match name {
                "aging" if ages && mean == 0.0 => "aging inside the water and thermal passes".to_string(),
                _ => format!("{name} {mean:.3} (median {p50:.3}, p99 {p99:.3})"),
            })
            .collect();
        println!("  ms per pass: {}", passes.join(", "));
        if let Some(d) = &t.drainage {
            print_drainage(d);
        }
    }
    if pictures.any() {
        let field = Heightfield::from_world(&app.world.entities).ok_or("the terrain has no chunks")?;
        pictures.write(&field)?;
    }
    write_report(&report, common)
}

/// Prints the drainage measures on one line.
fn print_drainage(d: &Drainage) {
    let hack = d.hack_exponent.map_or("-".to_owned(), |h| format!("{h:.3}"));
    println!(
        "  drainage: largest area {:.4} km², {} outlets, {} closed depressions deeper than 1 m, Hack exponent {hack}, density {:.3} /km",
        d.largest_area / 1e6,
        d.outlets,
        d.closed_depressions,
        // + 0.0 prints a density of −0 as 0.
        d.drainage_density * 1e3 + 0.0
    );
}

#[cfg(test)]
mod tests {
    use crate::cli::{Command, parse};

    #[test]
    fn pictures_are_flags_of_terrain() {
        let line = ["terrain", "w.ron", "--region=-1,0,2,3", "--heightmap", "h.png"];
        let Some(Command::Terrain(args)) = parse(&line).unwrap().command else {
            panic!("terrain parses as terrain");
        };
        assert_eq!(args.region, Some([-1, 0, 2, 3]));
        assert!(args.pictures.any());
        assert_eq!(args.iterations, 100);
    }
}
