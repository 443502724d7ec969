//! Uploads: the frame's data is gathered into one list of copies, written into
//! a host-visible staging ring and copied to device-local buffers and images
//! by the frame's command buffer. Only dirty ranges are gathered.

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::memory::{Buffer, Memory, layout_barrier};

/// Staging offsets are aligned for every copy (texel size and `optimalBufferCopyOffsetAlignment` ≤ 16 in practice).
const ALIGN: u64 = 16;

/// A buffer-to-image copy of a whole single-level colour image (2D or 3D).
pub(crate) struct ImageCopy {
    pub image: vk::Image,
    pub extent: vk::Extent3D,
    pub src_offset: u64,
}

/// What one frame uploads.
#[derive(Default)]
pub(crate) struct Uploads {
    data: Vec<u8>,
    copied: u64,
    pub buffers: Vec<(vk::Buffer, vk::BufferCopy)>,
    pub images: Vec<ImageCopy>,
}

impl Uploads {
    /// Forgets last frame's uploads, keeping the memory.
    pub fn clear(&mut self) {
        self.data.clear();
        self.copied = 0;
        self.buffers.clear();
        self.images.clear();
    }

    /// Bytes copied to the GPU this frame (without alignment padding).
    pub fn bytes(&self) -> u64 {
        self.copied
    }

    /// The staged bytes: every copy's source at its offset.
    pub fn staged(&self) -> &[u8] {
        &self.data
    }

    /// Appends `data` and returns its offset in the staging ring.
    pub fn push(&mut self, data: &[u8]) -> u64 {
        let offset = (self.data.len() as u64).next_multiple_of(ALIGN);
        self.data.resize(offset as usize, 0);
        self.data.extend_from_slice(data);
        self.copied += data.len() as u64;
        offset
    }

    /// Copies `data` to `dst` at `dst_offset`.
    pub fn copy_to_buffer(&mut self, dst: vk::Buffer, dst_offset: u64, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let src_offset = self.push(data);
        self.buffers.push((
            dst,
            vk::BufferCopy {
                src_offset,
                dst_offset,
                size: data.len() as u64,
            },
        ));
    }

    /// Copies `data` (tightly packed texels) to the whole of `image`.
    pub fn copy_to_image(&mut self, image: vk::Image, extent: impl Into<vk::Extent3D>, data: &[u8]) {
        let src_offset = self.push(data);
        self.images.push(ImageCopy {
            image,
            extent: extent.into(),
            src_offset,
        });
    }
}

/// Records the frame's copies from the staging ring and the barriers that make
/// them visible to vertex input, vertex shaders and compute shaders (the grass probe).
pub(crate) fn record_uploads(d: &ash::Device, cmd: vk::CommandBuffer, staging: vk::Buffer, uploads: &Uploads) {
    let barrier =
        |image, old, new, src, dst| layout_barrier(image, vk::ImageAspectFlags::COLOR, (old, new), (src, dst));
    // SAFETY: `cmd` is recording; every buffer and image is live and idle.
    unsafe {
        for (dst, region) in &uploads.buffers {
            d.cmd_copy_buffer(cmd, staging, *dst, &[*region]);
        }
        if !uploads.images.is_empty() {
            let to_dst: Vec<_> = uploads
                .images
                .iter()
                .map(|c| {
                    barrier(
                        c.image,
                        vk::ImageLayout::UNDEFINED,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        vk::AccessFlags::empty(),
                        vk::AccessFlags::TRANSFER_WRITE,
                    )
                })
                .collect();
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_dst,
            );
            for c in &uploads.images {
                let region = vk::BufferImageCopy::default()
                    .buffer_offset(c.src_offset)
                    .image_subresource(
                        vk::ImageSubresourceLayers::default()
                            .aspect_mask(vk::ImageAspectFlags::COLOR)
                            .layer_count(1),
                    )
                    .image_extent(c.extent);
                d.cmd_copy_buffer_to_image(cmd, staging, c.image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]);
            }
            let to_read: Vec<_> = uploads
                .images
                .iter()
                .map(|c| {
                    barrier(
                        c.image,
                        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                        vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                        vk::AccessFlags::TRANSFER_WRITE,
                        vk::AccessFlags::SHADER_READ,
                    )
                })
                .collect();
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &to_read,
            );
        }
        if !uploads.buffers.is_empty() {
            let visible = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(
                    vk::AccessFlags::VERTEX_ATTRIBUTE_READ | vk::AccessFlags::INDEX_READ | vk::AccessFlags::SHADER_READ,
                );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::VERTEX_INPUT
                    | vk::PipelineStageFlags::VERTEX_SHADER
                    | vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[visible],
                &[],
                &[],
            );
        }
    }
}

/// The host-visible staging buffer. With one frame in flight the whole ring is
/// free again when a frame starts, so each frame writes from its start; it
/// grows (to the next power of two) when a frame needs more.
#[derive(Default)]
pub(crate) struct StagingRing {
    buffer: Option<Buffer>,
}

impl StagingRing {
    /// Writes the frame's uploads into the ring; the previous frame must be finished.
    pub fn stage(&mut self, memory: &mut Memory, device: &ash::Device, uploads: &Uploads) -> Result<(), RenderError> {
        let needed = uploads.data.len() as u64;
        if needed == 0 {
            return Ok(());
        }
        if self.buffer.as_ref().is_none_or(|b| b.size < needed) {
            if let Some(old) = self.buffer.take() {
                memory.free_buffer(device, old);
            }
            let size = needed.next_power_of_two().max(1 << 20);
            let buffer = memory.buffer(
                device,
                size,
                vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::CpuToGpu,
                "staging ring",
            )?;
            self.buffer = Some(buffer);
        }
        let buffer = self.buffer.as_mut().expect("ring allocated above");
        let mapped = buffer
            .allocation
            .mapped_slice_mut()
            .ok_or_else(|| RenderError::Memory("staging ring is not host-visible".into()))?;
        mapped[..uploads.data.len()].copy_from_slice(&uploads.data);
        Ok(())
    }

    /// The ring's buffer (null before the first upload).
    pub fn raw(&self) -> vk::Buffer {
        self.buffer.as_ref().map_or(vk::Buffer::null(), |b| b.raw)
    }

    /// Frees the ring.
    pub fn destroy(&mut self, memory: &mut Memory, device: &ash::Device) {
        if let Some(b) = self.buffer.take() {
            memory.free_buffer(device, b);
        }
    }
}

/// A device-local buffer holding structure-of-arrays instance data: array `k`
/// of `capacity` elements of `strides[k]` bytes starts at `offset(k)`.
pub(crate) struct SoaBuffer {
    pub buffer: Buffer,
    pub capacity: u32,
    strides: &'static [u64],
}

impl SoaBuffer {
    /// A buffer for at least `len` instances (rounded up so growth reallocates rarely).
    pub fn new(
        memory: &mut Memory,
        device: &ash::Device,
        len: usize,
        strides: &'static [u64],
        name: &str,
    ) -> Result<SoaBuffer, RenderError> {
        let capacity = (len.max(64).next_power_of_two()) as u32;
        let size = u64::from(capacity) * strides.iter().sum::<u64>();
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let buffer = memory.buffer(device, size, usage, MemoryLocation::GpuOnly, name)?;
        Ok(SoaBuffer {
            buffer,
            capacity,
            strides,
        })
    }

    /// Byte offset of array `k`.
    pub fn offset(&self, k: usize) -> u64 {
        u64::from(self.capacity) * self.strides[..k].iter().sum::<u64>()
    }

    /// Byte offsets of every array, for binding them as vertex buffers.
    pub fn offsets(&self) -> Vec<u64> {
        (0..self.strides.len()).map(|k| self.offset(k)).collect()
    }

    /// Queues elements `start..` of array `k` (given as bytes of the whole array's `range`).
    pub fn upload(&self, uploads: &mut Uploads, k: usize, start: u32, data: &[u8]) {
        let dst = self.offset(k) + u64::from(start) * self.strides[k];
        uploads.copy_to_buffer(self.buffer.raw, dst, data);
    }
}
