//! A batch's per-instance arrays on the GPU: one device-local buffer holding
//! the arrays one after another (structure of arrays), kept in step with the
//! batch by its dirty range.

use std::ops::Range;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use rayon::prelude::*;
use sylva_runtime::extract::{DirtyRange, TreeAnchor};
use sylva_runtime::glam::Vec3;

use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Memory};
use crate::pass::Recording;
use crate::pipeline::Attribute;
use crate::upload::Uploads;

/// Each instance's tree anchor as the shaders read it (`Attribute::HALF4`): the root as an
/// offset from the instance's place `at` and the height, in half floats (a centimetre or two
/// at tens of metres, where a tree's parts are from its root), half the bytes of the anchor.
/// Parts of no tree are all zero.
pub(crate) fn packed_anchors(tree: &[TreeAnchor], at: &[Vec3]) -> Vec<[u16; 4]> {
    let half = |v: f32| half::f16::from_f32(v).to_bits();
    tree.par_iter()
        .zip(at)
        .map(|(t, &p)| match t.height > 0.0 {
            true => {
                let d = t.root - p;
                [half(d.x), half(d.y), half(d.z), half(t.height)]
            }
            false => [0; 4],
        })
        .collect()
}

/// The instance arrays of one batch. Array `k` holds `capacity` elements of
/// `attributes[k]` and starts at `capacity × Σ strides before k`.
pub(crate) struct Instances {
    attributes: &'static [Attribute],
    name: &'static str,
    /// The buffer and the instances it has room for; none until the batch has some, so
    /// an empty batch holds no memory.
    gpu: Option<(Buffer, u32)>,
    len: u32,
}

/// What an update sent up.
pub(crate) struct Changed {
    /// The instances uploaded.
    pub range: Range<usize>,
    /// Everything went up or the batch shrank: bounds are recomputed, not grown.
    pub whole: bool,
    /// The number of instances changed.
    pub resized: bool,
}

impl Instances {
    /// No instances yet; `name` labels the buffer.
    pub const fn new(attributes: &'static [Attribute], name: &'static str) -> Instances {
        Instances {
            attributes,
            name,
            gpu: None,
            len: 0,
        }
    }

    /// Instances on the GPU.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Frees the buffer.
    pub fn clear(&mut self) {
        self.gpu = None;
        self.len = 0;
    }

    /// Brings the buffer in step with a batch of `len` instances whose arrays (one per
    /// attribute, as bytes) changed in `dirty`: a new (larger) buffer gets everything,
    /// an existing one the dirty range.
    pub fn update(
        &mut self,
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        arrays: &[&[u8]],
        len: usize,
        dirty: DirtyRange,
    ) -> Result<Changed, RenderError> {
        let consistent = arrays.len() == self.attributes.len()
            && arrays
                .iter()
                .zip(self.attributes)
                .all(|(a, at)| a.len() == len * at.stride as usize);
        if !consistent {
            return Err(RenderError::BadBatch(format!(
                "{}: arrays disagree with {len} instances",
                self.name
            )));
        }
        let full = self.gpu.as_ref().is_none_or(|(_, capacity)| (*capacity as usize) < len);
        if full {
            // The old buffer goes to the graveyard (the frame in flight may draw from it).
            self.gpu = None;
            if len > 0 {
                self.gpu = Some(self.allocate(memory, len)?);
            }
        }
        let range = if full {
            0..len
        } else {
            (dirty.start as usize).min(len)..(dirty.end as usize).min(len)
        };
        if let Some((buffer, capacity)) = self.gpu.as_ref().filter(|_| !range.is_empty()) {
            for ((k, array), at) in arrays.iter().enumerate().zip(self.attributes) {
                let stride = at.stride as usize;
                let dst = self.offset(*capacity, k) + (range.start * stride) as u64;
                uploads.copy_to_buffer(buffer.raw(), dst, &array[range.start * stride..range.end * stride]);
            }
        }
        let old = std::mem::replace(&mut self.len, len as u32) as usize;
        Ok(Changed {
            whole: full || len < old || range == (0..len),
            resized: len != old,
            range,
        })
    }

    /// Records: binds the arrays to bindings `first..` (nothing while there are none).
    pub fn bind(&self, rec: &Recording<'_>, first: u32) {
        let Some((buffer, capacity)) = self.gpu.as_ref() else {
            return;
        };
        let buffers = vec![buffer.raw(); self.attributes.len()];
        let offsets: Vec<u64> = (0..self.attributes.len()).map(|k| self.offset(*capacity, k)).collect();
        // SAFETY: `rec.cmd` is recording; the buffer lives until the frame is done.
        unsafe { rec.device.cmd_bind_vertex_buffers(rec.cmd, first, &buffers, &offsets) };
    }

    /// A buffer for at least `len` instances (rounded up so growth reallocates rarely).
    fn allocate(&self, memory: &Arc<Memory>, len: usize) -> Result<(Buffer, u32), RenderError> {
        let capacity = len.max(64).next_power_of_two() as u32;
        let size = u64::from(capacity) * self.attributes.iter().map(|a| u64::from(a.stride)).sum::<u64>();
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let buffer = memory.buffer(size, usage, MemoryLocation::GpuOnly, self.name)?;
        Ok((buffer, capacity))
    }

    /// Byte offset of array `k` in a buffer of `capacity` instances.
    fn offset(&self, capacity: u32, k: usize) -> u64 {
        u64::from(capacity) * self.attributes[..k].iter().map(|a| u64::from(a.stride)).sum::<u64>()
    }
}
