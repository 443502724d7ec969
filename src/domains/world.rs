//! An endless world (scene section `world`): terrain, rivers, trees and grass streamed chunk by
//! chunk around viewers, through the [`WorldStreamer`](sylva_systems::world::WorldStreamer)
//! the build hands back.

use sylva_runtime::FieldError;
#[cfg(feature = "render")]
use sylva_runtime::extract::HorizonBatch;
use sylva_systems::world::{self, ContentError, WorldError};

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::forest::species_error;
use super::{Building, Domain, Invalid, check_section};
use crate::memory::{
    self, Estimate, WORLD_CELL, WORLD_COVER_SAMPLE, WORLD_INSTANCE, WORLD_LIVE_BLADE, WORLD_SAMPLE, WORLD_SLOT,
};
use crate::{BuildError, Scene};

/// The world: its species grown once for every chunk, its streamer built.
pub(crate) struct WorldDomain;

impl Domain for WorldDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        // A forest stands on the ground built before it, which a world's own terrain is not,
        // and its trees are instances of other models than the world's.
        if scene.world.is_some() && scene.forest.is_some() {
            let why = "a world plants its own trees (world.trees): drop the forest section";
            return Err(FieldError::new("forest", why).into());
        }
        check_section(scene.world.as_ref(), "world")
    }

    fn estimate(&self, scene: &Scene, estimate: &mut Estimate) {
        if let Some(w) = &scene.world {
            let resident = memory::resident_chunks(w);
            let cells = u64::from(w.chunk_cells).pow(2);
            let per_cell = WORLD_CELL + WORLD_SLOT * u64::from(w.terrain.max_layers);
            let what = format!("up to {resident} resident chunks of {}² cells", w.chunk_cells);
            estimate.add("world.evict_radius", what, resident.saturating_mul(cells * per_cell));
            let samples = u64::from(w.chunk_cells / w.ecology.sample_cells.max(1) + 1).pow(2);
            let instances = memory::instances_per_chunk(w);
            let cover = if w.draw.blades_per_m2 > 0.0 {
                samples * WORLD_COVER_SAMPLE
            } else {
                0
            };
            let per_chunk = samples * WORLD_SAMPLE + (instances * WORLD_INSTANCE as f64) as u64 + cover;
            let what = format!(
                "up to {resident} resident chunks × at most {instances:.0} trees and shrubs, {samples} attribute \
                 and ground-cover samples"
            );
            estimate.add("world.ecology", what, resident.saturating_mul(per_chunk));
            if !w.grass.species.is_empty() {
                let what = format!("at most {} blades near pushers", world::MAX_LIVE_BLADES);
                let bytes = world::MAX_LIVE_BLADES as u64 * WORLD_LIVE_BLADE;
                estimate.add("world.grass.live", what, bytes);
            }
            if let Some(b) = &w.terrain.basins {
                let domain = b.domain_chunks as f32 * w.chunk_size();
                let what = format!("the far field, out to {} m at most", world::HORIZON_RADIUS);
                estimate.add(
                    "world.terrain.basins",
                    what,
                    world::horizon_bytes(b.node_spacing, domain),
                );
            }
        }
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        let Some(w) = &scene.world else {
            return Ok(());
        };
        let streamer = world::build(&mut building.app, w, scene.seed).map_err(|e| world_error(scene, e))?;
        // The variants are grown by now; the chunks, with their trees, stream in later.
        let trees = memory::world_trees(w, streamer.content());
        building.world = Some(streamer);
        building.spend(scene, trees)
    }

    /// The world's trees and its far field; its terrain and grass are drawn with the
    /// terrain's and the grass's batches, which it extracts into.
    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<world::WorldBatch>();
        frame.draw::<HorizonBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for world::WorldBatch {
    /// The resident trees, drawn wholly from the world's models. A scene never pairs a world
    /// with a forest, whose instances would index other models (the world's section refuses
    /// it); an app that does so anyway draws the world's trees alone.
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.instanced.clear();
        input.instanced.extend(self.trees.iter_mut());
        input.tree_models = Some(&self.models);
    }
}

#[cfg(feature = "render")]
impl Draw for HorizonBatch {
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.horizon = Some(self);
    }
}

/// A world failure: a species at the field it comes from; the pool and the cache as they are.
fn world_error(scene: &Scene, e: WorldError) -> BuildError {
    match e {
        WorldError::Invalid(f) => scene.error_at(&f.within("world")).into(),
        WorldError::Content(ContentError::Tree { species, source }) => {
            let at = format!("world.trees[{species}].species");
            species_error(scene, &at, |_| at.clone(), source)
        }
        WorldError::Content(ContentError::Blade { species, source }) => scene
            .grammar_error_at(&format!("world.grass.species[{species}].grammar"), &source)
            .into(),
        WorldError::Content(ContentError::Bake { species, source }) => scene
            .error_at(&FieldError::new(
                &format!("world.grass.species[{species}]"),
                source.to_string(),
            ))
            .into(),
        WorldError::Content(ContentError::Live { species, source }) => scene
            .error_at(&FieldError::new(
                "world.grass.live.step_seconds",
                format!("species {species}'s {}", source.message),
            ))
            .into(),
        e => BuildError::World(e),
    }
}
