//! Midpoint displacement (thesis §2.2.1) and Voss's successive random
//! additions, on a world-aligned lattice so chunks agree at their borders.
//!
//! The world is tiled into squares of `period` cells whose corners get random
//! heights. Every finer lattice point's displacement is a hash of its world
//! cell, so a chunk only has to compute the tiles it covers:
//!
//! - The thesis's **3-point** variant averages an edge midpoint from its two
//!   endpoints and the centre of one square (the one on the −x or −z side).
//!   Edges on tile borders use their two endpoints only (a 1D midpoint
//!   displacement along the border), so tiles are independent.
//! - **Diamond-square** averages the two endpoints and both adjacent
//!   centres; since that reaches into neighbouring tiles, a chunk computes a
//!   margin of one period around itself.

use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{mix64, unit_f32};

use super::noise::lattice_hash;

/// Which edge rule midpoint displacement uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MidpointVariant {
    /// The thesis's rule: (two corners + centre)/3 (shows its line artifacts).
    #[default]
    ThreePoint,
    /// Classic diamond-square: (two corners + two centres)/4.
    DiamondSquare,
}

/// Midpoint displacement on (2^n + 1)² tiles.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Midpoint {
    /// Edge rule. Default: the thesis's 3-point rule.
    pub variant: MidpointVariant,
    /// Tile side in cells, a power of two in 2..=4096. Default: 256.
    pub period: u32,
    /// Corner displacement λ₀, height units. Default: 60.
    pub amplitude: f32,
    /// Roughness H: level k displaces by λ₀·2^(−kH). The thesis halves λ per
    /// level, which is H = 1. Default: 1.
    pub roughness: f32,
    /// Probability that a displacement raises rather than lowers (the thesis's
    /// "probability that the ground rises or sinks"). Default: 0.5.
    pub rise: f32,
    /// Height added everywhere. Default: 100.
    pub base: f32,
}

impl Default for Midpoint {
    fn default() -> Self {
        Self {
            variant: MidpointVariant::ThreePoint,
            period: 256,
            amplitude: 60.0,
            roughness: 1.0,
            rise: 0.5,
            base: 100.0,
        }
    }
}

/// Voss's successive random additions: each level interpolates the coarser
/// lattice bilinearly and then displaces every point, old and new.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RandomAdditions {
    /// Coarsest lattice spacing in cells, a power of two in 2..=4096. Default: 256.
    pub period: u32,
    /// Level-0 displacement, height units. Default: 60.
    pub amplitude: f32,
    /// Roughness H: level k displaces by amplitude·2^(−kH). Default: 1.
    pub roughness: f32,
    /// Height added everywhere. Default: 100.
    pub base: f32,
}

impl Default for RandomAdditions {
    fn default() -> Self {
        Self {
            period: 256,
            amplitude: 60.0,
            roughness: 1.0,
            base: 100.0,
        }
    }
}

/// A lattice region [x0, x0 + w) × [z0, z0 + h) in world cells.
struct Region {
    x0: i64,
    z0: i64,
    w: usize,
    h: usize,
    g: Vec<f32>,
}

impl Region {
    /// The period-aligned region covering the chunk, grown by `margin` periods.
    fn cover(origin: [i64; 2], size: usize, period: i64, margin: i64) -> Region {
        let lo = |o: i64| o.div_euclid(period) * period - margin * period;
        let hi = |o: i64| (o + size as i64 - 1).div_euclid(period) * period + period + margin * period;
        let (x0, z0) = (lo(origin[0]), lo(origin[1]));
        let (w, h) = ((hi(origin[0]) - x0 + 1) as usize, (hi(origin[1]) - z0 + 1) as usize);
        Region {
            x0,
            z0,
            w,
            h,
            g: vec![0.0; w * h],
        }
    }

    #[inline]
    fn at(&self, x: usize, z: usize) -> f32 {
        self.g[z * self.w + x]
    }

    fn copy_out(&self, origin: [i64; 2], size: usize, out: &mut [f32]) {
        let (dx, dz) = ((origin[0] - self.x0) as usize, (origin[1] - self.z0) as usize);
        for (z, row) in out.chunks_exact_mut(size).enumerate() {
            let src = &self.g[(z + dz) * self.w + dx..][..size];
            for (o, s) in row.iter_mut().zip(src) {
                *o += s;
            }
        }
    }
}

/// A displacement in (−1, 1): magnitude and sign from the lattice hash.
#[inline]
fn displacement(seed: u64, x: i64, z: i64, rise: f32) -> f32 {
    let h = lattice_hash(seed, x, z);
    let m = unit_f32(h);
    if unit_f32(mix64(h)) < rise { m } else { -m }
}

impl Midpoint {
    /// Adds the heights of the `size`² cells at world `origin` to `out`.
    pub(crate) fn add_to(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        let period = i64::from(self.period);
        let diamond = self.variant == MidpointVariant::DiamondSquare;
        let mut r = Region::cover(origin, size, period, i64::from(diamond));
        let p = self.period as usize;
        let (x0, z0) = (r.x0, r.z0);
        let d = |x: usize, z: usize, lambda: f32| lambda * displacement(seed, x0 + x as i64, z0 + z as i64, self.rise);
        for z in (0..r.h).step_by(p) {
            for x in (0..r.w).step_by(p) {
                r.g[z * r.w + x] = self.base + d(x, z, self.amplitude);
            }
        }
        let mut s = p;
        let mut level = 1;
        while s >= 2 {
            let half = s / 2;
            let lambda = self.amplitude * (-self.roughness * level as f32).exp2();
            for z in (half..r.h).step_by(s) {
                for x in (half..r.w).step_by(s) {
                    let avg = (r.at(x - half, z - half)
                        + r.at(x + half, z - half)
                        + r.at(x - half, z + half)
                        + r.at(x + half, z + half))
                        * 0.25;
                    r.g[z * r.w + x] = avg + d(x, z, lambda);
                }
            }
            // Edge midpoints: (x, z) with exactly one coordinate on the coarse lattice.
            for z in (0..r.h).step_by(half) {
                let z_on = z % s == 0;
                let start = if z_on { half } else { 0 };
                for x in (start..r.w).step_by(s) {
                    // Horizontal edge (runs along x) when z is on the lattice.
                    let (e1, e2, c_lo, c_hi, on_tile_border) = if z_on {
                        let lo = z.checked_sub(half).map(|zz| r.at(x, zz));
                        let hi = (z + half < r.h).then(|| r.at(x, z + half));
                        (
                            r.at(x - half, z),
                            r.at(x + half, z),
                            lo,
                            hi,
                            (z0 + z as i64).rem_euclid(period) == 0,
                        )
                    } else {
                        let lo = x.checked_sub(half).map(|xx| r.at(xx, z));
                        let hi = (x + half < r.w).then(|| r.at(x + half, z));
                        (
                            r.at(x, z - half),
                            r.at(x, z + half),
                            lo,
                            hi,
                            (x0 + x as i64).rem_euclid(period) == 0,
                        )
                    };
                    let avg = if diamond {
                        let (sum, n) = [c_lo, c_hi]
                            .into_iter()
                            .flatten()
                            .fold((e1 + e2, 2.0), |(s, n), c| (s + c, n + 1.0));
                        sum / n
                    } else if on_tile_border {
                        (e1 + e2) * 0.5
                    } else {
                        // Interior edges always have their −x/−z square inside the tile.
                        (e1 + e2 + c_lo.unwrap_or(e1)) / 3.0
                    };
                    r.g[z * r.w + x] = avg + d(x, z, lambda);
                }
            }
            s = half;
            level += 1;
        }
        r.copy_out(origin, size, out);
    }
}

impl RandomAdditions {
    /// Adds the heights of the `size`² cells at world `origin` to `out`.
    pub(crate) fn add_to(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        let period = i64::from(self.period);
        let mut r = Region::cover(origin, size, period, 0);
        let p = self.period as usize;
        let (x0, z0) = (r.x0, r.z0);
        let d = |lvl: u64, x: usize, z: usize, lambda: f32| {
            lambda * displacement(mix64(seed ^ lvl), x0 + x as i64, z0 + z as i64, 0.5)
        };
        for z in (0..r.h).step_by(p) {
            for x in (0..r.w).step_by(p) {
                r.g[z * r.w + x] = self.base + d(0, x, z, self.amplitude);
            }
        }
        let mut s = p;
        let mut level = 1u64;
        while s >= 2 {
            let half = s / 2;
            // Interpolate the new points from the coarser lattice only.
            for z in (0..r.h).step_by(half) {
                for x in (0..r.w).step_by(half) {
                    let (xo, zo) = (x % s == 0, z % s == 0);
                    let v = match (xo, zo) {
                        (true, true) => continue,
                        (true, false) => (r.at(x, z - half) + r.at(x, z + half)) * 0.5,
                        (false, true) => (r.at(x - half, z) + r.at(x + half, z)) * 0.5,
                        (false, false) => {
                            (r.at(x - half, z - half)
                                + r.at(x + half, z - half)
                                + r.at(x - half, z + half)
                                + r.at(x + half, z + half))
                                * 0.25
                        }
                    };
                    r.g[z * r.w + x] = v;
                }
            }
            let lambda = self.amplitude * (-self.roughness * level as f32).exp2();
            for z in (0..r.h).step_by(half) {
                for x in (0..r.w).step_by(half) {
                    r.g[z * r.w + x] += d(level, x, z, lambda);
                }
            }
            s = half;
            level += 1;
        }
        r.copy_out(origin, size, out);
    }
}
