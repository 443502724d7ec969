//! The particle solver and its hanging chains (scene sections `particles` and `chains`).

use sylva_runtime::{App, FieldError};
use sylva_systems::particles::{self, ParticleReport, Pinned, Position, Spring};

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::{Building, Domain, Invalid, check_section};
use crate::memory::{Estimate, PARTICLE};
use crate::{BuildError, Report, Scene};

/// The particle solver, always installed, and the chains it hangs when the scene has some.
pub(crate) struct ChainsDomain;

impl Domain for ChainsDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        FieldError::check(scene.particles.gravity.is_finite(), "particles.gravity", || {
            "must be finite".into()
        })?;
        check_section(scene.chains.as_ref(), "chains")
    }

    fn estimate(&self, scene: &Scene, estimate: &mut Estimate) {
        if let Some(c) = &scene.chains {
            let particles = u64::from(c.columns) * u64::from(c.rows) * u64::from(c.links + 1);
            estimate.add("chains", format!("{particles} particles"), particles * PARTICLE);
        }
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        particles::build(&mut building.app, scene.particles, scene.chains.as_ref(), scene.seed);
        Ok(())
    }

    fn report(&self, app: &App, report: &mut Report) {
        let world = &app.world;
        report.entities.insert("particles".into(), world.count::<Position>());
        report.entities.insert("pinned".into(), world.count::<Pinned>());
        report.entities.insert("springs".into(), world.count::<Spring>());
        report.particles = ParticleReport::of(app);
    }

    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<particles::SpringBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for particles::SpringBatch {
    /// The springs, drawn as tubes.
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.cylinders.push(&mut self.cylinders);
    }
}
