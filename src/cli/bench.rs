//! `sylva bench`: a scene run with every frame extracted, as a renderer would run it, and
//! every system's timings printed.

use std::path::PathBuf;

use clap::Args;

use crate::cli::Common;
use crate::cli::common::write_report;
use crate::cli::output_paths;
use crate::cli::run::{Extract, scene_with_bakes, simulate};
use crate::cli::summary::{print_summary, print_systems};

/// The flags of `sylva bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Scene file.
    scene: PathBuf,
    /// Frames to run.
    #[arg(long, default_value_t = 300)]
    frames: u32,
    /// Read the grass bakes from this file (written by `sylva grass SCENE --bake PATH`)
    /// instead of baking; overrides the scene's `grass.bake_file`.
    #[arg(long, value_name = "PATH")]
    bake_in: Option<PathBuf>,
}

/// Runs `sylva bench`.
pub(crate) fn run(args: &BenchArgs, common: &Common) -> Result<(), String> {
    output_paths::check_all(common, &[])?;
    let scene = scene_with_bakes(Some(&args.scene), args.bake_in.as_ref(), common)?;
    let (_, report) = simulate(&scene, args.frames, common, Extract::Every, None)?;
    print_summary(&report);
    print_systems(&report);
    write_report(&report, common)
}

#[cfg(test)]
mod tests {
    use crate::cli::{Command, parse};

    #[test]
    fn a_benchmark_needs_a_scene_and_runs_300_frames() {
        assert!(parse(&["bench"]).is_err());
        let Some(Command::Bench(args)) = parse(&["bench", "chains.ron"]).unwrap().command else {
            panic!("bench parses as bench");
        };
        assert_eq!(args.frames, 300);
    }
}
