//! A world in an [`App`]: installing a ready chunk spawns its entities and
//! fills the extraction batches; evicting despawns them and frees the batch
//! runs it held.
//!
//! - The chunk's columns become one entity (`TerrainChunk` + [`WorldChunk`]);
//!   each tree one entity ([`TreeInstance`] + [`WorldChunk`]). Grass blades are
//!   instances of their species' layer, not entities, as in a grass scene.
//! - The ground goes into the [`TerrainBatch`] as one patch per chunk (evicted
//!   keys listed, so a renderer frees their textures).
//! - Trees are one cylinder batch per chunk in the [`WorldBatch`], moved in
//!   whole (no copy on the main thread) into a slot that keeps its position
//!   while the chunk is resident, so a renderer culls and picks the level of
//!   detail per chunk and re-uploads only slots that changed hands. An evicted
//!   chunk's slot is emptied and reused by the next chunk. Leaves go the same way,
//!   one leaf batch per chunk in the same slot, and the trees as instances of the
//!   world's [`TreeModels`] (one per variant, set once), for far trees drawn as cards.
//! - Blades are instances in the [`GrassBatch`] layer of their species; each
//!   chunk owns one run per layer, an evicted chunk's run is zeroed (nothing is
//!   drawn) and reused by later chunks, and trailing free runs are cut off, so a
//!   layer stays as large as what is resident plus gaps, and only changed runs
//!   are uploaded.
//! - World chunks are not saved in snapshots: they are regenerated from the scene.

use std::collections::BTreeMap;
use std::ops::Range;

use glam::Vec3;
use hecs::Entity;
use sylva_runtime::extract::{
    CylinderBatch, GrassBatch, GrassLayer, LeafBatch, TerrainBatch, TreeInstances, TreeModels,
};
use sylva_runtime::{Access, App, System};

use super::chunk::TreeInstance;
use super::content::WorldContent;
use super::params::WorldGrass;
use super::source::ReadyChunk;
use crate::terrain::TerrainChunk;

/// Which world chunk an entity belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldChunk {
    /// The chunk.
    pub coord: [i32; 2],
}

/// The world's trees as the renderer draws them (a resource).
#[derive(Clone, Debug, Default)]
pub struct WorldBatch {
    /// Per slot, the cylinders (one per branch segment) of the trees of the
    /// chunk in it; empty slots wait for the next chunk.
    pub chunks: Vec<CylinderBatch>,
    /// Per slot (the same as in `chunks`), the leaves of the trees of the chunk in it.
    pub leaves: Vec<LeafBatch>,
    /// Per slot (the same as in `chunks`), the trees of the chunk in it as instances of `models`.
    pub trees: Vec<TreeInstances>,
    /// Every tree species' variants, which `trees` instance.
    pub models: TreeModels,
}

/// Runs of a batch owned by resident chunks; freed runs are reused first-fit.
#[derive(Clone, Debug, Default)]
struct Runs {
    free: Vec<Range<usize>>,
    len: usize,
}

impl Runs {
    fn take(&mut self, n: usize) -> Range<usize> {
        if let Some(i) = self.free.iter().position(|r| r.len() >= n) {
            let r = self.free[i].clone();
            if r.len() == n {
                self.free.remove(i);
            } else {
                self.free[i].start += n;
            }
            return r.start..r.start + n;
        }
        self.len += n;
        self.len - n..self.len
    }

    /// Frees `r`; returns the new length when the batch may be cut short.
    fn give(&mut self, r: Range<usize>) -> Option<usize> {
        if r.is_empty() {
            return None;
        }
        let at = self.free.partition_point(|f| f.start < r.start);
        self.free.insert(at, r);
        // Merge with the neighbours.
        if at + 1 < self.free.len() && self.free[at].end == self.free[at + 1].start {
            self.free[at].end = self.free.remove(at + 1).end;
        }
        if at > 0 && self.free[at - 1].end == self.free[at].start {
            self.free[at - 1].end = self.free.remove(at).end;
        }
        match self.free.last() {
            Some(last) if last.end == self.len => {
                self.len = last.start;
                self.free.pop();
                Some(self.len)
            }
            _ => None,
        }
    }
}

struct Resident {
    entities: Vec<Entity>,
    slot: usize,
    grass: Vec<(usize, Range<usize>)>,
}

/// Resident chunks and the batch slots and runs they hold (a resource).
#[derive(Default)]
pub struct WorldState {
    resident: BTreeMap<[i32; 2], Resident>,
    free_slots: Vec<usize>,
    grass: Vec<Runs>,
}

impl WorldState {
    /// Chunks installed now.
    pub fn resident(&self) -> usize {
        self.resident.len()
    }
}

/// Name of the frame system [`install_world`] adds: it plays the grass at simulated time.
pub const GRASS_TIME_SYSTEM: &str = "world.grass_time";

/// Inserts the world's resources (an empty [`WorldState`], [`WorldBatch`],
/// [`TerrainBatch`], and a [`GrassBatch`] with one layer per grass species) and
/// the frame system [`GRASS_TIME_SYSTEM`].
pub fn install_world(app: &mut App, content: &WorldContent, grass: &WorldGrass) {
    let layers = content
        .grass
        .iter()
        .map(|g| GrassLayer {
            shape: g.shape.clone(),
            motion: g.motion.clone(),
            generation: 1,
            ..GrassLayer::default()
        })
        .collect();
    app.world.resources.insert(GrassBatch {
        layers,
        wind_power: grass.wind_power,
        wave_speed: grass.wave_speed,
        time: 0.0,
    });
    app.world.resources.insert(WorldState {
        grass: vec![Runs::default(); content.grass.len()],
        ..WorldState::default()
    });
    app.world.resources.insert(WorldBatch {
        models: content.tree_models(),
        ..WorldBatch::default()
    });
    app.world.resources.insert(TerrainBatch::default());
    app.add_frame_system(System::new(
        GRASS_TIME_SYSTEM,
        Access::new().write_res::<GrassBatch>(),
        |ctx| {
            let elapsed = ctx.time().elapsed as f32;
            ctx.res_mut::<GrassBatch>().time = elapsed;
        },
    ));
}

/// Installs a ready chunk (see the module docs). A chunk already resident is replaced.
pub fn install_chunk(app: &mut App, ready: ReadyChunk, content: &WorldContent) {
    let coord = ready.payload.coord;
    if app
        .world
        .resources
        .get::<WorldState>()
        .is_some_and(|s| s.resident.contains_key(&coord))
    {
        evict_chunk(app, coord);
    }
    let ReadyChunk {
        payload,
        cylinders,
        leaves,
        trees,
        patch,
        grass,
    } = ready;
    let tag = WorldChunk { coord };
    let mut entities = vec![app.world.entities.spawn((payload.terrain, tag))];
    entities.extend(
        payload
            .trees
            .iter()
            .map(|t: &TreeInstance| app.world.entities.spawn((*t, tag))),
    );
    let res = &app.world.resources;
    let mut state = res.get_mut::<WorldState>().expect("install_world ran first");
    let slot = {
        let mut batch = res.get_mut::<WorldBatch>().expect("install_world ran first");
        fill_slot(&mut state, &mut batch, (cylinders, leaves, trees))
    };
    let mut grass_runs = Vec::with_capacity(grass.len());
    if let Some(mut batch) = res.get_mut::<GrassBatch>() {
        for patch in &grass {
            let k = usize::from(patch.species);
            let (Some(layer), Some(kind)) = (batch.layers.get_mut(k), content.grass.get(k)) else {
                continue;
            };
            let r = state.grass[k].take(patch.root.len());
            write_blades(layer, r.clone(), patch, kind.colour);
            grass_runs.push((k, r));
        }
    }
    if let Some(mut terrain) = res.get_mut::<TerrainBatch>() {
        terrain.evicted.retain(|k| *k != coord);
        terrain.patches.push(patch);
    }
    state.resident.insert(
        coord,
        Resident {
            entities,
            slot,
            grass: grass_runs,
        },
    );
}

/// Moves a chunk's trees into the lowest free slot (so the slots in use stay packed at the
/// front), marked dirty whole, and returns the slot.
fn fill_slot(
    state: &mut WorldState,
    batch: &mut WorldBatch,
    (cylinders, leaves, trees): (CylinderBatch, LeafBatch, TreeInstances),
) -> usize {
    state.free_slots.sort_unstable_by(|a, b| b.cmp(a));
    let slot = state.free_slots.pop().unwrap_or(batch.chunks.len());
    if slot == batch.chunks.len() {
        batch.chunks.push(CylinderBatch::default());
    }
    let slots = batch.chunks.len();
    batch.leaves.resize_with(slots, LeafBatch::default);
    batch.trees.resize_with(slots, TreeInstances::default);
    let len = cylinders.len() as u32;
    batch.chunks[slot] = cylinders;
    batch.chunks[slot].dirty.mark(0, len);
    let len = leaves.len() as u32;
    batch.leaves[slot] = leaves;
    batch.leaves[slot].dirty.mark(0, len);
    let len = trees.len() as u32;
    batch.trees[slot] = trees;
    batch.trees[slot].dirty.mark(0, len);
    slot
}

/// The large buffers an evicted chunk leaves behind: dropping them frees
/// megabytes, which a caller may rather do on another thread than the frame's.
#[derive(Debug, Default)]
pub struct Leftovers {
    terrain: Vec<TerrainChunk>,
    cylinders: Vec<CylinderBatch>,
    leaves: Vec<LeafBatch>,
}

/// Evicts chunk `coord`: despawns its entities, empties its cylinder, leaf and tree slot, zeroes
/// and frees its blade runs, and lists its terrain patch as evicted. Returns the
/// buffers it held (see [`Leftovers`]); nothing happens when it is not resident.
pub fn evict_chunk(app: &mut App, coord: [i32; 2]) -> Leftovers {
    let mut left = Leftovers::default();
    let Some(resident) = app
        .world
        .resources
        .get_mut::<WorldState>()
        .and_then(|mut s| s.resident.remove(&coord))
    else {
        return left;
    };
    for e in &resident.entities {
        left.terrain
            .extend(app.world.entities.remove_one::<TerrainChunk>(*e).ok());
        // Entities the host despawned itself are already gone.
        let _ = app.world.entities.despawn(*e);
    }
    let res = &app.world.resources;
    let mut state = res.get_mut::<WorldState>().expect("checked above");
    if let Some(mut batch) = res.get_mut::<WorldBatch>() {
        left.cylinders.push(std::mem::take(&mut batch.chunks[resident.slot]));
        left.leaves
            .extend(batch.leaves.get_mut(resident.slot).map(std::mem::take));
        if let Some(trees) = batch.trees.get_mut(resident.slot) {
            *trees = TreeInstances::default();
        }
        state.free_slots.push(resident.slot);
    }
    if let Some(mut batch) = res.get_mut::<GrassBatch>() {
        for (k, r) in resident.grass {
            let layer = &mut batch.layers[k];
            layer.scale[r.clone()].fill(0.0);
            layer.dirty.mark(r.start as u32, r.end as u32);
            if let Some(len) = state.grass[k].give(r) {
                truncate_blades(layer, len);
            }
        }
    }
    if let Some(mut terrain) = res.get_mut::<TerrainBatch>() {
        terrain.patches.retain(|p| p.key != coord);
        terrain.evicted.push(coord);
    }
    left
}

fn write_blades(layer: &mut GrassLayer, run: Range<usize>, patch: &super::source::GrassPatch, colour: [u8; 4]) {
    if run.end > layer.len() {
        let n = run.end;
        layer.root.resize(n, Vec3::ZERO);
        layer.yaw.resize(n, 0.0);
        layer.scale.resize(n, 0.0);
        layer.colour.resize(n, colour);
        layer.live_slot.resize(n, u32::MAX);
    }
    layer.root[run.clone()].copy_from_slice(&patch.root);
    layer.yaw[run.clone()].copy_from_slice(&patch.yaw);
    layer.scale[run.clone()].copy_from_slice(&patch.scale);
    layer.colour[run.clone()].fill(colour);
    layer.dirty.mark(run.start as u32, run.end as u32);
}

fn truncate_blades(layer: &mut GrassLayer, len: usize) {
    layer.root.truncate(len);
    layer.yaw.truncate(len);
    layer.scale.truncate(len);
    layer.colour.truncate(len);
    layer.live_slot.truncate(len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_reused_merged_and_cut_at_the_end() {
        let mut runs = Runs::default();
        let a = runs.take(10);
        let b = runs.take(5);
        let c = runs.take(7);
        assert_eq!((a.clone(), b.clone(), c.clone()), (0..10, 10..15, 15..22));
        assert_eq!(runs.give(b), None);
        let d = runs.take(3);
        assert_eq!(d, 10..13, "first fit reuses the hole");
        assert_eq!(runs.give(a), None);
        assert_eq!(runs.free, vec![0..10, 13..15]);
        assert_eq!(runs.give(d), None);
        assert_eq!(runs.free, vec![0..15]);
        // Freeing the last run leaves nothing in use: the batch may shrink to zero.
        assert_eq!(runs.give(c), Some(0));
        assert!(runs.free.is_empty());
        assert_eq!(runs.take(4), 0..4);
    }
}
