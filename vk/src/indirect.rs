//! A host-visible buffer of one frame's indirect draw commands, grown when a
//! frame has more than it holds. The previous frame has finished when a pass
//! prepares the next, so it is rewritten in place.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::memory::{Buffer, Memory};
use crate::pod::{Pod, slice_bytes};

/// The commands of one draw path.
pub(crate) struct Indirect {
    buffer: Option<Buffer>,
    name: &'static str,
}

impl Indirect {
    /// No buffer until a frame has commands; `name` labels it.
    pub const fn new(name: &'static str) -> Indirect {
        Indirect { buffer: None, name }
    }

    /// Writes `commands` from the buffer's start, growing it (to a power of two) when needed.
    pub fn write<T: Pod>(&mut self, memory: &Arc<Memory>, commands: &[T]) -> Result<(), RenderError> {
        let bytes = slice_bytes(commands);
        if bytes.is_empty() {
            return Ok(());
        }
        if self.buffer.as_ref().is_none_or(|b| b.size() < bytes.len() as u64) {
            self.buffer = None;
            let size = (bytes.len() as u64).next_power_of_two().max(1024);
            let usage = vk::BufferUsageFlags::INDIRECT_BUFFER;
            self.buffer = Some(memory.buffer(size, usage, MemoryLocation::CpuToGpu, self.name)?);
        }
        self.buffer.as_mut().expect("made above").write(bytes, self.name)
    }

    /// The buffer, once a frame has written commands.
    pub fn raw(&self) -> Option<vk::Buffer> {
        self.buffer.as_ref().map(Buffer::raw)
    }
}
