//! Sylva: procedural nature at game scale.
//!
//! This crate is the facade an application uses: load a [`Scene`], [`build`]
//! an [`App`](runtime::App) from it, step it with your own clock, read
//! the extraction batches, and write a [`Report`]. The `sylva` binary is a thin
//! command-line layer over the same calls.
//!
//! ```
//! let scene = sylva::Scene::from_str("(chains: (columns: 2, rows: 2, links: 3))", "tiny.ron").unwrap();
//! let mut app = sylva::build(&scene, 1).unwrap();
//! app.advance(scene.simulation.steps_per_frame);
//! let batch = app.world.resources.get::<sylva::systems::particles::SpringBatch>().unwrap();
//! assert_eq!(batch.cylinders.len(), 12);
//! ```
#![warn(missing_docs)]

mod report;
mod scene;

pub use report::{ParticleReport, Report};
pub use scene::{SHOWCASE, Scene, SceneError, Simulation, TreeScene};
pub use sylva_runtime as runtime;
pub use sylva_systems as systems;

use sylva_runtime::glam::Vec3;
use sylva_runtime::{App, AppConfig, AppError};
use sylva_systems::colonize::{ColonizeError, Colonizer};
use sylva_systems::particles::{self, spawn_chain_field};
use sylva_systems::species::{GrowError, GrownTree, grow_lsystem_tree};
use sylva_systems::terrain;
use sylva_systems::tree::{self, MeshParams, Placement, RadiusParams, prepare_graph, spawn_tree};

/// Radius of the tubes springs are drawn as, metres.
const SPRING_RADIUS: f32 = 0.02;

/// Why a scene could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The app could not start.
    #[error(transparent)]
    App(#[from] AppError),
    /// The scene's tree could not be grown.
    #[error("tree: {0}")]
    Tree(#[from] GrowError),
    /// The scene's colonization trees could not be grown.
    #[error("colonize: {0}")]
    Colonize(#[from] ColonizeError),
}

/// An app built from a scene, plus what was generated on the way.
pub struct Built {
    /// The ready-to-step app.
    pub app: App,
    /// The scene's tree with its mesh, if the scene has one.
    pub tree: Option<GrownTree>,
}

/// Builds a ready-to-step app for `scene` on `threads` worker threads (0: one per core).
///
/// Installs the domain systems the scene needs, spawns its content (chains,
/// tree segments, terrain chunks), and puts the scene's camera and sun into
/// the world as resources. A grown tree's [`TreeStats`](systems::species::TreeStats) become a resource too.
pub fn build(scene: &Scene, threads: usize) -> Result<App, BuildError> {
    Ok(build_all(scene, threads)?.app)
}

/// [`build`], also handing back the tree's mesh (for export).
pub fn build_all(scene: &Scene, threads: usize) -> Result<Built, BuildError> {
    let mut app = App::new(AppConfig {
        seed: scene.seed,
        threads,
        step_seconds: scene.simulation.step_seconds,
        ..AppConfig::default()
    })?;
    particles::install(&mut app, scene.particles);
    particles::install_extraction(&mut app, SPRING_RADIUS);
    if let Some(chains) = &scene.chains {
        spawn_chain_field(&mut app.world.entities, chains, scene.seed);
    }
    tree::install_extraction(&mut app);
    let mut grown = None;
    if let Some(t) = &scene.tree {
        let g = app.in_pool(|| grow_lsystem_tree(&t.lsystem, &t.radii, &t.mesh, scene.seed))?;
        let placement = Placement {
            position: t.position,
            scale: t.scale,
        };
        spawn_tree(&mut app.world.entities, &g.graph, placement).map_err(GrowError::from)?;
        app.world.resources.insert(g.stats);
        grown = Some(g);
    }
    if let Some(c) = &scene.colonize {
        // Colonization graphs share the L-system trees' units (Z up, centimetres) and meshing defaults.
        let graphs = app.in_pool(|| {
            let mut colonizer = Colonizer::new(c, scene.seed)?;
            colonizer.run();
            colonizer.finish()
        })?;
        let (radii, mesh) = (RadiusParams::default(), MeshParams::default());
        let placement = Placement {
            position: Vec3::ZERO,
            scale: 0.01,
        };
        for graph in &graphs {
            let prepared = prepare_graph(graph, &radii, &mesh).map_err(GrowError::from)?;
            spawn_tree(&mut app.world.entities, &prepared, placement).map_err(GrowError::from)?;
        }
    }
    if let Some(t) = &scene.terrain {
        terrain::install(&mut app, t);
    }
    app.world.resources.insert(scene.camera);
    app.world.resources.insert(scene.sun);
    Ok(Built { app, tree: grown })
}

/// Runs `frames` frames of `steps_per_frame` fixed steps each, calling
/// `on_frame` after every frame (for progress bars).
pub fn simulate(app: &mut App, frames: u32, steps_per_frame: u32, mut on_frame: impl FnMut(u32)) {
    for frame in 0..frames {
        app.advance(steps_per_frame);
        on_frame(frame + 1);
    }
}
