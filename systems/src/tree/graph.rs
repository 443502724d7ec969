//! The branch graph: the one tree representation both generators produce.
//!
//! Segments are stored structure-of-arrays in creation order, and a parent
//! always comes before its children (`parent[i] < i`), so a forward pass
//! visits parents first and a backward pass visits children first.

use glam::Vec3;

use super::TreeError;

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

    /// Removes every segment, keeping the allocations.
    pub fn clear(&mut self) {
        self.start.clear();
        self.end.clear();
        self.start_radius.clear();
        self.end_radius.clear();
        self.parent.clear();
        self.depth.clear();
    }

    /// Room for `additional` more segments in every buffer.
    pub fn reserve(&mut self, additional: usize) {
        self.start.reserve(additional);
        self.end.reserve(additional);
        self.start_radius.reserve(additional);
        self.end_radius.reserve(additional);
        self.parent.reserve(additional);
        self.depth.reserve(additional);
    }

    /// Sets the length of every buffer to `len`.
    ///
    /// # Safety
    ///
    /// The first `len` elements of every buffer must be initialized, as for [`Vec::set_len`]
    /// (`len` within each capacity, written through its spare capacity).
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        // SAFETY: the caller vouches for the first `len` of every buffer.
        unsafe {
            self.start.set_len(len);
            self.end.set_len(len);
            self.start_radius.set_len(len);
            self.end_radius.set_len(len);
            self.parent.set_len(len);
            self.depth.set_len(len);
        }
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

    /// Every graph of `graphs` in one graph, in order: each graph's segments, radii included,
    /// follow the previous graph's, with its parent indices shifted by as much, so each keeps
    /// its own root. Space colonization grows one graph per root; meshing and export take the
    /// whole stand as one.
    pub fn merge(graphs: &[BranchGraph]) -> BranchGraph {
        let mut all = BranchGraph::new();
        for g in graphs {
            let offset = all.len() as u32;
            all.start.extend_from_slice(&g.start);
            all.end.extend_from_slice(&g.end);
            all.start_radius.extend_from_slice(&g.start_radius);
            all.end_radius.extend_from_slice(&g.end_radius);
            all.parent.extend(g.parent.iter().map(|&p| match p {
                NO_PARENT => NO_PARENT,
                p => p + offset,
            }));
            all.depth.extend_from_slice(&g.depth);
        }
        all
    }
}

impl BranchGraph {
    /// Checks the invariants every tree operation relies on: equal column lengths, each parent
    /// before its child, finite positions, finite non-negative radii, and an index range that
    /// fits `u32`.
    pub fn validate(&self) -> Result<(), TreeError> {
        let n = self.start.len();
        let columns = [
            ("end", self.end.len()),
            ("start_radius", self.start_radius.len()),
            ("end_radius", self.end_radius.len()),
            ("parent", self.parent.len()),
            ("depth", self.depth.len()),
        ];
        for (column, found) in columns {
            if found != n {
                return Err(TreeError::RaggedColumns {
                    column,
                    expected: n,
                    found,
                });
            }
        }
        // `NO_PARENT` itself is reserved, so the largest usable index is one below it.
        if n as u64 >= u64::from(NO_PARENT) {
            return Err(TreeError::TooLarge {
                what: "segment",
                count: n as u64,
            });
        }
        // Every tree operation validates its graph, so the common case, a valid graph, is scanned
        // without an early exit (which keeps the loops vectorizable) and the first offender is
        // looked up only when there is one.
        let parents_ok = self.parent.iter().enumerate().fold(true, |ok, (segment, &parent)| {
            ok & (parent == NO_PARENT || (parent as usize) < segment)
        });
        if !parents_ok {
            for (segment, &parent) in self.parent.iter().enumerate() {
                if parent != NO_PARENT && parent as usize >= segment {
                    return Err(TreeError::ParentOrder { segment, parent });
                }
            }
        }
        let finite = |points: &[Vec3]| points.iter().fold(true, |ok, p| ok & p.is_finite());
        let radius_ok = |r: f32| r.is_finite() & (r >= 0.0);
        let radii_ok = |radii: &[f32]| radii.iter().fold(true, |ok, &r| ok & radius_ok(r));
        if finite(&self.start) && finite(&self.end) && radii_ok(&self.start_radius) && radii_ok(&self.end_radius) {
            return Ok(());
        }
        let bad_point = |what, points: &[Vec3]| {
            points
                .iter()
                .position(|p| !p.is_finite())
                .map(|segment| TreeError::BadValue {
                    segment,
                    what,
                    value: format!("{}", points[segment]),
                    rule: "finite",
                })
        };
        let bad_radius = |what, radii: &[f32]| {
            radii
                .iter()
                .position(|&r| !radius_ok(r))
                .map(|segment| TreeError::BadValue {
                    segment,
                    what,
                    value: format!("{}", radii[segment]),
                    rule: "finite and non-negative",
                })
        };
        let problem = bad_point("start", &self.start)
            .or_else(|| bad_point("end", &self.end))
            .or_else(|| bad_radius("start_radius", &self.start_radius))
            .or_else(|| bad_radius("end_radius", &self.end_radius));
        problem.map_or(Ok(()), Err)
    }

    /// The children of every segment, in index order (which is creation order, so a turtle's
    /// first child stays first).
    ///
    /// A parent index that does not precede its child is ignored rather than trusted, so this
    /// never panics; [`BranchGraph::validate`] reports such graphs.
    pub fn children(&self) -> Children {
        let n = self.parent.len();
        let valid = |child: usize, parent: u32| parent != NO_PARENT && (parent as usize) < child;
        // Counting sort into CSR: offsets[p]..offsets[p + 1] are p's children.
        let mut offsets = vec![0u32; n + 1];
        for (child, &parent) in self.parent.iter().enumerate() {
            if valid(child, parent) {
                offsets[parent as usize + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut list = vec![0u32; offsets[n] as usize];
        for (child, &parent) in self.parent.iter().enumerate() {
            if valid(child, parent) {
                let slot = &mut fill[parent as usize];
                list[*slot as usize] = child as u32;
                *slot += 1;
            }
        }
        Children { offsets, list }
    }
}

/// Children of each segment as one compressed array (CSR), built by [`BranchGraph::children`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Children {
    offsets: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    /// The children of `segment` in index order; empty for a leaf or an unknown segment.
    pub fn of(&self, segment: u32) -> &[u32] {
        let i = segment as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.list[a as usize..b as usize],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trunk with one branch, its radii set, at `x`.
    fn two_segments(x: f32) -> BranchGraph {
        let mut g = BranchGraph::new();
        let trunk = g.push(Vec3::new(x, 0.0, 0.0), Vec3::new(x, 0.0, 1.0), NO_PARENT, 0);
        g.push(Vec3::new(x, 0.0, 1.0), Vec3::new(x, 1.0, 2.0), trunk, 1);
        g.start_radius = vec![0.3, 0.2];
        g.end_radius = vec![0.25, 0.1];
        g
    }

    #[test]
    fn merge_keeps_each_tree_with_its_own_root() {
        let (a, b) = (two_segments(0.0), two_segments(5.0));
        let all = BranchGraph::merge(&[a.clone(), b.clone()]);
        assert_eq!(all.len(), 4);
        assert_eq!(all.parent, [NO_PARENT, 0, NO_PARENT, 2]);
        assert_eq!(all.depth, [0, 1, 0, 1]);
        assert_eq!(all.start[2..], b.start[..]);
        assert_eq!(all.end[..2], a.end[..]);
        assert_eq!(all.start_radius, [0.3, 0.2, 0.3, 0.2]);
        assert_eq!(all.end_radius, [0.25, 0.1, 0.25, 0.1]);
        all.validate().unwrap();
        assert_eq!(BranchGraph::merge(std::slice::from_ref(&a)), a);
        assert!(BranchGraph::merge(&[]).is_empty());
    }
}
