//! Sediment transport, the last sweep of a water step: semi-Lagrangian
//! back-tracing with bilinear sampling (eq. 2.30–2.31), or moving sediment
//! along the outflows (eq. 3.7–3.8, accumulated; the thesis's and the
//! mass-conserving one, see [`Transport`]).
//!
//! Each row is written from the sediment, velocity, outflows and ratios the
//! water sweep left, which nothing changes meanwhile, so rows run in parallel
//! in any order with the same results.

use rayon::prelude::*;

use super::columns::{BACK, FRONT, TerrainChunk};
use super::hydraulic::{Grid, OPPOSITE, ROWS, neighbour_row, row_at};
use super::params::{Boundary, TerrainParams, Transport};
use super::stats::TerrainBalance;
use crate::registers::{Kernel, Registers};

/// Sweep 3, sediment transport: semi-Lagrangian (eq. 2.30–2.31) or
/// flux-proportional (eq. 3.7–3.8, accumulated). What leaves cell k towards
/// `dir` is flux[dir][k]·ratio[k]; every cell reads the same ratio for itself
/// and its neighbours, so what leaves one cell arrives bit-identically at the
/// other.
pub(crate) fn transport(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    [ratio, next]: [&mut Vec<f32>; 2],
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let h = &p.hydraulic;
    let n = grid.n;
    let block = ROWS * n;
    let (dt, l) = (h.time_step, p.cell_length);
    let flux = &chunk.flux;
    let [vx, vz] = &chunk.velocity;
    let (sed, ratio) = (&chunk.sediment, &*ratio);
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
    let drained: f64 = next
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
    std::mem::swap(&mut chunk.sediment, next);
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
/// and cell length. Standing water keeps its own value exactly: the row is
/// copied, and only the cells whose water moves, found 64 at a time by a
/// vectorized test, are traced back and sampled.
#[inline(always)]
fn advect_row(sed: &[f32], grid: Grid, z: usize, [vx, vz]: [&[f32]; 2], [dt, l]: [f32; 2], next: &mut [f32]) {
    let n = grid.n;
    let (last, size) = ((n - 1) as f32, n as f32);
    let wrap = grid.boundary == Boundary::Wrap;
    let cells = |v: f32| v * dt / l;
    next[..n].copy_from_slice(&sed[z * n..][..n]);
    for (c, (us, vs)) in vx[..n].chunks(64).zip(vz[..n].chunks(64)).enumerate() {
        let mut moving = 0u64;
        for (i, (&u, &v)) in us.iter().zip(vs).enumerate() {
            moving |= u64::from((u != 0.0) | (v != 0.0)) << i;
        }
        while moving != 0 {
            let x = c * 64 + moving.trailing_zeros() as usize;
            moving &= moving - 1;
            let (u, v) = (vx[x], vz[x]);
            let (px, pz) = (x as f32 - cells(u), z as f32 - cells(v));
            next[x] = if wrap {
                bilinear(sed, n, px.rem_euclid(size), pz.rem_euclid(size), true)
            } else if px >= 0.0 && px <= last && pz >= 0.0 && pz <= last {
                bilinear(sed, n, px, pz, false)
            } else {
                advect(sed, grid, x, z, cells(u), cells(v))
            };
        }
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
    // px, pz ≥ 0 here, so truncation is the floor (without a libm call);
    // in 32 bits, as vector lanes convert.
    let (x0, z0) = ((px as u32 as usize).min(n - 1), (pz as u32 as usize).min(n - 1));
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
