//! The report's `particles` object: how fast the solver ran.

use serde::Serialize;
use sylva_runtime::App;

use super::{Pinned, Position, STEP_SYSTEM, Spring};

/// Particle and spring throughput.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ParticleReport {
    /// Particles simulated (pinned roots included).
    pub particles: usize,
    /// Springs simulated.
    pub springs: usize,
    /// Particle updates per second of time spent in `particles.step`.
    pub updates_per_s: f64,
    /// Spring evaluations per second of time spent in `particles.step`.
    pub springs_per_s: f64,
}

impl ParticleReport {
    /// The particle throughput of `app` over the steps it timed (zeros before the first):
    /// after a resume, only the steps run since, not those the snapshot had run.
    pub fn of(app: &App) -> Self {
        let world = &app.world;
        let particles = world.count::<Position>();
        let springs = world.count::<Spring>();
        let (steps, step_s) = app
            .metrics()
            .systems()
            .get(STEP_SYSTEM)
            .map_or((0, 0.0), |s| (s.calls, s.total_ms / 1e3));
        let per_s = |n: usize| {
            if step_s > 0.0 {
                n as f64 * steps as f64 / step_s
            } else {
                0.0
            }
        };
        Self {
            particles,
            springs,
            updates_per_s: per_s(particles - world.count::<Pinned>()),
            springs_per_s: per_s(springs),
        }
    }
}
