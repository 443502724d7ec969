//! Trees drawn as instances of their models, culled and given their level of detail on the
//! GPU. Each [`TreeModels`] generation goes up once, in the models' own frame: their segments
//! (the thickest first) and leaves (in a hashed rank order), and per model its bounds and how
//! many of its segments and leaves each level draws. Every resident tree is one entry of one
//! table (position, yaw and scale as halves, model: [`TREE_BYTES`]), each [`TreeInstances`]
//! batch a run of it, re-sent only when the batch changes. Each frame `tree_cull.comp` sorts
//! the table's trees into buckets (view or shadow map, level, model), lists them and writes
//! each bucket's indirect commands, a level's model after model; the CPU records one
//! multi-draw per level and part (segments, leaves), whatever the tree and model counts
//! (one draw per model with trees where the device cannot multi-draw), and reads the counts back once
//! the frame has finished (its statistics lag [`FRAMES_IN_FLIGHT`] frames). Levels 0 to 4 draw
//! whole, from finer rings to coarser and fewer parts ([`LEVEL_PIXELS`]); level 5 cross-fades by
//! dither with the tree's impostor card, which the impostor pass draws from the same batches;
//! below [`CARD_PIXELS`] a tree is its card alone (docs/design/rendering.md, "Trees as
//! instances").

use std::ops::Range;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use sylva_runtime::extract::{TreeInstances, TreeModel, TreeModels};
use sylva_runtime::runs::Runs;

use crate::clusters::{MIN_RADIUS_PIXELS, RING_FROM};
use crate::commands::FRAMES_IN_FLIGHT;
use crate::cylinders::{DOME_BANDS, SIDES, VERTEX};
use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::{Buffer, Memory};
use crate::impostors::{CARD_BYTES, CARD_FADE, CARD_PIXELS, ModelBounds, card_fade};
use crate::leaves::{LEAF_FADE, LEAF_FULL_PIXELS, MIN_SHARE};
use crate::mesh::{self, Mesh};
use crate::pass::{Prepare, Recording, barrier};
use crate::pipeline::{ComputePipeline, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::upload::Uploads;
use crate::{shaders, shadow};

/// Levels of detail of a tree drawn from its model: five drawn whole, the last fading into
/// its card (`shaders/instanced.glsl`'s `LEVELS`).
pub const LEVELS: usize = 6;
/// The view, then the shadow map.
const PASSES: usize = 2;
/// A tree's height on screen (pixels, as its card measures it) from which each level draws:
/// halving from level to level, so a level's largest trees are twice its smallest and the
/// leaves it may draw at most four times what its smallest trees need; level 4 ends at
/// [`CARD_PIXELS`] × [`CARD_FADE`], and level 5 gives way to the card down to [`CARD_PIXELS`].
pub const LEVEL_PIXELS: [f32; LEVELS] = [
    16.0 * CARD_PIXELS * CARD_FADE,
    8.0 * CARD_PIXELS * CARD_FADE,
    4.0 * CARD_PIXELS * CARD_FADE,
    2.0 * CARD_PIXELS * CARD_FADE,
    CARD_PIXELS * CARD_FADE,
    CARD_PIXELS,
];
/// The smallest share of a crown's leaves the shadow map draws ([`MIN_SHARE`] in view), each
/// grown by 1/√share: its texels blur what the leaves' count would add.
const SHADOW_LEAF_SHARE: f32 = 1.0 / 64.0;
/// Words per tree in the table (`instanced.glsl`'s `TREE_WORDS`).
const TREE_WORDS: usize = 5;
/// Device bytes per resident tree: its table entry, its levels word and its place in the
/// view's and the shadow map's lists (one work buffer for every frame). Its card adds the
/// impostor pass's 32 bytes.
pub const TREE_BYTES: u64 = (TREE_WORDS as u64 + 1 + PASSES as u64) * 4;
// A tree's device bytes beyond its model, its card's included, are at most 64.
const _: () = assert!(TREE_BYTES + CARD_BYTES <= 64);
// Every device takes 128 bytes of push constants.
const _: () = assert!(size_of::<CullConstants>() <= 128);

/// A table entry no tree holds.
const EMPTY: u32 = u32::MAX;
/// Threads per workgroup of `tree_cull.comp`.
const GROUP: u32 = 64;
/// Descriptor sets at once: the one bound, and those replaced waiting in the graveyard.
const MAX_SETS: u32 = 8;

/// A model as `instanced.glsl`'s `Model`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct GpuModel {
    sphere: [f32; 4],
    shape: [f32; 4],
    first: [u32; 4],
    cylinders: [u32; LEVELS],
    /// Per level, the ring (an index of [`SIDES`]) its segments are drawn with.
    ring: [u32; LEVELS],
}

/// A segment as `instanced.glsl`'s `Segment`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct GpuSegment {
    start: [f32; 4],
    end: [f32; 4],
    colour: [u32; 4],
}

/// A leaf as `instanced.glsl`'s `ModelLeaf`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct GpuLeaf {
    place: [f32; 4],
    normal: [f32; 4],
    colour: [u32; 4],
}

/// The push constants of `tree_cull.comp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct CullConstants {
    /// Phase, table entries, models, whether to cull by the view.
    counts: [u32; 4],
    /// Index count of each ring in the one ring mesh.
    rings: [u32; 4],
    /// Each ring's first index there.
    ring_first: [u32; 4],
    /// Each ring's first vertex there.
    ring_base: [u32; 4],
    /// x: pixels per metre of tree height at 1 m (the card's measure); y: [`Plan::shadow_near`];
    /// z: [`SHADOW_LEAF_SHARE`]; w: [`Plan::shadow_reach`].
    lod: [f32; 4],
    /// [`LEVEL_PIXELS`], padded.
    from: [f32; 8],
    /// Pixels per metre at 1 m, [`LEAF_FULL_PIXELS`], [`MIN_SHARE`], [`LEAF_FADE`]: how many
    /// leaves each tree asks for, as `leaf.glsl` thins them.
    leaf: [f32; 4],
}

/// The push constants of `instanced_cylinder.vert`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct CylinderConstants {
    draw: [u32; 4],
    fade: [f32; 4],
    card: [f32; 4],
}

/// The push constants of `instanced_leaf.vert`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct LeafConstants {
    draw: [u32; 4],
    play: [f32; 4],
    lod: [f32; 4],
    card: [f32; 4],
}

// SAFETY: each is repr(C) of arrays of 4-byte elements: no padding.
unsafe impl Pod for GpuModel {}
// SAFETY: as above.
unsafe impl Pod for GpuSegment {}
// SAFETY: as above.
unsafe impl Pod for GpuLeaf {}
// SAFETY: as above.
unsafe impl Pod for CullConstants {}
// SAFETY: as above.
unsafe impl Pod for CylinderConstants {}
// SAFETY: as above.
unsafe impl Pod for LeafConstants {}

/// One generation of models on the GPU.
struct Models {
    table: Buffer,
    segments: Buffer,
    leaves: Buffer,
    count: usize,
    generation: u64,
    /// Per model, whether its trees are counted as shrubs.
    shrubs: Vec<bool>,
}

/// One batch's run of the table and its trees per model.
#[derive(Default)]
struct Slot {
    run: Range<usize>,
    per_model: Vec<u32>,
}

/// A frame slot's copy of its frame's counts, read back once the frame has finished.
#[derive(Default)]
struct Readback {
    buffer: Option<Buffer>,
    /// The buckets of the frame last recorded in this slot, whose counts `buffer` holds.
    counted: Option<usize>,
}

/// What the frame draws: its slot, the table's entries, the buckets, the models with trees.
struct Plan {
    slot: usize,
    entries: u32,
    models: u32,
    present: Vec<u32>,
    pixel_scale: f32,
    /// The distance, metres, at which a pixel of the view is a texel of the shadow map: the
    /// shadow map draws trees and leaves as if none were nearer (docs/design/rendering.md,
    /// "Shadows at the map's resolution").
    shadow_near: f32,
    /// How far from the camera shadows fall, metres ([`shadow::reach`]): trees whose
    /// shadows fall only beyond it are not drawn into the map.
    shadow_reach: f32,
    time: f32,
}

/// The instanced tree path.
pub(crate) struct InstancedTrees {
    models: Option<Models>,
    table: Option<(Buffer, usize)>,
    runs: Runs,
    slots: Vec<Slot>,
    /// The frame's work (instanced.glsl): one buffer, which each frame's culling rewrites
    /// after the frame before has drawn from it, and the entries it has room for.
    work: Option<(Buffer, usize)>,
    readback: [Readback; FRAMES_IN_FLIGHT],
    set: Option<DescriptorSet>,
    plan: Option<Plan>,
    /// Whether the view culls (tests compare a frame without).
    culling: bool,
    /// Every ring (4, 8 and 16 sides) in one mesh, so one multi-draw draws any of them.
    rings: Mesh,
    /// Per ring: its index count, first index and first vertex in `rings`.
    ring_parts: [[u32; 3]; 3],
    /// Whether the device draws many indirect commands at once.
    multi_draw: bool,
    set_pool: SetPool,
    cull: ComputePipeline,
    cylinders: DrawPipeline,
    fading: DrawPipeline,
    cylinder_shadow: DrawPipeline,
    leaves: DrawPipeline,
    leaf_shadow: DrawPipeline,
}

impl InstancedTrees {
    /// The pipelines over the globals (set 0) and the instanced data (set 1), and the ring
    /// meshes (queued for upload).
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        globals: vk::DescriptorSetLayout,
    ) -> Result<InstancedTrees, RenderError> {
        let device = memory.device();
        let storage = vk::DescriptorType::STORAGE_BUFFER;
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE;
        let set_pool = SetPool::new(memory, stages, &[storage; 5], MAX_SETS)?;
        let sets = [globals, set_pool.layout()];
        let cylinder = PipelineDesc {
            vert: shaders::INSTANCED_CYLINDER_VERT,
            frag: shaders::LIT_FRAG,
            vertices: VERTEX,
            instances: &[],
            sets: &sets,
            push_bytes: size_of::<CylinderConstants>() as u32,
        };
        let leaf = PipelineDesc {
            vert: shaders::INSTANCED_LEAF_VERT,
            frag: shaders::LEAF_FRAG,
            vertices: &[],
            instances: &[],
            sets: &sets,
            push_bytes: size_of::<LeafConstants>() as u32,
        };
        let (mut vertices, mut indices) = (Vec::new(), Vec::new());
        let mut ring_parts = [[0; 3]; 3];
        for (part, (&sides, bands)) in ring_parts.iter_mut().zip(SIDES.iter().zip(DOME_BANDS)) {
            let (v, i) = mesh::tube(sides, bands);
            *part = [i.len() as u32, indices.len() as u32, (vertices.len() / 4) as u32];
            vertices.extend(v);
            indices.extend(i);
        }
        let rings = Mesh::new(memory, uploads, &vertices, &indices, "instanced tree rings")?;
        Ok(InstancedTrees {
            models: None,
            table: None,
            runs: Runs::default(),
            slots: Vec::new(),
            work: None,
            readback: Default::default(),
            set: None,
            plan: None,
            culling: true,
            rings,
            ring_parts,
            multi_draw: memory.device().multi_draw,
            cull: ComputePipeline::new(
                device,
                shaders::TREE_CULL_COMP,
                &sets,
                size_of::<CullConstants>() as u32,
            )?,
            cylinders: DrawPipeline::new(device, &cylinder)?,
            fading: DrawPipeline::new(
                device,
                &PipelineDesc {
                    frag: shaders::LIT_FADE_FRAG,
                    ..cylinder
                },
            )?,
            cylinder_shadow: DrawPipeline::shadow(device, &cylinder, None)?,
            leaves: DrawPipeline::new(device, &leaf)?,
            leaf_shadow: DrawPipeline::shadow(device, &leaf, Some(shaders::LEAF_SHADOW_FRAG))?,
            set_pool,
        })
    }

    /// Whether the view culls the trees (on by default); off, every tree in range is drawn,
    /// which only tests want.
    pub fn set_culling(&mut self, on: bool) {
        self.culling = on;
    }

    /// Brings the models and the table in step with `models` and `batches` (read, not taken:
    /// the impostor pass takes their dirty ranges after), reads back the counts of the frame
    /// this slot last drew, and plans the frame.
    pub fn prepare(
        &mut self,
        frame: &mut Prepare<'_>,
        (models, batches, time): (Option<&TreeModels>, &[&mut TreeInstances], f32),
    ) -> Result<(), RenderError> {
        self.plan = None;
        self.read_counts(frame.slot, frame.stats);
        let fresh = self.update_models(frame, models)?;
        let Some(count) = self.models.as_ref().map(|m| m.count) else {
            self.release();
            return Ok(());
        };
        self.update_table(frame, batches, count, fresh)?;
        let entries = self.runs.len();
        if entries == 0 || count == 0 {
            return Ok(());
        }
        self.update_work(frame, entries, count)?;
        let mut present = vec![0u32; count];
        for slot in &self.slots {
            for (p, n) in present.iter_mut().zip(&slot.per_model) {
                *p += n;
            }
        }
        self.plan = Some(Plan {
            slot: frame.slot,
            entries: entries as u32,
            models: count as u32,
            present: (0u32..).zip(present).filter(|(_, n)| *n > 0).map(|(m, _)| m).collect(),
            pixel_scale: frame.view.pixels(1.0, 1.0),
            shadow_near: frame.view.pixels(1.0, 1.0) * frame.shadow_texel,
            shadow_reach: shadow::reach(&frame.view.camera),
            time: if time.is_finite() { time } else { 0.0 },
        });
        Ok(())
    }

    /// Drops everything but the pipelines: no models, nothing to draw.
    fn release(&mut self) {
        self.table = None;
        self.runs = Runs::default();
        self.slots.clear();
        self.set = None;
        self.work = None;
    }

    /// Uploads a new generation of models; true when it did.
    fn update_models(&mut self, frame: &mut Prepare<'_>, models: Option<&TreeModels>) -> Result<bool, RenderError> {
        let Some(models) = models.filter(|m| m.generation != 0 && !m.models.is_empty()) else {
            self.models = None;
            return Ok(false);
        };
        if self.models.as_ref().is_some_and(|m| m.generation == models.generation) {
            return Ok(false);
        }
        let (mut table, mut segments, mut leaves) = (Vec::new(), Vec::new(), Vec::new());
        for m in &models.models {
            table.push(model_parts(m, &mut segments, &mut leaves));
        }
        let mut buffer = |bytes: &[u8], name| storage(frame.memory, frame.uploads, bytes, name);
        self.models = Some(Models {
            table: buffer(slice_bytes(&table), "instanced tree models")?,
            segments: buffer(slice_bytes(&segments), "instanced tree segments")?,
            leaves: buffer(slice_bytes(&leaves), "instanced tree leaves")?,
            count: table.len(),
            generation: models.generation,
            shrubs: models.shrubs.clone(),
        });
        self.set = None;
        Ok(true)
    }

    /// Gives each changed batch a new run of the table and sends its trees up; a table
    /// outgrown is made again, larger, with every batch.
    fn update_table(
        &mut self,
        frame: &mut Prepare<'_>,
        batches: &[&mut TreeInstances],
        models: usize,
        fresh: bool,
    ) -> Result<(), RenderError> {
        let mut freed = Vec::new();
        for slot in self.slots.drain(batches.len().min(self.slots.len())..) {
            freed.push(slot.run.clone());
            self.runs.give(slot.run);
        }
        self.slots.resize_with(batches.len(), Slot::default);
        let mut changed = Vec::new();
        for (i, (slot, batch)) in self.slots.iter_mut().zip(batches).enumerate() {
            if !fresh && batch.dirty.is_clean() && slot.run.len() == batch.len() {
                continue;
            }
            let old = std::mem::take(&mut slot.run);
            freed.push(old.clone());
            self.runs.give(old);
            slot.run = self.runs.take(batch.len());
            slot.per_model = vec![0; models];
            for &m in &batch.model {
                if let Some(n) = slot.per_model.get_mut(m as usize) {
                    *n += 1;
                }
            }
            changed.push(i);
        }
        let needed = self.runs.len();
        if self.table.as_ref().is_none_or(|(_, capacity)| *capacity < needed) {
            let capacity = needed.max(1024).next_power_of_two();
            let bytes = (capacity * TREE_WORDS * 4) as u64;
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
            let buffer = frame
                .memory
                .buffer(bytes, usage, MemoryLocation::GpuOnly, "instanced tree table")?;
            self.table = Some((buffer, capacity));
            self.set = None;
            let mut words = vec![EMPTY; needed * TREE_WORDS];
            for (slot, batch) in self.slots.iter().zip(batches) {
                write_trees(
                    &mut words[slot.run.start * TREE_WORDS..slot.run.end * TREE_WORDS],
                    batch,
                );
            }
            let (buffer, _) = self.table.as_ref().expect("made above");
            frame.uploads.copy_to_buffer(buffer.raw(), 0, slice_bytes(&words));
            return Ok(());
        }
        let (buffer, _) = self.table.as_ref().expect("checked above");
        let taken: Vec<Range<usize>> = changed.iter().map(|&i| self.slots[i].run.clone()).collect();
        for run in freed {
            // Only what no batch took again: a run handed out this frame gets its trees below.
            for part in uncovered(run.start.min(needed)..run.end.min(needed), &taken) {
                let words = vec![EMPTY; part.len() * TREE_WORDS];
                frame
                    .uploads
                    .copy_to_buffer(buffer.raw(), (part.start * TREE_WORDS * 4) as u64, slice_bytes(&words));
            }
        }
        for i in changed {
            let run = self.slots[i].run.clone();
            let mut words = vec![EMPTY; run.len() * TREE_WORDS];
            write_trees(&mut words, batches[i]);
            frame
                .uploads
                .copy_to_buffer(buffer.raw(), (run.start * TREE_WORDS * 4) as u64, slice_bytes(&words));
        }
        Ok(())
    }

    /// Makes the work buffer (and the frame slot's read-back copy, and the set) fit
    /// `entries` trees of `models` models.
    fn update_work(&mut self, frame: &mut Prepare<'_>, entries: usize, models: usize) -> Result<(), RenderError> {
        let buckets = buckets(models);
        if self
            .work
            .as_ref()
            .is_none_or(|(b, capacity)| *capacity < entries || b.size() < work_words(buckets, *capacity) as u64 * 4)
        {
            let capacity = entries.max(1024).next_power_of_two();
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::INDIRECT_BUFFER
                | vk::BufferUsageFlags::TRANSFER_DST
                | vk::BufferUsageFlags::TRANSFER_SRC;
            let bytes = work_words(buckets, capacity) as u64 * 4;
            let buffer = frame
                .memory
                .buffer(bytes, usage, MemoryLocation::GpuOnly, "instanced tree work")?;
            self.work = Some((buffer, capacity));
            self.set = None;
        }
        let counts = (12 * buckets * 4) as u64;
        let readback = &mut self.readback[frame.slot];
        if readback.buffer.as_ref().is_none_or(|b| b.size() != counts) {
            readback.buffer = Some(frame.memory.buffer(
                counts,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                "instanced tree counts",
            )?);
            readback.counted = None;
        }
        if self.set.is_none() {
            let (Some(m), Some((table, _)), Some((work, _))) = (&self.models, &self.table, &self.work) else {
                return Ok(());
            };
            let set = self.set_pool.allocate("vkAllocateDescriptorSets (instanced trees)")?;
            set.write(&[
                Descriptor::Storage(&m.table),
                Descriptor::Storage(&m.segments),
                Descriptor::Storage(&m.leaves),
                Descriptor::Storage(table),
                Descriptor::Storage(work),
            ]);
            self.set = Some(set);
        }
        Ok(())
    }

    /// Adds what the frame this slot last drew counted on the GPU to `stats`: its trees
    /// drawn from their models, their segments and their leaves, in view and in the shadow map.
    fn read_counts(&mut self, slot: usize, stats: &mut FrameStats) {
        let readback = &mut self.readback[slot];
        let (Some(buckets), Some(bytes)) = (
            readback.counted.take(),
            readback.buffer.as_ref().and_then(|b| b.mapped()),
        ) else {
            return;
        };
        let word = |k: usize| {
            bytes
                .get(4 * k..4 * k + 4)
                .map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap_or_default()))
        };
        // The view's buckets come first (pass 0), by level, then model.
        let view = buckets / PASSES;
        let models = buckets / (PASSES * LEVELS);
        let shrubs = self.models.as_ref().map_or(&[][..], |m| &m.shrubs[..]);
        for b in 0..view {
            let shrub = shrubs.get(b % models.max(1)).copied().unwrap_or(false);
            *(if shrub { &mut stats.shrubs } else { &mut stats.trees }) += u64::from(word(b));
            stats.cylinders += u64::from(word(3 * buckets + 5 * b + 1));
            stats.leaves += u64::from(word(8 * buckets + 4 * b + 1));
        }
        for b in view..buckets {
            stats.shadow_trees += u64::from(word(b));
            stats.shadow_parts += u64::from(word(3 * buckets + 5 * b + 1)) + u64::from(word(8 * buckets + 4 * b + 1));
        }
    }

    /// Records the frame's culling and level picking (outside rendering, after the frame's
    /// uploads, with the camera's constants), and makes its lists and commands visible to the
    /// draws and the read-back copy of its counts.
    pub fn record_cull(&mut self, rec: &Recording<'_>) {
        let Some(plan) = &self.plan else {
            return;
        };
        let readback = &mut self.readback[plan.slot];
        let (Some((buffer, _)), Some(copy), Some(set)) = (&self.work, &readback.buffer, &self.set) else {
            return;
        };
        let buckets = buckets(plan.models as usize);
        let (d, cmd) = (rec.device, rec.cmd);
        let groups = plan.entries.div_ceil(GROUP);
        let mut from = [0.0; 8];
        from[..LEVELS].copy_from_slice(&LEVEL_PIXELS);
        let mut constants = CullConstants {
            counts: [0, plan.entries, plan.models, u32::from(self.culling)],
            rings: [self.ring_parts[0][0], self.ring_parts[1][0], self.ring_parts[2][0], 0],
            ring_first: [self.ring_parts[0][1], self.ring_parts[1][1], self.ring_parts[2][1], 0],
            ring_base: [self.ring_parts[0][2], self.ring_parts[1][2], self.ring_parts[2][2], 0],
            lod: [
                card_fade(plan.pixel_scale)[0],
                plan.shadow_near,
                SHADOW_LEAF_SHARE,
                plan.shadow_reach,
            ],
            from,
            leaf: [plan.pixel_scale, LEAF_FULL_PIXELS, MIN_SHARE, LEAF_FADE],
        };
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        let shader_rw = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
        // The frame before may still draw from the work: its reads go first.
        barrier(
            rec,
            (
                vk::PipelineStageFlags::DRAW_INDIRECT
                    | vk::PipelineStageFlags::VERTEX_SHADER
                    | vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::empty(),
            ),
            (vk::PipelineStageFlags::TRANSFER | compute, vk::AccessFlags::empty()),
        );
        // SAFETY: `cmd` is recording outside rendering; the barrier above ordered the fills
        // after every earlier use of the work: the counts and the leaves asked for start at 0.
        unsafe {
            d.cmd_fill_buffer(cmd, buffer.raw(), 0, (buckets * 4) as u64, 0);
            d.cmd_fill_buffer(cmd, buffer.raw(), (12 * buckets * 4) as u64, (buckets * 4) as u64, 0);
        }
        barrier(
            rec,
            (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            (compute, shader_rw),
        );
        self.cull.bind(d, cmd, &[rec.globals, set.raw()], &constants);
        for (phase, groups) in [(0, groups), (1, 1), (2, groups)] {
            if phase > 0 {
                constants.counts[0] = phase;
                self.cull.push(d, cmd, &constants);
                barrier(rec, (compute, vk::AccessFlags::SHADER_WRITE), (compute, shader_rw));
            }
            // SAFETY: `cmd` is recording outside rendering with the cull pipeline, its sets
            // and this phase's constants bound.
            unsafe { d.cmd_dispatch(cmd, groups, 1, 1) };
        }
        barrier(
            rec,
            (compute, vk::AccessFlags::SHADER_WRITE),
            (
                vk::PipelineStageFlags::DRAW_INDIRECT
                    | vk::PipelineStageFlags::VERTEX_SHADER
                    | vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::INDIRECT_COMMAND_READ | vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ,
            ),
        );
        let region = vk::BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size: (12 * buckets * 4) as u64,
        };
        // SAFETY: both buffers are live, the copy this frame slot's; the barrier above ordered
        // the counts' writes before the copy.
        unsafe { d.cmd_copy_buffer(cmd, buffer.raw(), copy.raw(), &[region]) };
        barrier(
            rec,
            (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
            (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ),
        );
        readback.counted = Some(buckets);
    }

    /// Records the view's draws: per model with trees and per level, its segments, then its
    /// leaves.
    pub fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.draw_calls += self.record_pass(rec, 0);
    }

    /// Records the shadow map's draws (`rec` holds the sun's constants).
    pub fn record_shadow(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.shadow_draw_calls += self.record_pass(rec, 1);
    }

    /// Records pass `pass`'s draws (0 the view, 1 the shadow map); returns the draw calls.
    fn record_pass(&self, rec: &Recording<'_>, pass: usize) -> u32 {
        let Some(plan) = &self.plan else {
            return 0;
        };
        let (Some((buffer, _)), Some(set)) = (&self.work, &self.set) else {
            return 0;
        };
        let buckets = buckets(plan.models as usize);
        let lists = (13 * buckets) as u32 + plan.entries;
        let shadow = pass == 1;
        let card = if shadow { [0.0; 4] } else { card_fade(plan.pixel_scale) };
        let bucket = |level: usize, model: u32| bucket(pass, level, model as usize, plan.models as usize);
        // A level's commands lie model after model: one multi-draw covers every model (those
        // without trees draw nothing); without multi-draw, one draw per model with trees.
        let draws: Vec<(u32, u32)> = if self.multi_draw {
            vec![(0, plan.models)].into_iter().filter(|d| d.1 > 0).collect()
        } else {
            plan.present.iter().map(|&m| (m, 1)).collect()
        };
        let mut calls = 0;
        // Segments: the solid levels, then the level fading into the cards (in the shadow
        // map every level is solid).
        let groups = match shadow {
            true => vec![(&self.cylinder_shadow, 0..LEVELS)],
            false => vec![(&self.cylinders, 0..LEVELS - 1), (&self.fading, LEVELS - 1..LEVELS)],
        };
        for (pipeline, levels) in groups {
            pipeline.bind(rec);
            pipeline.bind_set(rec, 1, set.raw());
            self.rings.bind(rec);
            for level in levels {
                for &(first, count) in &draws {
                    let b = bucket(level, first);
                    pipeline.push(
                        rec,
                        &CylinderConstants {
                            draw: [(buckets + b) as u32, first, level as u32, lists],
                            fade: [0.0, 0.0, 0.0, if shadow { -1.0 } else { 1.0 }],
                            card,
                        },
                    );
                    let offset = ((3 * buckets + 5 * b) * 4) as u64;
                    // SAFETY: `rec.cmd` is recording inside rendering with this pipeline, its
                    // sets and the ring mesh bound; the culling wrote the `count` commands
                    // from `offset` (each ring's indices by its first index and vertex) and
                    // the barrier after it made them visible.
                    unsafe {
                        rec.device
                            .cmd_draw_indexed_indirect(rec.cmd, buffer.raw(), offset, count, 20)
                    };
                    calls += 1;
                }
            }
        }
        let pipeline = if shadow { &self.leaf_shadow } else { &self.leaves };
        pipeline.bind(rec);
        pipeline.bind_set(rec, 1, set.raw());
        for level in 0..LEVELS {
            for &(first, count) in &draws {
                let b = bucket(level, first);
                pipeline.push(
                    rec,
                    &LeafConstants {
                        // The word of the leaves the bucket's trees ask for, in place of the level.
                        draw: [(buckets + b) as u32, first, (12 * buckets + b) as u32, lists],
                        play: [plan.time, if shadow { plan.shadow_near } else { 0.0 }, 0.0, 0.0],
                        lod: [
                            plan.pixel_scale,
                            LEAF_FULL_PIXELS,
                            if shadow { SHADOW_LEAF_SHARE } else { MIN_SHARE },
                            LEAF_FADE,
                        ],
                        card,
                    },
                );
                let offset = ((8 * buckets + 4 * b) * 4) as u64;
                // SAFETY: as above, with the leaf pipeline.
                unsafe { rec.device.cmd_draw_indirect(rec.cmd, buffer.raw(), offset, count, 16) };
                calls += 1;
            }
        }
        calls
    }
}

/// Buckets of `models` models: per pass, level and model.
fn buckets(models: usize) -> usize {
    PASSES * LEVELS * models
}

/// The bucket of pass `pass`, level `level` and model `model` of `models`.
fn bucket(pass: usize, level: usize, model: usize, models: usize) -> usize {
    (pass * LEVELS + level) * models + model
}

/// Words of a work buffer for `buckets` buckets and `entries` table entries: per bucket a
/// count, a base, a cursor, two commands (5 and 4 words) and the leaves its trees ask for, per
/// entry its levels and its places in two lists.
fn work_words(buckets: usize, entries: usize) -> usize {
    13 * buckets + 3 * entries
}

/// A device-local storage buffer holding `bytes` (queued for upload).
fn storage(memory: &Arc<Memory>, uploads: &mut Uploads, bytes: &[u8], name: &str) -> Result<Buffer, RenderError> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST;
    let buffer = memory.buffer(bytes.len() as u64, usage, MemoryLocation::GpuOnly, name)?;
    if !bytes.is_empty() {
        uploads.copy_to_buffer(buffer.raw(), 0, bytes);
    }
    Ok(buffer)
}

/// The parts of `range` no run of `taken` covers.
fn uncovered(range: Range<usize>, taken: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut parts = vec![range];
    for t in taken {
        parts = parts
            .into_iter()
            .flat_map(|p| [p.start..p.end.min(t.start), p.start.max(t.end)..p.end])
            .filter(|p| !p.is_empty())
            .collect();
    }
    parts
}

/// `batch`'s trees as table entries: position, yaw and scale as halves, model.
fn write_trees(words: &mut [u32], batch: &TreeInstances) {
    let half = |v: f32| u32::from(half::f16::from_f32(v).to_bits());
    for (i, entry) in words.chunks_exact_mut(TREE_WORDS).enumerate().take(batch.len()) {
        let p = batch.position[i];
        entry.copy_from_slice(&[
            p.x.to_bits(),
            p.y.to_bits(),
            p.z.to_bits(),
            half(batch.yaw[i]) | (half(batch.scale[i]) << 16),
            batch.model[i],
        ]);
    }
}

/// Appends model `m`'s segments (the thickest first) and leaves (in hashed rank order) and
/// returns its entry: its bounds, its first parts and how many each level draws.
fn model_parts(m: &TreeModel, segments: &mut Vec<GpuSegment>, leaves: &mut Vec<GpuLeaf>) -> GpuModel {
    let bounds = ModelBounds::of(m);
    let height = bounds.top - bounds.bottom;
    let half_height = 0.5 * height;
    let c = &m.cylinders;
    let mut order: Vec<usize> = (0..c.len()).collect();
    let thickness = |i: usize| c.start_radius[i].max(c.end_radius[i]);
    order.sort_by(|&a, &b| thickness(b).total_cmp(&thickness(a)).then(a.cmp(&b)));
    let first_segment = segments.len() as u32;
    segments.extend(order.iter().map(|&i| GpuSegment {
        start: c.start[i].extend(c.start_radius[i]).to_array(),
        end: c.end[i].extend(c.end_radius[i]).to_array(),
        colour: [u32::from_le_bytes(c.colour[i]), 0, 0, 0],
    }));
    let l = &m.leaves;
    let mut ranked: Vec<usize> = (0..l.len()).collect();
    ranked.sort_by_key(|&i| (rank_hash(i as u32), i));
    let n = l.len().max(1) as f32;
    let first_leaf = leaves.len() as u32;
    leaves.extend(ranked.iter().enumerate().map(|(k, &i)| GpuLeaf {
        place: l.position[i].extend(l.size[i]).to_array(),
        normal: l.normal[i].extend(k as f32 / n).to_array(),
        colour: [u32::from_le_bytes(l.colour[i]), 0, 0, 0],
    }));
    let largest_leaf = l.size.iter().copied().fold(0.0f32, f32::max);
    let thickest = order.first().map_or(0.0, |&i| thickness(i));
    // Pixels on screen per metre of the model, at a tree height on screen of one pixel.
    let per_metre = if height > 0.0 {
        1.0 / (height * card_fade(1.0)[0])
    } else {
        0.0
    };
    let mut model = GpuModel {
        sphere: [
            0.0,
            bounds.bottom + half_height,
            0.0,
            (bounds.radius * bounds.radius + half_height * half_height).sqrt(),
        ],
        shape: [height, largest_leaf, 0.0, 0.0],
        first: [first_segment, first_leaf, l.len() as u32, 0],
        ..GpuModel::default()
    };
    for level in 0..LEVELS {
        // The level's largest trees on screen: no bound at level 0.
        let largest = level.checked_sub(1).map_or(f32::INFINITY, |k| LEVEL_PIXELS[k]);
        let scale = largest * per_metre;
        // The ring its thickest segment asks for there, as a batch's clusters pick rings.
        model.ring[level] = RING_FROM[1..].iter().filter(|&&px| thickest * scale >= px).count() as u32;
        let twig = order.partition_point(|&i| thickness(i) * scale >= MIN_RADIUS_PIXELS);
        model.cylinders[level] = twig.max(usize::from(!c.is_empty())) as u32;
    }
    model
}

/// A leaf's rank key: a hash of its index (murmur3's finalizer), so any prefix of the ranked
/// leaves is spread over the whole crown.
fn rank_hash(i: u32) -> u32 {
    let mut h = i.wrapping_mul(0x9E37_79B9);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sylva_runtime::glam::Vec3;

    #[test]
    fn uncovered_parts_leave_out_what_was_taken_again() {
        assert_eq!(uncovered(0..10, &[2..4, 6..8]), vec![0..2, 4..6, 8..10]);
        assert_eq!(uncovered(0..10, &[0..6, 6..10]), Vec::<Range<usize>>::new());
        assert_eq!(uncovered(5..10, &[0..3, 12..14]), vec![5..10]);
    }

    #[test]
    fn a_model_draws_fewer_parts_at_coarser_levels_thickest_first() {
        let mut m = TreeModel::default();
        for k in 0..20 {
            let r = 0.5 / (1 + k) as f32;
            m.cylinders
                .push(Vec3::ZERO, Vec3::new(0.0, 1.0 + k as f32, 0.0), r, r, [90, 60, 40, 255]);
        }
        for k in 0..100 {
            m.leaves.push(
                Vec3::new(0.0, 10.0 + 0.01 * k as f32, 0.0),
                Vec3::Y,
                0.1,
                [40, 90, 30, 255],
            );
        }
        let (mut segments, mut leaves) = (Vec::new(), Vec::new());
        let g = model_parts(&m, &mut segments, &mut leaves);
        assert_eq!((g.cylinders[0], g.first[2]), (20, 100), "level 0 draws every segment");
        assert!(g.cylinders.windows(2).all(|w| w[0] >= w[1]), "{:?}", g.cylinders);
        let last = LEVELS - 1;
        assert!(g.cylinders[last] >= 1 && g.cylinders[last] < 20, "{:?}", g.cylinders);
        assert_eq!(g.shape[1], 0.1, "the largest leaf");
        assert_eq!(g.ring[0], 2, "the finest ring nearest");
        assert!(g.ring.windows(2).all(|w| w[0] >= w[1]), "{:?}", g.ring);
        // Thickest first: the drawn prefix is the thick part of the tree.
        assert!(segments.windows(2).all(|w| w[0].start[3] >= w[1].start[3]));
        // Ranks rise along the leaves, each leaf once.
        assert!(leaves.windows(2).all(|w| w[0].normal[3] < w[1].normal[3]));
        let mut ys: Vec<u32> = leaves.iter().map(|l| l.place[1].to_bits()).collect();
        ys.sort_unstable();
        ys.dedup();
        assert_eq!(ys.len(), 100);
        // The sphere holds the tree.
        assert!(g.sphere[3] >= 0.5 * g.shape[0]);
    }

    #[test]
    fn table_entries_hold_the_tree_in_twenty_bytes() {
        let mut batch = TreeInstances::default();
        batch.push(7, Vec3::new(1.5, -2.0, 3.25), 1.0, 0.75);
        let mut words = vec![EMPTY; TREE_WORDS];
        write_trees(&mut words, &batch);
        assert_eq!(f32::from_bits(words[0]), 1.5);
        assert_eq!(f32::from_bits(words[2]), 3.25);
        assert_eq!(half::f16::from_bits(words[3] as u16).to_f32(), 1.0);
        assert_eq!(half::f16::from_bits((words[3] >> 16) as u16).to_f32(), 0.75);
        assert_eq!(words[4], 7);
    }
}
