//! Sediment transport, the last sweep of a water step: semi-Lagrangian
//! back-tracing with bilinear weights, shared out so it conserves
//! ([`super::advect`]), or moving sediment along the outflows (eq. 3.7–3.8,
//! accumulated; the thesis's and the mass-conserving one, see
//! [`Transport`]).
//!
//! Each row is written from the sediment, velocity, outflows and ratios the
//! water sweep left, which nothing changes meanwhile, so rows run in parallel
//! in any order with the same results.

use rayon::prelude::*;

use super::advect::{Advect, rest};
use super::columns::{BACK, FRONT, TerrainChunk};
use super::grid::{Grid, OPPOSITE, ROWS, neighbour_row, row_at};
use super::params::{TerrainParams, Transport};
use super::stats::TerrainBalance;
use crate::registers::Registers;

/// What the water sweep already transported, semi-Lagrangian: the rows its
/// blocks of `block_rows` rows moved trailing into `next`, with their drains
/// in `drained`, one per row.
pub(crate) struct Trailed<'a> {
    pub(crate) block_rows: usize,
    pub(crate) drained: &'a mut [f64],
}

/// Sweep 3, sediment transport: semi-Lagrangian ([`super::advect`], the
/// rows the water sweep did not move trailing) or
/// flux-proportional (eq. 3.7–3.8, accumulated). What leaves cell k towards
/// `dir` is flux[dir][k]·ratio[k]; every cell reads the same ratio for itself
/// and its neighbours, so what leaves one cell arrives bit-identically at the
/// other. Either way the sediment carried over a draining edge is booked.
pub(crate) fn transport(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    grid: Grid,
    [ratio, next]: [&mut Vec<f32>; 2],
    trailed: Trailed<'_>,
    books: &mut TerrainBalance,
    registers: Registers,
) {
    let h = &p.hydraulic;
    books.sediment_drained += match h.transport {
        Transport::SemiLagrangian => {
            let [vx, vz] = &chunk.velocity;
            let plane = Advect {
                sed: &chunk.sediment,
                velocity: [vx, vz],
                base: 0,
                grid,
                per_cell: h.time_step / p.cell_length,
                registers,
            };
            rest(&plane, trailed.block_rows, next, trailed.drained)
        }
        Transport::ThesisFlux | Transport::Flux => along_outflows(chunk, grid, ratio, next),
    };
    std::mem::swap(&mut chunk.sediment, next);
}

/// The flux transports of `chunk`'s sediment into `next`, by the sediment
/// per unit of outflow in `ratio`; returns what left over the edges.
fn along_outflows(chunk: &TerrainChunk, grid: Grid, ratio: &[f32], next: &mut [f32]) -> f64 {
    let n = grid.n;
    let (flux, sed) = (&chunk.flux, &chunk.sediment);
    // One cell, edges included.
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
    next.par_chunks_mut(ROWS * n)
        .enumerate()
        .map(|(b, next)| {
            let mut lost = 0.0f64;
            for (r, next) in next.chunks_exact_mut(n).enumerate() {
                let z = b * ROWS + r;
                match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
                    (Some(zb), Some(zf)) if n >= 3 => {
                        next[0] = moved(0, z, &mut lost);
                        next[n - 1] = moved(n - 1, z, &mut lost);
                        flux_interior(flux, sed, ratio, n, [zb, z, zf], &mut next[1..n - 1]);
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
        .sum()
}

/// The flux transport on cells 1..n−1 of row `z` (all four neighbours exist,
/// the back row `zb` and the front row `zf`), in the same order of
/// operations as the edge cells.
fn flux_interior(
    flux: &[Vec<f32>; 4],
    sed: &[f32],
    ratio: &[f32],
    n: usize,
    [zb, z, zf]: [usize; 3],
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
