//! A host-visible buffer of the frames' indirect draw commands: one region per
//! frame slot, since the frame in flight still reads its own while the next
//! frame writes. Grown (every region) when a frame has more than its region
//! holds; the old buffer goes to the graveyard, so the frame in flight keeps it.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::commands::FRAMES_IN_FLIGHT;
use crate::error::RenderError;
use crate::memory::{Buffer, Memory};
use crate::pod::{Pod, slice_bytes};

/// The commands of one draw path.
pub(crate) struct Indirect {
    buffer: Option<Buffer>,
    /// Where the last frame's commands start.
    offset: u64,
    name: &'static str,
}

impl Indirect {
    /// No buffer until a frame has commands; `name` labels it.
    pub const fn new(name: &'static str) -> Indirect {
        Indirect {
            buffer: None,
            offset: 0,
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

    /// The buffer and where the last frame's commands start in it, once a frame has
    /// written commands.
    pub fn raw(&self) -> Option<(vk::Buffer, u64)> {
        self.buffer.as_ref().map(|b| (b.raw(), self.offset))
    }
}
