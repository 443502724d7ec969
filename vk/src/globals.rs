//! The per-frame constants every shader reads at set 0: camera (and its
//! inverse view-projection, for the sky's rays), sun, sky, fog and viewport, in one host-visible uniform buffer.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::Sun;

use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::{Atmosphere, View};
use crate::memory::{Buffer, Memory};
use crate::pod::{Pod, bytes_of};

/// The `Globals` block of `shaders/globals.glsl` (std140). New fields go at the
/// end: a shader declaring an older prefix of the block still reads it right.
#[repr(C)]
#[derive(Clone, Copy)]
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
}

// SAFETY: repr(C) of 64- and 16-byte arrays of `f32`: no padding.
unsafe impl Pod for Block {}

/// The uniform buffer and the set pointing at it.
pub(crate) struct Globals {
    set: DescriptorSet,
    buffer: Buffer,
    sets: SetPool,
}

impl Globals {
    /// The buffer, its set layout (vertex and fragment stages) and its set.
    pub fn new(memory: &Arc<Memory>) -> Result<Globals, RenderError> {
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let sets = SetPool::new(memory.device(), stages, &[vk::DescriptorType::UNIFORM_BUFFER], 1)?;
        let size = std::mem::size_of::<Block>() as u64;
        let usage = vk::BufferUsageFlags::UNIFORM_BUFFER;
        let buffer = memory.buffer(size, usage, MemoryLocation::CpuToGpu, "globals")?;
        let set = sets.allocate("vkAllocateDescriptorSets")?;
        set.write(&[Descriptor::Uniform(&buffer)]);
        Ok(Globals { set, buffer, sets })
    }

    /// The set layout, set 0 of every pipeline.
    pub fn layout(&self) -> vk::DescriptorSetLayout {
        self.sets.layout()
    }

    /// The set, bound at set 0.
    pub fn set(&self) -> vk::DescriptorSet {
        self.set.raw()
    }

    /// Writes this frame's constants; the previous frame must be finished.
    pub fn write(&mut self, view: &View, sun: &Sun, a: &Atmosphere) -> Result<(), RenderError> {
        let block = Block {
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
        };
        self.buffer.write(bytes_of(&block), "globals")
    }
}
