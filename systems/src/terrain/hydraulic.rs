//! Flowing-water erosion with virtual pipes (Mei, Decaudin & Hu 2007; thesis
//! §2.3.1 and §3.1.3), and standing-water erosion (§2.3.2, §3.1.4), which
//! shares the fluxes.
//!
//! One iteration: sources (rain, springs) → outflow fluxes ([`super::pipes`])
//! → water and velocity → the sediment exchange ([`super::exchange`]) and
//! standing water → evaporation → sediment transport ([`super::transport`]),
//! in three sweeps over blocks of rows, each block in parallel (see
//! [`step`]). The first computes the outflows of every block's first and last
//! row; the second runs each block in bands of rows, the outflows of the
//! rows ahead and then everything else of the band's rows, so the rows a
//! cell needs are still in the cache, ages the band's layers where aging is
//! due in the same iteration and thermal erosion is not ([`Ager`]), and moves the sediment of the rows
//! two behind (semi-Lagrangian transport; [`super::advect`]); the third
//! moves the rest of the sediment. A block writes only its own rows, and what it
//! reads of its neighbours (their edge rows' outflows in the second sweep;
//! outflows and ratios, or velocities, and sediment in the third) nothing
//! writes meanwhile, so results do not depend on the number of threads.
//! Sums for the books are taken per block and added in block order.
//! Interior cells run branch-free copies of the per-cell arithmetic that the
//! compiler vectorizes; edge cells take the general path with the boundary
//! mode.
//!
//! **Caps (not in the thesis).** Dissolving never takes a cell below the
//! lowest of its N4 neighbours' ground, and depositing never raises it above
//! the highest (both as they were at the start of the iteration); what the
//! caps hold back stays suspended. Without them a high K_c digs pits and
//! leaves towers standing that feed on themselves — the thesis's Fig.
//! 5.16–5.17 failure, reproduced by `high_capacity_grows_no_spikes` — while
//! with them a channel still deepens as fast as the ground downstream does.

use std::marker::PhantomData;

use rand::RngExt;
use rayon::prelude::*;
use sylva_runtime::rng::{StreamKey, hash_words, stream};

use super::advect::{self, Advect};
use super::aging::{self, AgeRows, Ager};
use super::columns::{BACK, FRONT, LEFT, Layers, RIGHT, TerrainChunk};
use super::exchange::{self, ExchangeKernel, ExchangeRow, Rates, RowInput};
use super::grid::{Around, Grid, ROWS, neighbour_row, row_at};
use super::params::{Boundary, Rain, Standing, TerrainParams, Transport};
use super::pipes::{Bounds, Pipes};
use super::stats::TerrainBalance;
use super::transport::{Trailed, transport};
use crate::pages::filled_huge;
use crate::registers::{Kernel, Registers};

/// Rows per block of the water sweep. Each block's first and last rows are
/// fluxed in a sweep of their own and copied in, so larger blocks leave
/// fewer of them: 64 halved that sweep from 32 (to 0.2 ms of 12.5 on one
/// thread at 1024² from fresh), and 32 had been 3 % faster than 16.
const WATER_ROWS: usize = 64;

/// Rows per band of the water sweep: each step of a block's sweep goes
/// over a band of rows before the next step starts, so each plane is read
/// and written in runs of that many rows, where row by row it was one row
/// at a time, more often than not a restart of the hardware prefetcher's
/// streams. From fresh, bands of 8 rows made a water step 8–9 % faster at
/// 256² and 512², 2–3 % at 1024²; 16 rows did no better than 8.
const BAND_ROWS: usize = 8;

/// Rows of bounds kept: a band's, and those of the row ahead of it.
const RING: usize = BAND_ROWS + 1;

/// Rows per partial sum of the books. Blocks were 32 rows once, and the
/// books summed row by row within a block, then block by block: partial
/// sums over the same rows, added in the same order, keep the books (which
/// the state hash covers) bit for bit whatever the blocks are.
const BOOK_ROWS: usize = 32;

/// The books of one block of the water sweep, one partial sum per
/// [`BOOK_ROWS`] rows: water drained, absorbed and evaporated.
type BlockBooks = [[f64; 3]; WATER_ROWS / BOOK_ROWS];
const _: () = assert!(
    WATER_ROWS.is_multiple_of(BOOK_ROWS),
    "a block's books split into whole sums"
);

/// The thickness aging took off one block of the water sweep, one partial
/// sum per aging block of [`ROWS`] rows.
type BlockLost = [f64; WATER_ROWS / ROWS];
const _: () = assert!(
    WATER_ROWS.is_multiple_of(ROWS),
    "a block of the water sweep holds whole aging blocks"
);

/// Planes and rows reused between steps.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Suspended sediment per unit of outflux (flux transports).
    ratio: Vec<f32>,
    /// The transported sediment, swapped into the chunk.
    next: Vec<f32>,
    /// The sediment each row's transport drained off the chunk.
    drained: Vec<f64>,
    /// The first and last row of every block, fluxed ahead of the water sweep.
    edges: Vec<[EdgeRow; 2]>,
}

/// A row fluxed ahead of the water sweep: its new outflows and its bounds.
#[derive(Default)]
struct EdgeRow {
    flux: [Vec<f32>; 4],
    bounds: Bounds,
}

/// Which water iteration of which scene runs: the rain's stream is keyed on both.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tick {
    /// The scene's seed.
    pub(crate) seed: u64,
    /// The 0-based iteration.
    pub(crate) iteration: u64,
}

/// Adds rain and spring water; returns the volume added.
fn sources(chunk: &mut TerrainChunk, p: &TerrainParams, Tick { seed, iteration }: Tick) -> f64 {
    let h = &p.hydraulic;
    let dt = h.time_step;
    let n = chunk.size() as usize;
    let mut added = 0.0f64;
    match h.rain {
        Rain::None => {}
        Rain::Random { drops, amount } => {
            let [cx, cz] = chunk.coord();
            let mut rng = stream(
                hash_words(&[seed, iteration]),
                StreamKey::Chunk([cx, 0, cz]),
                "terrain.rain",
            );
            for _ in 0..drops {
                let i = rng.random_range(0..n * n);
                chunk.water[i] += amount * dt;
                added += f64::from(amount * dt);
            }
        }
        Rain::Uniform { amount } => {
            chunk.water.iter_mut().for_each(|w| *w += amount * dt);
            added += f64::from(amount * dt) * (n * n) as f64;
        }
    }
    let origin = chunk.origin();
    for s in &h.springs {
        let (Some(x), Some(z)) = (s.cell[0].checked_sub(origin[0]), s.cell[1].checked_sub(origin[1])) else {
            continue;
        };
        if (0..n as i64).contains(&x) && (0..n as i64).contains(&z) {
            chunk.water[z as usize * n + x as usize] += s.amount * dt;
            added += f64::from(s.amount * dt);
        }
    }
    added
}

/// One water iteration on `chunk`, booking water and sediment in `books`.
///
/// Three sweeps over blocks of rows: the outflows of each block's
/// first and last row ([`edge_rows`]); then, band of rows by band, the
/// outflows of the rows ahead and everything local to a cell that needs its
/// finished outflows (water, velocity, the sediment exchange, standing
/// water, evaporation, the transport ratio; [`water_pass`]), with the
/// semi-Lagrangian transport of the rows two behind; then the rest of the
/// sediment transport. With an `ager`, the second sweep also ages each band's
/// layers after their exchange, booking the thickness lost as compacted.
pub(crate) fn step(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    tick: Tick,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
    ager: Option<&Ager>,
) {
    let n = chunk.size() as usize;
    let grid = Grid {
        n,
        boundary: p.hydraulic.boundary,
    };
    books.water_added += sources(chunk, p, tick);
    // Every cell of both is written before it is read. `next` trades places
    // with the sediment every step, so it gets the chunk's pages.
    for plane in [&mut s.ratio, &mut s.next] {
        if plane.len() != n * n {
            *plane = filled_huge(n * n, 0.0);
        }
    }
    s.drained.resize(n, 0.0);
    let pipes = Pipes::new(grid, &p.hydraulic, p.cell_length);
    edge_rows(chunk, &pipes, &mut s.edges, registers);
    water_pass(chunk, p, &pipes, s, books, registers, ager);
    let trailed = Trailed {
        block_rows: WATER_ROWS,
        drained: &mut s.drained,
    };
    transport(chunk, p, grid, [&mut s.ratio, &mut s.next], trailed, books, registers);
}

/// Row `z` of an `n`-wide `plane` with its neighbour rows.
fn around(plane: &[f32], grid: Grid, z: usize) -> Around<&[f32]> {
    let row = |r: usize| &plane[r * grid.n..][..grid.n];
    Around {
        back: neighbour_row(grid, z, BACK).map(row),
        here: row(z),
        front: neighbour_row(grid, z, FRONT).map(row),
    }
}

/// Rows `[back, here, front]` of a block's plane.
fn within(plane: &[f32], [back, here, front]: [std::ops::Range<usize>; 3]) -> Around<&[f32]> {
    Around {
        back: Some(&plane[back]),
        here: &plane[here],
        front: Some(&plane[front]),
    }
}

/// The fluxed-ahead row `z`, the first or last row of its block.
fn edge_row(edges: &[[EdgeRow; 2]], z: usize) -> &EdgeRow {
    let b = z / WATER_ROWS;
    &edges[b][usize::from(z != b * WATER_ROWS)]
}

/// Sweep 1: the outflows and bounds of every block's first and last row,
/// from the ground and water the iteration starts with. The water sweep
/// changes a block's ground and water row by row while the neighbour blocks
/// still need its edge rows' outflows, so these are computed ahead.
fn edge_rows(chunk: &TerrainChunk, pipes: &Pipes, edges: &mut Vec<[EdgeRow; 2]>, registers: Registers) {
    let (grid, n) = (pipes.grid, pipes.grid.n);
    edges.resize_with(n.div_ceil(WATER_ROWS), Default::default);
    edges.par_iter_mut().enumerate().for_each(|(b, rows)| {
        let Span { first, last, .. } = Span::of(b, n);
        let count = if first == last { 1 } else { 2 };
        for (row, z) in rows.iter_mut().zip([first, last]).take(count) {
            for (ahead, plane) in row.flux.iter_mut().zip(&chunk.flux) {
                ahead.clear();
                ahead.extend_from_slice(&plane[z * n..][..n]);
            }
            row.bounds.resize(n);
            pipes.row(
                around(&chunk.ground, grid, z),
                around(&chunk.water, grid, z),
                row.flux.each_mut().map(|f| f.as_mut_slice()),
                &mut row.bounds,
                registers,
            );
        }
    });
}

/// Per-kernel constants of the cell sweep.
#[derive(Clone, Copy)]
struct CellCtx {
    dt: f32,
    l: f32,
    area: f32,
    /// 1 / area: a multiplication, where a division would cost the cell
    /// sweep a slot in the divider (the same result for the usual cell
    /// lengths, powers of two).
    per_area: f32,
    z_sign: f32,
    min_depth: f32,
    capacity: f32,
    min_tilt: f32,
    /// Standing water: flux threshold and least depth.
    threshold: f32,
    stand_depth: f32,
    /// Water leaves over the chunk's edges.
    drain: bool,
}

/// A sediment transport ([`Transport`]) as a type parameter of the water
/// sweep: each is compiled on its own, so the cell loops have no branch on it.
trait Carry {
    /// Whether the transport moves sediment along the outflows by the ratio
    /// the sweep leaves; the semi-Lagrangian one traces the velocity instead.
    const BY_FLUX: bool;
    /// Whether the ratio's numerator is the sediment times the time step:
    /// the mass-conserving transport divides by a volume, the thesis's by a
    /// flux.
    const TIMED: bool;
    /// The ratio's denominator for a cell with outflux `f_out` and water
    /// `w_prev` before the update; 0 when nothing flows out.
    fn den(f_out: f32, w_prev: f32, c: &CellCtx) -> f32;
}

/// [`Transport::SemiLagrangian`].
struct Semi;
/// [`Transport::ThesisFlux`].
struct ThesisFlux;
/// [`Transport::Flux`].
struct Flux;

impl Carry for Semi {
    const BY_FLUX: bool = false;
    const TIMED: bool = false;

    #[inline(always)]
    fn den(_: f32, _: f32, _: &CellCtx) -> f32 {
        0.0
    }
}

impl Carry for ThesisFlux {
    const BY_FLUX: bool = true;
    const TIMED: bool = false;

    #[inline(always)]
    fn den(f_out: f32, _: f32, _: &CellCtx) -> f32 {
        select(f_out > 1e-20, f_out, 0.0)
    }
}

impl Carry for Flux {
    const BY_FLUX: bool = true;
    const TIMED: bool = true;

    #[inline(always)]
    fn den(f_out: f32, w_prev: f32, c: &CellCtx) -> f32 {
        select(w_prev * c.area > 1e-20, (f_out * c.dt).max(w_prev * c.area), 0.0)
    }
}

/// A standing criterion ([`Standing`]), or none, as a type parameter of the
/// water sweep, for the same reason as [`Carry`].
trait Stand {
    /// Whether water `deep` enough, with inflow `f_in` and outflow `f_out`,
    /// stands.
    fn stands(deep: bool, f_in: f32, f_out: f32, c: &CellCtx) -> bool;
}

/// Standing-water erosion switched off.
struct Flowing;
/// [`Standing::BothBelow`].
struct BothBelow;
/// [`Standing::Balanced`].
struct Balanced;

impl Stand for Flowing {
    #[inline(always)]
    fn stands(_: bool, _: f32, _: f32, _: &CellCtx) -> bool {
        false
    }
}

impl Stand for BothBelow {
    #[inline(always)]
    fn stands(deep: bool, f_in: f32, f_out: f32, c: &CellCtx) -> bool {
        deep & (f_in < c.threshold) & (f_out < c.threshold)
    }
}

impl Stand for Balanced {
    #[inline(always)]
    fn stands(deep: bool, f_in: f32, f_out: f32, c: &CellCtx) -> bool {
        deep & ((f_in - f_out).abs() < c.threshold)
    }
}

/// What the arithmetic half of the cell sweep hands the layer half.
struct Local {
    water: f32,
    u: f32,
    v: f32,
    cap: f32,
    /// Denominator of the transport ratio; 0 when nothing flows out.
    den: f32,
    stand: bool,
}

/// Water (eq. 2.20–2.23), velocity (eq. 2.24–2.26), capacity (eq. 2.27) and
/// the standing test of one cell from its in- and outflows, its water before
/// the update and its squared ground gradient `g2`, for transport `T` and
/// standing criterion `S` (thesis §3.1.4, which can be read two ways: inflow
/// and outflow both below the threshold, or their difference;
/// docs/design/terrain.md, "Standing criterion"). Branch-free, so interior
/// rows vectorize.
#[inline(always)]
fn local<T: Carry, S: Stand>(inflow: [f32; 4], out: [f32; 4], w_prev: f32, g2: f32, c: &CellCtx) -> Local {
    let f_in = inflow[LEFT] + inflow[RIGHT] + inflow[BACK] + inflow[FRONT];
    let f_out = out[0] + out[1] + out[2] + out[3];
    let w_new = (w_prev + c.dt * (f_in - f_out) * c.per_area).max(0.0);
    let mean = 0.5 * (w_prev + w_new);
    // Both sides of every choice are computed and one is selected: the
    // vectorizer keeps selects, where it gives up on branches around a
    // division or a square root.
    let dwx = 0.5 * (inflow[LEFT] - out[LEFT] + out[RIGHT] - inflow[RIGHT]);
    let dwz = 0.5 * (inflow[BACK] - out[BACK] + out[FRONT] - inflow[FRONT]);
    let shallow = mean < c.min_depth;
    let u = select(shallow, 0.0, dwx / (c.l * mean));
    let v = select(shallow, 0.0, c.z_sign * dwz / (c.l * mean));
    let speed = (u * u + v * v).sqrt();
    let tilt = (g2 / (1.0 + g2)).sqrt().max(c.min_tilt);
    let cap = select(speed > 0.0, c.capacity * tilt * speed, 0.0);
    let den = T::den(f_out, w_prev, c);
    let deep = (w_new > 0.0) & (w_new >= c.stand_depth);
    let stand = S::stands(deep, f_in, f_out, c);
    Local {
        water: w_new,
        u,
        v,
        cap,
        den,
        stand,
    }
}

/// `a` where `pick` holds, else `b`; both already computed.
#[inline(always)]
fn select(pick: bool, a: f32, b: f32) -> f32 {
    if pick { a } else { b }
}

/// Sweep 2, row by row in each block: the outflows of the row ahead, then
/// everything local to a cell once its outflows and its neighbours' are
/// final: water (eq. 2.20–2.23) and velocity (eq. 2.24–2.26, +z-consistent
/// unless the thesis sign is asked for), the sediment exchange (eq.
/// 2.27–2.29, [`exchange`]), standing water (eq. 2.33–2.34), evaporation
/// (eq. 3.6) and the sediment per unit of outflux that the flux transports
/// move. A row's outflows come from the ground and water of it and its
/// neighbours as the iteration started, so they are computed before the row
/// behind them changes (the block's edge rows came from [`edge_rows`]); the
/// rows a block reads of its neighbours are their edge rows' outflows only.
/// Working one row ahead keeps the rows a cell needs in the cache and the
/// bounds out of memory.
fn water_pass(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    pipes: &Pipes,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
    ager: Option<&Ager>,
) {
    let sw = &p.standing_water;
    let sweep = match (p.hydraulic.transport, sw.enabled.then_some(sw.criterion)) {
        (Transport::SemiLagrangian, None) => water_sweep::<Semi, Flowing>,
        (Transport::SemiLagrangian, Some(Standing::BothBelow)) => water_sweep::<Semi, BothBelow>,
        (Transport::SemiLagrangian, Some(Standing::Balanced)) => water_sweep::<Semi, Balanced>,
        (Transport::ThesisFlux, None) => water_sweep::<ThesisFlux, Flowing>,
        (Transport::ThesisFlux, Some(Standing::BothBelow)) => water_sweep::<ThesisFlux, BothBelow>,
        (Transport::ThesisFlux, Some(Standing::Balanced)) => water_sweep::<ThesisFlux, Balanced>,
        (Transport::Flux, None) => water_sweep::<Flux, Flowing>,
        (Transport::Flux, Some(Standing::BothBelow)) => water_sweep::<Flux, BothBelow>,
        (Transport::Flux, Some(Standing::Balanced)) => water_sweep::<Flux, Balanced>,
    };
    sweep(chunk, p, pipes, s, books, registers, ager);
}

/// Rows a block of the water sweep reuses.
#[derive(Default)]
struct BlockRows {
    /// Bounds of the rows of the current band and of the row ahead of it,
    /// in a ring indexed by row.
    bounds: [Bounds; RING],
    /// Capacity and standing flags of the rows of the current band.
    cap: [Vec<f32>; BAND_ROWS],
    stand: [Vec<u8>; BAND_ROWS],
    exchange: ExchangeRow,
    /// The rows of the semi-Lagrangian transport trailing the sweep.
    trail: advect::Rows,
    age: AgeRows,
}

/// [`water_pass`] for transport `T` and standing criterion `S`: each block of
/// rows in parallel ([`Sweep::block`]), the books summed in block order.
fn water_sweep<T: Carry, S: Stand>(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    pipes: &Pipes,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
    ager: Option<&Ager>,
) {
    let n = pipes.grid.n;
    let sweep = Sweep::new::<T>(p, pipes, &s.edges, registers, ager);
    let block = WATER_ROWS * n;
    let parts = chunk.parts(block);
    let [fl, fr, fb, ff] = parts.flux;
    let [vx, vz] = parts.velocity;
    let blocks: Vec<(BlockBooks, BlockLost)> = (
        parts.layers,
        parts.water.par_chunks_mut(block),
        parts.sediment.par_chunks_mut(block),
        vx.par_chunks_mut(block),
        vz.par_chunks_mut(block),
        s.ratio.par_chunks_mut(block),
        (
            fl.par_chunks_mut(block),
            fr.par_chunks_mut(block),
            fb.par_chunks_mut(block),
            ff.par_chunks_mut(block),
        ),
        s.next.par_chunks_mut(block),
        s.drained.par_chunks_mut(WATER_ROWS),
    )
        .into_par_iter()
        .enumerate()
        .map(
            |(b, (layers, water, sed, vx, vz, ratio, (fl, fr, fb, ff), next, drained))| WaterBlock {
                span: Span::of(b, n),
                layers,
                water,
                sed,
                velocity: [vx, vz],
                ratio,
                flux: [fl, fr, fb, ff],
                next,
                drained,
            },
        )
        .map_init(BlockRows::default, |rows, block| sweep.block::<T, S>(block, rows))
        .collect();
    let (sums, lost): (Vec<BlockBooks>, Vec<BlockLost>) = blocks.into_iter().unzip();
    // The last block's partial sums past the last row are none.
    let sums: Vec<[f64; 3]> = sums.into_iter().flatten().take(n.div_ceil(BOOK_ROWS)).collect();
    if ager.is_some() {
        books.compacted += aging::sum_blocks(lost.into_iter().flatten().take(n.div_ceil(ROWS)));
    }
    let total = |c: usize| sums.iter().map(|v| v[c]).sum::<f64>();
    books.water_drained += total(0);
    books.water_absorbed += total(1);
    books.water_evaporated += total(2);
}

/// What every block of one water sweep shares.
struct Sweep<'a> {
    ctx: CellCtx,
    pipes: &'a Pipes,
    /// Every block's first and last row, fluxed ahead ([`edge_rows`]).
    edges: &'a [[EdgeRow; 2]],
    rates: Rates,
    /// The share of the water that evaporates in a step (eq. 3.6).
    kv: f32,
    /// The factor of the ratio's numerator ([`Carry::TIMED`]).
    num_dt: f32,
    /// Δt / l, for the semi-Lagrangian transport.
    per_cell: f32,
    registers: Registers,
    /// Ages each band's rows after their exchange, where aging is due in
    /// the same iteration and nothing runs between.
    ager: Option<&'a Ager>,
}

impl<'a> Sweep<'a> {
    /// The sweep of transport `T` with the constants of `p`.
    fn new<T: Carry>(
        p: &TerrainParams,
        pipes: &'a Pipes,
        edges: &'a [[EdgeRow; 2]],
        registers: Registers,
        ager: Option<&'a Ager>,
    ) -> Self {
        let h = &p.hydraulic;
        let l = p.cell_length;
        Sweep {
            ctx: CellCtx {
                dt: h.time_step,
                l,
                area: l * l,
                per_area: 1.0 / (l * l),
                z_sign: if h.thesis_velocity_sign { -1.0 } else { 1.0 },
                min_depth: h.min_depth,
                capacity: h.capacity,
                min_tilt: h.min_tilt,
                threshold: p.standing_water.threshold,
                stand_depth: p.standing_water.min_depth,
                drain: h.boundary == Boundary::Drain,
            },
            pipes,
            edges,
            rates: Rates {
                ks: p.materials.lut(|m| m.ks),
                deposit: p.materials.lut(|m| if h.thesis_deposit { m.ks } else { m.deposit }),
            },
            kv: h.evaporation * h.time_step,
            num_dt: if T::TIMED { h.time_step } else { 1.0 },
            per_cell: h.time_step / l,
            registers,
            ager,
        }
    }
}

/// The rows of a block of the water sweep.
#[derive(Clone, Copy)]
struct Span {
    first: usize,
    last: usize,
    /// Cells per row.
    n: usize,
}

impl Span {
    /// Block `b` of a plane of `n` rows of `n` cells.
    fn of(b: usize, n: usize) -> Self {
        let first = b * WATER_ROWS;
        Span {
            first,
            last: (first + WATER_ROWS).min(n) - 1,
            n,
        }
    }

    /// Row `z`'s cells in the block's planes.
    fn own(self, z: usize) -> std::ops::Range<usize> {
        (z - self.first) * self.n..(z - self.first + 1) * self.n
    }
}

/// A block's share of the planes the water sweep writes.
struct WaterBlock<'a> {
    span: Span,
    layers: Layers<'a>,
    water: &'a mut [f32],
    sed: &'a mut [f32],
    velocity: [&'a mut [f32]; 2],
    /// The transport ratio's denominator, then the ratio ([`Carry::BY_FLUX`]).
    ratio: &'a mut [f32],
    flux: [&'a mut [f32]; 4],
    /// The transported sediment and each row's drain, where the
    /// semi-Lagrangian transport trails the sweep.
    next: &'a mut [f32],
    drained: &'a mut [f64],
}

impl Sweep<'_> {
    /// One block, band by band ([`BAND_ROWS`]): the outflows of the rows
    /// ahead, then the cells of the band's rows ([`Sweep::cells`]), their
    /// exchange ([`Sweep::exchange`]), their evaporation and, with an
    /// [`Ager`], their aging, each over all the band's rows before the next;
    /// returns the water drained, absorbed and evaporated, and the thickness
    /// aging took off.
    fn block<T: Carry, S: Stand>(&self, mut block: WaterBlock<'_>, rows: &mut BlockRows) -> (BlockBooks, BlockLost) {
        let Span { first, last, n } = block.span;
        for z in [first, last] {
            for (plane, ahead) in block.flux.iter_mut().zip(&edge_row(self.edges, z).flux) {
                plane[block.span.own(z)].copy_from_slice(ahead);
            }
        }
        rows.bounds[first % RING].clone_from(&edge_row(self.edges, first).bounds);
        for bounds in &mut rows.bounds {
            bounds.resize(n);
        }
        for (cap, stand) in rows.cap.iter_mut().zip(&mut rows.stand) {
            cap.resize(n, 0.0);
            stand.resize(n, 0);
        }
        let mut books = BlockBooks::default();
        let mut lost = BlockLost::default();
        // Each of the three sums of the books still adds its rows in order.
        for band in (first..=last).step_by(BAND_ROWS) {
            let band = band..(band + BAND_ROWS).min(last + 1);
            // The rows ahead, before the band changes the ground and water
            // their outflows come from.
            for z in band.start + 1..=band.end.min(last) {
                self.ahead(&mut block, &mut rows.bounds[z % RING], z);
            }
            for z in band.clone() {
                let (i, sums) = (z - band.start, &mut books[(z - first) / BOOK_ROWS]);
                let bounds = &rows.bounds[z % RING];
                sums[0] += self.cells::<T, S>(&mut block, bounds, (&mut rows.cap[i], &mut rows.stand[i]), z);
            }
            for z in band.clone() {
                let (i, sums) = (z - band.start, &mut books[(z - first) / BOOK_ROWS]);
                sums[1] += self.exchange(&mut block, rows, i, z);
            }
            for z in band.clone() {
                books[(z - first) / BOOK_ROWS][2] += self.evaporate::<T>(&mut block, z);
            }
            if let Some(ager) = self.ager {
                for z in band.clone() {
                    lost[(z - first) / ROWS] += ager.row(&mut block.layers, block.span.own(z), &mut rows.age);
                }
            }
            // The rows the band completes move their sediment while they
            // are in the caches; the flux transports need every row's ratio.
            if !T::BY_FLUX {
                let [vx, vz] = &block.velocity;
                let carried = Advect {
                    sed: block.sed,
                    velocity: [vx, vz],
                    base: first,
                    grid: self.pipes.grid,
                    per_cell: self.per_cell,
                    registers: self.registers,
                };
                for z in band {
                    carried.trail([first, last], z, block.next, block.drained, &mut rows.trail);
                }
            }
        }
        (books, lost)
    }

    /// The outflows and `bounds` of row `z`, past the block's first, from
    /// the ground and water of it and its neighbour rows; the block's last
    /// row was fluxed ahead ([`edge_rows`]) and copied in, all but its bounds.
    fn ahead(&self, block: &mut WaterBlock<'_>, bounds: &mut Bounds, z: usize) {
        let span = block.span;
        if z == span.last {
            bounds.clone_from(&edge_row(self.edges, z).bounds);
            return;
        }
        let rows = [span.own(z - 1), span.own(z), span.own(z + 1)];
        self.pipes.row(
            within(&*block.layers.ground, rows.clone()),
            within(block.water, rows),
            block.flux.each_mut().map(|f| &mut f[span.own(z)]),
            bounds,
            self.registers,
        );
    }

    /// The water, velocity, capacity (`cap`) and standing flags (`stand`)
    /// of row `z` once its outflows and its neighbours' are final; returns
    /// the water drained.
    fn cells<T: Carry, S: Stand>(
        &self,
        block: &mut WaterBlock<'_>,
        bounds: &Bounds,
        (cap, stand): (&mut [f32], &mut [u8]),
        z: usize,
    ) -> f64 {
        let WaterBlock {
            span,
            water,
            velocity: [vx, vz],
            ratio,
            flux,
            ..
        } = block;
        let (span, grid) = (*span, self.pipes.grid);
        let row = span.own(z);
        let flux_row = |zr: usize| -> [&[f32]; 4] {
            if (span.first..=span.last).contains(&zr) {
                flux.each_ref().map(|f| &f[span.own(zr)])
            } else {
                edge_row(self.edges, zr).flux.each_ref().map(|f| f.as_slice())
            }
        };
        let outflows = Around {
            back: neighbour_row(grid, z, BACK).map(flux_row),
            here: flux_row(z),
            front: neighbour_row(grid, z, FRONT).map(flux_row),
        };
        cells::<T, S>(
            &self.ctx,
            grid,
            outflows,
            &bounds.slope2,
            CellOut {
                w: &mut water[row.clone()],
                u: &mut vx[row.clone()],
                v: &mut vz[row.clone()],
                ra: &mut ratio[row],
                ca: cap,
                st: stand,
            },
            self.registers,
        )
    }

    /// The sediment exchange and standing water of row `z`, row `i` of its
    /// band; returns the water absorbed.
    fn exchange(&self, block: &mut WaterBlock<'_>, rows: &mut BlockRows, i: usize, z: usize) -> f64 {
        let WaterBlock {
            span,
            layers,
            water,
            sed,
            ..
        } = block;
        let row = span.own(z);
        let (bounds, cap, stand) = (&rows.bounds[z % RING], &rows.cap[i], &rows.stand[i]);
        self.registers.run(ExchangeKernel {
            lanes: &mut rows.exchange,
            layers,
            start: row.start,
            input: RowInput {
                cap,
                rim: &bounds.rim,
                floor: &bounds.floor,
                stand,
            },
            sed: &mut sed[row.clone()],
            rates: &self.rates,
        });
        let mut absorbed = 0.0;
        for x in rows.exchange.slow() {
            let j = row.start + x;
            let here = [cap[x], bounds.rim[x], bounds.floor[x]];
            let converted = exchange::column(layers, j, here, stand[x] != 0, &mut sed[j], &mut water[j], &self.rates);
            absorbed += f64::from(converted);
        }
        absorbed
    }

    /// Evaporation from row `z`, then its transport ratio for the flux
    /// transports; returns the water evaporated.
    fn evaporate<T: Carry>(&self, block: &mut WaterBlock<'_>, z: usize) -> f64 {
        let row = block.span.own(z);
        let evaporated = self.registers.run(Evaporate {
            water: &mut block.water[row.clone()],
            kv: self.kv,
        });
        // The semi-Lagrangian transport has no use for the ratio.
        if T::BY_FLUX {
            let num_dt = self.num_dt;
            for (ra, &sd) in block.ratio[row.clone()].iter_mut().zip(&block.sed[row]) {
                *ra = if *ra > 0.0 { num_dt * sd / *ra } else { 0.0 };
            }
        }
        evaporated
    }
}

/// What [`cells`] writes for a row.
struct CellOut<'a> {
    w: &'a mut [f32],
    u: &'a mut [f32],
    v: &'a mut [f32],
    ra: &'a mut [f32],
    ca: &'a mut [f32],
    st: &'a mut [u8],
}

/// [`local`] on every cell of a row, from its `outflows` and its neighbour
/// rows' and its squared gradient `g2`; returns the water drained off the
/// chunk's edge.
fn cells<T: Carry, S: Stand>(
    ctx: &CellCtx,
    grid: Grid,
    outflows: Around<[&[f32]; 4]>,
    g2: &[f32],
    out: CellOut<'_>,
    registers: Registers,
) -> f64 {
    let n = grid.n;
    let CellOut { w, u, v, ra, ca, st } = out;
    let here = outflows.here;
    let interior = match (outflows.back, outflows.front) {
        (Some(back), Some(front)) if n >= 3 => Some((back, front)),
        _ => None,
    };
    if let Some((back, front)) = interior {
        let m = n - 2;
        let [fl, fr, fb, ff] = here;
        registers.run(CellRow::<T, S> {
            inflow: [
                row_at(fr, 0, m),
                row_at(fl, 2, m),
                row_at(back[FRONT], 1, m),
                row_at(front[BACK], 1, m),
            ],
            outflow: [row_at(fl, 1, m), row_at(fr, 1, m), row_at(fb, 1, m), row_at(ff, 1, m)],
            g2: row_at(g2, 1, m),
            cells: CellOut {
                w: &mut w[1..][..m],
                u: &mut u[1..][..m],
                v: &mut v[1..][..m],
                ra: &mut ra[1..][..m],
                ca: &mut ca[1..][..m],
                st: &mut st[1..][..m],
            },
            c: ctx,
            modes: PhantomData,
        });
    }
    let mut drained = 0.0f64;
    let edge = |x: usize| {
        let [left, right] = grid.sides(x);
        let inflow = [
            left.map(|k| here[RIGHT][k]),
            right.map(|k| here[LEFT][k]),
            outflows.back.map(|f| f[FRONT][x]),
            outflows.front.map(|f| f[BACK][x]),
        ];
        let out = [here[LEFT][x], here[RIGHT][x], here[BACK][x], here[FRONT][x]];
        if ctx.drain {
            for (&f, nb) in out.iter().zip(inflow) {
                if nb.is_none() {
                    drained += f64::from(f * ctx.dt * ctx.per_area);
                }
            }
        }
        let c = local::<T, S>(inflow.map(|f| f.unwrap_or(0.0)), out, w[x], g2[x], ctx);
        w[x] = c.water;
        u[x] = c.u;
        v[x] = c.v;
        ca[x] = c.cap;
        ra[x] = c.den;
        st[x] = u8::from(c.stand);
    };
    // After the interior, as `Pipes::row` does and for the same reason.
    match interior {
        Some(_) => [0, n - 1].into_iter().for_each(edge),
        None => (0..n).for_each(edge),
    }
    drained
}

/// [`local`] on the interior cells of a row: `inflow` and `outflow` hold the
/// fluxes into and out of each cell by direction, `g2` its squared gradient;
/// `cells` receives the results (`ca` the capacity). [`cell_interior`] takes
/// the outputs as separate reference parameters so the compiler knows they
/// do not alias and vectorizes the loop.
/// The loop is a [`Kernel`], so it also compiles for wider registers.
struct CellRow<'a, T, S> {
    inflow: [&'a [f32]; 4],
    outflow: [&'a [f32]; 4],
    g2: &'a [f32],
    cells: CellOut<'a>,
    c: &'a CellCtx,
    modes: PhantomData<(T, S)>,
}

impl<T: Carry, S: Stand> Kernel for CellRow<'_, T, S> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Self {
            inflow,
            outflow,
            g2,
            cells,
            c,
            modes: PhantomData,
        } = self;
        let CellOut { w, u, v, ra, ca, st } = cells;
        let input = CellIn { inflow, outflow, g2, c };
        cell_interior::<T, S>(input, w, u, v, ra, ca, st);
    }
}

/// What [`cell_interior`] reads; the planes it writes are its own
/// parameters (see [`CellRow`]).
struct CellIn<'a> {
    /// The row's inflows from the left, right, back and front.
    inflow: [&'a [f32]; 4],
    /// The row's outflows to the left, right, back and front.
    outflow: [&'a [f32]; 4],
    /// The squared gradient per cell.
    g2: &'a [f32],
    /// The constants of the step.
    c: &'a CellCtx,
}

#[inline(always)]
fn cell_interior<T: Carry, S: Stand>(
    input: CellIn<'_>,
    w: &mut [f32],
    u: &mut [f32],
    v: &mut [f32],
    ra: &mut [f32],
    ca: &mut [f32],
    st: &mut [u8],
) {
    let CellIn {
        inflow,
        outflow: out,
        g2,
        c,
    } = input;
    let m = w.len();
    let (g2, u, v, ra, ca, st) = (
        &g2[..m],
        &mut u[..m],
        &mut v[..m],
        &mut ra[..m],
        &mut ca[..m],
        &mut st[..m],
    );
    let [il, ir, ib, if_] = inflow.map(|p| &p[..m]);
    let [ol, or, ob, of] = out.map(|p| &p[..m]);
    // The constants as values: read through `c` inside the loop, the ones
    // under a select are loaded per lane, in gathers.
    let c = *c;
    for x in 0..m {
        let l = local::<T, S>(
            [il[x], ir[x], ib[x], if_[x]],
            [ol[x], or[x], ob[x], of[x]],
            w[x],
            g2[x],
            &c,
        );
        w[x] = l.water;
        u[x] = l.u;
        v[x] = l.v;
        ca[x] = l.cap;
        if T::BY_FLUX {
            ra[x] = l.den;
        }
        st[x] = u8::from(l.stand);
    }
}

/// Water shallower than this dries up at once (booked as evaporated). A
/// cell that runs dry keeps a few roundings of its water (the pipes leave
/// it, see `pipes::SHORT`), and without a floor that film shrinks step by
/// step into f32's subnormal range, where every operation on it costs a
/// hundred cycles: after 1000 iterations of thesis landscape 1, 8000 cells
/// held such films (1100 when the pipes still took all the water). The flux
/// transports already treat water this shallow as none.
const DRY: f32 = 1e-20;

/// Evaporates the fraction `kv` of each cell's water in a row (eq. 3.6)
/// and dries films under [`DRY`]; returns the volume taken, summed in eight
/// lanes so the loop vectorizes. A [`Kernel`]: on the wider registers its
/// widening of the water to f64 takes a fraction of SSE2's instructions.
struct Evaporate<'a> {
    water: &'a mut [f32],
    kv: f32,
}

impl Kernel for Evaporate<'_> {
    type Output = f64;

    #[inline(always)]
    fn run(self) -> f64 {
        let Self { water, kv } = self;
        let mut lanes = [0.0f64; 8];
        let mut chunks = water.chunks_exact_mut(8);
        for c in &mut chunks {
            for (w, lane) in c.iter_mut().zip(&mut lanes) {
                *lane += evaporate_cell(w, kv);
            }
        }
        for (w, lane) in chunks.into_remainder().iter_mut().zip(&mut lanes) {
            *lane += evaporate_cell(w, kv);
        }
        lanes.iter().sum()
    }
}

/// Evaporates one cell's water `w`; returns what went, as the difference of
/// two f32, which f64 holds exactly.
#[inline(always)]
fn evaporate_cell(w: &mut f32, kv: f32) -> f64 {
    let before = *w;
    let after = before - before * kv;
    *w = if after < DRY { 0.0 } else { after };
    f64::from(before) - f64::from(*w)
}
