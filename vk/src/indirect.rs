//! A host-visible buffer of the frames' indirect draw commands: one region per
//! frame slot, since the frame in flight still reads its own while the next
//! frame writes. Grown (every region) when a frame has more than its region
//! holds; the old buffer goes to the graveyard, so the frame in flight keeps it.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::commands::FRAMES_IN_FLIGHT;
use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Memory};
use crate::pass::Recording;
use crate::pod::{Pod, slice_bytes};

/// The commands of one draw path.
pub(crate) struct Indirect {
    buffer: Option<Buffer>,
    /// Where the last frame's commands start.
    offset: u64,
    /// The device draws many commands at once and from any first instance.
    multi_draw: bool,
    name: &'static str,
}

impl Indirect {
    /// No buffer until a frame has commands; `name` labels it. `multi_draw`: the device's
    /// `Device::multi_draw`.
    pub const fn new(name: &'static str, multi_draw: bool) -> Indirect {
        Indirect {
            buffer: None,
            offset: 0,
            multi_draw,
            name,
        }
    }

    /// Writes `commands` into frame slot `slot`'s region, growing every region (to a power
    /// of two) when needed. The slot's last frame must be finished.
    pub fn write<T: Pod>(&mut self, memory: &Arc<Memory>, slot: usize, commands: &[T]) -> Result<(), RenderError> {
        let bytes = slice_bytes(commands);
        if bytes.is_empty() {
            return Ok(());
        }
        let frames = FRAMES_IN_FLIGHT as u64;
        if self
            .buffer
            .as_ref()
            .is_none_or(|b| b.size() / frames < bytes.len() as u64)
        {
            let region = (bytes.len() as u64).next_power_of_two().max(1024);
            let usage = vk::BufferUsageFlags::INDIRECT_BUFFER;
            self.buffer = Some(memory.buffer(region * frames, usage, MemoryLocation::CpuToGpu, self.name)?);
        }
        let buffer = self.buffer.as_mut().expect("made above");
        self.offset = buffer.size() / frames * slot as u64;
        buffer.write_at(self.offset, bytes, self.name)
    }

    /// Records `commands`, which the last [`Indirect::write`] put at index `first`, as
    /// indexed draws: one multi-draw where the device has it, else one draw each. Returns
    /// the draw calls.
    pub fn draw_indexed(&self, rec: &Recording<'_>, first: u32, commands: &[vk::DrawIndexedIndirectCommand]) -> u32 {
        self.draw_with(
            rec,
            first,
            commands,
            |d, cmd, buffer, offset, count, stride| {
                // SAFETY: the caller records inside a rendering with a pipeline, mesh and instances
                // bound; the commands lie in the buffer, which lives until the frame is done.
                unsafe { d.cmd_draw_indexed_indirect(cmd, buffer, offset, count, stride) }
            },
            |d, cmd, c| {
                // SAFETY: as above, one command recorded directly.
                unsafe {
                    d.cmd_draw_indexed(
                        cmd,
                        c.index_count,
                        c.instance_count,
                        c.first_index,
                        c.vertex_offset,
                        c.first_instance,
                    )
                }
            },
        )
    }

    /// [`Indirect::draw_indexed`] for non-indexed draws.
    pub fn draw(&self, rec: &Recording<'_>, first: u32, commands: &[vk::DrawIndirectCommand]) -> u32 {
        self.draw_with(
            rec,
            first,
            commands,
            |d, cmd, buffer, offset, count, stride| {
                // SAFETY: the caller records inside a rendering with a pipeline and instances
                // bound; the commands lie in the buffer, which lives until the frame is done.
                unsafe { d.cmd_draw_indirect(cmd, buffer, offset, count, stride) }
            },
            |d, cmd, c| {
                // SAFETY: as above, one command recorded directly.
                unsafe { d.cmd_draw(cmd, c.vertex_count, c.instance_count, c.first_vertex, c.first_instance) }
            },
        )
    }

    /// One `indirect` call over the commands where the device draws many at once (and from
    /// any first instance), else one `direct` call each; returns the draw calls.
    fn draw_with<T>(
        &self,
        rec: &Recording<'_>,
        first: u32,
        commands: &[T],
        indirect: impl Fn(&ash::Device, vk::CommandBuffer, vk::Buffer, u64, u32, u32),
        direct: impl Fn(&ash::Device, vk::CommandBuffer, &T),
    ) -> u32 {
        let Some(buffer) = self.buffer.as_ref().filter(|_| !commands.is_empty()) else {
            return 0;
        };
        if self.multi_draw {
            let stride = std::mem::size_of::<T>() as u32;
            let offset = self.offset + u64::from(first) * u64::from(stride);
            indirect(rec.device, rec.cmd, buffer.raw(), offset, commands.len() as u32, stride);
            return 1;
        }
        commands.iter().for_each(|c| direct(rec.device, rec.cmd, c));
        commands.len() as u32
    }
}
