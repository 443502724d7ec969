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
pub use scene::{SHOWCASE, Scene, SceneError, Simulation};
pub use sylva_runtime as runtime;
pub use sylva_systems as systems;

use sylva_runtime::{App, AppConfig, AppError};
use sylva_systems::particles::{self, spawn_chain_field};

/// Radius of the tubes springs are drawn as, metres.
const SPRING_RADIUS: f32 = 0.02;

/// Builds a ready-to-step app for `scene` on `threads` worker threads (0: one per core).
///
/// Installs the domain systems the scene needs, spawns its content, and puts
/// the scene's camera and sun into the world as resources.
pub fn build(scene: &Scene, threads: usize) -> Result<App, AppError> {
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
    app.world.resources.insert(scene.camera);
    app.world.resources.insert(scene.sun);
    Ok(app)
}

/// Runs `frames` frames of `steps_per_frame` fixed steps each, calling
/// `on_frame` after every frame (for progress bars).
pub fn simulate(app: &mut App, frames: u32, steps_per_frame: u32, mut on_frame: impl FnMut(u32)) {
    for frame in 0..frames {
        app.advance(steps_per_frame);
        on_frame(frame + 1);
    }
}
