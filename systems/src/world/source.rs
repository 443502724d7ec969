//! The world as a [`ChunkSource`]: generate a chunk, then derive on the
//! generation pool what installing it needs (cylinders, leaves, terrain patch, blades),
//! so the main thread only moves data.

use std::sync::Arc;

use glam::{Quat, Vec3};
use sylva_runtime::extract::{CylinderBatch, LeafBatch, TerrainPatch, TreeAnchor, TreeInstances};
use sylva_runtime::stream::{ChunkCoord, ChunkSource};

use super::blades::{Blade, expand_blades};
use super::chunk::{ChunkPayload, TreeInstance, WorldGen};
use super::content::{TreeKind, WorldContent};
use crate::ecology::pcg;
use crate::tree::{Placement, UpAxis, push_leaves};

/// Bytes per cylinder instance a renderer uploads (start, end, two radii, colour).
const CYLINDER_BYTES: u64 = 12 + 12 + 4 + 4 + 4;
/// Bytes per leaf instance a renderer uploads (position, normal, size, colour).
const LEAF_BYTES: u64 = 12 + 12 + 4 + 4;
/// Bytes per tree instance a renderer uploads (model, position, yaw, scale).
const TREE_BYTES: u64 = 4 + 12 + 4 + 4;
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
    /// One cylinder per branch segment of every tree.
    pub cylinders: CylinderBatch,
    /// Every tree's leaves: its variant's, placed like its cylinders. Render data only: the
    /// payload (what is cached and hashed) has none.
    pub leaves: LeafBatch,
    /// Every tree as an instance of its variant's model ([`WorldContent::tree_models`]), for
    /// a renderer that draws far trees as cards. Render data only, like `leaves`.
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
        self.cylinders.len() as u64 * CYLINDER_BYTES
            + self.leaves.len() as u64 * LEAF_BYTES
            + self.trees.len() as u64 * TREE_BYTES
            + blades as u64 * BLADE_BYTES
            + samples * (4 + 4 + 1)
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
        let mut cylinders = CylinderBatch::default();
        let mut leaves = LeafBatch::default();
        let mut trees = TreeInstances::default();
        let drawn = payload.trees.iter().filter(|t| self.drawn(t));
        for t in drawn {
            let kind = &self.content.trees[usize::from(t.species)];
            let from = (cylinders.len(), leaves.len());
            push_tree(&mut cylinders, kind, t);
            push_tree_leaves(&mut leaves, kind, t);
            let anchor = TreeAnchor::of(t.position, (&cylinders, &leaves), from);
            cylinders.set_tree(from.0..cylinders.len(), anchor);
            leaves.set_tree(from.1..leaves.len(), anchor);
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
            cylinders,
            leaves,
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
    /// Whether tree `t` is among those a renderer's copies hold: its own hash
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

/// Appends one cylinder per segment of the tree's variant, turned by its yaw and scaled.
fn push_tree(batch: &mut CylinderBatch, kind: &TreeKind, t: &TreeInstance) {
    let Some(graph) = kind.variants.get(usize::from(t.variant)) else {
        return;
    };
    let turn = Quat::from_rotation_y(t.yaw);
    let scale = kind.scale * t.scale;
    let point = |p: Vec3| t.position + turn * UpAxis::Z.to_y_up(p) * scale;
    for i in 0..graph.len() {
        batch.push(
            point(graph.start[i]),
            point(graph.end[i]),
            graph.start_radius[i] * scale,
            graph.end_radius[i] * scale,
            kind.colour,
        );
    }
}

/// Appends the leaves of the tree's variant, turned and scaled as its cylinders are.
fn push_tree_leaves(batch: &mut LeafBatch, kind: &TreeKind, t: &TreeInstance) {
    let Some(leaves) = kind.leaves.get(usize::from(t.variant)) else {
        return;
    };
    let placement = Placement {
        position: t.position,
        scale: kind.scale * t.scale,
    };
    push_leaves(batch, leaves, placement, t.yaw, kind.leaf_colour);
}
