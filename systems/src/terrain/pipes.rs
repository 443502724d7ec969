//! Outflow fluxes through virtual pipes (eq. 2.16–2.19, thesis eq. 3.1–3.2),
//! one row of cells at a time.
//!
//! A cell's outflow towards each N4 neighbour grows with the difference of
//! their surfaces (ground + water) and is scaled down so that no more than
//! the cell's water leaves in a step. Alongside, every cell gets the ground
//! [`Bounds`] the rest of the water step needs. A row reads the ground and
//! water of its neighbour rows and writes only its own outflows, so the water
//! sweep can run it one row ahead of the rows it changes.

use super::columns::{BACK, FRONT, LEFT, RIGHT};
use super::grid::{Around, Grid, shifted};
use super::params::{Boundary, HydraulicParams};
use crate::registers::{Kernel, Registers};

/// What the rest of a water step needs of a row's ground, from the ground
/// the step starts with: the squared gradient (the capacity's tilt) and the
/// highest and lowest N4 neighbour ground (the caps on depositing and
/// dissolving).
#[derive(Clone, Default)]
pub(crate) struct Bounds {
    pub(crate) slope2: Vec<f32>,
    pub(crate) rim: Vec<f32>,
    pub(crate) floor: Vec<f32>,
}

impl Bounds {
    /// Sized for rows of `n` cells.
    pub(crate) fn resize(&mut self, n: usize) {
        for row in [&mut self.slope2, &mut self.rim, &mut self.floor] {
            row.resize(n, 0.0);
        }
    }
}

/// The constants of the outflow arithmetic.
#[derive(Clone, Copy)]
pub(crate) struct Pipes {
    pub(crate) grid: Grid,
    k_pipe: f32,
    area: f32,
    dt: f32,
    /// 1 / 2l, the central differences' divisor as a multiplier (see
    /// [`slope2`]).
    per_2l: f32,
}

impl Pipes {
    /// The pipes of `h` on `grid`, with cells `l` long.
    pub(crate) fn new(grid: Grid, h: &HydraulicParams, l: f32) -> Self {
        Self {
            grid,
            k_pipe: h.time_step * h.pipe_area * h.gravity / l,
            area: l * l,
            dt: h.time_step,
            per_2l: 0.5 / l,
        }
    }

    /// One row: new outflows in `flux` (which holds the old ones), and its
    /// bounds, from its own and its neighbour rows' `ground` and `water`.
    pub(crate) fn row(
        &self,
        ground: Around<&[f32]>,
        water: Around<&[f32]>,
        flux: [&mut [f32]; 4],
        bounds: &mut Bounds,
        registers: Registers,
    ) {
        let n = self.grid.n;
        let [fl, fr, fb, ff] = flux;
        let (s2, rim, floor) = (&mut bounds.slope2, &mut bounds.rim, &mut bounds.floor);
        let interior = match (ground.back.zip(water.back), ground.front.zip(water.front)) {
            (Some(back), Some(front)) if n >= 3 => Some((back, front)),
            _ => None,
        };
        if let Some(((gb, wb), (gf, wf))) = interior {
            let m = n - 2;
            let ([gc, gl, gr], [wc, wl, wr]) = (shifted(ground.here, m), shifted(water.here, m));
            registers.run(Interior {
                pipes: self,
                ground: [gc, gl, gr, &gb[1..][..m], &gf[1..][..m]],
                water: [wc, wl, wr, &wb[1..][..m], &wf[1..][..m]],
                flux: [&mut fl[1..], &mut fr[1..], &mut fb[1..], &mut ff[1..]],
                bounds: [&mut s2[1..], &mut rim[1..], &mut floor[1..]],
            });
        }
        let edge = |x: usize| {
            let (o, g2, [hi, lo]) = self.cell([fl[x], fr[x], fb[x], ff[x]], x, ground, water);
            [fl[x], fr[x], fb[x], ff[x]] = o;
            s2[x] = g2;
            rim[x] = hi;
            floor[x] = lo;
        };
        // The edge cells after the interior, whose loads left the ends of
        // their rows in the caches: first, the cell-by-cell path waited on
        // each of those misses in turn (at 1024², 2–5 % of a water step
        // with the same in `hydraulic::cells`).
        match interior {
            Some(_) => [0, n - 1].into_iter().for_each(edge),
            None => (0..n).for_each(edge),
        }
    }

    /// Cell `x` of a row, edges included: new outflows from the old `f`,
    /// squared gradient, and highest and lowest neighbour ground.
    #[inline(always)]
    fn cell(&self, f: [f32; 4], x: usize, ground: Around<&[f32]>, water: Around<&[f32]>) -> ([f32; 4], f32, [f32; 2]) {
        let [left, right] = self.grid.sides(x);
        // Neighbours' ground and water towards −x, +x, −z, +z, where inside.
        let mut gn = [None; 4];
        let mut wn = [0.0; 4];
        for (d, k) in [left, right].into_iter().enumerate() {
            if let Some(k) = k {
                gn[d] = Some(ground.here[k]);
                wn[d] = water.here[k];
            }
        }
        for (d, (g, w)) in [(ground.back, water.back), (ground.front, water.front)]
            .into_iter()
            .enumerate()
        {
            if let (Some(g), Some(w)) = (g, w) {
                gn[2 + d] = Some(g[x]);
                wn[2 + d] = w[x];
            }
        }
        let drain = self.grid.boundary == Boundary::Drain;
        let mut hn = [0.0; 4];
        let mut open = [true; 4];
        // Only neighbours inside count: a cell without any has no bounds.
        let (mut rim, mut floor) = (None::<f32>, None::<f32>);
        for d in 0..4 {
            match gn[d] {
                Some(g) => {
                    hn[d] = g + wn[d];
                    rim = Some(rim.map_or(g, |r| r.max(g)));
                    floor = Some(floor.map_or(g, |r| r.min(g)));
                }
                None => open[d] = drain,
            }
        }
        let (g, w) = (ground.here[x], water.here[x]);
        let out = pipes(f, g + w, hn, open, w, self);
        // Beyond an edge the ground counts as level with the cell.
        let at = |d: usize| gn[d].unwrap_or(g);
        (
            out,
            slope2(at(LEFT), at(RIGHT), at(BACK), at(FRONT), self.per_2l),
            [rim.unwrap_or(f32::INFINITY), floor.unwrap_or(f32::NEG_INFINITY)],
        )
    }
}

/// The share of a cell's water that may leave when its pipes would carry
/// more (eq. 2.18): a few dozen roundings short of all of it. Scaled to
/// exactly all, the outflow rounds above the water about as often as below,
/// and the water update, which clamps at zero, makes up the difference: a
/// little water from nowhere in every cell that runs dry. Without
/// evaporation that drift was 2.6·10⁻⁶ of the water after 300 iterations of
/// a walled 48² chunk under rain, and grew with the square of the run.
/// What stays behind dries up in the evaporation pass (`hydraulic::DRY`).
const SHORT: f32 = 1.0 - 1.0 / (1u32 << 18) as f32;

/// Eq. 2.16–2.19 for one cell: new outflows `f` from the old ones, the
/// surface `hc` and the neighbours' surfaces `hn`; pipes that are not `open`
/// (a closed edge) carry nothing. Scaled so no more than the water `w` leaves.
#[inline(always)]
fn pipes(f: [f32; 4], hc: f32, hn: [f32; 4], open: [bool; 4], w: f32, c: &Pipes) -> [f32; 4] {
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
        (w * c.area * SHORT / (sum * c.dt)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    out.map(|v| v * k)
}

/// Squared ground gradient from central differences (the capacity's tilt),
/// with `per_2l` = 1 / 2l: multiplied, not divided, which frees the divider
/// for the arithmetic that needs it and gives the same result where 2l is a
/// power of two (as for the usual l = 1).
#[inline(always)]
fn slope2(gl: f32, gr: f32, gb: f32, gf: f32, per_2l: f32) -> f32 {
    let gx = (gr - gl) * per_2l;
    let gz = (gf - gb) * per_2l;
    gx * gx + gz * gz
}

/// Cells 1..n−1 of a row whose four neighbours all exist: the arithmetic of
/// [`Pipes::cell`] on straight slices, which the compiler vectorizes. Ground
/// and water come as the row (from cell 1), its left and right neighbours
/// (the row from cells 0 and 2), and the rows behind and in front (from
/// cell 1); outflows and bounds are the row's from cell 1.
struct Interior<'a> {
    pipes: &'a Pipes,
    ground: [&'a [f32]; 5],
    water: [&'a [f32]; 5],
    flux: [&'a mut [f32]; 4],
    bounds: [&'a mut [f32]; 3],
}

impl Kernel for Interior<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let [gc, gl, gr, gb, gf] = self.ground;
        let m = gc.len();
        let [gl, gr, gb, gf] = [gl, gr, gb, gf].map(|p| &p[..m]);
        let [wc, wl, wr, wb, wf] = self.water.map(|p| &p[..m]);
        let [fl, fr, fb, ff] = self.flux.map(|p| &mut p[..m]);
        let [s2, rim, floor] = self.bounds.map(|p| &mut p[..m]);
        // The constants as values: read through a reference inside the
        // loop, the ones under a branch are loaded per lane, in gathers.
        let c = *self.pipes;
        for x in 0..m {
            let hn = [gl[x] + wl[x], gr[x] + wr[x], gb[x] + wb[x], gf[x] + wf[x]];
            let o = pipes([fl[x], fr[x], fb[x], ff[x]], gc[x] + wc[x], hn, [true; 4], wc[x], &c);
            fl[x] = o[0];
            fr[x] = o[1];
            fb[x] = o[2];
            ff[x] = o[3];
            s2[x] = slope2(gl[x], gr[x], gb[x], gf[x], c.per_2l);
            rim[x] = gl[x].max(gr[x]).max(gb[x]).max(gf[x]);
            floor[x] = gl[x].min(gr[x]).min(gb[x]).min(gf[x]);
        }
    }
}
