//! A world in an [`App`]: installing a ready chunk spawns its entities and
//! fills the extraction batches; evicting despawns them and frees the batch
//! runs it held.
//!
//! - The chunk's columns become one entity (`TerrainChunk` + [`WorldChunk`]);
//!   each tree one entity ([`TreeInstance`] + [`WorldChunk`]). Grass blades are
//!   instances of their species' layer, not entities, as in a grass scene.
//! - The ground goes into the [`TerrainBatch`] as one patch per chunk (evicted
//!   keys listed, so a renderer frees their textures).
//! - Trees are one [`TreeInstances`] batch per chunk in the [`WorldBatch`], instances of the
//!   world's [`TreeModels`] (one per variant, set once), moved in whole (no copy on the main
//!   thread) into a slot that keeps its position while the chunk is resident, so a renderer
//!   re-uploads only slots that changed hands and draws every tree from its model: geometry
//!   near, an impostor card far. An evicted chunk's slot is emptied and reused by the next
//!   chunk.
//! - The patch carries the chunk's ground cover, and the [`GrassBatch`]'s layers the
//!   rules by which a renderer expands it into blades on the GPU. Only a chunk whose patch
//!   carries none (a host asked for [`super::ChunkParts::blades`] and no ground patch) has
//!   its blades listed: instances in the layer of their species; each
//!   chunk owns one run per layer, an evicted chunk's run is zeroed (nothing is
//!   drawn) and reused by later chunks, and trailing free runs are cut off, so a
//!   layer stays as large as what is resident plus gaps, and only changed runs
//!   are uploaded.
//! - World chunks are not saved in snapshots: they are regenerated from the scene.

use std::collections::BTreeMap;
use std::ops::Range;

use glam::Vec3;
use hecs::Entity;
use sylva_runtime::extract::{CoverRule, GrassBatch, GrassLayer, TerrainBatch, TreeInstances, TreeModels};
use sylva_runtime::runs::Runs;
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
    /// Per slot, the trees of the chunk in it as instances of `models`; empty slots wait for
    /// the next chunk.
    pub trees: Vec<TreeInstances>,
    /// Every tree species' variants, which `trees` instance.
    pub models: TreeModels,
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
/// [`TerrainBatch`], and a [`GrassBatch`] with one layer per grass species, growing out of
/// the patches' ground cover by `cover`, one rule per species) and the frame system
/// [`GRASS_TIME_SYSTEM`].
pub fn install_world(app: &mut App, content: &WorldContent, grass: &WorldGrass, cover: &[CoverRule]) {
    let layers = content
        .grass
        .iter()
        .enumerate()
        .map(|(k, g)| GrassLayer {
            shape: g.shape.clone(),
            motion: g.motion.clone(),
            generation: 1,
            cover: cover.get(k).copied(),
            ..GrassLayer::default()
        })
        .collect();
    app.world.resources.insert(GrassBatch {
        layers,
        wind_power: grass.wind_power,
        wave_speed: grass.wave_speed,
        ..GrassBatch::default()
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
        trees,
        patch,
        grass,
        ..
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
        fill_slot(&mut state, &mut batch, trees)
    };
    let mut grass_runs = Vec::with_capacity(grass.len());
    // Blades as a list only where the patch carries no cover a renderer expands itself.
    if patch.cover.is_none()
        && let Some(mut batch) = res.get_mut::<GrassBatch>()
    {
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
    // A host that asked for no ground patch (`ChunkParts`) has none to draw.
    if let Some(mut terrain) = res.get_mut::<TerrainBatch>()
        && patch.is_consistent()
    {
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
fn fill_slot(state: &mut WorldState, batch: &mut WorldBatch, trees: TreeInstances) -> usize {
    state.free_slots.sort_unstable_by(|a, b| b.cmp(a));
    let slot = state.free_slots.pop().unwrap_or(batch.trees.len());
    if slot == batch.trees.len() {
        batch.trees.push(TreeInstances::default());
    }
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
}

/// Evicts chunk `coord`: despawns its entities, empties its tree slot, zeroes
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
