//! Measures of the drainage of any heightfield: how much of it one river
//! drains, where water leaves, its closed depressions, Hack's exponent and
//! drainage density. For checking solved basins and, as well, finished
//! chunk-scale terrain.

use serde::Serialize;

use super::MAX_NODES;
use super::flow::{Fill, Filler, Flow, Shape, is_diagonal};

/// A closed depression counts when its deepest cell lies more than this many
/// metres below the depression's spill height.
pub const DEPRESSION_DEPTH: f32 = 1.0;

/// The drainage of a heightfield whose edges drain (water leaves at any
/// edge node without a lower neighbour).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drainage {
    /// Drainage area of the largest basin, m².
    pub largest_area: f64,
    /// Edge nodes where water leaves that drain at least the channel area.
    pub outlets: u32,
    /// Closed depressions (8-connected sets of cells below their spill
    /// height) more than [`DEPRESSION_DEPTH`] deep.
    pub closed_depressions: u32,
    /// Hack's exponent h of L = c·A^h: the least-squares slope of ln L
    /// against ln A over the channel nodes of the largest basin, L being the
    /// longest flow path upstream of the node. `None` when fewer than two
    /// distinct areas qualify.
    pub hack_exponent: Option<f64>,
    /// Length of all channel links (node to receiver, for nodes draining at
    /// least the channel area) per area of the field, 1/m.
    pub drainage_density: f64,
}

/// Measures the drainage of `heights` (row-major, `width × height` nodes
/// `spacing` metres apart), channels being nodes that drain at least
/// `channel_area` m². Water is routed D8 after a priority-flood+ε fill from
/// the edges. `None` when the sizes disagree, the grid is empty or larger than
/// [`MAX_NODES`], a height is not finite, or `spacing` or `channel_area` is not
/// a positive number.
pub fn drainage(heights: &[f32], width: usize, height: usize, spacing: f32, channel_area: f32) -> Option<Drainage> {
    let n = width
        .checked_mul(height)
        .filter(|&n| n > 0 && n <= MAX_NODES && n == heights.len())?;
    let usable = |v: f32| v.is_finite() && v > 0.0;
    if !usable(spacing) || !usable(channel_area) || !heights.iter().all(|h| h.is_finite()) {
        return None;
    }
    let shape = Shape { width, height };
    let edges: Vec<bool> = (0..n).map(|i| shape.on_edge(i)).collect();
    let mut filler = Filler::default();
    let closed_depressions = depressions(shape, heights, &edges, &mut filler);
    let mut filled = heights.to_vec();
    filler.fill(shape, &mut filled, &edges, Fill::Epsilon);
    let mut flow = Flow::new(shape);
    flow.route(shape, &filled, &vec![false; n]);
    flow.order();
    let cell = f64::from(spacing) * f64::from(spacing);
    let channel_cells = (f64::from(channel_area) / cell).ceil().min(n as f64 + 1.0) as u32;
    let sinks = || (0..n).filter(|&i| flow.receiver(i) == i);
    let largest = sinks().max_by_key(|&i| (flow.cells[i], std::cmp::Reverse(i)))?;
    Some(Drainage {
        largest_area: f64::from(flow.cells[largest]) * cell,
        outlets: sinks().filter(|&i| flow.cells[i] >= channel_cells).count() as u32,
        closed_depressions,
        hack_exponent: hack(&flow, largest, channel_cells, spacing),
        drainage_density: channel_length(&flow, channel_cells, spacing) / (n as f64 * cell),
    })
}

/// How deep each node lies in a closed depression of `heights` (row-major,
/// `width × height`, edges draining): what a flat fill from the edges adds.
/// `None` for sizes that disagree, an empty or too large grid, or a height
/// that is not finite.
pub fn depression_depths(heights: &[f32], width: usize, height: usize) -> Option<Vec<f32>> {
    width
        .checked_mul(height)
        .filter(|&n| n > 0 && n <= MAX_NODES && n == heights.len())?;
    if !heights.iter().all(|h| h.is_finite()) {
        return None;
    }
    let shape = Shape { width, height };
    let edges: Vec<bool> = (0..heights.len()).map(|i| shape.on_edge(i)).collect();
    let mut filled = heights.to_vec();
    Filler::default().fill(shape, &mut filled, &edges, Fill::Flat);
    Some(filled.iter().zip(heights).map(|(f, h)| f - h).collect())
}

/// Number of closed depressions deeper than [`DEPRESSION_DEPTH`]: cells a
/// flat fill from the edges raises, in 8-connected sets.
fn depressions(shape: Shape, heights: &[f32], edges: &[bool], filler: &mut Filler) -> u32 {
    let mut filled = heights.to_vec();
    filler.fill(shape, &mut filled, edges, Fill::Flat);
    let mut seen = vec![false; heights.len()];
    let mut todo = Vec::new();
    let mut count = 0;
    for start in 0..heights.len() {
        if seen[start] || filled[start] <= heights[start] {
            continue;
        }
        seen[start] = true;
        todo.push(start);
        let mut deepest = 0.0f32;
        while let Some(c) = todo.pop() {
            deepest = deepest.max(filled[c] - heights[c]);
            for (nb, _) in shape.neighbours(c) {
                if !seen[nb] && filled[nb] > heights[nb] {
                    seen[nb] = true;
                    todo.push(nb);
                }
            }
        }
        count += u32::from(deepest > DEPRESSION_DEPTH);
    }
    count
}

/// Length of a node's link to its receiver, metres.
fn link_length(flow: &Flow, i: usize, spacing: f32) -> f64 {
    let d = f64::from(spacing);
    if is_diagonal(flow.links[i]) {
        d * std::f64::consts::SQRT_2
    } else {
        d
    }
}

/// Total length of the links out of channel nodes, metres.
fn channel_length(flow: &Flow, channel_cells: u32, spacing: f32) -> f64 {
    (0..flow.links.len())
        .filter(|&i| flow.cells[i] >= channel_cells && flow.receiver(i) != i)
        .map(|i| link_length(flow, i, spacing))
        .sum()
}

/// Hack's exponent over the channel nodes draining to `outlet`.
fn hack(flow: &Flow, outlet: usize, channel_cells: u32, spacing: f32) -> Option<f64> {
    let n = flow.links.len();
    // Longest path upstream, propagated from the top of the stack down.
    let mut longest = vec![0.0f64; n];
    for &i in flow.stack.iter().rev() {
        let (i, r) = (i as usize, flow.receiver(i as usize));
        if r != i {
            longest[r] = longest[r].max(longest[i] + link_length(flow, i, spacing));
        }
    }
    // Which outlet each node drains to, propagated down the stack from the outlets.
    let mut basin = vec![0u32; n];
    for &i in &flow.stack {
        let (i, r) = (i as usize, flow.receiver(i as usize));
        basin[i] = if r == i { i as u32 } else { basin[r] };
    }
    let cell = f64::from(spacing) * f64::from(spacing);
    let points: Vec<(f64, f64)> = (0..n)
        .filter(|&i| basin[i] as usize == outlet && flow.cells[i] >= channel_cells && longest[i] > 0.0)
        .map(|i| ((f64::from(flow.cells[i]) * cell).ln(), longest[i].ln()))
        .collect();
    least_squares_slope(&points)
}

/// The slope of the least-squares line through `points`, if they have two distinct x.
fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    let count = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / count;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / count;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A V valley draining to the middle of one edge: one outlet draining
    /// everything, no depressions.
    #[test]
    fn basin_drainage_of_a_v_valley() {
        let (w, h): (usize, usize) = (21, 15);
        let heights: Vec<f32> = (0..w * h)
            .map(|i| (i % w).abs_diff(10) as f32 + 0.1 * (i / w) as f32)
            .collect();
        let d = drainage(&heights, w, h, 10.0, 500.0).unwrap();
        assert_eq!(d.outlets, 1);
        assert_eq!(d.largest_area, (w * h) as f64 * 100.0);
        assert_eq!(d.closed_depressions, 0);
        // Channels drain ≥ 5 cells: the axis below the top row (14 links of
        // 10 m), and in every row the 6 side nodes nearest the axis on each
        // side, which drain along the row (15 · 12 links).
        assert!((d.drainage_density - (14.0 + 180.0) * 10.0 / 31_500.0).abs() < 1e-12);
        assert!(d.hack_exponent.is_some_and(|h| h > 0.0 && h < 1.0));
    }

    /// A pit 5 m deep is one closed depression; one 0.5 m deep is none.
    #[test]
    fn basin_drainage_counts_deep_pits() {
        let (w, h) = (20, 20);
        let mut heights: Vec<f32> = (0..w * h).map(|i| 0.1 * (i / w) as f32).collect();
        heights[7 * w + 6] -= 5.0;
        heights[12 * w + 13] -= 0.5;
        let d = drainage(&heights, w, h, 1.0, 4.0).unwrap();
        assert_eq!(d.closed_depressions, 1);
        heights[7 * w + 6] += 5.0;
        let d = drainage(&heights, w, h, 1.0, 4.0).unwrap();
        assert_eq!(d.closed_depressions, 0);
    }

    /// Input it cannot measure gives `None`.
    #[test]
    fn basin_drainage_refuses_bad_input() {
        let ok = vec![0.0f32; 12];
        assert!(drainage(&ok, 4, 3, 1.0, 1.0).is_some());
        assert!(drainage(&ok, 4, 4, 1.0, 1.0).is_none());
        assert!(drainage(&ok, 0, 3, 1.0, 1.0).is_none());
        assert!(drainage(&ok, usize::MAX, 3, 1.0, 1.0).is_none());
        assert!(drainage(&ok, 4, 3, f32::NAN, 1.0).is_none());
        assert!(drainage(&ok, 4, 3, 1.0, -1.0).is_none());
        let mut nan = ok.clone();
        nan[5] = f32::NAN;
        assert!(drainage(&nan, 4, 3, 1.0, 1.0).is_none());
    }

    /// The least-squares slope of points on a line is the line's.
    #[test]
    fn basin_least_squares_slope_of_a_line() {
        let points: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i), 0.6 * f64::from(i) + 2.0)).collect();
        assert!((least_squares_slope(&points).unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(least_squares_slope(&[(1.0, 2.0)]), None);
        assert_eq!(least_squares_slope(&[]), None);
    }
}
