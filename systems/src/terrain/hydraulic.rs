//! Flowing-water erosion with virtual pipes (Mei, Decaudin & Hu 2007; thesis
//! §2.3.1 and §3.1.3), and standing-water erosion (§2.3.2, §3.1.4), which
//! shares the fluxes.
//!
//! One iteration: sources (rain, springs) → outflow fluxes → water and
//! velocity → dissolve/deposit and standing water → sediment transport →
//! evaporation. Every pass runs over blocks of [`ROWS`] rows in parallel and
//! writes only its own block; passes that read neighbours read planes that
//! no pass writes at the same time (the fluxes, a copy of the water, a copy
//! of the ground, the old sediment), so results do not depend on the number
//! of threads. Sums for the books are taken per block and added in block order.

use rand::RngExt;
use rayon::prelude::*;
use sylva_runtime::rng::{StreamKey, hash_words, stream};

use super::columns::{BACK, FRONT, LEFT, Layers, MIN_THICKNESS, RIGHT, TerrainChunk};
use super::materials::{MATERIAL_COUNT, Material};
use super::params::{Boundary, Rain, TerrainParams, Transport};
use super::standing_water::{grind, is_standing};
use super::stats::TerrainBalance;

/// Rows per parallel task: fixed, so block sums never depend on thread count.
pub(crate) const ROWS: usize = 16;

/// Planes reused between steps.
#[derive(Default)]
pub(crate) struct Scratch {
    ground: Vec<f32>,
    /// Ground plus water for the flux pass, then sediment per outflux for transport.
    surface: Vec<f32>,
    w_prev: Vec<f32>,
    next: Vec<f32>,
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

/// (local index, chunk index, x, z) of every cell of block `b`, which holds
/// `len` cells (whole rows) of a chunk `n` cells wide. Walking rows avoids a
/// division per cell.
#[inline]
pub(crate) fn block_cells(b: usize, len: usize, n: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let z0 = b * ROWS;
    (0..len / n).flat_map(move |r| (0..n).map(move |x| (r * n + x, (z0 + r) * n + x, x, z0 + r)))
}

struct Luts {
    ks: [f32; MATERIAL_COUNT],
    deposit: [f32; MATERIAL_COUNT],
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
pub(crate) fn step(
    chunk: &mut TerrainChunk,
    p: &TerrainParams,
    seed: u64,
    iteration: u64,
    s: &mut Scratch,
    books: &mut TerrainBalance,
) {
    let h = &p.hydraulic;
    let n = chunk.size() as usize;
    let block = ROWS * n;
    let grid = Grid {
        n,
        boundary: h.boundary,
    };
    let (dt, l) = (h.time_step, p.cell_length);
    let area = l * l;
    books.water_added += sources(chunk, p, seed, iteration);

    chunk.ground_heights(&mut s.ground);
    s.surface.clear();
    s.surface.extend(s.ground.iter().zip(&chunk.water).map(|(g, w)| g + w));
    s.w_prev.clear();
    s.w_prev.extend_from_slice(&chunk.water);

    // Outflow fluxes (eq. 2.16–2.19 / 3.1–3.2): each cell writes its own four.
    let k_pipe = dt * h.pipe_area * h.gravity / l;
    {
        let (surface, water) = (&s.surface, &chunk.water);
        let [fl, fr, fb, ff] = &mut chunk.flux;
        (
            fl.par_chunks_mut(block),
            fr.par_chunks_mut(block),
            fb.par_chunks_mut(block),
            ff.par_chunks_mut(block),
        )
            .into_par_iter()
            .enumerate()
            .for_each(|(b, (fl, fr, fb, ff))| {
                let mut planes = [fl, fr, fb, ff];
                let len = planes[0].len();
                for (j, i, x, z) in block_cells(b, len, n) {
                    let hc = surface[i];
                    let mut sum = 0.0;
                    for (plane, nb) in planes.iter_mut().zip(grid.around(x, z)) {
                        let hn = match nb {
                            Some(k) => surface[k],
                            None if h.boundary == Boundary::Drain => 0.0,
                            None => {
                                plane[j] = 0.0;
                                continue;
                            }
                        };
                        let f = (plane[j] + k_pipe * (hc - hn)).max(0.0);
                        plane[j] = f;
                        sum += f;
                    }
                    if sum > 0.0 {
                        let k = (water[i] * area / (sum * dt)).clamp(0.0, 1.0);
                        if k < 1.0 {
                            planes.iter_mut().for_each(|p| p[j] *= k);
                        }
                    }
                }
            });
    }

    // Water (eq. 2.20–2.23) and velocity (eq. 2.24–2.26, +z-consistent unless
    // the thesis sign is asked for).
    let z_sign = if h.thesis_velocity_sign { -1.0 } else { 1.0 };
    let drained: f64 = {
        let (flux, w_prev) = (&chunk.flux, &s.w_prev);
        let [vx, vz] = &mut chunk.velocity;
        (
            chunk.water.par_chunks_mut(block),
            vx.par_chunks_mut(block),
            vz.par_chunks_mut(block),
        )
            .into_par_iter()
            .enumerate()
            .map(|(b, (water, vx, vz))| {
                let mut lost = 0.0f64;
                for (j, i, x, z) in block_cells(b, water.len(), n) {
                    let around = grid.around(x, z);
                    let inflow_from = |d: usize| around[d].map_or(0.0, |k| flux[OPPOSITE[d]][k]);
                    let inflow = [
                        inflow_from(LEFT),
                        inflow_from(RIGHT),
                        inflow_from(BACK),
                        inflow_from(FRONT),
                    ];
                    let out = [flux[LEFT][i], flux[RIGHT][i], flux[BACK][i], flux[FRONT][i]];
                    let f_in = inflow[LEFT] + inflow[RIGHT] + inflow[BACK] + inflow[FRONT];
                    let f_out = out[0] + out[1] + out[2] + out[3];
                    if h.boundary == Boundary::Drain {
                        for (&f, nb) in out.iter().zip(around) {
                            if nb.is_none() {
                                lost += f64::from(f * dt / area);
                            }
                        }
                    }
                    let w_new = (w_prev[i] + dt * (f_in - f_out) / area).max(0.0);
                    water[j] = w_new;
                    let mean = 0.5 * (w_prev[i] + w_new);
                    if mean < h.min_depth {
                        vx[j] = 0.0;
                        vz[j] = 0.0;
                    } else {
                        let dwx = 0.5 * (inflow[LEFT] - out[LEFT] + out[RIGHT] - inflow[RIGHT]);
                        let dwz = 0.5 * (inflow[BACK] - out[BACK] + out[FRONT] - inflow[FRONT]);
                        vx[j] = dwx / (l * mean);
                        vz[j] = z_sign * dwz / (l * mean);
                    }
                }
                lost
            })
            .collect::<Vec<_>>()
            .into_iter()
            .sum()
    };
    books.water_drained += drained;

    erode(chunk, p, grid, s, books);
    transport(chunk, p, grid, s, books);

    // Evaporation (eq. 3.6).
    let kv = h.evaporation * dt;
    let evaporated: f64 = chunk
        .water
        .par_chunks_mut(block)
        .map(|w| {
            let mut e = 0.0f64;
            for v in w {
                e += f64::from(*v * kv);
                *v -= *v * kv;
            }
            e
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum();
    books.water_evaporated += evaporated;
}

/// Sine of the ground tilt from central differences; beyond an edge the
/// ground counts as level with the cell.
#[inline]
fn sin_tilt(ground: &[f32], around: [Option<usize>; 4], c: usize, l: f32) -> f32 {
    let g = |d: usize| around[d].map_or(ground[c], |k| ground[k]);
    let gx = (g(RIGHT) - g(LEFT)) / (2.0 * l);
    let gz = (g(FRONT) - g(BACK)) / (2.0 * l);
    let s2 = gx * gx + gz * gz;
    (s2 / (1.0 + s2)).sqrt()
}

/// Dissolving (eq. 2.28) eats through the top layer into the ones below: the
/// fraction of the capacity excess a layer could not supply is applied to the
/// next layer at that layer's own K_s. Returns the amount dissolved.
fn dissolve(layers: &mut Layers<'_>, i: usize, excess: f32, ks: &[f32; MATERIAL_COUNT]) -> f32 {
    let mut rem = 1.0f32;
    let mut taken = 0.0;
    while rem > 0.0 {
        let Some((m, t)) = layers.top(i) else { break };
        let want = ks[usize::from(m)] * excess * rem;
        if want <= 0.0 {
            break;
        }
        let k = layers.len(i) - 1;
        if t - want > MIN_THICKNESS {
            layers.thickness[k][i] = t - want;
            layers.age[k][i] = 0;
            taken += want;
            break;
        }
        taken += t;
        rem *= 1.0 - t / want;
        layers.count[i] -= 1;
    }
    taken
}

/// Dissolve and deposit (eq. 2.27–2.29), then standing water (eq. 2.33–2.34).
fn erode(chunk: &mut TerrainChunk, p: &TerrainParams, grid: Grid, s: &Scratch, books: &mut TerrainBalance) {
    let h = &p.hydraulic;
    let sw = &p.standing_water;
    let n = grid.n;
    let block = ROWS * n;
    let l = p.cell_length;
    let luts = Luts {
        ks: p.materials.lut(|m| m.ks),
        deposit: p.materials.lut(|m| if h.thesis_deposit { m.ks } else { m.deposit }),
    };
    let regolith = Material::Regolith as u8;
    let ground = &s.ground;
    let parts = chunk.parts(block);
    let flux = parts.flux;
    let [vx, vz] = parts.velocity;
    let absorbed: f64 = parts
        .layers
        .into_par_iter()
        .zip(parts.sediment.par_chunks_mut(block))
        .zip(parts.water.par_chunks_mut(block))
        .enumerate()
        .map(|(b, ((mut layers, sed), water))| {
            let mut absorbed = 0.0f64;
            for (j, i, x, z) in block_cells(b, sed.len(), n) {
                let around = grid.around(x, z);
                let speed = (vx[i] * vx[i] + vz[i] * vz[i]).sqrt();
                let cap = if speed > 0.0 {
                    h.capacity * sin_tilt(ground, around, i, l).max(h.min_tilt) * speed
                } else {
                    0.0
                };
                let susp = sed[j];
                if cap > susp {
                    sed[j] += dissolve(&mut layers, j, cap - susp, &luts.ks);
                } else if susp > cap {
                    let m = layers.top(j).map_or(regolith, |t| t.0);
                    let amount = luts.deposit[usize::from(m)] * (susp - cap);
                    if amount > 0.0 {
                        layers.push(j, regolith, amount);
                        sed[j] -= amount;
                    }
                }
                if sw.enabled && water[j] > 0.0 && water[j] >= sw.min_depth {
                    let f_out = flux[0][i] + flux[1][i] + flux[2][i] + flux[3][i];
                    let f_in: f32 = (0..4).filter_map(|d| around[d].map(|k| flux[OPPOSITE[d]][k])).sum();
                    if is_standing(sw, f_in, f_out) {
                        let converted = grind(&mut layers, j, water[j], &luts.ks);
                        water[j] -= converted;
                        absorbed += f64::from(converted);
                    }
                }
            }
            absorbed
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum();
    books.water_absorbed += absorbed;
}

/// Sediment transport: semi-Lagrangian (eq. 2.30–2.31) or flux-proportional
/// (eq. 3.7–3.8, accumulated).
fn transport(chunk: &mut TerrainChunk, p: &TerrainParams, grid: Grid, s: &mut Scratch, books: &mut TerrainBalance) {
    let h = &p.hydraulic;
    let n = grid.n;
    let block = ROWS * n;
    let (dt, l) = (h.time_step, p.cell_length);
    let area = l * l;
    s.next.clear();
    s.next.resize(n * n, 0.0);
    let flux = &chunk.flux;
    let [vx, vz] = &chunk.velocity;
    // Sediment per unit of outflux: what leaves cell k towards `dir` is
    // flux[dir][k]·ratio[k]. Every cell reads the same ratio for itself and its
    // neighbours, so what leaves one cell arrives bit-identically at the other.
    // The flux sum reaching the f32 noise floor counts as no outflow.
    if h.transport != Transport::SemiLagrangian {
        let (sed, w_prev) = (&chunk.sediment, &s.w_prev);
        let ratio = &mut s.surface;
        ratio.par_chunks_mut(block).enumerate().for_each(|(b, r)| {
            for (j, r) in r.iter_mut().enumerate() {
                let k = b * block + j;
                let f_out = flux[0][k] + flux[1][k] + flux[2][k] + flux[3][k];
                *r = match h.transport {
                    Transport::ThesisFlux if f_out > 1e-20 => sed[k] / f_out,
                    Transport::Flux if w_prev[k] * area > 1e-20 => dt * sed[k] / (f_out * dt).max(w_prev[k] * area),
                    _ => 0.0,
                };
            }
        });
    }
    let (sed, ratio) = (&chunk.sediment, &s.surface);
    let drained: f64 = s
        .next
        .par_chunks_mut(block)
        .enumerate()
        .map(|(b, next)| {
            let mut lost = 0.0f64;
            for (j, i, x, z) in block_cells(b, next.len(), n) {
                next[j] = match h.transport {
                    Transport::SemiLagrangian => advect(sed, grid, x, z, vx[i] * dt / l, vz[i] * dt / l),
                    Transport::ThesisFlux | Transport::Flux => {
                        let mut v = sed[i];
                        for (dir, nb) in grid.around(x, z).into_iter().enumerate() {
                            let o = flux[dir][i] * ratio[i];
                            v -= o;
                            match nb {
                                Some(k) => v += flux[OPPOSITE[dir]][k] * ratio[k],
                                None => lost += f64::from(o),
                            }
                        }
                        v
                    }
                };
            }
            lost
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum();
    books.sediment_drained += drained;
    std::mem::swap(&mut chunk.sediment, &mut s.next);
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
    let (x0, z0) = ((px.floor() as usize).min(n - 1), (pz.floor() as usize).min(n - 1));
    let (tx, tz) = (px - x0 as f32, pz - z0 as f32);
    let (x1, z1) = if grid.boundary == Boundary::Wrap {
        ((x0 + 1) % n, (z0 + 1) % n)
    } else {
        ((x0 + 1).min(n - 1), (z0 + 1).min(n - 1))
    };
    let at = |x: usize, z: usize| sed[z * n + x];
    let a = at(x0, z0) * (1.0 - tx) + at(x1, z0) * tx;
    let b = at(x0, z1) * (1.0 - tx) + at(x1, z1) * tx;
    a * (1.0 - tz) + b * tz
}
