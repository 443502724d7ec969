//! The world as a [`ChunkSource`]: generate a chunk, then derive on the
//! generation pool what installing it needs (its trees as instances of their variants'
//! models, terrain patch, blades), so the main thread only moves data.

use std::sync::Arc;

use glam::Vec3;
use sylva_runtime::extract::{TerrainPatch, TreeInstances};
use sylva_runtime::stream::{ChunkCoord, ChunkSource};

use super::blades::{Blade, expand_blades};
use super::chunk::{ChunkPayload, TreeInstance, WorldGen};
use super::content::WorldContent;
use crate::ecology::pcg;

/// Bytes per tree a renderer uploads: its place in the table of resident trees (position,
/// yaw and scale as halves, model) and its card (position, yaw, size and atlas row).
pub const TREE_UPLOAD_BYTES: u64 = 20 + 32;
/// Bytes per blade instance a renderer uploads (root, yaw, scale, colour).
const BLADE_BYTES: u64 = 12 + 4 + 4 + 4;

/// The blades of one grass species in one chunk, as a renderer draws them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassPatch {
    /// Species index in the world's grass.
    pub species: u16,
    /// Root per blade, world metres.
    pub root: Vec<Vec3>,
    /// Yaw per blade, radians.
    pub yaw: Vec<f32>,
    /// Scale per blade.
    pub scale: Vec<f32>,
}

/// A chunk ready to install.
#[derive(Debug)]
pub struct ReadyChunk {
    /// The generated content (what the cache holds and the hash covers).
    pub payload: ChunkPayload,
    /// The drawn trees as instances of their variants' models
    /// ([`WorldContent::tree_models`]): a renderer places each model's cylinders and leaves
    /// per tree, or its card where small on screen. Render data only: the payload (what is
    /// cached and hashed) holds the trees as placed.
    pub trees: TreeInstances,
    /// The ground as a renderer draws it.
    pub patch: TerrainPatch,
    /// The blades a renderer draws: the ground cover expanded up to the world's
    /// `draw.blades_per_m2`, one patch per species with blades here. Render data only.
    pub grass: Vec<GrassPatch>,
}

impl ReadyChunk {
    /// Bytes a renderer uploads to draw this chunk.
    pub fn upload_bytes(&self) -> u64 {
        let blades: usize = self.grass.iter().map(|g| g.root.len()).sum();
        let samples = self.patch.height.len() as u64;
        self.trees.len() as u64 * TREE_UPLOAD_BYTES + blades as u64 * BLADE_BYTES + samples * (4 + 4 + 1)
    }
}

/// Chunks of one world with its grown content.
#[derive(Debug)]
pub struct WorldSource {
    chunks: WorldGen,
    content: Arc<WorldContent>,
}

impl WorldSource {
    /// The source of `gen`'s chunks, instancing `content`; its render data holds what the
    /// world's `draw` asks for (none at zero).
    pub fn new(chunks: WorldGen, content: Arc<WorldContent>) -> Self {
        Self { chunks, content }
    }

    /// The chunk function.
    pub fn chunks(&self) -> &WorldGen {
        &self.chunks
    }

    /// The grown content.
    pub fn content(&self) -> &Arc<WorldContent> {
        &self.content
    }
}

impl ChunkSource for WorldSource {
    type Payload = ChunkPayload;
    type Ready = ReadyChunk;

    fn generate(&self, coord: ChunkCoord) -> ChunkPayload {
        self.chunks.chunk(coord)
    }

    fn prepare(&self, payload: ChunkPayload) -> ReadyChunk {
        let mut trees = TreeInstances::default();
        for t in payload.trees.iter().filter(|t| self.drawn(t)) {
            if let Some(model) = self.content.model_id(usize::from(t.species), usize::from(t.variant)) {
                trees.push(model, t.position, t.yaw, t.scale);
            }
        }
        let p = self.chunks.params();
        let c = payload.coord;
        let patch = TerrainPatch {
            key: c,
            origin: Vec3::new(c[0] as f32, 0.0, c[1] as f32) * p.chunk_size(),
            cell_size: p.cell_size,
            resolution: payload.surface.resolution,
            height: payload.surface.height.clone(),
            material: payload.surface.material.clone(),
            water: payload.surface.water.clone(),
            dirty: true,
        };
        let grass = self.blades(&payload);
        ReadyChunk {
            payload,
            trees,
            patch,
            grass,
        }
    }

    fn cache_key(&self, coord: ChunkCoord) -> u64 {
        self.chunks.cache_key(coord)
    }

    fn upload_bytes(ready: &ReadyChunk) -> u64 {
        ready.upload_bytes()
    }
}

impl WorldSource {
    /// Whether tree `t` is among those a renderer draws: its own hash
    /// (of its position's bits) below its species' draw share.
    fn drawn(&self, t: &TreeInstance) -> bool {
        let share = self.chunks.draw_share(usize::from(t.species));
        let h = pcg(t.position.x.to_bits() ^ pcg(t.position.z.to_bits()));
        ((h >> 8) as f32 / (1u32 << 24) as f32) < share
    }

    /// The blades a renderer draws of `payload`, one patch per species.
    fn blades(&self, payload: &ChunkPayload) -> Vec<GrassPatch> {
        let p = self.chunks.params();
        let peak = self.chunks.biomes().peak_blades();
        if p.draw.blades_per_m2 <= 0.0 || peak <= 0.0 {
            return Vec::new();
        }
        let share = (p.draw.blades_per_m2 / peak).min(1.0);
        let mut blades: Vec<Blade> = Vec::new();
        let n = p.chunk_cells;
        expand_blades(payload, &p.grass.species, [0, 0, n, n], share, &mut blades);
        let mut patches: Vec<GrassPatch> = (0..p.grass.species.len())
            .map(|k| GrassPatch {
                species: k as u16,
                ..GrassPatch::default()
            })
            .collect();
        for b in blades {
            let patch = &mut patches[usize::from(b.species)];
            patch.root.push(b.root);
            patch.yaw.push(b.yaw);
            patch.scale.push(b.scale);
        }
        patches.retain(|g| !g.root.is_empty());
        patches
    }
}
