//! Layered terrain shaped by erosion (scene section `terrain`).

use sylva_runtime::App;
#[cfg(feature = "render")]
use sylva_runtime::extract::TerrainBatch;
use sylva_systems::terrain::{self, TerrainChunk, TerrainReport};

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::{Building, Domain, Invalid, check_section};
use crate::memory::{Estimate, TERRAIN_CELL, TERRAIN_SLOT};
use crate::{BuildError, Report, Scene};

/// The terrain: its chunks generated, its erosion systems installed.
pub(crate) struct TerrainDomain;

impl Domain for TerrainDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        check_section(scene.terrain.as_ref(), "terrain")
    }

    fn estimate(&self, scene: &Scene, estimate: &mut Estimate) {
        if let Some(t) = &scene.terrain {
            let cells = u64::from(t.size).pow(2) * u64::from(t.chunks[0]) * u64::from(t.chunks[1]);
            let per_cell = TERRAIN_CELL + TERRAIN_SLOT * u64::from(t.max_layers);
            let what = format!(
                "{}² cells × {} × {} chunks × {} layer slots",
                t.size, t.chunks[0], t.chunks[1], t.max_layers
            );
            estimate.add("terrain.size", what, cells.saturating_mul(per_cell));
        }
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        if let Some(t) = &scene.terrain {
            terrain::build(&mut building.app, t).map_err(|e| scene.error_at(&e.within("terrain")))?;
        }
        Ok(())
    }

    fn report(&self, app: &App, report: &mut Report) {
        report
            .entities
            .insert("terrain_chunks".into(), app.world.count::<TerrainChunk>());
        report.terrain = TerrainReport::of(app);
    }

    /// The terrain's patches; a world extracts its chunks into the same batch.
    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<TerrainBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for TerrainBatch {
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.terrain = Some(self);
    }
}
