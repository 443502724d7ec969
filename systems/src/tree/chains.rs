//! Chains: runs of same-depth segments that the mesh draws as one generalized cylinder.

use super::graph::Children;
use super::{BranchGraph, NO_PARENT, TreeError};

/// A partition of a graph's segments into chains, stored compressed (CSR).
///
/// Built as the thesis code \[C\] does, so that vertex counts match the thesis: segments are visited
/// in pre-order (roots in index order, children in index order); each segment not yet in a chain
/// starts one, which continues through the segment's **first child with the same depth**, then
/// that child's first same-depth child, and so on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chains {
    offsets: Vec<u32>,
    segments: Vec<u32>,
}

impl Chains {
    /// Partitions `graph` into chains; fails when the graph is invalid.
    pub fn build(graph: &BranchGraph) -> Result<Self, TreeError> {
        graph.validate()?;
        Ok(Self::with_children(graph, &graph.children()))
    }

    /// The partition of a graph that has passed [`BranchGraph::validate`].
    pub(crate) fn with_children(graph: &BranchGraph, children: &Children) -> Self {
        let n = graph.len();
        let mut in_chain = vec![false; n];
        let mut offsets = Vec::with_capacity(n / 2 + 2);
        offsets.push(0u32);
        let mut segments = Vec::with_capacity(n);
        let mut stack: Vec<u32> = Vec::new();
        for root in (0..n).filter(|&i| graph.parent[i] == NO_PARENT) {
            stack.push(root as u32);
            while let Some(s) = stack.pop() {
                if !in_chain[s as usize] {
                    let mut current = s;
                    loop {
                        in_chain[current as usize] = true;
                        segments.push(current);
                        let depth = graph.depth[current as usize];
                        match children.of(current).iter().find(|&&c| graph.depth[c as usize] == depth) {
                            Some(&next) => current = next,
                            None => break,
                        }
                    }
                    offsets.push(segments.len() as u32);
                }
                // Reversed, so the first child is popped (visited) first.
                stack.extend(children.of(s).iter().rev());
            }
        }
        Self { offsets, segments }
    }

    /// One chain per listed segment, for the fractal mesh.
    pub(crate) fn singletons(segments: Vec<u32>) -> Self {
        Self {
            offsets: (0..=segments.len() as u32).collect(),
            segments,
        }
    }

    /// Number of chains.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there is no chain (the graph is empty).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The segments of chain `chain`, from its base to its tip; empty if out of range.
    pub fn get(&self, chain: usize) -> &[u32] {
        match (self.offsets.get(chain), self.offsets.get(chain + 1)) {
            (Some(&a), Some(&b)) => &self.segments[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The chains in construction order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.offsets
            .windows(2)
            .map(|w| &self.segments[w[0] as usize..w[1] as usize])
    }

    /// Total number of segments over all chains (every segment of the graph, once).
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }
}
