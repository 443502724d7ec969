//! Sylva: procedural nature at game scale.
//!
//! This crate is the facade an application uses: load a [`Scene`], [`build`]
//! an [`App`](runtime::App) from it, step it with your own clock, read
//! the extraction batches, and write a [`Report`]. The `sylva` binary is a thin
//! command-line layer over the same calls.
//!
//! World scenes stream their chunks around viewers: [`build_all`] hands back a
//! [`WorldStreamer`] to call once per frame (`examples/stream.rs`).
//!
//! ```
//! let scene = sylva::Scene::from_str("(chains: (columns: 2, rows: 2, links: 3))", "tiny.ron").unwrap();
//! let mut app = sylva::build(&scene, 1).unwrap();
//! app.advance(scene.simulation.steps_per_frame);
//! let batch = app.world.resources.get::<sylva::systems::particles::SpringBatch>().unwrap();
//! assert_eq!(batch.cylinders.len(), 12);
//! ```
#![warn(missing_docs)]

mod flight;
mod framing;
pub mod live;
pub mod memory;
mod report;
mod scene;

pub use flight::Flight;
pub use framing::{camera_for, framed_on_content};
pub use memory::MemoryLimit;
pub use report::{RenderReport, Report};
pub use scene::{
    BladeSource, CHAINS, GRASS_PRESETS, GrassScene, GrassSpecies, Scene, SceneError, SceneSource, Simulation,
    TreeScene, WORLD,
};
pub use sylva_runtime as runtime;
pub use sylva_systems as systems;
pub use sylva_systems::colonize::TreeReport;
pub use sylva_systems::grass::GrassReport;
pub use sylva_systems::particles::ParticleReport;
pub use sylva_systems::world::{ChunkCounts, FlightLog, Quantiles, RssReport, StreamingReport, WorldStreamer};
/// The Vulkan renderer (feature `render`, on by default).
#[cfg(feature = "render")]
pub use sylva_vk as vk;

use memory::OverLimit;
use sylva_runtime::{App, AppConfig, AppError, FieldError};
use sylva_systems::colonize::{self, ColonizeError};
use sylva_systems::grass::{self, BakeError, GrassError};
use sylva_systems::lsystem::LSystemError;
use sylva_systems::particles;
use sylva_systems::placement::AppGround;
use sylva_systems::placement::forest::{self, ForestError};
use sylva_systems::species::{self, GrowError, GrownTree};
use sylva_systems::terrain;
use sylva_systems::tree::{self, TreeError};
use sylva_systems::world::{self, ContentError, WorldError};

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
/// costs the most, with the estimate of every part.
pub fn build_within(scene: &Scene, threads: usize, limit: MemoryLimit) -> Result<Built, BuildError> {
    let mut estimate = memory::estimate(scene);
    limit.check(&estimate).map_err(|over| memory_error(scene, &over))?;
    let mut app = App::new(AppConfig {
        seed: scene.seed,
        threads,
        step_seconds: scene.simulation.step_seconds,
        ..AppConfig::default()
    })?;
    app.set_scene(&scene.name, scene.fingerprint());
    let seed = scene.seed;
    particles::build(&mut app, scene.particles, scene.chains.as_ref(), seed);
    tree::install_extraction(&mut app);
    let tree = scene.tree.as_ref();
    let tree = tree.map(|t| species::build(&mut app, t.recipe(), t.placement(), seed));
    let mut grown = tree.transpose().map_err(|e| grow_error(scene, "tree", e))?;
    if let Some(c) = &scene.colonize {
        let colonized = colonize::build(&mut app, c, seed, grown.is_none());
        grown = grown.or(colonized.map_err(|e| colonize_error(scene, "colonize", e))?);
    }
    if let Some(t) = &scene.terrain {
        terrain::build(&mut app, t);
    }
    // Forest and grass stand on the terrain, which is generated by now.
    let ground = AppGround::of(&app);
    if let Some(f) = &scene.forest {
        let grown = app
            .in_pool(|| forest::grow_forest(f, &ground, seed))
            .map_err(|e| forest_error(scene, e))?;
        // The segments are known once the variants are grown, and spawned only now.
        estimate.push(memory::forest(&grown));
        limit.check(&estimate).map_err(|over| memory_error(scene, &over))?;
        let trees = grown
            .spawn(&mut app.world.entities)
            .map_err(|e| forest_error(scene, ForestError::Tree(e)))?;
        if let Some(mut batch) = app.world.resources.get_mut::<tree::TreeBatch>() {
            grown.dress(&trees, &mut batch);
        }
        app.world.resources.insert(grown.stats);
    }
    if let Some(g) = &scene.grass {
        let settings = g.settings().map_err(|f| scene.error_at(&under("grass", f)))?;
        grass::install(&mut app, &settings, &ground).map_err(|e| grass_error(scene, e))?;
    }
    let world = scene.world.as_ref().map(|w| world::build(&mut app, w, seed));
    let world = world.transpose().map_err(|e| world_error(scene, e))?;
    if let (Some(w), Some(streamer)) = (&scene.world, &world) {
        // The variants are grown by now; the chunks, with their trees, stream in later.
        estimate.push(memory::world_trees(w, streamer.content()));
        limit.check(&estimate).map_err(|over| memory_error(scene, &over))?;
    }
    app.world.resources.insert(sway_wind(scene));
    app.world.resources.insert(scene.camera);
    app.world.resources.insert(scene.sun);
    Ok(Built {
        app,
        tree: grown,
        world,
    })
}

/// A scene over its memory limit, at the field that costs the most.
fn memory_error(scene: &Scene, over: &OverLimit) -> BuildError {
    scene.error_at(&FieldError::new(over.field(), over.to_string())).into()
}

/// `e`, whose path is below the scene field `at` (a dotted path), with the path from the root.
fn under(at: &str, e: FieldError) -> FieldError {
    at.rsplit('.').fold(e, FieldError::within)
}

/// A tree's growth failure at the scene field `at`: a grammar error at its place in the grammar.
fn grow_error(scene: &Scene, at: &str, e: GrowError) -> BuildError {
    match e {
        GrowError::LSystem(LSystemError::InvalidParameter(f)) => scene.error_at(&under(&format!("{at}.lsystem"), f)),
        GrowError::LSystem(e) => scene.grammar_error_at(&format!("{at}.lsystem.grammar"), &e),
        GrowError::Tree(e) => return tree_error(scene, at, &e),
    }
    .into()
}

/// A graph or mesh failure of the trees the scene field `at` grows.
fn tree_error(scene: &Scene, at: &str, e: &TreeError) -> BuildError {
    scene.error_at(&FieldError::new(at, e.to_string())).into()
}

/// A colonization failure of the scene field `at`.
fn colonize_error(scene: &Scene, at: &str, e: ColonizeError) -> BuildError {
    let field = match e {
        ColonizeError::InvalidParam(f) => under(at, f),
        ColonizeError::PointFile { .. } | ColonizeError::Io { .. } => {
            FieldError::new(&format!("{at}.points_file"), e.to_string())
        }
        ColonizeError::Tree(e) => return tree_error(scene, at, &e),
    };
    scene.error_at(&field).into()
}

/// A forest failure, at the species it comes from.
fn forest_error(scene: &Scene, e: ForestError) -> BuildError {
    match e {
        ForestError::InvalidParam(f) => scene.error_at(&under("forest", f)).into(),
        ForestError::LSystem { species, source } => grow_error(scene, &format!("forest.species[{species}]"), source),
        ForestError::Colonize { species, source } => {
            colonize_error(scene, &format!("forest.species[{species}].colonize"), source)
        }
        ForestError::Tree(e) => tree_error(scene, "forest", &e),
    }
}

/// A grass failure, at the species or setting it comes from.
fn grass_error(scene: &Scene, e: GrassError) -> BuildError {
    let field = match e {
        GrassError::Bake {
            error: BakeError::Settings(f),
            ..
        } => under("grass", f),
        // A bake file names itself; the scene names the species it was read for.
        GrassError::Bake {
            species,
            error: error @ (BakeError::File { .. } | BakeError::Io { .. } | BakeError::Stale { .. }),
        } => FieldError::new("grass.bake_file", format!("species {species}: {error}")),
        GrassError::Bake { species, error } => FieldError::new(&format!("grass.species[{species}]"), error.to_string()),
        GrassError::Scatter { species, error } => under(&format!("grass.species[{species}].scatter"), error),
        GrassError::Live(f) => under("grass.live", f),
        GrassError::Scale { species, message } => FieldError::new(&format!("grass.species[{species}].scale"), message),
    };
    scene.error_at(&field).into()
}

/// A world failure: a species at the field it comes from; the pool and the cache as they are.
fn world_error(scene: &Scene, e: WorldError) -> BuildError {
    match e {
        WorldError::Invalid(f) => scene.error_at(&f.within("world")).into(),
        WorldError::Content(ContentError::Tree { species, source }) => {
            let at = format!("world.trees[{species}].species");
            match source {
                ForestError::InvalidParam(f) => scene.error_at(&under(&at, f)).into(),
                ForestError::LSystem { source, .. } => grow_error(scene, &at, source),
                ForestError::Colonize { source, .. } => colonize_error(scene, &format!("{at}.colonize"), source),
                ForestError::Tree(e) => tree_error(scene, &at, &e),
            }
        }
        WorldError::Content(ContentError::Blade { species, source }) => scene
            .grammar_error_at(&format!("world.grass.species[{species}].grammar"), &source)
            .into(),
        WorldError::Content(ContentError::Bake { species, source }) => scene
            .error_at(&FieldError::new(
                &format!("world.grass.species[{species}]"),
                source.to_string(),
            ))
            .into(),
        e => BuildError::World(e),
    }
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
/// Draws the app's extraction batches — springs, trees and their leaves, attractor points
/// (when `show_points`), terrain — with the scene's camera and sun.
pub fn render(renderer: &mut vk::Renderer, app: &App, show_points: bool) -> Result<vk::FrameStats, vk::RenderError> {
    use sylva_runtime::extract::{Camera, Sun, TerrainBatch};
    use sylva_systems::world::WorldBatch;
    let res = &app.world.resources;
    let mut springs = res.get_mut::<particles::SpringBatch>();
    let mut trees = res.get_mut::<tree::TreeBatch>();
    let mut world = res.get_mut::<WorldBatch>();
    let mut attractors = res.get_mut::<sylva_systems::colonize::AttractorBatch>();
    let mut terrain = res.get_mut::<TerrainBatch>();
    let mut grass = res.get_mut::<sylva_runtime::extract::GrassBatch>();
    if let Some(wind) = res.get::<sylva_runtime::extract::SwayWind>() {
        renderer.set_wind(&wind);
    }
    let (mut cylinders, mut leaves, mut cards) = (Vec::new(), Vec::new(), Vec::new());
    let mut tree_models = None;
    if let Some(s) = springs.as_deref_mut() {
        cylinders.push(&mut s.cylinders);
    }
    // Carded slots come last in both lists, in the order of their cards: the forest's (when
    // there is no world, whose models would be others), then the world's.
    if let Some(t) = trees.as_deref_mut() {
        cylinders.push(&mut t.cylinders);
        leaves.push(&mut t.leaves);
        if world.is_none() && !t.cards.is_empty() {
            cards.push(&mut t.cards);
            tree_models = Some(&t.models);
        }
    }
    if let Some(w) = world.as_deref_mut() {
        cylinders.extend(w.chunks.iter_mut());
        leaves.extend(w.leaves.iter_mut());
        cards.extend(w.trees.iter_mut());
        tree_models = Some(&w.models);
    }
    let input = vk::FrameInput {
        cylinders,
        leaves,
        tree_models,
        trees: cards,
        time: app.time().elapsed as f32,
        points: attractors.as_deref_mut().map(|a| &mut a.points),
        show_points,
        terrain: terrain.as_deref_mut(),
        grass: grass.as_deref_mut(),
        camera: res.get::<Camera>().map(|c| *c).unwrap_or_default(),
        sun: res.get::<Sun>().map(|s| *s).unwrap_or_default(),
    };
    // The renderer's sorting and packing run on rayon: in the app's pool, they keep to the
    // threads the user gave the app.
    app.in_pool(|| renderer.render(input))
}
