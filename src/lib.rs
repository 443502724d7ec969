//! Sylva: procedural nature at game scale.
//!
//! This crate is the facade an application uses: load a [`Scene`], [`build`]
//! an [`App`] from it, step it with your own clock, read
//! the extraction batches, and write a [`Report`]. The `sylva` binary is a thin
//! command-line layer over the same calls.
//!
//! World scenes stream their chunks around viewers: [`build_all`] hands back a
//! [`WorldStreamer`] to call once per frame (`examples/stream.rs`).
//!
//! # Embedding in an engine with its own renderer
//!
//! Depend on `sylva` with `default-features = false` (no Vulkan, window or CLI) and read
//! `docs/embedding.md` in the repository. The parts, all reachable from here:
//!
//! - [`WorldStreamer`] streams a world around your viewers on a generation pool (yours,
//!   built with the re-exported [`rayon`]); [`WorldStreamer::update_with`] paces it by the
//!   wall clock, [`WorldStreamer::step`] by yours, [`WorldStreamer::settle_with`] loads a
//!   ring synchronously.
//! - Each [`StreamEvent::Ready`](runtime::stream::StreamEvent) hands over a
//!   [`ReadyChunk`](systems::world::ReadyChunk): its payload (terrain, trees as placed,
//!   attributes, ground cover) and the [`ChunkParts`](systems::world::ChunkParts) you asked
//!   for with [`WorldStreamer::with_parts`].
//! - The [mesh kit](systems::mesh_kit) makes triangles of chunks and tree variants (Y up,
//!   metres); [`WorldStreamer::with_hook`] runs your own conversion on the pool.
//!
//! ```
//! let scene = sylva::Scene::from_str("(chains: (columns: 2, rows: 2, links: 3))", "tiny.ron").unwrap();
//! let mut app = sylva::build(&scene, 1).unwrap();
//! app.advance(scene.simulation.steps_per_frame);
//! let batch = app.world.resources.get::<sylva::systems::particles::SpringBatch>().unwrap();
//! assert_eq!(batch.cylinders.len(), 12);
//! ```
#![warn(missing_docs)]

mod camera_path;
mod content_camera;
mod domains;
pub mod live;
pub mod memory;
mod report;
mod scene;

pub use camera_path::Flight;
pub use content_camera::{camera_for, framed_on_content};
pub use domains::{BladeError, BladeSource, GrassScene, GrassSpecies, TreeScene};
pub use memory::MemoryLimit;
/// The generation pool's thread pools: a host hands [`WorldStreamer::new`] its own.
pub use rayon;
pub use report::{InstancesByLayer, RenderReport, Report};
pub use scene::{CHAINS, GRASS_PRESETS, MAX_STEPS_PER_FRAME, Scene, SceneError, SceneSource, Simulation, WORLD};
/// The runtime: the app, its schedules, streaming ([`runtime::stream`]), the render contract
/// ([`runtime::extract`]).
#[doc(inline)]
pub use sylva_runtime as runtime;
/// The domains: trees, terrain, grass, the streamed world ([`systems::world`]) and the mesh
/// kit ([`systems::mesh_kit`]).
#[doc(inline)]
pub use sylva_systems as systems;
pub use sylva_systems::colonize::TreeReport;
pub use sylva_systems::grass::GrassReport;
pub use sylva_systems::particles::ParticleReport;
pub use sylva_systems::world::{ChunkCounts, FlightLog, Quantiles, RssReport, StreamingReport, WorldStreamer};
/// The Vulkan renderer (feature `render`, on by default).
#[cfg(feature = "render")]
pub use sylva_vk as vk;

use domains::{Building, DOMAINS, memory_error, words_error};
use sylva_runtime::{App, AppConfig, AppError};
use sylva_systems::grass;
use sylva_systems::species::GrownTree;
use sylva_systems::world::WorldError;

/// Why a scene could not be built.
///
/// ```
/// let text = "(tree: (lsystem: (\n  grammar: r#\"axiom: A(1)\n    A(x) -> A(x*1e30)\"#,\n  iterations: 3)))";
/// let scene = sylva::Scene::from_str(text, "huge.ron").unwrap();
/// let err = sylva::build(&scene, 1).err().unwrap();
/// assert!(err.to_string().starts_with("huge.ron:3:16: field `tree.lsystem.grammar`: grammar line 2"), "{err}");
/// ```
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The app could not start.
    #[error(transparent)]
    App(#[from] AppError),
    /// A section of the scene could not be grown, baked or planted: the field, and the file
    /// and line it is written on when the scene was read from text.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The world's generation pool or cache directory could not be set up.
    #[error(transparent)]
    World(WorldError),
}

/// An app built from a scene, plus what was generated on the way.
pub struct Built {
    /// The ready-to-step app.
    pub app: App,
    /// The scene's tree with its mesh, if the scene has one.
    pub tree: Option<GrownTree>,
    /// The scene's world, if it has one: call [`WorldStreamer::update`] every
    /// frame with the viewers to stream it into `app`.
    pub world: Option<WorldStreamer>,
}

/// Builds a ready-to-step app for `scene` on `threads` worker threads (0: one per core).
///
/// Installs the domain systems the scene needs, spawns its content (chains,
/// tree segments, terrain chunks), and puts the scene's camera and sun into
/// the world as resources. A grown tree's [`TreeStats`](systems::species::TreeStats) become a resource too.
/// A world scene's chunks stream in through the [`WorldStreamer`] that [`build_all`] hands back.
pub fn build(scene: &Scene, threads: usize) -> Result<App, BuildError> {
    Ok(build_all(scene, threads)?.app)
}

/// [`build`], also handing back the tree's mesh (for export); held to three
/// quarters of the machine's memory ([`build_within`] sets another limit).
pub fn build_all(scene: &Scene, threads: usize) -> Result<Built, BuildError> {
    build_within(scene, threads, MemoryLimit::default())
}

/// [`build_all`] refusing a scene whose [memory estimate](memory::estimate)
/// exceeds `limit`, before the memory is spent: the error names the field that
/// costs the most, with the estimate of every part. An L-system whose words at its
/// module limit would not fit `limit` by themselves ([`memory::derivations`]) is refused
/// too, before anything derives, at its `module_limit`.
pub fn build_within(scene: &Scene, threads: usize, limit: MemoryLimit) -> Result<Built, BuildError> {
    let estimate = memory::estimate(scene);
    limit.check(&estimate).map_err(|over| memory_error(scene, &over))?;
    for derivation in memory::derivations(scene) {
        limit
            .check_derivation(&derivation)
            .map_err(|over| words_error(scene, &over))?;
    }
    let mut app = App::new(AppConfig {
        seed: scene.seed,
        threads,
        step_seconds: scene.simulation.step_seconds,
        ..AppConfig::default()
    })?;
    app.set_scene(&scene.name, scene.fingerprint());
    let mut building = Building::new(app, estimate, limit);
    for domain in DOMAINS {
        domain.build(scene, &mut building)?;
    }
    let Building {
        mut app, tree, world, ..
    } = building;
    app.world.resources.insert(sway_wind(scene));
    app.world.resources.insert(scene.camera);
    app.world.resources.insert(scene.sun);
    Ok(Built { app, tree, world })
}

/// Runs `frames` frames of `steps_per_frame` fixed steps each, every frame
/// extracted for drawing as a renderer would see it, calling `on_frame` after
/// every frame (for progress bars).
pub fn simulate(app: &mut App, frames: u32, steps_per_frame: u32, mut on_frame: impl FnMut(u32)) {
    for frame in 1..=frames {
        app.advance(steps_per_frame);
        on_frame(frame);
    }
}

/// [`simulate`] for a run nobody watches: only the last frame is extracted
/// (for a screenshot or a report), since extraction is work for frames someone sees.
pub fn simulate_headless(app: &mut App, frames: u32, steps_per_frame: u32, mut on_frame: impl FnMut(u32)) {
    for frame in 1..=frames {
        if frame == frames {
            app.advance(steps_per_frame);
        } else {
            app.advance_headless(steps_per_frame);
        }
        on_frame(frame);
    }
}

/// The wind the scene's crowns sway in: its grass's (the `grass` section's, else its world's
/// when that grows grass), or a breeze.
fn sway_wind(scene: &Scene) -> sylva_runtime::extract::SwayWind {
    let world = scene.world.as_ref().map(|w| &w.grass).filter(|g| !g.species.is_empty());
    let chosen = (scene.grass.as_ref().map(|g| (&g.wind, g.wind_power, g.wave_speed)))
        .or(world.map(|g| (&g.wind, g.wind_power, g.wave_speed)));
    match chosen {
        Some((wind, power, speed)) => wind.sway(power, speed),
        None => grass::wind::breeze().sway(1.0, 1.0),
    }
}

#[cfg(feature = "render")]
/// Draws what the scene's domains extracted — springs, trees and their leaves, attractor points
/// (when `show_points`), terrain, grass, a world's trees and far field — with the scene's
/// camera and sun, its trees swaying in its wind.
pub fn render(renderer: &mut vk::Renderer, app: &App, show_points: bool) -> Result<vk::FrameStats, vk::RenderError> {
    use sylva_runtime::extract::{Camera, Sun, SwayWind};
    let res = &app.world.resources;
    if let Some(wind) = res.get::<SwayWind>() {
        renderer.set_wind(&wind);
    }
    let mut gathered = domains::Gathered::of(app, &DOMAINS);
    let input = vk::FrameInput {
        time: app.time().elapsed as f32,
        show_points,
        camera: res.get::<Camera>().map(|c| *c).unwrap_or_default(),
        sun: res.get::<Sun>().map(|s| *s).unwrap_or_default(),
        ..gathered.input()
    };
    // The renderer's sorting and packing run on rayon: in the app's pool, they keep to the
    // threads the user gave the app.
    app.in_pool(|| renderer.render(input))
}
