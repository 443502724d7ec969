//! Grass moved by baked wind (scene section `grass`): its species, blades and bake.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
#[cfg(feature = "render")]
use sylva_runtime::extract::GrassBatch;
use sylva_runtime::{App, FieldError, Validate};
use sylva_systems::grass::{
    self, BakeSettings, BladeShape, Dynamics, GrassBakeError, GrassError, GrassReport, GrassSettings, LiveSettings,
    SpeciesSettings, Walker, WindField, blade_from_grammar, validate_blade_iterations,
};
use sylva_systems::lsystem::LSystemError;
use sylva_systems::placement::ScatterParams;

#[cfg(feature = "render")]
use super::draw::{Draw, FrameInput, Gathered};
use super::{Building, Domain, Invalid, under};
use crate::memory::{BLADE, Estimate};
use crate::{BuildError, GRASS_PRESETS, Report, Scene, SceneError};

/// Grass (scene section `grass`): species baked under one wind and planted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GrassScene {
    /// The species, one render layer each. Default: one [`GrassSpecies::default`].
    pub species: Vec<GrassSpecies>,
    /// Baking (cells, frames, warm-up, texel layout). Default: see [`BakeSettings`].
    pub bake: BakeSettings,
    /// Winds and gusts of the bake and of live blades. Default: none (still air).
    pub wind: WindField,
    /// Step, gravity, spring, damper, drag. Default: see [`Dynamics`].
    pub dynamics: Dynamics,
    /// Displacement multiplier of playback (the thesis's Wind Power). Default 1.
    pub wind_power: f32,
    /// Time multiplier of playback (the thesis's Wave Speed). Default 1.
    pub wave_speed: f32,
    /// When pushed blades go live, their own fixed step (`step_seconds`, default 1/120, within
    /// 1e-4..=1/120), and how they fade back. Default: see [`LiveSettings`].
    pub live: LiveSettings,
    /// Spheres walking through the grass (a path or an orbit each). Default: none.
    pub pushers: Vec<Walker>,
    /// A bake written by `sylva grass SCENE --bake PATH` to read instead of baking (species
    /// k > 0 from `NAME-k.EXT` beside it; relative to the working directory, as `sylva run
    /// --bake-in` sets it). Each file must have been baked from this section's species, bake,
    /// wind, dynamics and seed; any other is an error. Default: none (bake at start).
    pub bake_file: Option<PathBuf>,
}

impl Default for GrassScene {
    fn default() -> Self {
        Self {
            species: vec![GrassSpecies::default()],
            bake: BakeSettings::default(),
            wind: WindField::default(),
            dynamics: Dynamics::default(),
            wind_power: 1.0,
            wave_speed: 1.0,
            live: LiveSettings::default(),
            pushers: Vec::new(),
            bake_file: None,
        }
    }
}

impl GrassScene {
    /// The settings [`grass::install`](sylva_systems::grass::install) takes: every species'
    /// blade derived; fails at the blade (`species[k].blade`) that does not.
    pub(crate) fn settings(&self) -> Result<GrassSettings, FieldError> {
        let species = self
            .species
            .iter()
            .enumerate()
            .map(|(k, sp)| {
                Ok(SpeciesSettings {
                    shape: sp
                        .blade
                        .shape()
                        .map_err(|e| FieldError::new(&format!("species[{k}].blade"), e.to_string()))?,
                    scatter: sp.scatter.clone(),
                    scale: sp.scale,
                    colour: sp.colour,
                })
            })
            .collect::<Result<Vec<_>, FieldError>>()?;
        Ok(GrassSettings {
            species,
            bake: self.bake,
            wind: self.wind.clone(),
            dynamics: self.dynamics,
            wind_power: self.wind_power,
            wave_speed: self.wave_speed,
            live: self.live,
            walkers: self.pushers.clone(),
            bake_file: self.bake_file.clone(),
        })
    }
}

/// One grass species of a scene.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GrassSpecies {
    /// The blade structure. Default: `Preset("blade2")`.
    pub blade: BladeSource,
    /// Where instances go: count, spacing, area and ground rules. Default: 2,000 blades at
    /// least 0.1 m apart on (−5, −5)..(5, 5).
    pub scatter: ScatterParams,
    /// Range of the random scale per instance. Default (0.8, 1.2).
    pub scale: (f32, f32),
    /// Linear RGBA colour. Default: meadow green (70, 140, 40, 255).
    pub colour: [u8; 4],
}

impl Default for GrassSpecies {
    fn default() -> Self {
        Self {
            blade: BladeSource::Preset("blade2".into()),
            scatter: ScatterParams {
                count: 2000,
                min_distance: 0.1,
                min: glam::Vec2::splat(-5.0),
                max: glam::Vec2::splat(5.0),
                ..ScatterParams::default()
            },
            scale: (0.8, 1.2),
            colour: [70, 140, 40, 255],
        }
    }
}

/// Where a species' blade structure comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum BladeSource {
    /// One of [`GRASS_PRESETS`]: `blade1`, `blade2`, `blade6`, `tuft`, `shrub`.
    Preset(String),
    /// A blade grammar (see `sylva_systems::grass::grammar` for its symbols).
    Grammar {
        /// The L-system text.
        grammar: String,
        /// Derivation steps.
        iterations: u32,
    },
}

impl BladeSource {
    /// The grammar text and iterations; a preset is looked up in [`GRASS_PRESETS`].
    ///
    /// ```
    /// use sylva::{BladeError, BladeSource};
    ///
    /// let (grammar, iterations) = BladeSource::Preset("tuft".into()).grammar().unwrap();
    /// assert!(!grammar.is_empty() && iterations > 0);
    /// let unknown = BladeSource::Preset("moss".into()).grammar().unwrap_err();
    /// assert!(matches!(unknown, BladeError::UnknownPreset { .. }));
    /// assert!(unknown.to_string().starts_with("unknown preset `moss` (expected one of blade1,"));
    /// ```
    pub fn grammar(&self) -> Result<(String, u32), BladeError> {
        match self {
            BladeSource::Grammar { grammar, iterations } => Ok((grammar.clone(), *iterations)),
            BladeSource::Preset(name) => {
                let Some((file, text)) = GRASS_PRESETS.iter().find(|p| p.0 == name) else {
                    let names: Vec<&str> = GRASS_PRESETS.iter().map(|p| p.0).collect();
                    return Err(BladeError::UnknownPreset {
                        name: name.clone(),
                        expected: names.join(", "),
                    });
                };
                let scene = Scene::from_str(text, &format!("scenes/grass/{file}.ron")).map_err(Box::new)?;
                match scene.grass.and_then(|g| g.species.into_iter().next()).map(|s| s.blade) {
                    Some(BladeSource::Grammar { grammar, iterations }) => Ok((grammar, iterations)),
                    _ => Err(BladeError::NoGrammar(name.clone())),
                }
            }
        }
    }

    /// Derives the blade structure.
    pub fn shape(&self) -> Result<BladeShape, BladeError> {
        let (grammar, iterations) = self.grammar()?;
        Ok(blade_from_grammar(&grammar, iterations)?)
    }
}

impl Validate for GrassSpecies {
    /// Checks the scatter and scale ranges, and that a preset blade exists and derives.
    fn validate(&self) -> Result<(), FieldError> {
        self.scatter.validate().map_err(|e| e.within("scatter"))?;
        let (lo, hi) = self.scale;
        FieldError::check(
            lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi,
            "scale",
            || format!("need 0 < min <= max, got ({lo}, {hi})"),
        )?;
        match self.blade {
            BladeSource::Preset(_) => {
                (self.blade.shape().map(drop)).map_err(|e| FieldError::new("blade", e.to_string()))
            }
            // The grammar derives in `Scene::from_str`, after this bound.
            BladeSource::Grammar { iterations, .. } => {
                validate_blade_iterations(iterations).map_err(|e| e.within("blade"))
            }
        }
    }
}

impl Validate for GrassScene {
    /// Checks every range the types cannot express; a grammar blade's syntax is checked by
    /// [`Scene::from_str`](crate::Scene::from_str).
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(!self.species.is_empty(), "species", || {
            "needs at least one species".into()
        })?;
        for (k, sp) in self.species.iter().enumerate() {
            sp.validate().map_err(|e| e.within(format!("species[{k}]")))?;
        }
        self.bake.validate().map_err(|e| e.within("bake"))?;
        sylva_systems::grass::validate_motion(&self.wind, &self.dynamics, self.wind_power, self.wave_speed)?;
        self.live.validate().map_err(|e| e.within("live"))?;
        for (k, w) in self.pushers.iter().enumerate() {
            w.validate().map_err(|e| e.within(format!("pushers[{k}]")))?;
        }
        Ok(())
    }
}

/// Why a blade source gives no blade structure.
#[derive(Debug, thiserror::Error)]
pub enum BladeError {
    /// A preset name that is not one of [`GRASS_PRESETS`].
    #[error("unknown preset `{name}` (expected one of {expected})")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The presets there are, comma separated.
        expected: String,
    },
    /// A preset file that does not read as a scene.
    #[error(transparent)]
    Preset(#[from] Box<SceneError>),
    /// A preset whose first grass species is not written as a grammar.
    #[error("preset `{0}` has no grammar species")]
    NoGrammar(String),
    /// The grammar does not derive into a blade.
    #[error("grammar {0}")]
    Grammar(#[from] LSystemError),
}

/// Grass: its species baked under one wind and planted on the ground built so far.
pub(crate) struct GrassDomain;

impl Domain for GrassDomain {
    fn validate(&self, scene: &Scene) -> Result<(), Invalid> {
        let Some(g) = &scene.grass else {
            return Ok(());
        };
        g.validate().map_err(|e| e.within("grass"))?;
        for (k, sp) in g.species.iter().enumerate() {
            if let BladeSource::Grammar { grammar, iterations } = &sp.blade {
                blade_from_grammar(grammar, *iterations).map_err(|error| Invalid::Grammar {
                    field: format!("grass.species[{k}].blade.grammar"),
                    error,
                })?;
            }
        }
        Ok(())
    }

    fn estimate(&self, scene: &Scene, estimate: &mut Estimate) {
        // A blade that does not derive is the build's error to report, not the estimate's.
        if let Some(Ok(g)) = scene.grass.as_ref().map(GrassScene::settings) {
            blades_and_bakes(estimate, &g);
        }
    }

    fn build(&self, scene: &Scene, building: &mut Building) -> Result<(), BuildError> {
        let Some(g) = &scene.grass else {
            return Ok(());
        };
        let settings = g.settings().map_err(|f| scene.error_at(&under("grass", f)))?;
        let (app, ground) = building.app_and_ground();
        grass::install(app, &settings, ground).map_err(|e| grass_error(scene, e))
    }

    fn report(&self, app: &App, report: &mut Report) {
        report.grass = GrassReport::of(app);
    }

    /// The grass's layers; a world extracts its grass into the same batch.
    #[cfg(feature = "render")]
    fn gather(&self, frame: &mut Gathered<'_>) {
        frame.draw::<GrassBatch>();
    }
}

#[cfg(feature = "render")]
impl Draw for GrassBatch {
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        input.grass = Some(self);
    }
}

/// A grass section's blades and, per species, the bake's textures.
fn blades_and_bakes(e: &mut Estimate, g: &GrassSettings) {
    let b = &g.bake;
    let texels = u64::from(b.cells).pow(2).saturating_mul(u64::from(b.frames));
    let texel = b.layout.texel_bytes() as u64;
    for (k, sp) in g.species.iter().enumerate() {
        let blades = u64::from(sp.scatter.count);
        e.add(
            &format!("grass.species[{k}].scatter.count"),
            format!("{blades} blades"),
            blades * BLADE,
        );
        let links = sp.shape.links() as u64;
        let what = format!("{}² cells × {} frames × {links} links", b.cells, b.frames);
        let bytes = texels.saturating_mul(links).saturating_mul(texel);
        e.add(&format!("grass.species[{k}].bake"), what, bytes);
    }
}

/// A grass failure, at the species or setting it comes from.
fn grass_error(scene: &Scene, e: GrassError) -> BuildError {
    let field = match e {
        GrassError::Bake {
            error: GrassBakeError::Settings(f),
            ..
        } => under("grass", f),
        // A bake file names itself; the scene names the species it was read for.
        GrassError::Bake {
            species,
            error: error @ (GrassBakeError::File { .. } | GrassBakeError::Io { .. } | GrassBakeError::Stale { .. }),
        } => FieldError::new("grass.bake_file", format!("species {species}: {error}")),
        GrassError::Bake { species, error } => FieldError::new(&format!("grass.species[{species}]"), error.to_string()),
        GrassError::Scatter { species, error } => under(&format!("grass.species[{species}].scatter"), error),
        GrassError::Live(f) => under("grass.live", f),
        GrassError::Scale { species, message } => FieldError::new(&format!("grass.species[{species}].scale"), message),
    };
    scene.error_at(&field).into()
}
