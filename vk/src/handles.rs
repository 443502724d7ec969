//! Vulkan objects that destroy themselves: a guard owns one handle and keeps
//! the device it was made on alive, so a half-built path drops what it made.

use std::sync::Arc;

use ash::prelude::VkResult;
use ash::vk;

use crate::device::Device;
use crate::error::RenderError;

/// A device-level Vulkan handle and how to destroy it.
pub(crate) trait Handle: Copy {
    /// Destroys the object.
    ///
    /// # Safety
    ///
    /// `self` was created on `device`, is destroyed only this once, and the GPU is done with it.
    unsafe fn destroy(self, device: &ash::Device);
}

macro_rules! handles {
    ($($ty:ident: $destroy:ident),* $(,)?) => {$(
        impl Handle for vk::$ty {
            unsafe fn destroy(self, device: &ash::Device) {
                // SAFETY: the caller keeps `Handle::destroy`'s contract.
                unsafe { device.$destroy(self, None) }
            }
        }
    )*};
}

handles!(
    Buffer: destroy_buffer,
    Image: destroy_image,
    ImageView: destroy_image_view,
    Sampler: destroy_sampler,
    DescriptorSetLayout: destroy_descriptor_set_layout,
    DescriptorPool: destroy_descriptor_pool,
    PipelineLayout: destroy_pipeline_layout,
    Pipeline: destroy_pipeline,
    ShaderModule: destroy_shader_module,
    CommandPool: destroy_command_pool,
    Fence: destroy_fence,
    Semaphore: destroy_semaphore,
);

/// One Vulkan object and the device it was made on; Drop destroys it. Owners
/// drop a guard only once the GPU is done with it: buffers, images and
/// descriptor sets go through the graveyard (`gpu_memory::Deferred`, freed after
/// the fences of the frames that may use them); the rest live until the
/// renderer (or window) has waited for the device.
pub(crate) struct Owned<H: Handle> {
    raw: H,
    device: Arc<Device>,
}

impl<H: Handle> Owned<H> {
    /// Owns what the `vkCreate*` call named `call` returned.
    ///
    /// # Safety
    ///
    /// `created` comes from a create call on `device`, and nothing else destroys the object.
    pub unsafe fn new(device: &Arc<Device>, call: &'static str, created: VkResult<H>) -> Result<Owned<H>, RenderError> {
        let raw = created.map_err(|e| RenderError::vk(call, e))?;
        Ok(Owned {
            raw,
            device: Arc::clone(device),
        })
    }

    /// The handle, for recording and for create infos.
    pub fn raw(&self) -> H {
        self.raw
    }

    /// The device the object was made on.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }
}

impl<H: Handle> Drop for Owned<H> {
    fn drop(&mut self) {
        // SAFETY: `new`'s contract makes this the one destruction of an object of this
        // device, which `self.device` keeps alive; owners drop guards only once the GPU is
        // done with them (see the type's documentation).
        unsafe { self.raw.destroy(&self.device.raw) }
    }
}
