//! A region's terrain attributes (docs/design/ecology.md, "Attributes"): read
//! at samples every `sample_cells` world cells from the eroded ground, the
//! basin lattice's drainage area and the rivers, each a function of the
//! sample's world cell alone, so chunks agree on shared samples bit for bit.

use glam::{Vec2, Vec3};
use sylva_runtime::SpatialIndex;

use super::across_borders::RegionGround;
use super::domains::Domains;
use super::relief::{Reach, section};
use crate::ecology::{ATTRIBUTES, Attribute, AttributeMaps, Attributes, EcologyParams};
use crate::terrain::{Material, TerrainChunk};

/// Lattice nodes read around a window for rivers and sea, beyond the
/// distance cap: a river's smoothed points stay within a node of their own.
const NODE_MARGIN: i64 = 2;

/// Where the samples are and what they are read from.
pub(super) struct Sampling<'a> {
    /// The region's ground (heights and materials per cell).
    pub ground: &'a RegionGround,
    /// The region's columns (for the soil).
    pub terrain: &'a TerrainChunk,
    /// The world's basin domains, if any.
    pub domains: Option<&'a Domains>,
    /// World cell of the first sample (a multiple of the spacing).
    pub first: [i64; 2],
    /// Samples along a side.
    pub side: u32,
}

/// The attribute maps of `sampling` under `ecology`. Every sample needs its
/// cell and the four around it inside the region.
pub(super) fn sample(ecology: &EcologyParams, sampling: &Sampling<'_>) -> AttributeMaps {
    let g = sampling.ground;
    let cs = g.cell_size();
    let mut maps = AttributeMaps::new(sampling.first, ecology.sample_cells, sampling.side, cs);
    let sea_level = sampling.domains.map_or(0.0, |d| d.params().sea_level);
    let n = maps.samples();
    let cells: Vec<[i64; 2]> = (0..n as u32)
        .map(|k| maps.cell_of(k % sampling.side, k / sampling.side))
        .collect();
    let lattice = sampling.domains.map(|d| Lattice::new(d, &maps, ecology.max_distance));
    let mut values = [const { Vec::new() }; 8];
    for v in &mut values {
        v.reserve(n);
    }
    for &cell in &cells {
        let (h, gradient) = g.height_and_gradient(cell);
        let at = Vec2::new(cell[0] as f32, cell[1] as f32) * cs;
        let (area, width) = lattice.as_ref().map_or((cs * cs, cs), |l| (l.area_at(at), l.spacing));
        let (river, sea) = lattice
            .as_ref()
            .map_or((ecology.max_distance, ecology.max_distance), |l| {
                (
                    l.river_distance(at, ecology.max_distance),
                    l.sea_distance(at, ecology.max_distance),
                )
            });
        let read = Reading {
            height: h - sea_level,
            gradient,
            soil: soil(sampling.terrain, g.local(cell)),
            drainage: (area, width),
            distances: (river, sea),
        };
        for (v, a) in values.iter_mut().zip(read.attributes(ecology)) {
            v.push(a);
        }
    }
    for a in Attribute::ALL {
        maps.map_mut(a).copy_from_slice(&values[a as usize]);
    }
    maps
}

/// What a sample's attributes are read from.
pub(super) struct Reading {
    /// Ground height above the sea, metres.
    pub height: f32,
    /// The ground's gradient (dh/dx, dh/dz).
    pub gradient: Vec2,
    /// Thickness of the loose layers, metres.
    pub soil: f32,
    /// Drainage area, m², and the contour width it drains through, metres.
    pub drainage: (f32, f32),
    /// Distance to the nearest river and to the sea, metres.
    pub distances: (f32, f32),
}

impl Reading {
    /// The attributes under `ecology` (docs/design/ecology.md, "Attributes"), each within
    /// its bounds (NaN at the lower one).
    pub fn attributes(&self, ecology: &EcologyParams) -> Attributes {
        let tan = self.gradient.length();
        let normal = Vec3::new(-self.gradient.x, 1.0, -self.gradient.y).normalize();
        let (area, width) = self.drainage;
        let mut a: Attributes = [0.0; ATTRIBUTES];
        a[Attribute::Height as usize] = self.height;
        a[Attribute::Slope as usize] = tan.atan().to_degrees();
        a[Attribute::Insolation as usize] = normal.dot(-ecology.sun.normalize()).max(0.0);
        a[Attribute::SoilDepth as usize] = self.soil;
        a[Attribute::Wetness as usize] = (area / width).ln() - tan.max(1e-3).ln();
        a[Attribute::RiverDistance as usize] = self.distances.0;
        a[Attribute::SeaDistance as usize] = self.distances.1;
        a[Attribute::Temperature as usize] =
            ecology.sea_temperature - ecology.lapse_rate * self.height.max(0.0) / 1000.0;
        for attr in Attribute::ALL {
            let (lo, hi) = attr.bounds();
            let v = &mut a[attr as usize];
            *v = if v.is_nan() { lo } else { v.clamp(lo, hi) };
        }
        a
    }
}

/// Thickness of the loose layers (sand, regolith) at the top of column `(x, z)`, metres.
fn soil(terrain: &TerrainChunk, (x, z): (u32, u32)) -> f32 {
    let Some(column) = terrain.column(x, z) else {
        return 0.0;
    };
    (0..column.len())
        .rev()
        .map_while(|k| {
            column
                .layer(k)
                .filter(|(m, _, _)| matches!(m, Material::Sand | Material::Regolith))
        })
        .map(|(_, t, _)| t)
        .sum()
}

/// What the basin lattice tells about the samples: drainage area, rivers and sea.
struct Lattice {
    /// Node spacing, metres.
    spacing: f32,
    /// First node of `ln_area`.
    lo: [i64; 2],
    width: usize,
    /// ln of each node's drainage area (m²).
    ln_area: Vec<f32>,
    /// River reaches near the samples, with their half widths at both ends.
    reaches: Vec<(Reach, [f32; 2])>,
    /// Sea nodes near the samples.
    sea: SpatialIndex<()>,
}

/// The lattice nodes around samples from world cell `first` to `last` (inclusive), cells
/// of `cell_size` m: those the bilinear blend reads, and those within `cap` m (plus a
/// margin) where rivers and sea are looked for. Each as first and last node.
pub(super) fn node_windows(
    spacing: f32,
    cell_size: f32,
    [first, last]: [[i64; 2]; 2],
    cap: f32,
) -> [([i64; 2], [i64; 2]); 2] {
    let node = |cell: i64| (cell as f64 * f64::from(cell_size) / f64::from(spacing)).floor() as i64;
    let (lo, hi) = (first.map(node), last.map(|c| node(c) + 1));
    let reach = (f64::from(cap) / f64::from(spacing)).ceil() as i64 + NODE_MARGIN;
    [(lo, hi), (lo.map(|v| v - reach), hi.map(|v| v + reach))]
}

impl Lattice {
    fn new(domains: &Domains, maps: &AttributeMaps, cap: f32) -> Self {
        let spacing = domains.params().node_spacing;
        let cs = maps.cell_size;
        let last = maps.cell_of(maps.side - 1, maps.side - 1);
        let [(lo, hi), (flo, fhi)] = node_windows(spacing, cs, [maps.origin, last], cap);
        // Area: the nodes around every sample, for the bilinear blend.
        let width = (hi[0] - lo[0] + 1) as usize;
        let (area, _) = domains.areas(lo, width, (hi[1] - lo[1] + 1) as usize);
        // Rivers and sea: every node within the cap of a sample.
        let (w, h) = ((fhi[0] - flo[0] + 1) as usize, (fhi[1] - flo[1] + 1) as usize);
        let (heights, near) = domains.heights(flo, w, h);
        let sea_level = domains.params().sea_level;
        let sea = SpatialIndex::build(
            heights
                .iter()
                .enumerate()
                .filter(|(_, h)| **h < sea_level)
                .map(|(i, _)| {
                    let at = [flo[0] + (i % w) as i64, flo[1] + (i / w) as i64];
                    (Vec3::new(at[0] as f32 * spacing, 0.0, at[1] as f32 * spacing), ())
                }),
        );
        let (a, b) = (
            Vec2::new(maps.origin[0] as f32, maps.origin[1] as f32) * cs - cap,
            Vec2::new(last[0] as f32, last[1] as f32) * cs + cap,
        );
        let reaches = near
            .iter()
            .flat_map(|d| d.rivers.iter().flat_map(Reach::of))
            .map(|r| (r, r.area.map(|area| 0.5 * section(domains, area).0)))
            .filter(|(r, half)| {
                let pad = half[0].max(half[1]);
                let (rlo, rhi) = (r.ends[0].min(r.ends[1]) - pad, r.ends[0].max(r.ends[1]) + pad);
                rlo.x <= b.x && rlo.y <= b.y && rhi.x >= a.x && rhi.y >= a.y
            })
            .collect();
        Self {
            spacing,
            lo,
            width,
            ln_area: area.iter().map(|a| a.max(1.0).ln()).collect(),
            reaches,
            sea,
        }
    }

    /// Drainage area at `at` metres: the nodes' ln area blended bilinearly.
    fn area_at(&self, at: Vec2) -> f32 {
        let u = [at.x / self.spacing, at.y / self.spacing];
        let i = u.map(|v| v.floor());
        let t = [u[0] - i[0], u[1] - i[1]];
        let [x, z] = [i[0] as i64 - self.lo[0], i[1] as i64 - self.lo[1]].map(|v| v.max(0) as usize);
        let x1 = (x + 1).min(self.width - 1);
        let rows = self.ln_area.len() / self.width;
        let z1 = (z + 1).min(rows - 1);
        let v = |x: usize, z: usize| self.ln_area[z.min(rows - 1) * self.width + x.min(self.width - 1)];
        let a = v(x, z) * (1.0 - t[0]) + v(x1, z) * t[0];
        let b = v(x, z1) * (1.0 - t[0]) + v(x1, z1) * t[0];
        (a * (1.0 - t[1]) + b * t[1]).exp()
    }

    /// Distance from `at` to the nearest river bank (0 in the channel), at most `cap`.
    fn river_distance(&self, at: Vec2, cap: f32) -> f32 {
        let mut best = cap;
        for (r, half) in &self.reaches {
            let d = r.ends[1] - r.ends[0];
            let t = ((at - r.ends[0]).dot(d) / d.length_squared().max(1e-12)).clamp(0.0, 1.0);
            let bank = at.distance(r.ends[0] + d * t) - (half[0] + (half[1] - half[0]) * t);
            best = best.min(bank.max(0.0));
        }
        best
    }

    /// Distance from `at` to the nearest sea node, at most `cap`.
    fn sea_distance(&self, at: Vec2, cap: f32) -> f32 {
        self.sea
            .nearest(Vec3::new(at.x, 0.0, at.y))
            .map_or(cap, |hit| hit.distance_squared.sqrt().min(cap))
    }
}
