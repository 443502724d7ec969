//! Trees as entities: one entity per tree and one per branch segment, so
//! users can query, pick and extend trees like anything else in the world.

use glam::Vec3;
use hecs::Entity;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{CylinderBatch, LeafBatch};
use sylva_runtime::{Access, App, System};

use super::{BranchGraph, NO_PARENT, Placement, TreeError};

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
    /// One cylinder per segment, coloured by branch depth.
    pub cylinders: CylinderBatch,
    /// The leaves of the trees a scene builds (its tree and forest), world space. They are
    /// render data, not entities: builders add them when they spawn the trees, and the
    /// extraction leaves them be.
    pub leaves: LeafBatch,
    /// Segments in the world when the batch was last filled. Trees are static
    /// until they grow, so the batch is refilled only when this changes.
    segments: usize,
}

/// Bark at the trunk, lighter toward the twigs.
fn depth_colour(depth: u32) -> [u8; 4] {
    let t = (depth as f32 / 8.0).min(1.0);
    let mix = |a: f32, b: f32| (a + (b - a) * t) as u8;
    [mix(88.0, 140.0), mix(62.0, 120.0), mix(44.0, 70.0), 255]
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
            .read::<BranchDepth>()
            .write_res::<TreeBatch>(),
        |ctx| {
            let count: usize = ctx.archetypes_with::<Segment>().map(|a| a.len() as usize).sum();
            let mut batch = ctx.res_mut::<TreeBatch>();
            if count == batch.segments {
                return;
            }
            batch.segments = count;
            let out = &mut batch.cylinders;
            out.clear();
            for archetype in ctx.archetypes_with::<Segment>() {
                let segments = ctx.column::<Segment>(archetype).expect("archetype has Segment");
                let Some(depths) = ctx.column::<BranchDepth>(archetype) else {
                    continue;
                };
                for (s, d) in segments.iter().zip(depths.iter()) {
                    out.push(s.start, s.end, s.start_radius, s.end_radius, depth_colour(d.0));
                }
            }
        },
    ));
}
