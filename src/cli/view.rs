//! `sylva view`: a scene in a window, followed on disk (saved edits are rebuilt in the
//! background and swapped in), with an overlay of what the frames cost, the last reload or
//! its error, and the keys (H); PageUp/PageDown open the previous/next scene of the folder.

use std::path::{Path, PathBuf};
use std::time::Instant;

use sylva::live::{LiveScene, Reload, sibling};
use sylva::vk::window::{Controls, KEYS};
use sylva::vk::{FrameStats, OverlayLine, RenderError, Renderer};
use sylva::{Report, Scene};

use clap::Args;

use crate::cli::Common;
use crate::cli::common::{adjust_scene, build, cache_failures, count, write_report};
use crate::cli::output_paths;
use crate::cli::summary::print_summary;

/// Seconds the frame rate is averaged over (the overlay's numbers change this often).
const FPS_WINDOW: f64 = 0.5;

/// The flags of `sylva view`.
#[derive(Args)]
pub(crate) struct ViewArgs {
    /// Scene file (default: the built-in world).
    scene: Option<PathBuf>,
    /// Close the window after this many frames.
    #[arg(long)]
    frames: Option<u64>,
    /// Chunk cache directory, or a store from `sylva bake` (read-only), for a world scene.
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
}

/// Runs a scene in a window until it is closed; without a Vulkan driver, says so.
pub(crate) fn run(args: &ViewArgs, common: &Common) -> Result<(), String> {
    let (path, frames, cache) = (args.scene.as_deref(), args.frames, args.cache.clone());
    output_paths::check_all(common, &[])?;
    let started = Instant::now();
    let (live, mut built, scene) = open_view(path, cache, common)?;
    // One extraction first, so a scene without a camera starts framed on its content.
    built.app.update(0.0);
    let camera = sylva::camera_for(&scene, &built.app);
    let mut session = Session {
        live,
        built,
        name: scene.name.clone(),
        // F12 writes NAME-N.png next to the scene file (the built-in world: here).
        shot_dir: path.and_then(Path::parent).unwrap_or(Path::new("")).to_owned(),
        shots: 0,
        switching: false,
        status: Vec::new(),
        fps: Fps::default(),
    };
    let title = format!("sylva: {}", scene.name);
    let result = sylva::vk::window::run(&title, camera, frames, |renderer, controls, dt| {
        session.frame(renderer, controls, dt)
    });
    match result {
        Err(e) if e.is_no_driver() => {
            println!("{}", sylva::vk::NO_DRIVER_HINT);
            Ok(())
        }
        Err(e) => Err(e.to_string()),
        Ok(()) => {
            let report =
                Report::gather(&session.built.app, &session.name, started.elapsed()).map_err(|e| e.to_string())?;
            print_summary(&report);
            write_report(&report, common)?;
            match &session.built.world {
                Some(world) => cache_failures(world, args.cache.is_some()),
                None => Ok(()),
            }
        }
    }
}

/// What the viewer keeps between frames.
struct Session {
    live: Option<LiveScene>,
    built: sylva::Built,
    /// The scene shown.
    name: String,
    shot_dir: PathBuf,
    shots: u32,
    /// PageUp/PageDown asked for another scene, which is being built.
    switching: bool,
    /// The last reload's outcome, for the overlay.
    status: Vec<OverlayLine>,
    fps: Fps,
}

impl Session {
    /// One frame: reloads, streaming, a simulation step (unless paused), the overlay, the render.
    fn frame(&mut self, renderer: &mut Renderer, controls: &mut Controls, dt: f64) -> Result<FrameStats, RenderError> {
        self.step_scene(controls.step);
        self.poll(controls);
        let app = &mut self.built.app;
        app.world.resources.insert(controls.camera);
        if let Some(world) = &mut self.built.world {
            let c = controls.camera;
            let viewer = sylva::runtime::stream::Viewer {
                position: c.position,
                forward: c.target - c.position,
            };
            world.update(app, &[viewer]);
        }
        // Paused: the frame systems still run, with no step, so nothing is re-extracted.
        app.update(if controls.paused { 0.0 } else { dt });
        let last = renderer.stats().last;
        self.fps.add(last.frame_ms);
        renderer.set_overlay(&self.overlay(last, controls));
        let stats = sylva::render(renderer, &self.built.app, controls.show_points)?;
        if controls.screenshot {
            self.shots += 1;
            let path = self.shot_dir.join(format!("{}-{}.png", self.name, self.shots));
            match renderer.save_png(&path) {
                Ok(()) => println!("screenshot: {}", path.display()),
                Err(e) => eprintln!("error: screenshot {}: {e}", path.display()),
            }
        }
        Ok(stats)
    }

    /// PageUp (−1) or PageDown (+1): starts building the previous or next scene of the folder.
    fn step_scene(&mut self, step: i32) {
        let Some(live) = self.live.as_mut().filter(|_| step != 0) else {
            return;
        };
        let Some(next) = sibling(live.path(), step) else {
            return;
        };
        println!("opening {}", next.display());
        self.switching = true;
        self.status = vec![OverlayLine::text(format!("opening {}", next.display()))];
        if let Reload::Failed(e) = live.switch(&next) {
            self.failed(&e);
        }
    }

    /// Swaps in a finished rebuild; a new scene gets its title, and its own framing when it
    /// names no camera (else the camera stays where it is).
    fn poll(&mut self, controls: &mut Controls) {
        let Some(live) = &mut self.live else {
            return;
        };
        match live.poll(&mut self.built) {
            Reload::Reloaded { millis } => {
                let scene = live.scene();
                println!("{}: reloaded in {millis:.0} ms", scene.name);
                self.status = vec![OverlayLine::text(format!("{}: reloaded in {millis:.0} ms", scene.name))];
                if std::mem::take(&mut self.switching) {
                    self.name.clone_from(&scene.name);
                    controls.title = format!("sylva: {}", scene.name);
                    if sylva::framed_on_content(scene) {
                        self.built.app.update(0.0);
                        controls.camera = sylva::camera_for(scene, &self.built.app);
                    }
                }
            }
            Reload::Failed(e) => self.failed(&e),
            Reload::Unchanged | Reload::Rebuilding => {}
        }
    }

    /// A scene that does not read or build: said in the terminal and, in red, in the window.
    fn failed(&mut self, error: &str) {
        eprintln!("error: {error}\n  (showing the last version that built)");
        self.switching = false;
        self.status = error.lines().map(OverlayLine::error).collect();
        self.status
            .push(OverlayLine::error("(showing the last version that built)"));
    }

    /// The overlay's lines: the scene and its state, what the last frame cost, the world's
    /// chunks, the last reload, and the keys when asked for.
    fn overlay(&self, last: FrameStats, controls: &Controls) -> Vec<OverlayLine> {
        let paused = if controls.paused { "  PAUSED (P)" } else { "" };
        let mut lines = vec![
            OverlayLine::text(format!("{}{paused}", self.name)),
            OverlayLine::text(format!(
                "{:.1} fps  {:.1} ms a frame  render {:.1} ms",
                self.fps.shown.0, self.fps.shown.1, self.fps.shown.2
            )),
            OverlayLine::text(format!(
                "{}, {}",
                count(last.instances(), "instance"),
                count(last.draw_calls, "draw call")
            )),
        ];
        if let Some(world) = &self.built.world {
            lines.push(OverlayLine::text(format!(
                "chunks: {} resident, {} generating",
                world.resident(),
                world.generating()
            )));
        }
        lines.extend(self.status.iter().cloned());
        if controls.help {
            lines.push(OverlayLine::text(""));
            lines.extend(KEYS.iter().map(|k| OverlayLine::text(*k)));
        } else {
            lines.push(OverlayLine::text("H: keys"));
        }
        lines
    }
}

/// Frame rate and times averaged over [`FPS_WINDOW`] of wall time (the window's frame
/// steps are capped, so they would miss slow frames): the shown numbers and the window filling.
#[derive(Default)]
struct Fps {
    /// Frames per second, ms per frame, render ms per frame.
    shown: (f64, f64, f64),
    since: Option<Instant>,
    render_ms: f64,
    frames: u32,
}

impl Fps {
    /// One more frame, whose render took `render_ms`.
    fn add(&mut self, render_ms: f64) {
        let since = *self.since.get_or_insert_with(Instant::now);
        self.render_ms += render_ms;
        self.frames += 1;
        let seconds = since.elapsed().as_secs_f64();
        if seconds >= FPS_WINDOW {
            let n = f64::from(self.frames);
            self.shown = (n / seconds, seconds * 1e3 / n, self.render_ms / n);
            (self.since, self.render_ms, self.frames) = (Some(Instant::now()), 0.0, 0);
        }
    }
}

/// The scene `view` shows: a scene file followed on disk (saved edits are rebuilt in the
/// background and swapped in), or the built-in world; the command line's overrides applied
/// to every version read.
fn open_view(
    path: Option<&Path>,
    cache: Option<PathBuf>,
    common: &Common,
) -> Result<(Option<LiveScene>, sylva::Built, Scene), String> {
    let cache_given = cache.is_some();
    let adjust = adjust_scene(common.seed, cache);
    let threads = common.thread_count();
    let (live, built, scene) = match path {
        Some(p) => {
            let (live, built) = LiveScene::open(p, threads, common.memory_limit, adjust).map_err(|e| e.to_string())?;
            println!("{}: watching {} for changes", live.scene().name, p.display());
            let scene = live.scene().clone();
            (Some(live), built, scene)
        }
        None => {
            let mut scene = Scene::world();
            adjust(&mut scene);
            (None, build(&scene, common)?, scene)
        }
    };
    if cache_given && scene.world.is_none() {
        return Err(format!("{}: --cache needs a scene with a `world` section", scene.name));
    }
    Ok((live, built, scene))
}
