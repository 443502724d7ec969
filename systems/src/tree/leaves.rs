//! A tree's leaves beside its branch graph: Z up, turtle units, the graph's frame.

use glam::Vec3;
use sylva_runtime::extract::LeafBatch;

use super::{Placement, UpAxis};
use crate::pages::reserve_huge;

/// Leaves as structure-of-arrays, in the frame of the [`BranchGraph`](super::BranchGraph) they
/// grow on (Z up, graph units). The graph never depends on them: growing leaves leaves every
/// segment as it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Leaves {
    /// Leaf centres.
    pub position: Vec<Vec3>,
    /// Unit normals of the leaf planes.
    pub normal: Vec<Vec3>,
    /// Leaf lengths, graph units.
    pub size: Vec<f32>,
}

impl Leaves {
    /// No leaves.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// True when there is no leaf.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Removes every leaf, keeping the allocations.
    pub fn clear(&mut self) {
        self.position.clear();
        self.normal.clear();
        self.size.clear();
    }

    /// Makes room for at least `additional` more leaves, as [`Vec::reserve`] does for each array.
    ///
    /// ```
    /// # use sylva_systems::tree::Leaves;
    /// let mut leaves = Leaves::new();
    /// leaves.reserve(100);
    /// assert!(leaves.position.capacity() >= 100 && leaves.size.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.position.reserve(additional);
        self.normal.reserve(additional);
        self.size.reserve(additional);
    }

    /// Appends a leaf.
    pub fn push(&mut self, position: Vec3, normal: Vec3, size: f32) {
        self.position.push(position);
        self.normal.push(normal);
        self.size.push(size);
    }

    /// Appends every leaf of `other`.
    pub fn extend(&mut self, other: &Leaves) {
        self.position.extend_from_slice(&other.position);
        self.normal.extend_from_slice(&other.normal);
        self.size.extend_from_slice(&other.size);
    }
}

/// Appends every leaf of `leaves` to `batch`, turned by `yaw` radians about the world's Y axis
/// and placed by `placement` (the one change of frame, Z-up graph units to Y-up metres, that
/// cylinders go through too), coloured `colour`.
pub fn push_leaves(batch: &mut LeafBatch, leaves: &Leaves, placement: Placement, yaw: f32, colour: [u8; 4]) {
    let turn = glam::Quat::from_rotation_y(yaw);
    // Grown one leaf at a time, a batch of a large tree's leaves was copied and faulted in
    // again at every doubling.
    batch.reserve(leaves.len());
    for i in 0..leaves.len() {
        let offset = turn * UpAxis::Z.to_y_up(leaves.position[i]) * placement.scale;
        let normal = turn * UpAxis::Z.to_y_up(leaves.normal[i]);
        batch.push(
            placement.position + offset,
            normal,
            placement.length(leaves.size[i]),
            colour,
        );
    }
}

/// Room in `batch` for `additional` more leaves, pushed at once (a forest's), on huge pages
/// where an array fills at least one ([`reserve_huge`]): a forest's millions of leaves grown tree
/// by tree were copied and faulted in again at every doubling, half of building the forest.
pub(crate) fn reserve_leaves(batch: &mut LeafBatch, additional: usize) {
    reserve_huge(&mut batch.position, additional);
    reserve_huge(&mut batch.normal, additional);
    reserve_huge(&mut batch.size, additional);
    reserve_huge(&mut batch.colour, additional);
    reserve_huge(&mut batch.tree, additional);
}
