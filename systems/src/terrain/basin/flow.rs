//! Water routing on a grid of nodes: depression filling (Barnes et al. 2014),
//! D8 steepest-descent receivers, the stack order and drainage area (Braun &
//! Willett 2013).
//!
//! Every result is a function of the heights alone: ties between equally
//! steep neighbours go to the lowest node index, the fill's heap is ordered by
//! (height, node index), and drainage area is counted in whole cells, so no
//! sum depends on the order it was taken in.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A row-major grid's size in nodes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub(crate) width: usize,
    pub(crate) height: usize,
}

/// The eight neighbour steps (dx, dy) in ascending node-index order, so "first
/// in this order" and "lowest node index" pick the same neighbour.
const STEPS: [(isize, isize); 8] = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)];

/// A diagonal link is √2 longer, so its drop is worth 1/√2 of a straight one's.
const WEIGHTS: [f32; 8] = {
    let d = std::f32::consts::FRAC_1_SQRT_2;
    [d, 1.0, d, 1.0, 1.0, d, 1.0, d]
};

/// The direction code of a node that is its own receiver.
pub(crate) const NO_LINK: u8 = 8;

impl Shape {
    /// Number of nodes.
    pub(crate) fn len(self) -> usize {
        self.width * self.height
    }

    /// Whether node `i` lies on the grid's edge.
    pub(crate) fn on_edge(self, i: usize) -> bool {
        let (x, y) = (i % self.width, i / self.width);
        x == 0 || y == 0 || x + 1 == self.width || y + 1 == self.height
    }

    /// The neighbours of node `i` in ascending index order, with their direction codes.
    pub(crate) fn neighbours(self, i: usize) -> impl Iterator<Item = (usize, u8)> {
        let (w, h) = (self.width as isize, self.height as isize);
        let (x, y) = ((i % self.width) as isize, (i / self.width) as isize);
        STEPS.iter().zip(0u8..).filter_map(move |(&(dx, dy), k)| {
            let (nx, ny) = (x + dx, y + dy);
            (nx >= 0 && ny >= 0 && nx < w && ny < h).then_some(((ny * w + nx) as usize, k))
        })
    }
}

/// Whether direction code `k` is a diagonal link.
pub(crate) fn is_diagonal(k: u8) -> bool {
    matches!(k, 0 | 2 | 5 | 7)
}

/// What a fill does to a cell at or below the level it is reached from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Raise it to that level: lakes become flat (exact spill heights).
    Flat,
    /// Raise it one step of f32 above that level, so every filled cell has a
    /// strictly lower neighbour and water crosses lakes ("priority-flood+ε").
    Epsilon,
}

/// The reused state of a priority flood.
#[derive(Default)]
pub(crate) struct Filler {
    heap: BinaryHeap<Reverse<u64>>,
    pit: VecDeque<u32>,
    closed: Vec<bool>,
}

/// A key whose unsigned order is the order of the finite `f32`s.
fn height_key(h: f32) -> u64 {
    let b = h.to_bits();
    u64::from(if b >> 31 == 1 { !b } else { b | 0x8000_0000 })
}

impl Filler {
    /// Fills every depression of `h` outside the `drained` nodes, the ones
    /// known to drain already (Barnes, Lehman & Mulla 2014, Algorithm 2, or
    /// its "+ε" variant, with the pit queue): a flood grows from the drained
    /// nodes next to the rest, lowest first by (height, index), into the
    /// rest; a cell reached from one at least as high is raised and taken
    /// next from a plain queue. Drained nodes are never changed, so the cost
    /// is that of the depressions, not of the grid.
    ///
    /// With [`Fill::Epsilon`] every cell the flood reaches gets a strictly
    /// lower neighbour, the one it was reached from. A surface in which every
    /// node not drained already has a strictly lower neighbour comes out
    /// unchanged: the flood then reaches each cell from a lower one first.
    pub(crate) fn fill(&mut self, shape: Shape, h: &mut [f32], drained: &[bool], mode: Fill) {
        self.closed.clear();
        self.closed.extend_from_slice(drained);
        self.heap.clear();
        self.pit.clear();
        for u in (0..h.len()).filter(|&u| !drained[u]) {
            for (d, _) in shape.neighbours(u).filter(|&(d, _)| drained[d]) {
                self.heap.push(Reverse(height_key(h[d]) << 32 | d as u64));
            }
        }
        while let Some(c) = self.next() {
            let level = h[c];
            let raised = match mode {
                Fill::Flat => level,
                Fill::Epsilon => level.next_up(),
            };
            for (n, _) in shape.neighbours(c) {
                if std::mem::replace(&mut self.closed[n], true) {
                    continue;
                }
                if h[n] <= level {
                    h[n] = raised;
                    self.pit.push_back(n as u32);
                } else {
                    self.heap.push(Reverse(height_key(h[n]) << 32 | n as u64));
                }
            }
        }
    }

    /// The next cell to spread from: raised cells first, in the order they were raised.
    fn next(&mut self) -> Option<usize> {
        match self.pit.pop_front() {
            Some(c) => Some(c as usize),
            None => self.heap.pop().map(|Reverse(key)| (key & 0xFFFF_FFFF) as usize),
        }
    }
}

/// Receivers, the stack and drainage area of one surface, with the buffers
/// that build them (kept between time steps). Receivers are kept as direction
/// codes and donors as one bit per direction: a byte per node each, so the
/// walks over the grid move little memory.
pub(crate) struct Flow {
    /// Direction code of each node's receiver link ([`NO_LINK`]: itself).
    pub(crate) links: Vec<u8>,
    /// Bit k set when the neighbour in direction k drains into the node.
    donors: Vec<u8>,
    /// Drainage area in cells, the node's own included.
    pub(crate) cells: Vec<u32>,
    /// Every node, each after its receiver.
    pub(crate) stack: Vec<u32>,
    /// Index step to the neighbour in each direction (0 for [`NO_LINK`]).
    steps: [isize; 9],
    /// The depth-first walk's pending nodes.
    todo: Vec<u32>,
    /// A row's direction codes before routing, to see whether any changed.
    before: Vec<u8>,
    /// Whether a receiver changed since the stack was last built.
    stale: bool,
}

impl Flow {
    /// Buffers for the nodes of `shape`.
    pub(crate) fn new(shape: Shape) -> Self {
        let n = shape.len();
        let w = shape.width as isize;
        let mut steps = [0; 9];
        for (s, (dx, dy)) in steps.iter_mut().zip(STEPS) {
            *s = dy * w + dx;
        }
        Self {
            links: vec![NO_LINK; n],
            donors: vec![0; n],
            cells: vec![1; n],
            stack: Vec::with_capacity(n),
            steps,
            todo: Vec::new(),
            before: Vec::with_capacity(shape.width),
            stale: true,
        }
    }

    /// Node `i`'s receiver.
    #[inline]
    pub(crate) fn receiver(&self, i: usize) -> usize {
        i.wrapping_add_signed(self.steps[usize::from(self.links[i])])
    }

    /// Every node's receiver.
    pub(crate) fn receivers(&self) -> Vec<u32> {
        (0..self.links.len()).map(|i| self.receiver(i) as u32).collect()
    }

    /// D8 receivers of `h`: each node sends its water to the neighbour with
    /// the steepest descent (drop over link length), ties to the lowest index;
    /// `fixed` nodes and nodes without a lower neighbour keep it. Returns how
    /// many nodes that are not `fixed` have no lower neighbour.
    pub(crate) fn route(&mut self, shape: Shape, h: &[f32], fixed: &[bool]) -> usize {
        let w = shape.width;
        let mut sinks = 0;
        for y in 0..shape.height {
            let row = y * w..(y + 1) * w;
            let links = &mut self.links[row.clone()];
            self.before.clear();
            self.before.extend_from_slice(links);
            if y > 0 && y + 1 < shape.height && w > 2 {
                route_inner_row(h, w, y, &mut links[1..w - 1]);
                links[0] = steepest(shape, h, y * w);
                links[w - 1] = steepest(shape, h, y * w + w - 1);
            } else {
                for (link, i) in links.iter_mut().zip(row.clone()) {
                    *link = steepest(shape, h, i);
                }
            }
            for (link, &f) in links.iter_mut().zip(&fixed[row]) {
                *link = if f { NO_LINK } else { *link };
                sinks += usize::from(*link == NO_LINK && !f);
            }
            self.stale |= *links != *self.before;
        }
        sinks
    }

    /// Builds the stack (Braun & Willett 2013): donor lists, then a
    /// depth-first walk up from every node that is its own receiver, in
    /// ascending index order, donors in ascending index order; then drainage
    /// area, accumulated down the stack in reverse. Call after
    /// [`Flow::route`] on a surface where every node drains to one that is its
    /// own receiver. Nothing to do when no receiver changed since the last
    /// call: the stack and area are still those.
    pub(crate) fn order(&mut self) {
        if !std::mem::replace(&mut self.stale, false) {
            return;
        }
        self.list_donors();
        self.stack.clear();
        let mut stack = std::mem::take(&mut self.stack);
        for base in 0..self.links.len() {
            if self.links[base] == NO_LINK {
                self.walk_up(base, |node| stack.push(node as u32));
            }
        }
        self.stack = stack;
        self.accumulate();
    }

    /// Marks in `drained` the nodes whose receivers lead to a `fixed` node,
    /// those included.
    pub(crate) fn mark_drained(&mut self, fixed: &[bool], drained: &mut [bool]) {
        self.list_donors();
        drained.fill(false);
        for base in (0..fixed.len()).filter(|&b| fixed[b]) {
            self.walk_up(base, |node| drained[node] = true);
        }
    }

    /// Visits `base` and everything upstream of it depth-first, donors
    /// lowest index first (as the recursive original does). The pending
    /// stack is written without branches on the donor bits, whose pattern no
    /// predictor guesses: each of the eight candidates is stored, and the top
    /// moves past it only if it is a donor. A base nothing drains into (most
    /// of the sea around a basin) is visited alone.
    fn walk_up(&mut self, base: usize, mut visit: impl FnMut(usize)) {
        if self.donors[base] == 0 {
            return visit(base);
        }
        // Every node is pending at most once, plus the eight slots written past the top.
        self.todo.resize(self.links.len() + 8, 0);
        let (todo, donors, steps) = (&mut self.todo[..], &self.donors[..], self.steps);
        todo[0] = base as u32;
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = todo[top] as usize;
            visit(node);
            let bits = donors[node];
            // Highest direction pushed first, so the lowest comes off first.
            // Before the k-th store at most k − 1 ≤ 7 bits moved `t`, so the
            // mask changes nothing and spares a bounds check per store.
            let slots = &mut todo[top..top + 8];
            let mut t = 0;
            for k in (0..8).rev() {
                slots[t & 7] = node.wrapping_add_signed(steps[k]) as u32;
                t += usize::from(bits >> k & 1);
            }
            top += t;
        }
    }

    /// Donor bits: a node whose link points in direction k is the donor in
    /// direction 7 − k of its receiver (the directions are symmetric about 3.5).
    fn list_donors(&mut self) {
        self.donors.fill(0);
        for (i, &k) in self.links.iter().enumerate() {
            if k != NO_LINK {
                let r = i.wrapping_add_signed(self.steps[usize::from(k)]);
                self.donors[r] |= 1 << (7 - k);
            }
        }
    }

    /// Drainage area in cells: each node's own plus all its donors', summed
    /// from the top of the stack down. Integer counts, so exact in any order.
    fn accumulate(&mut self) {
        self.cells.fill(1);
        for &i in self.stack.iter().rev() {
            let k = self.links[i as usize];
            if k != NO_LINK {
                let r = (i as usize).wrapping_add_signed(self.steps[usize::from(k)]);
                self.cells[r] += self.cells[i as usize];
            }
        }
    }
}

/// The direction code of node `i`'s steepest descent, bounds checked.
fn steepest(shape: Shape, h: &[f32], i: usize) -> u8 {
    let (mut best, mut link) = (0.0f32, NO_LINK);
    for (n, k) in shape.neighbours(i) {
        let s = (h[i] - h[n]) * WEIGHTS[usize::from(k)];
        if s > best {
            (best, link) = (s, k);
        }
    }
    link
}

/// Direction codes of the steepest descent for the inner nodes of row `y`
/// (x in 1..width − 1, all eight neighbours present), without bounds checks
/// per neighbour: the three rows are sliced once.
fn route_inner_row(h: &[f32], w: usize, y: usize, links: &mut [u8]) {
    let up = &h[(y - 1) * w..y * w];
    let mid = &h[y * w..(y + 1) * w];
    let down = &h[(y + 1) * w..(y + 2) * w];
    let d = std::f32::consts::FRAC_1_SQRT_2;
    for (x, link) in (1..w - 1).zip(links.iter_mut()) {
        let c = mid[x];
        let drops = [
            (c - up[x - 1]) * d,
            c - up[x],
            (c - up[x + 1]) * d,
            c - mid[x - 1],
            c - mid[x + 1],
            (c - down[x - 1]) * d,
            c - down[x],
            (c - down[x + 1]) * d,
        ];
        let (mut best, mut k) = (0.0f32, NO_LINK);
        for (j, s) in (0u8..).zip(drops) {
            if s > best {
                (best, k) = (s, j);
            }
        }
        *link = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(width: usize, height: usize) -> Shape {
        Shape { width, height }
    }

    /// The fast inner path and the bounds-checked one agree on every node of a
    /// field with many exact ties (small integer heights).
    #[test]
    fn basin_inner_rows_route_as_the_checked_path() {
        let s = shape(13, 9);
        let h: Vec<f32> = (0..s.len()).map(|i| ((i * 7919) % 5) as f32).collect();
        let mut flow = Flow::new(s);
        flow.route(s, &h, &vec![false; s.len()]);
        let checked: Vec<u8> = (0..s.len()).map(|i| steepest(s, &h, i)).collect();
        assert_eq!(flow.links, checked);
    }

    /// Ties go to the lowest index; a diagonal must be √2 times steeper to win.
    #[test]
    fn basin_receivers_prefer_steepest_then_lowest_index() {
        let s = shape(3, 3);
        // Centre 10; left and right both drop 2 (tie: left, lower index); the
        // diagonal below-left drops 2.5, less than 2·√2, so it loses.
        let h = [10.0, 10.0, 10.0, 8.0, 10.0, 8.0, 7.5, 10.0, 10.0];
        let mut flow = Flow::new(s);
        let fixed = [false; 9];
        flow.route(s, &h, &fixed);
        assert_eq!(flow.receiver(4), 3);
        let h = [10.0, 10.0, 10.0, 8.0, 10.0, 8.0, 7.1, 10.0, 10.0];
        flow.route(s, &h, &fixed);
        assert_eq!(flow.receiver(4), 6, "a drop of 2.9 on the diagonal beats 2 straight");
    }

    /// After an ε-fill from the seeds every other node has a strictly lower
    /// neighbour; a surface that already drains passes through unchanged.
    #[test]
    fn basin_epsilon_fill_drains_and_keeps_draining_surfaces() {
        let s = shape(17, 11);
        let seeds: Vec<bool> = (0..s.len()).map(|i| s.on_edge(i)).collect();
        let mut h: Vec<f32> = (0..s.len())
            .map(|i| sylva_runtime::rng::unit_f32(sylva_runtime::rng::mix64(i as u64)) * 10.0)
            .collect();
        let mut filler = Filler::default();
        filler.fill(s, &mut h, &seeds, Fill::Epsilon);
        let mut flow = Flow::new(s);
        assert_eq!(flow.route(s, &h, &seeds), 0);
        let again = {
            let mut g = h.clone();
            filler.fill(s, &mut g, &seeds, Fill::Epsilon);
            g
        };
        assert!(again.iter().zip(&h).all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// The stack is the depth-first order the recursive original visits:
    /// bases (nodes that are their own receivers) in ascending index, each
    /// donor's subtree in ascending index; drainage area counts every node
    /// upstream; `mark_drained` marks the nodes draining to fixed ones. On
    /// a surface with pits, sea-like bases without donors and a lone fixed
    /// node inside.
    #[test]
    fn basin_stack_is_the_depth_first_order() {
        fn visit(i: usize, donors: &[Vec<usize>], out: &mut Vec<u32>) {
            out.push(i as u32);
            for &d in &donors[i] {
                visit(d, donors, out);
            }
        }
        let s = shape(23, 19);
        let h: Vec<f32> = (0..s.len())
            .map(|i| sylva_runtime::rng::unit_f32(sylva_runtime::rng::mix64(i as u64 ^ 77)) * 10.0)
            .collect();
        let mut fixed: Vec<bool> = (0..s.len()).map(|i| s.on_edge(i)).collect();
        fixed[9 * 23 + 11] = true;
        let mut flow = Flow::new(s);
        assert!(flow.route(s, &h, &fixed) > 0, "the surface has pits");
        flow.order();
        let mut donors = vec![Vec::new(); s.len()];
        for i in 0..s.len() {
            if flow.receiver(i) != i {
                donors[flow.receiver(i)].push(i);
            }
        }
        let mut stack = Vec::new();
        for base in (0..s.len()).filter(|&b| flow.receiver(b) == b) {
            visit(base, &donors, &mut stack);
        }
        assert_eq!(flow.stack, stack);
        let upstream = |i: usize| {
            (0..s.len())
                .filter(|&j| {
                    (0..s.len())
                        .scan(j, |n, _| {
                            let at = *n;
                            *n = flow.receiver(at);
                            Some(at)
                        })
                        .any(|n| n == i)
                })
                .count() as u32
        };
        assert!((0..s.len()).all(|i| flow.cells[i] == upstream(i)));
        let mut drained = vec![false; s.len()];
        flow.mark_drained(&fixed, &mut drained);
        let mut reached = vec![false; s.len()];
        for base in (0..s.len()).filter(|&b| fixed[b]) {
            let mut marked = Vec::new();
            visit(base, &donors, &mut marked);
            marked.iter().for_each(|&n| reached[n as usize] = true);
        }
        assert_eq!(drained, reached);
        assert!(drained.iter().any(|&d| !d), "some nodes drain into pits");
    }

    /// A flat fill raises a pit to its spill height exactly.
    #[test]
    fn basin_flat_fill_raises_pits_to_the_spill_height() {
        let s = shape(5, 5);
        let mut h = vec![3.0f32; 25];
        h[2] = 1.0;
        h[12] = 0.5;
        h[11] = 2.0;
        let seeds: Vec<bool> = (0..25).map(|i| s.on_edge(i)).collect();
        Filler::default().fill(s, &mut h, &seeds, Fill::Flat);
        assert_eq!(h[12], 3.0);
        assert_eq!(h[11], 3.0);
        assert_eq!(h[2], 1.0);
    }
}
