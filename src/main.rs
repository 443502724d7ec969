//! The `sylva` command line: run, benchmark and (later) view scenes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sylva::{Report, Scene};

/// Procedural nature at game scale: trees, terrain and grass as ECS entities.
///
/// With no command, runs the built-in showcase scene.
#[derive(Parser)]
#[command(name = "sylva", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    common: Common,
}

/// Flags every command takes.
#[derive(Args, Clone)]
struct Common {
    /// Worker threads (default: one per core).
    #[arg(long, global = true, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// World seed, overriding the scene's.
    #[arg(long, global = true)]
    seed: Option<u64>,
    /// Write a JSON report of the run to this file.
    #[arg(long, global = true, value_name = "PATH")]
    report: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene for its configured number of frames.
    Run {
        /// Scene file (default: the built-in showcase).
        scene: Option<PathBuf>,
        /// Frames to run, overriding the scene's `simulation.frames`.
        #[arg(long)]
        frames: Option<u32>,
        /// Continue from a snapshot written by `--save` (same scene) instead of the scene's start.
        #[arg(long, value_name = "PATH")]
        resume: Option<PathBuf>,
        /// Write a snapshot of the final state, to continue later with `--resume`.
        #[arg(long, value_name = "PATH")]
        save: Option<PathBuf>,
    },
    /// Benchmark a scene: run it and print per-system timings.
    Bench {
        /// Scene file.
        scene: PathBuf,
        /// Frames to run.
        #[arg(long, default_value_t = 300)]
        frames: u32,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run(None, None, &cli.common, &Snapshots::default(), false),
        Some(Command::Run {
            scene,
            frames,
            resume,
            save,
        }) => run(
            scene.as_deref(),
            frames,
            &cli.common,
            &Snapshots { resume, save },
            false,
        ),
        Some(Command::Bench { scene, frames }) => {
            run(Some(&scene), Some(frames), &cli.common, &Snapshots::default(), true)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Where a run starts from and where it leaves its final state.
#[derive(Default)]
struct Snapshots {
    resume: Option<PathBuf>,
    save: Option<PathBuf>,
}

fn run(
    path: Option<&Path>,
    frames: Option<u32>,
    common: &Common,
    snapshots: &Snapshots,
    bench: bool,
) -> Result<(), String> {
    let mut scene = match path {
        Some(p) => Scene::load(p).map_err(|e| e.to_string())?,
        None => Scene::showcase(),
    };
    if let Some(seed) = common.seed {
        scene.seed = seed;
    }
    let frames = frames.unwrap_or(scene.simulation.frames);
    let threads = common.threads.map_or(0, usize::from);
    let mut app = sylva::build(&scene, threads).map_err(|e| e.to_string())?;
    if let Some(path) = &snapshots.resume {
        app.load_snapshot(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }

    let progress = progress_bar(u64::from(frames), &scene.name);
    let t0 = Instant::now();
    sylva::simulate(&mut app, frames, scene.simulation.steps_per_frame, |_| progress.inc(1));
    let wall = t0.elapsed();
    progress.finish_and_clear();

    if let Some(path) = &snapshots.save {
        app.save_snapshot(path).map_err(|e| e.to_string())?;
        println!("snapshot: {}", path.display());
    }
    let report = Report::gather(&app, &scene.name, wall).map_err(|e| e.to_string())?;
    print_summary(&report);
    if bench {
        print_systems(&report);
    }
    println!("rendering: off (this build has no renderer yet; the Vulkan renderer is issue #6)");
    if let Some(path) = &common.report {
        report
            .write(path)
            .map_err(|e| format!("{}: cannot write report: {e}", path.display()))?;
        println!("report: {}", path.display());
    }
    Ok(())
}

fn progress_bar(frames: u64, scene: &str) -> ProgressBar {
    if !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(frames), ProgressDrawTarget::stdout());
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} frames, {per_sec}, eta {eta}")
            .expect("static template is valid")
            .progress_chars("=> "),
    );
    bar.set_prefix(scene.to_owned());
    bar
}

fn print_summary(r: &Report) {
    println!(
        "{}: {} frames ({} steps, {:.2} s simulated) in {:.2} s on {} threads",
        r.scene,
        r.frames,
        r.steps,
        r.sim_seconds,
        r.wall_ms / 1e3,
        r.threads
    );
    println!(
        "  {} particles, {} springs; frame ms mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
        r.particles.particles, r.particles.springs, r.frame_ms.mean, r.frame_ms.p50, r.frame_ms.p99, r.frame_ms.max
    );
    println!(
        "  {:.1} M particle updates/s, {:.1} M springs/s; state hash {}",
        r.particles.updates_per_s / 1e6,
        r.particles.springs_per_s / 1e6,
        r.state_hash
    );
}

fn print_systems(r: &Report) {
    println!(
        "  {:<24} {:>8} {:>12} {:>10} {:>10}",
        "system", "calls", "total ms", "mean ms", "p99 ms"
    );
    for (name, s) in &r.systems {
        println!(
            "  {:<24} {:>8} {:>12.3} {:>10.4} {:>10.4}",
            name, s.calls, s.total_ms, s.mean_ms, s.p99_ms
        );
    }
    if let Some(rss) = r.peak_rss_bytes {
        println!("  peak RSS {:.1} MiB", rss as f64 / (1024.0 * 1024.0));
    }
}
