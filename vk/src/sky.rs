//! The sky: one full-screen triangle at the far plane, drawn after the
//! surfaces, so it fills only the pixels none of them covered. Each pixel
//! shades the sky along its ray (`shaders/sky.frag`, sharing
//! `shaders/atmosphere.glsl` with the fog of every surface), or, where the
//! world has a sea and the ray goes down, the sea it meets (`shaders/sea.glsl`):
//! the sea runs to the horizon beyond everything drawn.

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::pass::Recording;
use crate::pipeline::{Depth, DrawPipeline, PipelineDesc};
use crate::pod::Pod;
use crate::shaders;

/// Push constants of the sky's draw (matches `sky.vert`): x, the sea's level; y, 1 where
/// there is a sea.
#[repr(C)]
#[derive(Clone, Copy)]
struct SeaConstants([f32; 4]);

// SAFETY: repr(C) of a 16-byte array of 4-byte elements: no padding.
unsafe impl Pod for SeaConstants {}

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
            push_bytes: std::mem::size_of::<SeaConstants>() as u32,
        };
        Ok(Sky {
            pipeline: DrawPipeline::with_depth(device, &desc, Depth::BACKGROUND)?,
        })
    }

    /// Records the triangle, with the sea at `sea` metres if there is one. It reads only
    /// the frame's constants and those, so there is nothing to prepare, and it is not
    /// counted in `FrameStats::draw_calls`, which counts the batches' draws.
    pub fn record(&self, rec: &Recording<'_>, sea: Option<f32>) {
        self.pipeline.bind(rec);
        let sea = sea.map_or([0.0; 4], |level| [level, 1.0, 0.0, 0.0]);
        self.pipeline.push(rec, &SeaConstants(sea));
        // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline and
        // the globals bound; the vertex shader makes its three vertices from their index.
        unsafe { rec.device.cmd_draw(rec.cmd, 3, 1, 0, 0) };
    }
}
