//! The shape every draw path (terrain, grass, cylinders, points) has:
//! `prepare` uploads what changed and picks what is visible, `record` draws
//! it, and Drop frees it (its resources are guards).

use std::sync::Arc;

use ash::vk;
use rayon::prelude::*;

use crate::cull::Frustum;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::gpu_memory::Memory;
use crate::upload::Uploads;

/// What a pass prepares a frame with.
pub(crate) struct Prepare<'f> {
    /// Where new buffers and images come from.
    pub memory: &'f Arc<Memory>,
    /// The frame's copies, to which changed data is added.
    pub uploads: &'f mut Uploads,
    /// The camera, for culling and level of detail.
    pub view: &'f View,
    /// What the sun's shadow map covers, for culling what casts into it.
    pub sun: &'f Frustum,
    /// The side of one of the shadow map's texels, metres: the finest detail it resolves.
    pub shadow_texel: f32,
    /// Where culled batches and chunks are counted.
    pub stats: &'f mut FrameStats,
    /// The frame slot: which copy of the host-written per-frame resources (indirect
    /// commands) this frame writes.
    pub slot: usize,
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

/// A draw path. The previous frame may still be running on the GPU when `prepare`
/// runs: what it drops goes to the graveyard (kept until the frames that may use it
/// have finished), device-local data it rewrites goes through the frame's copies
/// (ordered after earlier frames' reads), and host-visible data it rewrites has one
/// copy per frame slot.
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

/// A draw path's GPU copy of one batch, brought up to date in two steps ([`update_slots`]).
pub(crate) trait BatchSlot: Send {
    /// The batch it copies.
    type Batch: Send;
    /// What it sends up this frame.
    type Plan: Send;
    /// Works out what to send up to match `batch` (on the pool, beside other slots).
    fn plan(&mut self, batch: &mut Self::Batch) -> Self::Plan;
    /// Sends up what [`BatchSlot::plan`] worked out.
    fn apply(&mut self, frame: &mut Prepare<'_>, batch: &Self::Batch, plan: Self::Plan) -> Result<(), RenderError>;
}

/// Brings each slot up to date with its batch, a pool's width of slots at a time: each group
/// works out on the pool what its slots send up (new cluster orders, the bulk of a first
/// frame with millions of instances), then sends it up slot by slot (the frame's copies are
/// one list). A group at a time bounds the reordered copies held at once.
pub(crate) fn update_slots<S: BatchSlot>(
    frame: &mut Prepare<'_>,
    slots: &mut [S],
    batches: &mut [&mut S::Batch],
) -> Result<(), RenderError> {
    let width = rayon::current_num_threads().max(1);
    for (slots, batches) in slots.chunks_mut(width).zip(batches.chunks_mut(width)) {
        let plans: Vec<S::Plan> = slots
            .par_iter_mut()
            .zip(batches.par_iter_mut())
            .map(|(slot, batch)| slot.plan(batch))
            .collect();
        for ((slot, batch), plan) in slots.iter_mut().zip(batches.iter()).zip(plans) {
            slot.apply(frame, batch, plan)?;
        }
    }
    Ok(())
}

/// Records a global memory barrier from `src` to `dst` (stages, accesses).
pub(crate) fn barrier(
    rec: &Recording<'_>,
    src: (vk::PipelineStageFlags, vk::AccessFlags),
    dst: (vk::PipelineStageFlags, vk::AccessFlags),
) {
    let b = vk::MemoryBarrier::default()
        .src_access_mask(src.1)
        .dst_access_mask(dst.1);
    // SAFETY: `rec.cmd` is recording outside rendering.
    unsafe {
        rec.device
            .cmd_pipeline_barrier(rec.cmd, src.0, dst.0, vk::DependencyFlags::empty(), &[b], &[], &[])
    };
}
