//! Particles joined by spring-damper links, under gravity.
//!
//! Particles and springs are entities: a particle has [`Position`],
//! [`Velocity`] and [`InvMass`] (plus [`Pinned`] for a fixed root); a
//! [`Spring`] names its two particles. Grass blades, hanging chains and
//! anything else made of masses and springs are built from these.
//!
//! The hot loop does not look entities up. The [`ParticleSolver`] resource keeps
//! a dense index (entity → `u32`) and spring endpoint arrays, rebuilt only when
//! the set of particles or springs changes, and every step works on contiguous
//! slices: ECS columns for the integration, dense arrays for spring forces. All
//! per-particle sums run in a fixed order, so results are bit-identical for any
//! thread count.
//!
//! ```
//! use sylva_runtime::{App, AppConfig};
//! use sylva_systems::particles::{self, ChainField, ParticleSettings, Pinned, Position};
//!
//! let mut app = App::new(AppConfig { threads: 1, ..AppConfig::default() })?;
//! let chains = ChainField { columns: 2, rows: 1, links: 4, ..ChainField::default() };
//! particles::build(&mut app, ParticleSettings::default(), Some(&chains), 7);
//! // Two chains of four links: five particles each, the top one pinned.
//! assert_eq!(app.world.count::<Position>(), 10);
//! assert_eq!(app.world.count::<Pinned>(), 2);
//! let before = app.state_hash()?;
//! app.advance(4);
//! assert_ne!(app.state_hash()?, before, "the chains fall under gravity");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod hanging_chains;
mod report;
mod solver;

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::CylinderBatch;
use sylva_runtime::{Access, App, System};

pub use hanging_chains::{ChainField, spawn_chain_field};
pub use report::ParticleReport;
pub use solver::ParticleSolver;

/// Name of the fixed-step system [`install`] adds.
pub const STEP_SYSTEM: &str = "particles.step";

/// Name of the frame system [`install_extraction`] adds.
pub const EXTRACT_SYSTEM: &str = "particles.extract";

/// Radius of the tubes [`build`] draws springs as, metres.
pub const SPRING_RADIUS: f32 = 0.02;

/// Position of a particle, world space, metres.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Position(pub Vec3);

/// Velocity of a particle, metres per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Velocity(pub Vec3);

/// Inverse mass of a particle, 1/kg. Stored inverted because every use divides.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct InvMass(pub f32);

/// Marks a particle as a fixed root: it is never moved by the solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pinned;

/// A spring-damper link between two particles.
///
/// The force on `a` is `(k·(|d| − rest) + c·((v_b − v_a)·n))·n` with
/// `d = x_b − x_a` and `n = d/|d|`; `b` gets the opposite force.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spring {
    /// First particle.
    pub a: hecs::Entity,
    /// Second particle.
    pub b: hecs::Entity,
    /// Length at which the spring exerts no force, metres.
    pub rest_length: f32,
    /// Spring constant k, newtons per metre.
    pub stiffness: f32,
    /// Damping constant c, newton-seconds per metre, along the spring axis.
    pub damping: f32,
}

/// How particle states advance by one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Integrator {
    /// Velocity first, then position with the new velocity: one force
    /// evaluation per step, first order, stable for stiff springs at small steps.
    #[default]
    SemiImplicitEuler,
    /// Classic fourth-order Runge-Kutta: four force evaluations per step,
    /// error shrinks 16× when the step halves.
    Rk4,
}

/// Solver settings, a resource.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ParticleSettings {
    /// Acceleration applied to every free particle, m/s². Default: (0, −9.81, 0).
    pub gravity: Vec3,
    /// Integration scheme. Default: semi-implicit Euler.
    pub integrator: Integrator,
}

impl Default for ParticleSettings {
    fn default() -> Self {
        Self {
            gravity: Vec3::new(0.0, -9.81, 0.0),
            integrator: Integrator::SemiImplicitEuler,
        }
    }
}

/// Springs drawn as tubes: the extraction batch the renderer (or an embedding
/// engine) reads after each frame.
#[derive(Debug, Default)]
pub struct SpringBatch {
    /// One cylinder per live spring, in solver order.
    pub cylinders: CylinderBatch,
    /// Tube radius used for every spring, metres.
    pub radius: f32,
    /// Simulation tick the batch was last filled at: frames without a step
    /// leave it (and its dirty range) alone, so nothing is re-uploaded.
    extracted_at: Option<u64>,
    positions: Vec<Vec3>,
}

/// Builds a scene's particles into `app`: the solver with `settings` ([`install`]), springs drawn
/// as tubes of [`SPRING_RADIUS`] ([`install_extraction`]), and the hanging `chains` (scene
/// section `chains`), if any, from `seed`.
pub fn build(app: &mut App, settings: ParticleSettings, chains: Option<&ChainField>, seed: u64) {
    install(app, settings);
    install_extraction(app, SPRING_RADIUS);
    if let Some(chains) = chains {
        spawn_chain_field(&mut app.world.entities, chains, seed);
    }
}

/// Adds the particle solver to `app`: the [`STEP_SYSTEM`] system, run every
/// fixed step, with its resources and snapshot registrations.
pub fn install(app: &mut App, settings: ParticleSettings) {
    app.world.resources.insert(settings);
    app.world.resources.insert(ParticleSolver::default());
    app.snapshot_registry_mut()
        .component::<Position>("particles.position")
        .component::<Velocity>("particles.velocity")
        .component::<InvMass>("particles.inv_mass")
        .component::<Pinned>("particles.pinned")
        .component::<Spring>("particles.spring");
    app.add_system(System::new(
        STEP_SYSTEM,
        Access::new()
            .write::<Position>()
            .write::<Velocity>()
            .read::<InvMass>()
            .read::<Pinned>()
            .read::<Spring>()
            .read_res::<ParticleSettings>()
            .write_res::<ParticleSolver>(),
        |ctx| {
            let settings = *ctx.res::<ParticleSettings>();
            ctx.res_mut::<ParticleSolver>().step(ctx, &settings);
        },
    ));
}

/// Adds [`EXTRACT_SYSTEM`] to `app`: once per frame it draws every live
/// spring as a tube of `radius` metres into the [`SpringBatch`] resource.
pub fn install_extraction(app: &mut App, radius: f32) {
    app.world.resources.insert(SpringBatch {
        radius,
        ..SpringBatch::default()
    });
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new()
            .read::<Position>()
            .read::<Velocity>()
            .read::<InvMass>()
            .read::<Spring>()
            .read_res::<ParticleSolver>()
            .write_res::<SpringBatch>(),
        |ctx| {
            let mut batch = ctx.res_mut::<SpringBatch>();
            let tick = ctx.time().tick;
            if batch.extracted_at == Some(tick) {
                return;
            }
            batch.extracted_at = Some(tick);
            let solver = ctx.res::<ParticleSolver>();
            let SpringBatch {
                cylinders,
                radius,
                positions,
                ..
            } = &mut *batch;
            solver.extract(ctx, cylinders, *radius, positions);
        },
    ));
}
