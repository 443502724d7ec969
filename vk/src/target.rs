//! The headless render target: a colour and a depth image, and a host-visible
//! buffer the colour image is copied into after every frame. Where the device
//! multisamples, rendering goes to a multisampled colour image (and depth) that
//! is resolved into the colour image as rendering ends.

use std::path::Path;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Image, Memory, layout_barrier};

/// Colour format: 8-bit sRGB, so the read-back bytes are what a PNG stores.
pub const COLOUR_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;
/// Formats of the impostor atlases: albedo with coverage (sRGB, so dark bark keeps its
/// steps), and normals packed into [0, 1].
pub const ATLAS_FORMATS: [vk::Format; 2] = [vk::Format::R8G8B8A8_SRGB, vk::Format::R8G8B8A8_UNORM];
/// Depth format (mandatory for depth attachments).
pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// Offscreen colour + depth with readback.
pub(crate) struct Target {
    /// Size in pixels.
    pub extent: vk::Extent2D,
    /// The colour attachment, or the image the multisampled one resolves into.
    pub colour: Image,
    /// The multisampled colour attachment, where the device multisamples.
    multisampled: Option<Image>,
    /// The depth attachment (multisampled like the colour).
    pub depth: Image,
    /// Where the colour image lands after each frame (RGBA8, tightly packed rows).
    pub readback: Buffer,
}

impl Target {
    /// Creates the images and readback buffer.
    pub fn new(memory: &Arc<Memory>, extent: vk::Extent2D) -> Result<Target, RenderError> {
        let colour = memory.image(
            extent,
            COLOUR_FORMAT,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
            vk::ImageAspectFlags::COLOR,
            "colour target",
        )?;
        let samples = memory.device().samples;
        let multisampled = (samples != vk::SampleCountFlags::TYPE_1)
            .then(|| {
                memory.multisampled(
                    extent,
                    COLOUR_FORMAT,
                    vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSIENT_ATTACHMENT,
                    vk::ImageAspectFlags::COLOR,
                    samples,
                    "multisampled colour target",
                )
            })
            .transpose()?;
        let depth = memory.multisampled(
            extent,
            DEPTH_FORMAT,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
            samples,
            "depth target",
        )?;
        let size = u64::from(extent.width) * u64::from(extent.height) * 4;
        let readback = memory.buffer(
            size,
            vk::BufferUsageFlags::TRANSFER_DST,
            MemoryLocation::GpuToCpu,
            "readback",
        )?;
        Ok(Target {
            extent,
            colour,
            multisampled,
            depth,
            readback,
        })
    }

    /// Records: attachments into attachment layouts, then rendering begins with the colour
    /// cleared to `clear` and depth to 1 over the whole target (viewport and scissor set).
    pub fn begin(&self, device: &ash::Device, cmd: vk::CommandBuffer, clear: [f32; 4]) {
        self.record_attachment_layouts(device, cmd);
        let clear = vk::ClearValue {
            color: vk::ClearColorValue { float32: clear },
        };
        let colour = [match &self.multisampled {
            Some(ms) => vk::RenderingAttachmentInfo::default()
                .image_view(ms.view())
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .resolve_mode(vk::ResolveModeFlags::AVERAGE)
                .resolve_image_view(self.colour.view())
                .resolve_image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .clear_value(clear),
            None => vk::RenderingAttachmentInfo::default()
                .image_view(self.colour.view())
                .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .clear_value(clear),
        }];
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.depth.view())
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::DONT_CARE)
            .clear_value(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 },
            });
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: self.extent,
        };
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: self.extent.width as f32,
            height: self.extent.height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        let info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .color_attachments(&colour)
            .depth_attachment(&depth);
        // SAFETY: `cmd` is recording outside rendering; the views are in the layouts
        // `record_attachment_layouts` left them in.
        unsafe {
            device.cmd_begin_rendering(cmd, &info);
            device.cmd_set_viewport(cmd, 0, &[viewport]);
            device.cmd_set_scissor(cmd, 0, &[area]);
        }
    }

    /// Records: attachments into attachment layouts (contents discarded; they are cleared).
    fn record_attachment_layouts(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        let mut barriers = vec![
            layout_barrier(
                self.colour.raw(),
                vk::ImageAspectFlags::COLOR,
                (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
                (vk::AccessFlags::TRANSFER_READ, vk::AccessFlags::COLOR_ATTACHMENT_WRITE),
            ),
            layout_barrier(
                self.depth.raw(),
                vk::ImageAspectFlags::DEPTH,
                (vk::ImageLayout::UNDEFINED, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
                (
                    vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
                    vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
                ),
            ),
        ];
        barriers.extend(self.multisampled.as_ref().map(|ms| {
            layout_barrier(
                ms.raw(),
                vk::ImageAspectFlags::COLOR,
                (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
                (
                    vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
                    vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
                ),
            )
        }));
        // SAFETY: `cmd` is recording; the images belong to this device.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER
                    | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS
                    | vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
                vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &barriers,
            );
        }
    }

    /// Records: rendering ends and the colour image is copied into the readback buffer,
    /// visible to the host.
    pub fn end(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        let to_transfer = layout_barrier(
            self.colour.raw(),
            vk::ImageAspectFlags::COLOR,
            (
                vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            ),
            (vk::AccessFlags::COLOR_ATTACHMENT_WRITE, vk::AccessFlags::TRANSFER_READ),
        );
        let region = vk::BufferImageCopy::default()
            .image_subresource(
                vk::ImageSubresourceLayers::default()
                    .aspect_mask(vk::ImageAspectFlags::COLOR)
                    .layer_count(1),
            )
            .image_extent(self.extent.into());
        let to_host = vk::BufferMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.readback.raw())
            .size(vk::WHOLE_SIZE);
        // SAFETY: `cmd` is recording inside the rendering `begin` started; every handle
        // belongs to this device.
        unsafe {
            device.cmd_end_rendering(cmd);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_transfer],
            );
            device.cmd_copy_image_to_buffer(
                cmd,
                self.colour.raw(),
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                self.readback.raw(),
                &[region],
            );
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[to_host],
                &[],
            );
        }
    }

    /// The last frame's pixels: RGBA8 (sRGB), rows top to bottom.
    pub fn pixels(&self) -> Vec<u8> {
        let len = self.extent.width as usize * self.extent.height as usize * 4;
        self.readback
            .mapped()
            .map_or_else(|| vec![0; len], |m| m[..len].to_vec())
    }
}

/// Writes RGBA8 pixels as a PNG: encoded in memory ([`encode_png`]), then written as a
/// file the user named ([`write_output`](sylva_runtime::framed::write_output): a regular
/// file replaced whole, a FIFO written through, a link's file replaced).
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), RenderError> {
    let bytes = encode_png(width, height, rgba)?;
    sylva_runtime::framed::write_output(path, &bytes).map_err(|e| RenderError::Io(format!("{}: {e}", path.display())))
}

/// RGBA8 pixels, rows top to bottom, as the bytes of a PNG.
pub fn encode_png(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, RenderError> {
    let err = |e: png::EncodingError| RenderError::Io(format!("PNG: {e}"));
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(rgba).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(bytes)
}

/// Reads a PNG as RGBA8: (width, height, pixels).
pub fn read_png(path: &Path) -> Result<(u32, u32, Vec<u8>), RenderError> {
    let err = |e: String| RenderError::Io(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| err(e.to_string()))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| err("image too large".into()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| err(e.to_string()))?;
    buf.truncate(info.buffer_size());
    let (w, h) = (info.width, info.height);
    let pixels = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        other => return Err(err(format!("unsupported PNG colour type {other:?}"))),
    };
    Ok((w, h, pixels))
}
