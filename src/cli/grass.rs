//! `sylva grass`: a scene's grass baked (every species), its statistics printed, and the bake
//! saved for `run --bake-in` or the scene's `grass.bake_file`.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use sylva::Report;
use sylva::systems::grass::{GrassLayers, species_file};

use crate::cli::Common;
use crate::cli::common::{build, load, write_report};
use crate::cli::output_paths::{self, BAKE};
use crate::cli::progress::spinner;

/// The flags of `sylva grass`.
#[derive(Args)]
pub(crate) struct GrassArgs {
    /// Scene file with a `grass` section.
    scene: PathBuf,
    /// Write the baked motion to this file (species k > 0 to `NAME-k.EXT` beside it),
    /// to read back with `run --bake-in` or the scene's `grass.bake_file`.
    #[arg(long, value_name = "PATH")]
    bake: Option<PathBuf>,
}

/// Runs `sylva grass`.
pub(crate) fn run(args: &GrassArgs, common: &Common) -> Result<(), String> {
    let path = &args.scene;
    output_paths::check_all(common, &[("--bake", args.bake.as_deref(), BAKE)])?;
    let mut scene = load(path, common)?;
    let Some(grass) = &mut scene.grass else {
        return Err(format!("{}: the scene has no `grass` section", path.display()));
    };
    // `grass` bakes: reading the scene's saved bake would refuse the very file a new bake replaces.
    grass.bake_file = None;
    // The bake reports no progress of its own: a spinner shows it is busy.
    let spinner = spinner(&format!("{}: baking grass", scene.name));
    let t0 = Instant::now();
    let built = build(&scene, common);
    spinner.finish_and_clear();
    let app = built?.app;
    let wall = t0.elapsed();
    let report = Report::gather(&app, &scene.name, wall).map_err(|e| e.to_string())?;
    let layers = app
        .world
        .resources
        .get::<GrassLayers>()
        .ok_or("the scene's grass was not installed")?;
    for (k, sp) in layers.species.iter().enumerate() {
        let b = &sp.baked;
        println!(
            "  species {k}: {} instances, {} links, {}x{} cells, {} frames of {:.3} s, warm-up {} steps, {} texture bytes",
            sp.roots.len(),
            b.links,
            b.cells,
            b.cells,
            b.frames,
            b.frame_seconds,
            b.warmup_steps,
            b.texture_bytes()
        );
        if let Some(out) = &args.bake {
            let out = species_file(out, k);
            output_paths::write(&out, &b.to_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
            println!("  bake: {}", out.display());
        }
    }
    drop(layers);
    if let Some(g) = &report.grass {
        println!(
            "{}: {} blades, {} particles, {} springs; {} frames baked in {:.0} ms ({:.2} M blade steps/s), {} texture bytes",
            scene.name,
            g.blades,
            g.particles,
            g.springs,
            g.baked_frames,
            g.bake_ms,
            g.steps_per_s / 1e6,
            g.texture_bytes
        );
    }
    write_report(&report, common)
}

#[cfg(test)]
mod tests {
    use crate::cli::parse;

    #[test]
    fn a_scene_without_grass_is_refused_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chains.ron");
        std::fs::write(&path, "(chains: (columns: 1, rows: 1, links: 2))").unwrap();
        let cli = parse(&["grass", path.to_str().unwrap()]).unwrap();
        let err = crate::cli::run(cli).unwrap_err();
        assert_eq!(err, format!("{}: the scene has no `grass` section", path.display()));
    }
}
