//! Tree segments as instanced cylinders: the renderer's view of a tree.

use std::ops::Range;

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::CylinderBatch;

use super::{BranchGraph, TreeError, UpAxis};

/// Where a tree stands in the world.
///
/// Branch graphs are Z-up in turtle units (the thesis's frame); the world is
/// Y-up in metres. A placement maps one to the other.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// World position of the graph's origin (the root), metres.
    pub position: Vec3,
    /// Metres per graph unit.
    pub scale: f32,
}

impl Placement {
    /// World position of graph point `p`.
    pub fn point(&self, p: Vec3) -> Vec3 {
        self.position + UpAxis::Z.to_y_up(p) * self.scale
    }

    /// World length of graph length `r` (radii).
    pub fn length(&self, r: f32) -> f32 {
        r * self.scale
    }
}

/// Appends one cylinder per segment of `graph`, placed by `placement` and
/// coloured by `colour(segment index, depth)`, and marks them dirty. Returns
/// the range of the new instances.
///
/// Fails, appending nothing, when the graph is invalid.
pub fn push_cylinders(
    batch: &mut CylinderBatch,
    graph: &BranchGraph,
    placement: Placement,
    mut colour: impl FnMut(usize, u32) -> [u8; 4],
) -> Result<Range<usize>, TreeError> {
    graph.validate()?;
    let first = batch.len();
    place_cylinders(batch, graph, placement, &mut colour);
    Ok(first..batch.len())
}

/// [`push_cylinders`] of a graph known to be valid.
pub(super) fn place_cylinders(
    batch: &mut CylinderBatch,
    graph: &BranchGraph,
    placement: Placement,
    mut colour: impl FnMut(usize, u32) -> [u8; 4],
) {
    for i in 0..graph.len() {
        batch.push(
            placement.point(graph.start[i]),
            placement.point(graph.end[i]),
            placement.length(graph.start_radius[i]),
            placement.length(graph.end_radius[i]),
            colour(i, graph.depth[i]),
        );
    }
}
