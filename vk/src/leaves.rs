//! Leaves as instanced alpha-tested cards. Each [`LeafBatch`] gets a device-local buffer
//! holding its four arrays; a batch is one draw of six vertices per leaf, culled by its
//! bounding box. The vertex shader sways the cards in the wind at the frame's time; the
//! fragment shader cuts them to a leaf shape.

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::LeafBatch;

use crate::cull::Aabb;
use crate::device::Device;
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::instances::Instances;
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;

/// Per leaf: position, normal, size, colour.
const INSTANCE: &[Attribute] = &[Attribute::VEC3, Attribute::VEC3, Attribute::FLOAT, Attribute::RGBA8];

/// How far a crown sways, metres (the wind offset's amplitude at a leaf).
const SWAY: f32 = 0.05;

/// The push constants of the leaf pipeline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Wind {
    /// x: time, seconds; y: sway amplitude, metres.
    play: [f32; 4],
}

// SAFETY: repr(C) of one 16-byte array of `f32`: no padding.
unsafe impl Pod for Wind {}

/// One batch's GPU copy.
struct Slot {
    instances: Instances,
    bounds: Aabb,
}

/// The leaf draw path.
pub(crate) struct Leaves {
    slots: Vec<Slot>,
    /// Visible slots, decided in `prepare`.
    draws: Vec<usize>,
    wind: Wind,
    pipeline: DrawPipeline,
}

impl Leaves {
    /// The pipeline over the globals at set 0.
    pub fn new(device: &Arc<Device>, globals: vk::DescriptorSetLayout) -> Result<Leaves, RenderError> {
        let pipeline = DrawPipeline::new(
            device,
            &PipelineDesc {
                vert: shaders::LEAF_VERT,
                frag: shaders::LEAF_FRAG,
                vertices: &[],
                instances: INSTANCE,
                sets: &[globals],
                push_bytes: std::mem::size_of::<Wind>() as u32,
            },
        )?;
        Ok(Leaves {
            slots: Vec::new(),
            draws: Vec::new(),
            wind: Wind::default(),
            pipeline,
        })
    }
}

impl DrawPass for Leaves {
    /// Slot `i` is batch `i`; the time (seconds) moves the wind.
    type Batch<'b> = (Vec<&'b mut LeafBatch>, f32);

    fn prepare(&mut self, frame: &mut Prepare<'_>, (mut batches, time): Self::Batch<'_>) -> Result<(), RenderError> {
        self.wind.play = [if time.is_finite() { time } else { 0.0 }, SWAY, 0.0, 0.0];
        self.slots.truncate(batches.len());
        self.slots.resize_with(batches.len(), || Slot {
            instances: Instances::new(INSTANCE, "leaf instances"),
            bounds: Aabb::EMPTY,
        });
        for (slot, batch) in self.slots.iter_mut().zip(batches.iter_mut()) {
            slot.update(frame, batch)?;
        }
        self.draws.clear();
        for (i, s) in self.slots.iter().enumerate() {
            if s.instances.len() == 0 {
                continue;
            }
            if frame.view.frustum.intersects(&s.bounds) {
                self.draws.push(i);
            } else {
                frame.stats.batches_culled += 1;
            }
        }
        Ok(())
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        if self.draws.is_empty() {
            return;
        }
        self.pipeline.bind(rec);
        self.pipeline.push(rec, &self.wind);
        for &i in &self.draws {
            let s = &self.slots[i];
            s.instances.bind(rec, 0);
            // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline,
            // its push constants and the instances bound.
            unsafe { rec.device.cmd_draw(rec.cmd, 6, s.instances.len(), 0, 0) };
            stats.draw_calls += 1;
            stats.leaves += u64::from(s.instances.len());
        }
    }
}

impl Slot {
    /// Brings the slot up to date with its batch. Bounds only grow under partial updates
    /// (conservative); a whole or shrinking update recomputes them. Each leaf counts with its
    /// size plus the sway, so a card never leaves its batch's box.
    fn update(&mut self, frame: &mut Prepare<'_>, batch: &mut LeafBatch) -> Result<(), RenderError> {
        let dirty = batch.dirty.take();
        let arrays = [
            slice_bytes(&batch.position),
            slice_bytes(&batch.normal),
            slice_bytes(&batch.size),
            slice_bytes(&batch.colour),
        ];
        let changed = self
            .instances
            .update(frame.memory, frame.uploads, &arrays, batch.len(), dirty)?;
        let range = if changed.whole {
            self.bounds = Aabb::EMPTY;
            0..batch.len()
        } else {
            changed.range
        };
        for k in range {
            self.bounds.add_sphere(batch.position[k], batch.size[k] + 2.0 * SWAY);
        }
        Ok(())
    }
}
