//! The grass probe: the vertex shader's fetch of a layer's motion, run as a
//! compute shader for a list of queries, so tests compare the GPU with
//! `BakedGrass::sample` of sylva-systems.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::GrassLayer;
use sylva_runtime::glam::Vec3;

use crate::commands::Commands;
use crate::descriptors::{self, Descriptor, SetPool};
use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Memory};
use crate::grass::{Motion, SET_KINDS};
use crate::handles::Owned;
use crate::pipeline::ComputePipeline;
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::upload::{Uploads, record_uploads};

/// Bytes per query and per result: four 32-bit values each.
const QUERY_BYTES: usize = 16;

/// Push constants of a probe (matches `grass_probe.comp`).
#[repr(C)]
#[derive(Clone, Copy)]
struct ProbeConstants {
    field: [f32; 4],
    play: [f32; 4],
    count: [u32; 4],
}

// SAFETY: repr(C) of three 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for ProbeConstants {}

/// The compute pipeline, its one set and its own command buffer.
pub(crate) struct GrassProbe {
    commands: Commands,
    pipeline: ComputePipeline,
    sets: SetPool,
    sampler: Owned<vk::Sampler>,
}

impl GrassProbe {
    /// The pipeline over a set like a grass layer's, visible to compute.
    pub fn new(memory: &Arc<Memory>) -> Result<GrassProbe, RenderError> {
        let device = memory.device();
        let sets = SetPool::new(memory, vk::ShaderStageFlags::COMPUTE, &SET_KINDS, 1)?;
        let pipeline = ComputePipeline::new(
            device,
            shaders::GRASS_PROBE_COMP,
            &[sets.layout()],
            std::mem::size_of::<ProbeConstants>() as u32,
        )?;
        Ok(GrassProbe {
            commands: Commands::new(device)?,
            pipeline,
            sets,
            sampler: descriptors::nearest_sampler(device)?,
        })
    }

    /// For each query `(link, x, z, time)`, the displacement the vertex shader adds to
    /// particle `link + 1` of a blade of `layer` rooted at world `(x, z)` at playback
    /// `time` under `wind_power` and `wave_speed`. Runs its own submission (outside a
    /// frame) and waits for it; no frame may be in flight, so that the one set it allocates
    /// is back in its pool when the next probe runs.
    pub fn run(
        &mut self,
        memory: &Arc<Memory>,
        layer: &GrassLayer,
        (wind_power, wave_speed): (f32, f32),
        queries: &[(u32, f32, f32, f32)],
    ) -> Result<Vec<Vec3>, RenderError> {
        check(layer, queries)?;
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let mut uploads = Uploads::default();
        let max_depth = memory.device().limits.max_image_dimension3_d;
        let motion = Motion::new(memory, &mut uploads, layer, max_depth)?;
        let staging = host_buffer(
            memory,
            uploads.staged(),
            vk::BufferUsageFlags::TRANSFER_SRC,
            "grass probe staging",
        )?;
        let q: Vec<[f32; 4]> = queries.iter().map(|&(l, x, z, t)| [l as f32, x, z, t]).collect();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let input = host_buffer(memory, slice_bytes(&q), storage, "grass probe queries")?;
        let size = (queries.len() * QUERY_BYTES) as u64;
        let output = memory.buffer(size, storage, MemoryLocation::GpuToCpu, "grass probe results")?;
        let set = self.sets.allocate("vkAllocateDescriptorSets")?;
        set.write(&[
            Descriptor::Texture(&motion.image, self.sampler.raw()),
            Descriptor::Storage(&input),
            Descriptor::Storage(&output),
        ]);
        let constants = ProbeConstants {
            field: motion.field,
            play: [wind_power, wave_speed, motion.links as f32, motion.rgb8_scale],
            count: [queries.len() as u32, 0, 0, 0],
        };
        let d = &memory.device().raw;
        let cmd = self.commands.begin()?;
        record_uploads(d, cmd, staging.raw(), &uploads);
        self.pipeline.bind(d, cmd, &[set.raw()], &constants);
        record_dispatch(d, cmd, queries.len() as u32);
        self.commands.submit_and_wait(vk::SubmitInfo::default())?;
        results(&output, queries.len())
    }
}

/// Queries must ask for links the blade has, of a consistent layer.
fn check(layer: &GrassLayer, queries: &[(u32, f32, f32, f32)]) -> Result<(), RenderError> {
    if !layer.is_consistent() {
        return Err(RenderError::BadBatch("grass probe: inconsistent layer".into()));
    }
    if let Some(&(link, ..)) = queries.iter().find(|q| q.0 >= layer.motion.links) {
        return Err(RenderError::BadBatch(format!(
            "grass probe: link {link} of a blade with {} links",
            layer.motion.links
        )));
    }
    Ok(())
}

/// A host-visible buffer holding `data`.
pub(crate) fn host_buffer(
    memory: &Arc<Memory>,
    data: &[u8],
    usage: vk::BufferUsageFlags,
    name: &str,
) -> Result<Buffer, RenderError> {
    let mut buffer = memory.buffer(data.len() as u64, usage, MemoryLocation::CpuToGpu, name)?;
    buffer.write(data, name)?;
    Ok(buffer)
}

/// Records: one invocation per query (64 per group), its results made visible to the host.
pub(crate) fn record_dispatch(d: &ash::Device, cmd: vk::CommandBuffer, queries: u32) {
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: `cmd` is recording with the probe pipeline, its set and constants bound.
    unsafe {
        d.cmd_dispatch(cmd, queries.div_ceil(64), 1, 1);
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[to_host],
            &[],
            &[],
        );
    }
}

/// The first three values of each of `count` results.
pub(crate) fn results(output: &Buffer, count: usize) -> Result<Vec<Vec3>, RenderError> {
    let out = output
        .mapped()
        .ok_or_else(|| RenderError::Memory("probe results are not host-visible".into()))?;
    Ok(out[..count * QUERY_BYTES]
        .chunks_exact(QUERY_BYTES)
        .map(|c| {
            let f = |k: usize| f32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]]);
            Vec3::new(f(0), f(1), f(2))
        })
        .collect())
}
