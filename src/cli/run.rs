//! `sylva run`: a scene simulated for its frames, from its start or a snapshot, with an
//! optional snapshot of the end and a screenshot of the last frame. `bench` runs scenes
//! through [`simulate`] too.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use sylva::runtime::{App, SnapshotError};
use sylva::{Report, Scene};

use crate::cli::Common;
use crate::cli::common::{build, scene_or_default, write_report};
use crate::cli::output_paths::{self, SCREENSHOT, SNAPSHOT};
use crate::cli::screenshot::{render_png, renderer_for};
use crate::cli::summary::print_summary;
use crate::cli::{estimate, progress};

/// The flags of `sylva run`.
#[derive(Args)]
pub(crate) struct RunArgs {
    /// Scene file (default: the built-in world).
    scene: Option<PathBuf>,
    /// Frames to run, overriding the scene's `simulation.frames`.
    #[arg(long)]
    frames: Option<u32>,
    /// Continue from a snapshot written by `--save` (same scene) instead of the scene's start.
    #[arg(long, value_name = "PATH")]
    resume: Option<PathBuf>,
    /// Read the grass bakes from this file (written by `sylva grass SCENE --bake PATH`)
    /// instead of baking; overrides the scene's `grass.bake_file`.
    #[arg(long, value_name = "PATH")]
    bake_in: Option<PathBuf>,
    /// Write a snapshot of the final state, to continue later with `--resume`.
    #[arg(long, value_name = "PATH")]
    save: Option<PathBuf>,
    /// Render the last frame with Vulkan and write it as a PNG (needs a Vulkan driver).
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Screenshot width, pixels.
    #[arg(long, default_value_t = 1280, requires = "screenshot", value_parser = clap::value_parser!(u32).range(1..=16384))]
    width: u32,
    /// Screenshot height, pixels.
    #[arg(long, default_value_t = 720, requires = "screenshot", value_parser = clap::value_parser!(u32).range(1..=16384))]
    height: u32,
}

/// Runs `sylva run`.
pub(crate) fn run(args: &RunArgs, common: &Common) -> Result<(), String> {
    output_paths::check_all(
        common,
        &[
            ("--save", args.save.as_deref(), SNAPSHOT),
            ("--screenshot", args.screenshot.as_deref(), SCREENSHOT),
        ],
    )?;
    // An asked-for screenshot needs a driver: found out before the run, not after it.
    let renderer = match &args.screenshot {
        Some(p) => Some(renderer_for("--screenshot", p, args.width, args.height)?),
        None => None,
    };
    let scene = scene_with_bakes(args.scene.as_deref(), args.bake_in.as_ref(), common)?;
    let frames = args.frames.unwrap_or(scene.simulation.frames);
    let (mut app, mut report) = simulate(&scene, frames, common, Extract::Last, args.resume.as_deref())?;
    if let Some(path) = &args.save {
        let bytes = app.snapshot_bytes().map_err(|e| e.to_string())?;
        output_paths::write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("snapshot: {}", path.display());
    }
    print_summary(&report);
    report.render = match (renderer, &args.screenshot) {
        (Some(mut renderer), Some(path)) => {
            app.world.resources.insert(sylva::camera_for(&scene, &app));
            Some(render_png(&mut renderer, &app, path, true)?)
        }
        _ => {
            println!("rendering: off (pass --screenshot PATH to render the last frame)");
            None
        }
    };
    write_report(&report, common)
}

/// The scene at `path` (the built-in world without one), its grass bakes read from `bake_in`
/// when given.
pub(crate) fn scene_with_bakes(
    path: Option<&Path>,
    bake_in: Option<&PathBuf>,
    common: &Common,
) -> Result<Scene, String> {
    let mut scene = scene_or_default(path, common)?;
    if let Some(bakes) = bake_in {
        let Some(grass) = &mut scene.grass else {
            return Err(format!(
                "--bake-in {}: the scene has no `grass` section",
                bakes.display()
            ));
        };
        grass.bake_file = Some(bakes.clone());
    }
    Ok(scene)
}

/// Which frames of a simulation are extracted for drawing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Extract {
    /// Every frame, as a renderer would run them: what a benchmark measures.
    Every,
    /// Only the last, for its screenshot or report: extraction is work for frames someone sees.
    Last,
}

/// Builds `scene`, continues from the snapshot `resume` if given, and runs `frames` frames
/// (a world's first ring streamed in first); hands back the app and its report.
pub(crate) fn simulate(
    scene: &Scene,
    frames: u32,
    common: &Common,
    extract: Extract,
    resume: Option<&Path>,
) -> Result<(App, Report), String> {
    let built = build(scene, common)?;
    let (mut app, mut world) = (built.app, built.world);
    if let Some(path) = resume {
        app.load_snapshot(path).map_err(|e| match e {
            // Its message names the file already.
            SnapshotError::Io { .. } => e.to_string(),
            e => format!("{}: {e}", path.display()),
        })?;
    }
    let bar = progress::bar(u64::from(frames), &scene.name, "frames");
    let t0 = Instant::now();
    let steps = scene.simulation.steps_per_frame;
    let viewer = sylva::Flight::straight(&scene.camera, 1.0, 0.0, 0.0).viewer(0.0);
    if let Some(world) = &mut world {
        // A world streams around the scene's camera; the run starts once its first ring is in.
        world.settle(&mut app, &[viewer], |_| {});
    }
    let paced = Instant::now();
    for frame in 1..=frames {
        match &mut world {
            Some(world) => {
                world.update(&mut app, &[viewer]);
                app.advance(steps);
            }
            // A benchmark measures frames as a renderer would run them, extraction included;
            // a run extracts only its last, for its screenshot or report.
            None if extract == Extract::Every || frame == frames => app.advance(steps),
            None => app.advance_headless(steps),
        }
        bar.inc(1);
        estimate::after_step(frame, frames, "frames", paced, common.force, &bar)?;
    }
    let wall = t0.elapsed();
    bar.finish_and_clear();
    let report = Report::gather(&app, &scene.name, wall).map_err(|e| e.to_string())?;
    Ok((app, report))
}

#[cfg(test)]
mod tests {
    use crate::cli::{Command, parse};

    #[test]
    fn screenshot_size_needs_a_screenshot() {
        assert!(parse(&["run", "--width", "64"]).is_err());
        let Some(Command::Run(args)) = parse(&["run", "s.ron", "--screenshot", "a.png"]).unwrap().command else {
            panic!("run parses as run");
        };
        assert_eq!((args.width, args.height), (1280, 720));
    }

    #[test]
    fn a_bake_file_needs_a_grass_section() {
        let common = crate::cli::parse(&["run"]).unwrap().common;
        let err = super::scene_with_bakes(None, Some(&"g.bin".into()), &common).unwrap_err();
        assert_eq!(err, "--bake-in g.bin: the scene has no `grass` section");
    }
}
