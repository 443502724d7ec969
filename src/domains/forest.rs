//! A forest (scene section `forest`): species grown as variants and placed by Poisson-disk
//! scattering on the ground built so far.

use sylva_runtime::App;
use sylva_systems::placement::forest::{self, ForestError, ForestStats};

use super::{Building, Domain, Invalid, check_section, colonize_error, grow_error, tree_error, under};
use crate::{BuildError, Report, Scene, memory};

/// The forest: its variants grown, then (once its segments are known and fit the memory limit)
/// its trees planted.
pub(crate) struct ForestDomain;

impl Domain for ForestDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        check_section(scene.forest.as_ref(), "forest")
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        let Some(f) = &scene.forest else {
            return Ok(());
        };
        let (app, ground) = building.app_and_ground();
        let grown = app.in_pool(|| forest::grow_forest(f, ground, scene.seed));
        let grown = grown.map_err(|e| forest_error(scene, e))?;
        // The segments are known once the variants are grown, and spawned only if they fit.
        building.spend(scene, memory::forest(&grown))?;
        forest::plant(&mut building.app, grown).map_err(|e| forest_error(scene, e))
    }

    fn report(&self, app: &App, report: &mut Report) {
        report.forest = ForestStats::of(app);
    }
}

/// A forest failure, at the species it comes from.
fn forest_error(scene: &Scene, e: ForestError) -> BuildError {
    species_error(scene, "forest", |k| format!("forest.species[{k}]"), e)
}

/// A failure of a forest's species: of the section at `at` (`forest`, or a world's
/// `world.trees[k].species`), and of its species `k` at `species_at(k)`.
pub(super) fn species_error(
    scene: &Scene,
    at: &str,
    species_at: impl Fn(usize) -> String,
    e: ForestError,
) -> BuildError {
    match e {
        ForestError::InvalidParam(f) => scene.error_at(&under(at, f)).into(),
        ForestError::LSystem { species, source } => grow_error(scene, &species_at(species), source),
        ForestError::Colonize { species, source } => {
            colonize_error(scene, &format!("{}.colonize", species_at(species)), source)
        }
        ForestError::Tree(e) => tree_error(scene, at, &e),
    }
}
