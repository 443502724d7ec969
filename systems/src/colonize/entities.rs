//! Colonization in the world: attractors as entities and a tree that grows while the app runs.
//!
//! [`spawn_colonizing`] puts a [`Colonizer`] into the world: one entity holding it
//! ([`Colonizing`]), one [`Tree`] entity per root, one segment entity per grown segment and one
//! [`Attractor`] entity per live attractor. [`install`] adds `colonize.grow`, a fixed-step system
//! that advances every colonizer a few iterations per step, spawns the new segments, refreshes
//! the pipe-model radii of the grown ones and despawns killed attractors, all through its
//! command buffer; and `colonize.attractors.extract`, a frame system that keeps
//! [`AttractorBatch`] (a `PointBatch` for renderers) in step with the attractor entities.
//!
//! Grown segments carry [`GrownSegment`] (their graph index and their parent's) instead of
//! `SegmentParent`: entities spawned through a command buffer get their ids only after the stage,
//! and the graph index is what links them to the colonizer's graph anyway.

use glam::Vec3;
use hecs::Entity;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::PointBatch;
use sylva_runtime::{Access, App, System};

use super::Colonizer;
use crate::tree::{BranchDepth, BranchGraph, Placement, RadiusParams, Segment, Tree, TreeMember, compute_radii};

/// An attractor point in the world (metres, Y up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attractor {
    /// World position.
    pub position: Vec3,
    /// Its index in the colonizer's attractors.
    pub index: u32,
    /// The entity holding the colonizer it feeds.
    pub colonizer: Entity,
}

/// A segment grown by a colonizer: where it sits in the colonizer's graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrownSegment {
    /// The entity holding the colonizer.
    pub colonizer: Entity,
    /// Which of the colonizer's graphs (one per root).
    pub graph: u32,
    /// The segment's index in that graph.
    pub index: u32,
    /// Its parent's index (`tree::NO_PARENT` for the trunk).
    pub parent: u32,
}

/// A colonizer growing in the world, a few iterations per fixed step.
///
/// In snapshots the colonizer is kept as its inputs and iteration count and regrown on load
/// (see `replay.rs`); the sized copies are rebuilt when the tree next grows.
#[derive(Serialize, Deserialize)]
pub struct Colonizing {
    colonizer: Colonizer,
    placement: Placement,
    radii: RadiusParams,
    /// Iterations run per fixed step (0 pauses growth).
    pub iterations_per_step: u32,
    /// The tree entity of each graph and the segments spawned for it so far.
    trees: Vec<(Entity, usize)>,
    attractors: Vec<Entity>,
    /// Entries of `Colonizer::killed` already despawned.
    kills_seen: usize,
    /// Per graph: a copy with pipe-model radii, refreshed when it grows.
    #[serde(skip)]
    sized: Vec<BranchGraph>,
}

impl Colonizing {
    /// The colonizer.
    pub fn colonizer(&self) -> &Colonizer {
        &self.colonizer
    }
}

/// Every live attractor as a point, for renderers.
#[derive(Debug, Default)]
pub struct AttractorBatch {
    /// One point per attractor entity.
    pub points: PointBatch,
    /// Attractor entities when the batch was last filled.
    count: usize,
}

/// Attractor colour: a pale green, so clouds read as foliage-to-be.
const ATTRACTOR_COLOUR: [u8; 4] = [150, 220, 120, 255];

/// Spawns `colonizer` into `world` as described in the module docs and returns the entity
/// holding it. Segments already grown (at least the trunks) are spawned at once.
pub fn spawn_colonizing(
    world: &mut hecs::World,
    colonizer: Colonizer,
    placement: Placement,
    radii: RadiusParams,
    iterations_per_step: u32,
) -> Entity {
    let holder = world.spawn(());
    // Indexed by attractor; those already dead never get an entity.
    let mut attractors = vec![Entity::DANGLING; colonizer.attractors().len()];
    for (i, slot) in attractors.iter_mut().enumerate() {
        if colonizer.is_alive(i) {
            *slot = world.spawn((Attractor {
                position: placement.point(colonizer.attractors()[i]),
                index: i as u32,
                colonizer: holder,
            },));
        }
    }
    let trees = (0..colonizer.graphs().len())
        .map(|_| {
            let tree = world.spawn((Tree {
                position: placement.position,
                scale: placement.scale,
                segments: 0,
            },));
            (tree, 0)
        })
        .collect();
    let mut c = Colonizing {
        kills_seen: colonizer.killed().len(),
        colonizer,
        placement,
        radii,
        iterations_per_step,
        trees,
        attractors,
        sized: Vec::new(),
    };
    let mut spawned = Vec::new();
    c.new_segments(holder, &mut spawned);
    for bundle in spawned {
        world.spawn(bundle);
    }
    for &(tree, n) in &c.trees {
        if let Ok(mut t) = world.get::<&mut Tree>(tree) {
            t.segments = n as u32;
        }
    }
    world
        .insert_one(holder, c)
        .expect("the holder was spawned above and nothing despawned it");
    holder
}

type SegmentBundle = (Segment, BranchDepth, TreeMember, GrownSegment);

impl Colonizing {
    /// Bundles for the segments grown since the last call, with radii of the current graph, and
    /// for each graph whether it grew.
    fn new_segments(&mut self, holder: Entity, out: &mut Vec<SegmentBundle>) -> Vec<bool> {
        self.sized.resize_with(self.colonizer.graphs().len(), BranchGraph::new);
        let mut grew = Vec::with_capacity(self.trees.len());
        for (g, graph) in self.colonizer.graphs().iter().enumerate() {
            let (tree, done) = self.trees[g];
            grew.push(done < graph.len());
            if done == graph.len() {
                continue;
            }
            size(&mut self.sized[g], graph, &self.radii);
            for i in done..graph.len() {
                out.push((
                    self.segment(g, i),
                    BranchDepth(graph.depth[i]),
                    TreeMember(tree),
                    GrownSegment {
                        colonizer: holder,
                        graph: g as u32,
                        index: i as u32,
                        parent: graph.parent[i],
                    },
                ));
            }
            self.trees[g].1 = graph.len();
        }
        grew
    }

    /// Segment `i` of graph `graph`, as last sized.
    fn segment(&self, graph: usize, i: usize) -> Segment {
        let (g, p) = (&self.sized[graph], self.placement);
        Segment {
            start: p.point(g.start[i]),
            end: p.point(g.end[i]),
            start_radius: p.length(g.start_radius[i]),
            end_radius: p.length(g.end_radius[i]),
        }
    }
}

/// `out` = `graph` with pipe-model radii; parameters `compute_radii` rejects leave every radius
/// at the leaf radius, so a growing tree is still drawn.
fn size(out: &mut BranchGraph, graph: &BranchGraph, radii: &RadiusParams) {
    out.clone_from(graph);
    if compute_radii(out, radii).is_err() {
        out.start_radius.fill(radii.leaf_radius);
        out.end_radius.fill(radii.leaf_radius);
    }
}

/// Name of the fixed-step system [`install`] adds: it grows the colonizers.
pub const GROW_SYSTEM: &str = "colonize.grow";

/// Name of the frame system [`install`] adds: it fills the [`AttractorBatch`].
pub const EXTRACT_SYSTEM: &str = "colonize.attractors.extract";

/// Adds [`GROW_SYSTEM`] and [`EXTRACT_SYSTEM`] (see the module docs), the
/// [`AttractorBatch`] resource, and the colonizers, attractors and grown segments to snapshots.
pub fn install(app: &mut App) {
    app.world.resources.insert(AttractorBatch::default());
    app.snapshot_registry_mut()
        .component::<Colonizing>("colonize.colonizing")
        .component::<Attractor>("colonize.attractor")
        .component::<GrownSegment>("colonize.segment");
    let mut spawned = Vec::new();
    app.add_system(System::new(
        GROW_SYSTEM,
        Access::new()
            .write::<Colonizing>()
            .write::<Tree>()
            .write::<Segment>()
            .read::<GrownSegment>(),
        move |ctx| {
            for (holder, c) in ctx.query::<(Entity, &mut Colonizing)>().iter() {
                if c.iterations_per_step == 0 || c.colonizer.termination().is_some() {
                    continue;
                }
                c.colonizer.step(c.iterations_per_step);
                spawned.clear();
                let grew = c.new_segments(holder, &mut spawned);
                let mut commands = ctx.commands();
                for &a in &c.colonizer.killed()[c.kills_seen..] {
                    commands.despawn(c.attractors[a as usize]);
                }
                c.kills_seen = c.colonizer.killed().len();
                for bundle in spawned.drain(..) {
                    commands.spawn(bundle);
                }
                drop(commands);
                if !grew.contains(&true) {
                    continue;
                }
                let mut trees = ctx.query::<&mut Tree>();
                let mut trees = trees.view();
                for &(tree, n) in &c.trees {
                    if let Some(t) = trees.get_mut(tree) {
                        t.segments = n as u32;
                    }
                }
                // Growth thickens every ancestor of a new tip (pipe model): refresh the radii of the
                // segments already in the world for each graph that grew.
                for (seg, grown) in ctx.query::<(&mut Segment, &GrownSegment)>().iter() {
                    if grown.colonizer == holder && grew[grown.graph as usize] {
                        *seg = c.segment(grown.graph as usize, grown.index as usize);
                    }
                }
            }
        },
    ));
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new().read::<Attractor>().write_res::<AttractorBatch>(),
        |ctx| {
            let count: usize = ctx.archetypes_with::<Attractor>().map(|a| a.len() as usize).sum();
            let mut batch = ctx.res_mut::<AttractorBatch>();
            if count == batch.count {
                return;
            }
            batch.count = count;
            batch.points.clear();
            for archetype in ctx.archetypes_with::<Attractor>() {
                let column = ctx.column::<Attractor>(archetype).expect("archetype has Attractor");
                for a in column.iter() {
                    batch.points.push(a.position, ATTRACTOR_COLOUR);
                }
            }
        },
    ));
}
