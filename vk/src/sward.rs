//! The sward: grass blades expanded on the GPU from the chunks' ground cover
//! (docs/design/grass.md, "Blades from the field on the GPU"). Each frame a
//! compute pass (`shaders/grass_expand.comp`) walks the cells of the chunks
//! within reach of the camera ([`reach`]: at most [`LOD_CUT_METRES`], nearer for denser
//! grass), gives each cell the blades
//! sylva-systems' `expand_blades` gives it (the same hash, the same bits),
//! thinned with distance and culled by the view per cell, and appends them to
//! their layer's part of one blade buffer; the grass pass draws each part with
//! one indirect draw. No blade list crosses the bus: a chunk uploads its cover
//! samples once, and the frame's CPU work grows with the chunks near the camera,
//! not with the blades.
//!
//! Each part's room is sized on the CPU before the frame from the chunks' densest
//! samples, so a frame never loses blades to a full part unless the part would
//! pass [`MAX_BLADES`]: then the draws are clamped, and a warning says so once.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::{CoverRule, GrassLayer, LiveCells};
use sylva_runtime::glam::Vec3;

use crate::commands::{Commands, FRAMES_IN_FLIGHT};
use crate::cull::Aabb;
use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Memory};
use crate::grass::{LOD_CUT_METRES, LOD_FULL_METRES};
use crate::pass::{Prepare, Recording, barrier};
use crate::pipeline::ComputePipeline;
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::terrain::CoverChunk;

/// Most blades the parts hold together (28 bytes each: 112 MiB).
pub const MAX_BLADES: u64 = 1 << 22;

/// Blades the sward aims at in a full circle around the camera: the denser the grass, the
/// nearer it thins away, so a frame's blades stay near this whatever the density.
pub const SWARD_BUDGET: f32 = 400_000.0;

/// The nearest the full density may end, metres, however dense the grass.
const MIN_FULL_METRES: f32 = 12.0;

/// Most grass layers that grow out of the ground cover.
pub const MAX_COVER_LAYERS: usize = 16;

/// How far above the ground a chunk's blades may reach, metres, for culling its box.
const BLADE_REACH_METRES: f32 = 4.0;

/// Words per blade: root (3 words), yaw, scale, colour, live slot.
const BLADE_WORDS: u64 = 7;

/// Cells per workgroup side (matches `grass_expand.comp`).
const GROUP: u32 = 8;

/// Words of the rules buffer: the kind map, then 12 words per layer.
const RULE_WORDS: usize = 256 + 12 * MAX_COVER_LAYERS;

/// Words of the live table (what one `vkCmdUpdateBuffer` writes): the cell count and three
/// spare words, four words per cell, then the cells' slots.
const LIVE_WORDS: usize = 65536 / 4;

/// Push constants of one dispatch (matches `grass_expand.comp`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ExpandConstants {
    origin: [i32; 4],
    cover: [u32; 4],
    rect: [u32; 4],
    lod: [f32; 4],
    sizes: [u32; 4],
}

// SAFETY: repr(C) of five 16-byte arrays of 4-byte elements: no padding.
unsafe impl Pod for ExpandConstants {}

/// A layer drawn from its part of the blade buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SwardDraw {
    /// The grass layer.
    pub layer: usize,
    /// Its part of the blade buffer and its indirect command.
    pub part: u32,
}

/// One blade of the sward as read back ([`crate::Renderer::read_sward`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwardBlade {
    /// The grass layer it belongs to.
    pub layer: usize,
    /// Root, world metres.
    pub root: Vec3,
    /// Rotation about +Y, radians.
    pub yaw: f32,
    /// Scale of the rest pose.
    pub scale: f32,
    /// Linear RGBA colour.
    pub colour: [u8; 4],
    /// Its live slot in its layer's live displacements (`u32::MAX`: the bake).
    pub live: u32,
}

/// The blade buffer, the indirect commands, and the set over them and the rules.
struct Parts {
    set: DescriptorSet,
    blades: Buffer,
    /// Blades per part.
    room: u32,
    /// Parts (layers growing out of the cover).
    parts: u32,
}

/// What the frame recorded in a slot asked of its parts, read back when the slot comes round.
#[derive(Default)]
struct Readback {
    buffer: Option<Buffer>,
    /// Parts and room of the frame last recorded in this slot.
    counted: Option<(u32, u32)>,
}

/// The grass expansion.
pub(crate) struct Sward {
    pipeline: ComputePipeline,
    sets: SetPool,
    rules: Buffer,
    live: Buffer,
    wanted: Buffer,
    commands: Buffer,
    parts: Option<Parts>,
    /// This frame's rules (kind map and per-part rules), written in the command stream.
    rule_words: Vec<u32>,
    /// This frame's live table, written in the command stream.
    live_words: Vec<u32>,
    /// This frame's commands' first words, written in the command stream.
    command_words: Vec<u32>,
    /// Per chunk dispatched, its constants and its cover set.
    dispatches: Vec<(ExpandConstants, vk::DescriptorSet)>,
    draws: Vec<SwardDraw>,
    readback: [Readback; FRAMES_IN_FLIGHT],
    /// Blades drawn by the frame last read back.
    drawn: u64,
    /// Whether cells are culled by the view and thinned with distance (tests turn it off
    /// to compare every blade with the CPU's).
    culling: bool,
    /// Where the full density ends and where the last blade thins away, metres.
    reach: (f32, f32),
    warned: bool,
    reads: Commands,
}

/// Where full density ends and the last blade thins away for grass of `density` blades per
/// m² at most: a disk of radius F at full density and a ring thinning linearly to 4F hold
/// 7πF² m² of it, which [`SWARD_BUDGET`] sets, within `MIN_FULL_METRES` and
/// [`LOD_FULL_METRES`] (docs/design/grass.md, "Blades from the field on the GPU").
pub(crate) fn reach(density: f32) -> (f32, f32) {
    let area = SWARD_BUDGET / density.max(1e-6);
    let full = (area / (7.0 * std::f32::consts::PI))
        .sqrt()
        .clamp(MIN_FULL_METRES, LOD_FULL_METRES);
    (full, full * (LOD_CUT_METRES / LOD_FULL_METRES))
}

impl Sward {
    /// The pipeline over the globals, its own set and a chunk's cover set.
    pub fn new(
        memory: &Arc<Memory>,
        globals: vk::DescriptorSetLayout,
        cover: vk::DescriptorSetLayout,
    ) -> Result<Sward, RenderError> {
        let device = memory.device();
        let sets = SetPool::new(
            memory,
            vk::ShaderStageFlags::COMPUTE,
            &[vk::DescriptorType::STORAGE_BUFFER; 5],
            8,
        )?;
        let pipeline = ComputePipeline::new(
            device,
            shaders::GRASS_EXPAND_COMP,
            &[globals, sets.layout(), cover],
            std::mem::size_of::<ExpandConstants>() as u32,
        )?;
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
        let words = |n: usize| (4 * n) as u64;
        Ok(Sward {
            pipeline,
            sets,
            rules: memory.buffer(words(RULE_WORDS), storage, MemoryLocation::GpuOnly, "sward rules")?,
            live: memory.buffer(words(LIVE_WORDS), storage, MemoryLocation::GpuOnly, "sward live cells")?,
            wanted: memory.buffer(
                words(MAX_COVER_LAYERS),
                storage | vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
                "sward wanted",
            )?,
            commands: memory.buffer(
                words(4 * MAX_COVER_LAYERS),
                storage | vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC,
                MemoryLocation::GpuOnly,
                "sward commands",
            )?,
            parts: None,
            rule_words: Vec::new(),
            live_words: Vec::new(),
            command_words: Vec::new(),
            dispatches: Vec::new(),
            draws: Vec::new(),
            readback: Default::default(),
            drawn: 0,
            culling: true,
            reach: (LOD_FULL_METRES, LOD_CUT_METRES),
            warned: false,
            reads: Commands::new(device)?,
        })
    }

    /// Whether cells are culled by the view and thinned with distance (on by default).
    pub fn set_culling(&mut self, on: bool) {
        self.culling = on;
    }

    /// The layers drawn from the blade buffer this frame.
    pub fn draws(&self) -> &[SwardDraw] {
        &self.draws
    }

    /// Where the full density ends and where the last blade thins away this frame, metres.
    pub fn reach(&self) -> (f32, f32) {
        self.reach
    }

    /// Blades drawn by the last frame read back (`FRAMES_IN_FLIGHT` frames ago).
    pub fn drawn(&self) -> u64 {
        self.drawn
    }

    /// The blade buffer's vertex bindings for part `part`: root, yaw, scale, colour, live slot.
    pub fn bind(&self, rec: &Recording<'_>, part: u32) {
        let Some(p) = &self.parts else { return };
        let all = u64::from(p.room) * u64::from(p.parts);
        let at = u64::from(part) * u64::from(p.room);
        let offsets = [
            12 * at,
            4 * (3 * all + at),
            4 * (4 * all + at),
            4 * (5 * all + at),
            4 * (6 * all + at),
        ];
        let buffers = [p.blades.raw(); 5];
        // SAFETY: `rec.cmd` is recording; the buffer lives until the frame is done.
        unsafe { rec.device.cmd_bind_vertex_buffers(rec.cmd, 0, &buffers, &offsets) };
    }

    /// Records part `part`'s indirect draw of `vertices` per blade.
    pub fn draw(&self, rec: &Recording<'_>, part: u32) {
        // SAFETY: `rec.cmd` is recording inside rendering with the grass pipeline, the
        // layer's set and the part's vertex buffers bound; the expansion wrote the command
        // and its barrier made it visible to indirect reads.
        unsafe {
            rec.device
                .cmd_draw_indirect(rec.cmd, self.commands.raw(), u64::from(part) * 16, 1, 16)
        };
    }

    /// Plans the frame's expansion: the layers growing out of the cover, their rules and
    /// live blades, the cells of each chunk within reach, and room for what they may hold.
    pub fn prepare(
        &mut self,
        frame: &mut Prepare<'_>,
        (layers, live): (&[GrassLayer], &LiveCells),
        chunks: &[CoverChunk],
    ) -> Result<(), RenderError> {
        self.read_counts(frame.slot);
        self.draws.clear();
        self.dispatches.clear();
        let covered: Vec<(usize, CoverRule)> = layers
            .iter()
            .enumerate()
            .filter_map(|(i, l)| Some((i, l.cover?)))
            .filter(|(_, r)| r.share > 0.0)
            .take(MAX_COVER_LAYERS)
            .collect();
        if covered.is_empty() || chunks.is_empty() {
            return Ok(());
        }
        self.write_rules(layers, &covered);
        self.write_live(live);
        let camera = frame.view.camera.position;
        let mut bound = 0u64;
        let max_share = covered.iter().fold(0.0f32, |m, (_, r)| m.max(r.share));
        let densest = chunks
            .iter()
            .map(|c| c.peak * max_share / (c.cell_size * c.cell_size))
            .fold(0.0f32, f32::max);
        self.reach = reach(densest);
        let (full, cut) = self.reach;
        for c in chunks {
            let Some(rect) = self.rect(c, camera, frame) else {
                continue;
            };
            let cells = u64::from(rect[2] - rect[0]) * u64::from(rect[3] - rect[1]);
            bound += cells * ((c.peak * max_share).ceil() as u64 + 1);
            let constants = ExpandConstants {
                origin: [c.origin_cell[0], c.origin_cell[1], c.cells as i32, 0],
                cover: [c.cover[0], c.cover[1], c.cover[2], 0],
                rect,
                lod: [full, cut, c.cell_size, if self.culling { 1.0 } else { 0.0 }],
                sizes: [0; 4],
            };
            self.dispatches.push((constants, c.set));
        }
        if self.dispatches.is_empty() {
            return Ok(());
        }
        // Within reach a cell keeps at most its share thinned with distance, rounded up: the
        // budget's disk of full density plus a blade per cell, a tenth to spare for the
        // cells' steps (docs/design/grass.md, "Blades from the field on the GPU").
        let cell = chunks.iter().map(|c| c.cell_size).fold(f32::INFINITY, f32::min);
        let disk = 1.1 * std::f32::consts::PI * (densest * 7.0 * full * full + cut * cut / (cell * cell));
        let bound = bound.min(disk.ceil() as u64);
        let parts = covered.len() as u32;
        let room = self.room(bound, parts);
        self.ensure_parts(frame.memory, room, parts)?;
        let p = self.parts.as_ref().expect("parts made above");
        let sizes = [0, p.room, p.parts, p.room * p.parts];
        for (d, _) in &mut self.dispatches {
            d.sizes = sizes;
        }
        self.draws
            .extend(covered.iter().enumerate().map(|(part, &(layer, _))| SwardDraw {
                layer,
                part: part as u32,
            }));
        self.ensure_readback(frame)?;
        Ok(())
    }

    /// The rules in the command stream's form: kind map, per part rules; and the commands'
    /// first words (vertices per blade, no blades yet).
    fn write_rules(&mut self, layers: &[GrassLayer], covered: &[(usize, CoverRule)]) {
        self.rule_words.clear();
        self.rule_words.resize(RULE_WORDS, 0);
        self.command_words.clear();
        for (part, &(layer, r)) in covered.iter().enumerate() {
            let slot = &mut self.rule_words[usize::from(r.kind)];
            if *slot == 0 {
                *slot = part as u32 + 1;
            }
            let l = &layers[layer];
            let reach = l.shape.rest.iter().fold(0.0f32, |m, p| m.max(p.length())) * r.scale[1].abs();
            let words = [
                r.gradient[0].to_bits(),
                r.gradient[1].to_bits(),
                r.height[0].to_bits(),
                r.height[1].to_bits(),
                r.scale[0].to_bits(),
                r.scale[1].to_bits(),
                r.share.to_bits(),
                reach.to_bits(),
                r.materials,
                u32::from_le_bytes(r.colour),
                6 * l.motion.links,
                0,
            ];
            self.rule_words[256 + 12 * part..256 + 12 * (part + 1)].copy_from_slice(&words);
            self.command_words.extend([6 * l.motion.links, 0, 0, 0]);
        }
    }

    /// The live table in the command stream's form: as many of `live`'s cells, in order, as
    /// [`LIVE_WORDS`] holds (the blades of cells left out play the bake).
    fn write_live(&mut self, live: &LiveCells) {
        let w = &mut self.live_words;
        w.clear();
        w.extend([0; 4]);
        if !live.is_consistent() {
            return;
        }
        let mut cells = 0;
        let mut slots = 0usize;
        for c in &live.cells {
            let need = 4 + 4 * (cells + 1) + slots + c.blades as usize;
            if need > LIVE_WORDS {
                break;
            }
            cells += 1;
            slots += c.blades as usize;
        }
        let mut first = 0;
        for c in &live.cells[..cells] {
            w.extend([c.cell[0] as u32, c.cell[1] as u32, first, c.blades]);
            first += c.blades;
        }
        for c in &live.cells[..cells] {
            w.extend_from_slice(&live.slots[c.first as usize..(c.first + c.blades) as usize]);
        }
        w[0] = cells as u32;
    }

    /// The cells of `c` within the cut-off of `camera` (all when not culling), if any, and
    /// the chunk seen or near enough.
    fn rect(&self, c: &CoverChunk, camera: Vec3, frame: &mut Prepare<'_>) -> Option<[u32; 4]> {
        if !self.culling {
            return (c.cells > 0).then_some([0, 0, c.cells, c.cells]);
        }
        let r = self.reach.1;
        let near = c.bounds.distance(camera) < r;
        let tall = Aabb {
            min: c.bounds.min,
            max: c.bounds.max + Vec3::Y * BLADE_REACH_METRES,
        };
        if !near || !frame.view.frustum.intersects(&tall) {
            return None;
        }
        let cell = |v: f32, o: f32| ((v - o) / c.cell_size).floor().clamp(0.0, c.cells as f32) as u32;
        let rect = [
            cell(camera.x - r, c.origin.x),
            cell(camera.z - r, c.origin.z),
            cell(camera.x + r, c.origin.x) + 1,
            cell(camera.z + r, c.origin.z) + 1,
        ]
        .map(|v| v.min(c.cells));
        (rect[0] < rect[2] && rect[1] < rect[3]).then_some(rect)
    }

    /// Blades per part for an expansion that may make `bound` blades in one part, within
    /// [`MAX_BLADES`] over `parts` parts (warning once when that clamps).
    fn room(&mut self, bound: u64, parts: u32) -> u32 {
        let limit = MAX_BLADES / u64::from(parts);
        if bound > limit && !self.warned {
            self.warned = true;
            eprintln!(
                "sylva: the grass near the camera may hold {bound} blades a layer, more than the \
                 renderer's {limit}: the farthest are left out (lower the world's draw.blades_per_m2)"
            );
        }
        bound.clamp(1024, limit).next_power_of_two().min(limit) as u32
    }

    /// Makes the blade buffer (and its set) when the parts need more room or another count.
    fn ensure_parts(&mut self, memory: &Arc<Memory>, room: u32, parts: u32) -> Result<(), RenderError> {
        if self.parts.as_ref().is_some_and(|p| p.room >= room && p.parts == parts) {
            return Ok(());
        }
        let bytes = 4 * BLADE_WORDS * u64::from(room) * u64::from(parts);
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::VERTEX_BUFFER
            | vk::BufferUsageFlags::TRANSFER_SRC;
        let blades = memory.buffer(bytes, usage, MemoryLocation::GpuOnly, "sward blades")?;
        let set = self.sets.allocate("vkAllocateDescriptorSets (sward)")?;
        set.write(&[
            Descriptor::Storage(&self.rules),
            Descriptor::Storage(&self.wanted),
            Descriptor::Storage(&self.commands),
            Descriptor::Storage(&blades),
            Descriptor::Storage(&self.live),
        ]);
        // The old buffer and set go to the graveyard: the frame in flight may draw them.
        self.parts = Some(Parts {
            set,
            blades,
            room,
            parts,
        });
        Ok(())
    }

    /// A host-visible copy of the wanted counts for this frame slot.
    fn ensure_readback(&mut self, frame: &mut Prepare<'_>) -> Result<(), RenderError> {
        let readback = &mut self.readback[frame.slot];
        if readback.buffer.is_none() {
            readback.buffer = Some(frame.memory.buffer(
                (4 * MAX_COVER_LAYERS) as u64,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                "sward counts",
            )?);
        }
        let p = self.parts.as_ref().expect("parts made before");
        readback.counted = Some((p.parts, p.room));
        Ok(())
    }

    /// Reads what the frame last recorded in `slot` drew (its fence has passed).
    fn read_counts(&mut self, slot: usize) {
        let readback = &mut self.readback[slot];
        let (Some((parts, room)), Some(bytes)) = (
            readback.counted.take(),
            readback.buffer.as_ref().and_then(|b| b.mapped()),
        ) else {
            return;
        };
        self.drawn = bytes
            .chunks_exact(4)
            .take(parts as usize)
            .map(|w| u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]).min(room)))
            .sum();
    }

    /// Records the expansion: the rules and commands written, the counts zeroed, every
    /// chunk's cells dispatched, the commands clamped, the counts copied for the host.
    pub fn record(&self, rec: &Recording<'_>, slot: usize) {
        let Some(p) = self.parts.as_ref().filter(|_| !self.draws.is_empty()) else {
            return;
        };
        let (d, cmd) = (rec.device, rec.cmd);
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        let shader_rw = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
        let transfer = vk::PipelineStageFlags::TRANSFER;
        // The frame before may still draw from the blades and commands: its reads go first.
        barrier(
            rec,
            (
                vk::PipelineStageFlags::DRAW_INDIRECT | vk::PipelineStageFlags::VERTEX_INPUT | transfer,
                vk::AccessFlags::empty(),
            ),
            (transfer | compute, vk::AccessFlags::empty()),
        );
        // SAFETY: `cmd` is recording outside rendering; the barrier above ordered these
        // writes after every earlier use of the buffers; the data fit them (≤ 65536 bytes).
        unsafe {
            d.cmd_update_buffer(cmd, self.rules.raw(), 0, slice_bytes(&self.rule_words));
            d.cmd_update_buffer(cmd, self.live.raw(), 0, slice_bytes(&self.live_words));
            d.cmd_update_buffer(cmd, self.commands.raw(), 0, slice_bytes(&self.command_words));
            d.cmd_fill_buffer(cmd, self.wanted.raw(), 0, self.wanted.size(), 0);
        }
        barrier(rec, (transfer, vk::AccessFlags::TRANSFER_WRITE), (compute, shader_rw));
        let first = self.dispatches[0].0;
        self.pipeline.bind(d, cmd, &[rec.globals, p.set.raw()], &first);
        for (constants, set) in &self.dispatches {
            self.pipeline.push(d, cmd, constants);
            self.pipeline.bind_set(d, cmd, 2, *set);
            let [x0, z0, x1, z1] = constants.rect;
            // SAFETY: `cmd` is recording outside rendering with the expansion, its sets (the
            // chunk's lives until the frame is done: the graveyard) and constants bound.
            unsafe { d.cmd_dispatch(cmd, (x1 - x0).div_ceil(GROUP), (z1 - z0).div_ceil(GROUP), 1) };
        }
        barrier(rec, (compute, vk::AccessFlags::SHADER_WRITE), (compute, shader_rw));
        let finalize = ExpandConstants {
            sizes: [1, p.room, p.parts, p.room * p.parts],
            ..first
        };
        self.pipeline.push(d, cmd, &finalize);
        // SAFETY: as above; one group covers every part (at most 16).
        unsafe { d.cmd_dispatch(cmd, 1, 1, 1) };
        barrier(
            rec,
            (compute, vk::AccessFlags::SHADER_WRITE),
            (
                vk::PipelineStageFlags::DRAW_INDIRECT | vk::PipelineStageFlags::VERTEX_INPUT | transfer,
                vk::AccessFlags::INDIRECT_COMMAND_READ
                    | vk::AccessFlags::VERTEX_ATTRIBUTE_READ
                    | vk::AccessFlags::TRANSFER_READ,
            ),
        );
        if let Some(copy) = &self.readback[slot].buffer {
            let region = vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: self.wanted.size(),
            };
            // SAFETY: both buffers are live, the copy this frame slot's; the barrier above
            // ordered the counts' writes before it.
            unsafe { d.cmd_copy_buffer(cmd, self.wanted.raw(), copy.raw(), &[region]) };
            barrier(
                rec,
                (transfer, vk::AccessFlags::TRANSFER_WRITE),
                (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
            );
        }
    }

    /// Every blade the last frame expanded, part by part (no frame may be in flight).
    pub fn read(&mut self, memory: &Arc<Memory>) -> Result<Vec<SwardBlade>, RenderError> {
        let Some(p) = self.parts.as_ref().filter(|_| !self.draws.is_empty()) else {
            return Ok(Vec::new());
        };
        let host = |size: u64, name: &str| {
            memory.buffer(size, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu, name)
        };
        let blades = host(p.blades.size(), "sward blades read back")?;
        let commands = host(self.commands.size(), "sward commands read back")?;
        let d = &memory.device().raw;
        let cmd = self.reads.begin()?;
        let whole = |size| vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size,
        };
        // SAFETY: `cmd` is recording; no frame is in flight (the caller waited), so the
        // buffers hold the last frame's expansion.
        unsafe {
            d.cmd_copy_buffer(cmd, p.blades.raw(), blades.raw(), &[whole(p.blades.size())]);
            d.cmd_copy_buffer(cmd, self.commands.raw(), commands.raw(), &[whole(self.commands.size())]);
        }
        barrier(
            &Recording {
                device: d,
                cmd,
                globals: vk::DescriptorSet::null(),
            },
            (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
        );
        self.reads.submit_and_wait(vk::SubmitInfo::default())?;
        let missing = || RenderError::Memory("sward read-back is not host-visible".into());
        let words = |b: &Buffer| -> Result<Vec<u32>, RenderError> {
            let bytes = b.mapped().ok_or_else(missing)?;
            Ok(bytes
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect())
        };
        let (w, c) = (words(&blades)?, words(&commands)?);
        let all = (p.room * p.parts) as usize;
        let f = |i: usize| f32::from_bits(w[i]);
        let mut out = Vec::new();
        for draw in &self.draws {
            let count = c[4 * draw.part as usize + 1] as usize;
            for k in 0..count {
                let i = draw.part as usize * p.room as usize + k;
                out.push(SwardBlade {
                    layer: draw.layer,
                    root: Vec3::new(f(3 * i), f(3 * i + 1), f(3 * i + 2)),
                    yaw: f(3 * all + i),
                    scale: f(4 * all + i),
                    colour: w[5 * all + i].to_le_bytes(),
                    live: w[6 * all + i],
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sparse grass reaches the whole distance; dense grass thins nearer, within the budget.
    #[test]
    fn denser_grass_thins_away_nearer_within_the_budget() {
        assert_eq!(reach(2.0), (LOD_FULL_METRES, LOD_CUT_METRES));
        let (full, cut) = reach(32.0);
        assert!(
            full < LOD_FULL_METRES && (cut - 4.0 * full).abs() < 1e-3,
            "{full} {cut}"
        );
        let blades = 32.0 * 7.0 * std::f32::consts::PI * full * full;
        assert!((blades / SWARD_BUDGET - 1.0).abs() < 1e-3, "{blades}");
        assert_eq!(reach(1e6).0, MIN_FULL_METRES);
    }
}
