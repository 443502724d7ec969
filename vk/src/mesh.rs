//! Static meshes: cylinder rings and terrain grids.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Memory};
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

/// A tube of `sides` sides closed by a dome at each end, `bands` rings from the rim to
/// the pole (0: open). Vertices are (x, y, t, a): the unit normal is x·u + y·v + a·w for the
/// ring plane (u, v) and axis w, the position the point at `t` along the axis plus the
/// normal times the radius there. Domes close a trunk's base and round over the joints
/// where a child leaves its parent at an angle.
pub(crate) fn tube(sides: u32, bands: u32) -> (Vec<f32>, Vec<u32>) {
    let ring = |t: f32, phi: f32, v: &mut Vec<f32>| {
        for k in 0..=sides {
            let (s, c) = (std::f32::consts::TAU * k as f32 / sides as f32).sin_cos();
            let (axial, radial) = phi.sin_cos();
            v.extend_from_slice(&[c * radial, s * radial, t, axial.copysign(t - 0.5)]);
        }
    };
    let mut v = Vec::new();
    let mut i = Vec::new();
    let band = |a: u32, b: u32, i: &mut Vec<u32>| {
        for k in 0..sides {
            i.extend_from_slice(&[a + k, b + k, a + k + 1, a + k + 1, b + k, b + k + 1]);
        }
    };
    ring(0.0, 0.0, &mut v);
    ring(1.0, 0.0, &mut v);
    band(0, sides + 1, &mut i);
    for (t, rim) in [(0.0, 0), (1.0, sides + 1)] {
        let mut previous = rim;
        for b in 1..=bands {
            let next = (v.len() / 4) as u32;
            ring(t, std::f32::consts::FRAC_PI_2 * b as f32 / bands as f32, &mut v);
            band(previous, next, &mut i);
            previous = next;
        }
    }
    (v, i)
}

/// How far a terrain grid's skirt hangs below its border, in cells: deeper than
/// the gap between a border drawn at one level of detail and the same border
/// drawn at a coarser one, on any slope the terrain keeps.
pub(crate) const SKIRT_CELLS: f32 = 8.0;

/// A grid over `samples × samples` samples taking every `step`-th one, with a
/// skirt: vertices are (i, j, drop) with sample coordinates (i, j) and drop 0,
/// then the border's vertices again with drop [`SKIRT_CELLS`], joined to the
/// border by a ring of quads hanging down (what hides cracks between chunks
/// drawn with different steps).
pub(crate) fn grid(samples: u32, step: u32) -> (Vec<f32>, Vec<u32>) {
    let n = (samples - 1) / step + 1;
    let ring = border(n);
    let mut v = Vec::with_capacity(((n * n) as usize + ring.len()) * 3);
    for j in 0..n {
        for i in 0..n {
            v.extend_from_slice(&[(i * step) as f32, (j * step) as f32, 0.0]);
        }
    }
    for &k in &ring {
        v.extend_from_slice(&[v[k as usize * 3], v[k as usize * 3 + 1], SKIRT_CELLS]);
    }
    let mut idx = Vec::with_capacity(((n - 1) * (n - 1) * 6) as usize + ring.len() * 6);
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let a = j * n + i;
            let (b, c, d) = (a + 1, a + n, a + n + 1);
            idx.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    let first_skirt = n * n;
    for k in 0..ring.len() {
        let next = (k + 1) % ring.len();
        let (a, b) = (ring[k], ring[next]);
        let (sa, sb) = (first_skirt + k as u32, first_skirt + next as u32);
        idx.extend_from_slice(&[a, b, sa, b, sb, sa]);
    }
    (v, idx)
}

/// The border vertices of an `n × n` grid (row-major indices) once around, in order.
fn border(n: u32) -> Vec<u32> {
    let bottom = 0..n;
    let right = (1..n).map(|j| j * n + n - 1);
    let top = (0..n - 1).rev().map(|i| (n - 1) * n + i);
    let left = (1..n - 1).rev().map(|j| j * n);
    bottom.chain(right).chain(top).chain(left).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_and_grid_sizes() {
        let (v, i) = tube(8, 0);
        assert_eq!((v.len(), i.len()), (2 * 9 * 4, 8 * 6));
        let (v, i) = tube(8, 2);
        assert_eq!((v.len(), i.len()), (6 * 9 * 4, 5 * 8 * 6));
        // Each vertex's normal is a unit vector and the poles lie on the axis.
        assert!(
            v.chunks(4)
                .all(|p| (p[0] * p[0] + p[1] * p[1] + p[3] * p[3] - 1.0).abs() < 1e-5)
        );
        assert_eq!(v[v.len() - 1], 1.0);
        let (v, i) = grid(5, 2);
        // 3 × 3 surface vertices and a skirt under the 8 on the border.
        assert_eq!((v.len(), i.len()), ((9 + 8) * 3, (2 * 2 + 8) * 6));
        assert_eq!(v[8 * 3..9 * 3], [4.0, 4.0, 0.0]);
        assert_eq!(v[v.len() - 3..], [0.0, 2.0, SKIRT_CELLS]);
        assert!(i.iter().all(|&k| k < 17));
        assert_eq!(border(3), [0, 1, 2, 5, 8, 7, 6, 3]);
    }
}
