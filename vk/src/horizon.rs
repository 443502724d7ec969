//! The horizon: the far field of ground beyond the streamed chunks, and the
//! sea out to the horizon (docs/design/horizon.md).
//!
//! The far field is one grid over the whole [`HorizonField`], drawn like a
//! terrain chunk (heights fetched in the vertex shader) but coarse, unshadowed
//! and without materials. It is one continuous surface everywhere, under the
//! chunks too, so no ray that goes below it can reach the sky: there is no
//! crack for the sky to show through, whatever the chunks' edges look like.
//! Under resident chunks it is lowered (a `drop` per sample, from the chunks'
//! squares in the frame's terrain batch), deeper than the chunks' detail can
//! reach below the basin heights, so the chunks hide it and never fight it for
//! depth; the samples just outside keep their height, so the lowering ramps
//! up over one field cell beyond the chunks, behind their edges.
//!
//! The sea beyond the field is the sky pass's (`shaders/sky.frag`): a ray that
//! meets nothing and goes down meets the sea plane, shaded as the field's sea is.

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::{HorizonBatch, HorizonField, TerrainBatch};
use sylva_runtime::glam::{Vec2, Vec3};

use crate::cull::Aabb;
use crate::descriptors::{self, Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::{Image, Memory};
use crate::handles::Owned;
use crate::mesh::Mesh;
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;

/// Per grid vertex: sample coordinates (i, j) and 0 (the terrain grid's layout, without
/// its skirt).
const VERTEX: &[Attribute] = &[Attribute::VEC3];

/// Field textures the set pool has room for: one in use, the ones the frames in flight
/// may still bind, and slack.
const MAX_FIELDS: u32 = 8;

/// How far below the basin heights a sample under the chunks sinks, metres, besides its
/// relief: what the chunks' detail noise and carved rivers may reach below them.
const LAND_DROP: f32 = 24.0;

/// How far below the sea level the field's sea sinks under the chunks, metres: enough
/// that the chunks' water, drawn at that level, wins the depth test at the streamed radius.
const SEA_DROP: f32 = 1.0;

/// How much further than the field's farthest corner the view reaches, metres.
const REACH_MARGIN: f32 = 256.0;

/// Push constants of the field's draw (matches `horizon.vert`).
#[repr(C)]
#[derive(Clone, Copy)]
struct FieldConstants {
    /// x, z: world position of sample (0, 0); y: sea level (or far below); w: spacing.
    origin: [f32; 4],
    /// x: samples per side.
    size: [i32; 4],
}

// SAFETY: repr(C) of two 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for FieldConstants {}

/// The field on the GPU: per sample its height and its drop under the chunks.
struct Field {
    set: DescriptorSet,
    texture: Image,
    mesh: Mesh,
    samples: u32,
}

/// The horizon's draw path.
pub(crate) struct Horizon {
    field: Option<Field>,
    /// The field as last uploaded, for the drops.
    heights: Vec<f32>,
    /// Share of the ground under crowns per sample (empty: none known).
    canopy: Vec<f32>,
    origin: Vec2,
    spacing: f32,
    samples: u32,
    /// The lowest and highest height of the field.
    range: (f32, f32),
    sea_level: Option<f32>,
    /// The chunks' squares the drops were last worked out for (sorted).
    covered: Vec<[i32; 2]>,
    /// Whether the field is drawn this frame.
    visible: bool,
    scratch: Vec<[f32; 4]>,
    pipeline: DrawPipeline,
    sets: SetPool,
    sampler: Owned<vk::Sampler>,
}

impl Horizon {
    /// The pipeline over the globals at set 0 and the field's texture at set 1.
    pub fn new(memory: &Arc<Memory>, globals: vk::DescriptorSetLayout) -> Result<Horizon, RenderError> {
        let device = memory.device();
        let kinds = [vk::DescriptorType::COMBINED_IMAGE_SAMPLER];
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let sets = SetPool::new(memory, stages, &kinds, MAX_FIELDS)?;
        let desc = PipelineDesc {
            vert: shaders::HORIZON_VERT,
            frag: shaders::HORIZON_FRAG,
            vertices: VERTEX,
            instances: &[],
            sets: &[globals, sets.layout()],
            push_bytes: std::mem::size_of::<FieldConstants>() as u32,
        };
        Ok(Horizon {
            field: None,
            heights: Vec::new(),
            canopy: Vec::new(),
            origin: Vec2::ZERO,
            spacing: 1.0,
            samples: 0,
            range: (0.0, 0.0),
            sea_level: None,
            covered: Vec::new(),
            visible: false,
            scratch: Vec::new(),
            pipeline: DrawPipeline::new(device, &desc)?,
            sets,
            sampler: descriptors::nearest_sampler(device)?,
        })
    }

    /// How far the view must reach to see the whole field from `eye`, metres (none
    /// without a field).
    pub fn reach(batch: Option<&HorizonBatch>, eye: Vec3) -> Option<f32> {
        let field = batch?.field.as_ref()?;
        let half = 0.5 * field.spacing * (field.resolution.max(1) - 1) as f32;
        let off = (Vec2::new(eye.x, eye.z) - field.centre()).abs() + Vec2::splat(half);
        Some(off.length() + REACH_MARGIN)
    }

    /// The sea level the sky's sea is drawn at, if there is a sea.
    pub fn sea_level(&self) -> Option<f32> {
        self.sea_level
    }

    /// Keeps `field`'s heights and makes its texture and grid when its size changed.
    fn take_field(&mut self, frame: &mut Prepare<'_>, field: &HorizonField) -> Result<(), RenderError> {
        if !field.is_consistent() {
            return Err(RenderError::BadBatch(format!(
                "horizon field: {} heights do not fill resolution {} (spacing {})",
                field.height.len(),
                field.resolution,
                field.spacing
            )));
        }
        self.heights.clone_from(&field.height);
        self.canopy.clone_from(&field.canopy);
        self.origin = field.origin;
        self.spacing = field.spacing;
        self.samples = field.resolution;
        self.range = field
            .height
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
                (lo.min(h), hi.max(h))
            });
        if self.field.as_ref().is_some_and(|f| f.samples == field.resolution) {
            return Ok(());
        }
        let extent = vk::Extent2D {
            width: field.resolution,
            height: field.resolution,
        };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let texture = frame.memory.image(
            extent,
            vk::Format::R32G32B32A32_SFLOAT,
            usage,
            vk::ImageAspectFlags::COLOR,
            "horizon field",
        )?;
        let set = self.sets.allocate("vkAllocateDescriptorSets (horizon)")?;
        set.write(&[Descriptor::Texture(&texture, self.sampler.raw())]);
        let (v, i) = grid(field.resolution);
        let mesh = Mesh::new(frame.memory, frame.uploads, &v, &i, "horizon grid")?;
        // The old field goes to the graveyard (the frame in flight may draw it).
        self.field = Some(Field {
            set,
            texture,
            mesh,
            samples: field.resolution,
        });
        Ok(())
    }

    /// The squares of `terrain`'s chunks, as keys, sorted (what the drops depend on).
    fn covered_by(terrain: Option<&TerrainBatch>) -> Vec<[i32; 2]> {
        let mut keys: Vec<[i32; 2]> = terrain.map_or(Vec::new(), |t| t.patches.iter().map(|p| p.key).collect());
        keys.sort_unstable();
        keys
    }

    /// Each sample's height, drop and canopy share: samples at a corner of a field cell that a chunk
    /// covers sink below the basin heights by `LAND_DROP` plus the relief around them
    /// (the most a straight line between samples misses the ground by), or by `SEA_DROP`
    /// where they and their neighbours lie under the sea.
    fn texels(&mut self, terrain: Option<&TerrainBatch>) -> &[[f32; 4]] {
        let n = self.samples as usize;
        self.scratch.clear();
        let canopy = |k: usize| self.canopy.get(k).copied().unwrap_or(0.0);
        self.scratch
            .extend(self.heights.iter().enumerate().map(|(k, &h)| [h, 0.0, canopy(k), 0.0]));
        let sea = self.sea_level.unwrap_or(f32::NEG_INFINITY);
        let mut sunk = vec![false; n * n];
        for p in terrain.into_iter().flat_map(|t| &t.patches) {
            let extent = p.cell_size * p.resolution.saturating_sub(1) as f32;
            let lo = (Vec2::new(p.origin.x, p.origin.z) - self.origin) / self.spacing;
            let hi = lo + Vec2::splat(extent / self.spacing);
            // The cells the square overlaps by more than a sliver; their corners sink.
            let first = (lo + 0.01).floor().max(Vec2::ZERO);
            let last = (hi - 0.01).ceil().min(Vec2::splat((n - 1) as f32));
            if first.x > last.x || first.y > last.y {
                continue;
            }
            for j in first.y as usize..=last.y as usize {
                for i in first.x as usize..=last.x as usize {
                    sunk[j * n + i] = true;
                }
            }
        }
        for j in 0..n {
            for i in 0..n {
                if !sunk[j * n + i] {
                    continue;
                }
                let h = self.heights[j * n + i];
                let (mut relief, mut top) = (0.0f32, h);
                for (dj, di) in [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)] {
                    let (x, z) = (i as i64 + di, j as i64 + dj);
                    if (0..n as i64).contains(&x) && (0..n as i64).contains(&z) {
                        let other = self.heights[z as usize * n + x as usize];
                        relief = relief.max((other - h).abs());
                        top = top.max(other);
                    }
                }
                self.scratch[j * n + i][1] = if top < sea { SEA_DROP } else { LAND_DROP + relief };
            }
        }
        &self.scratch
    }
}

impl DrawPass for Horizon {
    /// The horizon, and the terrain whose chunks the field sinks under.
    type Batch<'b> = (Option<&'b mut HorizonBatch>, Option<&'b TerrainBatch>);

    /// Uploads a new field, and the drops again whenever the chunks changed.
    fn prepare(&mut self, frame: &mut Prepare<'_>, (batch, terrain): Self::Batch<'_>) -> Result<(), RenderError> {
        self.visible = false;
        let Some(batch) = batch else {
            self.field = None;
            self.sea_level = None;
            return Ok(());
        };
        self.sea_level = batch.sea_level.filter(|s| s.is_finite());
        let Some(field) = &batch.field else {
            self.field = None;
            return Ok(());
        };
        let mut upload = false;
        if batch.dirty || self.field.is_none() {
            self.take_field(frame, field)?;
            batch.dirty = false;
            upload = true;
        }
        let covered = Horizon::covered_by(terrain);
        if covered != self.covered {
            self.covered = covered;
            upload = true;
        }
        if upload {
            let extent = vk::Extent2D {
                width: self.samples,
                height: self.samples,
            };
            if let Some(image) = self.field.as_ref().map(|f| f.texture.raw()) {
                let texels = self.texels(terrain);
                frame.uploads.copy_to_image(image, extent, slice_bytes(texels));
            }
        }
        let extent = (self.samples - 1) as f32 * self.spacing;
        let (lo, hi) = self.range;
        let bounds = Aabb {
            min: Vec3::new(self.origin.x, lo - LAND_DROP, self.origin.y),
            max: Vec3::new(
                self.origin.x + extent,
                hi.max(self.sea_level.unwrap_or(hi)),
                self.origin.y + extent,
            ),
        };
        self.visible = frame.view.frustum.intersects(&bounds);
        Ok(())
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        let Some(field) = self.field.as_ref().filter(|_| self.visible) else {
            return;
        };
        self.pipeline.bind(rec);
        field.mesh.bind(rec);
        self.pipeline.bind_set(rec, 1, field.set.raw());
        self.pipeline.push(
            rec,
            &FieldConstants {
                origin: [
                    self.origin.x,
                    self.sea_level.unwrap_or(-1.0e9),
                    self.origin.y,
                    self.spacing,
                ],
                size: [field.samples as i32, 0, 0, 0],
            },
        );
        // SAFETY: `rec.cmd` is recording inside a rendering with the pipeline, the grid,
        // the field's set and its constants bound.
        unsafe {
            rec.device.cmd_draw_indexed(rec.cmd, field.mesh.index_count, 1, 0, 0, 0);
        }
        stats.draw_calls += 1;
    }
}

/// A grid over `samples × samples` samples: vertices (i, j, 0), two triangles per cell.
fn grid(samples: u32) -> (Vec<f32>, Vec<u32>) {
    let n = samples;
    let mut v = Vec::with_capacity((n * n) as usize * 3);
    for j in 0..n {
        for i in 0..n {
            v.extend_from_slice(&[i as f32, j as f32, 0.0]);
        }
    }
    let mut idx = Vec::with_capacity(((n - 1) * (n - 1) * 6) as usize);
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            let (b, c, d) = (a + 1, a + n, a + n + 1);
            idx.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    (v, idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_covers_every_cell_twice() {
        let (v, i) = grid(3);
        assert_eq!((v.len(), i.len()), (9 * 3, 4 * 6));
        assert!(i.iter().all(|&k| k < 9));
    }
}
