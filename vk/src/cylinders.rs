//! Branch segments (and springs) as instanced tapered cylinders. Each
//! [`CylinderBatch`] gets a device-local buffer holding its five arrays; a
//! batch is one draw, culled by its bounding box, with the ring's side count
//! chosen from its widest cylinder's size on screen.

use ash::vk;
use sylva_runtime::extract::CylinderBatch;

use crate::cull::Aabb;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::memory::Memory;
use crate::mesh::{self, Mesh};
use crate::pipeline::{self, PipelineDesc, attribute, binding};
use crate::pod::slice_bytes;
use crate::shaders;
use crate::upload::{SoaBuffer, Uploads};

/// Bytes per instance of each array: start, end, start radius, end radius, colour.
const STRIDES: &[u64] = &[12, 12, 4, 4, 4];

/// Ring side counts of the level-of-detail meshes, coarse to fine.
pub const SIDES: [u32; 3] = [4, 8, 16];

/// One batch's GPU copy.
struct Slot {
    gpu: SoaBuffer,
    len: u32,
    bounds: Aabb,
    max_radius: f32,
}

/// The cylinder draw path.
pub(crate) struct Cylinders {
    pipeline: vk::Pipeline,
    rings: Vec<Mesh>,
    slots: Vec<Option<Slot>>,
    /// (slot, ring) per visible batch, decided in `prepare`.
    draws: Vec<(usize, usize)>,
}

impl Cylinders {
    pub fn new(
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        layout: vk::PipelineLayout,
    ) -> Result<Cylinders, RenderError> {
        let instance = vk::VertexInputRate::INSTANCE;
        let bindings = [
            binding(0, 12, vk::VertexInputRate::VERTEX),
            binding(1, 12, instance),
            binding(2, 12, instance),
            binding(3, 4, instance),
            binding(4, 4, instance),
            binding(5, 4, instance),
        ];
        let attributes = [
            attribute(0, 0, vk::Format::R32G32B32_SFLOAT),
            attribute(1, 1, vk::Format::R32G32B32_SFLOAT),
            attribute(2, 2, vk::Format::R32G32B32_SFLOAT),
            attribute(3, 3, vk::Format::R32_SFLOAT),
            attribute(4, 4, vk::Format::R32_SFLOAT),
            attribute(5, 5, vk::Format::R8G8B8A8_UNORM),
        ];
        let pipeline = pipeline::create(
            device,
            &PipelineDesc {
                vert: shaders::CYLINDER_VERT,
                frag: shaders::LIT_FRAG,
                bindings: &bindings,
                attributes: &attributes,
                layout,
            },
        )?;
        let mut this = Cylinders {
            pipeline,
            rings: Vec::new(),
            slots: Vec::new(),
            draws: Vec::new(),
        };
        for sides in SIDES {
            let (v, i) = mesh::ring(sides);
            match Mesh::new(memory, device, uploads, slice_bytes(&v), &i, "cylinder ring") {
                Ok(m) => this.rings.push(m),
                Err(e) => {
                    this.destroy(memory, device);
                    return Err(e);
                }
            }
        }
        Ok(this)
    }

    /// Uploads what changed in `batches` (slot `i` is `batches[i]`), frees the
    /// buffers of slots beyond them, and picks the visible batches.
    pub fn prepare(
        &mut self,
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        batches: &mut [&mut CylinderBatch],
        view: &View,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        for extra in self.slots.drain(batches.len().min(self.slots.len())..).flatten() {
            memory.free_buffer(device, extra.gpu.buffer);
        }
        self.slots.resize_with(batches.len(), || None);
        for (slot, batch) in self.slots.iter_mut().zip(batches.iter_mut()) {
            update(slot, memory, device, uploads, batch)?;
        }
        self.draws.clear();
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(s) = slot.as_ref().filter(|s| s.len > 0) else {
                continue;
            };
            if !view.frustum.intersects(&s.bounds) {
                stats.batches_culled += 1;
                continue;
            }
            let pixels = view.pixels(s.max_radius, s.bounds.distance(view.camera.position));
            let ring = if pixels >= 8.0 {
                2
            } else if pixels >= 2.0 {
                1
            } else {
                0
            };
            self.draws.push((i, ring));
        }
        Ok(())
    }

    /// Records the visible batches; the globals set is bound.
    pub fn record(&self, device: &ash::Device, cmd: vk::CommandBuffer, stats: &mut FrameStats) {
        if self.draws.is_empty() {
            return;
        }
        // SAFETY: `cmd` is recording inside the frame's rendering; buffers live until it is done.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            for &(i, ring) in &self.draws {
                let s = self.slots[i].as_ref().expect("drawn slots exist");
                let mesh = &self.rings[ring];
                mesh.bind(device, cmd);
                let buffers = [s.gpu.buffer.raw; 5];
                device.cmd_bind_vertex_buffers(cmd, 1, &buffers, &s.gpu.offsets());
                device.cmd_draw_indexed(cmd, mesh.index_count, s.len, 0, 0, 0);
                stats.draw_calls += 1;
                stats.cylinders += u64::from(s.len);
            }
        }
    }

    pub fn destroy(&mut self, memory: &mut Memory, device: &ash::Device) {
        for slot in self.slots.drain(..).flatten() {
            memory.free_buffer(device, slot.gpu.buffer);
        }
        for ring in self.rings.drain(..) {
            ring.destroy(memory, device);
        }
        // SAFETY: the GPU is idle when the renderer is torn down.
        unsafe { device.destroy_pipeline(self.pipeline, None) };
    }
}

/// Brings one slot up to date with its batch: a new (larger) buffer gets
/// everything, an existing one only the dirty range.
fn update(
    slot: &mut Option<Slot>,
    memory: &mut Memory,
    device: &ash::Device,
    uploads: &mut Uploads,
    batch: &mut CylinderBatch,
) -> Result<(), RenderError> {
    let len = batch.len() as u32;
    let dirty = batch.dirty.take();
    let mut full = false;
    if slot.as_ref().is_none_or(|s| s.gpu.capacity < len) {
        if let Some(old) = slot.take() {
            memory.free_buffer(device, old.gpu.buffer);
        }
        if len == 0 {
            return Ok(());
        }
        *slot = Some(Slot {
            gpu: SoaBuffer::new(memory, device, len as usize, STRIDES, "cylinder instances")?,
            len: 0,
            bounds: Aabb::EMPTY,
            max_radius: 0.0,
        });
        full = true;
    }
    let s = slot.as_mut().expect("slot filled above");
    let (a, b) = if full {
        (0, len)
    } else {
        (dirty.start.min(len), dirty.end.min(len))
    };
    if a < b {
        let r = a as usize..b as usize;
        s.gpu.upload(uploads, 0, a, slice_bytes(&batch.start[r.clone()]));
        s.gpu.upload(uploads, 1, a, slice_bytes(&batch.end[r.clone()]));
        s.gpu.upload(uploads, 2, a, slice_bytes(&batch.start_radius[r.clone()]));
        s.gpu.upload(uploads, 3, a, slice_bytes(&batch.end_radius[r.clone()]));
        s.gpu.upload(uploads, 4, a, slice_bytes(&batch.colour[r]));
    }
    // Bounds only grow under partial updates (conservative); a full or
    // shrinking update recomputes them.
    let (from, to) = if full || len < s.len || (a == 0 && b == len) {
        s.bounds = Aabb::EMPTY;
        s.max_radius = 0.0;
        (0, len)
    } else {
        (a, b)
    };
    for k in from as usize..to as usize {
        let (r0, r1) = (batch.start_radius[k], batch.end_radius[k]);
        s.bounds.add_sphere(batch.start[k], r0);
        s.bounds.add_sphere(batch.end[k], r1);
        s.max_radius = s.max_radius.max(r0).max(r1);
    }
    s.len = len;
    Ok(())
}
