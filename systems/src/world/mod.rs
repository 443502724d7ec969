//! The world: an endless scene of terrain, trees and grass, generated chunk by
//! chunk around moving viewers (DESIGN.md, "The world").
//!
//! - [`WorldParams`]: the `world` scene section (chunk grid, radii, budgets,
//!   cache, and the content: terrain generator, tree and grass species with
//!   their placement rules).
//! - [`WorldGen::chunk`]: the pure chunk function `(world, seed, coord) →`
//!   [`ChunkPayload`] (terrain columns and surface, tree instances, grass
//!   blades, content hash). Terrain is the generator's output, sampled in world
//!   cells so chunks meet exactly (no erosion yet: separately eroded chunks
//!   would not meet). Placement uses hashed priorities over the 3 × 3
//!   neighbourhood ([`placement`]).
//! - [`grow_content`]: the few tree variants per species and one grass bake per
//!   species, grown once and instanced by every chunk.
//! - [`WorldSource`]: the world as the runtime's `ChunkSource`; it derives
//!   cylinders and the terrain patch on the generation pool.
//! - [`install_chunk`] / [`evict_chunk`]: a chunk in and out of an `App`.
//! - [`WorldStreamer`]: all of it, driven by the host once per frame; [`build`]
//!   puts a scene's world into an `App`.
//! - [`StreamingReport`]: the streaming over a flight, measured by a [`FlightLog`].

mod chunk;
mod content;
mod install;
mod params;
pub mod placement;
mod report;
mod source;
mod streamer;

pub use chunk::{ChunkPayload, DATA_VERSION, GrassPatch, StageMillis, Surface, TreeInstance, WorldGen};
pub use content::{BARK, ContentError, GrassKind, TreeKind, WorldContent, grow_content};
pub use install::{
    GRASS_TIME_SYSTEM, Leftovers, WorldBatch, WorldChunk, WorldState, evict_chunk, install_chunk, install_world,
};
pub use params::{
    BudgetParams, FlightParams, MAX_CANDIDATES_PER_CHUNK, MAX_CHUNK_CELLS, MAX_REACH_CELLS, MAX_SPECIES,
    PlacementParams, WorldGrass, WorldGrassSpecies, WorldParams, WorldTerrain, WorldTrees,
};
pub use report::{ChunkCounts, FlightLog, Quantiles, RssReport, StreamingReport};
pub use source::{ReadyChunk, WorldSource};
pub use streamer::{WorldError, WorldStreamer, build};
