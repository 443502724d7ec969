//! Semi-Lagrangian sediment transport (thesis eq. 2.30, after Stam 1999),
//! made conservative: [`Transport::SemiLagrangian`](super::Transport::SemiLagrangian).
//!
//! Every cell traces its velocity back by v·Δt/l cells and lands between up
//! to four source cells, with bilinear weights w_ij. The thesis copies that
//! sample, s'_i = Σ_j w_ij·s_j, which makes sediment where several cells
//! sample one source and destroys it where none does: its landscapes lost
//! 1.3–8.7 % of their material over 1000 iterations. Here each source shares
//! its sediment among the cells that sample it, in proportion to their
//! weights: with W_j = Σ_i w_ij (what j is sampled by in all),
//! s'_i = Σ_j w_ij·s_j / W_j, and a source nobody samples keeps its sediment.
//! The sediment is still gathered from upstream with bilinear weights, and
//! where the flow is uniform (every W_j = 1) the result is the thesis's
//! sample; but every source gives out exactly what it has, so the total is
//! conserved up to f32 rounding. The thesis's behaviour is not kept as a
//! mode: no preset reproduces a thesis table with it (the scores of Tables
//! 5.3–5.11 come from landscapes and noise we do not match: landscape 1
//! starts at ε = 0.449 here, 0.0245 there, under either transport), and its
//! losses made the material books meaningless. A global mass correction
//! (scaling every cell by the lost fraction) would conserve the total too,
//! but it moves sediment between cells that never met and makes every cell
//! depend on the whole chunk; the shares here are local.
//!
//! **One cell per iteration.** A trace is cut to at most one cell along each
//! axis (|v·Δt/l| ≤ 1; the pipes' own limit on the outflow keeps most below
//! that anyway). So sediment moves at most one cell per iteration, and a
//! cell's new sediment depends only on the sediment within one cell and the
//! velocities within two: a chunk eroded with an apron of cells around it
//! computes its own cells as a run over the whole terrain would.
//!
//! **Edges.** With [`Boundary::Wrap`] traces wrap. With [`Boundary::Closed`]
//! a trace ends inside the chunk (the wall column samples itself). With
//! [`Boundary::Drain`] a trace that leaves the chunk samples nothing there
//! (outside is dry), and a ring of cells just outside, each tracing like the
//! edge cell beside it, samples the edge cells: what they take (W_j counts
//! them) leaves the chunk and is booked as drained sediment. (The thesis
//! gives a trace that leaves the grid the average of the cell's N4
//! neighbours, eq. 2.31, which conserves nothing.)
//!
//! **Rows.** A run of rows goes row by row: it traces the next row, sums
//! the weights every source of the current row is sampled by and divides
//! its sediment by them, then gathers the row before. A run computes the
//! sources of the row on either side of it too, as its neighbour does, so
//! each row's result is a function of the planes alone. Most rows move
//! while the water sweep's block is still in the caches: as the sweep
//! finishes each row, the block gathers two rows back ([`Advect::trail`]),
//! reading only its own rows; the first and last two of each block read
//! rows of the blocks beside them, and move after the sweep ([`rest`]), from
//! velocity and sediment that nothing changes any more. Results do not
//! depend on the number of threads or on where the rows are split (at
//! 1024², trailing the sweep took 3–6 % off a water step, which reads its
//! planes from memory; at 512² they stay in the last-level cache either
//! way). The loops over a row are [`Kernel`]s of selects and products, and
//! vectorize.

use std::ops::Range;

use rayon::prelude::*;

use super::grid::{Grid, filled, row_at};
use super::params::Boundary;
use crate::registers::{Kernel, Registers};

/// Rows per partial sum of the drained sediment. The transport ran in
/// blocks of 32 rows once, summing its rows' drains row by row, then block
/// by block: partial sums over the same rows, added in the same order, keep
/// the books (which the state hash covers) bit for bit however the rows are
/// split between the water sweep and [`rest`].
const BOOK_ROWS: usize = 32;

/// Total weight under which a source counts as unsampled and keeps its
/// sediment: its share per unit of weight could overflow, and what it would
/// give out is below rounding.
const UNSAMPLED: f32 = 1e-20;

/// The rows of the water sweep's block `first..=last` that it transports
/// itself as it goes ([`Advect::trail`]): those whose samplers and sources
/// all lie in the block, every row but its first two and last two. `None`
/// when a block is too short to have any.
fn trailing(first: usize, last: usize) -> Option<[usize; 2]> {
    (last >= first + 4).then(|| [first + 2, last - 2])
}

/// The rest of the transport `a` (of the whole planes) after the water
/// sweep: moves the rows that the sweep's blocks of `block_rows` rows did
/// not move trailing ([`trailing`]) into `next`, booking each row's drain in
/// `books`; returns the sediment drained off the edges by every row.
pub(crate) fn rest(a: &Advect<'_>, block_rows: usize, next: &mut [f32], books: &mut [f64]) -> f64 {
    let n = a.grid.n;
    // The rows left, in runs as long as they come: a block's last two rows
    // and the next block's first two move as one run, which traces and
    // weighs the rows between them once.
    let mut runs: Vec<Range<usize>> = Vec::new();
    for first in (0..n).step_by(block_rows.max(1)) {
        let last = (first + block_rows).min(n) - 1;
        let head = first..(first + 2).min(last + 1);
        let tail = (first + 2).max(last.saturating_sub(1))..last + 1;
        for run in [head, tail].into_iter().filter(|r| !r.is_empty()) {
            match runs.last_mut() {
                Some(before) if before.end == run.start => before.end = run.end,
                _ => runs.push(run),
            }
        }
    }
    let mut jobs = Vec::with_capacity(runs.len());
    let (mut next, mut drained, mut at) = (next, &mut *books, 0);
    for run in runs {
        let (_, rest) = std::mem::take(&mut next).split_at_mut((run.start - at) * n);
        let (moved, rest) = rest.split_at_mut(run.len() * n);
        next = rest;
        let (_, rest) = std::mem::take(&mut drained).split_at_mut(run.start - at);
        let (booked, rest) = rest.split_at_mut(run.len());
        drained = rest;
        at = run.end;
        jobs.push((run.start, moved, booked));
    }
    jobs.into_par_iter()
        .for_each_init(Rows::default, |rows, (first, next, drained)| {
            a.rows(first, next, drained, rows)
        });
    books
        .chunks(BOOK_ROWS)
        .map(|rows| rows.iter().fold(0.0, |sum, &d| sum + d))
        .sum()
}

/// What a sampler with a trace of `c` cells (|c| ≤ 1) along one axis takes
/// from its neighbour towards −1, from itself and from its neighbour towards
/// +1: the bilinear weights of the point x − c.
#[inline(always)]
fn shares(c: f32) -> [f32; 3] {
    [
        if c > 0.0 { c } else { 0.0 },
        1.0 - c.abs(),
        if c < 0.0 { -c } else { 0.0 },
    ]
}

/// Traces shorter than this many cells count as none: the products of their
/// shares would fall below f32's normal range, where every operation costs
/// a hundred cycles (velocities of 10⁻¹⁹ made the transport ten times
/// slower), and they move nothing anyway.
const STILL: f32 = 1e-12;

/// The trace of a cell with velocity `v`, `per_cell` cells per unit of it,
/// limited to [lo, hi] by selects (`f32::clamp` asserts on its bounds).
#[inline(always)]
fn trace(v: f32, per_cell: f32, lo: f32, hi: f32) -> f32 {
    let c = v * per_cell;
    let c = if c < lo { lo } else { c };
    let c = if c > hi { hi } else { c };
    if c.abs() < STILL { 0.0 } else { c }
}

/// A row of samplers' traces, in cells along x and z, padded with one
/// sampler on either side: column k − 1 is at k.
#[derive(Default)]
struct Traces {
    x: Vec<f32>,
    z: Vec<f32>,
}

impl Traces {
    /// Padded cell `k`'s shares along x and along z.
    fn shares(&self, k: usize) -> ([f32; 3], [f32; 3]) {
        (shares(self.x[k]), shares(self.z[k]))
    }

    /// `width` padded samplers that stay where they are.
    fn still(&mut self, width: usize) {
        for p in [&mut self.x, &mut self.z] {
            filled(p, width, 0.0);
        }
    }
}

/// Rows a run of rows reuses, in rings indexed by row.
#[derive(Default)]
pub(crate) struct Rows {
    /// The samplers of the last three rows traced.
    traces: [Traces; 3],
    /// Sediment per unit of weight of the last three source rows, padded
    /// like [`Traces`] (0 beyond an edge that is not wrapped).
    per_weight: [Vec<f32>; 3],
    /// What the last two source rows keep because nobody samples them.
    keep: [Vec<f32>; 2],
    /// The weight every source of the current row is sampled by.
    weight: Vec<f32>,
    /// Drained edge sources of the current row: column and the weight the
    /// samplers outside take.
    outside: Vec<(usize, f32)>,
}

/// The `n` cells of a padded row seen from one column behind, from their
/// own column and from one ahead.
fn columns(p: &[f32], n: usize) -> [&[f32]; 3] {
    [&p[..n], &p[1..][..n], &p[2..][..n]]
}

/// Ring slot of row `r` in a ring of `len`.
fn slot(r: isize, len: usize) -> usize {
    r.rem_euclid(len as isize) as usize
}

/// What every run of rows of one transport shares: the sediment and
/// velocity planes (`[vx, vz]`), or a block of their rows.
pub(crate) struct Advect<'a> {
    pub(crate) sed: &'a [f32],
    pub(crate) velocity: [&'a [f32]; 2],
    /// The row of the grid that the planes' first row is.
    pub(crate) base: usize,
    pub(crate) grid: Grid,
    /// Δt / l: cells travelled per unit of velocity.
    pub(crate) per_cell: f32,
    pub(crate) registers: Registers,
}

impl Advect<'_> {
    /// Once the water sweep of the block of rows `first..=last` finished
    /// its row `z`, the step of its trailing transport ([`trailing`]) that
    /// row completes: the gather two rows back, into the block's `next`
    /// rows, booking each row's drain in the block's `drained`. The rows it
    /// reads are the block's own, in the caches from the sweep; they are
    /// final, and no other block writes them.
    pub(crate) fn trail(
        &self,
        [first, last]: [usize; 2],
        z: usize,
        next: &mut [f32],
        drained: &mut [f64],
        rows: &mut Rows,
    ) {
        let Some([from, to]) = trailing(first, last) else {
            return;
        };
        let n = self.grid.n;
        let own = from - first..to + 1 - first;
        if z == first + 1 {
            self.begin(from, rows);
        } else if z > first + 1 {
            let (next, drained) = (&mut next[own.start * n..own.end * n], &mut drained[own]);
            self.advance(z as isize - 1, [from, to], next, drained, rows);
        }
    }

    /// Rows `first..` that `next` covers (as many as `drained`), row by row,
    /// booking each row's drain in `drained`.
    fn rows(&self, first: usize, next: &mut [f32], drained: &mut [f64], rows: &mut Rows) {
        let last = first + drained.len() - 1;
        self.begin(first, rows);
        for r in first as isize - 1..=last as isize + 1 {
            self.advance(r, [first, last], next, drained, rows);
        }
    }

    /// Before the run of rows from `first` on: the samplers of the two rows
    /// before it.
    fn begin(&self, first: usize, rows: &mut Rows) {
        let first = first as isize;
        for r in [first - 2, first - 1] {
            self.samplers(r, &mut rows.traces[slot(r, 3)]);
        }
    }

    /// Step `r` of the run of rows `first..=last` (from `first` − 1 to
    /// `last` + 1): traces row `r` + 1, the sources of row `r` (its drain
    /// into `drained` if the run's), and gathers row `r` − 1 into `next`.
    fn advance(&self, r: isize, [first, last]: [usize; 2], next: &mut [f32], drained: &mut [f64], rows: &mut Rows) {
        let n = self.grid.n;
        self.samplers(r + 1, &mut rows.traces[slot(r + 1, 3)]);
        let own = (first as isize..=last as isize).contains(&r);
        let d = self.sources(r, rows, own);
        if own {
            drained[r as usize - first] = d;
        }
        if r > first as isize {
            let z = r as usize - 1 - first;
            self.gather(r - 1, rows, &mut next[z * n..][..n]);
        }
    }

    /// The row of the plane that row `r` of the grid (perhaps beyond an
    /// edge) stands for: wrapped, or none beyond an edge that is not.
    fn real(&self, r: isize) -> Option<usize> {
        let n = self.grid.n as isize;
        match self.grid.boundary {
            Boundary::Wrap => Some(r.rem_euclid(n) as usize),
            _ => (0..n).contains(&r).then_some(r as usize),
        }
    }

    /// The samplers of row `r` into `out`: beyond an edge that does not
    /// wrap, samplers that stay where they are (the drain's ring outside is
    /// [`Advect::outside`]'s).
    fn samplers(&self, r: isize, out: &mut Traces) {
        let n = self.grid.n;
        let Some(z) = self.real(r) else {
            out.still(n + 2);
            return;
        };
        out.x.resize(n + 2, 0.0);
        out.z.resize(n + 2, 0.0);
        let closed = self.grid.boundary == Boundary::Closed;
        // A wall: the first and last rows and columns trace no further than
        // themselves.
        let lo = if closed && z + 1 == n { 0.0 } else { -1.0 };
        let hi = if closed && z == 0 { 0.0 } else { 1.0 };
        self.registers.run(TraceRow {
            velocity: self.velocity.map(|p| row_at(p, (z - self.base) * n, n)),
            per_cell: self.per_cell,
            bounds: [lo, hi],
            out: [&mut out.x[1..=n], &mut out.z[1..=n]],
        });
        if closed {
            let vx = row_at(self.velocity[0], (z - self.base) * n, n);
            let lo = |x: usize| if x + 1 == n { 0.0 } else { -1.0 };
            let hi = |x: usize| if x == 0 { 0.0 } else { 1.0 };
            let edge = |x: usize| trace(vx[x], self.per_cell, lo(x), hi(x));
            (out.x[1], out.x[n]) = (edge(0), edge(n - 1));
        }
        let wrap = self.grid.boundary == Boundary::Wrap;
        for p in [&mut out.x, &mut out.z] {
            (p[0], p[n + 1]) = if wrap { (p[n], p[1]) } else { (0.0, 0.0) };
        }
    }

    /// The sources of row `r`: the weight each is sampled by, its sediment
    /// per unit of weight and what it keeps; returns what the drain's ring
    /// outside took, when `books` (the block's own rows).
    fn sources(&self, r: isize, rows: &mut Rows, books: bool) -> f64 {
        let n = self.grid.n;
        let per_weight = &mut rows.per_weight[slot(r, 3)];
        let Some(z) = self.real(r) else {
            filled(per_weight, n + 2, 0.0);
            return 0.0;
        };
        per_weight.resize(n + 2, 0.0);
        let samplers = [-1, 0, 1].map(|e| &rows.traces[slot(r + e, 3)]);
        filled(&mut rows.weight, n, 0.0);
        let [back, here, front] = samplers.map(|t| [columns(&t.x, n), columns(&t.z, n)]);
        let weight = &mut rows.weight;
        self.registers.run(WeighRow::<0> { traces: back, weight });
        self.registers.run(WeighRow::<1> { traces: here, weight });
        self.registers.run(WeighRow::<2> { traces: front, weight });
        rows.outside.clear();
        if self.grid.boundary == Boundary::Drain {
            let edge_row = z == 0 || z + 1 == n;
            for x in (0..n).filter(|&x| edge_row || x == 0 || x + 1 == n) {
                let w = self.outside(x, z, samplers);
                rows.weight[x] += w;
                rows.outside.push((x, w));
            }
        }
        self.registers.run(DivideRow {
            sed: &self.sed[(z - self.base) * n..][..n],
            weight: &rows.weight,
            per_weight: &mut per_weight[1..=n],
            keep: &mut rows.keep[slot(r, 2)],
        });
        (per_weight[0], per_weight[n + 1]) = match self.grid.boundary {
            Boundary::Wrap => (per_weight[n], per_weight[1]),
            _ => (0.0, 0.0),
        };
        if !books {
            return 0.0;
        }
        let taken = |&(x, w): &(usize, f32)| f64::from(w) * f64::from(per_weight[x + 1]);
        rows.outside.iter().map(taken).sum()
    }

    /// The weight the drain's ring outside the chunk samples edge cell
    /// `(x, z)` with; `samplers` are rows z − 1, z and z + 1.
    fn outside(&self, x: usize, z: usize, samplers: [&Traces; 3]) -> f32 {
        let n = self.grid.n as isize;
        let mut w = 0.0;
        for ez in -1..=1isize {
            for ex in -1..=1isize {
                let (sx, sz) = (x as isize + ex, z as isize + ez);
                if (0..n).contains(&sx) && (0..n).contains(&sz) {
                    continue;
                }
                // A sampler outside traces like the edge cell nearest to it.
                let row = samplers[(sz.clamp(0, n - 1) - z as isize + 1) as usize];
                let (xs, zs) = row.shares(sx.clamp(0, n - 1) as usize + 1);
                w += xs[(1 - ex) as usize] * zs[(1 - ez) as usize];
            }
        }
        w
    }

    /// Row `r`, gathered into `next` from the sources around it.
    fn gather(&self, r: isize, rows: &Rows, next: &mut [f32]) {
        let n = self.grid.n;
        let own = &rows.traces[slot(r, 3)];
        let source = |e: isize| columns(&rows.per_weight[slot(r + e, 3)], n);
        self.registers.run(GatherRow {
            traces: [&own.x[1..=n], &own.z[1..=n]],
            per_weight: [source(-1), source(0), source(1)],
            keep: &rows.keep[slot(r, 2)],
            next,
        });
    }
}

/// The traces of a row of samplers from their velocity (`[vx, vz]`), in
/// `per_cell` cells per unit of velocity: along x within one cell, along z
/// within `bounds`; `out` holds x, then z.
struct TraceRow<'a> {
    velocity: [&'a [f32]; 2],
    per_cell: f32,
    bounds: [f32; 2],
    out: [&'a mut [f32]; 2],
}

impl Kernel for TraceRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Self {
            velocity: [vx, vz],
            per_cell,
            bounds: [lo, hi],
            out: [cx, cz],
        } = self;
        let m = vx.len();
        let (vz, cx, cz) = (&vz[..m], &mut cx[..m], &mut cz[..m]);
        for i in 0..m {
            cx[i] = trace(vx[i], per_cell, -1.0, 1.0);
            cz[i] = trace(vz[i], per_cell, lo, hi);
        }
    }
}

/// Adds to `weight` what one row of samplers, `D` − 1 rows along from the
/// sources, takes from them: `traces` holds their x and z traces, each for
/// the samplers one column behind, in the same column and one ahead.
struct WeighRow<'a, const D: usize> {
    traces: [[&'a [f32]; 3]; 2],
    weight: &'a mut [f32],
}

impl<const D: usize> Kernel for WeighRow<'_, D> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let m = self.weight.len();
        let [[xl, xc, xr], [zl, zc, zr]] = self.traces.map(|t| t.map(|p| &p[..m]));
        for (i, w) in self.weight.iter_mut().enumerate() {
            // A sampler e columns and D − 1 rows along takes its share for
            // −e columns and 1 − D rows along.
            let (l, c, r) = (shares(xl[i])[2], shares(xc[i])[1], shares(xr[i])[0]);
            let (zl, zc, zr) = (shares(zl[i])[2 - D], shares(zc[i])[2 - D], shares(zr[i])[2 - D]);
            *w += l * zl + c * zc + r * zr;
        }
    }
}

/// Each source's sediment per unit of the `weight` it is sampled by, or,
/// when it is not sampled, the sediment it keeps.
struct DivideRow<'a> {
    sed: &'a [f32],
    weight: &'a [f32],
    per_weight: &'a mut [f32],
    keep: &'a mut Vec<f32>,
}

impl Kernel for DivideRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let m = self.sed.len();
        self.keep.resize(m, 0.0);
        let (weight, per_weight, keep) = (&self.weight[..m], &mut self.per_weight[..m], &mut self.keep[..m]);
        for (i, &s) in self.sed.iter().enumerate() {
            let sampled = weight[i] > UNSAMPLED;
            per_weight[i] = if sampled { s / weight[i] } else { 0.0 };
            keep[i] = if sampled { 0.0 } else { s };
        }
    }
}

/// A row's new sediment: what it keeps plus, over the 3 × 3 sources around
/// each cell, its x share × z share × the source's sediment per unit of
/// weight. `traces` are the row's own (x, then z), `per_weight[dz + 1][dx +
/// 1]` the sources dx columns and dz rows along.
struct GatherRow<'a> {
    traces: [&'a [f32]; 2],
    per_weight: [[&'a [f32]; 3]; 3],
    keep: &'a [f32],
    next: &'a mut [f32],
}

impl Kernel for GatherRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let m = self.next.len();
        let [cx, cz] = self.traces.map(|p| &p[..m]);
        let [back, here, front] = self.per_weight.map(|r| r.map(|p| &p[..m]));
        let keep = &self.keep[..m];
        for (i, out) in self.next.iter_mut().enumerate() {
            let (x, [zb, zc, za]) = (shares(cx[i]), shares(cz[i]));
            let (b, h, f) = (along(x, back, i), along(x, here, i), along(x, front, i));
            *out = keep[i] + (zb * b + zc * h + za * f);
        }
    }
}

/// Cell `i` of a row of sources (`r[dx + 1]` dx columns along) weighed by
/// the x shares `x`.
#[inline(always)]
fn along(x: [f32; 3], r: [&[f32]; 3], i: usize) -> f32 {
    x[0] * r[0][i] + x[1] * r[1][i] + x[2] * r[2][i]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The transport as the water sweep runs it: each block of `block_rows`
    /// rows trails its sweep, row by row, and [`rest`] moves the rest.
    fn advect(
        sed: &[f32],
        velocity: [&[f32]; 2],
        grid: Grid,
        per_cell: f32,
        block_rows: usize,
        next: &mut [f32],
        registers: Registers,
    ) -> f64 {
        let n = grid.n;
        let plane = Advect {
            sed,
            velocity,
            base: 0,
            grid,
            per_cell,
            registers,
        };
        let mut drained = vec![f64::NAN; n];
        let mut rows = Rows::default();
        for (b, (next, drained)) in next
            .chunks_mut(block_rows * n)
            .zip(drained.chunks_mut(block_rows))
            .enumerate()
        {
            let (first, last) = (b * block_rows, b * block_rows + drained.len() - 1);
            let own = first * n..(last + 1) * n;
            let block = Advect {
                sed: &sed[own.clone()],
                velocity: velocity.map(|v| &v[own.clone()]),
                base: first,
                grid,
                per_cell,
                registers,
            };
            for z in first..=last {
                block.trail([first, last], z, next, drained, &mut rows);
            }
        }
        rest(&plane, block_rows, next, &mut drained)
    }

    /// The transport written out source by source in f64, as the module
    /// docs state it: new sediment and drained sediment.
    fn reference(grid: Grid, per_cell: f32, sed: &[f32], [vx, vz]: [&[f32]; 2]) -> (Vec<f64>, f64) {
        let n = grid.n as isize;
        let inside = |v: isize| (0..n).contains(&v);
        let edge = |v: isize| v.clamp(0, n - 1);
        // The trace of a sampler, inside or in the drain's ring outside.
        let trace = |sx: isize, sz: isize| {
            let i = (edge(sz) * n + edge(sx)) as usize;
            let closed = grid.boundary == Boundary::Closed;
            let bounds = |s: isize| match closed {
                true => ((s - (n - 1)).max(-1) as f32, s.min(1) as f32),
                false => (-1.0, 1.0),
            };
            let ((lx, hx), (lz, hz)) = (bounds(sx), bounds(sz));
            [trace(vx[i], per_cell, lx, hx), trace(vz[i], per_cell, lz, hz)]
        };
        let ring = if grid.boundary == Boundary::Drain { 1 } else { 0 };
        let mut takes = Vec::new();
        let mut weight = vec![0.0f64; sed.len()];
        for sz in -ring..n + ring {
            for sx in -ring..n + ring {
                let [cx, cz] = trace(sx, sz);
                let (xs, zs) = (shares(cx), shares(cz));
                for (dz, &wz) in zs.iter().enumerate() {
                    for (dx, &wx) in xs.iter().enumerate() {
                        let (jx, jz) = (sx + dx as isize - 1, sz + dz as isize - 1);
                        let j = match grid.boundary {
                            Boundary::Wrap => jz.rem_euclid(n) * n + jx.rem_euclid(n),
                            _ if inside(jx) && inside(jz) => jz * n + jx,
                            _ => continue,
                        } as usize;
                        let w = f64::from(wx) * f64::from(wz);
                        let sampler = (inside(sx) && inside(sz)).then_some((sz * n + sx) as usize);
                        takes.push((sampler, j, w));
                        weight[j] += w;
                    }
                }
            }
        }
        let mut next: Vec<f64> = (0..sed.len())
            .map(|j| if weight[j] > 1e-20 { 0.0 } else { f64::from(sed[j]) })
            .collect();
        let mut drained = 0.0;
        for (sampler, j, w) in takes {
            if weight[j] > 1e-20 {
                let got = w * f64::from(sed[j]) / weight[j];
                match sampler {
                    Some(i) => next[i] += got,
                    None => drained += got,
                }
            }
        }
        (next, drained)
    }

    fn velocity() -> impl Strategy<Value = f32> {
        prop_oneof![
            Just(0.0f32),
            Just(1.0),
            Just(-1.0),
            Just(1.0 - f32::EPSILON),
            -1.5f32..1.5,
            -20.0f32..20.0
        ]
    }

    fn boundary() -> impl Strategy<Value = Boundary> {
        prop_oneof![Just(Boundary::Drain), Just(Boundary::Closed), Just(Boundary::Wrap)]
    }

    proptest! {
        /// Every vector build and every split between the water sweep's
        /// blocks and the rest moves the sediment as the reference does, and
        /// bit for bit as the others do; what leaves is drained, and only
        /// by the drain.
        #[test]
        fn rows_move_sediment_as_the_reference(
            n in 1usize..70,
            boundary in boundary(),
            per_cell in prop_oneof![Just(1.0f32), Just(0.75)],
            cells in prop::collection::vec((0.0f32..4.0, velocity(), velocity()), 70 * 70),
        ) {
            let cells = &cells[..n * n];
            let sed: Vec<f32> = cells.iter().map(|c| c.0).collect();
            let vx: Vec<f32> = cells.iter().map(|c| c.1).collect();
            let vz: Vec<f32> = cells.iter().map(|c| c.2).collect();
            let grid = Grid { n, boundary };
            let (want, want_drained) = reference(grid, per_cell, &sed, [&vx, &vz]);
            let total: f64 = sed.iter().map(|&s| f64::from(s)).sum();
            let mut first: Option<Vec<f32>> = None;
            let runs = Registers::all_available().into_iter().flat_map(|r| [(r, 64), (r, 5), (r, 3)]);
            for (registers, block_rows) in runs {
                let mut next = vec![f32::NAN; n * n];
                let drained = advect(&sed, [&vx, &vz], grid, per_cell, block_rows, &mut next, registers);
                for (i, (&got, &want)) in next.iter().zip(&want).enumerate() {
                    prop_assert!(got >= 0.0 && (f64::from(got) - want).abs() <= 1e-5 * (1.0 + want),
                        "cell {i} of {n}², {boundary:?}, {registers:?}: {got} vs {want}");
                }
                prop_assert!((drained - want_drained).abs() <= 1e-5 * (1.0 + total));
                let kept: f64 = next.iter().map(|&s| f64::from(s)).sum();
                prop_assert!((kept + drained - total).abs() <= 1e-5 * total.max(1.0), "{kept} + {drained} vs {total}");
                prop_assert!(boundary == Boundary::Drain || drained == 0.0);
                match &first {
                    Some(f) => prop_assert!(f.iter().zip(&next).all(|(a, b)| a.to_bits() == b.to_bits()), "{registers:?}, blocks of {block_rows}"),
                    None => first = Some(next),
                }
            }
        }
    }

    /// Where nothing moves, every cell keeps its sediment bit for bit.
    #[test]
    fn still_water_keeps_its_sediment() {
        for boundary in [Boundary::Drain, Boundary::Closed, Boundary::Wrap] {
            let n = 40;
            let sed: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.37).collect();
            let still = vec![0.0; n * n];
            let mut next = vec![0.0; n * n];
            let drained = advect(
                &sed,
                [&still, &still],
                Grid { n, boundary },
                1.0,
                16,
                &mut next,
                Registers::best(),
            );
            assert_eq!(drained, 0.0);
            assert!(
                next.iter().zip(&sed).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{boundary:?}"
            );
        }
    }

    /// A uniform flow of one cell per step along +x shifts every row by one
    /// cell: the drain loses the last column, the wrap brings it round.
    #[test]
    fn a_uniform_flow_shifts_by_one_cell() {
        let n = 8;
        let sed: Vec<f32> = (0..n * n).map(|i| (i % n) as f32 + 1.0).collect();
        let (vx, vz) = (vec![1.0; n * n], vec![0.0; n * n]);
        for (boundary, lost) in [(Boundary::Drain, n as f64 * 8.0), (Boundary::Wrap, 0.0)] {
            let mut next = vec![0.0; n * n];
            let drained = advect(
                &sed,
                [&vx, &vz],
                Grid { n, boundary },
                1.0,
                16,
                &mut next,
                Registers::best(),
            );
            assert_eq!(drained, lost, "{boundary:?}");
            for z in 0..n {
                for x in 0..n {
                    let want = match (boundary, x) {
                        (Boundary::Drain, 0) => 0.0,
                        _ => ((x + n - 1) % n) as f32 + 1.0,
                    };
                    assert_eq!(next[z * n + x], want, "{boundary:?} ({x}, {z})");
                }
            }
        }
    }
}
