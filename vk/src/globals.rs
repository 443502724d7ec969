//! The per-frame constants every shader reads at set 0: camera (and its
//! inverse view-projection, for the sky's rays), sun (and its view-projection,
//! for shadows), sky, fog and viewport, in a host-visible uniform buffer; and
//! the shadow map beside them.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::Sun;
use sylva_runtime::glam::Mat4;

use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::{Atmosphere, View};
use crate::memory::{Buffer, Memory};
use crate::pod::{Pod, bytes_of};
use crate::shadow::{SHADOW_TEXELS, ShadowMap};

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
    light_view_proj: [f32; 16],
    shadow: [f32; 4],
}

// SAFETY: repr(C) of 64- and 16-byte arrays of `f32`: no padding.
unsafe impl Pod for Block {}

/// The frame's constants twice: as the camera sees (the surfaces' set) and as the sun
/// sees (the shadow map's set: the same block with the sun's view-projection, so the
/// vertex shaders that place geometry place it for the map). Binding 1 of both is the
/// shadow map.
pub(crate) struct Globals {
    camera: (DescriptorSet, Buffer),
    sun: (DescriptorSet, Buffer),
    sets: SetPool,
}

impl Globals {
    /// The buffers, their set layout (vertex and fragment stages) and their sets.
    pub fn new(memory: &Arc<Memory>, shadow: &ShadowMap) -> Result<Globals, RenderError> {
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let kinds = [
            vk::DescriptorType::UNIFORM_BUFFER,
            vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        ];
        let sets = SetPool::new(memory.device(), stages, &kinds, 2)?;
        let mut made = Vec::new();
        for name in ["globals", "sun globals"] {
            let size = std::mem::size_of::<Block>() as u64;
            let buffer = memory.buffer(
                size,
                vk::BufferUsageFlags::UNIFORM_BUFFER,
                MemoryLocation::CpuToGpu,
                name,
            )?;
            let set = sets.allocate("vkAllocateDescriptorSets")?;
            set.write(&[
                Descriptor::Uniform(&buffer),
                Descriptor::Texture(shadow.image(), shadow.sampler()),
            ]);
            made.push((set, buffer));
        }
        let sun = made.pop().expect("two made");
        let camera = made.pop().expect("two made");
        Ok(Globals { camera, sun, sets })
    }

    /// The set layout, set 0 of every pipeline.
    pub fn layout(&self) -> vk::DescriptorSetLayout {
        self.sets.layout()
    }

    /// The set the surfaces are drawn with, bound at set 0.
    pub fn set(&self) -> vk::DescriptorSet {
        self.camera.0.raw()
    }

    /// The set the shadow map is drawn with.
    pub fn sun_set(&self) -> vk::DescriptorSet {
        self.sun.0.raw()
    }

    /// Writes this frame's constants, with the sun's view-projection `light`; the previous
    /// frame must be finished.
    pub fn write(&mut self, view: &View, sun: &Sun, a: &Atmosphere, light: Mat4) -> Result<(), RenderError> {
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
            light_view_proj: light.to_cols_array(),
            shadow: [a.shadow_strength.clamp(0.0, 1.0), 1.0 / SHADOW_TEXELS as f32, 0.0, 0.0],
        };
        self.camera.1.write(bytes_of(&block), "globals")?;
        block.view_proj = block.light_view_proj;
        self.sun.1.write(bytes_of(&block), "sun globals")
    }
}
