//! One command buffer with its pool and fence: record, submit, and wait only
//! when the buffer (or what it used) is needed again. The renderer keeps
//! [`FRAMES_IN_FLIGHT`] of them, as the window keeps its blits; the grass
//! probe submits and waits at once.

use std::sync::Arc;
use std::time::Instant;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;

/// Frames the CPU may have submitted that the GPU has not finished: the CPU prepares
/// frame N + 1 while the GPU draws frame N. Everything a frame writes from the host
/// comes in this many copies, used in turn.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// `FRAMES_IN_FLIGHT` values made by `make`, one per frame slot.
pub(crate) fn per_frame<T>(
    mut make: impl FnMut() -> Result<T, RenderError>,
) -> Result<[T; FRAMES_IN_FLIGHT], RenderError> {
    let made = (0..FRAMES_IN_FLIGHT).map(|_| make()).collect::<Result<Vec<_>, _>>()?;
    Ok(made.try_into().ok().expect("one per frame slot"))
}

/// A resettable command buffer and the fence its submissions signal. The
/// buffer is freed with its pool.
pub(crate) struct Commands {
    cmd: vk::CommandBuffer,
    fence: Owned<vk::Fence>,
    pool: Owned<vk::CommandPool>,
    /// A submission signals the fence and nobody has reset it since.
    pending: bool,
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
            pending: false,
        })
    }

    /// Waits until the last submission has finished (without resetting the fence, so
    /// a shared borrow may wait); returns at once when nothing was submitted.
    pub fn wait(&self) -> Result<(), RenderError> {
        if !self.pending {
            return Ok(());
        }
        // SAFETY: the fence belongs to this device and a submission signals it.
        unsafe {
            self.pool
                .device()
                .raw
                .wait_for_fences(&[self.fence.raw()], true, u64::MAX)
        }
        .map_err(|e| RenderError::vk("vkWaitForFences", e))
    }

    /// Waits until the last submission has finished and resets the fence, so the buffer
    /// and what it used may be reused; returns the milliseconds spent waiting.
    pub fn finish(&mut self) -> Result<f64, RenderError> {
        let t0 = Instant::now();
        self.wait()?;
        if self.pending {
            // SAFETY: the fence is signalled (waited on above) and no submission uses it.
            unsafe { self.pool.device().raw.reset_fences(&[self.fence.raw()]) }
                .map_err(|e| RenderError::vk("vkResetFences", e))?;
            self.pending = false;
        }
        Ok(t0.elapsed().as_secs_f64() * 1e3)
    }

    /// Starts recording a one-time submission (after the last one has finished) and
    /// returns the command buffer.
    pub fn begin(&mut self) -> Result<vk::CommandBuffer, RenderError> {
        self.finish()?;
        let d = &self.pool.device().raw;
        let info = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `finish` waited for the last submission, so the buffer is not pending; its
        // pool allows resetting it alone.
        unsafe {
            d.reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .map_err(|e| RenderError::vk("vkResetCommandBuffer", e))?;
            d.begin_command_buffer(self.cmd, &info)
                .map_err(|e| RenderError::vk("vkBeginCommandBuffer", e))
        }?;
        Ok(self.cmd)
    }

    /// Ends recording and submits with the semaphores of `sync` (its command buffers are
    /// ignored), without waiting: the fence signals when the GPU has finished.
    pub fn submit(&mut self, sync: vk::SubmitInfo<'_>) -> Result<(), RenderError> {
        let device = self.pool.device();
        let d = &device.raw;
        let cmds = [self.cmd];
        // SAFETY: `begin` started the recording and left the fence unsignalled; the owners
        // keep every handle the commands use alive until the fence has signalled (frame
        // resources through the graveyard, see `gpu_memory.rs`).
        unsafe {
            d.end_command_buffer(self.cmd)
                .map_err(|e| RenderError::vk("vkEndCommandBuffer", e))?;
            d.queue_submit(device.queue, &[sync.command_buffers(&cmds)], self.fence.raw())
                .map_err(|e| RenderError::vk("vkQueueSubmit", e))?;
        }
        self.pending = true;
        Ok(())
    }

    /// Submits like [`Commands::submit`] and waits until the GPU has finished.
    pub fn submit_and_wait(&mut self, sync: vk::SubmitInfo<'_>) -> Result<(), RenderError> {
        self.submit(sync)?;
        self.finish().map(|_| ())
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
