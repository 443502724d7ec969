//! Uploads: the frame's data is gathered into one list of copies, written into
//! a host-visible staging ring and copied to device-local buffers and images
//! by the frame's command buffer. Only dirty ranges are gathered.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::gpu_memory::{BLOCK_BYTES, Buffer, Memory, layout_barrier};

/// Staging offsets are aligned for every copy (texel size and `optimalBufferCopyOffsetAlignment` ≤ 16 in practice).
const ALIGN: u64 = 16;

/// A buffer-to-image copy of a whole single-level colour image (2D or 3D).
pub(crate) struct ImageCopy {
    /// The image written.
    pub image: vk::Image,
    /// Its size.
    pub extent: vk::Extent3D,
    /// Where its texels start in the staging ring.
    pub src_offset: u64,
}

/// What one frame uploads.
#[derive(Default)]
pub(crate) struct Uploads {
    data: Vec<u8>,
    copied: u64,
    /// Copies into buffers.
    pub buffers: Vec<(vk::Buffer, vk::BufferCopy)>,
    /// Copies into images.
    pub images: Vec<ImageCopy>,
}

impl Uploads {
    /// Forgets last frame's uploads, keeping the memory unless it was far more than the
    /// frame needed or more than [`KEPT_MOST`] (a first frame of a large scene stages
    /// hundreds of megabytes once: they are in the staging ring by now).
    pub fn clear(&mut self) {
        let room = self.data.capacity();
        if room > KEPT_MOST || oversized(room as u64, self.data.len() as u64) {
            self.data = Vec::with_capacity(MIN_RING_BYTES as usize);
        }
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
/// The copies first wait for every earlier submission's reads and copies of their
/// destinations (a frame in flight still drawing from a buffer this frame rewrites).
pub(crate) fn record_uploads(d: &ash::Device, cmd: vk::CommandBuffer, staging: vk::Buffer, uploads: &Uploads) {
    record_earlier_reads_done(d, cmd);
    // SAFETY: `cmd` is recording; the staging ring and every destination are live, and the
    // barrier above orders the copies after the earlier submissions' use of them.
    unsafe {
        for (dst, region) in &uploads.buffers {
            d.cmd_copy_buffer(cmd, staging, *dst, &[*region]);
        }
    }
    if !uploads.images.is_empty() {
        record_image_copies(d, cmd, staging, &uploads.images);
    }
    if uploads.buffers.is_empty() {
        return;
    }
    let visible = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(
            vk::AccessFlags::VERTEX_ATTRIBUTE_READ | vk::AccessFlags::INDEX_READ | vk::AccessFlags::SHADER_READ,
        );
    let readers = vk::PipelineStageFlags::VERTEX_INPUT
        | vk::PipelineStageFlags::VERTEX_SHADER
        | vk::PipelineStageFlags::COMPUTE_SHADER;
    // SAFETY: `cmd` is recording outside rendering.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            readers,
            vk::DependencyFlags::empty(),
            &[visible],
            &[],
            &[],
        );
    }
}

/// Records: what follows (this frame's copies, and its readback copy into the one
/// readback buffer) waits for earlier submissions' reads of the destinations
/// (write-after-read: an execution dependency is enough) and their copies (write-after-write).
fn record_earlier_reads_done(d: &ash::Device, cmd: vk::CommandBuffer) {
    let readers = vk::PipelineStageFlags::VERTEX_INPUT
        | vk::PipelineStageFlags::VERTEX_SHADER
        | vk::PipelineStageFlags::FRAGMENT_SHADER
        | vk::PipelineStageFlags::COMPUTE_SHADER
        | vk::PipelineStageFlags::TRANSFER;
    let copies = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    // SAFETY: `cmd` is recording outside rendering.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            readers,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[copies],
            &[],
            &[],
        );
    }
}

/// Records: the images made writable (their old contents discarded), filled from the
/// staging ring and made readable by vertex and compute shaders.
fn record_image_copies(d: &ash::Device, cmd: vk::CommandBuffer, staging: vk::Buffer, images: &[ImageCopy]) {
    let shaders = vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
    let to_dst = image_barriers(
        images,
        (vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL),
        (vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE),
    );
    let to_read = image_barriers(
        images,
        (
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        ),
        (vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::SHADER_READ),
    );
    let none = vk::DependencyFlags::empty();
    let transfer = vk::PipelineStageFlags::TRANSFER;
    // SAFETY: `cmd` is recording outside rendering; the staging ring and the images are
    // live, and no submitted work uses them.
    unsafe {
        d.cmd_pipeline_barrier(cmd, shaders, transfer, none, &[], &[], &to_dst);
        for c in images {
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
        d.cmd_pipeline_barrier(cmd, transfer, shaders, none, &[], &[], &to_read);
    }
}

/// One layout transition per image, ordering the `src` accesses before it against the
/// `dst` accesses after it.
fn image_barriers(
    images: &[ImageCopy],
    layouts: (vk::ImageLayout, vk::ImageLayout),
    access: (vk::AccessFlags, vk::AccessFlags),
) -> Vec<vk::ImageMemoryBarrier<'static>> {
    images
        .iter()
        .map(|c| layout_barrier(c.image, vk::ImageAspectFlags::COLOR, layouts, access))
        .collect()
}

/// A host-visible staging buffer, one per frame slot. A slot is reused only after
/// its last frame has finished, so each frame writes its ring from the start; it
/// grows (to the next power of two) when a frame needs more, the old ring going to
/// the graveyard.
pub(crate) struct StagingRing {
    buffer: Buffer,
}

impl StagingRing {
    /// A ring of 1 MiB, enough for most frames.
    pub fn new(memory: &Arc<Memory>) -> Result<StagingRing, RenderError> {
        Ok(StagingRing {
            buffer: ring(memory, MIN_RING_BYTES)?,
        })
    }

    /// Writes the frame's uploads into the ring; the slot's last frame must be finished. A
    /// ring far larger than the frame needs is replaced too, so a first frame's giant ring
    /// does not stay.
    pub fn stage(&mut self, memory: &Arc<Memory>, uploads: &Uploads) -> Result<(), RenderError> {
        let needed = uploads.data.len() as u64;
        if self.buffer.size() < needed || oversized(self.buffer.size(), needed) {
            self.buffer = ring(memory, needed.next_power_of_two().max(MIN_RING_BYTES))?;
        }
        self.buffer.write(&uploads.data, "staging ring")
    }

    /// The ring's bytes.
    pub fn size(&self) -> u64 {
        self.buffer.size()
    }

    /// The ring's buffer, the source of the frame's copies.
    pub fn raw(&self) -> vk::Buffer {
        self.buffer.raw()
    }
}

/// Most upload room kept past its frame. Steady frames stage a few MiB (a streamed world's
/// installs about 4 MiB at most); a first frame stages a whole ring of chunks once, and kept
/// until the next frame, its copy stood beside the staging ring and the GPU's own copy,
/// 200 MiB more at the peak on lavapipe, where device memory is the host's.
const KEPT_MOST: usize = 64 << 20;

/// Bytes of the staging ring before any frame needs more.
const MIN_RING_BYTES: u64 = 1 << 20;

/// Whether staging room of `room` bytes is far more than a frame that needed `needed` calls
/// for: larger than a block of device memory ([`BLOCK_BYTES`], below which the allocator
/// shares its blocks) and over four times the need, so frames that need about as much keep
/// their room.
fn oversized(room: u64, needed: u64) -> bool {
    room > BLOCK_BYTES && room / 4 > needed
}

fn ring(memory: &Arc<Memory>, size: u64) -> Result<Buffer, RenderError> {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC;
    memory.buffer(size, usage, MemoryLocation::CpuToGpu, "staging ring")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_staging_more_than_kept_most_gives_its_room_back_at_once() {
        let mut uploads = Uploads::default();
        uploads.copy_to_buffer(vk::Buffer::null(), 0, &vec![7u8; KEPT_MOST + 1]);
        uploads.clear();
        assert!(uploads.data.capacity() <= MIN_RING_BYTES as usize);
    }

    #[test]
    fn a_giant_frame_of_uploads_keeps_its_room_one_frame_only() {
        let mut uploads = Uploads::default();
        let giant = vec![7u8; 40 << 20];
        uploads.copy_to_buffer(vk::Buffer::null(), 0, &giant);
        uploads.clear();
        assert!(uploads.data.capacity() >= 40 << 20, "kept for a frame like it");
        uploads.copy_to_buffer(vk::Buffer::null(), 0, &giant[..1000]);
        assert_eq!(uploads.staged(), &giant[..1000]);
        uploads.clear();
        assert!(
            uploads.data.capacity() <= MIN_RING_BYTES as usize,
            "given back after a small one"
        );
        // Frames that need about as much as they have keep it.
        for size in [20 << 20, 12 << 20, 20 << 20] {
            uploads.copy_to_buffer(vk::Buffer::null(), 0, &giant[..size]);
            let room = uploads.data.capacity();
            uploads.clear();
            assert_eq!(uploads.data.capacity(), room);
        }
        assert!(!oversized(BLOCK_BYTES, 0) && oversized(BLOCK_BYTES + 1, 0));
    }
}
