//! Trees grown by space colonization (scene section `colonize`).

use sylva_runtime::App;
use sylva_systems::colonize::{self, Attractor};

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::{Building, Domain, Invalid, check_section, colonize_error};
use crate::memory::{ATTRACTOR, Estimate};
use crate::{BuildError, Report, Scene};

/// Space colonization: its attractors, and the trees they grow (the scene's tree for export
/// when it has no L-system tree).
pub(crate) struct ColonizeDomain;

impl Domain for ColonizeDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        check_section(scene.colonize.as_ref(), "colonize")
    }

    fn estimate(&self, scene: &Scene, estimate: &mut Estimate) {
        if let Some(c) = &scene.colonize {
            let points = u64::from(c.count);
            estimate.add("colonize.count", format!("{points} attractors"), points * ATTRACTOR);
        }
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        let Some(c) = &scene.colonize else {
            return Ok(());
        };
        // Meshed as the scene's tree only where no L-system tree is.
        let mesh = building.tree.is_none();
        let colonized = colonize::build(&mut building.app, c, scene.seed, mesh);
        let colonized = colonized.map_err(|e| colonize_error(scene, "colonize", e))?;
        building.tree = building.tree.take().or(colonized);
        Ok(())
    }

    fn report(&self, app: &App, report: &mut Report) {
        report
            .entities
            .insert("attractors".into(), app.world.count::<Attractor>());
    }

    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<colonize::AttractorBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for colonize::AttractorBatch {
    /// The attractors, as points (shown or not at the caller's choice).
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.points = Some(&mut self.points);
    }
}
