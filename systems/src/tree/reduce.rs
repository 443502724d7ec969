//! Curve reduction (thesis eq. 3.8, "Kurvenreduktion"): merge nearly collinear segments.

use sylva_runtime::FieldError;

use super::{BranchGraph, NO_PARENT, TreeError};

/// Returns a copy of `graph` in which every node with exactly one child is removed when the
/// cosine between its incoming and outgoing segment exceeds `max_k`.
///
/// As in the thesis code \[C\], a segment keeps absorbing its only child (whatever that child's
/// depth) while the test passes, comparing against its own direction recomputed from its start to
/// its new end; the merged segment keeps its own start, depth and start radius and takes the
/// absorbed segment's end and end radius. Surviving segments keep their relative order, so parents still precede children.
///
/// Also as in \[C\], only `0 < max_k < 1` reduces anything (1.0 is "off"). A zero-length segment
/// has no direction, so its cosine counts as 0 and it is never merged for `max_k > 0`.
///
/// Fails when `max_k` is not finite or the graph is invalid.
pub fn reduce_curves(graph: &BranchGraph, max_k: f32) -> Result<BranchGraph, TreeError> {
    if !max_k.is_finite() {
        return Err(FieldError::new("curve_reduction", format!("is {max_k}, must be in [0, 1]")).into());
    }
    graph.validate()?;
    if !merges(max_k) {
        return Ok(graph.clone());
    }
    let mut out = BranchGraph::new();
    reduce_valid(graph, max_k, &mut out);
    Ok(out)
}

/// Whether `max_k` can merge anything (see [`reduce_curves`]).
pub(crate) fn merges(max_k: f32) -> bool {
    max_k > 0.0 && max_k < 1.0
}

/// [`reduce_curves`] of a valid graph with a `max_k` that [`merges`], into `out`.
pub(crate) fn reduce_valid(graph: &BranchGraph, max_k: f32, out: &mut BranchGraph) {
    out.clear();
    let n = graph.len();
    let children = graph.children();
    // For each segment: its index in the output, or for an absorbed segment the output index of
    // the segment that absorbed it (its representative).
    let mut new_index = vec![NO_PARENT; n];
    let mut absorbed = vec![false; n];
    for i in 0..n {
        if absorbed[i] {
            continue;
        }
        let index = out.len() as u32;
        new_index[i] = index;
        let start = graph.start[i];
        let mut last = i;
        while let [only] = children.of(last as u32) {
            let child = *only as usize;
            let incoming = (graph.end[last] - start).normalize_or_zero();
            let outgoing = (graph.end[child] - graph.start[child]).normalize_or_zero();
            if incoming.dot(outgoing) <= max_k {
                break;
            }
            absorbed[child] = true;
            new_index[child] = index;
            last = child;
        }
        let parent = match graph.parent[i] {
            NO_PARENT => NO_PARENT,
            p => new_index[p as usize],
        };
        out.push(start, graph.end[last], parent, graph.depth[i]);
        out.start_radius[index as usize] = graph.start_radius[i];
        out.end_radius[index as usize] = graph.end_radius[last];
    }
}
