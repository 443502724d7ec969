//! The world as a [`ChunkSource`]: generate a chunk, then derive on the
//! generation pool what installing it needs (the [`ChunkParts`] asked for: its trees as
//! instances of their variants' models, terrain patch, blades, the mesh kit's meshes, and
//! the host's own type from its hook), so the main thread only moves data.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use glam::Vec3;
use sylva_runtime::extract::{TerrainPatch, TreeInstances};
use sylva_runtime::stream::{ChunkCoord, ChunkSource};

use super::blades::{Blade, expand_blades, ground_cover};
use super::chunk::{ChunkPayload, TreeInstance, WorldGen};
use super::content::WorldContent;
use crate::ecology::pcg;
use sylva_runtime::aabb::Aabb;

use crate::mesh_kit::{GROUND_LEVELS, KitError, Mesh, MeshKit};

/// What a ready chunk carries beyond its payload (which it always carries). Sylva's renderer
/// needs the first two ([`ChunkParts::RENDERER`], the default: it expands the patch's ground
/// cover into blades itself); a host with its own renderer asks for what it uses, and what it
/// does not ask for is never built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkParts {
    /// The drawn trees as instances of their variants' models ([`ReadyChunk::trees`]).
    pub tree_instances: bool,
    /// The ground as Sylva's renderer draws it, with its ground cover ([`ReadyChunk::patch`]).
    pub ground_patch: bool,
    /// Grass blades expanded from the ground cover on the CPU ([`ReadyChunk::grass`]), for a
    /// host that draws blades as a list: at most [`MAX_LISTED_BLADES`] a chunk at the world's
    /// drawn density, or the parts are refused.
    pub blades: bool,
    /// The mesh kit's ground (every level) and water ([`ReadyChunk::meshes`]).
    pub meshes: bool,
}

/// Most blades a chunk may list on the CPU ([`ChunkParts::blades`]): 10 MiB of roots, yaws
/// and scales. Denser grass is expanded where it is drawn, from the ground patch's cover.
pub const MAX_LISTED_BLADES: u64 = 1 << 19;

impl ChunkParts {
    /// What Sylva's renderer draws: tree instances and the ground patch, whose ground cover
    /// it expands into blades on the GPU.
    pub const RENDERER: ChunkParts = ChunkParts {
        tree_instances: true,
        ground_patch: true,
        blades: false,
        meshes: false,
    };

    /// The mesh kit's meshes alone (a host with its own renderer).
    pub const MESHES: ChunkParts = ChunkParts {
        tree_instances: false,
        ground_patch: false,
        blades: false,
        meshes: true,
    };

    /// True when no part is asked for.
    pub fn is_empty(&self) -> bool {
        !(self.tree_instances || self.ground_patch || self.blades || self.meshes)
    }

    /// True when any of Sylva's render batches is asked for.
    pub fn any_render(&self) -> bool {
        self.tree_instances || self.ground_patch || self.blades
    }
}

impl Default for ChunkParts {
    fn default() -> Self {
        Self::RENDERER
    }
}

/// A host's own work on a ready chunk, run on the generation pool (see
/// [`WorldStreamer::with_hook`](super::WorldStreamer::with_hook)).
pub type ChunkHook = Arc<dyn Fn(&ReadyChunk, &MeshKit) -> Box<dyn Any + Send> + Send + Sync>;

/// Why a host's hook gave nothing for a chunk.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum HookError {
    /// The hook panicked; the pool went on.
    #[error("chunk {coord:?}: the host's hook panicked: {message}")]
    Panicked {
        /// The chunk.
        coord: [i32; 2],
        /// The panic's message, when it was a string.
        message: String,
    },
    /// The hook's output was asked for as another type.
    #[error("chunk {coord:?}: the host's hook made another type than the one asked for")]
    Type {
        /// The chunk.
        coord: [i32; 2],
    },
}

/// A chunk's meshes from the mesh kit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkMeshes {
    /// The ground at each level of detail the chunk's cells allow, finest first
    /// ([`MeshKit::ground`]).
    pub ground: Vec<Mesh>,
    /// The water surface ([`MeshKit::water`]); empty for a dry chunk.
    pub water: Mesh,
    /// The box around the ground, the water and every tree of the chunk
    /// ([`MeshKit::chunk_bounds`]).
    pub bounds: Aabb,
}

/// What the generation pool made for ready chunks so far, part by part: chunks and
/// milliseconds.
#[derive(Debug, Default)]
pub struct PreparedCounts {
    /// Chunks given Sylva's render batches.
    pub render: AtomicU64,
    /// Nanoseconds making them.
    pub render_ns: AtomicU64,
    /// Chunks given meshes.
    pub meshes: AtomicU64,
    /// Nanoseconds making them.
    pub meshes_ns: AtomicU64,
    /// Chunks the host's hook ran on.
    pub hooked: AtomicU64,
    /// Nanoseconds in the hook.
    pub hook_ns: AtomicU64,
    /// Hook runs that panicked.
    pub hook_panics: AtomicU64,
}

/// Adds the time since `started` to `ns` and one to `count`.
fn book(count: &AtomicU64, ns: &AtomicU64, started: Instant) {
    count.fetch_add(1, Ordering::Relaxed);
    ns.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

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

/// A chunk ready to install. Its payload is the chunk itself, what the cache holds and the
/// hash covers: the terrain's columns, the trees as placed (`payload.trees`: every tree and
/// shrub, species, variant and transform), the attribute maps and the ground cover. The rest
/// is derived from it for drawing, each part only when asked for ([`ChunkParts`]); a part not
/// asked for is empty.
#[derive(Debug)]
pub struct ReadyChunk {
    /// The generated content (what the cache holds and the hash covers).
    pub payload: ChunkPayload,
    /// The drawn trees (those the world's `draw.trees_per_hectare` keeps of
    /// `payload.trees`) as instances of their variants' models
    /// ([`WorldContent::tree_models`]): a renderer places each model's cylinders and leaves
    /// per tree, or its card where small on screen.
    pub trees: TreeInstances,
    /// The ground as Sylva's renderer draws it: `payload.surface`'s planes with their place
    /// in the world, and its ground cover when the world draws grass.
    pub patch: TerrainPatch,
    /// The blades expanded on the CPU, when asked for ([`ChunkParts::blades`]): the ground
    /// cover up to the world's `draw.blades_per_m2`, one patch per species with blades here.
    pub grass: Vec<GrassPatch>,
    /// The mesh kit's meshes of the chunk, when asked for.
    pub meshes: Option<ChunkMeshes>,
    /// What the host's hook made of this chunk on the pool, when it has one.
    pub hosted: Option<Result<Box<dyn Any + Send>, HookError>>,
}

impl ReadyChunk {
    /// Takes what the host's hook made of this chunk, as the type the hook returns: `None`
    /// without a hook (or when taken already), an error when the hook panicked or made another
    /// type.
    pub fn take_hosted<T: 'static>(&mut self) -> Option<Result<T, HookError>> {
        let coord = self.payload.coord;
        Some(
            self.hosted
                .take()?
                .and_then(|b| b.downcast::<T>().map(|t| *t).map_err(|_| HookError::Type { coord })),
        )
    }

    /// Bytes a renderer uploads to draw this chunk (Sylva's render batches and the kit's
    /// meshes it carries).
    pub fn upload_bytes(&self) -> u64 {
        let blades: usize = self.grass.iter().map(|g| g.root.len()).sum();
        let samples = self.patch.height.len() as u64 + self.patch.cover.as_ref().map_or(0, |c| c.samples.len() as u64);
        let meshes = self.meshes.as_ref().map_or(0, |m| {
            m.ground.iter().chain([&m.water]).map(|g| g.bytes() as u64).sum::<u64>()
        });
        self.trees.len() as u64 * TREE_UPLOAD_BYTES + blades as u64 * BLADE_BYTES + samples * (4 + 4 + 1) + meshes
    }
}

/// Chunks of one world with its grown content.
pub struct WorldSource {
    chunks: WorldGen,
    content: Arc<WorldContent>,
    kit: MeshKit,
    parts: ChunkParts,
    hook: Option<ChunkHook>,
    prepared: PreparedCounts,
}

impl std::fmt::Debug for WorldSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorldSource")
            .field("chunks", &self.chunks)
            .field("parts", &self.parts)
            .field("hook", &self.hook.is_some())
            .finish_non_exhaustive()
    }
}

impl WorldSource {
    /// The source of `gen`'s chunks, instancing `content`, making Sylva's render batches
    /// ([`ChunkParts::RENDERER`]); its render data holds what the world's `draw` asks for
    /// (none at zero).
    pub fn new(chunks: WorldGen, content: Arc<WorldContent>) -> Self {
        Self {
            kit: MeshKit::new(chunks.params(), Arc::clone(&content)),
            chunks,
            content,
            parts: ChunkParts::RENDERER,
            hook: None,
            prepared: PreparedCounts::default(),
        }
    }

    /// Makes `parts` of each chunk from now on.
    pub fn set_parts(&mut self, parts: ChunkParts) {
        self.parts = parts;
    }

    /// Runs `hook` on each chunk from now on, after its parts are made.
    pub fn set_hook(&mut self, hook: Option<ChunkHook>) {
        self.hook = hook;
    }

    /// The parts each chunk is given.
    pub fn parts(&self) -> ChunkParts {
        self.parts
    }

    /// What the pool made so far.
    pub fn prepared(&self) -> &PreparedCounts {
        &self.prepared
    }

    /// The mesh kit of this world.
    pub fn mesh_kit(&self) -> &MeshKit {
        &self.kit
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
        let parts = self.parts;
        let started = Instant::now();
        let mut ready = ReadyChunk {
            trees: if parts.tree_instances {
                self.instances(&payload)
            } else {
                TreeInstances::default()
            },
            patch: if parts.ground_patch {
                self.patch(&payload)
            } else {
                TerrainPatch::default()
            },
            grass: if parts.blades {
                self.blades(&payload)
            } else {
                Vec::new()
            },
            meshes: None,
            hosted: None,
            payload,
        };
        let p = &self.prepared;
        if parts.any_render() {
            book(&p.render, &p.render_ns, started);
        }
        if parts.meshes {
            let started = Instant::now();
            // A payload made by this world always has its shape, so the kit cannot refuse it.
            ready.meshes = self.meshes(&ready.payload).ok();
            book(&p.meshes, &p.meshes_ns, started);
        }
        if let Some(hook) = &self.hook {
            let started = Instant::now();
            let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&ready, &self.kit)));
            book(&p.hooked, &p.hook_ns, started);
            ready.hosted = Some(made.map_err(|panic| {
                p.hook_panics.fetch_add(1, Ordering::Relaxed);
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                HookError::Panicked {
                    coord: ready.payload.coord,
                    message,
                }
            }));
        }
        ready
    }

    fn cache_key(&self, coord: ChunkCoord) -> u64 {
        self.chunks.cache_key(coord)
    }

    fn upload_bytes(ready: &ReadyChunk) -> u64 {
        ready.upload_bytes()
    }
}

impl WorldSource {
    /// The drawn trees of `payload` as instances of their models.
    fn instances(&self, payload: &ChunkPayload) -> TreeInstances {
        let mut trees = TreeInstances::default();
        for t in payload.trees.iter().filter(|t| self.drawn(t)) {
            if let Some(model) = self.content.model_id(usize::from(t.species), usize::from(t.variant)) {
                trees.push(model, t.position, t.yaw, t.scale);
            }
        }
        trees
    }

    /// `payload`'s ground as Sylva's renderer draws it.
    fn patch(&self, payload: &ChunkPayload) -> TerrainPatch {
        let p = self.chunks.params();
        let c = payload.coord;
        TerrainPatch {
            key: c,
            origin: Vec3::new(c[0] as f32, 0.0, c[1] as f32) * p.chunk_size(),
            cell_size: p.cell_size,
            resolution: payload.surface.resolution,
            height: payload.surface.height.clone(),
            material: payload.surface.material.clone(),
            water: payload.surface.water.clone(),
            cover: (self.blade_share() > 0.0 && !payload.cover.density.is_empty()).then(|| {
                let n = p.chunk_cells as i32;
                ground_cover(&payload.cover, [c[0].wrapping_mul(n), c[1].wrapping_mul(n)])
            }),
            dirty: true,
        }
    }

    /// The share of the ground cover's blades a renderer draws (the world's
    /// `draw.blades_per_m2` against the densest biome's ground): what its layers' cover rules
    /// and [`ReadyChunk::grass`] hold.
    pub fn blade_share(&self) -> f32 {
        let p = self.chunks.params();
        let peak = self.chunks.biomes().peak_blades();
        if p.draw.blades_per_m2 <= 0.0 || peak <= 0.0 {
            return 0.0;
        }
        (p.draw.blades_per_m2 / peak).min(1.0)
    }

    /// `payload`'s meshes: its ground at every level its cells allow, its water, its bounds.
    fn meshes(&self, payload: &ChunkPayload) -> Result<ChunkMeshes, KitError> {
        let mut ground = vec![self.kit.ground(payload, 0)?];
        for level in 1..GROUND_LEVELS {
            match self.kit.ground(payload, level) {
                Ok(mesh) => ground.push(mesh),
                Err(KitError::Level { .. }) => break,
                Err(e) => return Err(e),
            }
        }
        let water = self.kit.water(payload)?;
        // The meshes just made are the chunk's ground and water: box them, not fresh copies.
        let bounds = ground[0]
            .bounds()
            .union(water.bounds())
            .union(self.kit.trees_bounds(payload)?);
        Ok(ChunkMeshes { ground, water, bounds })
    }

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
        let share = self.blade_share();
        if share <= 0.0 {
            return Vec::new();
        }
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
