//! Grass: one instanced draw per [`GrassLayer`]. A layer's motion goes up once
//! per `generation` as a 3D texture (cells × cells × links·frames; RGBA16F as
//! is, the thesis's RGB8 widened to RGBA8 with the decode in the shader) with a
//! small shape buffer; instances are a SoA vertex buffer updated by dirty
//! ranges; live displacements go up whole every frame. The vertex shader
//! builds one quad per link from two displaced rows (`shaders/grass.vert`,
//! fetch in `shaders/grass_fetch.glsl`).
//!
//! Culling and level of detail: a layer is skipped when the box of its roots,
//! grown by the blade's reach (rest extent × largest scale + largest
//! displacement), is outside the frustum. Within [`LOD_FULL_METRES`] of the camera
//! every blade is drawn; beyond it a hash of the instance index thins blades
//! linearly to none at [`LOD_CUT_METRES`] (links are never dropped: a blade
//! keeps its shape, the sward gets sparser, which fog hides).
//!
//! Layers that grow out of the chunks' ground cover (a [`GrassLayer::cover`] rule) are
//! also drawn from the sward's part of its blade buffer (`sward.rs`), one indirect draw
//! each; the expansion thinned them with distance already, so their vertex shader only
//! widens the blades that are left.
//!
//! The grass probe (`grass_probe.rs`) uploads a layer's [`Motion`] the same way
//! and runs the fetch in a compute shader.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use half::f16;
use sylva_runtime::extract::{GrassBatch, GrassLayer, GrassMotion, GrassTexel, LiveCells};
use sylva_runtime::glam::Vec3;

use crate::cull::Aabb;
use crate::descriptors::{self, Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::{Buffer, Image, Memory};
use crate::handles::Owned;
use crate::instances::Instances;
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::sward::{Sward, SwardBlade};
use crate::terrain::CoverChunk;
use crate::upload::Uploads;

/// Blades closer than this are all drawn, metres.
pub const LOD_FULL_METRES: f32 = 40.0;
/// Blades farther than this are not drawn, metres; between the two they thin out linearly.
pub const LOD_CUT_METRES: f32 = 160.0;

/// Per instance: root, yaw, scale, colour, live slot.
const INSTANCE: &[Attribute] = &[
    Attribute::VEC3,
    Attribute::FLOAT,
    Attribute::FLOAT,
    Attribute::RGBA8,
    Attribute::UINT,
];

/// Layers (descriptor sets) the pool has room for.
const MAX_LAYERS: u32 = 256;

/// What a layer's set holds: the motion texture and two storage buffers (shape and
/// live displacements for a draw, queries and results for a probe).
pub(crate) const SET_KINDS: [vk::DescriptorType; 3] = [
    vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
    vk::DescriptorType::STORAGE_BUFFER,
    vk::DescriptorType::STORAGE_BUFFER,
];

/// Bytes per particle in the shape buffer (matches `Particle` in `grass.vert`).
const PARTICLE_BYTES: usize = 32;

/// Push constants of one layer draw (matches `grass.vert`).
#[repr(C)]
#[derive(Clone, Copy)]
struct LayerConstants {
    field: [f32; 4],
    play: [f32; 4],
    lod: [f32; 4],
}

// SAFETY: repr(C) of three 16-byte arrays of `f32`: no padding.
unsafe impl Pod for LayerConstants {}

/// A layer's motion and shape on the GPU.
pub(crate) struct Motion {
    /// The motion texture.
    pub image: Image,
    shape: Buffer,
    generation: u64,
    /// cells, cell size, frames, seconds per frame.
    pub field: [f32; 4],
    /// Links per blade.
    pub links: u32,
    /// Metres per RGB8 step (0 for RGBA16F).
    pub rgb8_scale: f32,
    /// Largest distance of a rest particle from the root, metres.
    rest_reach: f32,
    /// Tallest rest particle, metres.
    rest_height: f32,
    /// Largest stored displacement, metres.
    max_displacement: f32,
}

/// One layer's GPU copy.
struct Slot {
    set: DescriptorSet,
    motion: Motion,
    instances: Instances,
    live: Buffer,
    roots: Aabb,
    max_scale: f32,
}

/// The grass draw path.
pub(crate) struct Grass {
    slots: Vec<Slot>,
    draws: Vec<(usize, LayerConstants)>,
    /// Constants of each layer the sward draws, in the sward's draw order.
    sward_constants: Vec<LayerConstants>,
    sward: Sward,
    pipeline: DrawPipeline,
    sets: SetPool,
    sampler: Owned<vk::Sampler>,
}

impl Grass {
    /// The pipeline over the globals at set 0 and a layer's set at set 1; the sward reads
    /// chunks through sets of layout `cover`.
    pub fn new(
        memory: &Arc<Memory>,
        globals: vk::DescriptorSetLayout,
        cover: vk::DescriptorSetLayout,
    ) -> Result<Grass, RenderError> {
        let device = memory.device();
        // Room for a replaced set of every layer waiting in the graveyard beside its successor.
        let sets = SetPool::new(memory, vk::ShaderStageFlags::VERTEX, &SET_KINDS, 2 * MAX_LAYERS)?;
        let pipeline = DrawPipeline::new(
            device,
            &PipelineDesc {
                vert: shaders::GRASS_VERT,
                frag: shaders::GRASS_FRAG,
                vertices: &[],
                instances: INSTANCE,
                sets: &[globals, sets.layout()],
                push_bytes: std::mem::size_of::<LayerConstants>() as u32,
            },
        )?;
        Ok(Grass {
            slots: Vec::new(),
            draws: Vec::new(),
            sward_constants: Vec::new(),
            sward: Sward::new(memory, globals, cover)?,
            pipeline,
            sets,
            sampler: descriptors::nearest_sampler(device)?,
        })
    }

    /// Brings slot `i` up to date with `layer`: a new generation gets a new slot.
    fn update(&mut self, frame: &mut Prepare<'_>, i: usize, layer: &mut GrassLayer) -> Result<(), RenderError> {
        if !layer.is_consistent() {
            return Err(RenderError::BadBatch(format!(
                "grass layer {i}: arrays disagree ({} instances, {} particles, motion of {} links × {} frames × {}² cells)",
                layer.len(),
                layer.shape.rest.len(),
                layer.motion.links,
                layer.motion.frames,
                layer.motion.cells
            )));
        }
        match self.slots.get(i) {
            None => {
                let slot = self.new_slot(frame, layer)?;
                self.slots.push(slot);
            }
            Some(s) if s.motion.generation != layer.generation => self.slots[i] = self.new_slot(frame, layer)?,
            Some(_) => {}
        }
        self.slots[i].update(frame, layer, (&self.sets, self.sampler.raw()))
    }

    /// A slot for a new layer generation: its motion, a small live buffer and its set.
    fn new_slot(&self, frame: &mut Prepare<'_>, layer: &GrassLayer) -> Result<Slot, RenderError> {
        let max_depth = frame.memory.device().limits.max_image_dimension3_d;
        let motion = Motion::new(frame.memory, frame.uploads, layer, max_depth)?;
        let live = live_buffer(frame.memory, 16)?;
        let set = self.sets.allocate("vkAllocateDescriptorSets")?;
        let slot = Slot {
            set,
            motion,
            instances: Instances::new(INSTANCE, "grass instances"),
            live,
            roots: Aabb::EMPTY,
            max_scale: 0.0,
        };
        slot.write_set(self.sampler.raw());
        Ok(slot)
    }

    /// Picks the visible layers and their constants.
    fn pick(&mut self, frame: &mut Prepare<'_>, batch: &GrassBatch) {
        let view = frame.view;
        for (i, s) in self.slots.iter().enumerate() {
            if s.instances.len() == 0 {
                continue;
            }
            let live = batch.layers[i]
                .live_displacement
                .iter()
                .fold(0.0f32, |m, d| m.max(d.length()));
            let m = &s.motion;
            let reach = m.rest_reach * s.max_scale + (m.max_displacement * batch.wind_power.abs()).max(live);
            let bounds = Aabb {
                min: s.roots.min - Vec3::splat(reach),
                max: s.roots.max + Vec3::splat(reach),
            };
            if !view.frustum.intersects(&bounds) || bounds.distance(view.camera.position) >= LOD_CUT_METRES {
                frame.stats.batches_culled += 1;
                continue;
            }
            self.draws.push((i, s.constants(batch, s.max_scale, None)));
        }
        let reach = self.sward.reach();
        for draw in self.sward.draws() {
            let (s, layer) = (&self.slots[draw.layer], &batch.layers[draw.layer]);
            let tallest = layer.cover.map_or(1.0, |r| r.scale[1].abs());
            self.sward_constants.push(s.constants(batch, tallest, Some(reach)));
        }
    }

    /// Whether the sward's cells are culled by the view and thinned with distance.
    pub fn set_sward_culling(&mut self, on: bool) {
        self.sward.set_culling(on);
    }

    /// Records the sward's expansion (before the frame's rendering).
    pub fn record_expand(&self, rec: &Recording<'_>, slot: usize) {
        self.sward.record(rec, slot);
    }

    /// Every blade the last frame expanded from the ground cover (no frame in flight).
    pub fn read_sward(&mut self, memory: &Arc<Memory>) -> Result<Vec<SwardBlade>, RenderError> {
        self.sward.read(memory)
    }
}

impl DrawPass for Grass {
    /// The layers (slot `i` is layer `i`; `None` frees every slot) and their playback, and
    /// the chunks with ground cover.
    type Batch<'b> = (Option<&'b mut GrassBatch>, Vec<CoverChunk>);

    fn prepare(&mut self, frame: &mut Prepare<'_>, (batch, covers): Self::Batch<'_>) -> Result<(), RenderError> {
        self.draws.clear();
        self.sward_constants.clear();
        let Some(batch) = batch else {
            self.slots.clear();
            return self.sward.prepare(frame, (&[], &LiveCells::default()), &[]);
        };
        if batch.layers.len() > MAX_LAYERS as usize {
            return Err(RenderError::BadBatch(format!(
                "{} grass layers (at most {MAX_LAYERS})",
                batch.layers.len()
            )));
        }
        self.slots.truncate(batch.layers.len());
        for (i, layer) in batch.layers.iter_mut().enumerate() {
            self.update(frame, i, layer)?;
        }
        self.sward.prepare(frame, (&batch.layers, &batch.live), &covers)?;
        self.pick(frame, batch);
        Ok(())
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        if self.draws.is_empty() && self.sward.draws().is_empty() {
            return;
        }
        self.pipeline.bind(rec);
        for (draw, constants) in self.sward.draws().iter().zip(&self.sward_constants) {
            self.pipeline.bind_set(rec, 1, self.slots[draw.layer].set.raw());
            self.pipeline.push(rec, constants);
            self.sward.bind(rec, draw.part);
            self.sward.draw(rec, draw.part);
            stats.draw_calls += 1;
        }
        stats.grass += self.sward.drawn();
        for (i, constants) in &self.draws {
            let s = &self.slots[*i];
            self.pipeline.bind_set(rec, 1, s.set.raw());
            self.pipeline.push(rec, constants);
            s.instances.bind(rec, 0);
            // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline,
            // the layer's set, its constants and its instances bound.
            unsafe {
                rec.device
                    .cmd_draw(rec.cmd, 6 * s.motion.links, s.instances.len(), 0, 0);
            }
            stats.draw_calls += 1;
            stats.grass += u64::from(s.instances.len());
        }
    }
}

impl Slot {
    /// The layer's draw constants with blades scaled up to `max_scale`; `thinned`: the
    /// blades were thinned with distance already, from full density to none over these
    /// distances (the sward's).
    fn constants(&self, batch: &GrassBatch, max_scale: f32, thinned: Option<(f32, f32)>) -> LayerConstants {
        let m = &self.motion;
        let (full, cut) = thinned.unwrap_or((LOD_FULL_METRES, LOD_CUT_METRES));
        LayerConstants {
            field: m.field,
            play: [
                batch.wind_power,
                batch.time * batch.wave_speed,
                m.links as f32,
                m.rgb8_scale,
            ],
            lod: [
                full,
                cut,
                m.rest_height * max_scale.max(1e-6),
                if thinned.is_some() { 1.0 } else { 0.0 },
            ],
        }
    }

    /// Uploads the layer's changed instances (recomputing the root box whenever any
    /// changed) and its live displacements, growing their buffer when needed (with a
    /// new set from `sets` pointing at it: the frame in flight may still bind the old one).
    fn update(
        &mut self,
        frame: &mut Prepare<'_>,
        layer: &mut GrassLayer,
        (sets, sampler): (&SetPool, vk::Sampler),
    ) -> Result<(), RenderError> {
        let dirty = layer.dirty.take();
        let arrays = [
            slice_bytes(&layer.root),
            slice_bytes(&layer.yaw),
            slice_bytes(&layer.scale),
            slice_bytes(&layer.colour),
            slice_bytes(&layer.live_slot),
        ];
        let changed = self
            .instances
            .update(frame.memory, frame.uploads, &arrays, layer.len(), dirty)?;
        if !changed.range.is_empty() || changed.resized {
            self.roots = Aabb::EMPTY;
            self.max_scale = 0.0;
            for (root, scale) in layer.root.iter().zip(&layer.scale) {
                self.roots.add_sphere(*root, 0.0);
                self.max_scale = self.max_scale.max(scale.abs());
            }
        }
        let live: Vec<[f32; 4]> = layer
            .live_displacement
            .iter()
            .map(|d| d.extend(0.0).to_array())
            .collect();
        let needed = (slice_bytes(&live).len() as u64).max(16);
        if self.live.size() < needed {
            self.live = live_buffer(frame.memory, needed.next_power_of_two())?;
            self.set = sets.allocate("vkAllocateDescriptorSets")?;
            self.write_set(sampler);
        }
        frame.uploads.copy_to_buffer(self.live.raw(), 0, slice_bytes(&live));
        Ok(())
    }

    fn write_set(&self, sampler: vk::Sampler) {
        self.set.write(&[
            Descriptor::Texture(&self.motion.image, sampler),
            Descriptor::Storage(&self.motion.shape),
            Descriptor::Storage(&self.live),
        ]);
    }
}

fn live_buffer(memory: &Arc<Memory>, size: u64) -> Result<Buffer, RenderError> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    memory.buffer(size, usage, MemoryLocation::GpuOnly, "grass live displacements")
}

impl Motion {
    /// Creates a layer's motion texture and shape buffer and queues their uploads;
    /// `max_depth` is the device's largest 3D texture side.
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        layer: &GrassLayer,
        max_depth: u32,
    ) -> Result<Motion, RenderError> {
        let m = &layer.motion;
        let depth = m.links.checked_mul(m.frames).filter(|&d| d <= max_depth);
        let Some(depth) = depth.filter(|_| m.cells >= 1 && m.cells <= max_depth) else {
            return Err(RenderError::BadBatch(format!(
                "grass motion of {} cells and {} links × {} frames exceeds the device's 3D texture size {max_depth}",
                m.cells, m.links, m.frames
            )));
        };
        let (format, texels, rgb8_scale) = texels(m);
        let extent = vk::Extent3D {
            width: m.cells,
            height: m.cells,
            depth,
        };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let image = memory.image_3d(extent, format, usage, "grass motion")?;
        let shape = shape_bytes(layer);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let buffer = memory.buffer(shape.len() as u64, usage, MemoryLocation::GpuOnly, "grass shape")?;
        uploads.copy_to_image(image.raw(), extent, &texels);
        uploads.copy_to_buffer(buffer.raw(), 0, &shape);
        Ok(Motion {
            image,
            shape: buffer,
            generation: layer.generation,
            field: [m.cells as f32, m.cell_size, m.frames as f32, m.frame_seconds],
            links: m.links,
            rgb8_scale,
            rest_reach: layer.shape.rest.iter().fold(0.0f32, |r, p| r.max(p.length())),
            rest_height: layer.shape.rest.iter().fold(0.0f32, |h, p| h.max(p.y)),
            max_displacement: max_displacement(m),
        })
    }
}

/// The shape buffer: per particle its rest position and width, then its parent.
fn shape_bytes(layer: &GrassLayer) -> Vec<u8> {
    let mut shape = Vec::with_capacity(layer.shape.rest.len() * PARTICLE_BYTES);
    for ((rest, width), parent) in layer.shape.rest.iter().zip(&layer.shape.width).zip(&layer.shape.parent) {
        for v in [rest.x, rest.y, rest.z, *width] {
            shape.extend_from_slice(&v.to_le_bytes());
        }
        for v in [*parent, 0, 0, 0] {
            shape.extend_from_slice(&v.to_le_bytes());
        }
    }
    shape
}

/// The texture format, texels as the GPU takes them, and the RGB8 scale (0 for RGBA16F).
fn texels(m: &GrassMotion) -> (vk::Format, Vec<u8>, f32) {
    match m.texel {
        GrassTexel::Rgba16F => (vk::Format::R16G16B16A16_SFLOAT, m.texels.clone(), 0.0),
        // RGB8 is rarely sampleable; widened to RGBA8 (alpha unused) the shader decodes the same bytes.
        GrassTexel::Rgb8 { scale } => {
            let wide = m.texels.chunks_exact(3).flat_map(|t| [t[0], t[1], t[2], 0]).collect();
            (vk::Format::R8G8B8A8_UNORM, wide, scale)
        }
    }
}

/// The largest displacement any texel stores, metres (for culling boxes).
fn max_displacement(m: &GrassMotion) -> f32 {
    let largest = |a: f32, b: f32| a.max(b.abs());
    match m.texel {
        GrassTexel::Rgba16F => m
            .texels
            .chunks_exact(8)
            .map(|t| {
                (0..3)
                    .map(|k| f16::from_le_bytes([t[2 * k], t[2 * k + 1]]).to_f32())
                    .map(|c| c * c)
                    .sum::<f32>()
                    .sqrt()
            })
            .fold(0.0, largest),
        GrassTexel::Rgb8 { scale } => m
            .texels
            .chunks_exact(3)
            .map(|t| {
                let c = |k: usize| (f32::from(t[k]) - 128.0) * scale;
                (c(0) * c(0) + c(1) * c(1) + c(2) * c(2)).sqrt()
            })
            .fold(0.0, largest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_float_displacements_are_measured() {
        let texel = |v: [f32; 4]| v.map(|c| f16::from_f32(c).to_le_bytes()).concat();
        let m = GrassMotion {
            texel: GrassTexel::Rgba16F,
            texels: [texel([3.0, 0.0, -4.0, 9.0]), texel([0.5, 0.5, 0.5, 0.0])].concat(),
            ..GrassMotion::default()
        };
        assert_eq!(max_displacement(&m), 5.0);
    }

    #[test]
    fn rgb8_is_widened_to_rgba8() {
        let m = GrassMotion {
            texel: GrassTexel::Rgb8 { scale: 0.5 },
            texels: vec![1, 2, 3, 130, 128, 120],
            ..GrassMotion::default()
        };
        let (format, wide, scale) = texels(&m);
        assert_eq!((format, scale), (vk::Format::R8G8B8A8_UNORM, 0.5));
        assert_eq!(wide, vec![1, 2, 3, 0, 130, 128, 120, 0]);
        assert_eq!(
            max_displacement(&m),
            (127.0f32 * 127.0 + 126.0 * 126.0 + 125.0 * 125.0).sqrt() * 0.5
        );
    }
}
