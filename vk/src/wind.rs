//! The wind crowns sway in, as the frame's constants carry it to `shaders/wind.glsl`
//! (`WindBlock`); and the frame's wind grid, which `wind_grid.comp` fills from it before the
//! frame draws and the sways read (`shaders/sway.glsl`).

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::{SWAY_GUSTS, SWAY_WINDS, SwayGust, SwayWind};
use sylva_runtime::glam::Vec3;

use crate::error::RenderError;
use crate::gpu_memory::Memory;
use crate::pass::Recording;
use crate::pipeline::ComputePipeline;
use crate::pod::Pod;
use crate::shaders;

/// How far a crown sways, metres: a leaf's lean approaches it in a gale (half of it at 4 m/s),
/// its flutter adds under a third of it, so a card moves less than 2 · SWAY.
pub(crate) const SWAY: f32 = 0.2;

/// Nodes per side of the frame's wind grid.
const GRID_NODES: u32 = 128;
/// Bytes of a wind grid: four 32-bit values per node.
pub(crate) const GRID_BYTES: u64 = (GRID_NODES * GRID_NODES) as u64 * 16;
/// The nearest and farthest nodes may be apart, metres: half the finest lattice spacing or
/// gust radius lies between them, so the grid's bilinear wind follows the lattice's cosine
/// one closely where crowns are near.
const GRID_SPACING: (f32, f32) = (1.0, 4.0);

/// The frame's wind grid: the crowns' wind evaluated once per node, so a swaying vertex
/// reads four nodes instead of hashing the wind's lattice itself. It follows the camera,
/// snapped to whole nodes so a crown that holds still reads the same wind as the camera
/// moves.
pub(crate) struct WindGrid {
    pipeline: ComputePipeline,
    /// The time of the frame whose grid is to be evaluated (none: still air, no pass).
    pending: Option<f32>,
}

impl WindGrid {
    /// The pipeline over the frame's constants (whose binding 2 is the grid).
    pub fn new(memory: &Arc<Memory>, globals: vk::DescriptorSetLayout) -> Result<WindGrid, RenderError> {
        let pipeline = ComputePipeline::new(
            memory.device(),
            shaders::WIND_GRID_COMP,
            &[globals],
            std::mem::size_of::<[f32; 4]>() as u32,
        )?;
        Ok(WindGrid {
            pipeline,
            pending: None,
        })
    }

    /// Where the grid of a frame at `time` seen from `eye` lies, as the constants carry it:
    /// its first node (x, z), metres between nodes, nodes per side; all zero in still air,
    /// when the frame evaluates no grid.
    pub fn prepare(&mut self, eye: Vec3, wind: &SwayWind, time: f32) -> [f32; 4] {
        self.pending = None;
        if !wind.blows() {
            return [0.0; 4];
        }
        let finest = wind.winds.iter().map(|w| w.spacing);
        let finest = finest
            .chain(wind.gusts.iter().map(|g| g.radius))
            .fold(f32::INFINITY, f32::min);
        let spacing = (0.5 * finest).clamp(GRID_SPACING.0, GRID_SPACING.1);
        let half = (GRID_NODES / 2) as f32;
        let first = |v: f32| ((v / spacing).floor() - half) * spacing;
        self.pending = Some(time);
        [first(eye.x), first(eye.z), spacing, GRID_NODES as f32]
    }

    /// Records the evaluation of the prepared grid, outside any render pass and before every
    /// draw that sways (`rec` holds the camera's constants), and makes it visible to the
    /// vertex shaders.
    pub fn record(&self, rec: &Recording<'_>) {
        let Some(time) = self.pending else {
            return;
        };
        let (d, cmd) = (rec.device, rec.cmd);
        self.pipeline.bind(d, cmd, &[rec.globals], &[time, 0.0, 0.0, 0.0]);
        let to_vertices = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ);
        // SAFETY: `cmd` is recording outside a render pass with the grid pipeline, its set and
        // constants bound.
        unsafe {
            d.cmd_dispatch(cmd, (GRID_NODES * GRID_NODES).div_ceil(64), 1, 1);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::VERTEX_SHADER,
                vk::DependencyFlags::empty(),
                &[to_vertices],
                &[],
                &[],
            );
        }
    }
}

/// The `SwayWinds` struct of `shaders/globals.glsl` (std140), the last field of the frame's
/// constants.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct WindBlock {
    count: [u32; 4],
    play: [f32; 4],
    keys: [[u32; 4]; 2 * SWAY_WINDS],
    power: [[f32; 4]; SWAY_WINDS],
    lattice: [[f32; 4]; SWAY_WINDS],
    span: [[f32; 4]; SWAY_WINDS],
    gust_place: [[f32; 4]; SWAY_GUSTS],
    gust_time: [[f32; 4]; SWAY_GUSTS],
    gust_velocity: [[f32; 4]; SWAY_GUSTS],
}

// SAFETY: repr(C) of 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for WindBlock {}

/// A 64-bit word as the shader's (lo, hi).
fn halves(word: u64) -> [u32; 2] {
    [word as u32, (word >> 32) as u32]
}

impl WindBlock {
    /// `wind`'s first [`SWAY_WINDS`] winds and the first [`SWAY_GUSTS`] gusts `keep` accepts.
    pub fn new(wind: &SwayWind, keep: impl Fn(&SwayGust) -> bool) -> WindBlock {
        let mut b = WindBlock {
            play: [wind.time_scale, wind.power, SWAY, 0.0],
            ..WindBlock::default()
        };
        let winds = wind.winds.iter().take(SWAY_WINDS);
        for (k, w) in winds.enumerate() {
            let [k0, k1, k2] = w.keys.map(halves);
            b.keys[2 * k] = [k0[0], k0[1], k1[0], k1[1]];
            b.keys[2 * k + 1] = [k2[0], k2[1], 0, 0];
            b.power[k] = [w.power[0], w.power[1], w.deflection[0], w.deflection[1]];
            b.lattice[k] = [w.frequency, w.deviation, w.spacing, 0.0];
            b.span[k] = [w.active[0], w.active[1], w.direction[0], w.direction[1]];
            b.count[0] += 1;
        }
        for (k, g) in wind.gusts.iter().filter(|g| keep(g)).take(SWAY_GUSTS).enumerate() {
            b.gust_place[k] = [g.center.x, g.center.z, g.radius, 0.0];
            b.gust_time[k] = [g.start, g.duration, 0.0, 0.0];
            b.gust_velocity[k] = g.velocity.extend(0.0).to_array();
            b.count[1] += 1;
        }
        b
    }

    /// The block a frame at `time` seconds sways with: the gusts blowing at its wind time.
    pub fn at(wind: &SwayWind, time: f32) -> WindBlock {
        let t = time * wind.time_scale;
        WindBlock::new(wind, |g| (0.0..1.0).contains(&((t - g.start) / g.duration)))
    }
}
