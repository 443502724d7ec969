//! Terrain: one shared grid mesh per (resolution, level of detail), skirted
//! so chunks on different grids meet without cracks; each chunk has a surface
//! texture (ground height, water depth) and a material texture that the
//! vertex shader fetches (and the fragment shader, for per-pixel heights and
//! normals). Chunks are culled by their boxes and take coarser grids with
//! distance. Snow lies above a line set by the height range of all chunks.
//!
//! Terrain casts into the sun's shadow map: the chunks inside what the map
//! covers, one draw each, on the grid the view would draw them with, so the
//! surface in the map is the surface that samples it.
//!
//! A patch's ground cover goes up beside its textures, with a set through which
//! the grass expansion (`sward.rs`) reads all three.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::{GroundCover, TerrainBatch, TerrainPatch};
use sylva_runtime::glam::Vec3;

use crate::cull::Aabb;
use crate::descriptors::{self, Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::{Buffer, Image, Memory};
use crate::handles::Owned;
use crate::mesh::{self, Mesh};
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;

/// Chunks the descriptor pool has room for.
const MAX_CHUNKS: u32 = 4096;

/// Per grid vertex: sample coordinates (i, j) and the skirt's drop in cells.
const VERTEX: &[Attribute] = &[Attribute::VEC3];

/// The sea's level where a world has none: below any ground, yet finite for the shader's sums.
const NO_SEA: f32 = -1.0e9;

/// Snow needs this much relief below it, metres, so low hills stay green.
const SNOW_MIN_RELIEF: f32 = 300.0;
/// The snow line's share of the height range, from the lowest ground (or sea level) up.
const SNOW_SHARE: f32 = 0.72;
/// Metres over which snow fades in, as a share of the height range.
const SNOW_FADE_SHARE: f32 = 0.06;

/// Push constants of one chunk draw (matches `terrain.vert`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ChunkConstants {
    origin_cell: [f32; 4],
    size: [i32; 4],
    /// Snow line and fade, time, the sea's level.
    levels: [f32; 4],
}

// SAFETY: repr(C) of three 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for ChunkConstants {}

/// One chunk on the GPU.
struct Chunk {
    set: DescriptorSet,
    surface: Image,
    material: Image,
    origin: Vec3,
    cell_size: f32,
    samples: u32,
    bounds: Aabb,
    cover: Option<Cover>,
}

/// A chunk's ground cover on the GPU: its samples and the set the grass expansion reads
/// the chunk through (surface, material, samples).
struct Cover {
    set: DescriptorSet,
    /// Held while the set points at it.
    _samples: Buffer,
    seed: u32,
    origin_cell: [i32; 2],
    spacing: u32,
    side: u32,
    /// The most blades per cell any sample holds.
    peak: f32,
}

/// A chunk's ground cover as the grass expansion dispatches over it (`sward.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoverChunk {
    /// Surface and material textures and the cover samples (`grass_expand.comp`'s set 2).
    pub set: vk::DescriptorSet,
    /// World cell of the chunk's cell (0, 0).
    pub origin_cell: [i32; 2],
    /// Cells per side.
    pub cells: u32,
    /// Metres per cell.
    pub cell_size: f32,
    /// The blade hash's seed, cells between samples, samples per side.
    pub cover: [u32; 3],
    /// The most blades per cell any sample holds.
    pub peak: f32,
    /// World position of cell (0, 0)'s corner, ground height 0.
    pub origin: Vec3,
    /// The box around the chunk's ground.
    pub bounds: Aabb,
}

/// Chunks whose ground cover the pool has sets for (the grass expansion's reach holds few).
const MAX_COVERS: u32 = 1024;

/// The terrain draw path.
pub(crate) struct Terrain {
    chunks: BTreeMap<[i32; 2], Chunk>,
    grids: HashMap<(u32, u32), Mesh>,
    /// (chunk, grid) per visible chunk, decided in `prepare`.
    draws: Vec<([i32; 2], (u32, u32))>,
    /// (chunk, grid) per chunk inside what the shadow map covers.
    shadow_draws: Vec<([i32; 2], (u32, u32))>,
    /// The frame's time, seconds: the water's ripples drift with it.
    time: f32,
    /// Snow line and fade-in height, metres, from every chunk's heights.
    snow: [f32; 2],
    /// The sea's level, metres, if the world has a sea: beaches and the swash lie just
    /// above it, and water above it is a river's or a lake's.
    sea: Option<f32>,
    scratch: Vec<[f32; 2]>,
    pipeline: DrawPipeline,
    shadow: DrawPipeline,
    sets: SetPool,
    cover_sets: SetPool,
    sampler: Owned<vk::Sampler>,
}

impl Terrain {
    /// The pipelines (the view's, and the shadow map's: depth only) over the globals at
    /// set 0 and a chunk's two textures at set 1.
    pub fn new(memory: &Arc<Memory>, globals: vk::DescriptorSetLayout) -> Result<Terrain, RenderError> {
        let device = memory.device();
        let kinds = [vk::DescriptorType::COMBINED_IMAGE_SAMPLER; 2];
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let sets = SetPool::new(memory, stages, &kinds, MAX_CHUNKS)?;
        let desc = PipelineDesc {
            vert: shaders::TERRAIN_VERT,
            frag: shaders::TERRAIN_FRAG,
            vertices: VERTEX,
            instances: &[],
            sets: &[globals, sets.layout()],
            push_bytes: std::mem::size_of::<ChunkConstants>() as u32,
        };
        let pipeline = DrawPipeline::new(device, &desc)?;
        let shadow = DrawPipeline::shadow(device, &desc, None)?;
        let cover_kinds = [
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            vk::DescriptorType::STORAGE_BUFFER,
        ];
        let cover_sets = SetPool::new(memory, vk::ShaderStageFlags::COMPUTE, &cover_kinds, 2 * MAX_COVERS)?;
        Ok(Terrain {
            chunks: BTreeMap::new(),
            grids: HashMap::new(),
            draws: Vec::new(),
            shadow_draws: Vec::new(),
            time: 0.0,
            snow: [f32::MAX, 1.0],
            sea: None,
            scratch: Vec::new(),
            pipeline,
            shadow,
            sets,
            cover_sets,
            sampler: descriptors::nearest_sampler(device)?,
        })
    }

    /// The layout of a chunk's cover set (`grass_expand.comp`'s set 2).
    pub fn cover_layout(&self) -> vk::DescriptorSetLayout {
        self.cover_sets.layout()
    }

    /// The chunks with ground cover, for the grass expansion.
    pub fn covers(&self) -> Vec<CoverChunk> {
        self.chunks
            .values()
            .filter_map(|c| {
                let cover = c.cover.as_ref()?;
                Some(CoverChunk {
                    set: cover.set.raw(),
                    origin_cell: cover.origin_cell,
                    cells: c.samples - 1,
                    cell_size: c.cell_size,
                    cover: [cover.seed, cover.spacing, cover.side],
                    peak: cover.peak,
                    origin: c.origin,
                    bounds: c.bounds,
                })
            })
            .collect()
    }

    /// A chunk's cover on the GPU: its samples queued for upload and its set written.
    fn cover(&self, frame: &mut Prepare<'_>, chunk: &Chunk, cover: &GroundCover) -> Result<Cover, RenderError> {
        let bytes = slice_bytes(&cover.samples);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let samples = frame
            .memory
            .buffer(bytes.len() as u64, usage, MemoryLocation::GpuOnly, "ground cover")?;
        frame.uploads.copy_to_buffer(samples.raw(), 0, bytes);
        let set = self
            .cover_sets
            .allocate("vkAllocateDescriptorSets (too many chunks with ground cover?)")?;
        let sampler = self.sampler.raw();
        set.write(&[
            Descriptor::Texture(&chunk.surface, sampler),
            Descriptor::Texture(&chunk.material, sampler),
            Descriptor::Storage(&samples),
        ]);
        let densest = cover.samples.iter().map(|s| s & 0xffff).max().unwrap_or(0);
        Ok(Cover {
            set,
            _samples: samples,
            seed: cover.seed,
            origin_cell: cover.origin_cell,
            spacing: cover.spacing,
            side: cover.side,
            peak: densest as f32 / 256.0,
        })
    }

    /// Frees evicted chunks and those no longer in `batch`.
    fn free_gone(&mut self, batch: &mut TerrainBatch) {
        for key in batch.evicted.drain(..) {
            self.chunks.remove(&key);
        }
        let live: BTreeSet<[i32; 2]> = batch.patches.iter().map(|p| p.key).collect();
        self.chunks.retain(|key, _| live.contains(key));
    }

    /// Creates chunks for new patches (and patches whose resolution changed) and
    /// uploads those and the dirty ones.
    fn upload(&mut self, frame: &mut Prepare<'_>, patches: &mut [TerrainPatch]) -> Result<(), RenderError> {
        for patch in patches {
            if !patch.is_consistent() {
                return Err(RenderError::BadBatch(format!(
                    "terrain patch {:?}: planes do not match resolution {} (cell size {})",
                    patch.key, patch.resolution, patch.cell_size
                )));
            }
            if let Some(c) = patch.cover.as_ref().filter(|c| !c.is_consistent()) {
                return Err(RenderError::BadBatch(format!(
                    "terrain patch {:?}: ground cover of {} samples, {} per side, every {} cells",
                    patch.key,
                    c.samples.len(),
                    c.side,
                    c.spacing
                )));
            }
            let fits = self
                .chunks
                .get(&patch.key)
                .is_some_and(|c| c.samples == patch.resolution);
            if !fits {
                // The old chunk goes to the graveyard (the frame in flight may draw it).
                self.chunks.remove(&patch.key);
                let chunk = self.create_chunk(frame.memory, patch)?;
                self.chunks.insert(patch.key, chunk);
            } else if !patch.dirty {
                continue;
            }
            patch.dirty = false;
            let chunk = self.chunks.get_mut(&patch.key).expect("chunk created above");
            chunk.origin = patch.origin;
            chunk.cell_size = patch.cell_size;
            chunk.bounds = bounds(patch);
            self.scratch.clear();
            self.scratch
                .extend(patch.height.iter().zip(&patch.water).map(|(&h, &w)| [h, w]));
            let extent = vk::Extent2D {
                width: patch.resolution,
                height: patch.resolution,
            };
            frame
                .uploads
                .copy_to_image(chunk.surface.raw(), extent, slice_bytes(&self.scratch));
            frame
                .uploads
                .copy_to_image(chunk.material.raw(), extent, &patch.material);
            let chunk = &self.chunks[&patch.key];
            let cover = match &patch.cover {
                Some(c) => Some(self.cover(frame, chunk, c)?),
                None => None,
            };
            self.chunks.get_mut(&patch.key).expect("chunk created above").cover = cover;
        }
        Ok(())
    }

    /// Sets the snow line from the height range of every chunk: the upper part of
    /// the range, and only where the terrain has mountains' relief.
    fn place_snow(&mut self) {
        let (lo, hi) = self.chunks.values().fold((f32::MAX, f32::MIN), |(lo, hi), c| {
            (lo.min(c.bounds.min.y), hi.max(c.bounds.max.y))
        });
        // From sea level where the ground reaches below it: a world's sea floor is no
        // foot of its mountains.
        let lo = lo.max(self.sea.unwrap_or(0.0));
        let range = hi - lo;
        self.snow = if range >= SNOW_MIN_RELIEF {
            [lo + SNOW_SHARE * range, SNOW_FADE_SHARE * range]
        } else {
            [f32::MAX, 1.0]
        };
    }

    /// Picks the visible chunks and those casting into the shadow map, with their grids
    /// (by distance from the camera for both), making grids on first use.
    fn pick(&mut self, frame: &mut Prepare<'_>) -> Result<(), RenderError> {
        for (key, c) in &self.chunks {
            let seen = frame.view.frustum.intersects(&c.bounds);
            let casts = frame.sun.intersects(&c.bounds);
            if !seen {
                frame.stats.chunks_culled += 1;
                if !casts {
                    continue;
                }
            }
            let extent = (c.samples - 1) as f32 * c.cell_size;
            let d = c.bounds.distance(frame.view.camera.position);
            let mut step = if d < extent {
                1
            } else if d < 3.0 * extent {
                2
            } else {
                4
            };
            while (c.samples - 1) % step != 0 {
                step /= 2;
            }
            let grid = (c.samples, step);
            if let Entry::Vacant(slot) = self.grids.entry(grid) {
                let (v, i) = mesh::grid(c.samples, step);
                slot.insert(Mesh::new(frame.memory, frame.uploads, &v, &i, "terrain grid")?);
            }
            if seen {
                self.draws.push((*key, grid));
            }
            if casts {
                self.shadow_draws.push((*key, grid));
            }
        }
        Ok(())
    }

    /// Records `draws` with `pipeline`; returns how many.
    fn record_with(&self, pipeline: &DrawPipeline, rec: &Recording<'_>, draws: &[([i32; 2], (u32, u32))]) -> u32 {
        if draws.is_empty() {
            return 0;
        }
        pipeline.bind(rec);
        for (key, grid) in draws {
            let c = &self.chunks[key];
            let mesh = &self.grids[grid];
            mesh.bind(rec);
            pipeline.bind_set(rec, 1, c.set.raw());
            pipeline.push(
                rec,
                &ChunkConstants {
                    origin_cell: [c.origin.x, c.origin.y, c.origin.z, c.cell_size],
                    size: [c.samples as i32, 0, 0, 0],
                    levels: [self.snow[0], self.snow[1], self.time, self.sea.unwrap_or(NO_SEA)],
                },
            );
            // SAFETY: `rec.cmd` is recording inside a rendering with the pipeline, the
            // mesh, the chunk's set and its constants bound.
            unsafe {
                rec.device.cmd_draw_indexed(rec.cmd, mesh.index_count, 1, 0, 0, 0);
            }
        }
        draws.len() as u32
    }

    fn create_chunk(&self, memory: &Arc<Memory>, patch: &TerrainPatch) -> Result<Chunk, RenderError> {
        let extent = vk::Extent2D {
            width: patch.resolution,
            height: patch.resolution,
        };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let colour = vk::ImageAspectFlags::COLOR;
        let surface = memory.image(extent, vk::Format::R32G32_SFLOAT, usage, colour, "terrain surface")?;
        let material = memory.image(extent, vk::Format::R8_UINT, usage, colour, "terrain material")?;
        let set = self
            .sets
            .allocate("vkAllocateDescriptorSets (too many terrain chunks?)")?;
        let sampler = self.sampler.raw();
        set.write(&[
            Descriptor::Texture(&surface, sampler),
            Descriptor::Texture(&material, sampler),
        ]);
        Ok(Chunk {
            set,
            surface,
            material,
            origin: patch.origin,
            cell_size: patch.cell_size,
            samples: patch.resolution,
            bounds: Aabb::EMPTY,
            cover: None,
        })
    }
}

impl DrawPass for Terrain {
    /// The patches (`None` frees every chunk), the frame's time, seconds, and the sea's
    /// level, if the world has a sea.
    type Batch<'b> = (Option<&'b mut TerrainBatch>, f32, Option<f32>);

    /// Frees evicted and vanished chunks, uploads new and dirty ones, and
    /// picks the visible and the casting chunks with their level of detail.
    fn prepare(&mut self, frame: &mut Prepare<'_>, (batch, time, sea): Self::Batch<'_>) -> Result<(), RenderError> {
        self.draws.clear();
        self.shadow_draws.clear();
        // Wrapped at a period the ripples' noise needs no precision for.
        self.time = if time.is_finite() { time.rem_euclid(3600.0) } else { 0.0 };
        self.sea = sea.filter(|s| s.is_finite());
        let Some(batch) = batch else {
            self.chunks.clear();
            return Ok(());
        };
        self.free_gone(batch);
        self.upload(frame, &mut batch.patches)?;
        self.place_snow();
        self.pick(frame)
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        let n = self.record_with(&self.pipeline, rec, &self.draws);
        stats.draw_calls += n;
        stats.chunks += n;
    }

    /// One draw per chunk inside what the map covers: hills shadow valleys and themselves.
    fn record_shadow(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.shadow_draw_calls += self.record_with(&self.shadow, rec, &self.shadow_draws);
    }
}

/// The box around a patch's ground and water surface.
fn bounds(p: &TerrainPatch) -> Aabb {
    let (lo, hi) = p
        .height
        .iter()
        .zip(&p.water)
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), (&h, &w)| {
            (lo.min(h), hi.max(h + w))
        });
    let extent = (p.resolution - 1) as f32 * p.cell_size;
    Aabb {
        min: p.origin + Vec3::new(0.0, lo, 0.0),
        max: p.origin + Vec3::new(extent, hi, extent),
    }
}
