//! Ground cover as a field: density and kind per coarse sample, expanded into
//! blades by a counter-based hash of (seed, world cell, index) wherever they
//! are needed (docs/design/ecology.md, "Ground cover is a field").
//!
//! Everything that decides a blade's existence, kind and hashed values is
//! integer arithmetic on 32-bit words, so a GPU pass can give the same answers
//! bit for bit.

use serde::{Deserialize, Serialize};

/// No ground cover at a sample.
pub const NO_KIND: u8 = u8::MAX;

/// Units of a blade per cell in [`CoverField::density`].
pub const DENSITY_UNIT: u32 = 256;

/// Most blades one cell can hold (the largest density a `u16` stores).
pub const MAX_BLADES_PER_CELL: u32 = u16::MAX as u32 / DENSITY_UNIT;

/// A chunk's ground cover: per sample, blades per cell and which grass.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoverField {
    /// Seed of the blade hash (the world's grass stream).
    pub seed: u32,
    /// Cells between samples.
    pub spacing: u32,
    /// Samples along a side (the chunk's cells / spacing + 1: the last row and
    /// column are the neighbours' first).
    pub side: u32,
    /// Blades per cell, in 1/[`DENSITY_UNIT`], per sample row by row.
    pub density: Vec<u16>,
    /// Grass species per sample, [`NO_KIND`] where there is none.
    pub kind: Vec<u8>,
}

/// What the field holds at one cell: how many blades, and whose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellCover {
    /// Blades in the cell.
    pub count: u32,
    /// Their grass species ([`NO_KIND`] when `count` is 0).
    pub kind: u8,
}

/// The hashed values of one blade: where in its cell, how turned, how tall.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BladeDraw {
    /// Offset inside the cell along x and z, each in [0, 1).
    pub offset: [f32; 2],
    /// Rotation about Y, radians in [0, 2π).
    pub yaw: f32,
    /// Where in its species' scale range, [0, 1).
    pub size: f32,
}

/// The PCG hash of one 32-bit word (Jarzynski and Olano 2020: the hash they
/// found best for GPU use).
#[inline]
pub fn pcg(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// The hash of a blade's (seed, world cell, index, purpose).
#[inline]
pub fn blade_hash(seed: u32, cell: [i64; 2], index: u32, purpose: u32) -> u32 {
    pcg(seed ^ pcg(cell[0] as u32 ^ pcg(cell[1] as u32 ^ pcg(index ^ pcg(purpose)))))
}

/// A uniform value in [0, 1) from a hash (its top 24 bits).
#[inline]
fn unit(h: u32) -> f32 {
    (h >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
}

impl CoverField {
    /// Quantizes `per_cell` blades per cell into a density word, at most
    /// [`MAX_BLADES_PER_CELL`].
    pub fn quantize(per_cell: f32) -> u16 {
        (per_cell * DENSITY_UNIT as f32).round().clamp(0.0, f32::from(u16::MAX)) as u16
    }

    /// The blades of local cell `(x, z)` (0 ≤ x, z < (side − 1) · spacing),
    /// world cell `world`: the density blended bilinearly from the four
    /// samples around the cell's centre, in integers, its fraction rounded up
    /// or down by the cell's hash; the kind one of the four samples' picked
    /// with a chance in proportion to its share of that density.
    pub fn cell(&self, x: u32, z: u32, world: [i64; 2]) -> CellCover {
        let s = self.spacing;
        let (i, j) = ((x / s) as usize, (z / s) as usize);
        let side = self.side as usize;
        if s == 0 || i + 1 >= side || j + 1 >= side {
            return CellCover {
                count: 0,
                kind: NO_KIND,
            };
        }
        // Weights out of 2s per axis, at the cell's centre.
        let (fx, fz) = (2 * (x % s) + 1, 2 * (z % s) + 1);
        let wx = [2 * s - fx, fx];
        let wz = [2 * s - fz, fz];
        let c = j * side + i;
        let corners = [c, c + 1, c + side, c + side + 1];
        let weight = [wx[0] * wz[0], wx[1] * wz[0], wx[0] * wz[1], wx[1] * wz[1]];
        let parts: [u64; 4] = std::array::from_fn(|k| u64::from(weight[k]) * u64::from(self.density[corners[k]]));
        let total: u64 = parts.iter().sum();
        if total == 0 {
            return CellCover {
                count: 0,
                kind: NO_KIND,
            };
        }
        let denominator = u64::from(DENSITY_UNIT) * u64::from(4 * s * s);
        let h = u64::from(blade_hash(self.seed, world, u32::MAX, 0xc0fe));
        let count = total / denominator + u64::from(h % denominator < total % denominator);
        let mut pick = u64::from(blade_hash(self.seed, world, u32::MAX, 0x4b1d)) % total;
        let mut kind = NO_KIND;
        for (k, &p) in parts.iter().enumerate() {
            if pick < p {
                kind = self.kind[corners[k]];
                break;
            }
            pick -= p;
        }
        CellCover {
            count: count as u32,
            kind,
        }
    }

    /// Blade `index` of world cell `world`: its hashed draw.
    pub fn blade(&self, world: [i64; 2], index: u32) -> BladeDraw {
        let h = |purpose| blade_hash(self.seed, world, index, purpose);
        BladeDraw {
            offset: [unit(h(1)), unit(h(2))],
            yaw: unit(h(3)) * std::f32::consts::TAU,
            size: unit(h(4)),
        }
    }

    /// Bytes the field holds.
    pub fn bytes(&self) -> usize {
        self.density.len() * 2 + self.kind.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uniform(per_cell: f32, spacing: u32, side: u32) -> CoverField {
        let n = (side * side) as usize;
        CoverField {
            seed: 9,
            spacing,
            side,
            density: vec![CoverField::quantize(per_cell); n],
            kind: vec![2; n],
        }
    }

    /// A uniform field realizes its density on average: whole blades per cell,
    /// the fraction by the hash.
    #[test]
    fn a_uniform_field_realizes_its_density() {
        let f = uniform(2.3, 4, 17);
        let mut blades = 0u64;
        for z in 0..64 {
            for x in 0..64 {
                let c = f.cell(x, z, [i64::from(x) - 30, i64::from(z) + 7]);
                assert!(c.count == 2 || c.count == 3, "{c:?}");
                assert_eq!(c.kind, 2);
                blades += u64::from(c.count);
            }
        }
        let mean = blades as f64 / 4096.0;
        assert!((mean - 2.3).abs() < 0.03, "{mean}");
    }

    /// Kinds mix where samples differ, in proportion to their density shares.
    #[test]
    fn kinds_mix_by_their_share_of_the_density() {
        let mut f = uniform(4.0, 4, 2);
        f.kind = vec![0, 1, 0, 1];
        let mut ones = 0;
        for z in 0..4 {
            for x in 0..4 {
                for k in 0..64i64 {
                    ones += u32::from(f.cell(x, z, [k * 5 + i64::from(x), i64::from(z)]).kind == 1);
                }
            }
        }
        let share = f64::from(ones) / (16.0 * 64.0);
        assert!((share - 0.5).abs() < 0.06, "{share}");
        assert_eq!(f.cell(4, 0, [0, 0]).count, 0, "past the last sample column");
    }

    #[test]
    fn hashes_differ_by_every_input() {
        let base = blade_hash(1, [2, 3], 4, 5);
        for other in [
            blade_hash(0, [2, 3], 4, 5),
            blade_hash(1, [3, 3], 4, 5),
            blade_hash(1, [2, 4], 4, 5),
            blade_hash(1, [2, 3], 5, 5),
            blade_hash(1, [2, 3], 4, 6),
        ] {
            assert_ne!(base, other);
        }
    }
}
