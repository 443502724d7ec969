//! The headless renderer: one frame in flight, recorded into one command buffer.

use std::mem::ManuallyDrop;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::GrassLayer;
use sylva_runtime::glam::Vec3;

use crate::cylinders::Cylinders;
use crate::device::Device;
use crate::error::RenderError;
use crate::frame::{Atmosphere, FrameInput, FrameStats, View};
use crate::grass::Grass;
use crate::memory::{Buffer, Memory};
use crate::pipeline;
use crate::pod::{Pod, bytes_of};
use crate::points::Points;
use crate::target::{Target, write_png};
use crate::terrain::Terrain;
use crate::upload::{StagingRing, Uploads, record_uploads};
use crate::validation::ValidationLog;

/// Per-frame constants (matches the `Globals` block of the shaders, std140).
#[repr(C)]
#[derive(Clone, Copy)]
struct Globals {
    view_proj: [f32; 16],
    camera: [f32; 4],
    sun_dir: [f32; 4],
    sun_colour: [f32; 4],
    sky: [f32; 4],
    ambient: [f32; 4],
    viewport: [f32; 4],
}

// SAFETY: repr(C) of a 64-byte and six 16-byte arrays of `f32`: no padding.
unsafe impl Pod for Globals {}

/// Totals over the renderer's life, for reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderStats {
    /// The device's name.
    pub device: String,
    /// Frames rendered.
    pub frames: u64,
    /// Draw calls, summed over frames.
    pub draw_calls: u64,
    /// Bytes uploaded, summed over frames.
    pub upload_bytes: u64,
    /// Frame times, summed, ms.
    pub frame_ms: f64,
    /// The last frame.
    pub last: FrameStats,
    /// Validation errors so far.
    pub validation_errors: u32,
    /// Validation warnings so far.
    pub validation_warnings: u32,
}

/// Sylva's renderer. Drop releases every Vulkan object.
pub struct Renderer {
    /// Sky, ambient and fog used by every frame.
    pub atmosphere: Atmosphere,
    memory: ManuallyDrop<Memory>,
    target: Option<Target>,
    staging: StagingRing,
    uploads: Uploads,
    command_pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    globals: Option<Buffer>,
    globals_layout: vk::DescriptorSetLayout,
    globals_pool: vk::DescriptorPool,
    globals_set: vk::DescriptorSet,
    shared_layout: vk::PipelineLayout,
    cylinders: Option<Cylinders>,
    points: Option<Points>,
    terrain: Option<Terrain>,
    grass: Option<Grass>,
    stats: RenderStats,
    // Dropped last: everything above is destroyed in `drop` first.
    device: Device,
}

impl Renderer {
    /// A renderer drawing into an offscreen `width × height` target.
    pub fn new_headless(width: u32, height: u32) -> Result<Renderer, RenderError> {
        Renderer::with_extensions(width, height, &[])
    }

    /// A renderer whose instance has `surface_extensions` (for a window).
    pub(crate) fn with_extensions(
        width: u32,
        height: u32,
        surface_extensions: &[*const std::ffi::c_char],
    ) -> Result<Renderer, RenderError> {
        if !(1..=16384).contains(&width) || !(1..=16384).contains(&height) {
            return Err(RenderError::BadSize(width, height));
        }
        let device = Device::new(surface_extensions)?;
        let memory = Memory::new(&device)?;
        let mut r = Renderer {
            atmosphere: Atmosphere::default(),
            memory: ManuallyDrop::new(memory),
            target: None,
            staging: StagingRing::default(),
            uploads: Uploads::default(),
            command_pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            globals: None,
            globals_layout: vk::DescriptorSetLayout::null(),
            globals_pool: vk::DescriptorPool::null(),
            globals_set: vk::DescriptorSet::null(),
            shared_layout: vk::PipelineLayout::null(),
            cylinders: None,
            points: None,
            terrain: None,
            grass: None,
            stats: RenderStats {
                device: device.name.clone(),
                ..RenderStats::default()
            },
            device,
        };
        // On error, dropping `r` destroys whatever was created (null handles are ignored).
        r.init(vk::Extent2D { width, height })?;
        Ok(r)
    }

    fn init(&mut self, extent: vk::Extent2D) -> Result<(), RenderError> {
        let d = &self.device.device;
        let vk_err = |what| move |e| RenderError::vk(what, e);
        self.target = Some(Target::new(&mut self.memory, d, extent)?);
        // SAFETY: valid create infos on a live device; handles are stored for `drop`.
        unsafe {
            self.command_pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
                        .queue_family_index(self.device.queue_family),
                    None,
                )
                .map_err(vk_err("vkCreateCommandPool"))?;
            self.cmd = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.command_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
            self.fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(vk_err("vkCreateFence"))?;
            let binding = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)];
            self.globals_layout = pipeline::set_layout(d, &binding)?;
            let sizes = [vk::DescriptorPoolSize {
                ty: vk::DescriptorType::UNIFORM_BUFFER,
                descriptor_count: 1,
            }];
            self.globals_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes),
                    None,
                )
                .map_err(vk_err("vkCreateDescriptorPool"))?;
            let layouts = [self.globals_layout];
            self.globals_set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(self.globals_pool)
                        .set_layouts(&layouts),
                )
                .map_err(vk_err("vkAllocateDescriptorSets"))?[0];
            self.shared_layout = pipeline::layout(d, &layouts, &[])?;
        }
        let size = std::mem::size_of::<Globals>() as u64;
        let globals = self.memory.buffer(
            d,
            size,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            MemoryLocation::CpuToGpu,
            "globals",
        )?;
        let info = [vk::DescriptorBufferInfo {
            buffer: globals.raw,
            offset: 0,
            range: size,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.globals_set)
            .dst_binding(0)
            .descriptor_type(vk::DescriptorType::UNIFORM_BUFFER)
            .buffer_info(&info);
        // SAFETY: set and buffer are live and unused by the GPU.
        unsafe { d.update_descriptor_sets(&[write], &[]) };
        self.globals = Some(globals);
        self.cylinders = Some(Cylinders::new(
            &mut self.memory,
            d,
            &mut self.uploads,
            self.shared_layout,
        )?);
        self.points = Some(Points::new(d, self.shared_layout)?);
        self.terrain = Some(Terrain::new(d, self.globals_layout)?);
        self.grass = Some(Grass::new(
            &self.device.instance,
            self.device.physical,
            d,
            self.globals_layout,
        )?);
        Ok(())
    }

    /// The device.
    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The colour target (left in `TRANSFER_SRC_OPTIMAL` by every frame) and its size.
    pub(crate) fn colour(&self) -> Option<(vk::Image, vk::Extent2D)> {
        self.target.as_ref().map(|t| (t.colour.raw, t.extent))
    }

    /// Recreates the target at a new size (the window was resized).
    pub(crate) fn resize(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        if !(1..=16384).contains(&width) || !(1..=16384).contains(&height) {
            return Err(RenderError::BadSize(width, height));
        }
        let d = &self.device.device;
        // SAFETY: waiting makes the old target unused before it is destroyed.
        unsafe { d.device_wait_idle() }.map_err(|e| RenderError::vk("vkDeviceWaitIdle", e))?;
        if let Some(old) = self.target.take() {
            old.destroy(&mut self.memory, d);
        }
        self.target = Some(Target::new(&mut self.memory, d, vk::Extent2D { width, height })?);
        Ok(())
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device.name
    }

    /// The validation log; it stays readable after the renderer is dropped, so
    /// tests can check that shutdown reported nothing.
    pub fn validation(&self) -> Arc<ValidationLog> {
        self.device.validation()
    }

    /// True when the validation layer is on.
    pub fn validating(&self) -> bool {
        self.device.validating()
    }

    /// Target width and height, pixels.
    pub fn size(&self) -> (u32, u32) {
        self.target
            .as_ref()
            .map_or((0, 0), |t| (t.extent.width, t.extent.height))
    }

    /// Totals so far.
    pub fn stats(&self) -> RenderStats {
        let log = self.device.validation();
        RenderStats {
            validation_errors: log.errors(),
            validation_warnings: log.warnings(),
            ..self.stats.clone()
        }
    }

    /// Uploads what changed in `input`'s batches, draws them and reads the image back.
    pub fn render(&mut self, mut input: FrameInput<'_>) -> Result<FrameStats, RenderError> {
        let t0 = Instant::now();
        let (width, height) = self.size();
        let view = View::new(input.camera, width, height);
        let mut stats = FrameStats::default();
        self.memory.allocations = 0;
        self.memory.frees = 0;
        let d = &self.device.device;
        let (Some(cylinders), Some(points), Some(terrain), Some(grass), Some(target), Some(globals)) = (
            self.cylinders.as_mut(),
            self.points.as_mut(),
            self.terrain.as_mut(),
            self.grass.as_mut(),
            self.target.as_ref(),
            self.globals.as_mut(),
        ) else {
            return Err(RenderError::BadBatch("renderer is not initialised".into()));
        };
        let memory = &mut *self.memory;
        let uploads = &mut self.uploads;
        terrain.prepare(memory, d, uploads, input.terrain.as_deref_mut(), &view, &mut stats)?;
        cylinders.prepare(memory, d, uploads, &mut input.cylinders, &view, &mut stats)?;
        grass.prepare(memory, d, uploads, input.grass.as_deref_mut(), &view, &mut stats)?;
        points.prepare(
            memory,
            d,
            uploads,
            input.points.as_deref_mut(),
            input.show_points,
            &view,
            &mut stats,
        )?;
        self.staging.stage(memory, d, uploads)?;
        stats.upload_bytes = uploads.bytes();

        let a = self.atmosphere;
        let g = Globals {
            view_proj: view.view_proj.to_cols_array(),
            camera: view.camera.position.extend(1.0).to_array(),
            sun_dir: input.sun.direction.extend(0.0).to_array(),
            sun_colour: input.sun.colour.extend(0.0).to_array(),
            sky: a.sky.extend(a.fog_density).to_array(),
            ambient: a.ambient.extend(0.0).to_array(),
            viewport: [width as f32, height as f32, a.point_size, 0.0],
        };
        let mapped = globals
            .allocation
            .mapped_slice_mut()
            .ok_or_else(|| RenderError::Memory("globals are not host-visible".into()))?;
        let raw = bytes_of(&g);
        mapped[..raw.len()].copy_from_slice(raw);

        let cmd = self.cmd;
        // SAFETY: the previous frame finished (we wait on the fence every frame), so the
        // command buffer and every resource it used may be reused; all handles are live.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(|e| RenderError::vk("vkResetCommandBuffer", e))?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(|e| RenderError::vk("vkBeginCommandBuffer", e))?;
            record_uploads(d, cmd, self.staging.raw(), uploads);
            target.begin(d, cmd);
            let sky = a.sky.extend(1.0).to_array();
            let colour = [vk::RenderingAttachmentInfo::default()
                .image_view(target.colour.view)
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(vk::ClearValue {
                    color: vk::ClearColorValue { float32: sky },
                })];
            let depth = vk::RenderingAttachmentInfo::default()
                .image_view(target.depth.view)
                .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .clear_value(vk::ClearValue {
                    depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 },
                });
            let area = vk::Rect2D {
                offset: vk::Offset2D::default(),
                extent: target.extent,
            };
            d.cmd_begin_rendering(
                cmd,
                &vk::RenderingInfo::default()
                    .render_area(area)
                    .layer_count(1)
                    .color_attachments(&colour)
                    .depth_attachment(&depth),
            );
            d.cmd_set_viewport(
                cmd,
                0,
                &[vk::Viewport {
                    x: 0.0,
                    y: 0.0,
                    width: width as f32,
                    height: height as f32,
                    min_depth: 0.0,
                    max_depth: 1.0,
                }],
            );
            d.cmd_set_scissor(cmd, 0, &[area]);
            terrain.record(d, cmd, self.globals_set, &mut stats);
            grass.record(d, cmd, self.globals_set, &mut stats);
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                self.shared_layout,
                0,
                &[self.globals_set],
                &[],
            );
            cylinders.record(d, cmd, &mut stats);
            points.record(d, cmd, &mut stats);
            d.cmd_end_rendering(cmd);
            target.end(d, cmd);
            d.end_command_buffer(cmd)
                .map_err(|e| RenderError::vk("vkEndCommandBuffer", e))?;
            let cmds = [cmd];
            d.queue_submit(
                self.device.queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                self.fence,
            )
            .map_err(|e| RenderError::vk("vkQueueSubmit", e))?;
            d.wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(|e| RenderError::vk("vkWaitForFences", e))?;
            d.reset_fences(&[self.fence])
                .map_err(|e| RenderError::vk("vkResetFences", e))?;
        }
        uploads.clear();
        stats.allocations = memory.allocations;
        stats.frees = memory.frees;
        stats.gpu_memory_bytes = memory.reserved_bytes();
        stats.frame_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.stats.frames += 1;
        self.stats.draw_calls += u64::from(stats.draw_calls);
        self.stats.upload_bytes += stats.upload_bytes;
        self.stats.frame_ms += stats.frame_ms;
        self.stats.last = stats;
        Ok(stats)
    }

    /// What the grass vertex shader adds to baked particles of `layer`: for each
    /// query `(link, x, z, time)`, the displacement of particle `link + 1` of a
    /// blade rooted at world `(x, z)` at playback `time` seconds under
    /// `wind_power` and `wave_speed` (the same fetch, run as a compute shader).
    /// Mirrors `BakedGrass::sample` of sylva-systems; tests compare the two.
    pub fn probe_grass(
        &mut self,
        layer: &GrassLayer,
        wind_power: f32,
        wave_speed: f32,
        queries: &[(u32, f32, f32, f32)],
    ) -> Result<Vec<Vec3>, RenderError> {
        let Some(grass) = self.grass.as_mut() else {
            return Err(RenderError::BadBatch("renderer is not initialised".into()));
        };
        grass.probe(
            &mut self.memory,
            &self.device.device,
            (self.device.queue, self.cmd, self.fence),
            layer,
            (wind_power, wave_speed),
            queries,
        )
    }

    /// The last frame: RGBA8 (sRGB), rows top to bottom.
    pub fn read_pixels(&self) -> Vec<u8> {
        self.target.as_ref().map_or_else(Vec::new, |t| t.pixels())
    }

    /// Writes the last frame as a PNG.
    pub fn save_png(&self, path: &Path) -> Result<(), RenderError> {
        let (w, h) = self.size();
        write_png(path, w, h, &self.read_pixels())
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        let d = &self.device.device;
        // SAFETY: after the wait nothing is in use; every handle was created on this
        // device (null handles are ignored). The allocator goes before the device.
        unsafe {
            let _ = d.device_wait_idle();
            if let Some(mut c) = self.cylinders.take() {
                c.destroy(&mut self.memory, d);
            }
            if let Some(mut p) = self.points.take() {
                p.destroy(&mut self.memory, d);
            }
            if let Some(mut t) = self.terrain.take() {
                t.destroy(&mut self.memory, d);
            }
            if let Some(mut g) = self.grass.take() {
                g.destroy(&mut self.memory, d);
            }
            if let Some(t) = self.target.take() {
                t.destroy(&mut self.memory, d);
            }
            if let Some(g) = self.globals.take() {
                self.memory.free_buffer(d, g);
            }
            self.staging.destroy(&mut self.memory, d);
            d.destroy_pipeline_layout(self.shared_layout, None);
            d.destroy_descriptor_pool(self.globals_pool, None);
            d.destroy_descriptor_set_layout(self.globals_layout, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.command_pool, None);
            ManuallyDrop::drop(&mut self.memory);
        }
    }
}
