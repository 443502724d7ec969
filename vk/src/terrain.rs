//! Terrain: one shared grid mesh per (resolution, level of detail); each
//! chunk has a surface texture (ground height, water depth) and a material
//! texture that the vertex shader fetches. Chunks are culled by their boxes
//! and take coarser grids with distance.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

use ash::vk;
use sylva_runtime::extract::{TerrainBatch, TerrainPatch};
use sylva_runtime::glam::Vec3;

use crate::cull::Aabb;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::memory::{Image, Memory};
use crate::mesh::{self, Mesh};
use crate::pipeline::{self, PipelineDesc, attribute, binding};
use crate::pod::{Pod, bytes_of, slice_bytes};
use crate::shaders;
use crate::upload::Uploads;

/// Chunks the descriptor pool has room for.
const MAX_CHUNKS: u32 = 4096;

/// Push constants of one chunk draw (matches `terrain.vert`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ChunkConstants {
    origin_cell: [f32; 4],
    size: [i32; 4],
}

// SAFETY: repr(C) of two 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for ChunkConstants {}

/// One chunk on the GPU.
struct Chunk {
    surface: Image,
    material: Image,
    set: vk::DescriptorSet,
    origin: Vec3,
    cell_size: f32,
    samples: u32,
    bounds: Aabb,
}

/// The terrain draw path.
pub(crate) struct Terrain {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    sampler: vk::Sampler,
    chunks: BTreeMap<[i32; 2], Chunk>,
    grids: HashMap<(u32, u32), Mesh>,
    /// (chunk, grid) per visible chunk, decided in `prepare`.
    draws: Vec<([i32; 2], (u32, u32))>,
    scratch: Vec<[f32; 2]>,
}

impl Terrain {
    pub fn new(device: &ash::Device, globals: vk::DescriptorSetLayout) -> Result<Terrain, RenderError> {
        let vk_err = |what| move |e| RenderError::vk(what, e);
        let sampler_bindings = [0, 1].map(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX)
        });
        let sampler_info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
        let pool_sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            descriptor_count: 2 * MAX_CHUNKS,
        }];
        let push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX,
            offset: 0,
            size: std::mem::size_of::<ChunkConstants>() as u32,
        }];
        let mut this = Terrain {
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            sampler: vk::Sampler::null(),
            chunks: BTreeMap::new(),
            grids: HashMap::new(),
            draws: Vec::new(),
            scratch: Vec::new(),
        };
        // SAFETY: create infos are valid; on failure `destroy_objects` destroys what exists (null handles are ignored).
        let made = unsafe {
            (|| {
                this.set_layout = pipeline::set_layout(device, &sampler_bindings)?;
                this.sampler = device
                    .create_sampler(&sampler_info, None)
                    .map_err(vk_err("vkCreateSampler"))?;
                this.pool = pipeline::freeable_pool(device, MAX_CHUNKS, &pool_sizes)?;
                this.layout = pipeline::layout(device, &[globals, this.set_layout], &push)?;
                let bindings = [binding(0, 8, vk::VertexInputRate::VERTEX)];
                let attributes = [attribute(0, 0, vk::Format::R32G32_SFLOAT)];
                this.pipeline = pipeline::create(
                    device,
                    &PipelineDesc {
                        vert: shaders::TERRAIN_VERT,
                        frag: shaders::LIT_FRAG,
                        bindings: &bindings,
                        attributes: &attributes,
                        layout: this.layout,
                    },
                )?;
                Ok::<(), RenderError>(())
            })()
        };
        match made {
            Ok(()) => Ok(this),
            Err(e) => {
                this.destroy_objects(device);
                Err(e)
            }
        }
    }

    /// Frees evicted and vanished chunks, uploads new and dirty ones, and
    /// picks the visible chunks with their level of detail.
    pub fn prepare(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        batch: Option<&mut TerrainBatch>,
        view: &View,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        self.draws.clear();
        let Some(batch) = batch else {
            self.free_all(memory, device);
            return Ok(());
        };
        for key in batch.evicted.drain(..) {
            if let Some(c) = self.chunks.remove(&key) {
                self.free_chunk(memory, device, c);
            }
        }
        let live: std::collections::BTreeSet<[i32; 2]> = batch.patches.iter().map(|p| p.key).collect();
        let gone: Vec<[i32; 2]> = self.chunks.keys().filter(|k| !live.contains(*k)).copied().collect();
        for key in gone {
            if let Some(c) = self.chunks.remove(&key) {
                self.free_chunk(memory, device, c);
            }
        }
        for patch in &mut batch.patches {
            if !patch.is_consistent() {
                return Err(RenderError::BadBatch(format!(
                    "terrain patch {:?}: planes do not match resolution {} (cell size {})",
                    patch.key, patch.resolution, patch.cell_size
                )));
            }
            let fits = self
                .chunks
                .get(&patch.key)
                .is_some_and(|c| c.samples == patch.resolution);
            if !fits {
                if let Some(old) = self.chunks.remove(&patch.key) {
                    self.free_chunk(memory, device, old);
                }
                let chunk = self.create_chunk(memory, device, patch)?;
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
            uploads.copy_to_image(chunk.surface.raw, extent, slice_bytes(&self.scratch));
            uploads.copy_to_image(chunk.material.raw, extent, &patch.material);
        }
        for (key, c) in &self.chunks {
            if !view.frustum.intersects(&c.bounds) {
                stats.chunks_culled += 1;
                continue;
            }
            let extent = (c.samples - 1) as f32 * c.cell_size;
            let d = c.bounds.distance(view.camera.position);
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
                slot.insert(Mesh::new(memory, device, uploads, slice_bytes(&v), &i, "terrain grid")?);
            }
            self.draws.push((*key, grid));
        }
        Ok(())
    }

    /// Records the visible chunks; `globals` is bound at set 0 of the shared layout.
    pub fn record(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        globals: vk::DescriptorSet,
        stats: &mut FrameStats,
    ) {
        if self.draws.is_empty() {
            return;
        }
        // SAFETY: `cmd` is recording inside the frame's rendering; every resource lives until it is done.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 0, &[globals], &[]);
            for (key, grid) in &self.draws {
                let c = &self.chunks[key];
                let mesh = &self.grids[grid];
                mesh.bind(device, cmd);
                device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 1, &[c.set], &[]);
                let constants = ChunkConstants {
                    origin_cell: [c.origin.x, c.origin.y, c.origin.z, c.cell_size],
                    size: [c.samples as i32, 0, 0, 0],
                };
                device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX, 0, bytes_of(&constants));
                device.cmd_draw_indexed(cmd, mesh.index_count, 1, 0, 0, 0);
                stats.draw_calls += 1;
                stats.chunks += 1;
            }
        }
    }

    fn create_chunk(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        patch: &TerrainPatch,
    ) -> Result<Chunk, RenderError> {
        let extent = vk::Extent2D {
            width: patch.resolution,
            height: patch.resolution,
        };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let colour = vk::ImageAspectFlags::COLOR;
        let surface = memory.image(
            device,
            extent,
            vk::Format::R32G32_SFLOAT,
            usage,
            colour,
            "terrain surface",
        )?;
        let material = match memory.image(device, extent, vk::Format::R8_UINT, usage, colour, "terrain material") {
            Ok(m) => m,
            Err(e) => {
                memory.free_image(device, surface);
                return Err(e);
            }
        };
        let layouts = [self.set_layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout are live.
        let set = match unsafe { device.allocate_descriptor_sets(&info) } {
            Ok(s) => s[0],
            Err(e) => {
                memory.free_image(device, surface);
                memory.free_image(device, material);
                return Err(RenderError::vk(
                    "vkAllocateDescriptorSets (too many terrain chunks?)",
                    e,
                ));
            }
        };
        let image_infos = [surface.view, material.view].map(|view| {
            [vk::DescriptorImageInfo {
                sampler: self.sampler,
                image_view: view,
                image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            }]
        });
        let writes = [0, 1].map(|b| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(b)
                .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
                .image_info(&image_infos[b as usize])
        });
        // SAFETY: the set, views and sampler are live and not in use by the GPU.
        unsafe { device.update_descriptor_sets(&writes, &[]) };
        Ok(Chunk {
            surface,
            material,
            set,
            origin: patch.origin,
            cell_size: patch.cell_size,
            samples: patch.resolution,
            bounds: Aabb::EMPTY,
        })
    }

    fn free_chunk(&mut self, memory: &mut Memory, device: &ash::Device, c: Chunk) {
        // SAFETY: the previous frame is finished, so the set is not in use.
        let _ = unsafe { device.free_descriptor_sets(self.pool, &[c.set]) };
        memory.free_image(device, c.surface);
        memory.free_image(device, c.material);
    }

    fn free_all(&mut self, memory: &mut Memory, device: &ash::Device) {
        for (_, c) in std::mem::take(&mut self.chunks) {
            self.free_chunk(memory, device, c);
        }
    }

    pub fn destroy(&mut self, memory: &mut Memory, device: &ash::Device) {
        self.free_all(memory, device);
        for (_, g) in self.grids.drain() {
            g.destroy(memory, device);
        }
        self.destroy_objects(device);
    }

    fn destroy_objects(&mut self, device: &ash::Device) {
        // SAFETY: the GPU is idle; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_pool(self.pool, None);
            device.destroy_sampler(self.sampler, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
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
