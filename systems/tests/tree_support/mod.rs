//! Graph builders shared by the tree tests.

#![allow(dead_code)] // Each test binary uses a different subset of these helpers.

use glam::{Quat, Vec3};
use proptest::prelude::*;
use sylva_systems::tree::{BranchGraph, NO_PARENT};

/// The thesis's Fig. 6.1b tree (eq. 5.3 with Table 5.3d values) after `n` derivations, built the
/// way the thesis code's turtle builds it: a 10-unit vertical root stub, then the first `F` at
/// its end; branch depth = bracket nesting depth when the `F` is drawn. Tropism is left out
/// because it changes no count.
///
/// ```text
/// ω : /(45)A
/// p1: A -> F(ls)[&(a)F(ls)A]/(d1)[&(a)F(ls)A]/(d2)[&(a)F(ls)A]
/// p2: F(l) -> F(l*lr)        a = 31, d1 = 120, d2 = 190, lr = 1.2, ls = 50
/// ```
pub fn ternary_fig_6_1b(n: u32) -> BranchGraph {
    let mut graph = BranchGraph::new();
    let top = Vec3::new(0.0, 0.0, 10.0);
    let stub = graph.push(Vec3::ZERO, top, NO_PARENT, 0);
    let frame = Quat::from_rotation_z(45f32.to_radians());
    expand(&mut graph, 1, n, top, frame, stub, 0);
    graph
}

/// Interprets the successor of an `A` rewritten at derivation `k` (of `n`), from turtle state
/// (`position`, `frame`, current segment `node`, bracket `depth`).
fn expand(graph: &mut BranchGraph, k: u32, n: u32, position: Vec3, frame: Quat, node: u32, depth: u32) {
    if k > n {
        return;
    }
    // An F written at derivation k is elongated by p2 in each of the n − k later derivations.
    let length = 50.0 * 1.2f32.powi((n - k) as i32);
    let end = position + frame * Vec3::Z * length;
    let trunk = graph.push(position, end, node, depth);
    let mut roll = frame;
    for (b, turn) in [0.0f32, 120.0, 190.0].into_iter().enumerate() {
        if b > 0 {
            roll *= Quat::from_rotation_z(turn.to_radians());
        }
        let pitched = roll * Quat::from_rotation_x(31f32.to_radians());
        let tip = end + pitched * Vec3::Z * length;
        let branch = graph.push(end, tip, trunk, depth + 1);
        expand(graph, k + 1, n, tip, pitched, branch, depth + 1);
    }
}

/// Closed-form counts of [`ternary_fig_6_1b`] (docs/design/trees.md, "Fig. 6.1b counts"):
/// (segments, chains).
pub fn ternary_counts(n: u32) -> (usize, usize) {
    let expansions = (3usize.pow(n) - 1) / 2;
    (4 * expansions + 1, 3 * expansions + 1)
}

/// One random segment: (parent position in [0, 1) of the earlier segments, sideways tilt x and y,
/// length, whether it is a new branch (depth + 1)).
pub type SegmentGene = (f64, f32, f32, f32, bool);

/// Random tree-like graphs: every segment starts at its parent's end, turns at most about 40°
/// from it, and is 0.5 to 5 units long.
pub fn graph_genes(max_segments: usize) -> impl Strategy<Value = Vec<SegmentGene>> {
    prop::collection::vec(
        (0.0f64..1.0, -0.8f32..0.8, -0.8f32..0.8, 0.5f32..5.0, any::<bool>()),
        1..max_segments,
    )
}

/// Builds the graph a gene list describes.
pub fn graph_from_genes(genes: &[SegmentGene]) -> BranchGraph {
    let mut graph = BranchGraph::new();
    for (i, &(at, tx, ty, length, branch)) in genes.iter().enumerate() {
        if i == 0 {
            let dir = (Vec3::Z + Vec3::new(tx, ty, 0.0)).normalize();
            graph.push(Vec3::ZERO, dir * length, NO_PARENT, 0);
            continue;
        }
        let parent = ((at * i as f64) as usize).min(i - 1);
        let parent_dir = (graph.end[parent] - graph.start[parent]).normalize();
        let side = parent_dir.any_orthonormal_pair();
        let dir = (parent_dir + side.0 * tx + side.1 * ty).normalize();
        let start = graph.end[parent];
        let depth = graph.depth[parent] + u32::from(branch);
        graph.push(start, start + dir * length, parent as u32, depth);
    }
    graph
}

/// A straight polyline of `count` segments of `length` along `dir`, all depth 0.
pub fn straight(count: usize, dir: Vec3, length: f32) -> BranchGraph {
    let mut graph = BranchGraph::new();
    let mut at = Vec3::ZERO;
    for i in 0..count {
        let next = at + dir * length;
        graph.push(at, next, if i == 0 { NO_PARENT } else { i as u32 - 1 }, 0);
        at = next;
    }
    graph
}
