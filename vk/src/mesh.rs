//! Static meshes: cylinder rings and terrain grids.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::memory::{Buffer, Memory};
use crate::pass::Recording;
use crate::pod::slice_bytes;
use crate::upload::Uploads;

/// A vertex and an index buffer.
pub(crate) struct Mesh {
    vertices: Buffer,
    indices: Buffer,
    /// Indices to draw.
    pub index_count: u32,
}

impl Mesh {
    /// Creates the buffers and queues their contents for upload.
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        vertices: &[f32],
        indices: &[u32],
        name: &str,
    ) -> Result<Mesh, RenderError> {
        let mut buffer = |data: &[u8], usage| {
            let usage = usage | vk::BufferUsageFlags::TRANSFER_DST;
            let buffer = memory.buffer(data.len() as u64, usage, MemoryLocation::GpuOnly, name)?;
            uploads.copy_to_buffer(buffer.raw(), 0, data);
            Ok::<_, RenderError>(buffer)
        };
        Ok(Mesh {
            vertices: buffer(slice_bytes(vertices), vk::BufferUsageFlags::VERTEX_BUFFER)?,
            indices: buffer(slice_bytes(indices), vk::BufferUsageFlags::INDEX_BUFFER)?,
            index_count: indices.len() as u32,
        })
    }

    /// Records: binds the vertices to binding 0 and the indices.
    pub fn bind(&self, rec: &Recording<'_>) {
        // SAFETY: `rec.cmd` is recording; the buffers live until the frame is done.
        unsafe {
            rec.device
                .cmd_bind_vertex_buffers(rec.cmd, 0, &[self.vertices.raw()], &[0]);
            rec.device
                .cmd_bind_index_buffer(rec.cmd, self.indices.raw(), 0, vk::IndexType::UINT32);
        }
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
