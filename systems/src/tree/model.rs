//! A grown tree as a render model: what a renderer bakes into impostor cards and places per
//! [`TreeInstances`](sylva_runtime::extract::TreeInstances) tree.

use glam::Vec3;
use sylva_runtime::extract::{CylinderBatch, LeafBatch, TreeModel};

use super::cylinders::place_cylinders;
use super::{BranchGraph, Leaves, Placement, push_leaves};

/// `graph` and its `leaves` (both in the graph's frame: Z up, graph units) as a [`TreeModel`]
/// in the tree's own frame: root at the origin, Y up, metres (`scale` metres per graph unit),
/// its segments in `bark` and its leaves in `leaf_colour`. Placed at a tree's root, it is the
/// same cylinders and leaves `spawn_tree` and `push_leaves` put there.
///
/// ```
/// use sylva_systems::tree::{BranchGraph, Leaves, NO_PARENT, model};
/// let mut graph = BranchGraph::new();
/// graph.push(glam::Vec3::ZERO, glam::Vec3::new(0.0, 0.0, 100.0), NO_PARENT, 0);
/// let m = model(&graph, &Leaves::new(), 0.01, [90, 70, 50, 255], [40, 90, 30, 255]);
/// assert_eq!(m.cylinders.end[0], glam::Vec3::new(0.0, 1.0, 0.0));
/// assert_eq!(m.cylinders.colour[0], [90, 70, 50, 255]);
/// ```
pub fn model(graph: &BranchGraph, leaves: &Leaves, scale: f32, bark: [u8; 4], leaf_colour: [u8; 4]) -> TreeModel {
    let at = Placement {
        position: Vec3::ZERO,
        scale,
    };
    let mut cylinders = CylinderBatch::default();
    place_cylinders(&mut cylinders, graph, at, |_, _| bark);
    let mut batch = LeafBatch::default();
    push_leaves(&mut batch, leaves, at, 0.0, leaf_colour);
    TreeModel {
        cylinders,
        leaves: batch,
    }
}
