//! The report's `grass` object: what [`install`](super::install) planted and baked, and how
//! much of it is live.

use serde::Serialize;
use sylva_runtime::App;

use super::install::{GrassLayers, GrassStats};

/// The report's `grass` object.
#[derive(Clone, Debug, Serialize)]
pub struct GrassReport {
    /// Blade instances planted, over all species.
    pub blades: usize,
    /// Particles of all instances, roots included.
    pub particles: usize,
    /// Spring-damper links of all instances.
    pub springs: usize,
    /// Frames baked, over all species.
    pub baked_frames: u64,
    /// Species whose bake was read from a file (`grass.bake_file`, `--bake-in`) rather than baked.
    pub loaded_bakes: usize,
    /// Wall time of all bakes, ms.
    pub bake_ms: f64,
    /// Blade steps per second of bake time (every blade of the bake field, warm-up and recording).
    pub steps_per_s: f64,
    /// Blades simulated live at the end of the run.
    pub live_blades: usize,
    /// Bytes of baked textures.
    pub texture_bytes: usize,
}

impl GrassReport {
    /// The grass object of `app`, when it has grass.
    pub fn of(app: &App) -> Option<Self> {
        let res = &app.world.resources;
        let stats = *res.get::<GrassStats>()?;
        Some(GrassReport {
            blades: stats.blades,
            particles: stats.particles,
            springs: stats.springs,
            baked_frames: stats.baked_frames,
            loaded_bakes: stats.loaded_bakes,
            bake_ms: stats.bake_ms,
            steps_per_s: if stats.bake_ms > 0.0 {
                stats.bake_blade_steps as f64 / (stats.bake_ms / 1e3)
            } else {
                0.0
            },
            live_blades: res.get::<GrassLayers>().map_or(0, |l| l.live_blades()),
            texture_bytes: stats.texture_bytes,
        })
    }
}
