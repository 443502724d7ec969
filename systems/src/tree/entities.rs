//! Trees as entities: one entity per tree and one per branch segment, so
//! users can query, pick and extend trees like anything else in the world.

use std::collections::HashMap;

use glam::Vec3;
use hecs::Entity;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{CylinderBatch, LeafBatch};
use sylva_runtime::{Access, App, System};

use super::{BranchGraph, NO_PARENT, Placement, TreeError, TreeLook};

/// A tree; its segments point at it with [`TreeMember`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// Where it stands and how its graph was scaled into the world.
    pub position: Vec3,
    /// Metres per graph unit.
    pub scale: f32,
    /// Number of segments spawned for it.
    pub segments: u32,
}

/// One branch segment in world space (metres, Y up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Start of the axis.
    pub start: Vec3,
    /// End of the axis.
    pub end: Vec3,
    /// Radius at `start`.
    pub start_radius: f32,
    /// Radius at `end`.
    pub end_radius: f32,
}

/// The segment this one grows from (absent on a tree's root segments).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentParent(pub Entity);

/// Branch depth Z of a segment (0 for the trunk).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BranchDepth(pub u32);

/// The tree a segment belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeMember(pub Entity);

/// Spawns a tree entity and one entity per segment of `graph`, placed in the
/// world by `placement`. Returns the tree entity.
///
/// Fails, spawning nothing, when the graph is invalid.
pub fn spawn_tree(world: &mut hecs::World, graph: &BranchGraph, placement: Placement) -> Result<Entity, TreeError> {
    graph.validate()?;
    let tree = world.spawn((Tree {
        position: placement.position,
        scale: placement.scale,
        segments: graph.len() as u32,
    },));
    let mut entities: Vec<Entity> = Vec::with_capacity(graph.len());
    for i in 0..graph.len() {
        let segment = Segment {
            start: placement.point(graph.start[i]),
            end: placement.point(graph.end[i]),
            start_radius: placement.length(graph.start_radius[i]),
            end_radius: placement.length(graph.end_radius[i]),
        };
        let common = (segment, BranchDepth(graph.depth[i]), TreeMember(tree));
        let entity = match graph.parent[i] {
            NO_PARENT => world.spawn(common),
            // validate() guarantees parents precede children.
            p => world.spawn((common.0, common.1, common.2, SegmentParent(entities[p as usize]))),
        };
        entities.push(entity);
    }
    Ok(tree)
}

/// Every tree segment as a cylinder: the extraction batch renderers read.
#[derive(Debug, Default)]
pub struct TreeBatch {
    /// One cylinder per segment, in its tree's bark colour ([`TreeBatch::set_bark`]).
    pub cylinders: CylinderBatch,
    /// The leaves of the trees a scene builds (its tree and forest), world space. They are
    /// render data, not entities: builders add them when they spawn the trees, and the
    /// extraction leaves them be.
    pub leaves: LeafBatch,
    /// Segments in the world when the batch was last filled. Trees are static
    /// until they grow, so the batch is refilled only when this changes.
    segments: usize,
    /// Bark colour per tree entity. It lives here, not in a component, because the look only
    /// shows: a component would be part of snapshots and state hashes. Snapshots restore
    /// entities at their own indices, so the keys stay valid across a load.
    barks: HashMap<Entity, [u8; 4]>,
}

impl TreeBatch {
    /// Colours the segments of `tree` (an entity [`spawn_tree`] returned) `bark`, its species'
    /// [`TreeLook::bark`], from the next extraction on; trees never given one wear the default
    /// look's bark.
    ///
    /// ```
    /// use sylva_systems::tree::{BranchGraph, NO_PARENT, Placement, TreeBatch, install_extraction, spawn_tree};
    /// let mut app = sylva_runtime::App::new(Default::default()).unwrap();
    /// install_extraction(&mut app);
    /// let mut graph = BranchGraph::new();
    /// graph.push(glam::Vec3::ZERO, glam::Vec3::Z, NO_PARENT, 0);
    /// let at = Placement { position: glam::Vec3::ZERO, scale: 1.0 };
    /// let tree = spawn_tree(&mut app.world.entities, &graph, at).unwrap();
    /// app.world.resources.get_mut::<TreeBatch>().unwrap().set_bark(tree, [10, 20, 30, 255]);
    /// app.advance(1);
    /// assert_eq!(app.world.resources.get::<TreeBatch>().unwrap().cylinders.colour, [[10, 20, 30, 255]]);
    /// ```
    pub fn set_bark(&mut self, tree: Entity, bark: [u8; 4]) {
        self.barks.insert(tree, bark);
        // Force a refill: the segment count alone would not notice a new colour.
        self.segments = usize::MAX;
    }
}

/// Name of the frame system [`install_extraction`] adds.
pub const EXTRACT_SYSTEM: &str = "tree.extract";

/// Registers the tree components for snapshots and adds [`EXTRACT_SYSTEM`], a
/// frame system that keeps [`TreeBatch`] in step with the segment entities.
pub fn install_extraction(app: &mut App) {
    app.world.resources.insert(TreeBatch::default());
    app.snapshot_registry_mut()
        .component::<Tree>("tree.tree")
        .component::<Segment>("tree.segment")
        .component::<SegmentParent>("tree.parent")
        .component::<BranchDepth>("tree.depth")
        .component::<TreeMember>("tree.member");
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new()
            .read::<Segment>()
            .read::<TreeMember>()
            .write_res::<TreeBatch>(),
        |ctx| {
            let count: usize = ctx.archetypes_with::<Segment>().map(|a| a.len() as usize).sum();
            let mut batch = ctx.res_mut::<TreeBatch>();
            if count == batch.segments {
                return;
            }
            batch.segments = count;
            let TreeBatch { cylinders, barks, .. } = &mut *batch;
            cylinders.clear();
            let default = TreeLook::default().bark;
            for archetype in ctx.archetypes_with::<Segment>() {
                let segments = ctx.column::<Segment>(archetype).expect("archetype has Segment");
                let Some(members) = ctx.column::<TreeMember>(archetype) else {
                    continue;
                };
                for (s, m) in segments.iter().zip(members.iter()) {
                    let bark = barks.get(&m.0).copied().unwrap_or(default);
                    cylinders.push(s.start, s.end, s.start_radius, s.end_radius, bark);
                }
            }
        },
    ));
}
