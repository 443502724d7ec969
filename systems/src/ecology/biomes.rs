//! Biomes: fuzzy rules over the attributes, memberships that sum to 1, and the
//! vegetation each biome asks for (docs/design/ecology.md, "Biomes").

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, stream_seed};
use sylva_runtime::{FieldError, Validate};

use super::attributes::{Attribute, Attributes};
use crate::terrain::ValueNoise;

/// Most biomes a world may have.
pub const MAX_BIOMES: usize = 32;
/// Most rules one biome may have.
pub const MAX_RULES: usize = 16;
/// Most trees or shrubs one biome may ask for per hectare, per layer.
pub const MAX_PER_HECTARE: f32 = 20_000.0;
/// Most grass blades one biome may ask for per m².
pub const MAX_PER_M2: f32 = 200.0;
/// The most of the plane a layer's spacing discs may cover (λπr² of the layer's
/// trees): the hard-core process cannot reach a higher share.
pub const MAX_COVER: f32 = 0.9;

/// The ecology of a world (scene field `world.ecology`): how attributes are
/// sampled and which biomes they make.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EcologyParams {
    /// Cells between attribute and ground-cover samples; divides the chunk side. Default 4.
    pub sample_cells: u32,
    /// Direction the sunlight travels, for insolation. Default (-0.4, -0.8, -0.3).
    pub sun: Vec3,
    /// Air temperature at sea level, °C. Default 14.
    pub sea_temperature: f32,
    /// Cooling per km of height, °C. Default 6.5 (the standard atmosphere's).
    pub lapse_rate: f32,
    /// Distances to river and sea are clamped to this, metres. Default 300.
    pub max_distance: f32,
    /// Noise that wobbles biome borders, so they are not contour lines.
    pub dither: Dither,
    /// The biomes. Exactly one has no rules: it takes what the others leave.
    /// Default: none (no vegetation).
    pub biomes: Vec<Biome>,
}

impl Default for EcologyParams {
    fn default() -> Self {
        Self {
            sample_cells: 4,
            sun: Vec3::new(-0.4, -0.8, -0.3),
            sea_temperature: 14.0,
            lapse_rate: 6.5,
            max_distance: 300.0,
            dither: Dither::default(),
            biomes: Vec::new(),
        }
    }
}

/// Border noise: each biome's raw membership is scaled by 1 ± `amplitude` of
/// its own value noise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dither {
    /// Share the noise scales memberships by, 0..=1. Default 0.35.
    pub amplitude: f32,
    /// Wavelength of the noise, metres. Default 60.
    pub wavelength: f32,
}

impl Default for Dither {
    fn default() -> Self {
        Self {
            amplitude: 0.35,
            wavelength: 60.0,
        }
    }
}

/// One biome: where it is and what grows there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Biome {
    /// Its name (mask legends, instance tables, errors).
    pub name: String,
    /// Every rule must hold; memberships fall off linearly over each rule's blend.
    /// None: the fallback biome.
    pub rules: Vec<BiomeRule>,
    /// Multiplies the raw membership. Default 1.
    pub weight: f32,
    /// Canopy trees: species of the world's `trees`, with densities.
    pub canopy: Vec<Stand>,
    /// Understory shrubs: species of the world's `trees`, with densities.
    pub understory: Vec<Stand>,
    /// Ground cover: species of the world's grass, in blades per m².
    pub ground: Vec<Cover>,
    /// Gaps in the canopy and understory. Default: none.
    pub clearings: Option<Clearings>,
}

impl Default for Biome {
    fn default() -> Self {
        Self {
            name: String::new(),
            rules: Vec::new(),
            weight: 1.0,
            canopy: Vec::new(),
            understory: Vec::new(),
            ground: Vec::new(),
            clearings: None,
        }
    }
}

/// A fuzzy range rule: membership 1 inside `range`, falling linearly to 0 at
/// `blend` beyond either end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BiomeRule {
    /// The attribute read.
    pub attribute: Attribute,
    /// Where the rule holds fully, inclusive, in the attribute's unit.
    pub range: (f32, f32),
    /// Width of the fall-off on each side, in the attribute's unit. Default 0.
    #[serde(default)]
    pub blend: f32,
}

/// A tree or shrub species of a layer and its density.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stand {
    /// Name of a species of the world's `trees`.
    pub species: String,
    /// Stems per hectare where the biome holds fully.
    pub per_hectare: f32,
}

/// A grass species of the ground cover and its density.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cover {
    /// Name of a species of the world's grass.
    pub grass: String,
    /// Blades per m² where the biome holds fully.
    pub per_m2: f32,
}

/// Clearings: where a value noise lies below `share`, the woody layers thin out.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clearings {
    /// Rough share of the biome's area that is open, 0..1.
    pub share: f32,
    /// Wavelength of the noise, metres.
    pub wavelength: f32,
}

/// The two woody layers. Their spacing is separate: a shrub may stand under a tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Trees.
    Canopy,
    /// Shrubs.
    Understory,
}

impl Layer {
    /// Both, in placement order.
    pub const ALL: [Layer; 2] = [Layer::Canopy, Layer::Understory];

    /// Its field name in a biome.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Canopy => "canopy",
            Layer::Understory => "understory",
        }
    }

    fn stands(self, biome: &Biome) -> &[Stand] {
        match self {
            Layer::Canopy => &biome.canopy,
            Layer::Understory => &biome.understory,
        }
    }
}

fn finite_range(field: &str, (lo, hi): (f32, f32)) -> Result<(), FieldError> {
    FieldError::check(lo.is_finite() && hi.is_finite() && lo <= hi, field, || {
        format!("needs finite min <= max, got ({lo}, {hi})")
    })
}

impl Validate for EcologyParams {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check((1..=64).contains(&self.sample_cells), "sample_cells", || {
            format!("must be within 1..=64, got {}", self.sample_cells)
        })?;
        FieldError::check(
            self.sun.is_finite() && self.sun.y < 0.0 && self.sun.length() > 1e-3,
            "sun",
            || format!("must be a finite direction pointing down (y < 0), got {}", self.sun),
        )?;
        FieldError::check(
            self.sea_temperature.is_finite() && self.sea_temperature.abs() <= 60.0,
            "sea_temperature",
            || format!("must be within -60..=60 °C, got {}", self.sea_temperature),
        )?;
        FieldError::check((0.0..=30.0).contains(&self.lapse_rate), "lapse_rate", || {
            format!("must be within 0..=30 °C per km, got {}", self.lapse_rate)
        })?;
        FieldError::check((1.0..=2000.0).contains(&self.max_distance), "max_distance", || {
            format!("must be within 1..=2000 m, got {}", self.max_distance)
        })?;
        self.dither.validate().map_err(|e| e.within("dither"))?;
        FieldError::check(self.biomes.len() <= MAX_BIOMES, "biomes", || {
            format!("at most {MAX_BIOMES} biomes, got {}", self.biomes.len())
        })?;
        for (b, biome) in self.biomes.iter().enumerate() {
            biome.validate().map_err(|e| e.within(format!("biomes[{b}]")))?;
        }
        let fallbacks: Vec<usize> = (self.biomes.iter().enumerate())
            .filter(|(_, b)| b.rules.is_empty())
            .map(|(k, _)| k)
            .collect();
        FieldError::check(self.biomes.is_empty() || fallbacks.len() == 1, "biomes", || {
            format!(
                "exactly one biome must have no rules (it takes the cells the others leave, so memberships \
                 sum to 1 everywhere); found {} ({fallbacks:?})",
                fallbacks.len()
            )
        })
    }
}

impl Validate for Dither {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check((0.0..=1.0).contains(&self.amplitude), "amplitude", || {
            format!("must be within 0..=1, got {}", self.amplitude)
        })?;
        FieldError::check((1.0..=1e5).contains(&self.wavelength), "wavelength", || {
            format!("must be within 1..=100000 m, got {}", self.wavelength)
        })
    }
}

impl Validate for Biome {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(!self.name.is_empty() && self.name.len() <= 64, "name", || {
            "must be 1 to 64 characters".into()
        })?;
        FieldError::check(self.rules.len() <= MAX_RULES, "rules", || {
            format!("at most {MAX_RULES} rules, got {}", self.rules.len())
        })?;
        for (k, r) in self.rules.iter().enumerate() {
            r.validate().map_err(|e| e.within(format!("rules[{k}]")))?;
        }
        FieldError::check(
            self.weight.is_finite() && self.weight > 0.0 && self.weight <= 1e3,
            "weight",
            || format!("must be within (0, 1000], got {}", self.weight),
        )?;
        for layer in Layer::ALL {
            for (k, s) in layer.stands(self).iter().enumerate() {
                FieldError::check(
                    s.per_hectare.is_finite() && (0.0..=MAX_PER_HECTARE).contains(&s.per_hectare),
                    "per_hectare",
                    || format!("must be within 0..={MAX_PER_HECTARE}, got {}", s.per_hectare),
                )
                .map_err(|e| e.within(format!("{}[{k}]", layer.name())))?;
            }
        }
        for (k, c) in self.ground.iter().enumerate() {
            FieldError::check(
                c.per_m2.is_finite() && (0.0..=MAX_PER_M2).contains(&c.per_m2),
                "per_m2",
                || format!("must be within 0..={MAX_PER_M2}, got {}", c.per_m2),
            )
            .map_err(|e| e.within(format!("ground[{k}]")))?;
        }
        if let Some(c) = &self.clearings {
            FieldError::check((0.0..1.0).contains(&c.share), "clearings.share", || {
                format!("must be within 0..1, got {}", c.share)
            })?;
            FieldError::check((1.0..=1e5).contains(&c.wavelength), "clearings.wavelength", || {
                format!("must be within 1..=100000 m, got {}", c.wavelength)
            })?;
        }
        Ok(())
    }
}

impl Validate for BiomeRule {
    fn validate(&self) -> Result<(), FieldError> {
        finite_range("range", self.range)?;
        FieldError::check(self.blend.is_finite() && self.blend >= 0.0, "blend", || {
            format!("must be a finite number >= 0, got {}", self.blend)
        })?;
        let (lo, hi) = self.attribute.bounds();
        let (a, b) = (self.range.0 - self.blend, self.range.1 + self.blend);
        FieldError::check(b >= lo && a <= hi, "range", || {
            format!(
                "never matches: {:?} lies within {lo}..={hi}, and this range with its blend is {a}..={b}",
                self.attribute
            )
        })
    }
}

impl BiomeRule {
    /// Membership of value `v`: 1 inside the range, linear to 0 over the blend.
    pub fn membership(&self, v: f32) -> f32 {
        let (lo, hi) = self.range;
        let outside = (lo - v).max(v - hi);
        if outside <= 0.0 {
            1.0
        } else if self.blend > 0.0 {
            (1.0 - outside / self.blend).max(0.0)
        } else {
            0.0
        }
    }
}

/// Where `name` is in `names`.
fn species_index(names: &[&str], name: &str) -> Option<usize> {
    names.iter().position(|n| *n == name)
}

/// A validated biome table with its species resolved to indices: evaluates
/// memberships and densities at world positions.
#[derive(Clone, Debug)]
pub struct Biomes {
    biomes: Vec<Biome>,
    /// Per biome and layer, (species index, stems per m²).
    stands: Vec<[Vec<(usize, f32)>; 2]>,
    /// Per biome, (grass index, blades per m²).
    cover: Vec<Vec<(usize, f32)>>,
    fallback: usize,
    dither: Vec<(ValueNoise, u64)>,
    clearings: Vec<Option<(ValueNoise, u64, f32)>>,
    amplitude: f32,
    /// Layer of each tree species; `None` where no biome lists it.
    layers: Vec<Option<Layer>>,
}

/// One octave of value noise in [0, 1) with `wavelength` metres, sampled in metres.
fn unit_noise(wavelength: f32) -> ValueNoise {
    ValueNoise {
        frequency: 1.0 / wavelength,
        amplitude: 0.5,
        persistence: 0.5,
        octaves: 1,
        scale: 1.0,
    }
}

impl Biomes {
    /// `params` (validated) over the world's tree species `trees` and grass
    /// species `grass` (by name), for world `seed`. An unknown species, or one
    /// listed in both layers, is an error at its field.
    pub fn new(params: &EcologyParams, trees: &[&str], grass: &[&str], seed: u64) -> Result<Self, FieldError> {
        let mut layers: Vec<Option<Layer>> = vec![None; trees.len()];
        let mut stands = Vec::with_capacity(params.biomes.len());
        let mut cover = Vec::with_capacity(params.biomes.len());
        for (b, biome) in params.biomes.iter().enumerate() {
            let at = |field: String| format!("biomes[{b}].{field}");
            let mut per_layer: [Vec<(usize, f32)>; 2] = Default::default();
            for (l, layer) in Layer::ALL.into_iter().enumerate() {
                for (k, s) in layer.stands(biome).iter().enumerate() {
                    let field = at(format!("{}[{k}].species", layer.name()));
                    let Some(i) = species_index(trees, &s.species) else {
                        return Err(FieldError::new(
                            &field,
                            format!("no tree species is named {:?}; the world's are {trees:?}", s.species),
                        ));
                    };
                    match layers[i] {
                        Some(other) if other != layer => {
                            return Err(FieldError::new(
                                &field,
                                format!(
                                    "{:?} is in the {} of another biome; a species keeps one layer",
                                    s.species,
                                    other.name()
                                ),
                            ));
                        }
                        _ => layers[i] = Some(layer),
                    }
                    per_layer[l].push((i, s.per_hectare / 1e4));
                }
            }
            stands.push(per_layer);
            let mut ground = Vec::with_capacity(biome.ground.len());
            for (k, c) in biome.ground.iter().enumerate() {
                let Some(i) = species_index(grass, &c.grass) else {
                    return Err(FieldError::new(
                        &at(format!("ground[{k}].grass")),
                        format!("no grass species is named {:?}; the world's are {grass:?}", c.grass),
                    ));
                };
                ground.push((i, c.per_m2));
            }
            cover.push(ground);
        }
        let noise = |b: usize, purpose: &str| stream_seed(seed, StreamKey::Index(b as u64), purpose);
        Ok(Self {
            fallback: params.biomes.iter().position(|b| b.rules.is_empty()).unwrap_or(0),
            dither: (0..params.biomes.len())
                .map(|b| (unit_noise(params.dither.wavelength), noise(b, "world.biome.dither")))
                .collect(),
            clearings: (params.biomes.iter().enumerate())
                .map(|(b, biome)| {
                    biome
                        .clearings
                        .map(|c| (unit_noise(c.wavelength), noise(b, "world.biome.clearings"), c.share))
                })
                .collect(),
            amplitude: params.dither.amplitude,
            biomes: params.biomes.clone(),
            stands,
            cover,
            layers,
        })
    }

    /// How many biomes there are.
    pub fn len(&self) -> usize {
        self.biomes.len()
    }

    /// True when there are none (no vegetation).
    pub fn is_empty(&self) -> bool {
        self.biomes.is_empty()
    }

    /// Biome `b`'s name.
    pub fn name(&self, b: usize) -> &str {
        &self.biomes[b].name
    }

    /// The world's tree species (what [`Biomes::stems`] writes one value per).
    pub fn tree_species(&self) -> usize {
        self.layers.len()
    }

    /// The layer tree species `species` grows in; `None` where no biome lists it.
    pub fn layer_of(&self, species: usize) -> Option<Layer> {
        self.layers.get(species).copied().flatten()
    }

    /// Memberships of every biome at world position `(x, z)` metres with
    /// attributes `at`, into `out` (one per biome): they sum to 1. Ruled
    /// biomes take the product of their rules times their weight, dithered;
    /// the fallback takes what is left of 1; then all are scaled to sum 1.
    pub fn memberships(&self, at: &Attributes, x: f32, z: f32, out: &mut [f32]) {
        let mut sum = 0.0;
        for (b, biome) in self.biomes.iter().enumerate() {
            if biome.rules.is_empty() {
                out[b] = 0.0;
                continue;
            }
            let mut m = biome.weight;
            for r in &biome.rules {
                m *= r.membership(at[r.attribute as usize]);
            }
            if m > 0.0 {
                let (noise, seed) = &self.dither[b];
                let n = noise.sample(*seed, f64::from(x), f64::from(z));
                m *= 1.0 + self.amplitude * (2.0 * n - 1.0);
            }
            out[b] = m.max(0.0);
            sum += out[b];
        }
        if let Some(f) = out.get_mut(self.fallback) {
            *f = (1.0 - sum).max(0.0);
            sum += *f;
        }
        if sum > 0.0 {
            out.iter_mut().for_each(|m| *m /= sum);
        }
    }

    /// The biome with the largest membership (the first of equals).
    pub fn dominant(memberships: &[f32]) -> usize {
        let mut best = 0;
        for (b, &m) in memberships.iter().enumerate() {
            if m > memberships[best] {
                best = b;
            }
        }
        best
    }

    /// Stems per m² of every tree species of `layer` at `(x, z)` under
    /// `memberships`, added into `out` (one per tree species), clearings applied.
    pub fn stems(&self, layer: Layer, memberships: &[f32], x: f32, z: f32, out: &mut [f32]) {
        for (b, &m) in memberships.iter().enumerate() {
            if m <= 0.0 {
                continue;
            }
            let open = self.clearings[b].as_ref().map_or(1.0, |(noise, seed, share)| {
                let n = noise.sample(*seed, f64::from(x), f64::from(z));
                smoothstep(share - 0.08, share + 0.08, n)
            });
            for &(s, d) in &self.stands[b][layer as usize] {
                out[s] += m * d * open;
            }
        }
    }

    /// Blades per m² of every grass species under `memberships`, added into `out`.
    pub fn blades(&self, memberships: &[f32], out: &mut [f32]) {
        for (b, &m) in memberships.iter().enumerate() {
            for &(g, d) in &self.cover[b] {
                out[g] += m * d;
            }
        }
    }

    /// The most stems per m² `layer` asks for in any biome, and the largest
    /// share λπr² its spacing discs cover there (`spacing[s]` the min distance
    /// of tree species `s`): blends of biomes never exceed either.
    pub fn layer_peak(&self, layer: Layer, spacing: &[f32]) -> (f32, f32) {
        let (mut most, mut cover) = (0.0f32, 0.0f32);
        for stands in &self.stands {
            let list = &stands[layer as usize];
            most = most.max(list.iter().map(|(_, d)| d).sum());
            cover = cover.max(
                list.iter()
                    .map(|&(s, d)| d * std::f32::consts::PI * spacing[s].powi(2))
                    .sum(),
            );
        }
        (most, cover)
    }

    /// The most stems per m² of tree species `species` any biome asks for.
    pub fn peak_stems(&self, species: usize) -> f32 {
        (self.stands.iter())
            .flat_map(|layers| layers.iter().flatten())
            .filter(|(s, _)| *s == species)
            .map(|(_, d)| *d)
            .fold(0.0, f32::max)
    }

    /// The most blades per m² any biome asks for.
    pub fn peak_blades(&self) -> f32 {
        (self.cover.iter())
            .map(|c| c.iter().map(|(_, d)| d).sum::<f32>())
            .fold(0.0, f32::max)
    }
}

fn smoothstep(a: f32, b: f32, v: f32) -> f32 {
    let t = ((v - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Candidates per m² a hard-core (Matérn type II) process must throw so that
/// `target` per m² survive, when its discs cover `cover` = target·π·r² of the
/// plane: λ with (1 − e^(−λπr²)) / (πr²) = target, i.e. target · (−ln(1 − c) / c).
/// `cover` must be below 1 (validation keeps it at most [`MAX_COVER`]).
pub fn thrown_for(target: f32, cover: f32) -> f32 {
    if cover <= 1e-6 {
        return target;
    }
    target * (-(-cover).ln_1p() / cover)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(attribute: Attribute, range: (f32, f32), blend: f32) -> BiomeRule {
        BiomeRule {
            attribute,
            range,
            blend,
        }
    }

    fn table() -> EcologyParams {
        EcologyParams {
            biomes: vec![
                Biome {
                    name: "meadow".into(),
                    ground: vec![Cover {
                        grass: "tuft".into(),
                        per_m2: 30.0,
                    }],
                    ..Biome::default()
                },
                Biome {
                    name: "wood".into(),
                    rules: vec![rule(Attribute::Wetness, (8.0, 12.0), 2.0)],
                    canopy: vec![Stand {
                        species: "oak".into(),
                        per_hectare: 300.0,
                    }],
                    ..Biome::default()
                },
                Biome {
                    name: "cliff".into(),
                    rules: vec![rule(Attribute::Slope, (40.0, 90.0), 5.0)],
                    ..Biome::default()
                },
            ],
            ..EcologyParams::default()
        }
    }

    /// Memberships sum to 1 everywhere: inside one biome, across blends and
    /// overlaps, and where no rule holds (the fallback alone).
    #[test]
    fn memberships_sum_to_one() {
        let b = Biomes::new(&table(), &["oak"], &["tuft"], 3).unwrap();
        let mut m = [0.0; 3];
        for wet in [-5.0, 7.0, 9.0, 11.5, 13.0, 20.0] {
            for slope in [0.0, 36.0, 38.0, 45.0, 80.0] {
                let mut at = [0.0; 8];
                at[Attribute::Wetness as usize] = wet;
                at[Attribute::Slope as usize] = slope;
                b.memberships(&at, wet * 13.0, slope * 7.0, &mut m);
                let sum: f32 = m.iter().sum();
                assert!((sum - 1.0).abs() < 1e-5, "{wet} {slope}: {m:?}");
                assert!(m.iter().all(|v| (0.0..=1.0).contains(v)));
            }
        }
        let mut at = [0.0; 8];
        at[Attribute::Wetness as usize] = 0.0;
        b.memberships(&at, 0.0, 0.0, &mut m);
        assert_eq!(m, [1.0, 0.0, 0.0], "nothing holds: the fallback alone");
    }

    #[test]
    fn unknown_species_dead_rules_and_missing_fallbacks_are_field_errors() {
        let e = Biomes::new(&table(), &["pine"], &["tuft"], 1).unwrap_err();
        assert_eq!(e.dotted(), "biomes[1].canopy[0].species");
        assert!(e.message.contains("\"oak\""), "{e}");
        let e = Biomes::new(&table(), &["oak"], &[], 1).unwrap_err();
        assert_eq!(e.dotted(), "biomes[0].ground[0].grass");

        let mut t = table();
        t.biomes[2].rules[0].range = (96.0, 120.0);
        let e = t.validate().unwrap_err();
        assert_eq!(e.dotted(), "biomes[2].rules[0].range");
        assert!(e.message.contains("never matches"), "{e}");
        let mut t = table();
        t.biomes[1].rules[0].range = (f32::NAN, 1.0);
        assert_eq!(t.validate().unwrap_err().dotted(), "biomes[1].rules[0].range");
        let mut t = table();
        t.biomes[1].rules[0].blend = -1.0;
        assert_eq!(t.validate().unwrap_err().dotted(), "biomes[1].rules[0].blend");
        let mut t = table();
        t.biomes[0].rules.push(rule(Attribute::Slope, (0.0, 10.0), 0.0));
        let e = t.validate().unwrap_err();
        assert!(e.message.contains("exactly one biome must have no rules"), "{e}");
        let mut t = table();
        t.biomes[1].canopy[0].per_hectare = -3.0;
        assert_eq!(t.validate().unwrap_err().dotted(), "biomes[1].canopy[0].per_hectare");
        let mut t = table();
        t.biomes[1].understory = t.biomes[1].canopy.clone();
        let e = Biomes::new(&t, &["oak"], &["tuft"], 1).unwrap_err();
        assert_eq!(e.dotted(), "biomes[1].understory[0].species");
    }

    /// The thrown density is what a Matérn II process thins back to the target.
    #[test]
    fn thrown_density_thins_back_to_the_target() {
        let r: f32 = 3.0;
        for target in [0.001f32, 0.01, 0.025] {
            let cover = target * std::f32::consts::PI * r * r;
            let thrown = thrown_for(target, cover);
            let a = std::f32::consts::PI * r * r;
            let survives = (1.0 - (-thrown * a).exp()) / a;
            assert!(
                (survives - target).abs() < 1e-4 * target.max(1.0),
                "{target}: {survives}"
            );
        }
    }
}
