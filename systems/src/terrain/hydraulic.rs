//! Flowing-water erosion with virtual pipes (Mei, Decaudin & Hu 2007; thesis
//! §2.3.1 and §3.1.3), and standing-water erosion (§2.3.2, §3.1.4), which
//! shares the fluxes.
//!
//! One iteration: sources (rain, springs) → outflow fluxes → water and
//! velocity → dissolve/deposit and standing water → evaporation → sediment
//! transport, in three sweeps over the planes (see [`step`]). Every sweep runs
//! over blocks of [`ROWS`] rows in parallel and writes only its own block;
//! what a sweep reads of its neighbours (ground and water in the first, fluxes
//! in the second, fluxes, ratios and sediment in the third) no sweep writes at
//! the same time, so results do not depend on the number of threads. Sums for
//! the books are taken per block and added in block order. Interior rows run
//! a branch-free copy of the per-cell arithmetic that the compiler vectorizes;
//! edge cells take the general path with the boundary mode.
//!
//! **Caps (not in the thesis).** Dissolving never takes a cell below the
//! lowest of its N4 neighbours' ground, and depositing never raises it above
//! the highest (both as they were at the start of the iteration); what the
//! caps hold back stays suspended. Without them a high K_c digs pits and
//! leaves towers standing that feed on themselves — the thesis's Fig.
//! 5.16–5.17 failure, reproduced by `high_capacity_grows_no_spikes` — while
//! with them a channel still deepens as fast as the ground downstream does.

use rand::RngExt;
use rayon::prelude::*;
use sylva_runtime::rng::{StreamKey, hash_words, stream};

use super::columns::{BACK, FRONT, LEFT, RIGHT, TerrainChunk};
use super::exchange::{self, ExchangeKernel, ExchangeRow, Rates, RowInput};
use super::params::{Boundary, Rain, Standing, TerrainParams, Transport};
use super::stats::TerrainBalance;
use crate::registers::{Kernel, Registers};

/// Rows per parallel task: fixed, so block sums never depend on thread count.
pub(crate) const ROWS: usize = 16;

/// Planes reused between steps.
#[derive(Default)]
pub(crate) struct Scratch {
    /// Squared ground gradient, from the flux sweep for the capacity.
    slope2: Vec<f32>,
    /// Highest N4 neighbour ground, from the flux sweep: the deposition cap.
    rim: Vec<f32>,
    /// Lowest N4 neighbour ground: the dissolving floor.
    floor: Vec<f32>,
    /// Suspended sediment per unit of outflux (flux transports).
    ratio: Vec<f32>,
    /// The transported sediment, swapped into the chunk.
    next: Vec<f32>,
    /// 1 where the water stands (standing-water erosion is due).
    stand: Vec<u8>,
}

/// Neighbour lookup under a boundary mode.
#[derive(Clone, Copy)]
pub(crate) struct Grid {
    pub(crate) n: usize,
    pub(crate) boundary: Boundary,
}

const OPPOSITE: [usize; 4] = [RIGHT, LEFT, FRONT, BACK];

impl Grid {
    /// Neighbours of `(x, z)` towards −x, +x, −z, +z.
    #[inline]
    pub(crate) fn around(&self, x: usize, z: usize) -> [Option<usize>; 4] {
        let n = self.n;
        if x > 0 && x + 1 < n && z > 0 && z + 1 < n {
            let i = z * n + x;
            return [Some(i - 1), Some(i + 1), Some(i - n), Some(i + n)];
        }
        [
            self.nb(x, z, LEFT),
            self.nb(x, z, RIGHT),
            self.nb(x, z, BACK),
            self.nb(x, z, FRONT),
        ]
    }

    /// Index of the neighbour of `(x, z)` in direction `dir`, or None beyond the edge.
    #[inline]
    pub(crate) fn nb(&self, x: usize, z: usize, dir: usize) -> Option<usize> {
        let n = self.n;
        let wrap = self.boundary == Boundary::Wrap;
        let (nx, nz) = match dir {
            LEFT if x > 0 => (x - 1, z),
            LEFT if wrap => (n - 1, z),
            RIGHT if x + 1 < n => (x + 1, z),
            RIGHT if wrap => (0, z),
            BACK if z > 0 => (x, z - 1),
            BACK if wrap => (x, n - 1),
            FRONT if z + 1 < n => (x, z + 1),
            FRONT if wrap => (x, 0),
            _ => return None,
        };
        Some(nz * n + nx)
    }
}

/// Adds rain and spring water; returns the volume added.
fn sources(chunk: &mut TerrainChunk, p: &TerrainParams, seed: u64, iteration: u64) -> f64 {
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
/// Three sweeps: fluxes (and the ground gradient for the capacity), then
/// everything local to a cell that needs the finished fluxes (water, velocity,
/// dissolve/deposit, standing water, evaporation, the transport ratio), then
/// sediment transport.
pub(crate) fn step(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    seed: u64,
    iteration: u64,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let n = chunk.size() as usize;
    let grid = Grid {
        n,
        boundary: p.hydraulic.boundary,
    };
    books.water_added += sources(chunk, p, seed, iteration);
    for plane in [&mut s.slope2, &mut s.rim, &mut s.floor, &mut s.ratio, &mut s.next] {
        plane.resize(n * n, 0.0);
    }
    s.stand.resize(n * n, 0);
    flux_pass(chunk, p, grid, &mut s.slope2, [&mut s.rim, &mut s.floor], registers);
    cell_pass(chunk, p, grid, s, books, registers);
    transport(chunk, p, grid, s, books, registers);
}

/// Per-kernel constants of the flux pass.
struct FluxCtx<'a> {
    ground: &'a [f32],
    water: &'a [f32],
    grid: Grid,
    k_pipe: f32,
    area: f32,
    dt: f32,
    l: f32,
}

/// Eq. 2.16–2.19 for one cell: new outflows `f` from the old ones, the
/// surface `hc` and the neighbours' surfaces `hn`; pipes that are not `open`
/// (a closed edge) carry nothing. Scaled so no more than the water `w` leaves.
#[inline(always)]
fn pipes(f: [f32; 4], hc: f32, hn: [f32; 4], open: [bool; 4], w: f32, c: &FluxCtx<'_>) -> [f32; 4] {
    let mut out = [0.0; 4];
    let mut sum = 0.0;
    for d in 0..4 {
        if open[d] {
            let v = (f[d] + c.k_pipe * (hc - hn[d])).max(0.0);
            out[d] = v;
            sum += v;
        }
    }
    // k = 1 leaves the fluxes bit-identical, so scaling every cell is branch-free.
    let k = if sum > 0.0 {
        (w * c.area / (sum * c.dt)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    out.map(|v| v * k)
}

/// Squared ground gradient from central differences (the capacity's tilt).
#[inline(always)]
fn slope2(gl: f32, gr: f32, gb: f32, gf: f32, l: f32) -> f32 {
    let gx = (gr - gl) / (2.0 * l);
    let gz = (gf - gb) / (2.0 * l);
    gx * gx + gz * gz
}

impl FluxCtx<'_> {
    /// Any cell, edges included: fluxes, squared gradient, and highest and
    /// lowest neighbour ground.
    fn cell(&self, f: [f32; 4], x: usize, z: usize) -> ([f32; 4], f32, [f32; 2]) {
        let i = z * self.grid.n + x;
        let (g, w) = (self.ground, self.water);
        let around = self.grid.around(x, z);
        let drain = self.grid.boundary == Boundary::Drain;
        let mut hn = [0.0; 4];
        let mut open = [true; 4];
        for d in 0..4 {
            match around[d] {
                Some(k) => hn[d] = g[k] + w[k],
                None => open[d] = drain,
            }
        }
        let out = pipes(f, g[i] + w[i], hn, open, w[i], self);
        // Beyond an edge the ground counts as level with the cell.
        let at = |d: usize| around[d].map_or(g[i], |k| g[k]);
        // Only neighbours inside count: a cell without any has no bounds.
        let nbs = around.into_iter().flatten().map(|k| g[k]);
        let rim = nbs.clone().reduce(f32::max).unwrap_or(f32::INFINITY);
        let floor = nbs.reduce(f32::min).unwrap_or(f32::NEG_INFINITY);
        (
            out,
            slope2(at(LEFT), at(RIGHT), at(BACK), at(FRONT), self.l),
            [rim, floor],
        )
    }

    /// Cells 1..n−1 of row `z`, whose four neighbours all exist (rows `zb`
    /// and `zf` above and below): the same arithmetic as [`Self::cell`] on
    /// straight slices, which the compiler vectorizes.
    #[inline(always)]
    fn interior(&self, z: usize, zb: usize, zf: usize, out: [&mut [f32]; 4], s2: &mut [f32], bounds: [&mut [f32]; 2]) {
        let n = self.grid.n;
        let m = n - 2;
        let (g, w) = (self.ground, self.water);
        let gc = &g[z * n + 1..][..m];
        let gl = &g[z * n..][..m];
        let gr = &g[z * n + 2..][..m];
        let gb = &g[zb * n + 1..][..m];
        let gf = &g[zf * n + 1..][..m];
        let wc = &w[z * n + 1..][..m];
        let wl = &w[z * n..][..m];
        let wr = &w[z * n + 2..][..m];
        let wb = &w[zb * n + 1..][..m];
        let wf = &w[zf * n + 1..][..m];
        let [fl, fr, fb, ff] = out;
        let (fl, fr, fb, ff, s2) = (&mut fl[..m], &mut fr[..m], &mut fb[..m], &mut ff[..m], &mut s2[..m]);
        let [rim, floor] = bounds;
        let (rim, floor) = (&mut rim[..m], &mut floor[..m]);
        for x in 0..m {
            let hn = [gl[x] + wl[x], gr[x] + wr[x], gb[x] + wb[x], gf[x] + wf[x]];
            let o = pipes([fl[x], fr[x], fb[x], ff[x]], gc[x] + wc[x], hn, [true; 4], wc[x], self);
            fl[x] = o[0];
            fr[x] = o[1];
            fb[x] = o[2];
            ff[x] = o[3];
            s2[x] = slope2(gl[x], gr[x], gb[x], gf[x], self.l);
            rim[x] = gl[x].max(gr[x]).max(gb[x]).max(gf[x]);
            floor[x] = gl[x].min(gr[x]).min(gb[x]).min(gf[x]);
        }
    }
}

/// [`FluxCtx::interior`] of row `rows[0]` (neighbour rows `rows[1..]`), for
/// [`Registers::run`].
struct FluxRow<'a, 'c> {
    ctx: &'a FluxCtx<'c>,
    rows: [usize; 3],
    out: [&'a mut [f32]; 4],
    s2: &'a mut [f32],
    bounds: [&'a mut [f32]; 2],
}

impl Kernel for FluxRow<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let [z, zb, zf] = self.rows;
        self.ctx.interior(z, zb, zf, self.out, self.s2, self.bounds);
    }
}

/// Row index of the neighbour row of `z` towards `dir` (BACK or FRONT), if any.
#[inline]
pub(crate) fn neighbour_row(grid: Grid, z: usize, dir: usize) -> Option<usize> {
    grid.nb(0, z, dir).map(|k| k / grid.n)
}

/// Sweep 1: outflow fluxes (eq. 2.16–2.19 / 3.1–3.2), each cell writing its
/// own four, and the squared ground gradient into `s2`.
fn flux_pass(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    s2: &mut [f32],
    bounds: [&mut [f32]; 2],
    registers: Registers,
) {
    let [rim, floor] = bounds;
    let h = &p.hydraulic;
    let n = grid.n;
    let block = ROWS * n;
    let l = p.cell_length;
    let ctx = FluxCtx {
        ground: &chunk.ground,
        water: &chunk.water,
        grid,
        k_pipe: h.time_step * h.pipe_area * h.gravity / l,
        area: l * l,
        dt: h.time_step,
        l,
    };
    let [fl, fr, fb, ff] = &mut chunk.flux;
    (
        fl.par_chunks_mut(block),
        fr.par_chunks_mut(block),
        fb.par_chunks_mut(block),
        ff.par_chunks_mut(block),
        s2.par_chunks_mut(block),
        rim.par_chunks_mut(block),
        floor.par_chunks_mut(block),
    )
        .into_par_iter()
        .enumerate()
        .for_each(|(b, (fl, fr, fb, ff, s2, rim, floor))| {
            for r in 0..s2.len() / n {
                let z = b * ROWS + r;
                let row = r * n..(r + 1) * n;
                let (fl, fr, fb, ff, s2, rim, floor) = (
                    &mut fl[row.clone()],
                    &mut fr[row.clone()],
                    &mut fb[row.clone()],
                    &mut ff[row.clone()],
                    &mut s2[row.clone()],
                    &mut rim[row.clone()],
                    &mut floor[row],
                );
                let mut edge = |x: usize| {
                    let (o, g2, [hi, lo]) = ctx.cell([fl[x], fr[x], fb[x], ff[x]], x, z);
                    [fl[x], fr[x], fb[x], ff[x]] = o;
                    s2[x] = g2;
                    rim[x] = hi;
                    floor[x] = lo;
                };
                match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
                    (Some(zb), Some(zf)) if n >= 3 => {
                        edge(0);
                        edge(n - 1);
                        registers.run(FluxRow {
                            ctx: &ctx,
                            rows: [z, zb, zf],
                            out: [&mut fl[1..], &mut fr[1..], &mut fb[1..], &mut ff[1..]],
                            s2: &mut s2[1..],
                            bounds: [&mut rim[1..], &mut floor[1..]],
                        });
                    }
                    _ => (0..n).for_each(edge),
                }
            }
        });
}

/// Per-kernel constants of the cell sweep.
struct CellCtx {
    dt: f32,
    l: f32,
    area: f32,
    z_sign: f32,
    min_depth: f32,
    capacity: f32,
    min_tilt: f32,
    /// Standing water: flux threshold and least depth.
    threshold: f32,
    stand_depth: f32,
}

/// Transport modes and standing criteria as const parameters of the cell
/// sweep, so its interior loop has no branches on them.
const SEMI: u8 = 0;
const THESIS_FLUX: u8 = 1;
const FLUX: u8 = 2;
const NO_STANDING: u8 = 0;
const BOTH_BELOW: u8 = 1;
const BALANCED: u8 = 2;

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
/// standing criterion `S` (thesis §3.1.4, erratum 11: inflow and outflow both
/// below the threshold, or their difference). Branch-free, so interior rows
/// vectorize.
#[inline(always)]
fn local<const T: u8, const S: u8>(inflow: [f32; 4], out: [f32; 4], w_prev: f32, g2: f32, c: &CellCtx) -> Local {
    let f_in = inflow[LEFT] + inflow[RIGHT] + inflow[BACK] + inflow[FRONT];
    let f_out = out[0] + out[1] + out[2] + out[3];
    let w_new = (w_prev + c.dt * (f_in - f_out) / c.area).max(0.0);
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
    let den = match T {
        THESIS_FLUX => select(f_out > 1e-20, f_out, 0.0),
        FLUX => select(w_prev * c.area > 1e-20, (f_out * c.dt).max(w_prev * c.area), 0.0),
        _ => 0.0,
    };
    let deep = (w_new > 0.0) & (w_new >= c.stand_depth);
    let stand = match S {
        BOTH_BELOW => deep & (f_in < c.threshold) & (f_out < c.threshold),
        BALANCED => deep & ((f_in - f_out).abs() < c.threshold),
        _ => false,
    };
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

/// Sweep 2, everything local to a cell once the fluxes are final: water
/// (eq. 2.20–2.23) and velocity (eq. 2.24–2.26, +z-consistent unless the
/// thesis sign is asked for), dissolve and deposit (eq. 2.27–2.29), standing
/// water (eq. 2.33–2.34), evaporation (eq. 3.6) and the sediment per unit of
/// outflux that the flux transports move. Cells read their neighbours' fluxes
/// only, which no cell writes here. Row by row, an arithmetic half (see
/// [`local`]) runs first, then the half that changes the layers.
fn cell_pass(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let t = match p.hydraulic.transport {
        Transport::SemiLagrangian => SEMI,
        Transport::ThesisFlux => THESIS_FLUX,
        Transport::Flux => FLUX,
    };
    let sw = &p.standing_water;
    let st = match sw.criterion {
        _ if !sw.enabled => NO_STANDING,
        Standing::BothBelow => BOTH_BELOW,
        Standing::Balanced => BALANCED,
    };
    let sweep = match (t, st) {
        (SEMI, NO_STANDING) => cell_sweep::<SEMI, NO_STANDING>,
        (SEMI, BOTH_BELOW) => cell_sweep::<SEMI, BOTH_BELOW>,
        (SEMI, _) => cell_sweep::<SEMI, BALANCED>,
        (THESIS_FLUX, NO_STANDING) => cell_sweep::<THESIS_FLUX, NO_STANDING>,
        (THESIS_FLUX, BOTH_BELOW) => cell_sweep::<THESIS_FLUX, BOTH_BELOW>,
        (THESIS_FLUX, _) => cell_sweep::<THESIS_FLUX, BALANCED>,
        (_, NO_STANDING) => cell_sweep::<FLUX, NO_STANDING>,
        (_, BOTH_BELOW) => cell_sweep::<FLUX, BOTH_BELOW>,
        _ => cell_sweep::<FLUX, BALANCED>,
    };
    sweep(chunk, p, grid, s, books, registers);
}

/// [`cell_pass`] for transport `T` and standing criterion `S`.
fn cell_sweep<const T: u8, const S: u8>(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let h = &p.hydraulic;
    let n = grid.n;
    let block = ROWS * n;
    let l = p.cell_length;
    let ctx = CellCtx {
        dt: h.time_step,
        l,
        area: l * l,
        z_sign: if h.thesis_velocity_sign { -1.0 } else { 1.0 },
        min_depth: h.min_depth,
        capacity: h.capacity,
        min_tilt: h.min_tilt,
        threshold: p.standing_water.threshold,
        stand_depth: p.standing_water.min_depth,
    };
    let kv = h.evaporation * h.time_step;
    let num_dt = if T == FLUX { h.time_step } else { 1.0 };
    let rates = Rates {
        ks: p.materials.lut(|m| m.ks),
        deposit: p.materials.lut(|m| if h.thesis_deposit { m.ks } else { m.deposit }),
    };
    let drain = h.boundary == Boundary::Drain;
    let parts = chunk.parts(block);
    let flux = parts.flux;
    let [vx, vz] = parts.velocity;
    let sums: Vec<[f64; 3]> = parts
        .layers
        .into_par_iter()
        .zip((
            parts.water.par_chunks_mut(block),
            parts.sediment.par_chunks_mut(block),
            vx.par_chunks_mut(block),
            vz.par_chunks_mut(block),
            s.ratio.par_chunks_mut(block),
            s.slope2.par_chunks_mut(block),
            s.stand.par_chunks_mut(block),
            (s.rim.par_chunks(block), s.floor.par_chunks(block)),
        ))
        .enumerate()
        .map_init(
            ExchangeRow::default,
            |lanes, (b, (mut layers, (water, sed, vx, vz, ratio, cap, stand, (rim, floor))))| {
                let (mut drained, mut absorbed, mut evaporated) = (0.0f64, 0.0f64, 0.0f64);
                for r in 0..water.len() / n {
                    let z = b * ROWS + r;
                    let row = r * n..(r + 1) * n;
                    {
                        let (water, vx, vz, ratio, cap, stand) = (
                            &mut water[row.clone()],
                            &mut vx[row.clone()],
                            &mut vz[row.clone()],
                            &mut ratio[row.clone()],
                            &mut cap[row.clone()],
                            &mut stand[row.clone()],
                        );
                        let mut edge = |x: usize| {
                            let i = z * n + x;
                            let around = grid.around(x, z);
                            let inflow_from = |d: usize| around[d].map_or(0.0, |k| flux[OPPOSITE[d]][k]);
                            let inflow = [
                                inflow_from(LEFT),
                                inflow_from(RIGHT),
                                inflow_from(BACK),
                                inflow_from(FRONT),
                            ];
                            let out = [flux[LEFT][i], flux[RIGHT][i], flux[BACK][i], flux[FRONT][i]];
                            if drain {
                                for (&f, nb) in out.iter().zip(around) {
                                    if nb.is_none() {
                                        drained += f64::from(f * ctx.dt / ctx.area);
                                    }
                                }
                            }
                            let c = local::<T, S>(inflow, out, water[x], cap[x], &ctx);
                            water[x] = c.water;
                            vx[x] = c.u;
                            vz[x] = c.v;
                            cap[x] = c.cap;
                            ratio[x] = c.den;
                            stand[x] = u8::from(c.stand);
                        };
                        match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
                            (Some(zb), Some(zf)) if n >= 3 => {
                                edge(0);
                                edge(n - 1);
                                let m = n - 2;
                                let at = |p, r: usize, dx: usize| row_at(p, r * n + dx, m);
                                let [fl, fr, fb, ff] = flux.each_ref().map(|f| f.as_slice());
                                let (flc, frc, fbc, ffc) = (at(fl, z, 1), at(fr, z, 1), at(fb, z, 1), at(ff, z, 1));
                                let (fr_l, fl_r, ff_b, fb_f) =
                                    (at(fr, z, 0), at(fl, z, 2), at(ff, zb, 1), at(fb, zf, 1));
                                registers.run(CellRow::<T, S> {
                                    inflow: [fr_l, fl_r, ff_b, fb_f],
                                    out: [flc, frc, fbc, ffc],
                                    w: &mut water[1..][..m],
                                    u: &mut vx[1..][..m],
                                    v: &mut vz[1..][..m],
                                    ra: &mut ratio[1..][..m],
                                    ca: &mut cap[1..][..m],
                                    st: &mut stand[1..][..m],
                                    c: &ctx,
                                });
                            }
                            _ => (0..n).for_each(edge),
                        }
                    }
                    let cells = row.clone();
                    registers.run(ExchangeKernel {
                        lanes: &mut *lanes,
                        layers: &mut layers,
                        start: cells.start,
                        input: RowInput {
                            cap: &cap[cells.clone()],
                            rim: &rim[cells.clone()],
                            floor: &floor[cells.clone()],
                            stand: &stand[cells.clone()],
                        },
                        sed: &mut sed[cells.clone()],
                        rates: &rates,
                    });
                    for (x, _) in lanes.slow().iter().enumerate().filter(|s| *s.1 != 0) {
                        let j = cells.start + x;
                        let here = [cap[j], rim[j], floor[j]];
                        let converted =
                            exchange::column(&mut layers, j, here, stand[j] != 0, &mut sed[j], &mut water[j], &rates);
                        absorbed += f64::from(converted);
                    }
                    evaporated += evaporate(&mut water[row.clone()], kv);
                    // The semi-Lagrangian transport has no use for the ratio.
                    if T != SEMI {
                        for (ra, &sd) in ratio[row.clone()].iter_mut().zip(&sed[row]) {
                            *ra = if *ra > 0.0 { num_dt * sd / *ra } else { 0.0 };
                        }
                    }
                }
                [drained, absorbed, evaporated]
            },
        )
        .collect();
    let total = |c: usize| sums.iter().map(|v| v[c]).sum::<f64>();
    books.water_drained += total(0);
    books.water_absorbed += total(1);
    books.water_evaporated += total(2);
}

/// [`local`] on the interior cells of a row: `inflow` and `out` hold the
/// fluxes into and out of each cell by direction, `ca` the squared gradient
/// on entry and the capacity on return. The outputs are separate reference
/// parameters so the compiler knows they do not alias and vectorizes the loop.
/// The loop is a [`Kernel`], so it also compiles for wider registers.
struct CellRow<'a, const T: u8, const S: u8> {
    inflow: [&'a [f32]; 4],
    out: [&'a [f32]; 4],
    w: &'a mut [f32],
    u: &'a mut [f32],
    v: &'a mut [f32],
    ra: &'a mut [f32],
    ca: &'a mut [f32],
    st: &'a mut [u8],
    c: &'a CellCtx,
}

impl<const T: u8, const S: u8> Kernel for CellRow<'_, T, S> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Self {
            inflow,
            out,
            w,
            u,
            v,
            ra,
            ca,
            st,
            c,
        } = self;
        cell_interior::<T, S>(inflow, out, w, u, v, ra, ca, st, c);
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn cell_interior<const T: u8, const S: u8>(
    inflow: [&[f32]; 4],
    out: [&[f32]; 4],
    w: &mut [f32],
    u: &mut [f32],
    v: &mut [f32],
    ra: &mut [f32],
    ca: &mut [f32],
    st: &mut [u8],
    c: &CellCtx,
) {
    let m = w.len();
    let (u, v, ra, ca, st) = (&mut u[..m], &mut v[..m], &mut ra[..m], &mut ca[..m], &mut st[..m]);
    let [il, ir, ib, if_] = inflow.map(|p| &p[..m]);
    let [ol, or, ob, of] = out.map(|p| &p[..m]);
    for x in 0..m {
        let l = local::<T, S>(
            [il[x], ir[x], ib[x], if_[x]],
            [ol[x], or[x], ob[x], of[x]],
            w[x],
            ca[x],
            c,
        );
        w[x] = l.water;
        u[x] = l.u;
        v[x] = l.v;
        ca[x] = l.cap;
        if T != SEMI {
            ra[x] = l.den;
        }
        st[x] = u8::from(l.stand);
    }
}

/// Evaporates the fraction `kv` of each cell's water (eq. 3.6); returns the
/// volume taken, summed in eight lanes so the loop vectorizes.
fn evaporate(water: &mut [f32], kv: f32) -> f64 {
    let mut lanes = [0.0f64; 8];
    let mut chunks = water.chunks_exact_mut(8);
    for c in &mut chunks {
        for (w, lane) in c.iter_mut().zip(&mut lanes) {
            *lane += f64::from(*w * kv);
            *w -= *w * kv;
        }
    }
    for (w, lane) in chunks.into_remainder().iter_mut().zip(&mut lanes) {
        *lane += f64::from(*w * kv);
        *w -= *w * kv;
    }
    lanes.iter().sum()
}

/// `m` values of `p` from `start`.
#[inline(always)]
fn row_at(p: &[f32], start: usize, m: usize) -> &[f32] {
    &p[start..][..m]
}

/// Sweep 3, sediment transport: semi-Lagrangian (eq. 2.30–2.31) or
/// flux-proportional (eq. 3.7–3.8, accumulated). What leaves cell k towards
/// `dir` is flux[dir][k]·ratio[k]; every cell reads the same ratio for itself
/// and its neighbours, so what leaves one cell arrives bit-identically at the
/// other.
fn transport(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    s: &mut Scratch,
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let h = &p.hydraulic;
    let n = grid.n;
    let block = ROWS * n;
    let (dt, l) = (h.time_step, p.cell_length);
    let flux = &chunk.flux;
    let [vx, vz] = &chunk.velocity;
    let (sed, ratio) = (&chunk.sediment, &s.ratio);
    let semi = h.transport == Transport::SemiLagrangian;
    // One cell of the flux transports, edges included.
    let moved = |x: usize, z: usize, lost: &mut f64| {
        let i = z * n + x;
        let mut v = sed[i];
        for (dir, nb) in grid.around(x, z).into_iter().enumerate() {
            let o = flux[dir][i] * ratio[i];
            v -= o;
            match nb {
                Some(k) => v += flux[OPPOSITE[dir]][k] * ratio[k],
                None => *lost += f64::from(o),
            }
        }
        v
    };
    let drained: f64 = s
        .next
        .par_chunks_mut(block)
        .enumerate()
        .map(|(b, next)| {
            let mut lost = 0.0f64;
            for r in 0..next.len() / n {
                let z = b * ROWS + r;
                let next = &mut next[r * n..(r + 1) * n];
                if semi {
                    registers.run(AdvectRow {
                        sed,
                        grid,
                        z,
                        velocity: [&vx[z * n..][..n], &vz[z * n..][..n]],
                        steps: [dt, l],
                        next,
                    });
                    continue;
                }
                match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
                    (Some(zb), Some(zf)) if n >= 3 => {
                        next[0] = moved(0, z, &mut lost);
                        next[n - 1] = moved(n - 1, z, &mut lost);
                        flux_interior(flux, sed, ratio, n, z, zb, zf, &mut next[1..n - 1]);
                    }
                    _ => {
                        for (x, out) in next.iter_mut().enumerate() {
                            *out = moved(x, z, &mut lost);
                        }
                    }
                }
            }
            lost
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum();
    books.sediment_drained += drained;
    std::mem::swap(&mut chunk.sediment, &mut s.next);
}

/// The flux transport on cells 1..n−1 of row `z` (all four neighbours exist),
/// in the same order of operations as the edge cells.
#[allow(clippy::too_many_arguments)]
fn flux_interior(
    flux: &[Vec<f32>; 4],
    sed: &[f32],
    ratio: &[f32],
    n: usize,
    z: usize,
    zb: usize,
    zf: usize,
    next: &mut [f32],
) {
    let m = n - 2;
    let at = |p, r: usize, dx: usize| row_at(p, r * n + dx, m);
    let (sc, next) = (at(sed, z, 1), &mut next[..m]);
    let (rc, rl, rr, rb, rf) = (
        at(ratio, z, 1),
        at(ratio, z, 0),
        at(ratio, z, 2),
        at(ratio, zb, 1),
        at(ratio, zf, 1),
    );
    let [fl, fr, fb, ff] = flux.each_ref().map(|f| f.as_slice());
    let (flc, frc, fbc, ffc) = (at(fl, z, 1), at(fr, z, 1), at(fb, z, 1), at(ff, z, 1));
    let (fr_l, fl_r, ff_b, fb_f) = (at(fr, z, 0), at(fl, z, 2), at(ff, zb, 1), at(fb, zf, 1));
    for x in 0..m {
        let mut v = sc[x];
        v -= flc[x] * rc[x];
        v += fr_l[x] * rl[x];
        v -= frc[x] * rc[x];
        v += fl_r[x] * rr[x];
        v -= fbc[x] * rc[x];
        v += ff_b[x] * rb[x];
        v -= ffc[x] * rc[x];
        v += fb_f[x] * rf[x];
        next[x] = v;
    }
}

/// [`advect_row`] as a [`Kernel`].
struct AdvectRow<'a> {
    sed: &'a [f32],
    grid: Grid,
    z: usize,
    velocity: [&'a [f32]; 2],
    steps: [f32; 2],
    next: &'a mut [f32],
}

impl Kernel for AdvectRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        advect_row(self.sed, self.grid, self.z, self.velocity, self.steps, self.next);
    }
}

/// [`advect`] for row `z`, with the row's velocities `[vx, vz]`, time step
/// and cell length. Standing water keeps its own value exactly. Every cell
/// computes its bilinear sample and then picks it or its own value; only
/// back-traces that leave a chunk that does not wrap branch off, so wet and
/// dry cells side by side cost no mispredictions.
#[inline(always)]
fn advect_row(sed: &[f32], grid: Grid, z: usize, [vx, vz]: [&[f32]; 2], [dt, l]: [f32; 2], next: &mut [f32]) {
    let n = grid.n;
    let (last, size) = ((n - 1) as f32, n as f32);
    let wrap = grid.boundary == Boundary::Wrap;
    let cells = |v: f32| v * dt / l;
    for (x, out) in next[..n].iter_mut().enumerate() {
        let (u, v) = (vx[x], vz[x]);
        let still = u == 0.0 && v == 0.0;
        let (px, pz) = (x as f32 - cells(u), z as f32 - cells(v));
        let inside = wrap || (px >= 0.0 && px <= last && pz >= 0.0 && pz <= last);
        if !still & !inside {
            *out = advect(sed, grid, x, z, cells(u), cells(v));
            continue;
        }
        *out = if still {
            sed[z * n + x]
        } else if wrap {
            bilinear(sed, n, px.rem_euclid(size), pz.rem_euclid(size), true)
        } else {
            bilinear(sed, n, px, pz, false)
        };
    }
}

/// Back-traces from `(x, z)` by `(dx, dz)` cells and samples bilinearly.
fn advect(sed: &[f32], grid: Grid, x: usize, z: usize, dx: f32, dz: f32) -> f32 {
    let n = grid.n;
    let (px, pz) = (x as f32 - dx, z as f32 - dz);
    let last = (n - 1) as f32;
    let (px, pz) = if grid.boundary == Boundary::Wrap {
        (px.rem_euclid(n as f32), pz.rem_euclid(n as f32))
    } else if !(px >= 0.0 && px <= last && pz >= 0.0 && pz <= last) {
        let (sum, count) = (0..4)
            .filter_map(|d| grid.nb(x, z, d))
            .fold((0.0, 0.0), |(s, c), k| (s + sed[k], c + 1.0));
        return if count > 0.0 { sum / count } else { sed[z * n + x] };
    } else {
        (px, pz)
    };
    bilinear(sed, grid.n, px, pz, grid.boundary == Boundary::Wrap)
}

/// Bilinear sample of the `n`-wide plane `sed` at `(px, pz)`, both in
/// [0, n − 1] (or [0, n) when the plane `wrap`s).
#[inline(always)]
fn bilinear(sed: &[f32], n: usize, px: f32, pz: f32, wrap: bool) -> f32 {
    // px, pz ≥ 0 here, so truncation is the floor (without a libm call).
    let (x0, z0) = ((px as usize).min(n - 1), (pz as usize).min(n - 1));
    let (tx, tz) = (px - x0 as f32, pz - z0 as f32);
    let (x1, z1) = if wrap {
        ((x0 + 1) % n, (z0 + 1) % n)
    } else {
        ((x0 + 1).min(n - 1), (z0 + 1).min(n - 1))
    };
    let at = |x: usize, z: usize| sed[z * n + x];
    let a = at(x0, z0) * (1.0 - tx) + at(x1, z0) * tx;
    let b = at(x0, z1) * (1.0 - tx) + at(x1, z1) * tx;
    a * (1.0 - tz) + b * tz
}
