//! Branching-angle smoothing, the corrected thesis eq. 3.4/3.5.

use crate::tree::{BranchGraph, NO_PARENT};

/// Moves the end of every successor of a fork (a segment with more than one child) halfway
/// toward the mean of those ends, and starts every child at its parent's (possibly moved) end.
///
/// Eq. 3.5 as printed would put all successors on one point; this is the thesis code's version.
/// Parents precede children, so one forward pass sees each parent's final end.
pub fn smooth_branching(graph: &mut BranchGraph) {
    let children = graph.children();
    for i in 0..graph.len() {
        let kids = children.of(i as u32);
        if kids.len() > 1 {
            let mean = kids.iter().fold(glam::Vec3::ZERO, |a, &c| a + graph.end[c as usize]) / kids.len() as f32;
            for &c in kids {
                let e = &mut graph.end[c as usize];
                *e += (mean - *e) * 0.5;
            }
        }
        if graph.parent[i] != NO_PARENT {
            graph.start[i] = graph.end[graph.parent[i] as usize];
        }
    }
}
