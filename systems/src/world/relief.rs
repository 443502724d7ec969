//! A region's ground from the basin scale: the domains' coarse heights
//! upsampled to cells (Catmull-Rom, so slopes are continuous), added under the
//! generator's detail, and the rivers carved in with the water they carry.
//!
//! Every cell's value is a function of its world position and of the domains
//! alone, so regions that overlap agree bit for bit, and a river that leaves
//! one chunk enters the next at the same place with the same discharge.

use glam::Vec2;

use super::domains::{Domain, Domains, RiverPath};
use crate::terrain::catmull_rom;

/// No water at a cell.
const DRY: f32 = f32::NEG_INFINITY;

/// One straight piece of a river, in world metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reach {
    /// Upstream and downstream end.
    pub ends: [Vec2; 2],
    /// Water surface height at each end (the first higher), metres.
    pub level: [f32; 2],
    /// Drainage area at each end, km².
    pub area: [f32; 2],
}

impl Reach {
    /// The reaches of one river.
    pub(super) fn of(river: &RiverPath) -> impl Iterator<Item = Reach> + '_ {
        (1..river.points.len()).map(move |i| Reach {
            ends: [river.points[i - 1], river.points[i]],
            level: [river.level[i - 1], river.level[i]],
            area: [river.area[i - 1], river.area[i]],
        })
    }
}

/// A river's cross-section where its drainage area is `area` km²: (width, depth) in metres.
pub(super) fn section(domains: &Domains, area: f32) -> (f32, f32) {
    let p = domains.params();
    let power = |(c, e): (f32, f32)| c * area.max(0.0).powf(e);
    (power(p.river_width), power(p.river_depth))
}

/// Lattice node below cell `c` and the fraction past it.
fn node_of(c: i64, cell_size: f32, spacing: f32) -> (i64, f32) {
    let u = (c as f64 * f64::from(cell_size)) / f64::from(spacing);
    let f = u.floor();
    (f as i64, (u - f) as f32)
}

/// The lattice nodes [`shape`] reads for the `size[0] × size[1]` cells from
/// world cell `origin` on: the first node and the width and height, in nodes
/// (one node before and two after the cells, for the Catmull-Rom spline).
pub fn node_window(origin: [i64; 2], size: [u64; 2], cell_size: f32, spacing: f32) -> ([i64; 2], [usize; 2]) {
    let first = origin.map(|o| node_of(o, cell_size, spacing).0 - 1);
    let last = [0, 1].map(|k| node_of(origin[k] + size[k].max(1) as i64 - 1, cell_size, spacing).0 + 2);
    (first, [0, 1].map(|k| (last[k] - first[k] + 1) as usize))
}

/// What [`shape`] made of a region besides its heights.
pub struct Shaped {
    /// Water surface per cell: the sea's level, or a river's where it runs higher.
    pub level: Vec<f32>,
    /// A channel's bed per cell, NaN outside channels.
    pub bed: Vec<f32>,
    /// The rivers' reaches near the region.
    pub reaches: Vec<Reach>,
}

/// Adds the basin heights of the `size`² cells from world cell `origin` to
/// `height` and carves the rivers.
pub fn shape(domains: &Domains, origin: [i64; 2], size: usize, cell_size: f32, height: &mut [f32]) -> Shaped {
    let spacing = domains.params().node_spacing;
    let at = |k: usize| (0..size).map(move |c| node_of(origin[k] + c as i64, cell_size, spacing));
    let (lo, [w, h]) = node_window(origin, [size as u64; 2], cell_size, spacing);
    let (nodes, near) = domains.heights(lo, w, h);
    // Along x for every node row, then along z for every cell row.
    let mut rows = vec![0.0f32; h * size];
    for (x, (n, t)) in at(0).enumerate() {
        let wx = catmull_rom(t);
        let i = (n - 1 - lo[0]) as usize;
        for r in 0..h {
            let s = &nodes[r * w + i..r * w + i + 4];
            rows[r * size + x] = wx[0] * s[0] + wx[1] * s[1] + wx[2] * s[2] + wx[3] * s[3];
        }
    }
    for (z, (n, t)) in at(1).enumerate() {
        let wz = catmull_rom(t);
        let r = (n - 1 - lo[1]) as usize;
        for x in 0..size {
            let s = |k: usize| rows[(r + k) * size + x];
            height[z * size + x] += wz[0] * s(0) + wz[1] * s(1) + wz[2] * s(2) + wz[3] * s(3);
        }
    }
    let reaches = reaches_near(domains, &near, origin, size, cell_size);
    let mut level = vec![domains.params().sea_level; size * size];
    let bed = carve(domains, &reaches, origin, size, cell_size, height, &mut level);
    Shaped { level, bed, reaches }
}

/// The reaches of `near`'s rivers whose channel or banks reach the region.
fn reaches_near(
    domains: &Domains,
    near: &[std::sync::Arc<Domain>],
    origin: [i64; 2],
    size: usize,
    cell_size: f32,
) -> Vec<Reach> {
    let lo = Vec2::new(origin[0] as f32, origin[1] as f32) * cell_size;
    let hi = lo + Vec2::splat(size as f32 * cell_size);
    near.iter()
        .flat_map(|d| d.rivers.iter().flat_map(Reach::of))
        .filter(|r| {
            let reach = influence(domains, r.area[0].max(r.area[1]), cell_size);
            let (a, b) = (r.ends[0].min(r.ends[1]), r.ends[0].max(r.ends[1]));
            a.x - reach < hi.x && a.y - reach < hi.y && b.x + reach > lo.x && b.y + reach > lo.y
        })
        .collect()
}

/// How far a river of `area` km² changes the ground from its centre line, metres.
fn influence(domains: &Domains, area: f32, cell_size: f32) -> f32 {
    let (width, _) = section(domains, area);
    (0.5 * width).max(0.75 * cell_size) + width * domains.params().banks
}

/// Carves every reach into `height`; writes the river level into `water` where
/// a channel runs and returns the channels' beds (NaN elsewhere). A channel's bed is its level minus a parabola of its depth;
/// its banks blend from the level into the ground over `banks` widths.
/// Where channels overlap the lowest bed wins, where banks overlap the lowest
/// ground: both are minima, so the order of the reaches does not matter.
fn carve(
    domains: &Domains,
    reaches: &[Reach],
    origin: [i64; 2],
    size: usize,
    cell_size: f32,
    height: &mut [f32],
    water: &mut [f32],
) -> Vec<f32> {
    let banks = domains.params().banks;
    let mut bed = vec![f32::INFINITY; size * size];
    let mut level = vec![DRY; size * size];
    let mut bank = vec![f32::INFINITY; size * size];
    let base = Vec2::new(origin[0] as f32, origin[1] as f32);
    for r in reaches {
        let reach = influence(domains, r.area[0].max(r.area[1]), cell_size);
        let cells =
            |v: f32, k: usize| ((v / cell_size - [base.x, base.y][k]).floor() as i64).clamp(0, size as i64) as usize;
        let (a, b) = (r.ends[0].min(r.ends[1]) - reach, r.ends[0].max(r.ends[1]) + reach);
        let d = r.ends[1] - r.ends[0];
        let len2 = d.length_squared().max(1e-12);
        for z in cells(a.y, 1)..cells(b.y + cell_size, 1) {
            for x in cells(a.x, 0)..cells(b.x + cell_size, 0) {
                let p = (base + Vec2::new(x as f32, z as f32)) * cell_size;
                let t = ((p - r.ends[0]).dot(d) / len2).clamp(0.0, 1.0);
                let dist = p.distance(r.ends[0] + d * t);
                let l = r.level[0] + (r.level[1] - r.level[0]) * t;
                let (width, depth) = section(domains, r.area[0] + (r.area[1] - r.area[0]) * t);
                // At least the half diagonal of a cell, so a channel narrower
                // than a cell still is an unbroken chain of cells.
                let half = (0.5 * width).max(0.75 * cell_size);
                let i = z * size + x;
                if dist <= half {
                    let b = l - depth * (1.0 - (dist / half).powi(2));
                    if b < bed[i] || (b == bed[i] && l < level[i]) {
                        (bed[i], level[i]) = (b, l);
                    }
                } else if dist < half + banks * width {
                    let s = (dist - half) / (banks * width);
                    let s = s * s * (3.0 - 2.0 * s);
                    bank[i] = bank[i].min(l + (height[i] - l) * s);
                }
            }
        }
    }
    for i in 0..size * size {
        if bed[i].is_finite() {
            height[i] = bed[i];
            water[i] = water[i].max(level[i]);
        } else {
            if bank[i].is_finite() {
                height[i] = bank[i];
            }
            bed[i] = f32::NAN;
        }
    }
    bed
}
