//! Placement across chunk borders with hashed priorities.
//!
//! Every chunk throws its own candidates from its own random stream
//! (`rng::stream(seed, Chunk([x, kind, z]), purpose)`), each with a random
//! 64-bit priority. A candidate survives when it passes its species' ground
//! rules and no other candidate that passes its own rules, of this chunk or of
//! the eight around it, lies within the larger of the two min distances with a
//! higher priority (a Matérn type II hard-core process). Whether a candidate
//! survives therefore depends only on candidates and ground within one min
//! distance of it, never on which chunk was generated first, and no two
//! survivors (of any species of the layer) are closer than their min distance,
//! across borders too.
//!
//! The ground of candidates near a border is read from the chunk's apron
//! (see [`RegionGround`]), which the neighbour computes to the same bits.

use glam::{Vec2, Vec3};
use rand::RngExt;
use sylva_runtime::SpatialIndex;
use sylva_runtime::rng::{StreamKey, stream};

use super::params::PlacementParams;
use crate::placement::{Ground, GroundSample};
use crate::terrain::{Material, TerrainChunk};

/// One surviving instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    /// Index of the species in its layer.
    pub kind: u32,
    /// Where it stands (world metres, Y up; y is the ground height).
    pub position: Vec3,
    /// Rotation about Y, radians.
    pub yaw: f32,
    /// Scale within the species' range.
    pub scale: f32,
    /// A random word of its own (e.g. to pick a variant).
    pub pick: u64,
}

struct Candidate {
    at: Vec2,
    priority: u64,
    kind: u32,
    yaw: f32,
    scale: f32,
    pick: u64,
    height: f32,
}

/// The candidates species `kind` throws in chunk `coord` (see the module docs).
fn throw(
    seed: u64,
    purpose: &str,
    coord: [i32; 2],
    chunk_size: f32,
    kind: u32,
    p: &PlacementParams,
) -> Vec<(Vec2, [u64; 4])> {
    let mut rng = stream(seed, StreamKey::Chunk([coord[0], kind as i32, coord[1]]), purpose);
    let expected = f64::from(p.density) * f64::from(chunk_size).powi(2) / 1e4;
    let count = expected.floor() as usize + usize::from(rng.random::<f64>() < expected.fract());
    let lo = Vec2::new(coord[0] as f32, coord[1] as f32) * chunk_size;
    (0..count)
        .map(|_| {
            let at = lo + Vec2::new(rng.random::<f32>(), rng.random::<f32>()) * chunk_size;
            (at, [rng.random(), rng.random(), rng.random(), rng.random()])
        })
        .collect()
}

/// The survivors of chunk `coord` for the species `kinds` of one layer, in
/// (species, throw) order.
pub fn place(
    seed: u64,
    purpose: &str,
    kinds: &[&PlacementParams],
    coord: [i32; 2],
    chunk_size: f32,
    ground: &impl Ground,
) -> Vec<Placed> {
    let reach = kinds.iter().map(|k| k.min_distance).fold(0.0f32, f32::max);
    let lo = Vec2::new(coord[0] as f32, coord[1] as f32) * chunk_size;
    let hi = lo + Vec2::splat(chunk_size);
    let mut all: Vec<Candidate> = Vec::new();
    let mut own = 0;
    // Own chunk first, so its candidates are the first `own` entries.
    let around = std::iter::once([0, 0]).chain(
        (-1..=1)
            .flat_map(|dz| (-1..=1).map(move |dx| [dx, dz]))
            .filter(|d| *d != [0, 0]),
    );
    for d in around {
        let c = [coord[0] + d[0], coord[1] + d[1]];
        for (kind, p) in kinds.iter().enumerate() {
            for (at, words) in throw(seed, purpose, c, chunk_size, kind as u32, p) {
                if d != [0, 0] && (at.clamp(lo, hi) - at).length() > reach * 1.01 {
                    continue;
                }
                let Some(g) = ground.sample(at.x, at.y).filter(|g| p.rules.allows(g)) else {
                    continue;
                };
                let (s0, s1) = p.scale;
                all.push(Candidate {
                    at,
                    priority: words[0],
                    kind: kind as u32,
                    yaw: (words[1] >> 40) as f32 / (1u64 << 24) as f32 * std::f32::consts::TAU,
                    scale: s0 + (s1 - s0) * ((words[2] >> 40) as f32 / (1u64 << 24) as f32),
                    pick: words[3],
                    height: g.height,
                });
            }
        }
        if d == [0, 0] {
            own = all.len();
        }
    }
    let index = SpatialIndex::build(
        all.iter()
            .enumerate()
            .map(|(i, c)| (Vec3::new(c.at.x, 0.0, c.at.y), i as u32)),
    );
    let min_distance: Vec<f32> = kinds.iter().map(|k| k.min_distance).collect();
    all[..own]
        .iter()
        .enumerate()
        .filter(|&(i, c)| {
            let q = Vec3::new(c.at.x, 0.0, c.at.y);
            !index.within(q, reach * 1.01).iter().any(|hit| {
                let o = &all[*hit.payload as usize];
                let r = min_distance[c.kind as usize].max(min_distance[o.kind as usize]);
                *hit.payload as usize != i && (o.at - c.at).length_squared() < r * r && o.priority > c.priority
            })
        })
        .map(|(_, c)| Placed {
            kind: c.kind,
            position: Vec3::new(c.at.x, c.height, c.at.y),
            yaw: c.yaw,
            scale: c.scale,
            pick: c.pick,
        })
        .collect()
}

/// The ground of a generated region (a chunk and its apron), sampled by world
/// position: the cell that holds (x, z), its rock height and top material, and
/// the slope from central differences. `None` on the region's outermost ring,
/// where a neighbour is missing.
pub struct RegionGround {
    /// Rock height per cell of the region.
    pub ground: Vec<f32>,
    /// Top material per cell of the region.
    pub top: Vec<Option<Material>>,
    /// Cells under water, where nothing stands (empty: none).
    wet: Vec<bool>,
    size: i64,
    origin: [i64; 2],
    cell_size: f32,
}

impl RegionGround {
    /// The ground of `region`, whose first cell is world cell `origin`.
    pub fn new(region: &TerrainChunk, origin: [i64; 2], cell_size: f32) -> Self {
        let (mut ground, mut top) = (Vec::new(), Vec::new());
        region.ground_heights(&mut ground);
        region.top_materials(&mut top);
        Self {
            ground,
            top,
            wet: Vec::new(),
            size: i64::from(region.size()),
            origin,
            cell_size,
        }
    }

    /// Marks the cells whose water surface (`level`, one per cell) lies above the ground.
    pub fn flood(&mut self, level: &[f32]) {
        self.wet = self.ground.iter().zip(level).map(|(g, l)| l > g).collect();
    }

    /// Water depth per cell under `level` (one per cell).
    pub fn depths(&self, level: &[f32]) -> Vec<f32> {
        self.ground.iter().zip(level).map(|(g, l)| (l - g).max(0.0)).collect()
    }

    fn at(&self, i: i64, j: i64) -> usize {
        (j * self.size + i) as usize
    }
}

impl Ground for RegionGround {
    fn sample(&self, x: f32, z: f32) -> Option<GroundSample> {
        // World cell first, in f64, so two regions find the same cell for the same point.
        let cell = |v: f32, o: i64| (f64::from(v) / f64::from(self.cell_size)).floor() as i64 - o;
        let (i, j) = (cell(x, self.origin[0]), cell(z, self.origin[1]));
        if i < 1 || j < 1 || i >= self.size - 1 || j >= self.size - 1 || self.wet.get(self.at(i, j)) == Some(&true) {
            return None;
        }
        let run = 2.0 * self.cell_size;
        let dx = (self.ground[self.at(i + 1, j)] - self.ground[self.at(i - 1, j)]) / run;
        let dz = (self.ground[self.at(i, j + 1)] - self.ground[self.at(i, j - 1)]) / run;
        Some(GroundSample {
            height: self.ground[self.at(i, j)],
            slope: Vec2::new(dx, dz).length().atan().to_degrees(),
            material: self.top[self.at(i, j)],
        })
    }
}
