//! Points (attractor clouds) as instanced screen-space squares.

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::PointBatch;

use crate::cull::Aabb;
use crate::device::Device;
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::instances::Instances;
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::slice_bytes;
use crate::shaders;

/// Per point: position, colour.
const INSTANCE: &[Attribute] = &[Attribute::VEC3, Attribute::RGBA8];

/// The point draw path: one batch, one draw.
pub(crate) struct Points {
    instances: Instances,
    bounds: Aabb,
    visible: bool,
    pipeline: DrawPipeline,
}

impl Points {
    /// The pipeline over the globals at set 0.
    pub fn new(device: &Arc<Device>, globals: vk::DescriptorSetLayout) -> Result<Points, RenderError> {
        let pipeline = DrawPipeline::new(
            device,
            &PipelineDesc {
                vert: shaders::POINT_VERT,
                frag: shaders::POINT_FRAG,
                vertices: &[],
                instances: INSTANCE,
                sets: &[globals],
                push_bytes: 0,
            },
        )?;
        Ok(Points {
            instances: Instances::new(INSTANCE, "points"),
            bounds: Aabb::EMPTY,
            visible: false,
            pipeline,
        })
    }
}

impl DrawPass for Points {
    /// The batch (`None` frees the buffer) and whether it is shown: hidden points stay
    /// uploaded.
    type Batch<'b> = (Option<&'b mut PointBatch>, bool);

    fn prepare(&mut self, frame: &mut Prepare<'_>, (batch, show): Self::Batch<'_>) -> Result<(), RenderError> {
        self.visible = false;
        let Some(batch) = batch else {
            self.instances.clear();
            return Ok(());
        };
        let dirty = batch.dirty.take();
        let arrays = [slice_bytes(&batch.position), slice_bytes(&batch.colour)];
        let changed = self
            .instances
            .update(frame.memory, frame.uploads, &arrays, batch.len(), dirty)?;
        let added = if changed.whole {
            self.bounds = Aabb::EMPTY;
            &batch.position[..]
        } else {
            &batch.position[changed.range]
        };
        added.iter().for_each(|&p| self.bounds.add_sphere(p, 0.0));
        if show && self.instances.len() > 0 {
            self.visible = frame.view.frustum.intersects(&self.bounds);
            frame.stats.batches_culled += u32::from(!self.visible);
        }
        Ok(())
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        if !self.visible {
            return;
        }
        self.pipeline.bind(rec);
        self.instances.bind(rec, 0);
        // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline and
        // the instances bound.
        unsafe { rec.device.cmd_draw(rec.cmd, 6, self.instances.len(), 0, 0) };
        stats.draw_calls += 1;
        stats.points += u64::from(self.instances.len());
    }
}
