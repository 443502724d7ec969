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
//! [`Grass::probe`] runs the same fetch in a compute shader for a list of
//! queries, so tests compare the GPU with `BakedGrass::sample`.

use ash::vk;
use gpu_allocator::MemoryLocation;
use half::f16;
use sylva_runtime::extract::{GrassBatch, GrassLayer, GrassMotion, GrassTexel};
use sylva_runtime::glam::Vec3;

use crate::cull::Aabb;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::memory::{Buffer, Image, Memory};
use crate::pipeline::{self, PipelineDesc, attribute, binding};
use crate::pod::{Pod, bytes_of, slice_bytes};
use crate::shaders;
use crate::upload::{SoaBuffer, Uploads, record_uploads};

/// Blades closer than this are all drawn, metres.
pub const LOD_FULL_METRES: f32 = 40.0;
/// Blades farther than this are not drawn, metres; between the two they thin out linearly.
pub const LOD_CUT_METRES: f32 = 160.0;

/// Bytes per instance of each array: root, yaw, scale, colour, live slot.
const STRIDES: &[u64] = &[12, 4, 4, 4, 4];

/// Layers (descriptor sets) the pool has room for, plus one for a probe.
const MAX_LAYERS: u32 = 256;

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

/// Push constants of a probe (matches `grass_probe.comp`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ProbeConstants {
    field: [f32; 4],
    play: [f32; 4],
    count: [u32; 4],
}

// SAFETY: repr(C) of three 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for LayerConstants {}

// SAFETY: as above.
unsafe impl Pod for ProbeConstants {}

/// A layer's motion and shape on the GPU.
struct Motion {
    image: Image,
    shape: Buffer,
    generation: u64,
    /// cells, cell size, frames, seconds per frame.
    field: [f32; 4],
    links: u32,
    rgb8_scale: f32,
    /// Largest distance of a rest particle from the root, metres.
    rest_reach: f32,
    /// Tallest rest particle, metres.
    rest_height: f32,
    /// Largest stored displacement, metres.
    max_displacement: f32,
}

/// One layer's GPU copy.
struct Slot {
    motion: Motion,
    set: vk::DescriptorSet,
    instances: Option<SoaBuffer>,
    live: Buffer,
    len: u32,
    roots: Aabb,
    max_scale: f32,
}

/// The grass draw path and probe.
pub(crate) struct Grass {
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    probe_pipeline: vk::Pipeline,
    probe_layout: vk::PipelineLayout,
    probe_set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    sampler: vk::Sampler,
    max_depth: u32,
    slots: Vec<Option<Slot>>,
    draws: Vec<(usize, LayerConstants)>,
}

impl Grass {
    pub fn new(
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
        device: &ash::Device,
        globals: vk::DescriptorSetLayout,
    ) -> Result<Grass, RenderError> {
        let vk_err = |what| move |e| RenderError::vk(what, e);
        // SAFETY: the physical device belongs to the instance.
        let limits = unsafe { instance.get_physical_device_properties(physical) }.limits;
        let set_bindings = |stage| {
            [
                (0, vk::DescriptorType::COMBINED_IMAGE_SAMPLER),
                (1, vk::DescriptorType::STORAGE_BUFFER),
                (2, vk::DescriptorType::STORAGE_BUFFER),
            ]
            .map(|(b, ty)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(ty)
                    .descriptor_count(1)
                    .stage_flags(stage)
            })
        };
        let draw_bindings = set_bindings(vk::ShaderStageFlags::VERTEX);
        let probe_bindings = set_bindings(vk::ShaderStageFlags::COMPUTE);
        let sampler_info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
        let pool_sizes = [
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                descriptor_count: MAX_LAYERS + 1,
            },
            vk::DescriptorPoolSize {
                ty: vk::DescriptorType::STORAGE_BUFFER,
                descriptor_count: 2 * (MAX_LAYERS + 1),
            },
        ];
        let draw_push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::VERTEX,
            offset: 0,
            size: std::mem::size_of::<LayerConstants>() as u32,
        }];
        let probe_push = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: std::mem::size_of::<ProbeConstants>() as u32,
        }];
        let mut this = Grass {
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            probe_pipeline: vk::Pipeline::null(),
            probe_layout: vk::PipelineLayout::null(),
            probe_set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            sampler: vk::Sampler::null(),
            max_depth: limits.max_image_dimension3_d,
            slots: Vec::new(),
            draws: Vec::new(),
        };
        // SAFETY: create infos are valid; on failure `destroy_objects` destroys what exists (null handles are ignored).
        let made = unsafe {
            (|| {
                this.set_layout = pipeline::set_layout(device, &draw_bindings)?;
                this.probe_set_layout = pipeline::set_layout(device, &probe_bindings)?;
                this.sampler = device
                    .create_sampler(&sampler_info, None)
                    .map_err(vk_err("vkCreateSampler"))?;
                this.pool = pipeline::freeable_pool(device, MAX_LAYERS + 1, &pool_sizes)?;
                this.layout = pipeline::layout(device, &[globals, this.set_layout], &draw_push)?;
                this.probe_layout = pipeline::layout(device, &[this.probe_set_layout], &probe_push)?;
                let instance = vk::VertexInputRate::INSTANCE;
                let bindings = [
                    binding(0, 12, instance),
                    binding(1, 4, instance),
                    binding(2, 4, instance),
                    binding(3, 4, instance),
                    binding(4, 4, instance),
                ];
                let attributes = [
                    attribute(0, 0, vk::Format::R32G32B32_SFLOAT),
                    attribute(1, 1, vk::Format::R32_SFLOAT),
                    attribute(2, 2, vk::Format::R32_SFLOAT),
                    attribute(3, 3, vk::Format::R8G8B8A8_UNORM),
                    attribute(4, 4, vk::Format::R32_UINT),
                ];
                this.pipeline = pipeline::create(
                    device,
                    &PipelineDesc {
                        vert: shaders::GRASS_VERT,
                        frag: shaders::GRASS_FRAG,
                        bindings: &bindings,
                        attributes: &attributes,
                        layout: this.layout,
                    },
                )?;
                let module = shaders::module(device, shaders::GRASS_PROBE_COMP)?;
                let stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(module)
                    .name(c"main");
                let info = vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(this.probe_layout);
                let made = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
                device.destroy_shader_module(module, None);
                this.probe_pipeline = made.map_err(|(_, e)| RenderError::vk("vkCreateComputePipelines", e))?[0];
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

    /// Uploads what changed in `batch`'s layers (slot `i` is layer `i`), frees
    /// slots beyond them, and picks the visible layers.
    pub fn prepare(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        batch: Option<&mut GrassBatch>,
        view: &View,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        self.draws.clear();
        let Some(batch) = batch else {
            self.free_slots(memory, device, 0);
            return Ok(());
        };
        if batch.layers.len() > MAX_LAYERS as usize {
            return Err(RenderError::BadBatch(format!(
                "{} grass layers (at most {MAX_LAYERS})",
                batch.layers.len()
            )));
        }
        self.free_slots(memory, device, batch.layers.len());
        self.slots.resize_with(batch.layers.len(), || None);
        for i in 0..batch.layers.len() {
            self.update(memory, device, uploads, i, &mut batch.layers[i])?;
        }
        let play_time = batch.time * batch.wave_speed;
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(s) = slot.as_ref().filter(|s| s.len > 0) else {
                continue;
            };
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
                stats.batches_culled += 1;
                continue;
            }
            let constants = LayerConstants {
                field: m.field,
                play: [batch.wind_power, play_time, m.links as f32, m.rgb8_scale],
                lod: [
                    LOD_FULL_METRES,
                    LOD_CUT_METRES,
                    m.rest_height * s.max_scale.max(1e-6),
                    0.0,
                ],
            };
            self.draws.push((i, constants));
        }
        Ok(())
    }

    /// Records the visible layers; `globals` is bound at set 0.
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
            for (i, constants) in &self.draws {
                let s = self.slots[*i].as_ref().expect("drawn slots exist");
                let Some(instances) = s.instances.as_ref() else {
                    continue;
                };
                device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 1, &[s.set], &[]);
                device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX, 0, bytes_of(constants));
                let buffers = [instances.buffer.raw; 5];
                device.cmd_bind_vertex_buffers(cmd, 0, &buffers, &instances.offsets());
                device.cmd_draw(cmd, 6 * s.motion.links, s.len, 0, 0);
                stats.draw_calls += 1;
                stats.grass += u64::from(s.len);
            }
        }
    }

    /// Brings slot `i` up to date with `layer`.
    fn update(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        i: usize,
        layer: &mut GrassLayer,
    ) -> Result<(), RenderError> {
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
        let stale = self.slots[i]
            .as_ref()
            .is_none_or(|s| s.motion.generation != layer.generation);
        if stale {
            if let Some(old) = self.slots[i].take() {
                self.free_slot(memory, device, old);
            }
            let motion = self.upload_motion(memory, device, uploads, layer)?;
            let live = match memory.buffer(
                device,
                16,
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuOnly,
                "grass live displacements",
            ) {
                Ok(b) => b,
                Err(e) => {
                    free_motion(memory, device, motion);
                    return Err(e);
                }
            };
            let set = match self.allocate_set(device, self.set_layout) {
                Ok(set) => set,
                Err(e) => {
                    free_motion(memory, device, motion);
                    memory.free_buffer(device, live);
                    return Err(e);
                }
            };
            self.write_set(device, set, &motion.image, &motion.shape, &live);
            self.slots[i] = Some(Slot {
                motion,
                set,
                instances: None,
                live,
                len: 0,
                roots: Aabb::EMPTY,
                max_scale: 0.0,
            });
        }
        let sampler = self.sampler;
        let s = self.slots[i].as_mut().expect("slot filled above");
        let len = layer.len() as u32;
        let dirty = layer.dirty.take();
        let mut full = false;
        if s.instances.as_ref().is_none_or(|b| b.capacity < len) {
            if let Some(old) = s.instances.take() {
                memory.free_buffer(device, old.buffer);
            }
            if len > 0 {
                s.instances = Some(SoaBuffer::new(
                    memory,
                    device,
                    len as usize,
                    STRIDES,
                    "grass instances",
                )?);
            }
            full = true;
        }
        let (a, b) = if full {
            (0, len)
        } else {
            (dirty.start.min(len), dirty.end.min(len))
        };
        if let Some(gpu) = s.instances.as_ref().filter(|_| a < b) {
            let r = a as usize..b as usize;
            gpu.upload(uploads, 0, a, slice_bytes(&layer.root[r.clone()]));
            gpu.upload(uploads, 1, a, slice_bytes(&layer.yaw[r.clone()]));
            gpu.upload(uploads, 2, a, slice_bytes(&layer.scale[r.clone()]));
            gpu.upload(uploads, 3, a, slice_bytes(&layer.colour[r.clone()]));
            gpu.upload(uploads, 4, a, slice_bytes(&layer.live_slot[r]));
        }
        if a < b || len != s.len {
            s.roots = Aabb::EMPTY;
            s.max_scale = 0.0;
            for (root, scale) in layer.root.iter().zip(&layer.scale) {
                s.roots.add_sphere(*root, 0.0);
                s.max_scale = s.max_scale.max(scale.abs());
            }
        }
        s.len = len;
        let live: Vec<[f32; 4]> = layer
            .live_displacement
            .iter()
            .map(|d| d.extend(0.0).to_array())
            .collect();
        let needed = (slice_bytes(&live).len() as u64).max(16);
        if s.live.size < needed {
            let grown = memory.buffer(
                device,
                needed.next_power_of_two(),
                vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuOnly,
                "grass live displacements",
            )?;
            memory.free_buffer(device, std::mem::replace(&mut s.live, grown));
            write_set(device, sampler, s.set, &s.motion.image, &s.motion.shape, &s.live);
        }
        uploads.copy_to_buffer(s.live.raw, 0, slice_bytes(&live));
        Ok(())
    }

    /// Creates a layer's motion texture and shape buffer and queues their uploads.
    fn upload_motion(
        &self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        layer: &GrassLayer,
    ) -> Result<Motion, RenderError> {
        let m = &layer.motion;
        let depth = m.links.checked_mul(m.frames).filter(|&d| d <= self.max_depth);
        let Some(depth) = depth.filter(|_| m.cells >= 1 && m.cells <= self.max_depth) else {
            return Err(RenderError::BadBatch(format!(
                "grass motion of {} cells and {} links × {} frames exceeds the device's 3D texture size {}",
                m.cells, m.links, m.frames, self.max_depth
            )));
        };
        let (format, texels, rgb8_scale) = texels(m);
        let extent = vk::Extent3D {
            width: m.cells,
            height: m.cells,
            depth,
        };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let image = memory.image_3d(device, extent, format, usage, "grass motion")?;
        let mut shape = Vec::with_capacity(layer.shape.rest.len() * PARTICLE_BYTES);
        for ((rest, width), parent) in layer.shape.rest.iter().zip(&layer.shape.width).zip(&layer.shape.parent) {
            for v in [rest.x, rest.y, rest.z, *width] {
                shape.extend_from_slice(&v.to_le_bytes());
            }
            for v in [*parent, 0, 0, 0] {
                shape.extend_from_slice(&v.to_le_bytes());
            }
        }
        let buffer = match memory.buffer(
            device,
            shape.len() as u64,
            vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuOnly,
            "grass shape",
        ) {
            Ok(b) => b,
            Err(e) => {
                memory.free_image(device, image);
                return Err(e);
            }
        };
        uploads.copy_to_image(image.raw, extent, &texels);
        uploads.copy_to_buffer(buffer.raw, 0, &shape);
        let max_displacement = max_displacement(m);
        Ok(Motion {
            image,
            shape: buffer,
            generation: layer.generation,
            field: [m.cells as f32, m.cell_size, m.frames as f32, m.frame_seconds],
            links: m.links,
            rgb8_scale,
            rest_reach: layer.shape.rest.iter().fold(0.0f32, |r, p| r.max(p.length())),
            rest_height: layer.shape.rest.iter().fold(0.0f32, |h, p| h.max(p.y)),
            max_displacement,
        })
    }

    fn allocate_set(
        &self,
        device: &ash::Device,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, RenderError> {
        let layouts = [layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout are live.
        unsafe { device.allocate_descriptor_sets(&info) }
            .map(|s| s[0])
            .map_err(|e| RenderError::vk("vkAllocateDescriptorSets", e))
    }

    fn write_set(&self, device: &ash::Device, set: vk::DescriptorSet, image: &Image, first: &Buffer, second: &Buffer) {
        write_set(device, self.sampler, set, image, first, second);
    }

    /// Evaluates the shader's fetch of `layer`'s motion for each query
    /// `(link, x, z, time)`: the displacement the vertex shader adds to that
    /// particle of a baked blade rooted at `(x, z)`. Runs its own submission of
    /// `cmd` (idle, outside a frame) on `queue` and waits on `fence`.
    pub fn probe(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        (queue, cmd, fence): (vk::Queue, vk::CommandBuffer, vk::Fence),
        layer: &GrassLayer,
        (wind_power, wave_speed): (f32, f32),
        queries: &[(u32, f32, f32, f32)],
    ) -> Result<Vec<Vec3>, RenderError> {
        if !layer.is_consistent() {
            return Err(RenderError::BadBatch("grass probe: inconsistent layer".into()));
        }
        if let Some(&(link, ..)) = queries.iter().find(|q| q.0 >= layer.motion.links) {
            return Err(RenderError::BadBatch(format!(
                "grass probe: link {link} of a blade with {} links",
                layer.motion.links
            )));
        }
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let mut uploads = Uploads::default();
        let motion = self.upload_motion(memory, device, &mut uploads, layer)?;
        let host = |memory: &mut Memory, size, location, name| {
            memory.buffer(device, size, vk::BufferUsageFlags::STORAGE_BUFFER, location, name)
        };
        let size = (queries.len() * 16) as u64;
        let mut resources = (Some(motion), None, None, None);
        let result = (|| {
            let staging = memory.buffer(
                device,
                uploads.staged().len() as u64,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "grass probe staging",
            )?;
            let staging = resources.1.insert(staging);
            let input = resources
                .2
                .insert(host(memory, size, MemoryLocation::CpuToGpu, "grass probe queries")?);
            let output = resources
                .3
                .insert(host(memory, size, MemoryLocation::GpuToCpu, "grass probe results")?);
            let motion = resources.0.as_ref().expect("motion made above");
            let q: Vec<[f32; 4]> = queries.iter().map(|&(l, x, z, t)| [l as f32, x, z, t]).collect();
            write_mapped(staging, uploads.staged())?;
            write_mapped(input, slice_bytes(&q))?;
            let set = self.allocate_set(device, self.probe_set_layout)?;
            self.write_set(device, set, &motion.image, input, output);
            let constants = ProbeConstants {
                field: motion.field,
                play: [wind_power, wave_speed, motion.links as f32, motion.rgb8_scale],
                count: [queries.len() as u32, 0, 0, 0],
            };
            // SAFETY: `cmd` and `fence` are idle (no frame is recording); every handle is live
            // until the wait below returns.
            let run = unsafe {
                (|| {
                    device
                        .begin_command_buffer(
                            cmd,
                            &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                        )
                        .map_err(|e| RenderError::vk("vkBeginCommandBuffer", e))?;
                    record_uploads(device, cmd, staging.raw, &uploads);
                    device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.probe_pipeline);
                    device.cmd_bind_descriptor_sets(
                        cmd,
                        vk::PipelineBindPoint::COMPUTE,
                        self.probe_layout,
                        0,
                        &[set],
                        &[],
                    );
                    device.cmd_push_constants(
                        cmd,
                        self.probe_layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        bytes_of(&constants),
                    );
                    device.cmd_dispatch(cmd, (queries.len() as u32).div_ceil(64), 1, 1);
                    let to_host = vk::MemoryBarrier::default()
                        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                        .dst_access_mask(vk::AccessFlags::HOST_READ);
                    device.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::COMPUTE_SHADER,
                        vk::PipelineStageFlags::HOST,
                        vk::DependencyFlags::empty(),
                        &[to_host],
                        &[],
                        &[],
                    );
                    device
                        .end_command_buffer(cmd)
                        .map_err(|e| RenderError::vk("vkEndCommandBuffer", e))?;
                    let cmds = [cmd];
                    device
                        .queue_submit(queue, &[vk::SubmitInfo::default().command_buffers(&cmds)], fence)
                        .map_err(|e| RenderError::vk("vkQueueSubmit", e))?;
                    device
                        .wait_for_fences(&[fence], true, u64::MAX)
                        .map_err(|e| RenderError::vk("vkWaitForFences", e))?;
                    device
                        .reset_fences(&[fence])
                        .map_err(|e| RenderError::vk("vkResetFences", e))
                })()
            };
            // SAFETY: the submission finished (or never started), so the set is unused.
            let _ = unsafe { device.free_descriptor_sets(self.pool, &[set]) };
            run?;
            let out = output
                .allocation
                .mapped_slice()
                .ok_or_else(|| RenderError::Memory("probe results are not host-visible".into()))?;
            Ok(out[..size as usize]
                .chunks_exact(16)
                .map(|c| {
                    let f = |k: usize| f32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]]);
                    Vec3::new(f(0), f(1), f(2))
                })
                .collect())
        })();
        if let Some(m) = resources.0 {
            free_motion(memory, device, m);
        }
        for b in [resources.1, resources.2, resources.3].into_iter().flatten() {
            memory.free_buffer(device, b);
        }
        result
    }

    fn free_slot(&mut self, memory: &mut Memory, device: &ash::Device, s: Slot) {
        // SAFETY: the previous frame is finished, so the set is not in use.
        let _ = unsafe { device.free_descriptor_sets(self.pool, &[s.set]) };
        free_motion(memory, device, s.motion);
        memory.free_buffer(device, s.live);
        if let Some(b) = s.instances {
            memory.free_buffer(device, b.buffer);
        }
    }

    /// Frees the slots from `keep` on.
    fn free_slots(&mut self, memory: &mut Memory, device: &ash::Device, keep: usize) {
        let extra: Vec<Slot> = self.slots.drain(keep.min(self.slots.len())..).flatten().collect();
        for s in extra {
            self.free_slot(memory, device, s);
        }
    }

    pub fn destroy(&mut self, memory: &mut Memory, device: &ash::Device) {
        self.free_slots(memory, device, 0);
        self.destroy_objects(device);
    }

    fn destroy_objects(&mut self, device: &ash::Device) {
        // SAFETY: the GPU is idle; null handles are ignored by Vulkan.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline(self.probe_pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_pipeline_layout(self.probe_layout, None);
            device.destroy_descriptor_pool(self.pool, None);
            device.destroy_sampler(self.sampler, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
            device.destroy_descriptor_set_layout(self.probe_set_layout, None);
        }
    }
}

/// Points `set` at a motion texture and two storage buffers (shape and live
/// displacements for a draw, queries and results for a probe).
fn write_set(
    device: &ash::Device,
    sampler: vk::Sampler,
    set: vk::DescriptorSet,
    image: &Image,
    first: &Buffer,
    second: &Buffer,
) {
    let image_info = [vk::DescriptorImageInfo {
        sampler,
        image_view: image.view,
        image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
    }];
    let buffer_info = [first, second].map(|b| {
        [vk::DescriptorBufferInfo {
            buffer: b.raw,
            offset: 0,
            range: vk::WHOLE_SIZE,
        }]
    });
    let writes = [
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
            .image_info(&image_info),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&buffer_info[0]),
        vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(2)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&buffer_info[1]),
    ];
    // SAFETY: the set, view, sampler and buffers are live and the set is not in use by the GPU.
    unsafe { device.update_descriptor_sets(&writes, &[]) };
}

fn free_motion(memory: &mut Memory, device: &ash::Device, m: Motion) {
    memory.free_image(device, m.image);
    memory.free_buffer(device, m.shape);
}

fn write_mapped(buffer: &mut Buffer, data: &[u8]) -> Result<(), RenderError> {
    let mapped = buffer
        .allocation
        .mapped_slice_mut()
        .ok_or_else(|| RenderError::Memory("probe buffer is not host-visible".into()))?;
    mapped[..data.len()].copy_from_slice(data);
    Ok(())
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
