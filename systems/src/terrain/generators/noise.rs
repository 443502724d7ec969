//! Lattice noise sampled in world coordinates: the thesis's "Perlin noise"
//! (value noise with cosine interpolation, §2.2.2), gradient noise with fBm,
//! and Musgrave's ridged multifractal.
//!
//! Lattice values are pure functions of (seed, octave, lattice point), so
//! every chunk computes the same value at a shared world cell.

use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{mix64, unit_f32};

/// Hash of a lattice point.
#[inline]
pub(crate) fn lattice_hash(seed: u64, x: i64, z: i64) -> u64 {
    mix64(mix64(seed ^ x as u64) ^ (z as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The thesis's value noise: octave i has frequency f·2^i and values in
/// [0, 2·A·p^i) (the thesis's [0, 2h] range), cosine-interpolated (eq. 2.8).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValueNoise {
    /// Octave-0 frequency in cycles per cell (the thesis's "Frequenz"). Default: 0.0325.
    pub frequency: f32,
    /// Octave-0 amplitude A (the thesis's "Amplitude"). Default: 0.55.
    pub amplitude: f32,
    /// Amplitude ratio p between octaves (eq. 2.10). Default: 0.55.
    pub persistence: f32,
    /// Number of octaves (the thesis does not say). Default: 5.
    pub octaves: u32,
    /// Height units per noise unit. Default: 100.
    pub scale: f32,
}

impl Default for ValueNoise {
    fn default() -> Self {
        Self {
            frequency: 0.0325,
            amplitude: 0.55,
            persistence: 0.55,
            octaves: 5,
            scale: 100.0,
        }
    }
}

/// Cosine interpolation weight (eq. 2.8): 0 at t = 0, 1 at t = 1.
#[inline]
pub(crate) fn cosine_weight(t: f64) -> f64 {
    (1.0 - (t * std::f64::consts::PI).cos()) * 0.5
}

impl ValueNoise {
    /// Height at world cell `(x, z)`.
    pub fn sample(&self, seed: u64, x: f64, z: f64) -> f32 {
        let mut sum = 0.0f64;
        let mut freq = f64::from(self.frequency);
        let mut amp = f64::from(self.amplitude);
        for o in 0..self.octaves {
            let (u, v) = (x * freq, z * freq);
            let (x0, z0) = (u.floor(), v.floor());
            let mut corners = Corners::new(mix64(seed ^ u64::from(o)));
            let [h00, h10, h01, h11] = corners.at(x0 as i64, z0 as i64, |h| f64::from(unit_f32(h)));
            let (tx, tz) = (cosine_weight(u - x0), cosine_weight(v - z0));
            let a = h00 * (1.0 - tx) + h10 * tx;
            let b = h01 * (1.0 - tx) + h11 * tx;
            sum += 2.0 * amp * (a * (1.0 - tz) + b * tz);
            freq *= 2.0;
            amp *= f64::from(self.persistence);
        }
        (sum * f64::from(self.scale)) as f32
    }

    /// Heights at world cells, faster than [`ValueNoise::sample`] for cells
    /// sampled in a row ([`Corners`]; each octave's weight across the row is
    /// kept too, a cosine per sample), with its results.
    pub(crate) fn sampler(&self, seed: u64) -> impl FnMut(f64, f64) -> f32 + use<> {
        let (mut freq, mut amp) = (f64::from(self.frequency), f64::from(self.amplitude));
        let mut octaves = Vec::new();
        for o in 0..self.octaves {
            octaves.push((Corners::new(mix64(seed ^ u64::from(o))), freq, amp, None));
            freq *= 2.0;
            amp *= f64::from(self.persistence);
        }
        let scale = f64::from(self.scale);
        move |x, z| {
            let mut sum = 0.0f64;
            for (corners, freq, amp, across) in &mut octaves {
                let (u, v) = (x * *freq, z * *freq);
                let (x0, z0) = (u.floor(), v.floor());
                let [h00, h10, h01, h11] = corners.at(x0 as i64, z0 as i64, |h| f64::from(unit_f32(h)));
                let tz = match *across {
                    Some((at, tz)) if at == v => tz,
                    _ => cosine_weight(v - z0),
                };
                *across = Some((v, tz));
                let tx = cosine_weight(u - x0);
                let a = h00 * (1.0 - tx) + h10 * tx;
                let b = h01 * (1.0 - tx) + h11 * tx;
                sum += 2.0 * *amp * (a * (1.0 - tz) + b * tz);
            }
            (sum * scale) as f32
        }
    }
}

/// Gradient (Perlin) noise summed as fractional Brownian motion:
/// Σ A·gain^i·noise(f·lacunarity^i·x), roughly in [−A/(1−gain), A/(1−gain)].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Fbm {
    /// Octave-0 frequency, cycles per cell. Default: 0.01.
    pub frequency: f32,
    /// Octave-0 amplitude, height units. Default: 50.
    pub amplitude: f32,
    /// Octaves. Default: 6.
    pub octaves: u32,
    /// Frequency ratio between octaves. Default: 2.
    pub lacunarity: f32,
    /// Amplitude ratio between octaves. Default: 0.5.
    pub gain: f32,
}

impl Default for Fbm {
    fn default() -> Self {
        Self {
            frequency: 0.01,
            amplitude: 50.0,
            octaves: 6,
            lacunarity: 2.0,
            gain: 0.5,
        }
    }
}

/// Musgrave's ridged multifractal over gradient noise: each octave's signal is
/// (offset − |noise|)², weighted by the previous signal times `gain`
/// (clamped to [0, 1]) and by frequency^(−H). Non-negative.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ridged {
    /// Octave-0 frequency, cycles per cell. Default: 0.005.
    pub frequency: f32,
    /// Height units per unit of the sum. Default: 40.
    pub amplitude: f32,
    /// Octaves. Default: 6.
    pub octaves: u32,
    /// Frequency ratio between octaves. Default: 2.
    pub lacunarity: f32,
    /// Weight feedback gain. Default: 2.
    pub gain: f32,
    /// Ridge offset. Default: 1.
    pub offset: f32,
    /// Fractal increment H. Default: 1.
    pub h: f32,
}

impl Default for Ridged {
    fn default() -> Self {
        Self {
            frequency: 0.005,
            amplitude: 40.0,
            octaves: 6,
            lacunarity: 2.0,
            gain: 2.0,
            offset: 1.0,
            h: 1.0,
        }
    }
}

const GRADIENTS: [(f64, f64); 8] = [
    (1.0, 0.0),
    (-1.0, 0.0),
    (0.0, 1.0),
    (0.0, -1.0),
    (std::f64::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2),
    (-std::f64::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2),
    (std::f64::consts::FRAC_1_SQRT_2, -std::f64::consts::FRAC_1_SQRT_2),
    (-std::f64::consts::FRAC_1_SQRT_2, -std::f64::consts::FRAC_1_SQRT_2),
];

/// The values at the corners of the lattice cell an octave sampled last: a
/// row of world cells takes many samples in each lattice cell of an octave
/// of low frequency, and hashing the four corners took most of a sample's
/// time.
struct Corners<T> {
    seed: u64,
    /// The lattice cell whose corners `values` holds.
    cell: Option<(i64, i64)>,
    values: [T; 4],
}

impl<T: Copy + Default> Corners<T> {
    /// An octave's corners, for lattice points hashed with `seed`.
    fn new(seed: u64) -> Self {
        Corners {
            seed,
            cell: None,
            values: [T::default(); 4],
        }
    }

    /// The values at (i, j), (i + 1, j), (i, j + 1) and (i + 1, j + 1),
    /// each `value` of its lattice point's hash.
    fn at(&mut self, i: i64, j: i64, value: impl Fn(u64) -> T) -> [T; 4] {
        if self.cell != Some((i, j)) {
            let corner = |a: i64, b: i64| value(lattice_hash(self.seed, a, b));
            self.values = [corner(i, j), corner(i + 1, j), corner(i, j + 1), corner(i + 1, j + 1)];
            self.cell = Some((i, j));
        }
        self.values
    }
}

/// 2D gradient noise in about [−1, 1], zero at lattice points, at lattice
/// coordinates `(u, v)` of an octave with gradients at `corners`.
fn gradient(corners: &mut Corners<(f64, f64)>, u: f64, v: f64) -> f64 {
    let (x0, z0) = (u.floor(), v.floor());
    let [g00, g10, g01, g11] = corners.at(x0 as i64, z0 as i64, |h| GRADIENTS[(h & 7) as usize]);
    let (fx, fz) = (u - x0, v - z0);
    let dot = |(gx, gz): (f64, f64), dx: f64, dz: f64| gx * dx + gz * dz;
    let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (sx, sz) = (fade(fx), fade(fz));
    let a = dot(g00, fx, fz) + sx * (dot(g10, fx - 1.0, fz) - dot(g00, fx, fz));
    let b = dot(g01, fx, fz - 1.0) + sx * (dot(g11, fx - 1.0, fz - 1.0) - dot(g01, fx, fz - 1.0));
    (a + sz * (b - a)) * std::f64::consts::SQRT_2
}

impl Fbm {
    /// Height at world cell `(x, z)`.
    pub fn sample(&self, seed: u64, x: f64, z: f64) -> f32 {
        let mut sum = 0.0;
        let mut freq = f64::from(self.frequency);
        let mut amp = f64::from(self.amplitude);
        for o in 0..self.octaves {
            let mut corners = Corners::new(mix64(seed ^ u64::from(o)));
            sum += amp * gradient(&mut corners, x * freq, z * freq);
            freq *= f64::from(self.lacunarity);
            amp *= f64::from(self.gain);
        }
        sum as f32
    }

    /// Heights at world cells, faster than [`Fbm::sample`] for cells sampled
    /// in a row ([`Corners`]), with its results.
    pub(crate) fn sampler(&self, seed: u64) -> impl FnMut(f64, f64) -> f32 + use<> {
        let (mut freq, mut amp) = (f64::from(self.frequency), f64::from(self.amplitude));
        let mut octaves = Vec::new();
        for o in 0..self.octaves {
            octaves.push((Corners::new(mix64(seed ^ u64::from(o))), freq, amp));
            freq *= f64::from(self.lacunarity);
            amp *= f64::from(self.gain);
        }
        move |x, z| {
            let mut sum = 0.0;
            for (corners, freq, amp) in &mut octaves {
                sum += *amp * gradient(corners, x * *freq, z * *freq);
            }
            sum as f32
        }
    }
}

impl Ridged {
    /// Height at world cell `(x, z)`.
    pub fn sample(&self, seed: u64, x: f64, z: f64) -> f32 {
        let mut sum = 0.0;
        let mut freq = f64::from(self.frequency);
        let mut weight = 1.0f64;
        let (offset, gain) = (f64::from(self.offset), f64::from(self.gain));
        for o in 0..self.octaves {
            let mut corners = Corners::new(mix64(seed ^ u64::from(o)));
            let n = gradient(&mut corners, x * freq, z * freq);
            let signal = (offset - n.abs()).powi(2) * weight;
            weight = (signal * gain).clamp(0.0, 1.0);
            sum += signal * f64::from(self.lacunarity).powf(-f64::from(self.h) * f64::from(o));
            freq *= f64::from(self.lacunarity);
        }
        (sum * f64::from(self.amplitude)) as f32
    }

    /// Heights at world cells, faster than [`Ridged::sample`] for cells
    /// sampled in a row ([`Corners`]; each octave's spectral weight is
    /// worked out once), with its results.
    pub(crate) fn sampler(&self, seed: u64) -> impl FnMut(f64, f64) -> f32 + use<> {
        let mut freq = f64::from(self.frequency);
        let mut octaves = Vec::new();
        for o in 0..self.octaves {
            let spectral = f64::from(self.lacunarity).powf(-f64::from(self.h) * f64::from(o));
            octaves.push((Corners::new(mix64(seed ^ u64::from(o))), freq, spectral));
            freq *= f64::from(self.lacunarity);
        }
        let (offset, gain, amplitude) = (f64::from(self.offset), f64::from(self.gain), f64::from(self.amplitude));
        move |x, z| {
            let mut sum = 0.0;
            let mut weight = 1.0f64;
            for (corners, freq, spectral) in &mut octaves {
                let n = gradient(corners, x * *freq, z * *freq);
                let signal = (offset - n.abs()).powi(2) * weight;
                weight = (signal * gain).clamp(0.0, 1.0);
                sum += signal * *spectral;
            }
            (sum * amplitude) as f32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sampler kept from sample to sample gives every cell the bits that
    /// `sample`, which keeps nothing, gives it: across lattice cells of every
    /// octave and both signs of the coordinates, cells taken row by row or
    /// rows in turn.
    #[test]
    fn kept_samplers_match_single_samples() {
        let fbm = Fbm {
            frequency: 0.03,
            octaves: 5,
            ..Fbm::default()
        };
        let ridged = Ridged {
            frequency: 0.02,
            ..Ridged::default()
        };
        let value = ValueNoise::default();
        let (mut f, mut r, mut v) = (fbm.sampler(7), ridged.sampler(7), value.sampler(7));
        // Row by row, as chunks are sampled, then column by column.
        let rows = [-70, -69, 3, 4, 40]
            .into_iter()
            .flat_map(|z| (-300..300).map(move |x| (x, z)));
        let columns = (-300..300).flat_map(|x| [-70, -69, 3, 4, 40].map(|z| (x, z)));
        for (x, z) in rows.chain(columns) {
            let (x, z) = (f64::from(x), f64::from(z));
            assert_eq!(f(x, z).to_bits(), fbm.sample(7, x, z).to_bits(), "fbm at {x}, {z}");
            assert_eq!(
                r(x, z).to_bits(),
                ridged.sample(7, x, z).to_bits(),
                "ridged at {x}, {z}"
            );
            assert_eq!(v(x, z).to_bits(), value.sample(7, x, z).to_bits(), "value at {x}, {z}");
        }
        assert_ne!(fbm.sample(7, 10.5, 3.0), fbm.sample(7, 40.5, 3.0));
    }
}
