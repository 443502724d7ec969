//! Generators of the primordial landscape ("Urlandschaft"), sampled in world
//! cells so neighbouring chunks agree at their borders, and the thesis's
//! multi-layer generator (§3.2) that stacks one thickness map per rock layer.

mod basin;
mod circles;
mod midpoint;
mod noise;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, mix64, stream_seed};
use sylva_runtime::{FieldError, Validate};

pub(crate) use basin::catmull_rom;
pub use basin::{Basin, MAX_BASIN_NODES};
pub use circles::Circles;
pub use midpoint::{Midpoint, MidpointVariant, RandomAdditions};
pub use noise::{Fbm, Ridged, ValueNoise};

use super::columns::TerrainChunk;
use super::materials::Material;

/// A height field over the world's cells.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// The same height everywhere.
    Constant(f32),
    /// `base + slope.x·x + slope.z·z` in world cells.
    Plane {
        /// Height at world cell (0, 0).
        base: f32,
        /// Rise per cell along x and z.
        slope: [f32; 2],
    },
    /// Midpoint displacement (thesis 3-point variant or diamond-square).
    Midpoint(Midpoint),
    /// The thesis's "Perlin noise": value noise with cosine interpolation.
    ValueNoise(ValueNoise),
    /// Gradient noise, fBm.
    Fbm(Fbm),
    /// Ridged multifractal.
    Ridged(Ridged),
    /// Successive random additions.
    RandomAdditions(RandomAdditions),
    /// The circle algorithm.
    Circles(Circles),
    /// A drainage basin solved by stream-power erosion (a fixed square from
    /// world cell (0, 0); nothing outside it).
    Basin(Basin),
    /// The sum of several sources.
    Sum(Vec<Source>),
}

/// How thick a generated layer is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Thickness {
    /// This fraction of the generator's `height` map.
    Share(f32),
    /// Its own map (the multi-layer generator); negative values give no layer.
    Map(Source),
}

/// One generated rock layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    /// Rock type.
    pub material: Material,
    /// Thickness per cell.
    pub thickness: Thickness,
}

/// The layers of the primordial landscape, bottom first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GeneratorParams {
    /// Total height map that `Share` layers divide. Default: value noise
    /// (frequency 0.0325, amplitude 0.55, persistence 0.55: thesis landscape 2).
    pub height: Option<Source>,
    /// Layers, bottom first. Default: granite, marble, limestone, sandstone
    /// with shares 0.6, 0.2, 0.15, 0.05 (thesis §5.3).
    pub layers: Vec<LayerSpec>,
}

impl Default for GeneratorParams {
    fn default() -> Self {
        let share = |material, s| LayerSpec {
            material,
            thickness: Thickness::Share(s),
        };
        Self {
            height: Some(Source::ValueNoise(ValueNoise::default())),
            layers: vec![
                share(Material::Granite, 0.6),
                share(Material::Marble, 0.2),
                share(Material::Limestone, 0.15),
                share(Material::Sandstone, 0.05),
            ],
        }
    }
}

/// Largest lattice period of midpoint displacement and random additions, in
/// cells: a chunk computes up to three periods beyond its own size.
const MAX_PERIOD: u32 = 4096;

/// Most octaves, rounds or sum terms a source may ask for.
const MAX_TERMS: u32 = 64;

/// [`FieldError::check`] with a fixed message.
fn check(ok: bool, field: &str, msg: impl Into<String>) -> Result<(), FieldError> {
    FieldError::check(ok, field, || msg.into())
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Source {
    /// Adds this source's heights for the `size`² cells at world `origin` to
    /// `out`. Adds nothing when the source fails validation, `out` does not
    /// hold `size`² cells, or `origin` lies beyond ±2⁴⁰ cells.
    pub fn add_to(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        const FAR: i64 = 1 << 40;
        if self.validate().is_err() || size.checked_mul(size) != Some(out.len()) || origin.iter().any(|o| o.abs() > FAR)
        {
            return;
        }
        self.add_unchecked(seed, origin, size, out);
    }

    fn add_unchecked(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        match self {
            Source::Constant(c) => out.iter_mut().for_each(|o| *o += c),
            Source::Plane { base, slope } => add_per_cell(out, origin, size, &|| {
                Box::new(|x, z| (f64::from(*base) + f64::from(slope[0]) * x + f64::from(slope[1]) * z) as f32)
            }),
            Source::Midpoint(m) => m.add_to(seed, origin, size, out),
            Source::ValueNoise(n) => add_per_cell(out, origin, size, &|| Box::new(n.sampler(seed))),
            Source::Fbm(n) => add_per_row(out, origin, size, &|x, z, row| n.add_row(seed, x, z, row)),
            Source::Ridged(n) => add_per_row(out, origin, size, &|x, z, row| n.add_row(seed, x, z, row)),
            Source::RandomAdditions(a) => a.add_to(seed, origin, size, out),
            Source::Circles(c) => c.add_to(seed, origin, size, out),
            Source::Basin(b) => b.add_to(seed, origin, size, out),
            Source::Sum(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    p.add_unchecked(mix64(seed ^ i as u64), origin, size, out);
                }
            }
        }
    }
}

/// Heights at world cells, one call per cell of a row.
type Sampler<'a> = Box<dyn FnMut(f64, f64) -> f32 + 'a>;

/// Adds a height at every cell of the `size`² square at `origin` to `out`,
/// rows in parallel. Each row takes a sampler of its own from `sampler`,
/// which may keep what the row's cells share.
fn add_per_cell<'a>(out: &mut [f32], origin: [i64; 2], size: usize, sampler: &(dyn Fn() -> Sampler<'a> + Sync)) {
    add_per_row(out, origin, size, &|x0, z, row| {
        let mut f = sampler();
        for (x, o) in row.iter_mut().enumerate() {
            *o += f((x0 + x as i64) as f64, z as f64);
        }
    });
}

/// Adds heights to every row of the `size`² square at `origin` in `out`, rows in parallel:
/// `add(x, z, row)` adds to the cells of row `z` from world cell `x` on.
fn add_per_row(out: &mut [f32], origin: [i64; 2], size: usize, add: &(dyn Fn(i64, i64, &mut [f32]) + Sync)) {
    out.par_chunks_mut(size)
        .enumerate()
        .for_each(|(z, row)| add(origin[0], origin[1] + z as i64, row));
}

impl Validate for Source {
    /// Checks counts and ranges; an error about the whole map has an empty path.
    fn validate(&self) -> Result<(), FieldError> {
        match self {
            Source::Constant(c) => check(c.is_finite(), "", "constant must be finite"),
            Source::Plane { base, slope } => check(finite(&[*base, slope[0], slope[1]]), "", "plane must be finite"),
            Source::Midpoint(m) => {
                power_of_two_period(m.period)?;
                check(
                    finite(&[m.amplitude, m.roughness, m.base]),
                    "amplitude",
                    "midpoint numbers must be finite",
                )?;
                check((0.0..=1.0).contains(&m.rise), "rise", "must be in [0, 1]")
            }
            Source::RandomAdditions(a) => {
                power_of_two_period(a.period)?;
                check(
                    finite(&[a.amplitude, a.roughness, a.base]),
                    "amplitude",
                    "numbers must be finite",
                )
            }
            Source::ValueNoise(n) => {
                octaves_and_frequency(n.octaves, n.frequency)?;
                check(
                    finite(&[n.amplitude, n.persistence, n.scale]),
                    "amplitude",
                    "numbers must be finite",
                )
            }
            Source::Fbm(n) => {
                octaves_and_frequency(n.octaves, n.frequency)?;
                check(
                    finite(&[n.amplitude, n.lacunarity, n.gain]),
                    "amplitude",
                    "numbers must be finite",
                )
            }
            Source::Ridged(n) => {
                octaves_and_frequency(n.octaves, n.frequency)?;
                check(
                    finite(&[n.amplitude, n.lacunarity, n.gain, n.offset, n.h]) && n.lacunarity > 0.0,
                    "amplitude",
                    "numbers must be finite, lacunarity positive",
                )
            }
            Source::Circles(c) => circles(c),
            Source::Basin(b) => b.validate(),
            Source::Sum(parts) => {
                check(
                    parts.len() <= MAX_TERMS as usize,
                    "",
                    format!("a sum has at most {MAX_TERMS} terms"),
                )?;
                parts.iter().try_for_each(Source::validate)
            }
        }
    }
}

/// A noise source's octave count and base frequency.
fn octaves_and_frequency(octaves: u32, frequency: f32) -> Result<(), FieldError> {
    check(octaves <= MAX_TERMS, "octaves", format!("at most {MAX_TERMS}"))?;
    check(
        frequency.is_finite() && frequency > 0.0,
        "frequency",
        "must be positive",
    )
}

/// A lattice source's period.
fn power_of_two_period(period: u32) -> Result<(), FieldError> {
    check(
        period >= 2 && period.is_power_of_two() && period <= MAX_PERIOD,
        "period",
        format!("must be a power of two in 2..={MAX_PERIOD}, got {period}"),
    )
}

/// The circle algorithm's rounds, radius, height and probabilities.
fn circles(c: &Circles) -> Result<(), FieldError> {
    check(c.rounds <= MAX_TERMS, "rounds", format!("at most {MAX_TERMS}"))?;
    check(
        c.radius.is_finite() && c.radius > 0.0 && c.radius <= 1e5,
        "radius",
        "must be in (0, 1e5]",
    )?;
    check(c.height.is_finite(), "height", "must be finite")?;
    check(
        (0.0..=1.0).contains(&c.density) && (0.0..=1.0).contains(&c.lower),
        "density",
        "probabilities must be in [0, 1]",
    )
}

impl Validate for GeneratorParams {
    /// Checks the height map and every layer; a layer's path names it, `layers[1].thickness`.
    fn validate(&self) -> Result<(), FieldError> {
        if let Some(h) = &self.height {
            h.validate().map_err(|e| e.within("height"))?;
        }
        check(!self.layers.is_empty(), "layers", "needs at least one layer")?;
        for (i, l) in self.layers.iter().enumerate() {
            match &l.thickness {
                Thickness::Share(s) => check(
                    s.is_finite() && *s >= 0.0,
                    "",
                    format!("a share must be a non-negative number, got {s}"),
                )
                .and_then(|()| check(self.height.is_some(), "", "a Share layer needs a `height` map")),
                Thickness::Map(m) => m.validate(),
            }
            .map_err(|e| e.within("thickness").within(format!("layers[{i}]")))?;
        }
        Ok(())
    }
}

impl GeneratorParams {
    /// Generates chunk `coord` of `size`² columns; layers are stacked bottom
    /// first, so each column's rock height is the sum of its layer thicknesses.
    ///
    /// The result depends only on (seed, coord, parameters). `None` when the
    /// parameters fail validation or the size or layer count is out of range.
    pub fn generate(&self, seed: u64, coord: [i32; 2], size: u32, max_layers: u8) -> Option<TerrainChunk> {
        let chunk = TerrainChunk::new(coord, size, max_layers)?;
        let origin = chunk.origin();
        self.fill(seed, origin, chunk, |_| {})
    }

    /// Generates the `size`² columns whose first cell is world cell `origin`,
    /// whatever the chunk grid: what a chunk plus an apron around it needs.
    /// Every column equals the one [`generate`](Self::generate) gives the chunk
    /// that holds it. The result is labelled chunk (0, 0); take chunks out of it
    /// with [`TerrainChunk::crop`].
    pub fn generate_region(&self, seed: u64, origin: [i64; 2], size: u32, max_layers: u8) -> Option<TerrainChunk> {
        self.generate_region_shaped(seed, origin, size, max_layers, |_| None)
    }

    /// [`generate_region`](Self::generate_region), with `shape` changing the
    /// `size`² height map (row-major) before the layers split it: how a world
    /// lays its basins and rivers under the generator's detail. `shape` may
    /// return a bed per cell (NaN: none): a column that the layers stacked
    /// higher is cut down to it with a sand layer on top (see
    /// `TerrainChunk::lay_beds`), so no layer drawn as a map fills a river's channel.
    pub fn generate_region_shaped(
        &self,
        seed: u64,
        origin: [i64; 2],
        size: u32,
        max_layers: u8,
        shape: impl FnOnce(&mut [f32]) -> Option<Vec<f32>>,
    ) -> Option<TerrainChunk> {
        let mut chunk = TerrainChunk::new([0, 0], size, max_layers)?;
        let mut bed = None;
        chunk = self.fill(seed, origin, chunk, |h| bed = shape(h))?;
        if let Some(bed) = bed.filter(|b| b.len() == chunk.cells()) {
            chunk.lay_beds(&bed);
        }
        Some(chunk)
    }

    fn fill(
        &self,
        seed: u64,
        origin: [i64; 2],
        mut chunk: TerrainChunk,
        shape: impl FnOnce(&mut [f32]),
    ) -> Option<TerrainChunk> {
        self.validate().ok()?;
        let n = chunk.size() as usize;
        let mut height = vec![0.0f32; n * n];
        if let Some(h) = &self.height {
            h.add_to(
                stream_seed(seed, StreamKey::Global, "terrain.height"),
                origin,
                n,
                &mut height,
            );
        }
        shape(&mut height);
        let mut map = vec![0.0f32; n * n];
        let block = n * 16;
        for (k, layer) in self.layers.iter().enumerate() {
            match &layer.thickness {
                Thickness::Share(s) => map.iter_mut().zip(&height).for_each(|(m, h)| *m = s * h),
                Thickness::Map(src) => {
                    map.fill(0.0);
                    src.add_to(
                        stream_seed(seed, StreamKey::Index(k as u64), "terrain.layer"),
                        origin,
                        n,
                        &mut map,
                    );
                }
            }
            let m = layer.material as u8;
            chunk
                .parts(block)
                .layers
                .into_par_iter()
                .zip(map.par_chunks(block))
                .for_each(|(mut layers, t)| {
                    for (i, &t) in t.iter().enumerate() {
                        if t.is_finite() && t > 0.0 {
                            layers.push(i, m, t);
                        }
                    }
                });
        }
        Some(chunk)
    }
}
