//! The wind's probe: the evaluation of `shaders/wind.glsl` run as a compute shader for a
//! list of queries, so tests compare the GPU with `WindField::sample` of sylva-systems.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::{SWAY_GUSTS, SWAY_WINDS, SwayWind};
use sylva_runtime::glam::Vec3;

use crate::commands::Commands;
use crate::descriptors::{Descriptor, SetPool};
use crate::error::RenderError;
use crate::globals;
use crate::gpu_memory::Memory;
use crate::grass_probe::{host_buffer, record_dispatch, results};
use crate::pipeline::ComputePipeline;
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::wind::WindBlock;

/// Bytes per query and per result: four 32-bit values each.
const QUERY_BYTES: usize = 16;

/// Push constants of a probe (matches `wind_probe.comp`): x, the queries.
#[repr(C)]
#[derive(Clone, Copy)]
struct ProbeCount([u32; 4]);

// SAFETY: repr(C) of one 16-byte array of `u32`: no padding.
unsafe impl Pod for ProbeCount {}

/// The compute pipeline, its one set and its own command buffer.
pub(crate) struct WindProbe {
    commands: Commands,
    pipeline: ComputePipeline,
    sets: SetPool,
}

impl WindProbe {
    /// The pipeline over a set of the frame's constants, the queries and the results.
    pub fn new(memory: &Arc<Memory>) -> Result<WindProbe, RenderError> {
        let device = memory.device();
        let kinds = [
            vk::DescriptorType::UNIFORM_BUFFER,
            vk::DescriptorType::STORAGE_BUFFER,
            vk::DescriptorType::STORAGE_BUFFER,
        ];
        let sets = SetPool::new(memory, vk::ShaderStageFlags::COMPUTE, &kinds, 1)?;
        let pipeline = ComputePipeline::new(
            device,
            shaders::WIND_PROBE_COMP,
            &[sets.layout()],
            std::mem::size_of::<ProbeCount>() as u32,
        )?;
        Ok(WindProbe {
            commands: Commands::new(device)?,
            pipeline,
            sets,
        })
    }

    /// For each query `(position, wind time)`, the wind `shaders/wind.glsl` evaluates there
    /// (m/s, before the wind's `power`). Every gust counts, so `wind` may have at most
    /// [`SWAY_GUSTS`]. Runs its own submission (outside a frame) and waits for it; no frame
    /// may be in flight, so that the one set it allocates is back in its pool when the next
    /// probe runs.
    pub fn run(
        &mut self,
        memory: &Arc<Memory>,
        wind: &SwayWind,
        queries: &[(Vec3, f32)],
    ) -> Result<Vec<Vec3>, RenderError> {
        if wind.winds.len() > SWAY_WINDS || wind.gusts.len() > SWAY_GUSTS {
            return Err(RenderError::BadBatch(format!(
                "wind probe: {} winds and {} gusts, at most {SWAY_WINDS} and {SWAY_GUSTS}",
                wind.winds.len(),
                wind.gusts.len()
            )));
        }
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let constants = globals::with_wind(WindBlock::new(wind, |_| true));
        let uniform = host_buffer(
            memory,
            &constants,
            vk::BufferUsageFlags::UNIFORM_BUFFER,
            "wind probe wind",
        )?;
        let q: Vec<[f32; 4]> = queries.iter().map(|(p, t)| p.extend(*t).to_array()).collect();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let input = host_buffer(memory, slice_bytes(&q), storage, "wind probe queries")?;
        let size = (queries.len() * QUERY_BYTES) as u64;
        let output = memory.buffer(size, storage, MemoryLocation::GpuToCpu, "wind probe results")?;
        let set = self.sets.allocate("vkAllocateDescriptorSets")?;
        set.write(&[
            Descriptor::Uniform(&uniform),
            Descriptor::Storage(&input),
            Descriptor::Storage(&output),
        ]);
        let d = &memory.device().raw;
        let cmd = self.commands.begin()?;
        self.pipeline
            .bind(d, cmd, &[set.raw()], &ProbeCount([queries.len() as u32, 0, 0, 0]));
        record_dispatch(d, cmd, queries.len() as u32);
        self.commands.submit_and_wait(vk::SubmitInfo::default())?;
        results(&output, queries.len())
    }
}
