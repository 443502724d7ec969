//! Grass moved by wind (after Selig's thesis): precomputed looping motion played
//! back by field position and time, plus live interaction.
//!
//! ```
//! use sylva_systems::grass::blade_from_grammar;
//!
//! // A blade of four segments, each turned 10° further than the one below it.
//! let shape = blade_from_grammar("axiom: S(0.1, 0.01) A\nA -> +(10) S A", 3)?;
//! assert_eq!(shape.len(), 5); // the root and one particle per segment
//! # Ok::<(), sylva_systems::lsystem::LSystemError>(())
//! ```
//!
//! The pipeline, one file per stage:
//!
//! 1. [`blade`]: a plant structure — a massless fixed root and particles, each
//!    with one parent, one spring-damper link and the thesis's physical
//!    parameters (length, mass, stiffness, angular stiffness). Presets: 1-, 2-,
//!    6-segment blades, a tuft, a small shrub.
//! 2. [`wind`]: lattice value noise over ground × time for strength, polar and
//!    azimuth deflection; winds sum; gusts add local, time-limited pushes.
//! 3. [`dynamics`]: the force law `F = (D_R − D)·s − v·d` with the rest vector
//!    turned with the parent link and weighted by angular stiffness, gravity,
//!    RK4 at a fixed step, the length constraint; [`block_step`] runs it on a block
//!    of blades at once (in the vector types of [`lane_vectors`]), [`field`] on a dense
//!    SoA field of blades.
//! 4. [`bake()`]: an N × N field, k blades per cell averaged, detected warm-up,
//!    T frames with a cross-faded loop seam, per-particle 3D textures (RGBA16F,
//!    or the thesis's RGB8), a versioned, checksummed file.
//! 5. [`extraction`]: bakes into the render contract's `GrassMotion`.
//! 6. [`sampler`]: the CPU mirror of the vertex shader's fetch (Wind Power, Wave Speed).
//! 7. [`interaction`]: pushers switch nearby blades to live simulation with a
//!    collision constraint; they fade back to the bake afterwards.
//!
//! Blade structures can be written as L-systems ([`grammar`]); [`install()`] puts
//! grass into an app (structures, baked species, scattered instances, walkers as
//! [`walkers::WalkPath`] pushers, [`WALK_SYSTEM`], [`LIVE_SYSTEM`], [`EXTRACT_SYSTEM`]);
//! [`GrassReport`] reports it.
//!
//! Deviations from the thesis (docs/design/grass.md): corrected cosine weights; the
//! damper acts on relative velocity; stiffness 1 restores the rest length; the
//! default damper follows a damping ratio (the thesis's `s = 2·d` is
//! [`dynamics::DamperRule::Thesis`]); displacements are relative to the rest
//! pose; the default texel format is RGBA16F (RGB8 clips, as the thesis notes).
//! The wind is sampled once per blade per step at its root (blades are small
//! against the lattice spacing).

pub mod bake;
pub mod blade;
pub mod block_step;
pub mod dynamics;
pub mod extraction;
pub mod field;
pub mod grammar;
pub mod install;
pub mod interaction;
pub mod lane_vectors;
mod report;
pub mod sampler;
pub mod walkers;
pub mod wind;

pub use bake::{
    BakeFileError, BakeSettings, BakedGrass, GrassBakeError, MAX_BAKE_BLADES, MAX_BAKE_CELLS, MAX_BAKE_FRAMES,
    MAX_BAKE_INSTANCES, MAX_BAKE_TEXELS, MAX_RECORD_EVERY, MAX_WARMUP_SECONDS, TextureLayout, bake, bake_inputs,
    species_file, texture_bytes,
};
pub use blade::{BladeShape, Segment};
pub use dynamics::{BladeKernel, DamperRule, Dynamics};
pub use field::BladeField;
pub use grammar::{MAX_BLADE_ITERATIONS, blade_from_grammar, validate_blade_iterations};
pub use install::{
    BladeLink, BladeParticle, BladeRoot, EXTRACT_SYSTEM, GrassError, GrassLayers, GrassSettings, GrassSpecies,
    GrassState, GrassStats, LIVE_SYSTEM, SpeciesSettings, WALK_SYSTEM, install,
};
pub use interaction::{LiveGrass, LiveSettings, LiveState, Pusher, live_kernel, live_steps_due};
pub use report::GrassReport;
pub use walkers::{MAX_PUSHER_RADIUS, MAX_PUSHER_SPEED, MAX_WALK_EXTENT, Walk, WalkPath, Walker};
pub use wind::{Gust, Wind, WindField};

/// Checks what every baked grass plays back with, whichever scene section holds it: the
/// wind, the dynamics, and the playback multipliers (Wind Power ≥ 0, a finite Wave Speed).
pub fn validate_motion(
    wind: &WindField,
    dynamics: &Dynamics,
    wind_power: f32,
    wave_speed: f32,
) -> Result<(), sylva_runtime::FieldError> {
    use sylva_runtime::{FieldError, Validate};
    wind.validate().map_err(|e| e.within("wind"))?;
    dynamics.validate().map_err(|e| e.within("dynamics"))?;
    FieldError::check((0.0..=MAX_WIND_POWER).contains(&wind_power), "wind_power", || {
        format!("must be in [0, {MAX_WIND_POWER}], got {wind_power}")
    })?;
    FieldError::check(wave_speed.abs() <= MAX_WAVE_SPEED, "wave_speed", || {
        format!("must be within ±{MAX_WAVE_SPEED}, got {wave_speed}")
    })
}

/// Largest playback displacement multiplier: at 100 a blade already sweeps a hundred times its
/// baked swing, far past anything that reads as wind.
pub const MAX_WIND_POWER: f32 = 100.0;

/// Largest playback time multiplier, either way.
pub const MAX_WAVE_SPEED: f32 = 100.0;
