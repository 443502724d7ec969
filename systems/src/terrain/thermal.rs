//! Thermal erosion (thesis §2.3.3, §3.1.5): Musgrave's talus rule with
//! Olsen's split over every N4 neighbour below the threshold, and layer sliding.
//!
//! A column whose ground is higher than a neighbour's by more than the top
//! material's talus threshold T_A = tan(α)·l sends K·(d_max − T_A) downhill,
//! split in proportion to each such neighbour's difference (eq. 2.38–2.39).
//! Material that slides arrives as regolith (every erosion process makes
//! regolith, thesis §3.1.2), or, with `debris_to_regolith` off, as the
//! material it was.
//!
//! **Layer sliding** (the thesis gives the cases but not the flow chart, so
//! this is our reading; docs/design/terrain.md, "Layer sliding"): when the
//! top layer is consolidated and would not move by its own talus angle, and
//! the layer directly beneath it is loose (regolith or sand), the pressures
//! p = s·ρ·g (eq. 3.12, g cancels) decide:
//! - p_loose > p_top: the loose bed carries the top away; the column slides
//!   as a whole under the loose material's talus angle (case 3).
//! - otherwise the top layer pins the bed, but loose material exposed on a
//!   flank (the neighbour's ground below the top of the loose layer by more
//!   than its talus threshold) trickles out from under it (case 2), and the
//!   top layer sinks.
//!
//! A consolidated layer beneath the top never slides (case 1). Edges are
//! walls unless the boundary wraps. Planning before moving makes it
//! order-free and mass-conserving: every cell computes what it sends each
//! neighbour from the old ground, and every cell removes what it sends and
//! adds what it receives once its row and both neighbour rows are planned.
//!
//! Planning a row reads the ground of its neighbour rows, so each block of
//! rows plans all its rows, reading only its own rows, none of them moved
//! yet, and then moves them. Only the plans of each block's first and last
//! row, which read the rows of the blocks beside it, are made beforehand,
//! for all blocks at once. A block's stacks are thus read again while they
//! are still in the caches from its plans, and the plans live in a block's
//! row buffers rather than in planes of the whole chunk. Planning all of a
//! block's rows before moving any reads each plane in runs of a block's
//! rows: at 512² from fresh, 3–8 % faster than planning one row ahead of
//! the row moved, level at 256² and 1024² (timed in pairs in one process).
//! (Asking the caches for the next row's slots ahead, as aging does, made
//! a pass 4 % slower at 512² and gained nothing sure at 1024².)
//!
//! Where aging is due in the same iteration, a block ages each row right
//! after moving it ([`Ager`]): nothing reads a moved row's stacks again in
//! the pass, so the bits are those of aging after it.
//!
//! Rows are planned and moved over straight slices, on the widest vector
//! registers the CPU has: planning computes Olsen's split of every cell
//! branch-free and goes cell by cell only for edges and candidates for layer
//! sliding; moving changes a row's layer stacks a segment of the row at a
//! time, with [`TopRows`] where the change reaches only a column's top two
//! layers (all but a few moving columns in a thousand from fresh), with
//! [`StackRows`] where many others are left, and leaves to [`Layers`] the
//! few others, the columns that need a bottom merge and those that slide
//! off their bed. Results are bit for bit those of the cell-by-cell rules.
//! (`TopRows` deciding each column once from its top two layers, where it
//! had run the rules slot by slot over the top alone, made a pass on
//! landscape 1 at 512² about 30 % faster, fresh and settled, two builds
//! alternated.)

use std::sync::Mutex;

use rayon::prelude::*;

use super::aging::{self, AgeRows, Ager};
use super::columns::{BACK, FRONT, LEFT, Layers, RIGHT, TerrainChunk};
use super::grid::{Around, Grid, ROWS, by_material, filled, highest, lowest, marked, neighbour_row};
use super::materials::{MATERIAL_COUNT, Material};
use super::params::{Boundary, TerrainParams};
use super::stack_rows::{StackRows, pick};
use super::top_rows::TopRows;
use crate::registers::{Kernel, Registers};

/// What a pass works in, reused between passes.
#[derive(Default)]
pub(crate) struct ThermalScratch {
    /// The plans of every block's first and last row: block `b`'s first
    /// row at `2b`, its last at `2b + 1`.
    edges: Vec<PlanRow>,
    /// Row buffers of the plans of the edges, one set per rayon job.
    surfaces: Pool<RowScratch>,
    /// Row buffers of the sweeps, one set per rayon job.
    sweeps: Pool<SweepRows>,
}

/// Row buffers kept between rayon jobs and passes: fresh ones grow by
/// reallocation over their first rows, in every job of every pass.
struct Pool<T>(Mutex<Vec<T>>);

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool(Mutex::new(Vec::new()))
    }
}

impl<T: Default> Pool<T> {
    /// A set of buffers, back in the pool when the lease drops.
    fn lease(&self) -> Lease<'_, T> {
        let rows = self.0.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
        Lease { pool: self, rows }
    }
}

/// Row buffers taken from a [`Pool`].
struct Lease<'a, T: Default> {
    pool: &'a Pool<T>,
    rows: T,
}

impl<T: Default> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.pool.0.lock() {
            p.push(std::mem::take(&mut self.rows));
        }
    }
}

/// What each cell of a row sends.
#[derive(Default)]
struct PlanRow {
    /// To each neighbour, by direction.
    out: [Vec<f32>; 4],
    /// Its material byte, plus [`FROM_BED`]; 0 where it sends nothing.
    src: Vec<u8>,
}

impl PlanRow {
    /// The row as `n` cells to plan into; [`Planner::row`] writes every cell.
    fn cells(&mut self, n: usize) -> ([&mut [f32]; 4], &mut [u8]) {
        for o in &mut self.out {
            o.resize(n, 0.0);
        }
        self.src.resize(n, 0);
        let [o0, o1, o2, o3] = &mut self.out;
        (
            [&mut o0[..n], &mut o1[..n], &mut o2[..n], &mut o3[..n]],
            &mut self.src[..n],
        )
    }
}

/// Marks material taken from the loose bed under the top layer.
const FROM_BED: u8 = 0x80;

const OPPOSITE: [usize; 4] = [1, 0, 3, 2];

/// One thermal pass over `chunk`. With an `ager`, each block also ages each
/// row right after moving it, while the row's stacks are in the caches;
/// returns the thickness aging took off (0 without).
pub(crate) fn step(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    s: &mut ThermalScratch,
    registers: Registers,
    ager: Option<&Ager>,
) -> f64 {
    let n = chunk.size() as usize;
    let block = ROWS * n;
    let boundary = if p.hydraulic.boundary == Boundary::Wrap {
        Boundary::Wrap
    } else {
        Boundary::Closed
    };
    let talus = p.materials.talus_thresholds(p.cell_length);
    let density = p.materials.lut(|m| m.density);
    let rules = Rules {
        grid: Grid { n, boundary },
        talus: &talus,
        density: &density,
        rate: p.thermal.rate,
        sliding: p.thermal.layer_sliding,
    };
    s.edges.resize_with(2 * n.div_ceil(ROWS), PlanRow::default);

    let planner = Planner { stacks: &*chunk, rules };
    s.edges.par_chunks_mut(2).enumerate().for_each_init(
        || s.surfaces.lease(),
        |row, (b, pair)| {
            registers.run(PlanEdges {
                planner: &planner,
                rows: block_rows(b, n),
                pair,
                row: &mut row.rows,
            });
        },
    );

    let edges = &s.edges;
    let to_regolith = p.thermal.debris_to_regolith;
    let lost: Vec<f64> = chunk
        .parts(block)
        .layers
        .into_par_iter()
        .enumerate()
        // Row buffers per rayon job rather than per block: a block's rows
        // find them in the caches from the block before.
        .map_init(
            || s.sweeps.lease(),
            |rows, (b, mut layers)| {
                registers.run(SweepBlock {
                    rules,
                    edges,
                    to_regolith,
                    first: b * ROWS,
                    layers: &mut layers,
                    rows: &mut rows.rows,
                    ager,
                })
            },
        )
        .collect();
    aging::sum_blocks(lost)
}

/// The rows of block `b`, first and last, of a chunk `n` rows deep.
fn block_rows(b: usize, n: usize) -> [usize; 2] {
    let first = b * ROWS;
    [first, (first + ROWS).min(n) - 1]
}

/// Plans the first and last row of block `rows` into `pair`.
struct PlanEdges<'a, 'p> {
    planner: &'a Planner<'p, TerrainChunk>,
    rows: [usize; 2],
    pair: &'a mut [PlanRow],
    row: &'a mut RowScratch,
}

impl Kernel for PlanEdges<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let n = self.planner.rules.grid.n;
        for (z, plan) in self.rows.into_iter().zip(self.pair) {
            let (outs, src) = plan.cells(n);
            self.planner.row(z, outs, src, self.row);
        }
    }
}

/// Sweeps a block of rows from row `first` on: plans its rows, then moves
/// them, where every cell removes what it sends and adds what it receives.
struct SweepBlock<'a, 'l> {
    rules: Rules<'a>,
    edges: &'a [PlanRow],
    to_regolith: bool,
    first: usize,
    layers: &'a mut Layers<'l>,
    rows: &'a mut SweepRows,
    /// Ages each row after its move.
    ager: Option<&'a Ager>,
}

/// Row buffers of a sweep.
#[derive(Default)]
struct SweepRows {
    /// The plans of the block's other rows, row `r` of the block at `r`.
    plans: [PlanRow; ROWS],
    surface: RowScratch,
    flows: FlowRows,
    tops: TopRows,
    stacks: StackRows,
    /// 1 for the moving cells [`StackRows`] left to [`Layers`].
    slow: Vec<u32>,
    age: AgeRows,
}

/// Cells of a row that [`StackRows`] changes at a time: a segment's row
/// buffers stay in the first-level cache from one of its loops to the
/// next, where those of a whole row spill (on landscape 1 at 512², a third
/// fewer misses for as many instructions).
const SEGMENT: usize = 256;

/// Where [`TopRows`] leaves more than one in this many of a segment's
/// cells, [`StackRows`] changes them; fewer go one by one to [`Layers`]
/// (from fresh, a few moving cells in a thousand, whose take reaches
/// deeper than two layers): a pass of [`StackRows`] costs as much for one
/// cell as for all.
const ROW_PATH_SHARE: usize = 4;

/// Changes the stacks of the row's `cells` (from cell `start` of `layers`
/// on) as debris moves as regolith, and marks in `slow` the cells it
/// leaves to [`Layers`]. Cells whose change reaches only their top two
/// layers go through [`TopRows`]; the others through [`StackRows`] where
/// there are many.
#[inline(always)]
fn regolith_cells(
    tops: &mut TopRows,
    stacks: &mut StackRows,
    layers: &mut Layers<'_>,
    row: &mut FlowRows,
    start: usize,
    cells: std::ops::Range<usize>,
    slow: &mut [u32],
) {
    let active = &row.active[cells.clone()];
    let (send, recv) = (&row.send[cells.clone()], &row.recv[cells.clone()]);
    let left = &mut row.left_by_tops[cells.clone()];
    let start = start + cells.start;
    let regolith = Material::Regolith as u8;
    match tops.run(layers, start, active, [send, recv], regolith, left) {
        0 => return slow.fill(0),
        few if few * ROW_PATH_SHARE <= left.len() => return slow.copy_from_slice(left),
        _ => {}
    }
    stacks.load(layers, start, left);
    stacks.take(layers, send, &mut row.removed[cells.clone()]);
    if row.sliver(cells.clone()) {
        stacks.push(layers, regolith, &row.sliver[cells.clone()]);
    }
    stacks.push(layers, regolith, &row.recv[cells]);
    stacks.store(layers);
    slow.copy_from_slice(stacks.slow());
}

impl Kernel for SweepBlock<'_, '_> {
    /// The thickness aging took off the block.
    type Output = f64;

    // Long by design: a block's whole sweep (plan, move, age each row while it is in the caches)
    // is one kernel body, compiled again per register build, over the rows and plans it borrows.
    #[inline(always)]
    fn run(self) -> f64 {
        let Self {
            rules,
            edges,
            to_regolith,
            first,
            layers,
            rows,
            ager,
        } = self;
        let grid = rules.grid;
        let n = grid.n;
        let SweepRows {
            plans: inner,
            surface,
            flows: row,
            tops,
            stacks,
            slow,
            age,
        } = rows;
        let depth = layers.count.len() / n;
        // Every row but the first and last (planned with the edges), before
        // any moves.
        let planner = Planner {
            stacks: &*layers,
            rules,
        };
        let planned = 1..depth.max(2) - 1;
        let mut lost = 0.0;
        for (r, plan) in planned.clone().zip(&mut inner[planned]) {
            let (outs, src) = plan.cells(n);
            planner.row(r, outs, src, surface);
        }
        for r in 0..depth {
            let z = first + r;
            let plan = |zz: usize| {
                let b = zz / ROWS;
                match block_rows(b, n) {
                    [f, _] if zz == f => &edges[2 * b],
                    [_, l] if zz == l => &edges[2 * b + 1],
                    _ => &inner[zz - first],
                }
            };
            let plans = Around {
                back: neighbour_row(grid, z, BACK).map(plan),
                here: plan(z),
                front: neighbour_row(grid, z, FRONT).map(plan),
            };
            let start = r * n;
            row.flows(plans, grid);
            // Debris as regolith: the row path changes every moving column but
            // those sliding off their bed, with the same rules as below.
            if to_regolith {
                row.active(&plans.here.src);
                slow.resize(n, 0);
                for at in (0..n).step_by(SEGMENT) {
                    let cells = at..(at + SEGMENT).min(n);
                    regolith_cells(tops, stacks, layers, row, start, cells.clone(), &mut slow[cells]);
                }
            }
            let slow = if to_regolith { Some(&slow[..n]) } else { None };
            if row.leftovers(slow) {
                let debris = |what: u8| {
                    if to_regolith {
                        Material::Regolith as u8
                    } else {
                        what & !FROM_BED
                    }
                };
                for x in marked(&row.left[..n]) {
                    let (what, send, received) = (plans.here.src[x], row.send[x], row.recv[x]);
                    let j = start + x;
                    if send > 0.0 {
                        let removed = if what & FROM_BED != 0 {
                            let k = layers.len(j) - 2;
                            layers.take_from_slot(j, k, send)
                        } else {
                            layers.take(j, send)
                        };
                        // A sliver under MIN_THICKNESS that went along stays here.
                        layers.push(j, debris(what), removed - send);
                    }
                    if to_regolith {
                        layers.push(j, debris(0), received);
                    } else {
                        for (d, nb) in around(plans, grid, x).into_iter().enumerate() {
                            if let Some((from, k)) = nb {
                                layers.push(j, debris(from.src[k]), from.out[OPPOSITE[d]][k]);
                            }
                        }
                    }
                }
            }
            if let Some(ager) = ager {
                lost += ager.row(layers, start..start + n, age);
            }
        }
        lost
    }
}

/// The neighbours of cell `x` of a row, as `Grid::around` orders them: the
/// plan row each is in and its cell there.
#[inline(always)]
fn around(plans: Around<&PlanRow>, grid: Grid, x: usize) -> [Option<(&PlanRow, usize)>; 4] {
    let [l, r] = grid.sides(x);
    [
        l.map(|k| (plans.here, k)),
        r.map(|k| (plans.here, k)),
        plans.back.map(|b| (b, x)),
        plans.front.map(|f| (f, x)),
    ]
}

/// Row buffers of the move: what each cell of a row sends and receives,
/// and which cells the row path changes.
#[derive(Default)]
struct FlowRows {
    send: Vec<f32>,
    recv: Vec<f32>,
    active: Vec<u32>,
    /// 1 for the active cells [`TopRows`] left.
    left_by_tops: Vec<u32>,
    /// 1 for the moving cells left to [`Layers`], one by one.
    left: Vec<u32>,
    removed: Vec<f32>,
    sliver: Vec<f32>,
}

impl FlowRows {
    /// What each cell of the row planned in `plans.here` sends in all and
    /// receives from its neighbours.
    #[inline(always)]
    fn flows(&mut self, plans: Around<&PlanRow>, grid: Grid) {
        let n = grid.n;
        for v in [&mut self.send, &mut self.recv, &mut self.removed, &mut self.sliver] {
            v.resize(n, 0.0);
        }
        self.active.resize(n, 0);
        self.left_by_tops.resize(n, 0);
        self.left.resize(n, 0);
        let own = |d: usize| &plans.here.out[d][..n];
        sum4([own(0), own(1), own(2), own(3)], &mut self.send);
        let general = |x: usize| {
            let around = around(plans, grid, x);
            (0..4)
                .filter_map(|d| around[d].map(|(from, k)| from.out[OPPOSITE[d]][k]))
                .sum()
        };
        match (plans.back, plans.front) {
            (Some(back), Some(front)) if n >= 3 => {
                let m = n - 2;
                // What the left, right, back and front neighbours send this way.
                let inflow = [
                    &plans.here.out[RIGHT][..m],
                    &plans.here.out[LEFT][2..][..m],
                    &back.out[FRONT][1..][..m],
                    &front.out[BACK][1..][..m],
                ];
                sum4(inflow, &mut self.recv[1..][..m]);
                self.recv[0] = general(0);
                self.recv[n - 1] = general(n - 1);
            }
            _ => {
                for (x, r) in self.recv.iter_mut().enumerate() {
                    *r = general(x);
                }
            }
        }
    }
    /// The cells that send or receive anything, but not from their bed.
    #[inline(always)]
    fn active(&mut self, src: &[u8]) {
        let n = self.send.len();
        let (send, recv, src, active) = (&self.send[..n], &self.recv[..n], &src[..n], &mut self.active[..n]);
        for x in 0..n {
            let sends = send[x] > 0.0;
            let from_bed = u32::from(src[x] >> 7) != 0;
            active[x] = u32::from((sends | (recv[x] > 0.0)) & !(sends & from_bed));
        }
    }

    /// Marks the cells that move but that the row path did not change (all
    /// that move when it did not run, `slow` None); returns whether there is any.
    #[inline(always)]
    fn leftovers(&mut self, slow: Option<&[u32]>) -> bool {
        let n = self.send.len();
        let (send, recv, active) = (&self.send[..n], &self.recv[..n], &self.active[..n]);
        let left = &mut self.left[..n];
        // A loop per case: `slow` tested per cell kept the one loop scalar.
        let any = match slow {
            Some(slow) => {
                let slow = &slow[..n];
                mark_left(send, recv, left, |x| (active[x] != 0) & (slow[x] == 0))
            }
            None => mark_left(send, recv, left, |_| false),
        };
        any != 0
    }

    /// What `take` removed from each of `cells` beyond what the column
    /// sends: a sliver that stays. Returns whether any column keeps one
    /// (rarely).
    #[inline(always)]
    fn sliver(&mut self, cells: std::ops::Range<usize>) -> bool {
        let (send, removed) = (&self.send[cells.clone()], &self.removed[cells.clone()]);
        let sliver = &mut self.sliver[cells];
        let n = sliver.len();
        let (send, removed) = (&send[..n], &removed[..n]);
        let mut any = false;
        for x in 0..n {
            sliver[x] = removed[x] - send[x];
            any |= sliver[x] > 0.0;
        }
        any
    }
}

/// Marks in `left` the cells that send or receive anything and are not
/// `done`; returns nonzero where any is.
#[inline(always)]
fn mark_left(send: &[f32], recv: &[f32], left: &mut [u32], done: impl Fn(usize) -> bool) -> u32 {
    let n = left.len();
    let (send, recv) = (&send[..n], &recv[..n]);
    let mut any = 0;
    for x in 0..n {
        let moving = (send[x] > 0.0) | (recv[x] > 0.0);
        left[x] = u32::from(moving & !done(x));
        any |= left[x];
    }
    any
}

/// The sum of four rows, added in order as `Iterator::sum` adds them.
#[inline(always)]
fn sum4(parts: [&[f32]; 4], sum: &mut [f32]) {
    let n = sum.len();
    let [a, b, c, d] = parts.map(|p| &p[..n]);
    for x in 0..n {
        sum[x] = a[x] + b[x] + c[x] + d[x];
    }
}

/// Row buffers of [`Planner::row`], reused across rows.
#[derive(Default)]
struct RowScratch {
    top: Vec<u8>,
    bed: Vec<u8>,
    /// The next slot's top and bed, swapped in ([`RowScratch::lift`]).
    lifted: [Vec<u8>; 2],
    talus: Vec<f32>,
    moved: Vec<f32>,
    slide: Vec<u8>,
}

/// The layer planes a plan reads, row `z` at cells `z·n ..`: a whole
/// chunk's, or those of the block a sweep moves.
trait Stacks {
    fn count(&self) -> &[u8];
    fn material(&self, k: usize) -> &[u8];
    fn thickness(&self, k: usize) -> &[f32];
    fn ground(&self) -> &[f32];
}

impl Stacks for TerrainChunk {
    #[inline(always)]
    fn count(&self) -> &[u8] {
        &self.count
    }

    #[inline(always)]
    fn material(&self, k: usize) -> &[u8] {
        &self.material[k * self.cells()..][..self.cells()]
    }

    #[inline(always)]
    fn thickness(&self, k: usize) -> &[f32] {
        &self.thickness[k * self.cells()..][..self.cells()]
    }

    #[inline(always)]
    fn ground(&self) -> &[f32] {
        &self.ground
    }
}

impl Stacks for Layers<'_> {
    #[inline(always)]
    fn count(&self) -> &[u8] {
        &self.count[..]
    }

    #[inline(always)]
    fn material(&self, k: usize) -> &[u8] {
        &self.material[k][..]
    }

    #[inline(always)]
    fn thickness(&self, k: usize) -> &[f32] {
        &self.thickness[k][..]
    }

    #[inline(always)]
    fn ground(&self) -> &[f32] {
        &self.ground[..]
    }
}

/// What a plan follows, the same for every row.
#[derive(Clone, Copy)]
struct Rules<'a> {
    grid: Grid,
    talus: &'a [f32; MATERIAL_COUNT],
    density: &'a [f32; MATERIAL_COUNT],
    rate: f32,
    sliding: bool,
}

/// Decides what every cell sends, from the ground before the pass.
struct Planner<'a, S> {
    stacks: &'a S,
    rules: Rules<'a>,
}

impl<S: Stacks> Planner<'_, S> {
    /// Fills row `z` of `stacks` into the row's outflows and `src` (what each
    /// cell sends, 0 where it sends nothing).
    ///
    /// Interior cells whose top moves under its own talus angle, by far the
    /// common case, take a branch-free path over straight slices of the row
    /// and its neighbour rows; only edge cells and the rare candidates for
    /// layer sliding go through [`Planner::plan`] one by one.
    #[inline(always)]
    fn row(&self, z: usize, mut outs: [&mut [f32]; 4], src: &mut [u8], row: &mut RowScratch) {
        let n = self.rules.grid.n;
        let (Some(zb), Some(zf), true) = (
            neighbour_row(self.rules.grid, z, BACK),
            neighbour_row(self.rules.grid, z, FRONT),
            n >= 3,
        ) else {
            (0..n).for_each(|x| write(&mut outs, src, x, self.plan(x, z)));
            return;
        };
        self.surface_row(z, row);
        let ground = self.stacks.ground();
        let m = n - 2;
        let at = |r: usize, dx: usize| &ground[r * n + dx..][..m];
        let [o0, o1, o2, o3] = &mut outs;
        split_row(
            [at(z, 1), at(z, 0), at(z, 2), at(zb, 1), at(zf, 1)],
            &row.talus[1..][..m],
            self.rules.rate,
            [
                &mut o0[1..][..m],
                &mut o1[1..][..m],
                &mut o2[1..][..m],
                &mut o3[1..][..m],
            ],
            &mut row.moved[..m],
        );
        what_row(&row.moved[..m], &row.top[1..][..m], &mut src[1..][..m]);
        // Layer sliding needs a consolidated top on a loose bed and no move
        // of the top by its own talus angle: rare, so flagged in bulk first.
        if self.rules.sliding && slide_candidates(&row.top, &row.bed, &mut row.slide) {
            for x in 1..n - 1 {
                if row.slide[x] != 0 && src[x] == 0 {
                    write(&mut outs, src, x, self.plan(x, z));
                }
            }
        }
        write(&mut outs, src, 0, self.plan(0, z));
        write(&mut outs, src, n - 1, self.plan(n - 1, z));
    }

    /// The top and bed (the layer under the top) material of every column
    /// of row `z`, [`NONE`] where there is none, and the top's talus
    /// threshold (infinite for an empty column, which sends nothing).
    #[inline(always)]
    fn surface_row(&self, z: usize, row: &mut RowScratch) {
        let n = self.rules.grid.n;
        let count = &self.stacks.count()[z * n..][..n];
        for plane in [&mut row.top, &mut row.bed] {
            filled(plane, n, NONE);
        }
        // The top and bed of every column are at or above two slots under
        // the lowest top: the slots below are no column's.
        for k in lowest(count).saturating_sub(2)..highest(count) {
            let material = &self.stacks.material(usize::from(k))[z * n..][..n];
            row.lift(k, count, material);
        }
        row.talus.resize(n, 0.0);
        talus_row(&row.top, self.rules.talus, &mut row.talus);
        row.moved.resize(n, 0.0);
        row.slide.resize(n, 0);
    }

    /// What cell `(x, z)` sends to each neighbour, and what it is: the material
    /// byte of the top layer, or of the loose bed under it marked [`FROM_BED`].
    fn plan(&self, x: usize, z: usize) -> Option<([f32; 4], u8)> {
        let (stacks, talus, density) = (self.stacks, self.rules.talus, self.rules.density);
        let i = z * self.rules.grid.n + x;
        let c = usize::from(stacks.count()[i]);
        let layer = |k: usize| (stacks.material(k)[i], stacks.thickness(k)[i]);
        let (top, t_top) = layer(c.checked_sub(1)?);
        let ground = stacks.ground();
        let g = ground[i];
        let [l, r, b, f] = self.rules.grid.around(x, z);
        let at = |nb: Option<usize>| nb.map(|k| ground[k]);
        let nbs = [at(l), at(r), at(b), at(f)];
        let rate = self.rules.rate;
        if let Some(a) = split(g, &nbs, talus[usize::from(top)], rate, g) {
            return Some((a, top));
        }
        if !self.rules.sliding || c < 2 || Material::from_u8(top).is_none_or(Material::is_loose) {
            return None;
        }
        let (bed, s_bed) = layer(c - 2);
        if !Material::from_u8(bed).is_some_and(Material::is_loose) {
            return None;
        }
        let t_bed = talus[usize::from(bed)];
        if s_bed * density[usize::from(bed)] > t_top * density[usize::from(top)] {
            split(g, &nbs, t_bed, rate, g).map(|a| (a, top))
        } else {
            split(g - t_top, &nbs, t_bed, rate, s_bed).map(|a| (a, bed | FROM_BED))
        }
    }
}

impl RowScratch {
    /// Where slot `k` is live, the top so far becomes the bed and slot `k`'s
    /// `material` the top: written into the other pair of rows and swapped
    /// in, since rows rewritten in place in a few lanes compile to masked
    /// stores (see `grid::scratch`).
    #[inline(always)]
    fn lift(&mut self, k: u8, count: &[u8], material: &[u8]) {
        let [top, bed] = &mut self.lifted;
        for plane in [&mut *top, &mut *bed] {
            plane.resize(count.len(), NONE);
        }
        lift_slot(k, count, material, [&self.top, &self.bed], [top, bed]);
        std::mem::swap(&mut self.top, top);
        std::mem::swap(&mut self.bed, bed);
    }
}

/// [`RowScratch::lift`]'s rows. A function of its own, and byte masks rather
/// than selects, so the loop vectorizes (x86's SSE2 has no unsigned byte
/// compare and the compiler will not emulate it for a select).
#[inline(always)]
fn lift_slot(k: u8, count: &[u8], material: &[u8], [top, bed]: [&[u8]; 2], [new_top, new_bed]: [&mut [u8]; 2]) {
    let n = count.len();
    let (material, top, bed) = (&material[..n], &top[..n], &bed[..n]);
    let (new_top, new_bed) = (&mut new_top[..n], &mut new_bed[..n]);
    // Counts and slots are at most MAX_LAYER_SLOTS (32), so they compare
    // the same as signed bytes, which SSE2 and AVX2 compare in one
    // instruction; unsigned, the loop went a byte at a time there.
    let k = k as i8;
    for x in 0..n {
        let live = 0u8.wrapping_sub(u8::from(count[x] as i8 > k));
        new_bed[x] = (top[x] & live) | (bed[x] & !live);
        new_top[x] = (material[x] & live) | (top[x] & !live);
    }
}

/// The talus threshold of each top material (infinite for [`NONE`]), by
/// [`by_material`]. A top is a material or [`NONE`], whose low bits pick
/// the eighth leaf.
#[inline(always)]
fn talus_row(top: &[u8], table: &[f32; MATERIAL_COUNT], talus: &mut [f32]) {
    const { assert!(NONE & 7 == 7) };
    let talus = &mut talus[..top.len()];
    for (t, &m) in talus.iter_mut().zip(top) {
        *t = by_material(u32::from(m), table, f32::INFINITY, pick);
    }
}

/// [`split`] of every cell of a row by its top's talus threshold: `g` holds
/// the row's ground and that of its left, right, back and front neighbours;
/// `moved` gets what each cell sends in all (0 where it sends nothing).
/// Every choice is a select and every output its own parameter, so the loop
/// vectorizes; the arithmetic is `split`'s, so the results are the same.
#[inline(always)]
fn split_row(g: [&[f32]; 5], talus: &[f32], rate: f32, outs: [&mut [f32]; 4], moved: &mut [f32]) {
    let [c, l, r, b, f] = g;
    let [o0, o1, o2, o3] = outs;
    let m = c.len();
    let (l, r, b, f, talus) = (&l[..m], &r[..m], &b[..m], &f[..m], &talus[..m]);
    let (o0, o1, o2, o3, moved) = (&mut o0[..m], &mut o1[..m], &mut o2[..m], &mut o3[..m], &mut moved[..m]);
    for x in 0..m {
        let (h, t) = (c[x], talus[x]);
        let d = [h - l[x], h - r[x], h - b[x], h - f[x]];
        let (mut d_max, mut d_total) = (0.0f32, 0.0f32);
        for v in d {
            d_max = if v > t { d_max.max(v) } else { d_max };
            d_total = if v > t { d_total + v } else { d_total };
        }
        let all = (rate * (d_max - t)).min(h);
        let ok = (d_total > 0.0) & (all > 0.0);
        let share = |v: f32| if ok & (v > t) { all * (v / d_total) } else { 0.0 };
        o0[x] = share(d[0]);
        o1[x] = share(d[1]);
        o2[x] = share(d[2]);
        o3[x] = share(d[3]);
        moved[x] = if ok { all } else { 0.0 };
    }
}

/// Flags the columns whose top is consolidated and whose bed is loose (the
/// materials from sand on are loose, and [`NONE`] is none of them); returns
/// whether there is any.
#[inline(always)]
fn slide_candidates(top: &[u8], bed: &[u8], flags: &mut [u8]) -> bool {
    let n = top.len();
    let (bed, flags) = (&bed[..n], &mut flags[..n]);
    let mut any = 0u8;
    for x in 0..n {
        let solid_top = 0u8.wrapping_sub(u8::from(top[x] < Material::Sand as u8));
        let loose_bed = 0u8.wrapping_sub(u8::from(bed[x].wrapping_sub(Material::Sand as u8) < 2));
        flags[x] = solid_top & loose_bed;
        any |= flags[x];
    }
    any != 0
}

/// What each cell of a row sends: its top material where it moves anything, else 0.
#[inline(always)]
fn what_row(moved: &[f32], top: &[u8], what: &mut [u8]) {
    let n = moved.len();
    let (top, what) = (&top[..n], &mut what[..n]);
    for x in 0..n {
        what[x] = top[x] & 0u8.wrapping_sub(u8::from(moved[x] > 0.0));
    }
}

/// Stores cell `x`'s plan in the row's outflows and `src`.
#[inline(always)]
fn write(outs: &mut [&mut [f32]; 4], src: &mut [u8], x: usize, plan: Option<([f32; 4], u8)>) {
    let (amounts, what) = plan.unwrap_or(([0.0; 4], 0));
    for (o, a) in outs.iter_mut().zip(amounts) {
        o[x] = a;
    }
    src[x] = what;
}

/// No layer: the row buffers' marker for a missing top or bed.
const NONE: u8 = u8::MAX;

/// Olsen's split: from height `h`, K·(d_max − T) moves (at most `available`),
/// shared among the neighbours lower by more than T in proportion to their
/// differences.
fn split(h: f32, nbs: &[Option<f32>; 4], threshold: f32, rate: f32, available: f32) -> Option<[f32; 4]> {
    let diff = |g: Option<f32>| g.map_or(0.0, |g| h - g);
    let d = [diff(nbs[0]), diff(nbs[1]), diff(nbs[2]), diff(nbs[3])];
    let (mut d_max, mut d_total) = (0.0f32, 0.0f32);
    for &v in &d {
        if v > threshold {
            d_max = d_max.max(v);
            d_total += v;
        }
    }
    if d_total <= 0.0 {
        return None;
    }
    let moved = (rate * (d_max - threshold)).min(available);
    if moved <= 0.0 {
        return None;
    }
    let share = |v: f32| if v > threshold { moved * (v / d_total) } else { 0.0 };
    Some([share(d[0]), share(d[1]), share(d[2]), share(d[3])])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte arithmetic of `slide_candidates` is `Material::is_loose`.
    #[test]
    fn slide_candidates_match_is_loose() {
        let loose = |m: u8| Material::from_u8(m).is_some_and(Material::is_loose);
        let solid = |m: u8| Material::from_u8(m).is_some_and(|m| !m.is_loose());
        let bytes: Vec<u8> = (0..=u8::MAX).collect();
        for top in 0..=u8::MAX {
            let tops = vec![top; bytes.len()];
            let mut flags = vec![0; bytes.len()];
            let any = slide_candidates(&tops, &bytes, &mut flags);
            for (&bed, &flag) in bytes.iter().zip(&flags) {
                assert_eq!(flag != 0, solid(top) && loose(bed), "top {top} bed {bed}");
            }
            assert_eq!(any, solid(top));
        }
    }

    /// The row buffers hold the top and bed material and the top's threshold.
    #[test]
    fn lift_and_talus_rows_find_the_top() {
        let count = [0u8, 1, 2, 3];
        let planes = [[6u8, 6, 5, 0], [9, 9, 6, 1], [9, 9, 9, 5]];
        let mut row = RowScratch {
            top: vec![NONE; 4],
            bed: vec![NONE; 4],
            ..RowScratch::default()
        };
        for (k, plane) in (0u8..).zip(&planes) {
            row.lift(k, &count, plane);
        }
        assert_eq!(row.top, [NONE, 6, 6, 5]);
        assert_eq!(row.bed, [NONE, NONE, 5, 1]);
        let table = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let mut talus = vec![0.0; 4];
        talus_row(&row.top, &table, &mut talus);
        assert_eq!(talus, [f32::INFINITY, 7.0, 7.0, 6.0]);
    }

    /// The select tree finds every material's threshold.
    #[test]
    fn talus_row_looks_up_every_material() {
        let table = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let top: Vec<u8> = Material::ALL.iter().map(|&m| m as u8).chain([NONE]).collect();
        let mut talus = vec![0.0; top.len()];
        talus_row(&top, &table, &mut talus);
        assert_eq!(talus, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, f32::INFINITY]);
    }
}
