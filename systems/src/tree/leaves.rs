//! A tree's leaves beside its branch graph: Z up, turtle units, the graph's frame.

use std::ops::Range;

use glam::{Quat, Vec3};
use rayon::prelude::*;
use sylva_runtime::extract::{LeafBatch, TreeAnchor};

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
    let place = Place::new(placement, yaw);
    // Grown one leaf at a time, a batch of a large tree's leaves was copied and faulted in
    // again at every doubling.
    batch.reserve(leaves.len());
    for i in 0..leaves.len() {
        let (position, normal, size) = place.leaf(leaves, i);
        batch.push(position, normal, size, colour);
    }
}

/// One tree's leaves as [`push_many_leaves`] places them: the arguments of [`push_leaves`].
pub(crate) struct TreeLeaves<'a> {
    pub(crate) leaves: &'a Leaves,
    pub(crate) placement: Placement,
    pub(crate) yaw: f32,
    pub(crate) colour: [u8; 4],
}

/// Appends the leaves of every tree of `trees` to `batch`, as [`push_leaves`] would one tree
/// after another, into room reserved for all of them on huge pages and written tree by tree on
/// the pool: a forest's 2.3 million leaves pushed tree by tree, on one thread into arrays that
/// grew by doubling, were half of building the forest. Returns each tree's run of `batch`.
pub(crate) fn push_many_leaves(batch: &mut LeafBatch, trees: &[TreeLeaves<'_>]) -> Vec<Range<usize>> {
    let total: usize = trees.iter().map(|t| t.leaves.len()).sum();
    reserve_leaves(batch, total);
    let start = batch.len();
    let mut position = &mut batch.position.spare_capacity_mut()[..total];
    let mut normal = &mut batch.normal.spare_capacity_mut()[..total];
    let mut size = &mut batch.size.spare_capacity_mut()[..total];
    let mut colour = &mut batch.colour.spare_capacity_mut()[..total];
    let mut anchor = &mut batch.tree.spare_capacity_mut()[..total];
    let mut runs = Vec::with_capacity(trees.len());
    let mut jobs = Vec::with_capacity(trees.len());
    for t in trees {
        let n = t.leaves.len();
        let slots = (
            front(&mut position, n),
            front(&mut normal, n),
            front(&mut size, n),
            front(&mut colour, n),
            front(&mut anchor, n),
        );
        let first = runs.last().map_or(start, |r: &Range<usize>| r.end);
        runs.push(first..first + n);
        jobs.push((t, slots));
    }
    jobs.into_par_iter()
        .for_each(|(t, (position, normal, size, colour, anchor))| {
            let place = Place::new(t.placement, t.yaw);
            for i in 0..t.leaves.len() {
                let (p, n, s) = place.leaf(t.leaves, i);
                position[i].write(p);
                normal[i].write(n);
                size[i].write(s);
                colour[i].write(t.colour);
                anchor[i].write(TreeAnchor::NONE);
            }
        });
    // SAFETY: the first `total` spare slots of each array (past its own length: the fields
    // are public, so the lengths may differ) were split into one run per tree, as long as its
    // leaves, and every slot of every run was written above.
    unsafe {
        batch.position.set_len(batch.position.len() + total);
        batch.normal.set_len(batch.normal.len() + total);
        batch.size.set_len(batch.size.len() + total);
        batch.colour.set_len(batch.colour.len() + total);
        batch.tree.set_len(batch.tree.len() + total);
    }
    batch.dirty.mark(start as u32, (start + total) as u32);
    runs
}

/// The first `n` slots of `slots`, which keeps the rest.
fn front<'a, T>(slots: &mut &'a mut [T], n: usize) -> &'a mut [T] {
    let (first, rest) = std::mem::take(slots).split_at_mut(n);
    *slots = rest;
    first
}

/// A placement and a turn about the world's Y axis, as [`push_leaves`] applies them.
struct Place {
    turn: Quat,
    placement: Placement,
}

impl Place {
    fn new(placement: Placement, yaw: f32) -> Self {
        Place {
            turn: Quat::from_rotation_y(yaw),
            placement,
        }
    }

    /// Leaf `i` of `leaves` in the world: its centre, normal and length.
    fn leaf(&self, leaves: &Leaves, i: usize) -> (Vec3, Vec3, f32) {
        let offset = self.turn * UpAxis::Z.to_y_up(leaves.position[i]) * self.placement.scale;
        let normal = self.turn * UpAxis::Z.to_y_up(leaves.normal[i]);
        (
            self.placement.position + offset,
            normal,
            self.placement.length(leaves.size[i]),
        )
    }
}

/// Room in `batch` for `additional` more leaves, on huge pages where an array fills at least
/// one ([`reserve_huge`]).
fn reserve_leaves(batch: &mut LeafBatch, additional: usize) {
    reserve_huge(&mut batch.position, additional);
    reserve_huge(&mut batch.normal, additional);
    reserve_huge(&mut batch.size, additional);
    reserve_huge(&mut batch.colour, additional);
    reserve_huge(&mut batch.tree, additional);
}
