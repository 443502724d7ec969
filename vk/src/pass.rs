//! The shape every draw path (terrain, grass, cylinders, points) has:
//! `prepare` uploads what changed and picks what is visible, `record` draws
//! it, and Drop frees it (its resources are guards).

use std::sync::Arc;

use ash::vk;

use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::memory::Memory;
use crate::upload::Uploads;

/// What a pass prepares a frame with.
pub(crate) struct Prepare<'f> {
    /// Where new buffers and images come from.
    pub memory: &'f Arc<Memory>,
    /// The frame's copies, to which changed data is added.
    pub uploads: &'f mut Uploads,
    /// The camera, for culling and level of detail.
    pub view: &'f View,
    /// Where culled batches and chunks are counted.
    pub stats: &'f mut FrameStats,
}

/// A command buffer recording inside the frame's rendering.
pub(crate) struct Recording<'f> {
    /// The device the commands are recorded for.
    pub device: &'f ash::Device,
    /// The command buffer.
    pub cmd: vk::CommandBuffer,
    /// The per-frame constants, bound at set 0 by every pass.
    pub globals: vk::DescriptorSet,
}

/// A draw path. The previous frame has finished when `prepare` runs, so it may
/// free and rewrite anything the last `record` used.
pub(crate) trait DrawPass {
    /// What the pass draws, taken from the frame's input.
    type Batch<'b>;

    /// Uploads what changed in `batch`, frees what left it, and picks what is visible.
    fn prepare(&mut self, frame: &mut Prepare<'_>, batch: Self::Batch<'_>) -> Result<(), RenderError>;

    /// Records the draws `prepare` picked, counting them in `stats`.
    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats);

    /// Records what the pass casts into the shadow map (`rec` holds the sun's globals),
    /// counting the draws in `stats`; most passes cast nothing.
    fn record_shadow(&self, _rec: &Recording<'_>, _stats: &mut FrameStats) {}
}
