//! The `sylva` command line: run, benchmark and (later) view scenes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

// First, so that its `println!` (a closed stdout is not a panic) is the one every module below sees.
#[macro_use]
mod out;

mod bake;
mod fly;
mod outputs;
mod region;
mod view;

use clap::{Args, CommandFactory, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use outputs::{ANY, MESH, PNG};
use region::{Pictures, parse_region};
use sylva::runtime::SnapshotError;
use sylva::systems::colonize::GRAPH_SCALE;
use sylva::systems::grass::{GrassLayers, species_file};
use sylva::systems::species::{TreeBuilder, TreeStats};
use sylva::systems::terrain::Heightfield;
use sylva::systems::tree::{UpAxis, write_glb, write_obj};
use sylva::vk::Renderer;
use sylva::{MemoryLimit, RenderReport, Report, Scene};

/// Procedural nature at game scale: trees, terrain and grass as ECS entities.
///
/// With no command, flies through the built-in world scene (scenes/world.ron)
/// and writes its last frame to world.png where a Vulkan driver exists.
#[derive(Parser)]
#[command(name = "sylva", version, about, long_about = None, after_help = EXAMPLES)]
struct Cli {
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
  sylva bench scenes/chains.ron --threads 1 --report a.json";

/// Flags every command takes.
#[derive(Args, Clone)]
pub(crate) struct Common {
    /// Worker threads, at most 1024 (default: one per core).
    #[arg(long, global = true, value_parser = clap::value_parser!(u16).range(1..=sylva::runtime::MAX_THREADS as i64))]
    pub(crate) threads: Option<u16>,
    /// World seed, overriding the scene's.
    #[arg(long, global = true)]
    pub(crate) seed: Option<u64>,
    /// Write a JSON report of the run to this file.
    #[arg(long, global = true, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Refuse a scene whose memory estimate is larger, e.g. 8G or 512M, or `none`
    /// (default: 3/4 of this machine's memory).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_memory_limit, default_value = "machine", hide_default_value = true)]
    pub(crate) memory_limit: MemoryLimit,
}

fn parse_memory_limit(s: &str) -> Result<MemoryLimit, String> {
    match s {
        "none" => Ok(MemoryLimit::NONE),
        "machine" => Ok(MemoryLimit::of_machine()),
        _ => sylva::memory::parse_size(s).map(MemoryLimit::bytes),
    }
}

/// Builds `scene` with the common flags' threads and memory limit.
pub(crate) fn build(scene: &Scene, common: &Common) -> Result<sylva::Built, String> {
    sylva::build_within(scene, common.threads.map_or(0, usize::from), common.memory_limit).map_err(|e| e.to_string())
}

/// What a followed scene file gets on every read: `--seed`, and `--cache` for its world.
pub(crate) fn adjust_scene(seed: Option<u64>, cache: Option<PathBuf>) -> impl Fn(&mut Scene) + Send + Sync + 'static {
    move |scene: &mut Scene| {
        if let Some(s) = seed {
            scene.seed = s;
        }
        if let (Some(dir), Some(world)) = (&cache, &mut scene.world) {
            world.cache = Some(dir.clone());
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scene for its configured number of frames.
    Run {
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
    },
    /// Grow a scene's tree, print its statistics and optionally export its mesh.
    Tree {
        /// Scene file with a `tree` section.
        scene: PathBuf,
        /// Write the mesh (metres, Y up): `.glb` (glTF binary) or `.obj`.
        #[arg(long, value_name = "PATH")]
        export: Option<PathBuf>,
        /// Then grow the L-system tree N more times in buffers it has already used and print
        /// the median: a tree's cost once its memory is in use, as in a forest or `benches/trees.rs`.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
        warm: Option<u32>,
    },
    /// Generate a scene's terrain, erode it and optionally write pictures of it;
    /// with `--region`, a rectangle of a world scene's chunks stitched into one map.
    Terrain {
        /// Scene file with a `terrain` section (or a `world` one, with `--region`).
        scene: PathBuf,
        /// Erosion iterations to run (not with `--region`: a world's chunks erode as the scene says).
        #[arg(long, default_value_t = 100)]
        iterations: u32,
        /// Chunks `x0,z0,x1,z1` (inclusive) of a world scene, generated chunk by chunk and stitched.
        #[arg(long, value_name = "X0,Z0,X1,Z1", value_parser = parse_region, allow_hyphen_values = true)]
        region: Option<[i32; 4]>,
        /// Write the final ground heights as a 16-bit grey PNG.
        #[arg(long, value_name = "PATH")]
        heightmap: Option<PathBuf>,
        /// Write each cell's top material as an RGB PNG (water blue).
        #[arg(long, value_name = "PATH")]
        material_map: Option<PathBuf>,
        /// Write a topographic false-colour RGB PNG (water blue).
        #[arg(long, value_name = "PATH")]
        false_colour: Option<PathBuf>,
    },
    /// Bake a scene's grass (every species), print its statistics and optionally save the bake.
    Grass {
        /// Scene file with a `grass` section.
        scene: PathBuf,
        /// Write the baked motion to this file (species k > 0 to `NAME-k.EXT` beside it),
        /// to read back with `run --bake-in` or the scene's `grass.bake_file`.
        #[arg(long, value_name = "PATH")]
        bake: Option<PathBuf>,
    },
    /// Open a window on a scene and fly through it while it runs; saved edits of the file
    /// show at once. Keys: W/S/A/D move, E/C (or Ctrl) up and down, Shift faster, drag to look,
    /// V attractor points, P pause, H key help, PageUp/PageDown previous/next scene of the
    /// folder, F12 screenshot next to the scene, F11 fullscreen, Esc or Q quit. The overlay
    /// shows fps, frame times, what was drawn, a world's chunks and the last reload or its error.
    View {
        /// Scene file (default: the built-in world).
        scene: Option<PathBuf>,
        /// Close the window after this many frames.
        #[arg(long)]
        frames: Option<u64>,
        /// Chunk cache directory, or a store from `sylva bake` (read-only), for a world scene.
        #[arg(long, value_name = "DIR")]
        cache: Option<PathBuf>,
    },
    /// Fly through a world scene at real frame pacing: along the scene's path, or
    /// straight ahead with --speed and --seconds; report streaming and frame times.
    Fly(FlyArgs),
    /// Bake a rectangle of a world's chunks and basin domains into a store ahead of time,
    /// whole or one shard of many (a Kubernetes Indexed Job or Slurm array; see deploy/README.md),
    /// or check a store with --verify.
    Bake(bake::BakeArgs),
    /// List the bundled scenes (scenes/), one line each: what it shows, which thesis figure.
    Scenes,
    /// Print a shell completion script, e.g. `sylva completions bash > /etc/bash_completion.d/sylva`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `sylva man > sylva.1 && man ./sylva.1`.
    Man,
    /// Benchmark a scene: run it and print per-system timings.
    Bench {
        /// Scene file.
        scene: PathBuf,
        /// Frames to run.
        #[arg(long, default_value_t = 300)]
        frames: u32,
        /// Read the grass bakes from this file (written by `sylva grass SCENE --bake PATH`)
        /// instead of baking; overrides the scene's `grass.bake_file`.
        #[arg(long, value_name = "PATH")]
        bake_in: Option<PathBuf>,
    },
}

/// The flags of `sylva fly`.
#[derive(Args, Clone)]
struct FlyArgs {
    /// Scene file with a `world` section (default: the built-in world).
    scene: Option<PathBuf>,
    /// Fly straight ahead at this speed, m/s, instead of the scene's path.
    #[arg(long, value_name = "M/S", value_parser = positive_f32)]
    speed: Option<f32>,
    /// Seconds to fly straight ahead (default 60; with --speed, or for a scene without a path).
    #[arg(long, value_parser = positive_f32)]
    seconds: Option<f32>,
    /// Frame rate the flight is paced at, frames per second.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=1000))]
    hz: u32,
    /// Measure generation and streaming only: no renderer.
    #[arg(long)]
    no_render: bool,
    /// Follow the scene file: a saved edit is rebuilt in the background and flown on in,
    /// reload times and errors printed.
    #[arg(long, requires = "scene")]
    watch: bool,
    /// Write a PNG every this many flight seconds into --out.
    #[arg(long, value_name = "SECONDS", value_parser = positive_f32, conflicts_with = "no_render")]
    screenshot_every: Option<f32>,
    /// Directory of the PNG sequence.
    #[arg(long, value_name = "DIR", default_value = "fly")]
    out: PathBuf,
    /// Write the last frame as a PNG.
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Chunk cache directory (overrides the scene's `world.cache`), or a store
    /// from `sylva bake`, which is only read.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Image width, pixels.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u32).range(1..=16384))]
    width: u32,
    /// Image height, pixels.
    #[arg(long, default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=16384))]
    height: u32,
    /// Set by the bare `sylva` only: its world.png is skipped without a Vulkan driver,
    /// where an explicit --screenshot is an error.
    #[arg(skip)]
    optional_screenshot: bool,
}

fn positive_f32(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number")),
    }
}

fn main() -> ExitCode {
    fixed_mmap_threshold();
    let cli = Cli::parse();
    let result = match cli.command {
        None => {
            println!(
                "sylva: no command given: flying through the built-in world (scenes/world.ron) and writing its last frame to world.png; `sylva --help` lists the commands"
            );
            fly::fly(
                &FlyArgs {
                    scene: None,
                    speed: None,
                    seconds: None,
                    hz: 60,
                    no_render: true,
                    watch: false,
                    screenshot_every: None,
                    out: PathBuf::from("fly"),
                    screenshot: Some(PathBuf::from("world.png")),
                    cache: None,
                    width: 1280,
                    height: 720,
                    optional_screenshot: true,
                },
                &cli.common,
            )
        }
        Some(Command::Fly(args)) => fly::fly(&args, &cli.common),
        Some(Command::Bake(args)) => bake::run(&args, &cli.common),
        Some(Command::Scenes) => {
            list_scenes();
            Ok(())
        }
        Some(Command::Run {
            scene,
            frames,
            resume,
            bake_in,
            save,
            screenshot,
            width,
            height,
        }) => run(
            scene.as_deref(),
            frames,
            &cli.common,
            &Snapshots { resume, save, bake_in },
            false,
            &Screenshot {
                path: screenshot,
                width,
                height,
            },
        ),
        Some(Command::Bench { scene, frames, bake_in }) => run(
            Some(&scene),
            Some(frames),
            &cli.common,
            &Snapshots {
                bake_in,
                ..Snapshots::default()
            },
            true,
            &Screenshot::default(),
        ),
        Some(Command::View { scene, frames, cache }) => view::view(scene.as_deref(), frames, cache, &cli.common),
        Some(Command::Completions { shell }) => {
            completions(shell);
            Ok(())
        }
        Some(Command::Man) => man_page(),
        Some(Command::Tree { scene, export, warm }) => tree(&scene, export.as_deref(), warm, &cli.common),
        Some(Command::Grass { scene, bake }) => grass(&scene, bake.as_deref(), &cli.common),
        Some(Command::Terrain {
            scene,
            iterations,
            region,
            heightmap,
            material_map,
            false_colour,
        }) => {
            let pictures = Pictures {
                heightmap,
                material_map,
                false_colour,
            };
            match region {
                Some(r) => region::terrain_region(&scene, r, &pictures, &cli.common),
                None => terrain(&scene, iterations, &pictures, &cli.common),
            }
        }
    };
    out::exit_code(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    })
}

/// Allocations of 256 KiB and more get their own mapping, returned to the OS when freed.
///
/// glibc raises this threshold whenever such a block is freed, up to 32 MiB; then a
/// world's megabyte-sized chunk buffers, allocated on the generation threads and freed
/// as chunks leave, come from arenas that fragment and keep growing: a 60 s flight
/// ended at 461 MiB resident with the default against 271 MiB with a fixed threshold.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
    unsafe extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: glibc's mallopt only sets an allocator tuning value; it is called
    // before any other thread exists, with a documented parameter and value.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fixed_mmap_threshold() {}

/// Where a run starts from (a snapshot, saved grass bakes) and where it leaves its final state.
#[derive(Default)]
struct Snapshots {
    resume: Option<PathBuf>,
    save: Option<PathBuf>,
    bake_in: Option<PathBuf>,
}

fn run(
    path: Option<&Path>,
    frames: Option<u32>,
    common: &Common,
    snapshots: &Snapshots,
    bench: bool,
    screenshot: &Screenshot,
) -> Result<(), String> {
    outputs::check_all(
        common,
        &[
            ("--save", snapshots.save.as_deref(), ANY),
            ("--screenshot", screenshot.path.as_deref(), PNG),
        ],
    )?;
    // An asked-for screenshot needs a driver: found out before the run, not after it.
    let renderer = match &screenshot.path {
        Some(p) => Some(renderer_for("--screenshot", p, screenshot.width, screenshot.height)?),
        None => None,
    };
    let mut scene = scene_or_default(path, common)?;
    if let Some(bakes) = &snapshots.bake_in {
        let Some(grass) = &mut scene.grass else {
            return Err(format!(
                "--bake-in {}: the scene has no `grass` section",
                bakes.display()
            ));
        };
        grass.bake_file = Some(bakes.clone());
    }
    let frames = frames.unwrap_or(scene.simulation.frames);
    let built = build(&scene, common)?;
    let (mut app, mut world) = (built.app, built.world);
    if let Some(path) = &snapshots.resume {
        app.load_snapshot(path).map_err(|e| match e {
            // Its message names the file already.
            SnapshotError::Io { .. } => e.to_string(),
            e => format!("{}: {e}", path.display()),
        })?;
    }

    let progress = progress_bar(u64::from(frames), &scene.name);
    let t0 = Instant::now();
    if let Some(world) = &mut world {
        // A world streams around the scene's camera; the run starts once its first ring is in.
        let viewer = sylva::Flight::straight(&scene.camera, 1.0, 0.0, 0.0).viewer(0.0);
        world.settle(&mut app, &[viewer], |_| {});
        for _ in 0..frames {
            world.update(&mut app, &[viewer]);
            app.advance(scene.simulation.steps_per_frame);
            progress.inc(1);
        }
    } else {
        // A benchmark measures frames as a renderer would run them, extraction included.
        let run = if bench {
            sylva::simulate
        } else {
            sylva::simulate_headless
        };
        run(&mut app, frames, scene.simulation.steps_per_frame, &mut |_| {
            progress.inc(1)
        });
    }
    let wall = t0.elapsed();
    progress.finish_and_clear();

    if let Some(path) = &snapshots.save {
        app.save_snapshot(path).map_err(|e| e.to_string())?;
        println!("snapshot: {}", path.display());
    }
    let mut report = Report::gather(&app, &scene.name, wall).map_err(|e| e.to_string())?;
    print_summary(&report);
    if bench {
        print_systems(&report);
    }
    report.render = match (renderer, &screenshot.path) {
        (Some(mut renderer), Some(path)) => {
            app.world.resources.insert(sylva::camera_for(&scene, &app));
            Some(render_png(&mut renderer, &app, path, true)?)
        }
        _ => {
            if !bench {
                println!("rendering: off (pass --screenshot PATH to render the last frame)");
            }
            None
        }
    };
    write_report(&report, common)
}

/// Where and how big to render the last frame.
struct Screenshot {
    path: Option<PathBuf>,
    width: u32,
    height: u32,
}

impl Default for Screenshot {
    fn default() -> Self {
        Self {
            path: None,
            width: 1280,
            height: 720,
        }
    }
}

/// A headless renderer for the picture `path` that `flag` asks for: without a
/// Vulkan driver, an error naming the flag and how to get one.
pub(crate) fn renderer_for(flag: &str, path: &Path, width: u32, height: u32) -> Result<Renderer, String> {
    match Renderer::new_headless(width, height) {
        Ok(r) => Ok(r),
        Err(e) if e.is_no_driver() => Err(format!("{flag} {}: {}", path.display(), sylva::vk::NO_DRIVER_HINT)),
        Err(e) => Err(format!("renderer: {e}")),
    }
}

/// A headless renderer; none, after saying how to get a driver, when there is no Vulkan driver.
pub(crate) fn headless(width: u32, height: u32) -> Result<Option<Renderer>, String> {
    match Renderer::new_headless(width, height) {
        Ok(r) => Ok(Some(r)),
        Err(e) if e.is_no_driver() => {
            println!("{}", sylva::vk::NO_DRIVER_HINT);
            Ok(None)
        }
        Err(e) => Err(format!("renderer: {e}")),
    }
}

/// Renders the app's current frame to the PNG `path`, says so, and reports the renderer's totals.
pub(crate) fn render_png(
    renderer: &mut Renderer,
    app: &sylva::runtime::App,
    path: &Path,
    show_points: bool,
) -> Result<RenderReport, String> {
    let frame = sylva::render(renderer, app, show_points).map_err(|e| format!("renderer: {e}"))?;
    renderer.save_png(path).map_err(|e| e.to_string())?;
    let (width, height) = renderer.size();
    println!(
        "screenshot: {} ({}x{}, {} on {}, {} draw calls, {:.1} ms)",
        path.display(),
        width,
        height,
        if frame.instances() == 1 {
            "1 instance".to_owned()
        } else {
            format!("{} instances", frame.instances())
        },
        renderer.device_name(),
        frame.draw_calls,
        frame.frame_ms
    );
    Ok(RenderReport::new(&renderer.stats()))
}

/// Prints `shell`'s completion script.
fn completions(shell: clap_complete::Shell) {
    // Generated whole first: clap_complete panics on a failed write (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "sylva", &mut script);
    out::bytes(&script);
}

/// Prints the man page: the command's own page, then each subcommand's synopsis and options,
/// so that one page documents every flag.
fn man_page() -> Result<(), String> {
    let err = |e: std::io::Error| format!("man page: {e}");
    let mut cli = Cli::command();
    cli.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cli.clone()).render(&mut page).map_err(err)?;
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let man = clap_mangen::Man::new(sub.clone());
        man.render_synopsis_section(&mut page).map_err(err)?;
        man.render_options_section(&mut page).map_err(err)?;
    }
    out::bytes(&page);
    Ok(())
}

/// `n` and `noun`, plural unless `n` is 1 ("1 frame", "2 frames").
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

include!(concat!(env!("OUT_DIR"), "/scenes.rs"));

/// Prints the bundled scenes, each with the first sentence of its comment.
fn list_scenes() {
    let width = BUNDLED.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    for (path, about) in BUNDLED {
        println!("{path:width$}  {about}");
    }
    println!(
        "{} scenes; run one with `sylva run PATH`, look at it with `sylva view PATH`",
        BUNDLED.len()
    );
}

/// The scene at `path`, or the built-in world; the common flags applied.
pub(crate) fn scene_or_default(path: Option<&Path>, common: &Common) -> Result<Scene, String> {
    match path {
        Some(p) => load(p, common),
        None => {
            let mut scene = Scene::world();
            if let Some(seed) = common.seed {
                scene.seed = seed;
            }
            Ok(scene)
        }
    }
}

/// Loads a scene and applies the common flags.
pub(crate) fn load(path: &Path, common: &Common) -> Result<Scene, String> {
    let mut scene = Scene::load(path).map_err(|e| e.to_string())?;
    if let Some(seed) = common.seed {
        scene.seed = seed;
    }
    Ok(scene)
}

pub(crate) fn write_report(report: &Report, common: &Common) -> Result<(), String> {
    if let Some(path) = &common.report {
        report
            .write(path)
            .map_err(|e| format!("{}: cannot write report: {e}", path.display()))?;
        println!("report: {}", path.display());
    }
    Ok(())
}

fn tree(path: &Path, export: Option<&Path>, warm: Option<u32>, common: &Common) -> Result<(), String> {
    outputs::check_all(common, &[("--export", export, MESH)])?;
    let mut scene = load(path, common)?;
    if warm.is_some() && scene.tree.is_none() {
        return Err(format!("{}: --warm needs an L-system `tree` section", path.display()));
    }
    // `tree` shows the finished tree: grow it completely even where the scene grows it over time.
    if let Some(c) = &mut scene.colonize {
        c.iterations_per_step = 0;
    }
    let Some(scale) = scene
        .tree
        .as_ref()
        .map(|t| t.scale)
        .or(scene.colonize.as_ref().map(|_| GRAPH_SCALE))
    else {
        return Err(format!(
            "{}: the scene has no `tree` section (nor a `colonize` one)",
            path.display()
        ));
    };
    let t0 = Instant::now();
    let built = build(&scene, common)?;
    let wall = t0.elapsed();
    let grown = built.tree.expect("a scene with a tree or colonize section grows one");
    let s = &grown.stats;
    println!(
        "{}: {} modules, {} segments, {} chains, {} rings, {} vertices, {} triangles",
        scene.name, s.modules, s.segments, s.chains, s.rings, s.vertices, s.triangles
    );
    println!("  {} (the first tree of this process, in fresh memory)", stages(s));
    if let (Some(runs), Some(t)) = (warm, &scene.tree) {
        let (median, fastest) = grow_warm(&built.app, t, scene.seed, runs)?;
        println!(
            "  {} (median of {runs} warm regrowths; fastest {:.3} ms)",
            stages(&median),
            fastest.total_ms()
        );
    }
    if let Some(out) = export {
        let mut mesh = grown.mesh;
        // Graphs are in turtle units; exported files are in metres.
        for p in &mut mesh.positions {
            *p *= scale;
        }
        // Encoded in memory, then put in place whole: a killed export leaves the old file.
        let mut bytes = Vec::new();
        let glb = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb"));
        let encoded = if glb {
            write_glb(&mesh, UpAxis::Z, &mut bytes)
        } else {
            write_obj(&mesh, UpAxis::Z, &mut bytes)
        };
        encoded.map_err(|e| format!("{}: {e}", out.display()))?;
        sylva::runtime::framed::write_atomic(out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("mesh: {}", out.display());
    }
    let report = Report::gather(&built.app, &scene.name, wall).map_err(|e| e.to_string())?;
    if let Some(c) = report.tree.as_ref().and_then(|t| t.colonize) {
        println!(
            "  colonize: {} attractors ({} left), {} iterations, {} nodes, {}, grow {:.3} ms",
            c.attractors,
            c.attractors_left,
            c.iterations,
            c.nodes,
            c.termination.map_or("still growing".to_owned(), |t| format!("{t:?}")),
            c.grow_ms
        );
    }
    write_report(&report, common)
}

/// A tree's stage times and their total.
fn stages(s: &TreeStats) -> String {
    format!(
        "derive {:.3} ms, interpret {:.3} ms, mesh {:.3} ms, total {:.3} ms",
        s.derive_ms,
        s.interpret_ms,
        s.mesh_ms,
        s.total_ms()
    )
}

/// Grows `t` `runs` times on `app`'s pool in one [`TreeBuilder`], after one growth that
/// allocates its buffers, and returns the stats of the runs with the median and the least total.
fn grow_warm(
    app: &sylva::runtime::App,
    t: &sylva::TreeScene,
    seed: u64,
    runs: u32,
) -> Result<(TreeStats, TreeStats), String> {
    let mut builder = TreeBuilder::new();
    let mut grow = || builder.grow(&t.lsystem, &t.radii, &t.mesh, seed).map(|g| g.stats);
    let mut stats: Vec<TreeStats> = app
        .in_pool(|| (0..=runs).map(|_| grow()).collect::<Result<_, _>>())
        .map_err(|e| e.to_string())?;
    stats.remove(0);
    stats.sort_by(|a, b| a.total_ms().total_cmp(&b.total_ms()));
    Ok((stats[stats.len() / 2], stats[0]))
}

fn terrain(path: &Path, iterations: u32, pictures: &Pictures, common: &Common) -> Result<(), String> {
    outputs::check_all(common, &pictures.outputs())?;
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
    let progress = progress_bar(u64::from(iterations), &scene.name);
    sylva::simulate_headless(&mut app, iterations, 1, |_| progress.inc(1));
    progress.finish_and_clear();
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
            region::print_drainage(d);
        }
    }
    if pictures.any() {
        let field = Heightfield::from_world(&app.world.entities).ok_or("the terrain has no chunks")?;
        pictures.write(&field)?;
    }
    write_report(&report, common)
}

fn grass(path: &Path, bake: Option<&Path>, common: &Common) -> Result<(), String> {
    outputs::check_all(common, &[("--bake", bake, ANY)])?;
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
        if let Some(out) = bake {
            let out = species_file(out, k);
            b.save(&out).map_err(|e| e.to_string())?;
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

/// A spinner on a terminal (hidden otherwise) for work without a known length.
pub(crate) fn spinner(what: &str) -> ProgressBar {
    if !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let s = ProgressBar::new_spinner();
    s.set_style(ProgressStyle::with_template("{prefix} {spinner} {msg}").expect("static template is valid"));
    s.set_prefix(what.to_owned());
    s.enable_steady_tick(std::time::Duration::from_millis(100));
    s
}

pub(crate) fn progress_bar(frames: u64, scene: &str) -> ProgressBar {
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

pub(crate) fn print_summary(r: &Report) {
    println!(
        "{}: {} ({}, {:.2} s simulated) in {:.2} s on {}",
        r.scene,
        count(r.frames, "frame"),
        count(r.steps, "step"),
        r.sim_seconds,
        r.wall_ms / 1e3,
        count(r.threads as u64, "thread")
    );
    if r.resumed_from_step > 0 {
        println!(
            "  resumed from a snapshot at frame {} (step {})",
            r.resumed_from_frame, r.resumed_from_step
        );
    }
    let entities: Vec<String> = r
        .entities
        .iter()
        .filter(|(kind, n)| **n > 0 && kind.as_str() != "total")
        // The report's plural keys, singular for one: "1 tree", "2 trees".
        .map(|(kind, n)| match kind.strip_suffix('s') {
            Some(one) => count(*n as u64, one),
            None => format!("{n} {kind}"),
        })
        .collect();
    println!(
        "  {}; frame ms mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
        if entities.is_empty() {
            "no entities".to_owned()
        } else {
            entities.join(", ")
        },
        r.frame_ms.mean,
        r.frame_ms.p50,
        r.frame_ms.p99,
        r.frame_ms.max
    );
    if r.particles.particles > 0 {
        println!(
            "  {:.1} M particle updates/s, {:.1} M springs/s",
            r.particles.updates_per_s / 1e6,
            r.particles.springs_per_s / 1e6
        );
    }
    if let Some(g) = &r.grass {
        println!(
            "  grass: {} blades, {} baked frames in {:.0} ms, {} live at the end",
            g.blades, g.baked_frames, g.bake_ms, g.live_blades
        );
    }
    println!("  state hash {}", r.state_hash);
}

fn print_systems(r: &Report) {
    println!(
        "  {:<24} {:>8} {:>12} {:>10} {:>10} {:>10}",
        "system", "calls", "total ms", "mean ms", "p50 ms", "p99 ms"
    );
    for (name, s) in &r.systems {
        println!(
            "  {:<24} {:>8} {:>12.3} {:>10.4} {:>10.4} {:>10.4}",
            name, s.calls, s.total_ms, s.mean_ms, s.p50_ms, s.p99_ms
        );
    }
    if let Some(rss) = r.peak_rss_bytes {
        println!("  peak RSS {:.1} MiB", rss as f64 / (1024.0 * 1024.0));
    }
}
