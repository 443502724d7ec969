//! Text over the frame (the viewer's statistics, reload errors, key help): lines of
//! [`font`](crate::font) glyphs at the top left on a dark translucent box, drawn after
//! the sky into the same multisampled target, blended, without depth. Each glyph and
//! the box is one instanced quad carrying its own pixels (a byte per row), so the pass needs
//! no texture: `overlay.frag` tests the bit under each pixel.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

use crate::commands::FRAMES_IN_FLIGHT;
use crate::device::Device;
use crate::error::RenderError;
use crate::font::{self, HEIGHT, WIDTH};
use crate::gpu_memory::{Buffer, Memory};
use crate::pass::Recording;
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::slice_bytes;
use crate::shaders;

/// One line of overlay text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlayLine {
    /// The text; characters the font lacks show as `?`, a line too long for the target wraps.
    pub text: String,
    /// Drawn in red: something went wrong (a scene that no longer reads).
    pub error: bool,
}

impl OverlayLine {
    /// A line of ordinary (light) text.
    pub fn text(text: impl Into<String>) -> OverlayLine {
        OverlayLine {
            text: text.into(),
            error: false,
        }
    }

    /// A line of red error text.
    pub fn error(text: impl Into<String>) -> OverlayLine {
        OverlayLine {
            text: text.into(),
            error: true,
        }
    }
}

/// Per quad: its rectangle in pixels (x0, y0, x1, y1), its 5 × 8 pixels (a byte per row), its
/// colour.
const INSTANCE: &[Attribute] = &[Attribute::VEC4, Attribute::UVEC2, Attribute::RGBA8];

/// Light text (linear colour, the target is sRGB).
const TEXT: [u8; 4] = [235, 235, 225, 255];
/// Error text.
const ERROR: [u8; 4] = [255, 22, 12, 255];
/// The box: dark, letting a little of the frame through.
const BOX: [u8; 4] = [4, 6, 10, 215];
/// Every pixel of a quad lit: the box.
const FULL: u64 = u64::MAX;
/// Pixels between the box's edge and the text, and between the target's edge and the box,
/// in glyph pixels.
const MARGIN: u32 = 3;

/// The quads of a layout, one array per attribute.
#[derive(Default)]
struct Quads {
    rect: Vec<[f32; 4]>,
    bits: Vec<[u32; 2]>,
    colour: Vec<[u8; 4]>,
}

impl Quads {
    fn push(&mut self, rect: [f32; 4], bits: u64, colour: [u8; 4]) {
        self.rect.push(rect);
        self.bits.push([bits as u32, (bits >> 32) as u32]);
        self.colour.push(colour);
    }
}

/// The overlay pass: the lines set last, laid out for the target's size when either changes,
/// in one buffer per frame slot (the frame in flight still reads its own).
pub(crate) struct Overlay {
    lines: Vec<OverlayLine>,
    slots: Vec<SlotQuads>,
    /// The slot the frame being recorded prepared.
    current: usize,
    pipeline: DrawPipeline,
}

/// One frame slot's quads.
#[derive(Default)]
struct SlotQuads {
    /// The lines and size the buffer holds.
    laid_out: Option<(Vec<OverlayLine>, u32, u32)>,
    /// Host-visible quads, rewritten in place once the slot's last frame has finished.
    buffer: Option<Buffer>,
    /// Quads in the buffer, and the room it has for them.
    count: u32,
    capacity: u32,
}

impl Overlay {
    /// The pipeline over the globals at set 0 (for the target's size).
    pub fn new(device: &Arc<Device>, globals: vk::DescriptorSetLayout) -> Result<Overlay, RenderError> {
        let desc = PipelineDesc {
            vert: shaders::OVERLAY_VERT,
            frag: shaders::OVERLAY_FRAG,
            vertices: &[],
            instances: INSTANCE,
            sets: &[globals],
            push_bytes: 0,
        };
        Ok(Overlay {
            lines: Vec::new(),
            slots: (0..FRAMES_IN_FLIGHT).map(|_| SlotQuads::default()).collect(),
            current: 0,
            pipeline: DrawPipeline::overlay(device, &desc)?,
        })
    }

    /// The lines the next frames show (none: no overlay).
    pub fn set(&mut self, lines: &[OverlayLine]) {
        lines.clone_into(&mut self.lines);
    }

    /// Lays the lines out for a `width × height` target and writes the quads of frame slot
    /// `slot` (whose last frame has finished), when the lines or the size changed since the
    /// slot's last frame.
    pub fn prepare(&mut self, memory: &Arc<Memory>, slot: usize, width: u32, height: u32) -> Result<(), RenderError> {
        self.current = slot;
        let q = &mut self.slots[slot];
        if q.laid_out
            .as_ref()
            .is_some_and(|(l, w, h)| *l == self.lines && (*w, *h) == (width, height))
        {
            return Ok(());
        }
        let quads = layout(&self.lines, width, height);
        let count = quads.rect.len() as u32;
        if count > q.capacity {
            q.buffer = None;
            let capacity = count.next_power_of_two().max(256);
            let size = u64::from(capacity) * stride();
            let usage = vk::BufferUsageFlags::VERTEX_BUFFER;
            q.buffer = Some(memory.buffer(size, usage, MemoryLocation::CpuToGpu, "overlay")?);
            q.capacity = capacity;
        }
        if let Some(buffer) = &mut q.buffer {
            let mut bytes = vec![0; buffer.size() as usize];
            let arrays = [
                slice_bytes(&quads.rect),
                slice_bytes(&quads.bits),
                slice_bytes(&quads.colour),
            ];
            for (k, array) in arrays.iter().enumerate() {
                let at = offset(q.capacity, k) as usize;
                bytes[at..at + array.len()].copy_from_slice(array);
            }
            buffer.write(&bytes, "overlay")?;
        }
        q.count = count;
        q.laid_out = Some((self.lines.clone(), width, height));
        Ok(())
    }

    /// Records the quads (nothing without lines). The overlay is not the scene's, so it is
    /// not counted in `FrameStats::draw_calls`.
    pub fn record(&self, rec: &Recording<'_>) {
        let q = &self.slots[self.current];
        let Some(buffer) = q.buffer.as_ref().filter(|_| q.count > 0) else {
            return;
        };
        self.pipeline.bind(rec);
        let buffers = [buffer.raw(); 3];
        let offsets: Vec<u64> = (0..3).map(|k| offset(q.capacity, k)).collect();
        // SAFETY: `rec.cmd` is recording inside the frame's rendering with the pipeline bound;
        // the buffer holds `count` quads per array and lives until the frame is done.
        unsafe {
            rec.device.cmd_bind_vertex_buffers(rec.cmd, 0, &buffers, &offsets);
            rec.device.cmd_draw(rec.cmd, 6, q.count, 0, 0);
        }
    }
}

/// Bytes of one quad over all its arrays.
fn stride() -> u64 {
    INSTANCE.iter().map(|a| u64::from(a.stride)).sum()
}

/// Byte offset of array `k` in a buffer of `capacity` quads.
fn offset(capacity: u32, k: usize) -> u64 {
    u64::from(capacity) * INSTANCE[..k].iter().map(|a| u64::from(a.stride)).sum::<u64>()
}

/// Glyph pixels per target pixel: 1, or 2 on targets of 600 rows and more (a window).
fn scale(height: u32) -> u32 {
    if height >= 600 { 2 } else { 1 }
}

/// The box, then each line's glyphs, wrapped to the target's width (blanks draw nothing).
fn layout(lines: &[OverlayLine], width: u32, height: u32) -> Quads {
    let mut quads = Quads::default();
    if lines.is_empty() {
        return quads;
    }
    let s = scale(height);
    let (cell_w, cell_h) = ((WIDTH + 1) * s, (HEIGHT + 2) * s);
    let margin = MARGIN * s;
    let columns = (width.saturating_sub(4 * margin) / cell_w).max(1) as usize;
    let chars: Vec<(Vec<char>, bool)> = lines.iter().map(|l| (l.text.chars().collect(), l.error)).collect();
    let mut rows: Vec<(&[char], bool)> = Vec::new();
    for (text, error) in &chars {
        // An empty line still takes its row.
        if text.is_empty() {
            rows.push((&[], *error));
        }
        rows.extend(text.chunks(columns).map(|c| (c, *error)));
    }
    let widest = rows.iter().map(|(r, _)| r.len()).max().unwrap_or(0) as u32;
    let (x0, y0) = (margin, margin);
    let inner = (widest * cell_w, rows.len() as u32 * cell_h);
    let corner = |x: u32, y: u32| [x as f32, y as f32];
    let [bx1, by1] = corner(x0 + 2 * margin + inner.0, y0 + 2 * margin + inner.1 - 2 * s);
    quads.push([x0 as f32, y0 as f32, bx1, by1], FULL, BOX);
    for (row, (text, error)) in rows.iter().enumerate() {
        let y = y0 + margin + row as u32 * cell_h;
        let colour = if *error { ERROR } else { TEXT };
        for (column, &c) in text.iter().enumerate() {
            let bits = font::glyph(c);
            if bits == 0 {
                continue;
            }
            let x = x0 + margin + column as u32 * cell_w;
            quads.push(
                [x as f32, y as f32, (x + WIDTH * s) as f32, (y + HEIGHT * s) as f32],
                bits,
                colour,
            );
        }
    }
    quads
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_then_one_quad_per_visible_glyph_wrapped_to_the_width() {
        assert_eq!(layout(&[], 100, 100).rect.len(), 0);
        let quads = layout(&[OverlayLine::text("ab c"), OverlayLine::error("d")], 200, 100);
        assert_eq!(quads.rect.len(), 1 + 4);
        assert_eq!(quads.bits[0], [u32::MAX, u32::MAX]);
        assert_eq!(quads.colour[0], BOX);
        assert_eq!(quads.colour[4], ERROR);
        // The box holds both lines.
        let box_ = quads.rect[0];
        assert!(
            quads.rect[1..]
                .iter()
                .all(|r| r[0] >= box_[0] && r[2] <= box_[2] && r[3] <= box_[3])
        );
        // 60 pixels: (60 − 12) / 6 = 8 columns, so 20 characters wrap into 3 rows.
        let long = layout(&[OverlayLine::text("x".repeat(20))], 60, 100);
        let ys: std::collections::BTreeSet<u32> = long.rect[1..].iter().map(|r| r[1] as u32).collect();
        assert_eq!(ys.len(), 3);
        assert!(long.rect[1..].iter().all(|r| r[2] <= 60.0));
    }
}
