//! `sylva fly`: a viewer flown through a streamed world at real frame pacing,
//! measuring streaming, frame times and memory (the report's `streaming`). With
//! `--watch` it follows the scene file as `view` does: a saved edit is rebuilt in the
//! background and swapped in while the flight goes on (its chunks stream in again, and
//! the report's streaming counts start over with it).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use sylva::live::{LiveScene, Reload};
use sylva::runtime::App;
use sylva::runtime::metrics::ThreadTimes;
use sylva::runtime::stream::Viewer;
use sylva::systems::world::{DrawParams, WorldParams};
use sylva::vk::Renderer;
use sylva::{Built, Flight, FlightLog, RenderReport, Report, Scene, StreamingReport, WorldStreamer};

use crate::cli::Common;
use crate::cli::common::{adjust_scene, build, cache_failures, positive_f32, scene_or_default, write_report};
use crate::cli::output_paths::{self, SCREENSHOT};
use crate::cli::progress;
use crate::cli::screenshot::{headless, render_png, renderer_for, write_png};
use crate::cli::summary::print_summary;

/// The flags of `sylva fly`.
#[derive(Parser, Clone)]
#[command(name = "fly")]
pub(crate) struct FlyArgs {
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

/// The line the bare `sylva` flies: `sylva fly` with these flags, every other one at its default.
const BARE: [&str; 3] = ["--no-render", "--screenshot", "world.png"];

impl FlyArgs {
    /// The flight of the bare `sylva`: the built-in world along its path, unrendered, its
    /// last frame written to world.png where a Vulkan driver exists.
    pub(crate) fn bare() -> FlyArgs {
        let mut args = FlyArgs::parse_from(std::iter::once("fly").chain(BARE));
        args.optional_screenshot = true;
        args
    }
}

/// Seconds a straight flight lasts when only --speed is given.
const DEFAULT_SECONDS: f32 = 60.0;

/// Runs `sylva fly`.
pub(crate) fn run(args: &FlyArgs, common: &Common) -> Result<(), String> {
    output_paths::check_all(common, &[("--screenshot", args.screenshot.as_deref(), SCREENSHOT)])?;
    let mut scene = scene_or_default(args.scene.as_deref(), common)?;
    if args.no_render && args.screenshot.is_none() {
        // Nothing is drawn: no chunk derives render data (docs/design/ecology.md, "Drawing a
        // dense world"); generation and its cache key do not depend on it.
        if let Some(w) = &mut scene.world {
            w.draw = DrawParams {
                trees_per_hectare: 0.0,
                blades_per_m2: 0.0,
            };
        }
    }
    let Some(params) = &scene.world else {
        return Err(format!("{}: the scene has no `world` section", scene.name));
    };
    let mut shots = Shots::new(args)?;
    let mut renderer = flight_renderer(args)?;
    let started = Instant::now();
    println!("{}: growing species and baking grass", scene.name);
    let (mut live, mut built) = open(args, &scene, common)?;
    if let (Some(dir), None) = (&args.cache, &live) {
        let world = built.world.take().expect("a world scene builds a world");
        built.world = Some(world.with_cache(dir).map_err(|e| e.to_string())?);
    }
    let (app, world) = parts(&mut built)?;
    print_world(world, params.generation_threads());
    let flight = flight_path(args, params, &scene);
    let mut log = FlightLog::default();
    let start = flight.viewer(0.0);
    app.world.resources.insert(Flight::camera(&scene.camera, &start));
    warm_up(world, app, start, &scene.name, &mut log);
    if let Some(r) = &mut renderer {
        first_frame(r, app, &mut log)?;
    }
    let frames = (flight.seconds() * args.hz as f32).ceil().max(1.0) as u64;
    let bar = progress::bar(frames, &scene.name, "frames");
    let dt = 1.0 / f64::from(args.hz);
    let paced = Instant::now();
    for k in 0..frames {
        // Real pacing: a frame starts no earlier than its time on the clock.
        let due = paced + Duration::from_secs_f64(k as f64 * dt);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let frame_start = Instant::now();
        let t = (k as f64 * dt) as f32;
        if let Some(live) = &mut live {
            bar.suspend(|| reload(live, &mut built));
        }
        let (app, world) = parts(&mut built)?;
        let viewer = flight.viewer(t);
        app.world.resources.insert(Flight::camera(&scene.camera, &viewer));
        let stream = world.update(app, &[viewer]);
        app.update(dt);
        if let Some(r) = &mut renderer {
            // The thread's times are read here, not in every render: only a flight reports them.
            let before = ThreadTimes::now();
            let drawn = sylva::render(r, app, false).map_err(|e| format!("renderer: {e}"))?;
            let split = before.zip(ThreadTimes::now()).map(|(b, a)| a.since(b));
            let cpu = Duration::from_secs_f64((drawn.frame_ms - drawn.gpu_wait_ms).max(0.0) / 1e3);
            log.rendered(cpu, split);
            shots.maybe_write(r, t)?;
        }
        log.record(frame_start.elapsed(), &stream, world.stats().evicted);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (app, world) = parts(&mut built)?;
    let name = live.as_ref().map_or(&scene.name, |l| &l.scene().name);
    let mut report = Report::gather(app, name, started.elapsed()).map_err(|e| e.to_string())?;
    report.streaming = Some(StreamingReport::new(world, &log));
    print_summary(&report);
    print_streaming(report.streaming.as_ref().expect("set above"), world);
    report.render = last_picture(args, renderer.as_ref(), app)?;
    write_report(&report, common)?;
    cache_failures(world, args.cache.is_some())
}

/// Loads the first ring of chunks around `start` behind a spinner, then starts the latencies
/// afresh: the flight measures streaming, not loading.
fn warm_up(world: &mut WorldStreamer, app: &mut App, start: Viewer, name: &str, log: &mut FlightLog) {
    let loading = progress::spinner(&format!("{name}: loading the first ring of chunks"));
    let warmup = world.settle(app, &[start], |n| loading.set_message(format!("{n} chunks installed")));
    loading.finish_and_clear();
    log.warmed_up(warmup);
    world.reset_latencies();
    println!("  first ring: {} chunks in {:.0} ms", world.stats().installed, warmup);
}

/// Renders the first frame, which uploads the whole first ring, and waits for the GPU to draw
/// it: loading, like the ring itself, so it is timed apart and the flight's frame times show
/// the flight's hitches, not the load.
fn first_frame(renderer: &mut Renderer, app: &App, log: &mut FlightLog) -> Result<(), String> {
    let started = Instant::now();
    sylva::render(renderer, app, false).map_err(|e| format!("renderer: {e}"))?;
    renderer.finish().map_err(|e| format!("renderer: {e}"))?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    log.first_frame_ms = Some(ms);
    println!("  first frame (the ring uploaded): {ms:.0} ms");
    Ok(())
}

/// The renderer of the flight: asked-for pictures need a driver, found out before the
/// world is built (the bare `sylva`'s world.png is skipped without one).
fn flight_renderer(args: &FlyArgs) -> Result<Option<Renderer>, String> {
    let asked = match (&args.screenshot, args.screenshot_every) {
        _ if args.optional_screenshot => None,
        (Some(path), _) => Some(("--screenshot", path.as_path())),
        (None, Some(_)) => Some(("--screenshot-every", args.out.as_path())),
        (None, None) => None,
    };
    Ok(match asked {
        Some((flag, path)) if args.no_render => {
            // No renderer runs during a --no-render flight: only probe for the driver.
            drop(renderer_for(flag, path, 1, 1)?);
            None
        }
        _ if args.no_render => None,
        Some((flag, path)) => Some(renderer_for(flag, path, args.width, args.height)?),
        None => headless(args.width, args.height)?,
    })
}

/// The scene's path, or a straight one with `--speed` or `--seconds`.
fn flight_path(args: &FlyArgs, params: &WorldParams, scene: &Scene) -> Flight {
    match (args.speed, args.seconds) {
        (None, None) => Flight::of_scene(&params.flight, &scene.camera, DEFAULT_SECONDS),
        (speed, seconds) => Flight::straight(
            &scene.camera,
            speed.unwrap_or(params.flight.speed),
            seconds.unwrap_or(DEFAULT_SECONDS),
            params.flight.pitch_degrees,
        ),
    }
}

/// Writes `--screenshot` (the flight's renderer already holds the last frame; a flight
/// without one renders it now) and returns the render report.
fn last_picture(args: &FlyArgs, renderer: Option<&Renderer>, app: &App) -> Result<Option<RenderReport>, String> {
    let report = match (&args.screenshot, renderer) {
        (Some(path), Some(r)) => {
            write_png(r, path)?;
            println!("screenshot: {}", path.display());
            Some(RenderReport::new(&r.stats()))
        }
        (Some(path), None) => {
            let r = if args.optional_screenshot {
                headless(args.width, args.height)?
            } else {
                Some(renderer_for("--screenshot", path, args.width, args.height)?)
            };
            match r {
                Some(mut r) => Some(render_png(&mut r, app, path, false)?),
                None => None,
            }
        }
        (None, r) => r.map(|r| RenderReport::new(&r.stats())),
    };
    if let Some(r) = &report {
        let l = &r.instances_by_layer;
        println!(
            "  last frame: {} trees and {} shrubs drawn from their models ({} segments, {} leaves), {} carded, {} grass \
             blades; {} draw calls",
            l.trees, l.shrubs, l.cylinders, l.leaves, l.cards, l.grass_blades, r.draw_calls_last
        );
    }
    Ok(report)
}

/// The scene built, and with `--watch` followed on disk (the cache flag then goes into
/// every version read).
fn open(args: &FlyArgs, scene: &Scene, common: &Common) -> Result<(Option<LiveScene>, Built), String> {
    let Some(path) = args.scene.as_deref().filter(|_| args.watch) else {
        return Ok((None, build(scene, common)?));
    };
    let adjust = adjust_scene(common.seed, args.cache.clone());
    let threads = common.thread_count();
    let (live, built) = LiveScene::open(path, threads, common.memory_limit, adjust).map_err(|e| e.to_string())?;
    println!("{}: watching {} for changes", scene.name, path.display());
    Ok((Some(live), built))
}

/// The app and its world; an error once a reloaded scene has no world.
fn parts(built: &mut Built) -> Result<(&mut sylva::runtime::App, &mut WorldStreamer), String> {
    match built {
        Built {
            app,
            world: Some(world),
            ..
        } => Ok((app, world)),
        Built { .. } => Err("the scene no longer has a `world` section".to_owned()),
    }
}

/// Swaps in a rebuilt scene (its world streams in around the flight from then on) and says
/// how long it took, or why it does not build (the flight goes on in the last version).
fn reload(live: &mut LiveScene, built: &mut Built) {
    match live.poll(built) {
        Reload::Reloaded { millis } => println!("{}: reloaded in {millis:.0} ms", live.scene().name),
        Reload::Failed(e) => eprintln!("error: {e}\n  (flying on in the last version that built)"),
        Reload::Unchanged | Reload::Rebuilding => {}
    }
}

/// What the world grew and where its chunks come from.
fn print_world(world: &WorldStreamer, threads: usize) {
    let content = world.content();
    println!(
        "  {} tree species ({} variants) in {:.0} ms, {} grass species baked in {:.0} ms; {threads} generation threads",
        content.trees.len(),
        content.trees.iter().map(|t| t.variants.len()).sum::<usize>(),
        content.grow_ms,
        content.grass.len(),
        content.bake_ms,
    );
    if let Some(store) = world.cache().filter(|c| c.is_read_only()) {
        println!(
            "  reading the baked store {} (read-only: what it lacks is generated, not written)",
            store.dir().display()
        );
    }
}

/// The PNG sequence of `--screenshot-every`.
struct Shots<'a> {
    every: Option<f32>,
    dir: &'a Path,
    next: f32,
    count: u32,
}

impl<'a> Shots<'a> {
    fn new(args: &'a FlyArgs) -> Result<Self, String> {
        if args.screenshot_every.is_some() {
            std::fs::create_dir_all(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
        }
        Ok(Self {
            every: args.screenshot_every,
            dir: &args.out,
            next: 0.0,
            count: 0,
        })
    }

    fn maybe_write(&mut self, r: &Renderer, t: f32) -> Result<(), String> {
        let Some(every) = self.every else {
            return Ok(());
        };
        if t + 1e-4 < self.next {
            return Ok(());
        }
        let path = self.dir.join(format!("frame-{:04}.png", self.count));
        r.save_png(&path).map_err(|e| e.to_string())?;
        self.count += 1;
        self.next += every;
        Ok(())
    }
}

fn print_streaming(s: &StreamingReport, world: &WorldStreamer) {
    let c = &s.chunks;
    println!(
        "  chunks: {} requested, {} generated, {} from cache ({} rejected, {} not written), {} installed, {} evicted, {} cancelled, {} dropped; at most {} resident",
        c.requested,
        c.generated,
        c.from_cache,
        c.cache_rejected,
        c.cache_write_failed,
        c.installed,
        c.evicted,
        c.cancelled,
        c.dropped,
        s.resident_max
    );
    if let Some(d) = &s.domains {
        println!(
            "  basin domains: {} solved, {} from cache ({} rejected, {} not written)",
            d.solved, d.from_cache, d.rejected, d.write_failed
        );
    }
    println!(
        "  ready ms p50 {:.1} p95 {:.1} max {:.1}; generate ms p50 {:.1} (terrain {:.1}, ecology {:.1}, trees {:.1}, grass {:.1} per chunk)",
        s.ready_ms.p50,
        s.ready_ms.p95,
        s.ready_ms.max,
        s.generate_ms.p50,
        s.stages_ms.terrain,
        s.stages_ms.ecology,
        s.stages_ms.trees,
        s.stages_ms.grass
    );
    println!(
        "  per chunk: {:.0} KB payload, {:.0} canopy trees, {:.0} understory shrubs; {:.1} MB resident per chunk",
        s.per_chunk.payload_bytes / 1e3,
        s.per_chunk.canopy,
        s.per_chunk.understory,
        s.host_bytes_per_resident_chunk.unwrap_or(0) as f64 / 1e6
    );
    println!(
        "  frame ms p50 {:.2} p99 {:.2} max {:.2}; install ms p50 {:.3} p99 {:.3} max {:.3}; {} hitches, {} frames with holes of {}",
        s.frame_ms.p50,
        s.frame_ms.p99,
        s.frame_ms.max,
        s.install_ms_per_frame.p50,
        s.install_ms_per_frame.p99,
        s.install_ms_per_frame.max,
        s.hitches,
        s.holes,
        s.frames
    );
    if let Some(cpu) = &s.render_cpu_ms {
        println!(
            "  render CPU ms p50 {:.2} p99 {:.2} max {:.2} (waits for the GPU not counted)",
            cpu.p50, cpu.p99, cpu.max
        );
    }
    if let (Some(on), Some(queued)) = (&s.render_on_cpu_ms, &s.render_queued_ms) {
        println!(
            "    of it on a core p50 {:.2} p99 {:.2} max {:.2}, queued for one p50 {:.2} p99 {:.2} max {:.2}",
            on.p50, on.p99, on.max, queued.p50, queued.p99, queued.max
        );
    }
    let mib = |b: Option<u64>| b.map_or("?".to_owned(), |b| format!("{:.0} MiB", b as f64 / (1 << 20) as f64));
    println!(
        "  RSS first ring {}, window full {}, end {}, max {}; radius {:.0} m (evict {:.0} m)",
        mib(s.rss_bytes.first_ring),
        mib(s.rss_bytes.after_warmup),
        mib(s.rss_bytes.end),
        mib(Some(s.rss_bytes.max)),
        world.settings().load_radius,
        world.settings().evict_radius
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};

    /// The bare `sylva` is `sylva fly` with three flags: every other one is clap's default.
    #[test]
    fn the_bare_flight_takes_the_defaults_of_fly() {
        let bare = FlyArgs::bare();
        let Some(Command::Fly(fly)) = parse(&["fly"]).unwrap().command else {
            panic!("fly parses as fly");
        };
        assert!(bare.no_render && bare.optional_screenshot && !fly.optional_screenshot);
        assert_eq!(bare.screenshot.as_deref(), Some(Path::new("world.png")));
        assert_eq!((bare.speed, bare.seconds), (None, None), "the scene's own path");
        assert_eq!((bare.hz, bare.width, bare.height), (60, 1280, 720));
        assert_eq!(
            (bare.hz, bare.width, bare.height, &bare.out),
            (fly.hz, fly.width, fly.height, &fly.out)
        );
    }

    #[test]
    fn watching_needs_a_scene_file() {
        assert!(parse(&["fly", "--watch"]).is_err());
        assert!(parse(&["fly", "w.ron", "--watch"]).is_ok());
        assert!(parse(&["fly", "--no-render", "--screenshot-every", "1"]).is_err());
    }
}
