//! The command line as units: [`Cli`] parses, [`run`] dispatches, and each command is a
//! module of its own with its flags (an `Args` struct), its body (`run`) and its tests.
//!
//! What several commands share lives in [`common`] (the global flags, loading and building a
//! scene, the report), [`progress`] (bars and spinners), [`screenshot`] (headless renderers and
//! their PNGs), [`summary`] (the run summary), [`output_paths`] (outputs checked before any
//! work) and [`console`] (a `println!` that survives a closed stdout). Commands import from
//! these, never from one another's bodies, and nothing is imported back from `main.rs`.

// First, so that its `println!` is the one every module below sees.
#[macro_use]
pub(crate) mod console;

mod bake;
mod bench;
mod common;
mod completions;
mod estimate;
mod export;
mod fly;
mod grass;
mod output_paths;
mod progress;
mod region_files;
mod run;
mod scenes;
mod screenshot;
mod summary;
mod terrain;
mod tree;
mod view;

use clap::{Parser, Subcommand};

pub(crate) use common::Common;

/// Procedural nature at game scale: trees, terrain and grass as ECS entities.
///
/// With no command, flies through the built-in world scene (scenes/world.ron)
/// and writes its last frame to world.png where a Vulkan driver exists.
#[derive(Parser)]
#[command(name = "sylva", version, about, long_about = None, after_help = EXAMPLES)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    common: Common,
}

/// The examples `sylva --help` ends with.
const EXAMPLES: &str = "\
Examples:
  sylva                                        fly through the built-in world, write world.png
  sylva scenes                                 list the bundled scenes
  sylva view scenes/valley.ron                 look around; saved edits of the file show at once
  sylva run scenes/thesis/fig6_1b.ron --frames 1 --screenshot tree.png
  sylva tree scenes/thesis/fig6_1b.ron --export tree.glb
  sylva fly --no-render --speed 50 --seconds 60 --report fly.json
  sylva bake --region=-8,0,-2,6 --out store    then: sylva fly --cache store
  sylva export --region=-4,2,-3,3 --out region.glb
  sylva bench scenes/chains.ron --threads 1 --report a.json";

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene for its configured number of frames.
    Run(run::RunArgs),
    /// Grow a scene's tree, print its statistics and optionally export its mesh.
    Tree(tree::TreeArgs),
    /// Generate a scene's terrain, erode it and optionally write pictures of it;
    /// with `--region`, a rectangle of a world scene's chunks stitched into one map.
    Terrain(terrain::TerrainArgs),
    /// Bake a scene's grass (every species), print its statistics and optionally save the bake.
    Grass(grass::GrassArgs),
    /// Open a window on a scene and fly through it while it runs; saved edits of the file
    /// show at once. Keys: W/S/A/D move, E/C (or Ctrl) up and down, Shift faster, drag to look,
    /// V attractor points, P pause, H key help, PageUp/PageDown previous/next scene of the
    /// folder, F12 screenshot next to the scene, F11 fullscreen, Esc or Q quit. The overlay
    /// shows fps, frame times, what was drawn, a world's chunks and the last reload or its error.
    View(view::ViewArgs),
    /// Fly through a world scene at real frame pacing: along the scene's path, or
    /// straight ahead with --speed and --seconds; report streaming and frame times.
    Fly(fly::FlyArgs),
    /// Bake a rectangle of a world's chunks and basin domains into a store ahead of time,
    /// whole or one shard of many (a Kubernetes Indexed Job or Slurm array; see deploy/README.md),
    /// or check a store with --verify.
    Bake(bake::BakeArgs),
    /// Export a rectangle of a world's chunks as one glTF binary (.glb): ground, water, and
    /// trees as instances of their variants, for engines and DCC tools.
    Export(export::ExportArgs),
    /// List the bundled scenes (scenes/), one line each: what it shows, which thesis figure.
    Scenes,
    /// Print a shell completion script, e.g. `sylva completions bash > /etc/bash_completion.d/sylva`.
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff), e.g. `sylva man > sylva.1 && man ./sylva.1`.
    Man,
    /// Benchmark a scene: run it and print per-system timings.
    Bench(bench::BenchArgs),
}

/// Runs the command `cli` names; the bare `sylva` flies the built-in world.
pub(crate) fn run(cli: Cli) -> Result<(), String> {
    let common = &cli.common;
    if common.report.as_deref().is_some_and(output_paths::is_stdout) {
        console::to_stderr();
    }
    match cli.command {
        None => {
            println!(
                "sylva: no command given: flying through the built-in world (scenes/world.ron) and writing its last frame to world.png; `sylva --help` lists the commands"
            );
            fly::run(&fly::FlyArgs::bare(), common)
        }
        Some(Command::Run(args)) => run::run(&args, common),
        Some(Command::Bench(args)) => bench::run(&args, common),
        Some(Command::Tree(args)) => tree::run(&args, common),
        Some(Command::Terrain(args)) => terrain::run(&args, common),
        Some(Command::Grass(args)) => grass::run(&args, common),
        Some(Command::View(args)) => view::run(&args, common),
        Some(Command::Fly(args)) => fly::run(&args, common),
        Some(Command::Bake(args)) => bake::run(&args, common),
        Some(Command::Export(args)) => export::run(&args, common),
        Some(Command::Scenes) => {
            scenes::run();
            Ok(())
        }
        Some(Command::Completions(args)) => {
            completions::completions(&args);
            Ok(())
        }
        Some(Command::Man) => completions::man_page(),
    }
}

/// Parses a command line as `sylva` would, for the commands' tests.
#[cfg(test)]
fn parse(line: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("sylva").chain(line.iter().copied()))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_flags_reach_every_command() {
        let cli = parse(&["tree", "a.ron", "--threads", "3", "--seed", "7"]).unwrap();
        assert_eq!(cli.common.threads, Some(3));
        assert_eq!(cli.common.seed, Some(7));
        assert!(matches!(cli.command, Some(Command::Tree(_))));
        assert!(parse(&["--threads", "0"]).is_err(), "zero threads is refused");
    }
}
