//! The sky: one full-screen triangle at the far plane, drawn after the
//! surfaces, so it fills only the pixels none of them covered. Each pixel
//! shades the sky along its ray (`shaders/sky.frag`, sharing
//! `shaders/atmosphere.glsl` with the fog of every surface).

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::pass::Recording;
use crate::pipeline::{Depth, DrawPipeline, PipelineDesc};
use crate::shaders;

/// The sky pass.
pub(crate) struct Sky {
    pipeline: DrawPipeline,
}

impl Sky {
    /// The pipeline over the globals at set 0, without vertex input.
    pub fn new(device: &Arc<Device>, globals: vk::DescriptorSetLayout) -> Result<Sky, RenderError> {
        let desc = PipelineDesc {
            vert: shaders::SKY_VERT,
            frag: shaders::SKY_FRAG,
            vertices: &[],
            instances: &[],
            sets: &[globals],
            push_bytes: 0,
        };
        Ok(Sky {
            pipeline: DrawPipeline::with_depth(device, &desc, Depth::BACKGROUND)?,
        })
    }

    /// Records the triangle. It reads only the frame's constants, so there is
    /// nothing to prepare, and it is not counted in `FrameStats::draw_calls`,
    /// which counts the batches' draws.
    pub fn record(&self, rec: &Recording<'_>) {
        self.pipeline.bind(rec);
        // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline and
        // the globals bound; the vertex shader makes its three vertices from their index.
        unsafe { rec.device.cmd_draw(rec.cmd, 3, 1, 0, 0) };
    }
}
