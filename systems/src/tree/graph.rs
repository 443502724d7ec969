//! The branch graph: the one tree representation both generators produce.
//!
//! Segments are stored structure-of-arrays in creation order, and a parent
//! always comes before its children (`parent[i] < i`), so a forward pass
//! visits parents first and a backward pass visits children first.

use glam::Vec3;

/// Marker for "no parent" (the root segment).
pub const NO_PARENT: u32 = u32::MAX;

/// A tree as segments (a node plus the edge from its predecessor).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BranchGraph {
    /// Segment start points.
    pub start: Vec<Vec3>,
    /// Segment end points.
    pub end: Vec<Vec3>,
    /// Radius at the start of each segment.
    pub start_radius: Vec<f32>,
    /// Radius at the end of each segment.
    pub end_radius: Vec<f32>,
    /// Index of each segment's parent, or [`NO_PARENT`].
    pub parent: Vec<u32>,
    /// Branch depth Z of each segment (0 for the trunk).
    pub depth: Vec<u32>,
}

impl BranchGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when the graph has no segment.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Appends a segment with zero radii and returns its index.
    ///
    /// `parent` must be [`NO_PARENT`] or the index of an existing segment.
    pub fn push(&mut self, start: Vec3, end: Vec3, parent: u32, depth: u32) -> u32 {
        let index = self.start.len() as u32;
        debug_assert!(parent == NO_PARENT || parent < index, "parent must precede child");
        self.start.push(start);
        self.end.push(end);
        self.start_radius.push(0.0);
        self.end_radius.push(0.0);
        self.parent.push(parent);
        self.depth.push(depth);
        index
    }
}
