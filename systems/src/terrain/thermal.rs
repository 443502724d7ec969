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
//! this is our reading, erratum 12 and §3.1.5 notes): when the top layer is
//! consolidated and would not move by its own talus angle, and the layer
//! directly beneath it is loose (regolith or sand), the pressures
//! p = s·ρ·g (eq. 3.12, g cancels) decide:
//! - p_loose > p_top: the loose bed carries the top away; the column slides
//!   as a whole under the loose material's talus angle (case 3).
//! - otherwise the top layer pins the bed, but loose material exposed on a
//!   flank (the neighbour's ground below the top of the loose layer by more
//!   than its talus threshold) trickles out from under it (case 2), and the
//!   top layer sinks.
//!
//! A consolidated layer beneath the top never slides (case 1). Edges are
//! walls unless the boundary wraps. Two passes make it order-free and
//! mass-conserving: every cell first computes what it sends each neighbour
//! from the old ground, then every cell removes what it sends and adds what
//! it receives.
//!
//! Both passes skip work where that is exact: a cell no lower neighbour of
//! which lies below it by more than the smallest talus threshold of any
//! material sends nothing (every rule above needs such a drop), and a cell
//! that neither sends nor receives keeps its layers.

use rayon::prelude::*;

use super::columns::{BACK, FRONT, Layers, MIN_THICKNESS, TerrainChunk};
use super::hydraulic::{Grid, ROWS, neighbour_row};
use super::materials::{MATERIAL_COUNT, Material};
use super::params::{Boundary, TerrainParams};

/// Planes reused between passes.
#[derive(Default)]
pub(crate) struct ThermalScratch {
    out: [Vec<f32>; 4],
    /// What each cell sends: its material byte, plus [`FROM_BED`].
    src: Vec<u8>,
}

/// Marks material taken from the loose bed under the top layer.
const FROM_BED: u8 = 0x80;

const OPPOSITE: [usize; 4] = [1, 0, 3, 2];

/// One thermal pass over `chunk`.
pub(crate) fn step(chunk: &mut TerrainChunk, p: &TerrainParams, s: &mut ThermalScratch) {
    let n = chunk.size() as usize;
    let cells = n * n;
    let block = ROWS * n;
    let boundary = if p.hydraulic.boundary == Boundary::Wrap {
        Boundary::Wrap
    } else {
        Boundary::Closed
    };
    let grid = Grid { n, boundary };
    let talus = p.materials.talus_thresholds(p.cell_length);
    let density = p.materials.lut(|m| m.density);
    let rate = p.thermal.rate;
    let sliding = p.thermal.layer_sliding;
    let min_talus = talus.iter().copied().fold(f32::INFINITY, f32::min);
    // Every cell of both planes is written below, so only the length matters.
    for o in &mut s.out {
        o.resize(cells, 0.0);
    }
    s.src.resize(cells, 0);

    {
        let chunk = &*chunk;
        let ground = &chunk.ground;
        let [o0, o1, o2, o3] = &mut s.out;
        (
            o0.par_chunks_mut(block),
            o1.par_chunks_mut(block),
            o2.par_chunks_mut(block),
            o3.par_chunks_mut(block),
        )
            .into_par_iter()
            .zip(s.src.par_chunks_mut(block))
            .enumerate()
            .for_each(|(b, ((o0, o1, o2, o3), src))| {
                let mut outs = [o0, o1, o2, o3];
                for r in 0..src.len() / n {
                    let z = b * ROWS + r;
                    let row = r * n..(r + 1) * n;
                    // `src` first holds the steep flags of the row, then what each cell sends.
                    let flags = &mut src[row.clone()];
                    steep_row(ground, grid, z, min_talus, flags);
                    for (x, j) in row.enumerate() {
                        let plan = if src[j] != 0 {
                            plan(chunk, grid, x, z, &talus, &density, rate, sliding)
                        } else {
                            None
                        };
                        let (amounts, what) = plan.unwrap_or(([0.0; 4], 0));
                        for (o, a) in outs.iter_mut().zip(amounts) {
                            o[j] = a;
                        }
                        src[j] = what;
                    }
                }
            });
    }

    let out = &s.out;
    let src = &s.src;
    let to_regolith = p.thermal.debris_to_regolith;
    let debris = |what: u8| {
        if to_regolith {
            Material::Regolith as u8
        } else {
            what & !FROM_BED
        }
    };
    let parts = chunk.parts(block);
    parts.layers.into_par_iter().enumerate().for_each(|(b, mut layers)| {
        let mut moving = vec![0u8; n];
        for r in 0..layers.count.len() / n {
            let z = b * ROWS + r;
            moves_row(out, grid, z, &mut moving);
            for (x, _) in moving.iter().enumerate().filter(|(_, m)| **m != 0) {
                let (j, i) = (r * n + x, z * n + x);
                let around = grid.around(x, z);
                let send = out[0][i] + out[1][i] + out[2][i] + out[3][i];
                // With debris as regolith, everything received arrives as one amount.
                let received: f32 = (0..4).filter_map(|d| around[d].map(|k| out[OPPOSITE[d]][k])).sum();
                if to_regolith && on_top(&mut layers, j, send, src[i], received) {
                    continue;
                }
                if send > 0.0 {
                    let removed = if src[i] & FROM_BED != 0 {
                        let k = layers.len(j) - 2;
                        layers.take_from_slot(j, k, send)
                    } else {
                        layers.take(j, send)
                    };
                    // A sliver under MIN_THICKNESS that went along stays here.
                    layers.push(j, debris(src[i]), removed - send);
                }
                if to_regolith {
                    layers.push(j, debris(0), received);
                } else {
                    for (d, nb) in around.into_iter().enumerate() {
                        if let Some(k) = nb {
                            layers.push(j, debris(src[k]), out[OPPOSITE[d]][k]);
                        }
                    }
                }
            }
        }
    });
}

/// The common case of a cell whose changes stay in its top layer: it sends
/// `send` from the top without emptying it and what it receives lands on
/// regolith. Applies the same arithmetic as `take` followed by `push`, with
/// one ground refresh; returns false (changing nothing) otherwise.
fn on_top(layers: &mut Layers<'_>, j: usize, send: f32, what: u8, received: f32) -> bool {
    let Some(k) = layers.len(j).checked_sub(1) else {
        return false;
    };
    let mut t = layers.thickness[k][j];
    if send > 0.0 {
        if what & FROM_BED != 0 || t - send <= MIN_THICKNESS {
            return false;
        }
        t -= send;
    }
    if received > 0.0 {
        if layers.material[k][j] != Material::Regolith as u8 {
            return false;
        }
        t += received;
    }
    if send > 0.0 || received > 0.0 {
        layers.thickness[k][j] = t;
        layers.age[k][j] = 0;
        layers.refresh(j);
    }
    true
}

/// Flags (1) the cells of row `z` that have an N4 neighbour lower by more
/// than `min_talus`: only they can send anything. Interior cells compare
/// against the lowest neighbour, which is the same test (the difference
/// falls as the neighbour rises), on straight slices that vectorize.
fn steep_row(ground: &[f32], grid: Grid, z: usize, min_talus: f32, flags: &mut [u8]) {
    let n = grid.n;
    let general = |x: usize| {
        let g = ground[z * n + x];
        let any = grid
            .around(x, z)
            .into_iter()
            .any(|nb| nb.is_some_and(|k| g - ground[k] > min_talus));
        u8::from(any)
    };
    match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
        (Some(zb), Some(zf)) if n >= 3 => {
            let m = n - 2;
            let at = |r: usize, dx: usize| &ground[r * n + dx..][..m];
            let (c, l, r, b, f) = (at(z, 1), at(z, 0), at(z, 2), at(zb, 1), at(zf, 1));
            for (x, flag) in flags[1..][..m].iter_mut().enumerate() {
                let low = l[x].min(r[x]).min(b[x]).min(f[x]);
                *flag = u8::from(c[x] - low > min_talus);
            }
            flags[0] = general(0);
            flags[n - 1] = general(n - 1);
        }
        _ => {
            for (x, flag) in flags.iter_mut().enumerate() {
                *flag = general(x);
            }
        }
    }
}

/// Flags (1) the cells of row `z` that send anything or receive anything
/// from a neighbour: only their layers change.
fn moves_row(out: &[Vec<f32>; 4], grid: Grid, z: usize, flags: &mut [u8]) {
    let n = grid.n;
    let general = |x: usize| {
        let i = z * n + x;
        let around = grid.around(x, z);
        u8::from((0..4).any(|d| out[d][i] > 0.0 || around[d].is_some_and(|k| out[OPPOSITE[d]][k] > 0.0)))
    };
    match (neighbour_row(grid, z, BACK), neighbour_row(grid, z, FRONT)) {
        (Some(zb), Some(zf)) if n >= 3 => {
            let m = n - 2;
            let at = |d: usize, r: usize, dx: usize| &out[d][r * n + dx..][..m];
            let own = [at(0, z, 1), at(1, z, 1), at(2, z, 1), at(3, z, 1)];
            // What the left, right, back and front neighbours send this way.
            let inflow = [at(1, z, 0), at(0, z, 2), at(3, zb, 1), at(2, zf, 1)];
            for (x, flag) in flags[1..][..m].iter_mut().enumerate() {
                let sends = (own[0][x] > 0.0) | (own[1][x] > 0.0) | (own[2][x] > 0.0) | (own[3][x] > 0.0);
                let gets = (inflow[0][x] > 0.0) | (inflow[1][x] > 0.0) | (inflow[2][x] > 0.0) | (inflow[3][x] > 0.0);
                *flag = u8::from(sends | gets);
            }
            flags[0] = general(0);
            flags[n - 1] = general(n - 1);
        }
        _ => {
            for (x, flag) in flags.iter_mut().enumerate() {
                *flag = general(x);
            }
        }
    }
}

/// What cell `(x, z)` sends to each neighbour, and what it is: the material
/// byte of the top layer, or of the loose bed under it marked [`FROM_BED`].
#[allow(clippy::too_many_arguments)]
fn plan(
    chunk: &TerrainChunk,
    grid: Grid,
    x: usize,
    z: usize,
    talus: &[f32; MATERIAL_COUNT],
    density: &[f32; MATERIAL_COUNT],
    rate: f32,
    sliding: bool,
) -> Option<([f32; 4], u8)> {
    let i = z * grid.n + x;
    let cells = chunk.cells();
    let c = usize::from(chunk.count[i]);
    let layer = |k: usize| (chunk.material[k * cells + i], chunk.thickness[k * cells + i]);
    let (top, t_top) = layer(c.checked_sub(1)?);
    let ground = &chunk.ground;
    let g = ground[i];
    let [l, r, b, f] = grid.around(x, z);
    let at = |nb: Option<usize>| nb.map(|k| ground[k]);
    let nbs = [at(l), at(r), at(b), at(f)];
    if let Some(a) = split(g, &nbs, talus[usize::from(top)], rate, g) {
        return Some((a, top));
    }
    if !sliding || c < 2 || Material::from_u8(top).is_none_or(Material::is_loose) {
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
