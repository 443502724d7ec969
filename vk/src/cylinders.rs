//! Branch segments (and springs) as instanced tapered cylinders. Each
//! [`CylinderBatch`] gets a device-local buffer holding its five arrays. A
//! batch that holds still is uploaded in cluster order (`clusters.rs`): each
//! cluster is culled, gets a ring for its size on screen and drops its
//! sub-pixel twigs; the frame's picks become one indirect draw per ring and
//! batch, so draw calls stay bounded whatever the tree count. Near a ring's
//! threshold an instance is drawn with both rings, and each keeps a dithered
//! share of the pixels (its push constants say which), so rings cross-fade
//! instead of popping; what is wholly one ring's is drawn by a pipeline without
//! `discard`, so depth is tested before shading (two draws per ring at most). A batch that changes every frame (springs, a tree still
//! growing) stays in batch order, one cluster, updated by its dirty ranges.

use std::ops::Range;
use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::{CylinderBatch, DirtyRange};

use crate::clusters::{self, Cluster, FADE, Plan, RING_FROM};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::Memory;
use crate::impostors::card_fade;
use crate::indirect::Indirect;
use crate::instances::{Instances, packed_anchors};
use crate::mesh::{self, Mesh};
use crate::pass::{BatchSlot, DrawPass, Prepare, Recording, update_slots};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::upload::Uploads;

/// Per instance: start, end, start radius, end radius, colour, tree (`packed_anchors`).
const INSTANCE: &[Attribute] = &[
    Attribute::VEC3,
    Attribute::VEC3,
    Attribute::FLOAT,
    Attribute::FLOAT,
    Attribute::RGBA8,
    Attribute::HALF4,
];

/// Per tube vertex: (normal in the ring plane, t, normal along the axis); see `mesh::tube`.
pub(crate) const VERTEX: &[Attribute] = &[Attribute::VEC4];

/// Ring side counts of the level-of-detail meshes, coarse to fine.
pub const SIDES: [u32; 3] = [4, 8, 16];
/// Rings of each mesh's end domes: a twig of 4 sides stays open, thick branches are round.
pub(crate) const DOME_BANDS: [u32; 3] = [0, 1, 2];

// SAFETY: repr(C) of five 4-byte integers: no padding.
unsafe impl Pod for vk::DrawIndexedIndirectCommand {}

/// The push constants of one ring's draws (matches `cylinder.vert`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RingConstants {
    /// x: the ring's threshold, pixels ([`RING_FROM`]); y: the next finer ring's (0: none);
    /// z: pixels per metre at 1 m, 0 where the slot does not fade; w: [`FADE`], negated in the
    /// shadow map (each instance drawn by one ring only).
    fade: [f32; 4],
    /// The trees' card fade ([`card_fade`]), zero where their trees have no cards or in the
    /// shadow map.
    card: [f32; 4],
}

// SAFETY: repr(C) of a 16-byte array of `f32`: no padding.
unsafe impl Pod for RingConstants {}

/// One batch's GPU copy.
struct Slot {
    instances: Instances,
    /// The larger radius of each instance, in GPU order.
    radius: Vec<f32>,
    clusters: Vec<Cluster>,
    /// Frames since the batch last changed.
    still: u32,
}

/// Groups of a slot's commands: per ring (coarse to fine), the solid ranges, then the fading.
const GROUPS: usize = 2 * SIDES.len();

/// The draws of one slot with one ring: `count` commands from `first`.
struct Draw {
    slot: usize,
    ring: usize,
    /// The slot is in cluster order, each ring's ranges reaching into its neighbours' fade
    /// bands; a slot in batch order draws each cluster whole with one ring.
    fade: bool,
    /// The commands' instances may share pixels with another ring or a card: drawn with
    /// dither.
    dither: bool,
    /// The slot's trees are cards where small on screen.
    cards: bool,
    first: u32,
    count: u32,
}

/// The cylinder draw path.
pub(crate) struct Cylinders {
    slots: Vec<Slot>,
    /// The frame's indirect commands, grouped by slot and ring: the view's, then the
    /// shadow map's (culled by what the map covers, not by the view).
    commands: Vec<vk::DrawIndexedIndirectCommand>,
    shadow_draws: Vec<Draw>,
    draws: Vec<Draw>,
    /// Where `commands` go for the GPU.
    indirect: Indirect,
    rings: Vec<Mesh>,
    /// The frame's pixels per metre at 1 m, for the shader's size on screen.
    pixel_scale: f32,
    pipeline: DrawPipeline,
    /// `pipeline` keeping each instance's dithered share of the pixels.
    fading: DrawPipeline,
    shadow: DrawPipeline,
}

impl Cylinders {
    /// The pipeline over the globals at set 0, and the ring meshes (queued for upload).
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        globals: vk::DescriptorSetLayout,
    ) -> Result<Cylinders, RenderError> {
        let desc = PipelineDesc {
            vert: shaders::CYLINDER_VERT,
            frag: shaders::LIT_FRAG,
            vertices: VERTEX,
            instances: INSTANCE,
            sets: &[globals],
            push_bytes: std::mem::size_of::<RingConstants>() as u32,
        };
        let pipeline = DrawPipeline::new(memory.device(), &desc)?;
        let fading = DrawPipeline::new(
            memory.device(),
            &PipelineDesc {
                frag: shaders::LIT_FADE_FRAG,
                ..desc
            },
        )?;
        let shadow = DrawPipeline::shadow(memory.device(), &desc, None)?;
        let rings = SIDES
            .iter()
            .zip(DOME_BANDS)
            .map(|(&sides, bands)| {
                let (v, i) = mesh::tube(sides, bands);
                Mesh::new(memory, uploads, &v, &i, "cylinder ring")
            })
            .collect::<Result<_, _>>()?;
        Ok(Cylinders {
            slots: Vec::new(),
            commands: Vec::new(),
            shadow_draws: Vec::new(),
            draws: Vec::new(),
            indirect: Indirect::new("cylinder draws", memory.device().multi_draw),
            rings,
            pixel_scale: 0.0,
            pipeline,
            fading,
            shadow,
        })
    }

    /// Appends the commands of slot `i`'s clusters, ring by ring, and their draws: the
    /// clusters in view (nearer than the end of `cards`, dithered from its start on, where
    /// trees may be fading into cards), and those inside what the shadow map covers.
    /// Clusters out of view (or too thin) count as culled in the frame's stats.
    fn pick(&mut self, i: usize, frame: &mut Prepare<'_>, cards: Option<Range<f32>>) {
        let slot = &self.slots[i];
        let eye = frame.view.camera.position;
        let mut seen: [Vec<vk::DrawIndexedIndirectCommand>; GROUPS] = Default::default();
        let mut cast: [Vec<vk::DrawIndexedIndirectCommand>; GROUPS] = Default::default();
        let band = cards.clone().unwrap_or(f32::INFINITY..f32::INFINITY);
        for c in &slot.clusters {
            let in_view = frame.view.frustum.intersects(&c.bounds) && c.bounds.distance(eye) <= band.end;
            let carding = usize::from(c.bounds.farthest(eye) >= band.start);
            let casts = frame.sun.intersects(&c.bounds);
            let rings = (in_view || casts).then(|| c.rings(frame.view, &slot.radius)).flatten();
            frame.stats.batches_culled += u32::from(!in_view || rings.is_none());
            for (ring, picked) in rings.into_iter().flatten().enumerate() {
                let [before, after] = picked.fading();
                let parts = [(picked.solid, carding), (before, 1), (after, 1)];
                for (range, group) in parts.into_iter().filter(|(r, _)| !r.is_empty()) {
                    let command = vk::DrawIndexedIndirectCommand {
                        index_count: self.rings[ring].index_count,
                        instance_count: range.len() as u32,
                        first_index: 0,
                        vertex_offset: 0,
                        first_instance: range.start,
                    };
                    if in_view {
                        seen[2 * ring + group].push(command);
                    }
                    // The shadow map draws solid and fading alike (depth only, no dither).
                    if casts {
                        cast[2 * ring].push(command);
                    }
                }
            }
        }
        let fade = slot.clusters.first().is_some_and(|c| c.sorted);
        let (at, cards) = ((i, fade), cards.is_some());
        push_draws(&mut self.commands, &mut self.draws, at, cards, seen);
        push_draws(&mut self.commands, &mut self.shadow_draws, at, cards, cast);
    }
}

/// Appends slot `slot`'s commands, group by group ([`GROUPS`]), to `commands`, and a draw per
/// group to `draws` (cross-fading where `fade`, with cards where `cards`).
fn push_draws(
    commands: &mut Vec<vk::DrawIndexedIndirectCommand>,
    draws: &mut Vec<Draw>,
    (slot, fade): (usize, bool),
    cards: bool,
    by_group: [Vec<vk::DrawIndexedIndirectCommand>; GROUPS],
) {
    for (group, ring_commands) in by_group.into_iter().enumerate().filter(|(_, c)| !c.is_empty()) {
        draws.push(Draw {
            slot,
            ring: group / 2,
            fade,
            dither: group % 2 == 1,
            cards,
            first: commands.len() as u32,
            count: ring_commands.len() as u32,
        });
        commands.extend(ring_commands);
    }
}

impl DrawPass for Cylinders {
    /// Slot `i` is batch `i`; the last slots, one per band ([`Impostors::bands`]), draw in
    /// view only the clusters nearer than its end (farther, their trees are impostor cards).
    ///
    /// [`Impostors::bands`]: crate::impostors::Impostors::bands
    type Batch<'b> = (Vec<&'b mut CylinderBatch>, &'b [Range<f32>]);

    fn prepare(&mut self, frame: &mut Prepare<'_>, (mut batches, bands): Self::Batch<'_>) -> Result<(), RenderError> {
        self.pixel_scale = frame.view.pixels(1.0, 1.0);
        self.slots.truncate(batches.len());
        self.slots.resize_with(batches.len(), || Slot {
            instances: Instances::new(INSTANCE, "cylinder instances"),
            radius: Vec::new(),
            clusters: Vec::new(),
            still: 0,
        });
        update_slots(frame, &mut self.slots, &mut batches)?;
        self.draws.clear();
        self.shadow_draws.clear();
        self.commands.clear();
        let carded = self.slots.len().saturating_sub(bands.len());
        for i in 0..self.slots.len() {
            let band = i.checked_sub(carded).and_then(|k| bands.get(k)).cloned();
            self.pick(i, frame, band);
        }
        self.indirect.write(frame.memory, frame.slot, &self.commands)
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        stats.cylinders += self
            .draws
            .iter()
            .flat_map(|d| &self.commands[d.first as usize..(d.first + d.count) as usize])
            .map(|c| u64::from(c.instance_count))
            .sum::<u64>();
        let (fading, solid): (Vec<&Draw>, Vec<&Draw>) = self.draws.iter().partition(|d| d.dither);
        stats.draw_calls += self.record_with(&self.pipeline, rec, &solid, FADE);
        stats.draw_calls += self.record_with(&self.fading, rec, &fading, FADE);
    }

    fn record_shadow(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        let all: Vec<&Draw> = self.shadow_draws.iter().collect();
        stats.shadow_draw_calls += self.record_with(&self.shadow, rec, &all, -FADE);
    }
}

impl Cylinders {
    /// Records `draws` with `pipeline` and the fade band `band` (see [`RingConstants`]); returns
    /// the draw calls.
    fn record_with(&self, pipeline: &DrawPipeline, rec: &Recording<'_>, draws: &[&Draw], band: f32) -> u32 {
        if draws.is_empty() {
            return 0;
        }
        pipeline.bind(rec);
        let mut calls = 0;
        for d in draws {
            let constants = RingConstants {
                fade: [
                    RING_FROM[d.ring],
                    RING_FROM.get(d.ring + 1).copied().unwrap_or(0.0),
                    if d.fade { self.pixel_scale } else { 0.0 },
                    band,
                ],
                card: if d.cards && band > 0.0 {
                    card_fade(self.pixel_scale)
                } else {
                    [0.0; 4]
                },
            };
            pipeline.push(rec, &constants);
            self.rings[d.ring].bind(rec);
            self.slots[d.slot].instances.bind(rec, 1);
            let commands = &self.commands[d.first as usize..(d.first + d.count) as usize];
            calls += self.indirect.draw_indexed(rec, d.first, commands);
        }
        calls
    }
}

/// A batch reordered into clusters: the batch, its radii in that order, its clusters.
type Clustered = (CylinderBatch, Vec<f32>, Vec<Cluster>);

impl BatchSlot for Slot {
    type Batch = CylinderBatch;
    type Plan = Plan<Clustered>;

    /// By [`clusters::plan`].
    fn plan(&mut self, batch: &mut CylinderBatch) -> Plan<Clustered> {
        let reordered = self.clusters.first().is_some_and(|c| c.sorted);
        let change = (batch.dirty.take(), batch.len());
        let reorder = || {
            let radius = clusters::radii(batch);
            let cells = clusters::order(batch, &radius);
            let sorted = clusters::reorder(batch, &cells.order);
            let radius = clusters::gather(&radius, &cells.order);
            let groups = clusters::clusters(&sorted, cells.runs);
            (sorted, radius, groups)
        };
        clusters::plan(&mut self.still, self.instances.len(), change, reordered, reorder)
    }

    fn apply(
        &mut self,
        frame: &mut Prepare<'_>,
        batch: &CylinderBatch,
        plan: Plan<Clustered>,
    ) -> Result<(), RenderError> {
        match plan {
            Plan::Keep => {}
            Plan::Reordered((sorted, radius, clusters)) => {
                let all = DirtyRange {
                    start: 0,
                    end: sorted.len() as u32,
                };
                upload(&mut self.instances, frame, &sorted, all)?;
                self.radius = radius;
                self.clusters = clusters;
            }
            Plan::Plain(dirty) => {
                upload(&mut self.instances, frame, batch, dirty)?;
                self.radius = clusters::radii(batch);
                self.clusters = (!batch.is_empty())
                    .then(|| clusters::whole(batch))
                    .into_iter()
                    .collect();
            }
        }
        Ok(())
    }
}

/// Sends `dirty` of `batch`'s arrays up.
fn upload(
    instances: &mut Instances,
    frame: &mut Prepare<'_>,
    batch: &CylinderBatch,
    dirty: DirtyRange,
) -> Result<(), RenderError> {
    let tree = packed_anchors(&batch.tree, &batch.start);
    let arrays = [
        slice_bytes(&batch.start),
        slice_bytes(&batch.end),
        slice_bytes(&batch.start_radius),
        slice_bytes(&batch.end_radius),
        slice_bytes(&batch.colour),
        slice_bytes(&tree),
    ];
    instances.update(frame.memory, frame.uploads, &arrays, batch.len(), dirty)?;
    Ok(())
}
