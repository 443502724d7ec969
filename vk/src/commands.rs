//! One command buffer with its pool and fence: record, submit, wait. The
//! renderer, the grass probe and the window's blit each record one submission
//! at a time this way.

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;

/// A resettable command buffer and the fence its submissions signal. The
/// buffer is freed with its pool.
pub(crate) struct Commands {
    cmd: vk::CommandBuffer,
    fence: Owned<vk::Fence>,
    pool: Owned<vk::CommandPool>,
}

impl Commands {
    /// A pool on the device's queue family with one primary command buffer.
    pub fn new(device: &Arc<Device>) -> Result<Commands, RenderError> {
        let d = &device.raw;
        let info = vk::CommandPoolCreateInfo::default()
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
            .queue_family_index(device.queue_family);
        // SAFETY: valid create info on a live device; the guard is the pool's one owner.
        let pool = unsafe { Owned::new(device, "vkCreateCommandPool", d.create_command_pool(&info, None)) }?;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool.raw())
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool is live; the buffer is freed with it.
        let cmd = unsafe { d.allocate_command_buffers(&info) }
            .map_err(|e| RenderError::vk("vkAllocateCommandBuffers", e))?[0];
        Ok(Commands {
            cmd,
            fence: fence(device)?,
            pool,
        })
    }

    /// Starts recording a one-time submission and returns the command buffer.
    pub fn begin(&self) -> Result<vk::CommandBuffer, RenderError> {
        let d = &self.pool.device().raw;
        let info = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `submit` waits for every submission, so the buffer is not pending; its pool
        // allows resetting it alone.
        unsafe {
            d.reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .map_err(|e| RenderError::vk("vkResetCommandBuffer", e))?;
            d.begin_command_buffer(self.cmd, &info)
                .map_err(|e| RenderError::vk("vkBeginCommandBuffer", e))
        }?;
        Ok(self.cmd)
    }

    /// Ends recording, submits with the semaphores of `sync` (its command buffers are
    /// ignored) and waits until the GPU has finished.
    pub fn submit(&self, sync: vk::SubmitInfo<'_>) -> Result<(), RenderError> {
        let device = self.pool.device();
        let d = &device.raw;
        let cmds = [self.cmd];
        let fences = [self.fence.raw()];
        // SAFETY: `begin` started the recording; the fence is unsignalled (reset after every
        // wait) and every handle the commands use lives until the wait returns.
        unsafe {
            d.end_command_buffer(self.cmd)
                .map_err(|e| RenderError::vk("vkEndCommandBuffer", e))?;
            d.queue_submit(device.queue, &[sync.command_buffers(&cmds)], fences[0])
                .map_err(|e| RenderError::vk("vkQueueSubmit", e))?;
            d.wait_for_fences(&fences, true, u64::MAX)
                .map_err(|e| RenderError::vk("vkWaitForFences", e))?;
            d.reset_fences(&fences).map_err(|e| RenderError::vk("vkResetFences", e))
        }
    }
}

/// An unsignalled fence.
fn fence(device: &Arc<Device>) -> Result<Owned<vk::Fence>, RenderError> {
    let info = vk::FenceCreateInfo::default();
    // SAFETY: valid create info on a live device; the guard is the fence's one owner.
    unsafe { Owned::new(device, "vkCreateFence", device.raw.create_fence(&info, None)) }
}

/// A binary semaphore.
pub(crate) fn semaphore(device: &Arc<Device>) -> Result<Owned<vk::Semaphore>, RenderError> {
    let info = vk::SemaphoreCreateInfo::default();
    // SAFETY: valid create info on a live device; the guard is the semaphore's one owner.
    unsafe { Owned::new(device, "vkCreateSemaphore", device.raw.create_semaphore(&info, None)) }
}
