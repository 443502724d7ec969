//! The per-frame constants every shader reads at set 0: camera (and its
//! inverse view-projection, for the sky's rays), sun (and its view-projection,
//! for shadows), sky, fog and viewport, in a host-visible uniform buffer per
//! frame slot; and beside them the shadow map and the slot's wind grid.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::Sun;

use crate::commands::{FRAMES_IN_FLIGHT, per_frame};
use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::{Atmosphere, View};
use crate::gpu_memory::{Buffer, Memory};
use crate::pod::{Pod, bytes_of};
use crate::shadow::{ShadowFit, ShadowMap};
use crate::wind::{GRID_BYTES, WindBlock};

/// The bytes of a frame's constants that hold only `wind` (the wind probe's), the rest zero.
pub(crate) fn with_wind(wind: WindBlock) -> Vec<u8> {
    bytes_of(&Block {
        wind,
        ..Block::default()
    })
    .to_vec()
}

/// The `Globals` block of `shaders/globals.glsl` (std140). New fields go at the
/// end: a shader declaring an older prefix of the block still reads it right.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Block {
    view_proj: [f32; 16],
    camera: [f32; 4],
    sun_dir: [f32; 4],
    sun_colour: [f32; 4],
    horizon: [f32; 4],
    ambient: [f32; 4],
    viewport: [f32; 4],
    inv_view_proj: [f32; 16],
    zenith: [f32; 4],
    ground_haze: [f32; 4],
    light_view_proj: [f32; 16],
    shadow: [f32; 4],
    wind: WindBlock,
    wind_grid: [f32; 4],
}

// SAFETY: repr(C) of 64- and 16-byte arrays of `f32` and a `WindBlock` (16-byte arrays of
// 4-byte elements): no padding.
unsafe impl Pod for Block {}

/// The frame's constants twice: as the camera sees (the surfaces' set) and as the sun
/// sees (the shadow map's set: the same block with the sun's view-projection, so the
/// vertex shaders that place geometry place it for the map). Binding 1 of both is the
/// shadow map, binding 2 the slot's wind grid (`wind_grid.comp` writes it with the camera's
/// set, the sways of both passes read it). Each frame slot has its own, since the frame in
/// flight still reads its constants and grid while the next frame writes.
pub(crate) struct Globals {
    slots: [Slot; FRAMES_IN_FLIGHT],
    sets: SetPool,
}

/// One frame slot's constants: as the camera sees and as the sun sees.
struct Slot {
    camera: (DescriptorSet, Buffer),
    sun: (DescriptorSet, Buffer),
    /// Read by the sets' binding 2.
    wind_grid: Buffer,
}

impl Globals {
    /// The buffers, their set layout (vertex, fragment and compute stages) and their sets.
    pub fn new(memory: &Arc<Memory>, shadow: &ShadowMap) -> Result<Globals, RenderError> {
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE;
        let kinds = [
            vk::DescriptorType::UNIFORM_BUFFER,
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            vk::DescriptorType::STORAGE_BUFFER,
        ];
        let sets = SetPool::new(memory, stages, &kinds, 2 * FRAMES_IN_FLIGHT as u32)?;
        let constants = |name| -> Result<(DescriptorSet, Buffer), RenderError> {
            let size = std::mem::size_of::<Block>() as u64;
            let usage = vk::BufferUsageFlags::UNIFORM_BUFFER;
            let buffer = memory.buffer(size, usage, MemoryLocation::CpuToGpu, name)?;
            Ok((sets.allocate("vkAllocateDescriptorSets")?, buffer))
        };
        let slots = per_frame(|| {
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
            Ok(Slot {
                camera: constants("globals")?,
                sun: constants("sun globals")?,
                wind_grid: memory.buffer(GRID_BYTES, usage, MemoryLocation::GpuOnly, "wind grid")?,
            })
        })?;
        let globals = Globals { slots, sets };
        globals.bind(shadow);
        Ok(globals)
    }

    /// Points every set at `shadow` (and at its slot's constants and wind grid); no frame
    /// that reads the sets may be in flight.
    pub fn bind(&self, shadow: &ShadowMap) {
        for slot in &self.slots {
            for (set, buffer) in [&slot.camera, &slot.sun] {
                set.write(&[
                    Descriptor::Uniform(buffer),
                    Descriptor::Texture(shadow.image(), shadow.sampler()),
                    Descriptor::Storage(&slot.wind_grid),
                ]);
            }
        }
    }

    /// The set layout, set 0 of every pipeline.
    pub fn layout(&self) -> vk::DescriptorSetLayout {
        self.sets.layout()
    }

    /// The set frame slot `slot`'s surfaces are drawn with, bound at set 0.
    pub fn set(&self, slot: usize) -> vk::DescriptorSet {
        self.slots[slot].camera.0.raw()
    }

    /// The set frame slot `slot`'s shadow map is drawn with.
    pub fn sun_set(&self, slot: usize) -> vk::DescriptorSet {
        self.slots[slot].sun.0.raw()
    }

    /// Writes frame slot `slot`'s constants, with the shadow map's fit `shadow`, the
    /// `wind` and where its grid lies (`WindGrid::prepare`); the slot's last frame must be
    /// finished.
    pub fn write(
        &mut self,
        slot: usize,
        view: &View,
        (sun, a): (&Sun, &Atmosphere),
        shadow: &ShadowFit,
        (wind, wind_grid): (WindBlock, [f32; 4]),
    ) -> Result<(), RenderError> {
        let mut block = Block {
            view_proj: view.view_proj.to_cols_array(),
            camera: view.camera.position.extend(1.0).to_array(),
            sun_dir: sun.direction.extend(0.0).to_array(),
            sun_colour: sun.colour.extend(0.0).to_array(),
            horizon: a.horizon.extend(a.fog_density).to_array(),
            ambient: a.ambient.extend(0.0).to_array(),
            viewport: [view.width as f32, view.height as f32, a.point_size, 0.0],
            inv_view_proj: view.view_proj.inverse().to_cols_array(),
            zenith: a.zenith.extend(a.fog_falloff).to_array(),
            ground_haze: a.ground_haze.extend(0.0).to_array(),
            light_view_proj: shadow.view_proj.to_cols_array(),
            shadow: [a.shadow_strength.clamp(0.0, 1.0), 1.0 / shadow.texels as f32, 0.0, 0.0],
            wind,
            wind_grid,
        };
        let slot = &mut self.slots[slot];
        slot.camera.1.write(bytes_of(&block), "globals")?;
        block.view_proj = block.light_view_proj;
        slot.sun.1.write(bytes_of(&block), "sun globals")
    }
}
