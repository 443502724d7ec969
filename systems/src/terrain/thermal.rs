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

use super::columns::TerrainChunk;
use super::hydraulic::{Grid, ROWS, block_cells};
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
                for (j, i, x, z) in block_cells(b, src.len(), n) {
                    let g = ground[i];
                    let steep = grid
                        .around(x, z)
                        .into_iter()
                        .any(|nb| nb.is_some_and(|k| g - ground[k] > min_talus));
                    let plan = if steep {
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
        for (j, i, x, z) in block_cells(b, layers.count.len(), n) {
            let around = grid.around(x, z);
            let moves = (0..4).any(|d| out[d][i] > 0.0 || around[d].is_some_and(|k| out[OPPOSITE[d]][k] > 0.0));
            if !moves {
                continue;
            }
            let send = out[0][i] + out[1][i] + out[2][i] + out[3][i];
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
                let received: f32 = (0..4).filter_map(|d| around[d].map(|k| out[OPPOSITE[d]][k])).sum();
                layers.push(j, debris(0), received);
            } else {
                for (d, nb) in around.into_iter().enumerate() {
                    if let Some(k) = nb {
                        layers.push(j, debris(src[k]), out[OPPOSITE[d]][k]);
                    }
                }
            }
        }
    });
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
