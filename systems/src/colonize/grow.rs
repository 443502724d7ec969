//! The growth loop (Runions et al. 2007 as the thesis states it, with its extensions), kept
//! incremental with a uniform grid over the attractors.
//!
//! Each attractor remembers its nearest node within d_i (ties: the lower node index) and that
//! distance. A new node can only lower those distances, so after a growth step only the
//! attractors within d_i of the new nodes are looked at (in parallel over fixed chunks of new
//! nodes when there is enough work; merged with an explicit tie rule, so the result does not
//! depend on the thread count); one within d_k is killed. Each iteration then sums, per growing node, the unit
//! vectors of the attractors it is nearest to, in attractor order.
//!
//! The grid ([`AttractorGrid`], cells d_i / 2 wide) replaced a kiddo k-d tree: the queries
//! here are many, small and of one fixed radius, and the tree walks and per-hit callbacks cost
//! more than the distance tests (Fig. 5.11: 14 ms, mostly leaf scans). Per-attractor state the
//! queries read is mirrored in grid order (`slot_d2`), and hits that cannot change anything are
//! dropped inside the parallel queries. The grid is rebuilt over the live attractors whenever a
//! quarter of those it holds are dead.

use glam::Vec3;
use rayon::prelude::*;
use sylva_runtime::{FieldError, Validate};

use super::grid::AttractorGrid;
use super::limits::{MAX_ATTRACTORS, MAX_COORDINATE, within_bounds};
use super::params::{ColonizeParams, WeightedGrowth};
use super::regions::{load_points, sample_regions};
use super::smooth::smooth_branching;
use super::{ColonizeError, Termination};
use crate::tree::{BranchGraph, NO_PARENT, reduce_curves};

/// "No node": an attractor no node lies within d_i of.
const NONE: u32 = u32::MAX;
/// `Colonizer::slot_d2` of a killed attractor.
const DEAD: f32 = -1.0;
/// New nodes per parallel task when querying the attractor grid.
const NODE_CHUNK: usize = 8;
/// Grid slots tested together when scanning for a new node's attractors (at most 32: one bit
/// each of a `u32` mask).
const SCAN_BLOCK: usize = 16;
const _: () = assert!(SCAN_BLOCK <= 32);
/// Below this many estimated candidate points per growth step the queries run on the calling
/// thread: waking the pool costs more than the scan (Fig. 5.11 steps scan a few thousand).
const PARALLEL_MIN: f32 = 200_000.0;
/// A successor whose direction has a cosine below this with its parent segment is refused
/// (the thesis code's anti-reversal rule).
const REVERSAL_COS: f32 = -0.99;

/// One new node's test of grid candidates: whether a pair can change something (see
/// [`Colonizer::absorb`]).
struct Scan {
    q: Vec3,
    di2: f32,
    dk2: f32,
    gap2: f32,
}

impl Scan {
    /// Whether the candidate at (`x`, `y`, `z`), its attractor's slot state `current`, is kept.
    /// The distance is computed as the brute-force reference does, bit for bit.
    #[inline(always)]
    fn accept(&self, x: f32, y: f32, z: f32, current: f32) -> bool {
        let (dx, dy, dz) = (x - self.q.x, y - self.q.y, z - self.q.z);
        let d2 = dx * dx + dy * dy + dz * dz;
        // A new node no nearer than the current nearest one never wins: it has a higher index.
        (current != DEAD) & (((d2 <= self.di2) & ((d2 <= self.dk2) | (d2 < current))) | (d2 <= self.gap2))
    }

    /// The kept candidates of a full block as a bit mask; the fixed length lets the compiler test
    /// them in vector registers.
    #[inline(always)]
    fn block<const N: usize>(&self, x: &[f32; N], y: &[f32; N], z: &[f32; N], current: &[f32; N]) -> u32 {
        let mut mask = 0;
        for i in 0..N {
            mask |= u32::from(self.accept(x[i], y[i], z[i], current[i])) << i;
        }
        mask
    }

    /// The kept candidates of a partial block as a bit mask.
    fn rest(&self, x: &[f32], y: &[f32], z: &[f32], current: &[f32]) -> u32 {
        let mut mask = 0;
        for i in 0..x.len() {
            mask |= u32::from(self.accept(x[i], y[i], z[i], current[i])) << i;
        }
        mask
    }
}

/// Writes the sorted union of two sorted, disjoint lists into `out`.
fn merge_sorted(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

/// The smallest attractor grid cell side: d_i / 2, so a node's d_i box covers 4 or 5 cells per
/// axis (d_i-wide cells, 3 or 4 per axis, would scan about twice the volume).
fn cell_side(params: &ColonizeParams) -> f32 {
    params.influence_radius * 0.5
}

/// The step length for a successor of a node at branch depth `z`.
pub(crate) fn step_length(params: &ColonizeParams, z: u32) -> f32 {
    let d = params.step;
    match params.weighted_growth {
        WeightedGrowth::Off => d,
        WeightedGrowth::Thesis => {
            if z == 0 {
                2.0 * d
            } else {
                d
            }
        }
        WeightedGrowth::Linear => {
            if params.max_depth == 0 {
                2.0 * d
            } else {
                let w = params.max_depth.saturating_sub(z) as f32 / params.max_depth as f32;
                d + d * w
            }
        }
    }
}

/// The growth direction from a sum of unit vectors: normalize, add T, normalize (thesis code);
/// `None` when that is degenerate.
pub(crate) fn growth_direction(sum: Vec3, tropism: Vec3) -> Option<Vec3> {
    (sum.normalize_or_zero() + tropism).try_normalize()
}

/// The trunk of a tree rooted at `root`: a straight segment toward the nearest target (centre and
/// reach), ending at the target's reach (or one step out when the root is inside it), then
/// extended by D until an attractor lies within d_i, at most N_I times (thesis code).
pub(crate) fn trunk_end(
    params: &ColonizeParams,
    root: Vec3,
    targets: &[(Vec3, f32)],
    mut attracted: impl FnMut(Vec3) -> bool,
) -> (Vec3, Vec3) {
    let mut best = targets[0];
    for &t in &targets[1..] {
        if t.0.distance_squared(root) < best.0.distance_squared(root) {
            best = t;
        }
    }
    let (centre, reach) = best;
    let to = centre - root;
    let dist = to.length();
    let dir = to.try_normalize().unwrap_or(Vec3::Z);
    let mut end = if dist > reach {
        root + dir * (dist - reach)
    } else {
        root + dir * params.step
    };
    for _ in 0..params.iterations {
        if attracted(end) {
            break;
        }
        end += dir * params.step;
    }
    (end, dir)
}

/// Attractor targets for the trunk when only points are known: their centroid and extent.
pub(crate) fn centroid_target(points: &[Vec3]) -> (Vec3, f32) {
    let centre = points.iter().fold(Vec3::ZERO, |a, &p| a + p) / points.len().max(1) as f32;
    let reach = points.iter().map(|p| p.distance(centre)).fold(0.0f32, f32::max);
    (centre, reach)
}

/// A space-colonization run that can be advanced a few iterations at a time.
///
/// ```
/// use sylva_systems::colonize::{ColonizeParams, Colonizer};
/// let mut c = Colonizer::new(&ColonizeParams::default(), 7).unwrap();
/// let reason = c.run();
/// assert_eq!(c.termination(), Some(reason));
/// assert!(c.graphs()[0].len() > 1);
/// ```
pub struct Colonizer {
    params: ColonizeParams,
    attractors: Vec<Vec3>,
    /// The attractors not yet dropped by compaction (some of them dead).
    grid: AttractorGrid,
    /// Per slot of `grid`: its attractor's `nearest_d2`, or [`DEAD`] once it is killed. Kept in
    /// grid order so queries read it without scattered loads.
    slot_d2: Vec<f32>,
    /// The slot in `grid` of each gridded attractor.
    slot_of: Vec<u32>,
    alive: Vec<bool>,
    alive_count: usize,
    /// Killed attractors, in the order they died.
    killed: Vec<u32>,
    nearest: Vec<u32>,
    nearest_d2: Vec<f32>,
    toward: Vec<Vec3>,
    /// Live attractors with a nearest node, ascending (the summation order).
    influenced: Vec<u32>,
    /// Attractors that gained their first nearest node since the last iteration.
    fresh: Vec<u32>,
    pos: Vec<Vec3>,
    dir: Vec<Vec3>,
    depth: Vec<u32>,
    children: Vec<u32>,
    /// The iteration in which each node last grew or was created (the trunk: 0), so its
    /// no-growth counter after iteration t is t minus this.
    last_growth: Vec<u32>,
    tree: Vec<u32>,
    segment: Vec<u32>,
    /// Growing nodes with attractors in the current iteration.
    touched: Vec<u32>,
    /// Scratch for merging `fresh` into `influenced`.
    merged: Vec<u32>,
    sum: Vec<Vec3>,
    count: Vec<u32>,
    /// Per attractor: the tree of the first node within the crown gap, or [`NONE`].
    claim: Vec<u32>,
    /// Per chunk of [`NODE_CHUNK`] new nodes: (attractor, node, squared distance) for the live
    /// attractors within d_i of a node that it may become nearest to or kill; kept across
    /// iterations to avoid allocating in the loop.
    hits: Vec<Vec<(u32, u32, f32)>>,
    graphs: Vec<BranchGraph>,
    iterations: u32,
    termination: Option<Termination>,
    /// Where the trunks aimed (centre, reach), as given to [`Colonizer::with_attractors`].
    targets: Vec<(Vec3, f32)>,
}

impl Colonizer {
    /// Samples the attractors of `params` (regions with `seed`, plus the point file) and grows
    /// each root's trunk. Fails, naming the field, on invalid parameters or an empty cloud.
    pub fn new(params: &ColonizeParams, seed: u64) -> Result<Self, ColonizeError> {
        params.validate()?;
        let mut points = if params.regions.is_empty() {
            Vec::new()
        } else {
            sample_regions(&params.regions, &params.exclusions, params.count, seed)?
        };
        if let Some(file) = &params.points_file {
            // Sampled and loaded attractors share one limit.
            let loaded = load_points(file.as_ref(), MAX_ATTRACTORS as usize - points.len())?;
            points.extend(
                loaded
                    .into_iter()
                    .filter(|&p| !params.exclusions.iter().any(|e| e.contains(p, 0.0))),
            );
        }
        let mut targets: Vec<(Vec3, f32)> = params.regions.iter().map(|r| r.shape.centre_and_reach()).collect();
        if targets.is_empty() {
            targets.push(centroid_target(&points));
        }
        Self::with_attractors(params, points, &targets)
    }

    /// Grows from given attractors; the trunks aim at the nearest of `targets` (centre, reach),
    /// or at the attractors' centroid when `targets` is empty. The regions, count, exclusions and
    /// point file of `params` are ignored.
    pub fn with_attractors(
        params: &ColonizeParams,
        attractors: Vec<Vec3>,
        targets: &[(Vec3, f32)],
    ) -> Result<Self, ColonizeError> {
        params.validate_growth()?;
        if attractors.is_empty() {
            return Err(FieldError::new("regions", "yield no attractors").into());
        }
        if let Some(i) = attractors.iter().position(|p| !within_bounds(*p)) {
            let message = format!(
                "is {}, must be finite and within ±{MAX_COORDINATE} on every axis",
                attractors[i]
            );
            return Err(FieldError::new(&format!("attractors[{i}]"), message).into());
        }
        if let Some(i) = targets.iter().position(|(c, r)| !c.is_finite() || !r.is_finite()) {
            let message = format!("is ({}, {}), must be finite", targets[i].0, targets[i].1);
            return Err(FieldError::new(&format!("targets[{i}]"), message).into());
        }
        let fallback = [centroid_target(&attractors)];
        let targets = if targets.is_empty() { &fallback[..] } else { targets };
        let n = attractors.len();
        let grid = AttractorGrid::build((0..n as u32).zip(attractors.iter().copied()), cell_side(params));
        let mut slot_of = vec![0; n];
        for (slot, &a) in grid.id.iter().enumerate() {
            slot_of[a as usize] = slot as u32;
        }
        let mut c = Self {
            params: params.clone(),
            attractors,
            grid,
            slot_d2: vec![f32::INFINITY; n],
            slot_of,
            alive: vec![true; n],
            alive_count: n,
            killed: Vec::new(),
            nearest: vec![NONE; n],
            claim: vec![NONE; n],
            nearest_d2: vec![f32::INFINITY; n],
            toward: vec![Vec3::ZERO; n],
            influenced: Vec::new(),
            fresh: Vec::new(),
            pos: Vec::new(),
            dir: Vec::new(),
            depth: Vec::new(),
            children: Vec::new(),
            last_growth: Vec::new(),
            tree: Vec::new(),
            segment: Vec::new(),
            touched: Vec::new(),
            merged: Vec::new(),
            sum: Vec::new(),
            count: Vec::new(),
            hits: Vec::new(),
            graphs: Vec::new(),
            iterations: 0,
            termination: None,
            targets: targets.to_vec(),
        };
        for (t, &root) in params.roots.iter().enumerate() {
            let (end, dir) = trunk_end(params, root, targets, |p| c.any_attractor_within(p));
            let mut graph = BranchGraph::new();
            graph.push(root, end, NO_PARENT, 0);
            c.graphs.push(graph);
            c.add_node(end, dir, 0, t as u32, 0);
        }
        c.absorb(0);
        Ok(c)
    }

    fn any_attractor_within(&self, p: Vec3) -> bool {
        let r2 = self.params.influence_radius * self.params.influence_radius;
        let r = Vec3::splat(self.params.influence_radius);
        let mut any = false;
        self.grid.for_each_range(p - r, p + r, |slots| {
            any |= self.grid.id[slots]
                .iter()
                .any(|&a| (self.attractors[a as usize] - p).length_squared() <= r2);
        });
        any
    }

    /// Rebuilds the grid over the live attractors once a quarter of those it holds are dead
    /// (measured with the former k-d tree: rebuilding at half dead scans enough dead points to
    /// cost more than the rebuilds).
    fn compact_grid(&mut self) {
        if self.alive_count * 4 >= self.grid.len() * 3 || self.alive_count == 0 {
            return;
        }
        let (alive, attractors) = (&self.alive, &self.attractors);
        let live: Vec<u32> = self.grid.id.iter().copied().filter(|&a| alive[a as usize]).collect();
        self.grid = AttractorGrid::build(
            live.iter().map(|&a| (a, attractors[a as usize])),
            cell_side(&self.params),
        );
        self.slot_d2.clear();
        for (slot, &a) in self.grid.id.iter().enumerate() {
            self.slot_of[a as usize] = slot as u32;
            self.slot_d2.push(self.nearest_d2[a as usize]);
        }
    }

    fn add_node(&mut self, pos: Vec3, dir: Vec3, depth: u32, tree: u32, segment: u32) {
        self.pos.push(pos);
        self.dir.push(dir);
        self.depth.push(depth);
        self.children.push(0);
        self.last_growth.push(self.iterations);
        self.tree.push(tree);
        self.segment.push(segment);
        self.sum.push(Vec3::ZERO);
        self.count.push(0);
    }

    /// Updates nearest nodes and kills for the nodes from `first` on.
    ///
    /// Each new node scans the grid cells its d_i box touches (cells are d_i / 2 wide, so about
    /// 2.7 times the d_i ball, read in order) and keeps the pairs that can change something.
    /// With a crown gap it also keeps every pair within the gap (scanning as far as it reaches):
    /// an attractor within the gap of nodes of two trees dies.
    /// Chunks of new nodes run in parallel; their pairs are applied chunk by chunk with the tie
    /// rule (lower distance, then lower node), so the outcome does not depend on the chunking.
    fn absorb(&mut self, first: usize) {
        self.compact_grid();
        let di = self.params.influence_radius;
        let di2 = di * di;
        let dk2 = self.params.kill_distance * self.params.kill_distance;
        let gap2 = self.params.crown_gap * self.params.crown_gap;
        let chunks = (self.pos.len() - first).div_ceil(NODE_CHUNK);
        if self.hits.len() < chunks {
            self.hits.resize_with(chunks, Vec::new);
        }
        let (grid, slot_d2, pos) = (&self.grid, &self.slot_d2, &self.pos);
        let reach = Vec3::splat(di.max(self.params.crown_gap));
        let query = |(chunk, hits): (usize, &mut Vec<(u32, u32, f32)>)| {
            hits.clear();
            let lo = first + chunk * NODE_CHUNK;
            for (v, &q) in pos.iter().enumerate().skip(lo).take(NODE_CHUNK) {
                grid.for_each_range(q - reach, q + reach, |slots| {
                    // Points and state are in grid order: no scattered loads per candidate.
                    let first_slot = slots.start;
                    let (xs, ys, zs) = (&grid.x[slots.clone()], &grid.y[slots.clone()], &grid.z[slots.clone()]);
                    let current = &slot_d2[slots];
                    // Candidates are tested in fixed blocks into bit masks without branches; only
                    // the few kept ones are then walked.
                    let scan = Scan { q, di2, dk2, gap2 };
                    let mut push = |base: usize, mut mask: u32| {
                        while mask != 0 {
                            let slot = first_slot + base + mask.trailing_zeros() as usize;
                            mask &= mask - 1;
                            let (dx, dy, dz) = (grid.x[slot] - q.x, grid.y[slot] - q.y, grid.z[slot] - q.z);
                            hits.push((grid.id[slot], v as u32, dx * dx + dy * dy + dz * dz));
                        }
                    };
                    let (xb, xr) = xs.as_chunks::<SCAN_BLOCK>();
                    let (yb, yr) = ys.as_chunks::<SCAN_BLOCK>();
                    let (zb, zr) = zs.as_chunks::<SCAN_BLOCK>();
                    let (cb, cr) = current.as_chunks::<SCAN_BLOCK>();
                    for (b, (((x, y), z), c)) in xb.iter().zip(yb).zip(zb).zip(cb).enumerate() {
                        push(b * SCAN_BLOCK, scan.block(x, y, z, c));
                    }
                    let full = xb.len() * SCAN_BLOCK;
                    push(full, scan.rest(xr, yr, zr, cr));
                });
            }
        };
        let hits = &mut self.hits[..chunks];
        let candidates = (self.pos.len() - first) as f32 * grid.points_within_box(2.0 * reach.x);
        if candidates >= PARALLEL_MIN {
            hits.par_iter_mut().enumerate().for_each(query);
        } else {
            hits.iter_mut().enumerate().for_each(query);
        }
        self.apply_hits(chunks, [di2, dk2, gap2]);
    }

    /// Applies the first `chunks` lists of hits in order: attractors within the kill distance
    /// die, crown gaps are claimed, and each live attractor keeps its nearest node within the
    /// influence radius. The squared distances are `[influence, kill, crown gap]`.
    fn apply_hits(&mut self, chunks: usize, [di2, dk2, gap2]: [f32; 3]) {
        let all_hits = std::mem::take(&mut self.hits);
        for hits in &all_hits[..chunks] {
            for &(a, node, d2) in hits {
                let a = a as usize;
                if !self.alive[a] {
                    continue;
                }
                if d2 <= dk2 {
                    self.kill(a);
                    continue;
                }
                if d2 <= gap2 {
                    let tree = self.tree[node as usize];
                    if self.claim[a] == NONE {
                        self.claim[a] = tree;
                    } else if self.claim[a] != tree {
                        self.kill(a);
                        continue;
                    }
                }
                if d2 <= di2 && (d2 < self.nearest_d2[a] || (d2 == self.nearest_d2[a] && node < self.nearest[a])) {
                    if self.nearest[a] == NONE {
                        self.fresh.push(a as u32);
                    }
                    self.nearest[a] = node;
                    self.nearest_d2[a] = d2;
                    self.slot_d2[self.slot_of[a] as usize] = d2;
                    self.toward[a] = (self.attractors[a] - self.pos[node as usize]).normalize();
                }
            }
        }
        self.hits = all_hits;
    }

    fn kill(&mut self, a: usize) {
        self.alive[a] = false;
        self.killed.push(a as u32);
        self.slot_d2[self.slot_of[a] as usize] = DEAD;
        self.alive_count -= 1;
    }

    /// Runs up to `iterations` growth iterations; returns why growth stopped once it has (now
    /// or in an earlier call), `None` while it can go on.
    pub fn step(&mut self, iterations: u32) -> Option<Termination> {
        for _ in 0..iterations {
            if self.termination.is_some() {
                break;
            }
            self.termination = self.iterate();
        }
        self.termination
    }

    /// Grows until growth stops and returns why.
    pub fn run(&mut self) -> Termination {
        loop {
            if let Some(t) = self.step(u32::MAX) {
                return t;
            }
        }
    }

    fn iterate(&mut self) -> Option<Termination> {
        if self.alive_count == 0 {
            return Some(Termination::AttractorsExhausted);
        }
        if self.iterations >= self.params.iterations {
            return Some(Termination::IterationLimit);
        }
        let alive = &self.alive;
        self.influenced.retain(|&a| alive[a as usize]);
        if !self.fresh.is_empty() {
            self.fresh.retain(|&a| alive[a as usize]);
            self.fresh.sort_unstable();
            merge_sorted(&self.influenced, &self.fresh, &mut self.merged);
            std::mem::swap(&mut self.influenced, &mut self.merged);
            self.fresh.clear();
        }
        self.touched.clear();
        for &a in &self.influenced {
            let node = self.nearest[a as usize] as usize;
            if self.is_growing(node) {
                if self.count[node] == 0 {
                    self.touched.push(node as u32);
                }
                self.sum[node] += self.toward[a as usize];
                self.count[node] += 1;
            }
        }
        if self.touched.is_empty() {
            return Some(Termination::NoInfluence);
        }
        // Nodes grow in index order, which fixes the order of the new segments.
        self.touched.sort_unstable();
        let first_new = self.pos.len();
        self.iterations += 1;
        for t in 0..self.touched.len() {
            let v = self.touched[t] as usize;
            if self.grow(v) {
                self.last_growth[v] = self.iterations;
            }
            self.sum[v] = Vec3::ZERO;
            self.count[v] = 0;
        }
        self.absorb(first_new);
        None
    }

    /// Whether node `v` still takes part: fewer than max_grad successors, and no more than max_NG
    /// iterations without growth. Both only get worse, so a retired node stays retired.
    fn is_growing(&self, v: usize) -> bool {
        self.children[v] < self.params.max_degree && self.iterations - self.last_growth[v] <= self.params.max_no_growth
    }

    /// Adds a successor to node `v` if the rules allow; returns whether it did.
    fn grow(&mut self, v: usize) -> bool {
        let Some(dir) = growth_direction(self.sum[v], self.params.tropism) else {
            return false;
        };
        if dir.dot(self.dir[v]) < REVERSAL_COS {
            return false;
        }
        let depth = self.depth[v] + u32::from(self.children[v] > 0);
        if depth > self.params.max_depth || self.children[v] >= self.params.max_degree {
            return false;
        }
        let start = self.pos[v];
        let end = start + dir * step_length(&self.params, self.depth[v]);
        let tree = self.tree[v];
        let segment = self.graphs[tree as usize].push(start, end, self.segment[v], depth);
        self.children[v] += 1;
        self.add_node(end, dir, depth, tree, segment);
        true
    }

    /// The grown graphs, one per root, before smoothing and curve reduction (every segment is a
    /// growth step).
    pub fn graphs(&self) -> &[BranchGraph] {
        &self.graphs
    }

    /// The graphs after the post-processing the parameters ask for: branching-angle smoothing,
    /// then curve reduction.
    pub fn finish(&self) -> Result<Vec<BranchGraph>, ColonizeError> {
        self.graphs
            .iter()
            .map(|g| {
                let mut g = g.clone();
                if self.params.smooth_angles {
                    smooth_branching(&mut g);
                }
                Ok(reduce_curves(&g, self.params.curve_reduction)?)
            })
            .collect()
    }

    /// Why growth stopped, or `None` while it can go on.
    pub fn termination(&self) -> Option<Termination> {
        self.termination
    }

    /// The growth parameters.
    pub fn params(&self) -> &ColonizeParams {
        &self.params
    }

    /// Where the trunks aimed: (centre, reach) per target.
    pub fn targets(&self) -> &[(Vec3, f32)] {
        &self.targets
    }

    /// Iterations run so far (the trunk is not counted).
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    /// All attractors, in sampling order.
    pub fn attractors(&self) -> &[Vec3] {
        &self.attractors
    }

    /// Whether attractor `i` is still alive (no node came within d_k).
    pub fn is_alive(&self, i: usize) -> bool {
        self.alive.get(i).copied().unwrap_or(false)
    }

    /// Killed attractors in the order they died (a growth step's kills are in a fixed order too),
    /// so a caller can mirror kills incrementally: the entries past the length it saw last.
    pub fn killed(&self) -> &[u32] {
        &self.killed
    }

    /// Number of attractors still alive.
    pub fn attractors_left(&self) -> usize {
        self.alive_count
    }

    /// The run's sizes so far, with `grow_ms` as measured by the caller.
    pub fn stats(&self, grow_ms: f64) -> super::ColonizeStats {
        super::ColonizeStats {
            attractors: self.attractors.len(),
            attractors_left: self.alive_count,
            iterations: self.iterations,
            nodes: self.pos.len(),
            termination: self.termination,
            grow_ms,
        }
    }

    /// Number of nodes over all trees (one per segment).
    pub fn nodes(&self) -> usize {
        self.pos.len()
    }
}
