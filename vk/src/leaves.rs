//! Leaves as instanced alpha-tested cards. Each [`LeafBatch`] gets a device-local buffer
//! holding its arrays and a keep rank per leaf. A batch that holds still goes up in
//! cluster order (`clusters.rs`), each cluster's leaves in a hashed order whose position
//! is the rank; a frame culls each cluster and, where its leaves are smaller than
//! [`LEAF_FULL_PIXELS`], draws only a prefix of them, which the vertex shader grows to keep
//! the crown's cover: far crowns are fewer, larger cards. The picks are one indirect
//! draw per batch. The vertex shader sways the cards in the wind at the frame's time; the
//! fragment shader cuts them to a leaf shape.

use std::ops::Range;
use std::sync::Arc;

use ash::vk;
use rayon::prelude::*;
use sylva_runtime::extract::{DirtyRange, LeafBatch};

use crate::clusters::{self, Plan, gather};
use crate::cull::Aabb;
use crate::device::Device;
use crate::error::RenderError;
use crate::frame::{FrameStats, View};
use crate::impostors::card_fade;
use crate::indirect::Indirect;
use crate::instances::{Instances, packed_anchors};
use crate::pass::{BatchSlot, DrawPass, Prepare, Recording, update_slots};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::wind::SWAY;

/// Per leaf: position, normal, size, colour, keep rank, tree (`packed_anchors`).
const INSTANCE: &[Attribute] = &[
    Attribute::VEC3,
    Attribute::VEC3,
    Attribute::FLOAT,
    Attribute::RGBA8,
    Attribute::FLOAT,
    Attribute::HALF4,
];

/// Leaf length on screen, pixels, from which every leaf is drawn; below it a cluster
/// draws the share (length / this)² of its leaves, each grown by 1 / √share.
pub const LEAF_FULL_PIXELS: f32 = 6.0;
/// The smallest share of a cluster's leaves drawn (each grown 4×).
pub(crate) const MIN_SHARE: f32 = 1.0 / 16.0;
/// Leaves whose rank is within `LEAF_FADE · (share − MIN_SHARE) · (1 − share) / (1 − MIN_SHARE)`
/// of the share fade out by dither over that band instead of dropping at once. The band is
/// even about the share (as many drawn on average) and closes where the share stops changing:
/// at 1 (every leaf drawn whole) and at [`MIN_SHARE`] (far crowns, drawn at no extra cost).
pub(crate) const LEAF_FADE: f32 = 0.5;
/// How far a grown leaf card reaches from its centre, in leaf sizes (half the diagonal of
/// a card 4× grown); an ungrown card reaches less than one.
const GROWN_REACH: f32 = 3.0;

/// The push constants of the leaf pipeline (matches `leaf.vert`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct LeafConstants {
    /// x: time, seconds.
    play: [f32; 4],
    /// x: pixels per metre at 1 m; y: [`LEAF_FULL_PIXELS`]; z: [`MIN_SHARE`]; w: [`LEAF_FADE`].
    lod: [f32; 4],
    /// The trees' card fade ([`card_fade`]), zero where their trees have no cards or in the
    /// shadow map.
    card: [f32; 4],
}

// SAFETY: repr(C) of three 16-byte arrays of `f32`: no padding.
unsafe impl Pod for LeafConstants {}

// SAFETY: repr(C) of four 4-byte integers: no padding.
unsafe impl Pod for vk::DrawIndirectCommand {}

/// A run of leaves of one ground cell, ranked in GPU order.
struct LeafCluster {
    range: Range<u32>,
    bounds: Aabb,
    /// The largest leaf.
    largest: f32,
    /// Ranks rise along the range, so a prefix is a share of the leaves.
    ranked: bool,
}

/// One batch's GPU copy.
struct Slot {
    instances: Instances,
    clusters: Vec<LeafCluster>,
    /// Frames since the batch last changed.
    still: u32,
}

/// The leaf draw path.
pub(crate) struct Leaves {
    slots: Vec<Slot>,
    /// The frame's commands, and per visible slot the range of them it draws: in view, and
    /// in the shadow map (culled by what the map covers, not by the view).
    commands: Vec<vk::DrawIndirectCommand>,
    draws: Vec<(usize, Range<u32>)>,
    shadow_draws: Vec<(usize, Range<u32>)>,
    indirect: Indirect,
    constants: LeafConstants,
    /// The first slot whose trees are cards where small on screen.
    carded: usize,
    pipeline: DrawPipeline,
    shadow: DrawPipeline,
}

impl Leaves {
    /// The pipeline over the globals at set 0.
    pub fn new(device: &Arc<Device>, globals: vk::DescriptorSetLayout) -> Result<Leaves, RenderError> {
        let desc = PipelineDesc {
            vert: shaders::LEAF_VERT,
            frag: shaders::LEAF_FRAG,
            vertices: &[],
            instances: INSTANCE,
            sets: &[globals],
            push_bytes: std::mem::size_of::<LeafConstants>() as u32,
        };
        let pipeline = DrawPipeline::new(device, &desc)?;
        let shadow = DrawPipeline::shadow(device, &desc, Some(shaders::LEAF_SHADOW_FRAG))?;
        Ok(Leaves {
            slots: Vec::new(),
            commands: Vec::new(),
            draws: Vec::new(),
            shadow_draws: Vec::new(),
            indirect: Indirect::new("leaf draws", device.multi_draw),
            constants: LeafConstants::default(),
            carded: 0,
            pipeline,
            shadow,
        })
    }

    /// Appends the commands of slot `i`'s clusters and their draws: the clusters in view,
    /// and those inside what the shadow map covers. Clusters out of view count as culled.
    fn pick(&mut self, i: usize, frame: &mut Prepare<'_>, cut: f32) {
        let (mut seen, mut cast) = (Vec::new(), Vec::new());
        let eye = frame.view.camera.position;
        for c in &self.slots[i].clusters {
            let in_view = frame.view.frustum.intersects(&c.bounds) && c.bounds.distance(eye) <= cut;
            let casts = frame.sun.intersects(&c.bounds);
            frame.stats.batches_culled += u32::from(!in_view);
            if !(in_view || casts) {
                continue;
            }
            let command = vk::DrawIndirectCommand {
                vertex_count: 6,
                instance_count: c.count(frame.view),
                first_vertex: 0,
                first_instance: c.range.start,
            };
            if in_view {
                seen.push(command);
            }
            if casts {
                cast.push(command);
            }
        }
        for (list, draws) in [(seen, &mut self.draws), (cast, &mut self.shadow_draws)] {
            if !list.is_empty() {
                let first = self.commands.len() as u32;
                self.commands.extend(list);
                draws.push((i, first..self.commands.len() as u32));
            }
        }
    }
}

impl DrawPass for Leaves {
    /// Slot `i` is batch `i`; the time (seconds) moves the wind; the last slots, one per
    /// band ([`Impostors::bands`]), draw in view only the clusters nearer than its end (their
    /// trees are cards beyond), and give their pixels to the cards as those fade in.
    ///
    /// [`Impostors::bands`]: crate::impostors::Impostors::bands
    type Batch<'b> = (Vec<&'b mut LeafBatch>, f32, &'b [Range<f32>]);

    fn prepare(
        &mut self,
        frame: &mut Prepare<'_>,
        (mut batches, time, bands): Self::Batch<'_>,
    ) -> Result<(), RenderError> {
        let pixel_scale = frame.view.pixels(1.0, 1.0);
        self.constants = LeafConstants {
            play: [if time.is_finite() { time } else { 0.0 }, 0.0, 0.0, 0.0],
            lod: [pixel_scale, LEAF_FULL_PIXELS, MIN_SHARE, LEAF_FADE],
            card: card_fade(pixel_scale),
        };
        self.slots.truncate(batches.len());
        self.slots.resize_with(batches.len(), || Slot {
            instances: Instances::new(INSTANCE, "leaf instances"),
            clusters: Vec::new(),
            still: 0,
        });
        update_slots(frame, &mut self.slots, &mut batches)?;
        self.draws.clear();
        self.shadow_draws.clear();
        self.commands.clear();
        self.carded = self.slots.len().saturating_sub(bands.len());
        for i in 0..self.slots.len() {
            let cut = i.checked_sub(self.carded).and_then(|k| bands.get(k)).map(|b| b.end);
            self.pick(i, frame, cut.unwrap_or(f32::INFINITY));
        }
        self.indirect.write(frame.memory, frame.slot, &self.commands)
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.leaves += self
            .draws
            .iter()
            .flat_map(|(_, r)| &self.commands[r.start as usize..r.end as usize])
            .map(|c| u64::from(c.instance_count))
            .sum::<u64>();
        stats.draw_calls += self.record_with(&self.pipeline, rec, &self.draws, true);
    }

    fn record_shadow(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.shadow_draw_calls += self.record_with(&self.shadow, rec, &self.shadow_draws, false);
    }
}

impl Leaves {
    /// Records `draws` with `pipeline`, the leaves of trees with cards giving way to them
    /// where `with_cards`; returns the draw calls.
    fn record_with(
        &self,
        pipeline: &DrawPipeline,
        rec: &Recording<'_>,
        draws: &[(usize, Range<u32>)],
        with_cards: bool,
    ) -> u32 {
        if draws.is_empty() {
            return 0;
        }
        pipeline.bind(rec);
        let mut calls = 0;
        for (i, range) in draws {
            let cards = with_cards && *i >= self.carded;
            pipeline.push(
                rec,
                &LeafConstants {
                    card: if cards { self.constants.card } else { [0.0; 4] },
                    ..self.constants
                },
            );
            self.slots[*i].instances.bind(rec, 0);
            let commands = &self.commands[range.start as usize..range.end as usize];
            calls += self.indirect.draw(rec, range.start, commands);
        }
        calls
    }
}

impl LeafCluster {
    /// How many leaves to draw as `view` sees them: all, or the share their size on screen
    /// asks for (at the cluster's nearest point, so no leaf's own share is larger) and the
    /// fade band above it. Culling is the caller's: the view and the shadow map cull by
    /// different frusta.
    fn count(&self, view: &View) -> u32 {
        let n = self.range.len() as f32;
        if !self.ranked {
            return n as u32;
        }
        let pixels = view.pixels(self.largest, self.bounds.distance(view.camera.position));
        let share = (pixels / LEAF_FULL_PIXELS).powi(2).clamp(MIN_SHARE, 1.0);
        let faded = share + LEAF_FADE * (share - MIN_SHARE) * (1.0 - share) / (1.0 - MIN_SHARE);
        ((n * faded).ceil() as u32).clamp(1, n as u32)
    }
}

/// A batch in ranked cluster order: the batch, its ranks, its clusters ([`ranked_order`]).
type Ranked = (LeafBatch, Vec<f32>, Vec<LeafCluster>);

impl BatchSlot for Slot {
    type Batch = LeafBatch;
    type Plan = Plan<Ranked>;

    /// By [`clusters::plan`]; held in batch order, the slot draws every leaf (no ranks).
    fn plan(&mut self, batch: &mut LeafBatch) -> Plan<Ranked> {
        let reordered = self.clusters.first().is_some_and(|c| c.ranked);
        let change = (batch.dirty.take(), batch.len());
        let reorder = || {
            let (sorted, ranks, runs) = ranked_order(batch);
            let clusters = runs
                .into_par_iter()
                .map(|r| LeafCluster::new(&sorted, r, true))
                .collect();
            (sorted, ranks, clusters)
        };
        clusters::plan(&mut self.still, self.instances.len(), change, reordered, reorder)
    }

    fn apply(&mut self, frame: &mut Prepare<'_>, batch: &LeafBatch, plan: Plan<Ranked>) -> Result<(), RenderError> {
        match plan {
            Plan::Keep => {}
            Plan::Reordered((sorted, ranks, clusters)) => {
                upload(&mut self.instances, frame, &sorted, &ranks, whole(&sorted))?;
                self.clusters = clusters;
            }
            Plan::Plain(dirty) => {
                upload(&mut self.instances, frame, batch, &vec![0.0; batch.len()], dirty)?;
                self.clusters = (!batch.is_empty())
                    .then(|| LeafCluster::new(batch, 0..batch.len() as u32, false))
                    .into_iter()
                    .collect();
            }
        }
        Ok(())
    }
}

impl LeafCluster {
    /// The cluster of `range` of `batch`. Each leaf counts with its size (grown, where
    /// ranked) plus the sway, so a card never leaves its cluster's box.
    fn new(batch: &LeafBatch, range: Range<u32>, ranked: bool) -> LeafCluster {
        let mut bounds = Aabb::EMPTY;
        let mut largest = 0.0f32;
        let reach = if ranked { GROWN_REACH } else { 1.0 };
        for k in range.start as usize..range.end as usize {
            bounds.add_sphere(batch.position[k], reach * batch.size[k] + 2.0 * SWAY);
            largest = largest.max(batch.size[k]);
        }
        LeafCluster {
            range,
            bounds,
            largest,
            ranked,
        }
    }
}

/// The batch in cluster order, each cluster's leaves in a hashed order; the rank of each
/// leaf (its place in its cluster, 0 to 1); the clusters.
fn ranked_order(batch: &LeafBatch) -> (LeafBatch, Vec<f32>, Vec<Range<u32>>) {
    let hash = |i: u32| {
        let mut z = u64::from(i).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let clusters::CellOrder { order, runs } =
        clusters::order_by_cell(batch.len(), |i| batch.position[i], |i| hash(i as u32));
    let sorted = LeafBatch {
        position: gather(&batch.position, &order),
        normal: gather(&batch.normal, &order),
        size: gather(&batch.size, &order),
        colour: gather(&batch.colour, &order),
        tree: gather(&batch.tree, &order),
        ..LeafBatch::default()
    };
    let ranks = runs
        .par_iter()
        .flat_map_iter(|r| (0..r.len()).map(|k| k as f32 / r.len() as f32))
        .collect();
    (sorted, ranks, runs)
}

/// All of `batch`, as a dirty range.
fn whole(batch: &LeafBatch) -> DirtyRange {
    DirtyRange {
        start: 0,
        end: batch.len() as u32,
    }
}

/// Sends `dirty` of `batch`'s arrays and `ranks` up.
fn upload(
    instances: &mut Instances,
    frame: &mut Prepare<'_>,
    batch: &LeafBatch,
    ranks: &[f32],
    dirty: DirtyRange,
) -> Result<(), RenderError> {
    let tree = packed_anchors(&batch.tree, &batch.position);
    let arrays = [
        slice_bytes(&batch.position),
        slice_bytes(&batch.normal),
        slice_bytes(&batch.size),
        slice_bytes(&batch.colour),
        slice_bytes(ranks),
        slice_bytes(&tree),
    ];
    instances.update(frame.memory, frame.uploads, &arrays, batch.len(), dirty)?;
    Ok(())
}
