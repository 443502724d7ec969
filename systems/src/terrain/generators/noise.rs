//! Lattice noise sampled in world coordinates: the thesis's "Perlin noise"
//! (value noise with cosine interpolation, §2.2.2), gradient noise with fBm,
//! and Musgrave's ridged multifractal.
//!
//! Lattice values are pure functions of (seed, octave, lattice point), so
//! every chunk computes the same value at a shared world cell.

use std::borrow::BorrowMut;

use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{mix64, unit_f32};

use crate::registers::{Kernel, Registers};

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
        self.height(self.octaves(seed), x, z)
    }

    /// Heights at world cells, faster than [`ValueNoise::sample`] for cells
    /// sampled in a row: each octave keeps its lattice cell's corners
    /// ([`Corners`]) and its weight across the row, a cosine per sample.
    pub(crate) fn sampler(&self, seed: u64) -> impl FnMut(f64, f64) -> f32 + use<> {
        let (noise, mut octaves) = (*self, self.octaves(seed).collect::<Vec<_>>());
        move |x, z| noise.height(octaves.iter_mut(), x, z)
    }

    /// Each octave, fresh: frequency f·2^i and amplitude A·p^i.
    fn octaves(&self, seed: u64) -> impl Iterator<Item = ValueOctave> + use<> {
        let (frequency, amplitude, persistence) = (self.frequency, self.amplitude, self.persistence);
        (0..self.octaves).scan((f64::from(frequency), f64::from(amplitude)), move |(freq, amp), o| {
            let octave = ValueOctave {
                corners: Corners::new(mix64(seed ^ u64::from(o))),
                freq: *freq,
                amp: *amp,
                across: None,
            };
            *freq *= 2.0;
            *amp *= f64::from(persistence);
            Some(octave)
        })
    }

    /// The height at `(x, z)` over `octaves`, fresh or kept.
    fn height(&self, octaves: impl Iterator<Item = impl BorrowMut<ValueOctave>>, x: f64, z: f64) -> f32 {
        let mut sum = 0.0f64;
        for mut octave in octaves {
            let ValueOctave {
                corners,
                freq,
                amp,
                across,
            } = octave.borrow_mut();
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
        (sum * f64::from(self.scale)) as f32
    }
}

/// One octave of value noise as a sampler keeps it.
struct ValueOctave {
    corners: Corners<f64>,
    freq: f64,
    amp: f64,
    /// The last sample's lattice coordinate v and its cosine weight.
    across: Option<(f64, f64)>,
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
    let g = corners.at(x0 as i64, z0 as i64, |h| GRADIENTS[(h & 7) as usize]);
    let fz = v - z0;
    blend(u - x0, &Across::of(g, fz), fade(fz))
}

/// What a lattice cell's corners give every cell of a row through it: the gradients' x
/// components, and their z components times the row's offsets from the corners along z.
struct Across {
    gx: [f64; 4],
    gz_dz: [f64; 4],
}

impl Across {
    /// For gradients `g` (in the order of [`Corners::at`]) and offset `fz` along z.
    #[inline(always)]
    fn of(g: [(f64, f64); 4], fz: f64) -> Self {
        Across {
            gx: g.map(|g| g.0),
            gz_dz: [g[0].1 * fz, g[1].1 * fz, g[2].1 * (fz - 1.0), g[3].1 * (fz - 1.0)],
        }
    }
}

/// The noise at offset `fx` along x in a lattice cell `across` describes, with the fade
/// `sz` of its row: the dot products with the four corners' gradients, blended along x
/// then z.
#[inline(always)]
fn blend(fx: f64, across: &Across, sz: f64) -> f64 {
    let Across { gx, gz_dz } = across;
    let sx = fade(fx);
    let d00 = gx[0] * fx + gz_dz[0];
    let d10 = gx[1] * (fx - 1.0) + gz_dz[1];
    let d01 = gx[2] * fx + gz_dz[2];
    let d11 = gx[3] * (fx - 1.0) + gz_dz[3];
    let a = d00 + sx * (d10 - d00);
    let b = d01 + sx * (d11 - d01);
    (a + sz * (b - a)) * std::f64::consts::SQRT_2
}

/// One octave of gradient noise as a sampler keeps it: its lattice cell's
/// corners, frequency and weight in the sum.
struct GradientOctave {
    corners: Corners<(f64, f64)>,
    freq: f64,
    weight: f64,
}

impl GradientOctave {
    /// The octave's noise at world cell `(x, z)`.
    fn at(&mut self, x: f64, z: f64) -> f64 {
        gradient(&mut self.corners, x * self.freq, z * self.freq)
    }

    /// The octave's noise at the `n` world cells of row `z` from cell `x0` on, into
    /// `scratch.noise`: the bits [`Self::at`] gives each cell.
    fn row(&mut self, x0: i64, z: i64, n: usize, scratch: &mut RowScratch, registers: Registers) {
        registers.run(OctaveRow {
            octave: self,
            x0,
            z,
            n,
            s: scratch,
        });
    }
}

/// Buffers of a row of cells for [`GradientOctave::row`], one lane per cell.
#[derive(Default)]
struct RowScratch {
    /// The cell's lattice coordinate along x, rounded down.
    floor: Vec<f64>,
    /// Its offset in that lattice cell.
    fx: Vec<f64>,
    /// The octave's noise.
    noise: Vec<f64>,
}

/// [`GradientOctave::row`] as lane code: the row's lattice coordinate along z and its fade
/// are worked out once, each lattice cell's gradients once for the run of cells in it, and
/// every cell's [`blend`] in lanes across its run.
struct OctaveRow<'a> {
    octave: &'a mut GradientOctave,
    x0: i64,
    z: i64,
    n: usize,
    s: &'a mut RowScratch,
}

impl Kernel for OctaveRow<'_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        let Self { octave, x0, z, n, s } = self;
        let v = z as f64 * octave.freq;
        let z0 = v.floor();
        let fz = v - z0;
        let (j, sz) = (z0 as i64, fade(fz));
        for lanes in [&mut s.floor, &mut s.fx, &mut s.noise] {
            lanes.resize(n, 0.0);
        }
        let (floor, fx, noise) = (&mut s.floor[..n], &mut s.fx[..n], &mut s.noise[..n]);
        for k in 0..n {
            let u = (x0 + k as i64) as f64 * octave.freq;
            floor[k] = u.floor();
            fx[k] = u - floor[k];
        }
        let mut start = 0;
        while start < n {
            let cell = floor[start];
            // At least the cell itself, even where its coordinate is not a number.
            let end = start + 1 + floor[start + 1..].iter().take_while(|&&f| f == cell).count();
            let g = octave.corners.at(cell as i64, j, |h| GRADIENTS[(h & 7) as usize]);
            let across = Across::of(g, fz);
            for (noise, &fx) in noise[start..end].iter_mut().zip(&fx[start..end]) {
                *noise = blend(fx, &across, sz);
            }
            start = end;
        }
    }
}

/// The quintic fade of gradient noise: 0 at t = 0, 1 at t = 1, flat at both.
#[inline(always)]
fn fade(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Each of `octaves` at the `n` cells of row `z` from world cell `x0` on, in order: `each`
/// gets the octave's weight and its noise at every cell.
fn octave_rows(
    octaves: impl Iterator<Item = GradientOctave>,
    x0: i64,
    z: i64,
    n: usize,
    mut each: impl FnMut(f64, &[f64]),
) {
    let (registers, mut scratch) = (Registers::best(), RowScratch::default());
    for mut octave in octaves {
        octave.row(x0, z, n, &mut scratch, registers);
        each(octave.weight, &scratch.noise);
    }
}

/// Octaves `0..count` of seed `seed`, fresh: frequency `frequency`·`lacunarity`^i
/// and weight `weight(i)`.
fn gradient_octaves(
    seed: u64,
    count: u32,
    frequency: f32,
    lacunarity: f32,
    weight: impl Fn(u32) -> f64,
) -> impl Iterator<Item = GradientOctave> {
    (0..count).scan(f64::from(frequency), move |freq, o| {
        let octave = GradientOctave {
            corners: Corners::new(mix64(seed ^ u64::from(o))),
            freq: *freq,
            weight: weight(o),
        };
        *freq *= f64::from(lacunarity);
        Some(octave)
    })
}

impl Fbm {
    /// Height at world cell `(x, z)`.
    pub fn sample(&self, seed: u64, x: f64, z: f64) -> f32 {
        Self::height(self.octaves(seed), x, z)
    }

    /// Heights at world cells, faster than [`Fbm::sample`] for cells sampled
    /// in a row: each octave keeps its lattice cell's corners ([`Corners`]).
    pub(crate) fn sampler(&self, seed: u64) -> impl FnMut(f64, f64) -> f32 + use<> {
        let mut octaves: Vec<_> = self.octaves(seed).collect();
        move |x, z| Self::height(octaves.iter_mut(), x, z)
    }

    /// Adds the heights of the cells of row `z` from world cell `x0` on to `out`, each the
    /// bits of [`Fbm::sample`], octave by octave over the row in lanes.
    pub(crate) fn add_row(&self, seed: u64, x0: i64, z: i64, out: &mut [f32]) {
        let mut sum = vec![0.0f64; out.len()];
        octave_rows(self.octaves(seed), x0, z, out.len(), |weight, noise| {
            for (sum, &noise) in sum.iter_mut().zip(noise) {
                *sum += weight * noise;
            }
        });
        for (o, &sum) in out.iter_mut().zip(&sum) {
            *o += sum as f32;
        }
    }

    /// Each octave, fresh, weighted A·gain^i.
    fn octaves(&self, seed: u64) -> impl Iterator<Item = GradientOctave> + use<> {
        let (amplitude, gain) = (f64::from(self.amplitude), f64::from(self.gain));
        // A·gain^i as repeated products, the amplitudes the sum always had.
        let amp = move |o: u32| (0..o).fold(amplitude, |a, _| a * gain);
        gradient_octaves(seed, self.octaves, self.frequency, self.lacunarity, amp)
    }

    /// The height at `(x, z)` over `octaves`, fresh or kept.
    fn height(octaves: impl Iterator<Item = impl BorrowMut<GradientOctave>>, x: f64, z: f64) -> f32 {
        let mut sum = 0.0;
        for mut octave in octaves {
            let octave = octave.borrow_mut();
            sum += octave.weight * octave.at(x, z);
        }
        sum as f32
    }
}

impl Ridged {
    /// Height at world cell `(x, z)`.
    pub fn sample(&self, seed: u64, x: f64, z: f64) -> f32 {
        self.height(self.octaves(seed), x, z)
    }

    /// Adds the heights of the cells of row `z` from world cell `x0` on to `out`, each the
    /// bits of [`Ridged::sample`], octave by octave over the row in lanes.
    pub(crate) fn add_row(&self, seed: u64, x0: i64, z: i64, out: &mut [f32]) {
        let (mut sum, mut weight) = (vec![0.0f64; out.len()], vec![1.0f64; out.len()]);
        let (offset, gain) = (f64::from(self.offset), f64::from(self.gain));
        octave_rows(self.octaves(seed), x0, z, out.len(), |spectral, noise| {
            for ((sum, weight), &noise) in sum.iter_mut().zip(&mut weight).zip(noise) {
                let signal = (offset - noise.abs()).powi(2) * *weight;
                *weight = (signal * gain).clamp(0.0, 1.0);
                *sum += signal * spectral;
            }
        });
        for (o, &sum) in out.iter_mut().zip(&sum) {
            *o += (sum * f64::from(self.amplitude)) as f32;
        }
    }

    /// Each octave, fresh, weighted lacunarity^(−H·i).
    fn octaves(&self, seed: u64) -> impl Iterator<Item = GradientOctave> + use<> {
        let (lacunarity, h) = (f64::from(self.lacunarity), f64::from(self.h));
        let spectral = move |o: u32| lacunarity.powf(-h * f64::from(o));
        gradient_octaves(seed, self.octaves, self.frequency, self.lacunarity, spectral)
    }

    /// The height at `(x, z)` over fresh `octaves`.
    fn height(&self, octaves: impl Iterator<Item = GradientOctave>, x: f64, z: f64) -> f32 {
        let mut sum = 0.0;
        let mut weight = 1.0f64;
        let (offset, gain) = (f64::from(self.offset), f64::from(self.gain));
        for mut octave in octaves {
            let signal = (offset - octave.at(x, z).abs()).powi(2) * weight;
            weight = (signal * gain).clamp(0.0, 1.0);
            sum += signal * octave.weight;
        }
        (sum * f64::from(self.amplitude)) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::generators::Source;

    /// A sampler kept from sample to sample gives every cell the bits that
    /// `sample`, whose octaves start fresh at every cell, gives it: across lattice cells of every
    /// octave and both signs of the coordinates, cells taken row by row or
    /// rows in turn.
    #[test]
    fn kept_samplers_match_single_samples() {
        let fbm = Fbm {
            frequency: 0.03,
            octaves: 5,
            ..Fbm::default()
        };
        let value = ValueNoise::default();
        let (mut f, mut v) = (fbm.sampler(7), value.sampler(7));
        // Row by row, as chunks are sampled, then column by column.
        let rows = [-70, -69, 3, 4, 40]
            .into_iter()
            .flat_map(|z| (-300..300).map(move |x| (x, z)));
        let columns = (-300..300).flat_map(|x| [-70, -69, 3, 4, 40].map(|z| (x, z)));
        for (x, z) in rows.chain(columns) {
            let (x, z) = (f64::from(x), f64::from(z));
            assert_eq!(f(x, z).to_bits(), fbm.sample(7, x, z).to_bits(), "fbm at {x}, {z}");
            assert_eq!(v(x, z).to_bits(), value.sample(7, x, z).to_bits(), "value at {x}, {z}");
        }
        assert_ne!(fbm.sample(7, 10.5, 3.0), fbm.sample(7, 40.5, 3.0));
    }

    /// Rows added in lanes give every cell the bits of adding its single sample: across
    /// lattice cells of every octave, both signs of the coordinates, octaves far finer than a
    /// cell or beyond any number, and rows of any length. Every build this CPU runs gives an
    /// octave's row the bits of its single samples.
    #[test]
    fn rows_in_lanes_add_single_samples() {
        for registers in Registers::all_available() {
            for (x0, z) in [(-300i64, -70i64), (5, 1 << 20)] {
                // Twelve octaves reach about 100 lattice cells per world cell.
                let mut octaves: Vec<_> = gradient_octaves(3, 12, 0.02, 2.3, |_| 1.0).collect();
                let mut scratch = RowScratch::default();
                for octave in &mut octaves {
                    octave.row(x0, z, 257, &mut scratch, registers);
                    for (k, noise) in scratch.noise.iter().enumerate() {
                        let (x, z) = ((x0 + k as i64) as f64, z as f64);
                        assert_eq!(noise.to_bits(), octave.at(x, z).to_bits(), "{registers:?} at {x}, {z}");
                    }
                }
            }
        }
        let fine = |frequency, lacunarity, octaves| Fbm {
            frequency,
            lacunarity,
            octaves,
            ..Fbm::default()
        };
        let rough = |frequency, gain| Ridged {
            frequency,
            gain,
            ..Ridged::default()
        };
        let sources = [
            Source::Fbm(fine(0.03, 2.0, 5)),
            Source::Fbm(fine(0.7, 3.1, 9)),
            Source::Ridged(rough(0.02, 2.0)),
            Source::Ridged(rough(1.3, 5.0)),
            // Octaves past the range of f64, whose lattice coordinates are not numbers.
            Source::Fbm(fine(1.0e30, 1.0e30, 12)),
        ];
        let single = |source: &Source, seed, x, z| match source {
            Source::Fbm(n) => n.sample(seed, x, z),
            Source::Ridged(n) => n.sample(seed, x, z),
            _ => unreachable!("only gradient noise here"),
        };
        for (origin, size) in [
            ([-300, -70], 160),
            ([-1, -1], 2),
            ([0, 0], 1),
            ([17, 3], 33),
            ([1 << 30, -(1 << 31)], 9),
        ] {
            for (seed, source) in [7, 8]
                .into_iter()
                .flat_map(|seed| sources.iter().map(move |s| (seed, s)))
            {
                let before = |k: usize| k as f32 * 0.25 - 3.0;
                let mut out: Vec<f32> = (0..size * size).map(before).collect();
                source.add_to(seed, origin, size, &mut out);
                for (k, got) in out.iter().enumerate() {
                    let (x, z) = (
                        (origin[0] + (k % size) as i64) as f64,
                        (origin[1] + (k / size) as i64) as f64,
                    );
                    let want = before(k) + single(source, seed, x, z);
                    assert_eq!(got.to_bits(), want.to_bits(), "{source:?} at {x}, {z}, seed {seed}");
                }
            }
        }
    }
}
