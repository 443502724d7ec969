//! The river network of a solved basin as polylines of nodes.

use serde::{Deserialize, Serialize};

use super::Basin;

/// One river: channel nodes from its source downstream. It ends where it
/// joins a larger river (that junction node, a node of the larger river, is
/// its last node, so polylines connect) or at a fixed node. Read heights and
/// areas from the [`Basin`] by node index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct River {
    /// Node indices, upstream first.
    pub nodes: Vec<u32>,
}

/// Marks a node without a channel donor.
const NONE: u32 = u32::MAX;

impl Basin {
    /// The rivers of every channel node: a node that is not fixed and drains
    /// at least `min_area` m². A river starts at a channel node that no other
    /// channel node drains into; at a junction the river of the donor with the
    /// largest area (ties: lowest index) goes on, the others end there. So
    /// each channel node belongs to exactly one river, and appears again only
    /// as the last node of the rivers that join there; fixed nodes appear
    /// only as last nodes.
    ///
    /// Ordered by the area of each river's own lowest node, largest first
    /// (a main stem before its tributaries), ties by source index. A basin
    /// whose fields were edited out of agreement with each other has none.
    pub fn rivers(&self, min_area: f32) -> Vec<River> {
        if !self.consistent() {
            return Vec::new();
        }
        let n = self.receivers.len();
        let channel = |i: usize| self.area[i] >= min_area && self.receivers[i] as usize != i;
        let main = self.main_donors(&channel);
        let mut rivers: Vec<River> = (0..n)
            .filter(|&i| channel(i) && main[i] == NONE)
            .map(|source| self.trace(source, &main))
            .collect();
        rivers.sort_by(|a, b| {
            let mouth = |r: &River| self.area[r.nodes[r.nodes.len() - 2] as usize];
            mouth(b).total_cmp(&mouth(a)).then(a.nodes[0].cmp(&b.nodes[0]))
        });
        rivers
    }

    /// Whether the per-node fields have one value per node and every receiver is a node.
    fn consistent(&self) -> bool {
        let n = self.width.saturating_mul(self.height);
        [
            self.heights.len(),
            self.receivers.len(),
            self.area.len(),
            self.stack.len(),
        ]
        .iter()
        .all(|&len| len == n)
            && self.receivers.iter().all(|&r| (r as usize) < n)
    }

    /// For each node, the channel donor with the largest area (ties: lowest
    /// index), or [`NONE`].
    fn main_donors(&self, channel: &impl Fn(usize) -> bool) -> Vec<u32> {
        let mut main = vec![NONE; self.receivers.len()];
        for i in (0..self.receivers.len()).filter(|&i| channel(i)) {
            let m = &mut main[self.receivers[i] as usize];
            if *m == NONE || self.area[i] > self.area[*m as usize] {
                *m = i as u32;
            }
        }
        main
    }

    /// The river from `source` down to its junction or fixed node. Bounded by
    /// the node count, so edited receivers that loop cannot hang it.
    fn trace(&self, source: usize, main: &[u32]) -> River {
        let mut nodes = vec![source as u32];
        let mut i = source;
        for _ in 0..self.receivers.len() {
            let r = self.receivers[i] as usize;
            nodes.push(r as u32);
            if self.receivers[r] as usize == r || main[r] as usize != i {
                break;
            }
            i = r;
        }
        River { nodes }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bordered, noise};
    use super::super::{BasinParams, solve};
    use super::*;

    /// Beds descend strictly along every river; each ends at a fixed node or
    /// on another river; channel nodes are covered once, junctions aside.
    #[test]
    fn basin_rivers_descend_connect_and_cover() {
        let (w, h) = (96, 80);
        let initial = noise(w, h, 7, 2.0);
        let fixed = bordered(w, h);
        let grid = super::super::BasinGrid {
            width: w,
            height: h,
            spacing: 16.0,
            initial: &initial,
            uplift: &vec![1.0; w * h],
            fixed: &fixed,
        };
        let basin = solve(
            &grid,
            &BasinParams {
                steps: 60,
                ..BasinParams::default()
            },
        )
        .unwrap();
        let min_area = 20.0 * 256.0;
        let rivers = basin.rivers(min_area);
        assert!(rivers.len() > 10, "{} rivers", rivers.len());
        let mut own = vec![0u32; w * h];
        for r in &rivers {
            assert!(r.nodes.len() >= 2);
            for pair in r.nodes.windows(2) {
                assert!(basin.heights[pair[1] as usize] < basin.heights[pair[0] as usize]);
                assert_eq!(basin.receivers[pair[0] as usize], pair[1]);
            }
            for &v in &r.nodes[..r.nodes.len() - 1] {
                own[v as usize] += 1;
            }
        }
        for r in &rivers {
            let last = *r.nodes.last().unwrap() as usize;
            assert!(fixed[last] || own[last] == 1, "river ends at {last}, on no river");
        }
        for i in 0..w * h {
            let expected = u32::from(basin.area[i] >= min_area && !fixed[i]);
            assert_eq!(own[i], expected, "node {i}");
        }
        let mouths: Vec<f32> = rivers
            .iter()
            .map(|r| basin.area[r.nodes[r.nodes.len() - 2] as usize])
            .collect();
        assert!(mouths.windows(2).all(|m| m[0] >= m[1]));
    }

    /// A basin edited into disagreement gives no rivers instead of panicking.
    #[test]
    fn basin_rivers_of_an_edited_basin_are_empty() {
        let basin = Basin {
            width: 2,
            height: 2,
            spacing: 1.0,
            heights: vec![0.0; 4],
            receivers: vec![0, 7, 2, 3],
            area: vec![1.0; 4],
            stack: vec![0, 1, 2, 3],
        };
        assert!(basin.rivers(0.0).is_empty());
        let looped = Basin {
            receivers: vec![0, 2, 1, 3],
            area: vec![9.0; 4],
            ..basin
        };
        assert!(looped.rivers(0.0).len() <= 4);
    }
}
