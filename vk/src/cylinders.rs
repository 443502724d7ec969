//! Branch segments (and springs) as instanced tapered cylinders. Each
//! [`CylinderBatch`] gets a device-local buffer holding its five arrays; a
//! batch is one draw, culled by its bounding box, with the ring's side count
//! chosen from its widest cylinder's size on screen.

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::CylinderBatch;

use crate::cull::Aabb;
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::instances::Instances;
use crate::memory::Memory;
use crate::mesh::{self, Mesh};
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::slice_bytes;
use crate::shaders;
use crate::upload::Uploads;

/// Per instance: start, end, start radius, end radius, colour.
const INSTANCE: &[Attribute] = &[
    Attribute::VEC3,
    Attribute::VEC3,
    Attribute::FLOAT,
    Attribute::FLOAT,
    Attribute::RGBA8,
];

/// Per ring vertex: (cos θ, sin θ, t).
const VERTEX: &[Attribute] = &[Attribute::VEC3];

/// Ring side counts of the level-of-detail meshes, coarse to fine.
pub const SIDES: [u32; 3] = [4, 8, 16];

/// One batch's GPU copy.
struct Slot {
    instances: Instances,
    bounds: Aabb,
    max_radius: f32,
}

/// The cylinder draw path.
pub(crate) struct Cylinders {
    slots: Vec<Slot>,
    /// (slot, ring) per visible batch, decided in `prepare`.
    draws: Vec<(usize, usize)>,
    rings: Vec<Mesh>,
    pipeline: DrawPipeline,
}

impl Cylinders {
    /// The pipeline over the globals at set 0, and the ring meshes (queued for upload).
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        globals: vk::DescriptorSetLayout,
    ) -> Result<Cylinders, RenderError> {
        let pipeline = DrawPipeline::new(
            memory.device(),
            &PipelineDesc {
                vert: shaders::CYLINDER_VERT,
                frag: shaders::LIT_FRAG,
                vertices: VERTEX,
                instances: INSTANCE,
                sets: &[globals],
                push_bytes: 0,
            },
        )?;
        let rings = SIDES
            .iter()
            .map(|&sides| {
                let (v, i) = mesh::ring(sides);
                Mesh::new(memory, uploads, &v, &i, "cylinder ring")
            })
            .collect::<Result<_, _>>()?;
        Ok(Cylinders {
            slots: Vec::new(),
            draws: Vec::new(),
            rings,
            pipeline,
        })
    }
}

impl DrawPass for Cylinders {
    /// Slot `i` is batch `i`.
    type Batch<'b> = Vec<&'b mut CylinderBatch>;

    fn prepare(&mut self, frame: &mut Prepare<'_>, mut batches: Self::Batch<'_>) -> Result<(), RenderError> {
        self.slots.truncate(batches.len());
        self.slots.resize_with(batches.len(), || Slot {
            instances: Instances::new(INSTANCE, "cylinder instances"),
            bounds: Aabb::EMPTY,
            max_radius: 0.0,
        });
        for (slot, batch) in self.slots.iter_mut().zip(batches.iter_mut()) {
            slot.update(frame, batch)?;
        }
        self.draws.clear();
        for (i, s) in self.slots.iter().enumerate() {
            if s.instances.len() == 0 {
                continue;
            }
            if !frame.view.frustum.intersects(&s.bounds) {
                frame.stats.batches_culled += 1;
                continue;
            }
            let pixels = frame
                .view
                .pixels(s.max_radius, s.bounds.distance(frame.view.camera.position));
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

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        if self.draws.is_empty() {
            return;
        }
        self.pipeline.bind(rec);
        for &(i, ring) in &self.draws {
            let s = &self.slots[i];
            let mesh = &self.rings[ring];
            mesh.bind(rec);
            s.instances.bind(rec, 1);
            // SAFETY: `rec.cmd` is recording inside the frame's rendering with the
            // pipeline, the mesh and the instances bound.
            unsafe {
                rec.device
                    .cmd_draw_indexed(rec.cmd, mesh.index_count, s.instances.len(), 0, 0, 0);
            }
            stats.draw_calls += 1;
            stats.cylinders += u64::from(s.instances.len());
        }
    }
}

impl Slot {
    /// Brings the slot up to date with its batch. Bounds only grow under partial
    /// updates (conservative); a whole or shrinking update recomputes them.
    fn update(&mut self, frame: &mut Prepare<'_>, batch: &mut CylinderBatch) -> Result<(), RenderError> {
        let dirty = batch.dirty.take();
        let arrays = [
            slice_bytes(&batch.start),
            slice_bytes(&batch.end),
            slice_bytes(&batch.start_radius),
            slice_bytes(&batch.end_radius),
            slice_bytes(&batch.colour),
        ];
        let changed = self
            .instances
            .update(frame.memory, frame.uploads, &arrays, batch.len(), dirty)?;
        let range = if changed.whole {
            self.bounds = Aabb::EMPTY;
            self.max_radius = 0.0;
            0..batch.len()
        } else {
            changed.range
        };
        for k in range {
            let (r0, r1) = (batch.start_radius[k], batch.end_radius[k]);
            self.bounds.add_sphere(batch.start[k], r0);
            self.bounds.add_sphere(batch.end[k], r1);
            self.max_radius = self.max_radius.max(r0).max(r1);
        }
        Ok(())
    }
}
