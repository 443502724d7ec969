//! Points (attractor clouds) as instanced screen-space squares.

use ash::vk;
use sylva_runtime::extract::PointBatch;

use crate::cull::Aabb;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::memory::Memory;
use crate::pipeline::{self, PipelineDesc, attribute, binding};
use crate::pod::slice_bytes;
use crate::shaders;
use crate::upload::{SoaBuffer, Uploads};

/// Bytes per point of each array: position, colour.
const STRIDES: &[u64] = &[12, 4];

/// The point draw path: one batch, one draw.
pub(crate) struct Points {
    pipeline: vk::Pipeline,
    gpu: Option<SoaBuffer>,
    len: u32,
    bounds: Aabb,
    visible: bool,
}

impl Points {
    pub fn new(device: &ash::Device, layout: vk::PipelineLayout) -> Result<Points, RenderError> {
        let instance = vk::VertexInputRate::INSTANCE;
        let bindings = [binding(0, 12, instance), binding(1, 4, instance)];
        let attributes = [
            attribute(0, 0, vk::Format::R32G32B32_SFLOAT),
            attribute(1, 1, vk::Format::R8G8B8A8_UNORM),
        ];
        let pipeline = pipeline::create(
            device,
            &PipelineDesc {
                vert: shaders::POINT_VERT,
                frag: shaders::POINT_FRAG,
                bindings: &bindings,
                attributes: &attributes,
                layout,
            },
        )?;
        Ok(Points {
            pipeline,
            gpu: None,
            len: 0,
            bounds: Aabb::EMPTY,
            visible: false,
        })
    }

    /// Uploads what changed; `None` frees the buffer. `show` false keeps the
    /// data but draws nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        batch: Option<&mut PointBatch>,
        show: bool,
        view: &View,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        self.visible = false;
        let Some(batch) = batch else {
            if let Some(old) = self.gpu.take() {
                memory.free_buffer(device, old.buffer);
            }
            self.len = 0;
            return Ok(());
        };
        let len = batch.len() as u32;
        let dirty = batch.dirty.take();
        let mut full = false;
        if self.gpu.as_ref().is_none_or(|g| g.capacity < len) {
            if let Some(old) = self.gpu.take() {
                memory.free_buffer(device, old.buffer);
            }
            if len > 0 {
                self.gpu = Some(SoaBuffer::new(memory, device, len as usize, STRIDES, "points")?);
            }
            full = true;
        }
        let (a, b) = if full {
            (0, len)
        } else {
            (dirty.start.min(len), dirty.end.min(len))
        };
        if let Some(gpu) = &self.gpu
            && a < b
        {
            let r = a as usize..b as usize;
            gpu.upload(uploads, 0, a, slice_bytes(&batch.position[r.clone()]));
            gpu.upload(uploads, 1, a, slice_bytes(&batch.colour[r]));
        }
        if full || len < self.len || (a == 0 && b == len) {
            self.bounds = Aabb::EMPTY;
            batch.position.iter().for_each(|&p| self.bounds.add_sphere(p, 0.0));
        } else {
            batch.position[a as usize..b as usize]
                .iter()
                .for_each(|&p| self.bounds.add_sphere(p, 0.0));
        }
        self.len = len;
        if show && len > 0 {
            self.visible = view.frustum.intersects(&self.bounds);
            stats.batches_culled += u32::from(!self.visible);
        }
        Ok(())
    }

    /// Records the points; the globals set is bound.
    pub fn record(&self, device: &ash::Device, cmd: vk::CommandBuffer, stats: &mut FrameStats) {
        let Some(gpu) = self.gpu.as_ref().filter(|_| self.visible) else {
            return;
        };
        // SAFETY: `cmd` is recording inside the frame's rendering; the buffer lives until it is done.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            device.cmd_bind_vertex_buffers(cmd, 0, &[gpu.buffer.raw; 2], &gpu.offsets());
            device.cmd_draw(cmd, 6, self.len, 0, 0);
        }
        stats.draw_calls += 1;
        stats.points += u64::from(self.len);
    }

    pub fn destroy(&mut self, memory: &mut Memory, device: &ash::Device) {
        if let Some(g) = self.gpu.take() {
            memory.free_buffer(device, g.buffer);
        }
        // SAFETY: the GPU is idle when the renderer is torn down.
        unsafe { device.destroy_pipeline(self.pipeline, None) };
    }
}
