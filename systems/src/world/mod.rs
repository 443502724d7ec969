//! The world: an endless scene of terrain, trees and grass, generated chunk by
//! chunk around moving viewers (docs/design/architecture.md, "The world: a
//! chunk is a pure function").
//!
//! - [`WorldParams`]: the `world` scene section (chunk grid, radii, budgets,
//!   cache, and the content: terrain generator, tree and grass species with
//!   their placement rules).
//! - [`WorldGen::chunk`]: the pure chunk function `(world, seed, coord) →`
//!   [`ChunkPayload`] (terrain columns and surface with its water, terrain
//!   attributes, tree and shrub instances placed by biome densities, the
//!   ground-cover field, river crossings, content hash); see
//!   docs/design/ecology.md for the attributes and biomes.
//! - [`expand_blades`]: grass blades from a chunk's ground-cover field, the
//!   same wherever they are expanded. Terrain is two
//!   scales (docs/design/architecture.md, "Two-scale terrain"): [`Domains`]
//!   solve basin islands by stream-power erosion on a coarse lattice,
//!   `relief` upsamples them under the generator's detail (sampled in world
//!   cells) and carves the rivers, and [`WorldGen::region`] erodes the chunk
//!   with an apron wide enough that it equals a monolithic run. Placement uses
//!   hashed priorities over the 3 × 3 neighbourhood ([`across_borders`]).
//! - [`far_field`]: the basin heights beyond the streamed chunks, out to the
//!   horizon, which the streamer keeps around its first viewer.
//! - [`stitch`]: a rectangle of chunks as one map, with river measures.
//! - [`grow_content`]: the few tree variants per species and one grass bake per
//!   species, grown once and instanced by every chunk.
//! - [`WorldSource`]: the world as the runtime's `ChunkSource`; it derives on the
//!   generation pool the [`ChunkParts`] asked for (tree instances, the terrain patch,
//!   blades, the [mesh kit](crate::mesh_kit)'s meshes) and runs the host's hook.
//! - [`install_chunk`] / [`evict_chunk`]: a chunk in and out of an `App`; [`install_live`]:
//!   the ground cover's blades near pushers simulated live.
//! - [`WorldStreamer`]: all of it, driven by the host once per frame (by the wall clock,
//!   [`WorldStreamer::update`], or by the host's own, [`WorldStreamer::step`]); [`build`]
//!   puts a scene's world into an `App`.
//! - [`StreamingReport`]: the streaming over a flight, measured by a [`FlightLog`].
//! - [`bake`] / [`verify`]: a rectangle of chunks and their domains made ahead
//!   of time into a store ([`create_store`]), one shard at a time; readers open
//!   it with [`open_store`].

pub mod across_borders;
mod attributes;
mod bake;
mod blades;
mod chunk;
mod content;
mod domains;
mod horizon;
mod install;
mod live_grass;
mod masks;
pub mod packed;
mod params;
mod relief;
mod report;
mod sites;
mod source;
mod stitch;
mod store;
mod streamer;

pub use bake::{
    BakeError, BakePlan, BakeReport, MAX_BAKE_CHUNKS, Phase, Shard, ShardError, StoreFile, VerifyReport, bake,
    hilbert_order, verify,
};
pub use blades::{Blade, CellRect, CoverGround, cover_rules, expand_blades, expand_ground, ground_cover, unpack_cover};
pub use chunk::{
    ChunkContent, ChunkPayload, DATA_VERSION, Region, RiverCrossing, StageMillis, Surface, TreeInstance, WorldGen,
};
pub use content::{ContentError, GrassKind, TreeKind, WorldContent, grow_content};
pub use domains::{Domain, DomainCounts, Domains, RiverPath};
pub use horizon::{
    CLOSED_CANOPY_STEMS, FarCanopy, HORIZON_RADIUS, HORIZON_RECENTRE, HORIZON_SPACING, far_field, horizon_bytes,
    horizon_centre, horizon_grid,
};
pub use install::{
    GRASS_TIME_SYSTEM, Leftovers, WorldBatch, WorldChunk, WorldState, evict_chunk, install_chunk, install_world,
};
pub use live_grass::{
    LIVE_EXTRACT_SYSTEM, LIVE_SYSTEM, LIVE_TILE_CELLS, MAX_LIVE_BLADES, WALK_SYSTEM, WorldLive, WorldWalk, install_live,
};
pub use masks::{InstanceRow, Masks, instances, masks};
pub use params::{
    BudgetParams, ChunkErosion, DrawParams, FlightParams, MAX_CANDIDATES_PER_CHUNK, MAX_CHUNK_CELLS,
    MAX_CHUNK_EROSION_ITERATIONS, MAX_REACH_CELLS, MAX_SPECIES, MAX_WALKERS, PlacementParams, WorldBasins, WorldGrass,
    WorldGrassSpecies, WorldParams, WorldTerrain, WorldTrees,
};
pub use relief::Reach;
pub use report::{ChunkCounts, FlightLog, Quantiles, RssReport, StreamingReport};
pub use source::{
    ChunkHook, ChunkMeshes, ChunkParts, GrassPatch, HookError, MAX_LISTED_BLADES, PreparedCounts, ReadyChunk,
    WorldSource,
};
pub use stitch::{MAX_STITCHED_CELLS, RegionReport, StitchError, Stitched, ground_field, stitch};
pub use store::{MANIFEST, STAGING, StoreError, StoreWriter, create_store, is_store, leftovers, open_store};
pub use streamer::{WorldError, WorldStreamer, build};
