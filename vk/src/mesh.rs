//! Static meshes: cylinder rings and terrain grids.

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::memory::{Buffer, Memory};
use crate::pod::slice_bytes;
use crate::upload::Uploads;

/// A vertex and an index buffer.
pub(crate) struct Mesh {
    pub vertices: Buffer,
    pub indices: Buffer,
    pub index_count: u32,
}

impl Mesh {
    /// Creates the buffers and queues their contents for upload.
    pub fn new(
        memory: &mut Memory,
        device: &ash::Device,
        uploads: &mut Uploads,
        vertices: &[u8],
        indices: &[u32],
        name: &str,
    ) -> Result<Mesh, RenderError> {
        let dst = vk::BufferUsageFlags::TRANSFER_DST;
        let v = memory.buffer(
            device,
            vertices.len() as u64,
            vk::BufferUsageFlags::VERTEX_BUFFER | dst,
            MemoryLocation::GpuOnly,
            name,
        )?;
        let i = match memory.buffer(
            device,
            std::mem::size_of_val(indices) as u64,
            vk::BufferUsageFlags::INDEX_BUFFER | dst,
            MemoryLocation::GpuOnly,
            name,
        ) {
            Ok(i) => i,
            Err(e) => {
                memory.free_buffer(device, v);
                return Err(e);
            }
        };
        uploads.copy_to_buffer(v.raw, 0, vertices);
        uploads.copy_to_buffer(i.raw, 0, slice_bytes(indices));
        Ok(Mesh {
            vertices: v,
            indices: i,
            index_count: indices.len() as u32,
        })
    }

    /// Records: binds the vertices to binding 0 and the indices.
    pub fn bind(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: `cmd` is recording; the buffers live until the frame is done.
        unsafe {
            device.cmd_bind_vertex_buffers(cmd, 0, &[self.vertices.raw], &[0]);
            device.cmd_bind_index_buffer(cmd, self.indices.raw, 0, vk::IndexType::UINT32);
        }
    }

    /// Frees both buffers.
    pub fn destroy(self, memory: &mut Memory, device: &ash::Device) {
        memory.free_buffer(device, self.vertices);
        memory.free_buffer(device, self.indices);
    }
}

/// An open tube of `sides` quads: vertices (cos θ, sin θ, t) with t = 0 at the
/// start ring and 1 at the end ring.
pub(crate) fn ring(sides: u32) -> (Vec<f32>, Vec<u32>) {
    let mut v = Vec::with_capacity((sides as usize + 1) * 6);
    for k in 0..=sides {
        let a = std::f32::consts::TAU * k as f32 / sides as f32;
        let (s, c) = a.sin_cos();
        v.extend_from_slice(&[c, s, 0.0, c, s, 1.0]);
    }
    let mut i = Vec::with_capacity(sides as usize * 6);
    for k in 0..sides {
        let (a0, a1, b0, b1) = (2 * k, 2 * k + 1, 2 * k + 2, 2 * k + 3);
        i.extend_from_slice(&[a0, b0, a1, a1, b0, b1]);
    }
    (v, i)
}

/// A grid over `samples × samples` samples taking every `step`-th one:
/// vertices are sample coordinates (i, j).
pub(crate) fn grid(samples: u32, step: u32) -> (Vec<f32>, Vec<u32>) {
    let n = (samples - 1) / step + 1;
    let mut v = Vec::with_capacity((n * n * 2) as usize);
    for j in 0..n {
        for i in 0..n {
            v.extend_from_slice(&[(i * step) as f32, (j * step) as f32]);
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
    fn ring_and_grid_sizes() {
        let (v, i) = ring(8);
        assert_eq!((v.len(), i.len()), (9 * 6, 8 * 6));
        let (v, i) = grid(5, 2);
        assert_eq!((v.len(), i.len()), (3 * 3 * 2, 2 * 2 * 6));
        assert_eq!(v[v.len() - 2..], [4.0, 4.0]);
        assert!(i.iter().all(|&k| k < 9));
    }
}
