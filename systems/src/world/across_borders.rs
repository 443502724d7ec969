//! Placement across chunk borders with hashed priorities.
//!
//! Every chunk throws its own candidates for a layer from its own random stream
//! (`rng::stream(seed, Chunk([x, layer, z]), purpose)`), each with a random
//! 64-bit priority, at the layer's peak rate. The biomes' density at the
//! candidate keeps it or not and picks its species (docs/design/ecology.md,
//! "Density that survives its spacing"). A candidate survives when it passes its species' ground
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

/// One layer's species and how densely it throws candidates.
pub struct LayerPlan<'a> {
    /// The layer's species: their spacing, rules and scales.
    pub species: Vec<&'a PlacementParams>,
    /// Candidates thrown per m²: at least what the densest place needs
    /// ([`crate::ecology::thrown_for`] of the layer's peak).
    pub thrown: f32,
}

/// A uniform value in [0, 1) from a word's top 24 bits.
fn unit(word: u64) -> f32 {
    (word >> 40) as f32 / (1u64 << 24) as f32
}

/// The candidates layer `layer` throws in chunk `coord`: positions and six random words each
/// (priority, yaw, scale, pick, keep, species).
fn throw(seed: u64, purpose: &str, coord: [i32; 2], chunk_size: f32, layer: u32, thrown: f32) -> Vec<(Vec2, [u64; 6])> {
    let mut rng = stream(seed, StreamKey::Chunk([coord[0], layer as i32, coord[1]]), purpose);
    let expected = f64::from(thrown) * f64::from(chunk_size).powi(2);
    let count = expected.floor() as usize + usize::from(rng.random::<f64>() < expected.fract());
    let lo = Vec2::new(coord[0] as f32, coord[1] as f32) * chunk_size;
    (0..count)
        .map(|_| {
            let at = lo + Vec2::new(rng.random::<f32>(), rng.random::<f32>()) * chunk_size;
            (at, std::array::from_fn(|_| rng.random()))
        })
        .collect()
}

/// Whether a candidate thrown at `thrown` per m² stays where the layer asks for
/// `stems` per m² of each species, and which species it becomes: kept with
/// chance λ(x) / thrown, λ(x) what a hard-core process must throw for the
/// asked density to survive its spacing; the species drawn in proportion to
/// the densities.
fn choose(stems: &[f32], spacing: &[f32], thrown: f32, keep: u64, pick: u64) -> Option<usize> {
    let total: f32 = stems.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let cover: f32 = stems
        .iter()
        .zip(spacing)
        .map(|(d, r)| d * std::f32::consts::PI * r * r)
        .sum();
    if unit(keep) * thrown >= crate::ecology::thrown_for(total, cover) {
        return None;
    }
    let mut u = unit(pick) * total;
    for (s, &d) in stems.iter().enumerate() {
        if u < d {
            return Some(s);
        }
        u -= d;
    }
    stems.iter().rposition(|&d| d > 0.0)
}

/// The survivors of chunk `coord` for layer `layer` (its index `layer_id` keys the random
/// streams), in throw order. `stems(at, out)` writes the stems per m² the biomes ask for at
/// `at` of each of the layer's species (false where it cannot tell: nothing stands there).
pub fn place(
    seed: u64,
    purpose: &str,
    (layer_id, layer): (u32, &LayerPlan<'_>),
    coord: [i32; 2],
    chunk_size: f32,
    ground: &impl Ground,
    mut stems: impl FnMut(Vec2, &mut [f32]) -> bool,
) -> Vec<Placed> {
    let kinds = &layer.species;
    let reach = kinds.iter().map(|k| k.min_distance).fold(0.0f32, f32::max);
    let spacing: Vec<f32> = kinds.iter().map(|k| k.min_distance).collect();
    let lo = Vec2::new(coord[0] as f32, coord[1] as f32) * chunk_size;
    let hi = lo + Vec2::splat(chunk_size);
    let mut all: Vec<Candidate> = Vec::new();
    let mut own = 0;
    let mut asked = vec![0.0f32; kinds.len()];
    // Own chunk first, so its candidates are the first `own` entries.
    let around = std::iter::once([0, 0]).chain(
        (-1..=1)
            .flat_map(|dz| (-1..=1).map(move |dx| [dx, dz]))
            .filter(|d| *d != [0, 0]),
    );
    for d in around {
        let c = [coord[0] + d[0], coord[1] + d[1]];
        for (at, words) in throw(seed, purpose, c, chunk_size, layer_id, layer.thrown) {
            if d != [0, 0] && (at.clamp(lo, hi) - at).length() > reach * 1.01 {
                continue;
            }
            asked.fill(0.0);
            if !stems(at, &mut asked) {
                continue;
            }
            let Some(kind) = choose(&asked, &spacing, layer.thrown, words[4], words[5]) else {
                continue;
            };
            let p = kinds[kind];
            let Some(g) = ground.sample(at.x, at.y).filter(|g| p.rules.allows(g)) else {
                continue;
            };
            let (s0, s1) = p.scale;
            all.push(Candidate {
                at,
                priority: words[0],
                kind: kind as u32,
                yaw: unit(words[1]) * std::f32::consts::TAU,
                scale: s0 + (s1 - s0) * unit(words[2]),
                pick: words[3],
                height: g.height,
            });
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
    all[..own]
        .iter()
        .enumerate()
        .filter(|&(i, c)| {
            let q = Vec3::new(c.at.x, 0.0, c.at.y);
            !index.within(q, reach * 1.01).iter().any(|hit| {
                let o = &all[*hit.payload as usize];
                let r = spacing[c.kind as usize].max(spacing[o.kind as usize]);
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

    /// Side of a cell, metres.
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// World cell `cell` as a column of the region.
    pub fn local(&self, cell: [i64; 2]) -> (u32, u32) {
        ((cell[0] - self.origin[0]) as u32, (cell[1] - self.origin[1]) as u32)
    }

    /// Ground height at world cell `cell` and its gradient (rise per metre
    /// along x and z, central differences). The cell and its four neighbours
    /// must lie inside the region.
    pub fn height_and_gradient(&self, cell: [i64; 2]) -> (f32, Vec2) {
        let (i, j) = (cell[0] - self.origin[0], cell[1] - self.origin[1]);
        let run = 2.0 * self.cell_size;
        let dx = (self.ground[self.at(i + 1, j)] - self.ground[self.at(i - 1, j)]) / run;
        let dz = (self.ground[self.at(i, j + 1)] - self.ground[self.at(i, j - 1)]) / run;
        (self.ground[self.at(i, j)], Vec2::new(dx, dz))
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
        let (height, gradient) = self.height_and_gradient([i + self.origin[0], j + self.origin[1]]);
        Some(GroundSample {
            height,
            slope: gradient.length().atan().to_degrees(),
            material: self.top[self.at(i, j)],
        })
    }
}
