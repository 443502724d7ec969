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
use super::grid::{Grid, OPPOSITE, ROWS, neighbour_row, row_at, shifted};
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
        .map_init(Vec::new, |far, (b, next)| {
            let mut lost = 0.0f64;
            far.resize(n, 0);
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
                        far,
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
    far: &'a mut [u8],
}

impl Kernel for AdvectRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        advect_row(
            self.sed,
            self.grid,
            self.z,
            self.velocity,
            self.steps,
            self.next,
            self.far,
        );
    }
}

/// [`advect`] for row `z`, with the row's velocities `[vx, vz]`, time step
/// and cell length, using `far` (a byte per cell) for scratch. Standing water
/// keeps its own value exactly: only the cells whose water moves are traced
/// back and sampled. Off the edges, a trace that ends
/// less than a cell away, as nearly all do, samples the 3 × 3 cells around
/// its start, in lanes ([`near_row`]); the other moving cells, found 64 at a
/// time by a vectorized test, are traced one by one.
#[inline(always)]
fn advect_row(
    sed: &[f32],
    grid: Grid,
    z: usize,
    [vx, vz]: [&[f32]; 2],
    [dt, l]: [f32; 2],
    next: &mut [f32],
    far: &mut [u8],
) {
    let n = grid.n;
    let (last, size) = ((n - 1) as f32, n as f32);
    let wrap = grid.boundary == Boundary::Wrap;
    let cells = |v: f32| v * dt / l;
    let row = |r: usize| &sed[r * n..][..n];
    let (vx, vz, far) = (&vx[..n], &vz[..n], &mut far[..n]);
    let moving = |x: usize| u8::from((vx[x] != 0.0) | (vz[x] != 0.0));
    if n >= 3 && z >= 1 && z + 1 < n {
        near_row([row(z - 1), row(z), row(z + 1)], z, [vx, vz], [dt, l], next, far);
        for x in [0, n - 1] {
            next[x] = row(z)[x];
            far[x] = moving(x);
        }
    } else {
        next[..n].copy_from_slice(row(z));
        for (x, far) in far.iter_mut().enumerate() {
            *far = moving(x);
        }
    }
    for (c, far) in far.chunks(64).enumerate() {
        let mut bits = 0u64;
        for (i, &f) in far.iter().enumerate() {
            bits |= u64::from(f != 0) << i;
        }
        while bits != 0 {
            let x = c * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
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

/// The moving cells 1..n−1 of interior row `z` whose trace ends less than a
/// cell away, sampled in lanes from `rows` (the sediment of rows z−1, z and
/// z+1) into `next`, with the same operations as [`bilinear`] on the two of
/// three columns and rows the trace falls between; within the plane no
/// boundary mode changes a sample. The other cells keep their sediment, and
/// the other moving ones are marked in `far`.
/// (A trace just short of a cell in f32 may round to a whole cell: that one
/// is far.)
#[inline(always)]
fn near_row(rows: [&[f32]; 3], z: usize, [vx, vz]: [&[f32]; 2], [dt, l]: [f32; 2], next: &mut [f32], far: &mut [u8]) {
    let n = rows[1].len();
    let m = n - 2;
    // Columns x, x−1 and x+1 of each row, for x = 1..n−1.
    let [back, here, front] = rows.map(|r| shifted(r, m));
    let (vx, vz) = (&vx[1..][..m], &vz[1..][..m]);
    let (next, far) = (&mut next[1..][..m], &mut far[1..][..m]);
    let zf = z as f32;
    for i in 0..m {
        let (u, v) = (vx[i], vz[i]);
        let (dx, dz) = (u * dt / l, v * dt / l);
        let xf = (i as i32 + 1) as f32;
        let (px, pz) = (xf - dx, zf - dz);
        // Where the trace is near, px lies in [x − 1, x + 1), so its floor
        // is x − 1 or x (and so for pz): compared, not converted, which
        // vectorizes in every build.
        let (left, up) = (px < xf, pz < zf);
        let (x0, z0) = (if left { xf - 1.0 } else { xf }, if up { zf - 1.0 } else { zf });
        let (tx, tz) = (px - x0, pz - z0);
        let sample = |r: [&[f32]; 3]| {
            let (c, w, e) = (r[0][i], r[1][i], r[2][i]);
            (if left { w } else { c }, if left { c } else { e })
        };
        let (b, h, f) = (sample(back), sample(here), sample(front));
        let ((a0, a1), (b0, b1)) = if up { (b, h) } else { (h, f) };
        let a = a0 * (1.0 - tx) + a1 * tx;
        let b = b0 * (1.0 - tx) + b1 * tx;
        let traced = a * (1.0 - tz) + b * tz;
        let moving = (u != 0.0) | (v != 0.0);
        let near = (dx.abs() < 1.0) & (dz.abs() < 1.0) & (px < xf + 1.0) & (pz < zf + 1.0);
        next[i] = if moving & near { traced } else { here[0][i] };
        far[i] = u8::from(moving & !near);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Rows of an `n`² plane traced by [`advect_row`] and cell by cell by
    /// [`advect`], bit for bit alike.
    fn both_ways(n: usize, boundary: Boundary, [dt, l]: [f32; 2], sed: &[f32], vx: &[f32], vz: &[f32]) {
        let grid = Grid { n, boundary };
        let (mut next, mut far) = (vec![0.0; n], vec![0; n]);
        let builds = Registers::all_available();
        for (z, &registers) in (0..n).flat_map(|z| builds.iter().map(move |r| (z, r))) {
            let row = z * n..(z + 1) * n;
            registers.run(AdvectRow {
                sed,
                grid,
                z,
                velocity: [&vx[row.clone()], &vz[row.clone()]],
                steps: [dt, l],
                next: &mut next,
                far: &mut far,
            });
            for (x, got) in next.iter().enumerate() {
                let i = z * n + x;
                let want = if vx[i] != 0.0 || vz[i] != 0.0 {
                    advect(sed, grid, x, z, vx[i] * dt / l, vz[i] * dt / l)
                } else {
                    sed[i]
                };
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "cell ({x}, {z}) of {n}², {boundary:?}, {registers:?}"
                );
            }
        }
    }

    fn velocity() -> impl Strategy<Value = f32> {
        // Just short of a cell, a trace may round to a whole cell.
        let short = 1.0 - f32::EPSILON;
        prop_oneof![
            Just(0.0f32),
            Just(1.0),
            Just(-short),
            Just(short),
            Just(f32::NAN),
            -1.5f32..1.5,
            -20.0f32..20.0
        ]
    }

    proptest! {
        /// Near traces in lanes, far ones and edges one by one: the same
        /// samples as tracing every cell by itself.
        #[test]
        fn lanes_trace_as_cells(
            n in 1usize..70,
            wrap in any::<bool>(),
            steps in prop_oneof![Just([1.0f32, 1.0]), Just([0.75, 1.25])],
            seed in prop::collection::vec((0.0f32..4.0, velocity(), velocity()), 70 * 70),
        ) {
            let cells = &seed[..n * n];
            let sed: Vec<f32> = cells.iter().map(|c| c.0).collect();
            let vx: Vec<f32> = cells.iter().map(|c| c.1).collect();
            let vz: Vec<f32> = cells.iter().map(|c| c.2).collect();
            let boundary = if wrap { Boundary::Wrap } else { Boundary::Drain };
            both_ways(n, boundary, steps, &sed, &vx, &vz);
        }
    }
}
