//! The circle algorithm (thesis §2.2.3, eq. 2.11): cosine bumps pressed into
//! the plane, few and large first, then more and smaller.
//!
//! Bump centres are scattered per world tile (one candidate per tile of side
//! 2·radius, kept with probability `density`), so every chunk sees the same
//! bumps, including those centred in a neighbouring chunk.

use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{mix64, unit_f32};

use super::noise::lattice_hash;

/// Parameters of the circle generator.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Circles {
    /// Radius of the first round, cells. Default: 64.
    pub radius: f32,
    /// Height factor of the first round (a bump peaks at twice this). Default: 10.
    pub height: f32,
    /// Rounds; each halves radius and height factor. Default: 5.
    pub rounds: u32,
    /// Probability that a tile holds a bump. Default: 0.5.
    pub density: f32,
    /// Probability that a bump is pressed from below (negative). Default: 0.3.
    pub lower: f32,
}

impl Default for Circles {
    fn default() -> Self {
        Self {
            radius: 64.0,
            height: 10.0,
            rounds: 5,
            density: 0.5,
            lower: 0.3,
        }
    }
}

impl Circles {
    /// Adds the heights of the `size`² cells at world `origin` to `out`.
    pub(crate) fn add_to(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        let mut radius = f64::from(self.radius);
        let mut factor = self.height;
        for round in 0..u64::from(self.rounds) {
            if radius < 0.5 {
                break;
            }
            let tile = (2.0 * radius).ceil() as i64;
            let s = mix64(seed ^ round);
            let reach = radius.ceil() as i64;
            let t = |o: i64| (o - reach).div_euclid(tile)..=(o + size as i64 + reach).div_euclid(tile);
            for tz in t(origin[1]) {
                for tx in t(origin[0]) {
                    let h = lattice_hash(s, tx, tz);
                    if unit_f32(h) >= self.density {
                        continue;
                    }
                    let h1 = mix64(h);
                    let h2 = mix64(h1);
                    let cx = (tx * tile) as f64 + f64::from(unit_f32(h1)) * tile as f64;
                    let cz = (tz * tile) as f64 + f64::from(unit_f32(h2)) * tile as f64;
                    let sign = if unit_f32(mix64(h2)) < self.lower { -1.0 } else { 1.0 };
                    self.bump(origin, size, [cx, cz], radius, sign * factor, out);
                }
            }
            radius *= 0.5;
            factor *= 0.5;
        }
    }

    fn bump(&self, origin: [i64; 2], size: usize, c: [f64; 2], radius: f64, factor: f32, out: &mut [f32]) {
        let lx = ((c[0] - radius).floor() as i64 - origin[0]).max(0);
        let hx = ((c[0] + radius).ceil() as i64 - origin[0]).min(size as i64 - 1);
        let lz = ((c[1] - radius).floor() as i64 - origin[1]).max(0);
        let hz = ((c[1] + radius).ceil() as i64 - origin[1]).min(size as i64 - 1);
        for z in lz..=hz {
            for x in lx..=hx {
                let dx = (origin[0] + x) as f64 - c[0];
                let dz = (origin[1] + z) as f64 - c[1];
                let d = (dx * dx + dz * dz).sqrt();
                if d < radius {
                    out[z as usize * size + x as usize] +=
                        (((d / radius * std::f64::consts::PI).cos() + 1.0) as f32) * factor;
                }
            }
        }
    }
}
