//! Scene files: RON documents that say what to generate and simulate.
//!
//! Every field has a documented default, so a scene names only what it
//! changes. Unknown fields, wrong types and out-of-range values are errors
//! that name the file, the line and column, and the field.
//!
//! ```
//! let scene = sylva::Scene::from_str("(seed: 3, chains: (columns: 2, rows: 2))", "inline.ron").unwrap();
//! assert_eq!(scene.seed, 3);
//! assert_eq!(scene.chains.unwrap().columns, 2);
//!
//! let err = sylva::Scene::from_str("(\n  seed: 3,\n  chains: (stiffness: -5.0),\n)", "bad.ron").unwrap_err();
//! assert_eq!(err.to_string(), "bad.ron:3:12: field `chains.stiffness`: must be a positive number, got -5");
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{Camera, Sun};
use sylva_runtime::{FieldError, Validate};
use sylva_systems::colonize::ColonizeParams;
use sylva_systems::grass::{
    BakeSettings, BladeShape, Dynamics, GrassSettings, LiveSettings, SpeciesSettings, Walker, WindField,
    blade_from_grammar, validate_blade_iterations,
};
use sylva_systems::lsystem::{LSystem, LSystemError, LSystemParams};
use sylva_systems::particles::{ChainField, ParticleSettings};
use sylva_systems::placement::ScatterParams;
use sylva_systems::placement::forest::ForestParams;
use sylva_systems::species::TreeRecipe;
use sylva_systems::terrain::TerrainParams;
use sylva_systems::tree::{MeshParams, Placement, RadiusParams, TreeLook};
use sylva_systems::world::WorldParams;

use locate::{field_path, locate, locate_in_string};

mod locate;
mod probe;

/// The default scene, the streamed world, embedded so `sylva` runs from any directory.
pub const WORLD: &str = include_str!("../scenes/world.ron");

/// The hanging chains (the particle solver's showcase), embedded.
pub const CHAINS: &str = include_str!("../scenes/chains.ron");

/// The grass presets (`Preset("name")`): scene files whose first species is written as a grammar.
pub const GRASS_PRESETS: [(&str, &str); 5] = [
    ("blade1", include_str!("../scenes/grass/blade1.ron")),
    ("blade2", include_str!("../scenes/grass/blade2.ron")),
    ("blade6", include_str!("../scenes/grass/blade6.ron")),
    ("tuft", include_str!("../scenes/grass/tuft.ron")),
    ("shrub", include_str!("../scenes/grass/shrub.ron")),
];

/// A whole scene.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scene {
    /// Name used in reports. Default: the file name without extension.
    pub name: String,
    /// World seed; every random stream derives from it. Default 0.
    pub seed: u64,
    /// Time stepping and run length.
    pub simulation: Simulation,
    /// Gravity and integrator of the particle solver.
    pub particles: ParticleSettings,
    /// A field of hanging chains, if any. Default: none.
    pub chains: Option<ChainField>,
    /// A tree to grow, if any. Default: none.
    pub tree: Option<TreeScene>,
    /// Trees grown by space colonization (one per root), if any. Default: none.
    pub colonize: Option<ColonizeParams>,
    /// Layered terrain shaped by erosion, if any. Default: none.
    pub terrain: Option<TerrainParams>,
    /// A forest: species placed by Poisson-disk scattering (on the terrain where there is one),
    /// if any. Default: none.
    pub forest: Option<ForestParams>,
    /// Grass moved by baked wind, with walkers pushing it (on the terrain where there is one),
    /// if any. Default: none.
    pub grass: Option<GrassScene>,
    /// An endless world streamed chunk by chunk around the camera, if any. Default: none.
    pub world: Option<WorldParams>,
    /// Where the camera looks from. Default: for a scene that is not a world, a camera
    /// framing the scene's content after its first extraction ([`crate::camera_for`]; a
    /// camera equal to the default counts as none).
    pub camera: Camera,
    /// The sun.
    pub sun: Sun,
    /// The file and text the scene was read from, so that errors found while building it name
    /// the file and line. Set by [`Scene::from_str`] and [`Scene::load`]; not a scene section.
    #[serde(skip)]
    pub source: Option<SceneSource>,
}

/// Where a [`Scene`] was read from.
#[derive(Clone, PartialEq, Eq)]
pub struct SceneSource {
    /// The file (or a label for text that came from elsewhere).
    pub file: String,
    /// The scene text.
    pub text: Arc<str>,
}

impl fmt::Debug for SceneSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SceneSource({:?}, {} bytes)", self.file, self.text.len())
    }
}

/// A tree (scene section `tree`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreeScene {
    /// The L-system that grows it. Default: see [`LSystemParams`].
    pub lsystem: LSystemParams,
    /// Pipe-model radii. Default: see [`RadiusParams`].
    pub radii: RadiusParams,
    /// Curve reduction and generalized-cylinder meshing. Default: see [`MeshParams`].
    pub mesh: MeshParams,
    /// Where the root stands, world space (Y up), metres. Default: the origin.
    pub position: Vec3,
    /// Metres per turtle unit. The thesis works in Unreal units (centimetres),
    /// so the default is 0.01.
    pub scale: f32,
    /// Leaves and colours. Default: see [`TreeLook`] (green leaves at every twig tip).
    /// Not serialized: the look only shows, so it changes neither a scene's fingerprint nor
    /// a world's chunk keys.
    #[serde(skip_serializing)]
    pub look: TreeLook,
}

impl Default for TreeScene {
    fn default() -> Self {
        Self {
            lsystem: LSystemParams::default(),
            radii: RadiusParams::default(),
            mesh: MeshParams::default(),
            position: Vec3::ZERO,
            scale: 0.01,
            look: TreeLook::default(),
        }
    }
}

impl TreeScene {
    /// How the tree grows and looks.
    pub(crate) fn recipe(&self) -> TreeRecipe<'_> {
        TreeRecipe {
            lsystem: &self.lsystem,
            radii: &self.radii,
            mesh: &self.mesh,
            look: &self.look,
        }
    }

    /// Where the tree stands and how its turtle units scale into the world.
    pub(crate) fn placement(&self) -> Placement {
        Placement {
            position: self.position,
            scale: self.scale,
        }
    }
}

impl Validate for TreeScene {
    /// Checks the L-system's, radii's and mesh's ranges and the placement; the grammar's
    /// syntax is checked by [`Scene::from_str`].
    fn validate(&self) -> Result<(), FieldError> {
        self.lsystem.validate().map_err(|e| e.within("lsystem"))?;
        self.radii.validate().map_err(|e| e.within("radii"))?;
        self.mesh.validate().map_err(|e| e.within("mesh"))?;
        self.look.validate().map_err(|e| e.within("look"))?;
        FieldError::check(self.position.is_finite(), "position", || "must be finite".into())?;
        FieldError::check(self.scale.is_finite() && self.scale > 0.0, "scale", || {
            format!("must be a positive number, got {}", self.scale)
        })
    }
}

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
                        .map_err(|m| FieldError::new(&format!("species[{k}].blade"), m))?,
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
    pub fn grammar(&self) -> Result<(String, u32), String> {
        match self {
            BladeSource::Grammar { grammar, iterations } => Ok((grammar.clone(), *iterations)),
            BladeSource::Preset(name) => {
                let names: Vec<&str> = GRASS_PRESETS.iter().map(|p| p.0).collect();
                let (file, text) = GRASS_PRESETS
                    .iter()
                    .find(|p| p.0 == name)
                    .ok_or_else(|| format!("unknown preset `{name}` (expected one of {})", names.join(", ")))?;
                let scene = Scene::from_str(text, &format!("scenes/grass/{file}.ron")).map_err(|e| e.to_string())?;
                match scene.grass.and_then(|g| g.species.into_iter().next()).map(|s| s.blade) {
                    Some(BladeSource::Grammar { grammar, iterations }) => Ok((grammar, iterations)),
                    _ => Err(format!("preset `{name}` has no grammar species")),
                }
            }
        }
    }

    /// Derives the blade structure.
    pub fn shape(&self) -> Result<BladeShape, String> {
        let (grammar, iterations) = self.grammar()?;
        blade_from_grammar(&grammar, iterations).map_err(|e| format!("grammar {e}"))
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
            BladeSource::Preset(_) => self.blade.shape().map(drop).map_err(|m| FieldError::new("blade", m)),
            // The grammar derives in `Scene::from_str`, after this bound.
            BladeSource::Grammar { iterations, .. } => {
                validate_blade_iterations(iterations).map_err(|e| e.within("blade"))
            }
        }
    }
}

impl Validate for GrassScene {
    /// Checks every range the types cannot express; a grammar blade's syntax is checked by
    /// [`Scene::from_str`].
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

/// Time stepping and run length (scene section `simulation`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Simulation {
    /// Fixed simulation step, seconds. Default 1/240.
    pub step_seconds: f64,
    /// Fixed steps per frame for `run` and `bench`, at most [`MAX_STEPS_PER_FRAME`]. Default 4
    /// (60 frames per simulated second).
    pub steps_per_frame: u32,
    /// Frames `sylva run` simulates. Default 600 (10 s at the defaults).
    pub frames: u32,
}

impl Default for Simulation {
    fn default() -> Self {
        Self {
            step_seconds: 1.0 / 240.0,
            steps_per_frame: 4,
            frames: 600,
        }
    }
}

impl Validate for Simulation {
    /// Checks the step and the steps per frame.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(
            self.step_seconds.is_finite() && self.step_seconds > 0.0 && self.step_seconds <= 1.0,
            "step_seconds",
            || format!("must be within (0, 1] seconds, got {}", self.step_seconds),
        )?;
        FieldError::check(
            (1..=MAX_STEPS_PER_FRAME).contains(&self.steps_per_frame),
            "steps_per_frame",
            || format!("must be in 1..={MAX_STEPS_PER_FRAME}, got {}", self.steps_per_frame),
        )
    }
}

/// Most fixed steps per frame: 250 times the default, so that a frame stays a frame.
pub const MAX_STEPS_PER_FRAME: u32 = 1000;

/// A scene that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneError {
    /// The file (or a label for text that came from elsewhere).
    pub file: String,
    /// 1-based line, 0 when the error is not tied to a place.
    pub line: usize,
    /// 1-based column, 0 when unknown.
    pub column: usize,
    /// Dotted path of the offending field, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A scene made in code has no file to name.
        if !self.file.is_empty() {
            write!(f, "{}", self.file)?;
            if self.line > 0 {
                write!(f, ":{}:{}", self.line, self.column)?;
            }
            f.write_str(": ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SceneError {}

impl Scene {
    /// The embedded default scene: the streamed world.
    pub fn world() -> Self {
        Self::from_str(WORLD, "scenes/world.ron").expect("the embedded world scene is valid")
    }

    /// The embedded hanging chains.
    pub fn chains() -> Self {
        Self::from_str(CHAINS, "scenes/chains.ron").expect("the embedded chains scene is valid")
    }

    /// Hash of the parameters that shape the simulation state: a snapshot resumes
    /// only into a scene with its fingerprint (and its seed, which the snapshot keeps
    /// beside it, to name it in errors).
    ///
    /// Everything counts except what only names, lengthens, shows or stores a run: the
    /// name, `simulation.frames`, the sun, the camera (except in a world scene, whose
    /// chunks stream around it) and `world.cache` (it holds what the parameters
    /// generate). The parameters are hashed as parsed, so writing out a default changes
    /// nothing; a colonize `points_file` counts by its name, not its content.
    pub fn fingerprint(&self) -> u64 {
        let mut shaping = self.clone();
        shaping.name.clear();
        shaping.seed = 0;
        shaping.simulation.frames = 0;
        shaping.sun = Sun::default();
        shaping.source = None;
        match &mut shaping.world {
            Some(world) => world.cache = None,
            None => shaping.camera = Camera::default(),
        }
        sylva_runtime::snapshot::fingerprint(&shaping)
            .expect("a scene always encodes: its sequences and maps know their lengths")
    }

    /// Reads and validates a scene file.
    pub fn load(path: &Path) -> Result<Self, SceneError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SceneError {
            file: file.clone(),
            line: 0,
            column: 0,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        let mut scene = Self::from_str(&text, &file)?;
        if scene.name.is_empty() {
            scene.name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        scene.resolve_points_files(path.parent().unwrap_or(Path::new("")));
        Ok(scene)
    }

    /// Makes every relative `points_file` relative to `dir`, the scene file's folder: a scene
    /// names its data where it lies, whatever the working directory (text from elsewhere, an
    /// embedded scene, keeps the working directory).
    fn resolve_points_files(&mut self, dir: &Path) {
        let forest = self.forest.iter_mut().flat_map(|f| &mut f.species);
        let world = self.world.iter_mut().flat_map(|w| &mut w.trees).map(|t| &mut t.species);
        let species = forest.chain(world).filter_map(|s| s.colonize.as_mut());
        for colonize in self.colonize.iter_mut().chain(species) {
            if let Some(file) = &mut colonize.points_file
                && Path::new(file).is_relative()
            {
                *file = dir.join(&*file).to_string_lossy().into_owned();
            }
        }
    }

    /// Parses and validates scene text; `file` labels error messages.
    #[allow(clippy::should_implement_trait)] // it needs the file label, which `FromStr` cannot carry
    pub fn from_str(text: &str, file: &str) -> Result<Self, SceneError> {
        let options = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        let mut scene: Scene = options.from_str(text).map_err(|e| parse_error(file, text, &e))?;
        scene.validate().map_err(|e| field_error(file, text, &e))?;
        if let Some(tree) = &scene.tree
            && let Err(e) = LSystem::parse(&tree.lsystem.grammar)
        {
            return Err(grammar_error(file, text, "tree.lsystem.grammar", &e));
        }
        for (k, sp) in scene.grass.iter().flat_map(|g| &g.species).enumerate() {
            if let BladeSource::Grammar { grammar, iterations } = &sp.blade
                && let Err(e) = blade_from_grammar(grammar, *iterations)
            {
                let field = format!("grass.species[{k}].blade.grammar");
                return Err(grammar_error(file, text, &field, &e));
            }
        }
        if scene.name.is_empty() {
            scene.name = Path::new(file)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        scene.source = Some(SceneSource {
            file: file.to_owned(),
            text: text.into(),
        });
        Ok(scene)
    }

    /// An error found while building the scene, in the field `error` names: placed at the line
    /// of the file the scene was read from (nowhere for a scene made in code).
    pub(crate) fn error_at(&self, error: &FieldError) -> SceneError {
        let (file, text) = self.file_and_text();
        field_error(file, text, error)
    }

    /// A grammar error found while building the scene, in the grammar string at `field`:
    /// placed at its line in the file the scene was read from.
    pub(crate) fn grammar_error_at(&self, field: &str, error: &LSystemError) -> SceneError {
        let (file, text) = self.file_and_text();
        grammar_error(file, text, field, error)
    }

    fn file_and_text(&self) -> (&str, &str) {
        self.source.as_ref().map_or(("", ""), |s| (s.file.as_str(), &*s.text))
    }
}

impl Validate for Scene {
    /// Checks every range the types cannot express; the path starts at the scene root.
    fn validate(&self) -> Result<(), FieldError> {
        self.simulation.validate().map_err(|e| e.within("simulation"))?;
        FieldError::check(self.particles.gravity.is_finite(), "particles.gravity", || {
            "must be finite".into()
        })?;
        if let Some(chains) = &self.chains {
            chains.validate().map_err(|e| e.within("chains"))?;
        }
        if let Some(tree) = &self.tree {
            tree.validate().map_err(|e| e.within("tree"))?;
        }
        if let Some(colonize) = &self.colonize {
            colonize.validate().map_err(|e| e.within("colonize"))?;
        }
        if let Some(forest) = &self.forest {
            forest.validate().map_err(|e| e.within("forest"))?;
        }
        if let Some(grass) = &self.grass {
            grass.validate().map_err(|e| e.within("grass"))?;
        }
        if let Some(terrain) = &self.terrain {
            terrain.validate().map_err(|e| e.within("terrain"))?;
        }
        if let Some(world) = &self.world {
            world.validate().map_err(|e| e.within("world"))?;
        }
        let cam = &self.camera;
        FieldError::check(
            cam.position.is_finite() && cam.target.is_finite() && cam.position != cam.target,
            "camera.position",
            || "position and target must be finite and different".into(),
        )?;
        FieldError::check(
            cam.fov_y_degrees > 1.0 && cam.fov_y_degrees < 179.0,
            "camera.fov_y_degrees",
            || format!("must be within (1, 179), got {}", cam.fov_y_degrees),
        )?;
        FieldError::check(cam.near > 0.0 && cam.far > cam.near, "camera.near", || {
            format!("need 0 < near < far, got near {} and far {}", cam.near, cam.far)
        })?;
        FieldError::check(
            self.sun.direction.is_finite() && self.sun.direction.length() > 1e-6,
            "sun.direction",
            || "must be a finite, non-zero vector".into(),
        )
    }
}

/// A field that failed validation, placed where it is written in `text`: the one mapping of a
/// [`FieldError`] to `file:line:column: field `path`: reason`.
fn field_error(file: &str, text: &str, e: &FieldError) -> SceneError {
    let (line, column) = locate(text, &e.path).unwrap_or((0, 0));
    SceneError {
        file: file.to_owned(),
        line,
        column,
        field: Some(e.dotted()),
        message: e.message.clone(),
    }
}

/// A RON error. A value the field's type cannot hold (`-64` for a count, `4.5` for a whole
/// number) names the field and what it accepts; other errors keep RON's message.
fn parse_error(file: &str, text: &str, e: &ron::error::SpannedError) -> SceneError {
    let mistyped = locate::offset_of(text, e.span.start.line, e.span.start.col).and_then(|at| {
        let (start, literal) = locate::scalar_at(text, at)?;
        let steps = locate::steps_at(text, at);
        let expected = probe::expected::<Scene>(&steps)?;
        let message = format!("expected {expected}, got {literal}");
        (!expected.accepts(literal)).then(|| (locate::position_of(text, start), field_path(&steps), message))
    });
    if let Some(((line, column), path, message)) = mistyped {
        return SceneError {
            file: file.to_owned(),
            line,
            column,
            field: Some(path.join(".")),
            message,
        };
    }
    let field = match &e.code {
        ron::Error::NoSuchStructField { found, .. } => Some(found.clone()),
        ron::Error::DuplicateStructField { field, .. } => Some((*field).to_owned()),
        _ => None,
    };
    SceneError {
        file: file.to_owned(),
        line: e.span.start.line,
        column: e.span.start.col,
        field,
        message: e.code.to_string(),
    }
}

/// A grammar error in the string at `field` (a dotted path), placed at its line and column in
/// the file (or at the field, or nowhere, when the string cannot be found).
fn grammar_error(file: &str, text: &str, field: &str, e: &LSystemError) -> SceneError {
    let path: Vec<String> = field.split('.').map(str::to_owned).collect();
    let (line, column) = e
        .position()
        .and_then(|p| locate_in_string(text, &path, p.line as usize, p.column as usize))
        .or_else(|| locate(text, &path))
        .unwrap_or((0, 0));
    SceneError {
        file: file.to_owned(),
        line,
        column,
        field: Some(field.to_owned()),
        message: format!("grammar {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_covers_what_shapes_the_state_and_nothing_else() {
        let fp = |text: &str| Scene::from_str(text, "t.ron").unwrap().fingerprint();
        let chains = "chains: (columns: 2, rows: 2)";
        let base = fp(&format!("({chains})"));
        for same in [
            format!(
                "(name: \"renamed\", seed: 9, simulation: (frames: 5), {chains},
                  camera: (position: (1.0, 2.0, 3.0)), sun: (direction: (0.0, -1.0, 0.2)))"
            ),
            // Defaults written out.
            format!("(simulation: (steps_per_frame: 4), particles: (gravity: (0.0, -9.81, 0.0)), {chains})"),
        ] {
            assert_eq!(fp(&same), base, "{same}");
        }
        for other in [
            "(chains: (columns: 3, rows: 2))".to_owned(),
            format!("(simulation: (step_seconds: 0.01), {chains})"),
            format!("(simulation: (steps_per_frame: 2), {chains})"),
            format!("(particles: (gravity: (0.0, -1.0, 0.0)), {chains})"),
            format!("({chains}, tree: ())"),
        ] {
            assert_ne!(fp(&other), base, "{other}");
        }
        // A world streams around its camera; its cache only holds what it generates.
        let world = Scene::world();
        let mut cached = world.clone();
        cached.world.as_mut().unwrap().cache = Some("/tmp/cache".into());
        assert_eq!(cached.fingerprint(), world.fingerprint());
        let mut moved = world.clone();
        moved.camera.position.x += 1.0;
        assert_ne!(moved.fingerprint(), world.fingerprint());
    }

    fn err(text: &str) -> SceneError {
        Scene::from_str(text, "t.ron").unwrap_err()
    }

    #[test]
    fn embedded_scenes_parse_and_are_valid() {
        let s = Scene::chains();
        assert_eq!(s.name, "chains");
        assert!(s.chains.is_some());
        let w = Scene::world();
        assert_eq!(w.name, "world");
        assert!(w.world.is_some());
    }

    #[test]
    fn steps_per_frame_are_bounded() {
        // A scene mutant that ran for hours: 10^8 steps of 17,408 particles per frame.
        let e = err("(simulation: (\n  steps_per_frame: 100000000))");
        assert_eq!(
            (e.line, e.field.as_deref()),
            (2, Some("simulation.steps_per_frame")),
            "{e}"
        );
        assert!(Scene::from_str("(simulation: (steps_per_frame: 1000))", "t.ron").is_ok());
    }

    #[test]
    fn bad_world_values_name_the_field_and_line() {
        let cases = [
            ("(world: (\n  chunk_cells: 0))", "world.chunk_cells", 2),
            (
                "(world: (load_radius: 500.0,\n evict_radius: 100.0))",
                "world.evict_radius",
                2,
            ),
            ("(world: (\n\n cell_size: NaN))", "world.cell_size", 3),
            ("(world: (budget: (\n installs: 0)))", "world.budget.installs", 2),
            (
                "(world: (trees: [(species: (lsystem: ()), placement: (\n min_distance: -1.0))]))",
                "world.trees[0].placement.min_distance",
                2,
            ),
            ("(world: (threads: 100000))", "world.threads", 1),
            (
                "(world: (terrain: (basins: Some((coast: 300.0,\n coast_noise: 900.0)))))",
                "world.terrain.basins.coast_noise",
                2,
            ),
            (
                "(world: (terrain: (basins: Some((\n\n node_spacing: 7.0)))))",
                "world.terrain.basins.node_spacing",
                3,
            ),
            (
                "(world: (terrain: (erosion: Some((hydraulic: (\n rain: Random(drops: 3, amount: 1.0)))))))",
                "world.terrain.erosion.hydraulic.rain",
                2,
            ),
            (
                "(world: (terrain: (erosion: Some((\n iterations: 1000)))))",
                "world.terrain.erosion.iterations",
                2,
            ),
        ];
        for (text, field, line) in cases {
            let e = err(text);
            assert_eq!((e.field.as_deref(), e.line), (Some(field), line), "{text}: {e}");
        }
    }

    #[test]
    fn empty_scene_takes_every_default() {
        let s = Scene::from_str("()", "empty.ron").unwrap();
        assert_eq!(
            s,
            Scene {
                name: "empty".into(),
                source: s.source.clone(),
                ..Scene::default()
            }
        );
    }

    #[test]
    fn unknown_field_names_line_column_and_field() {
        let e = err("(\n  seed: 1,\n  chians: (),\n)");
        assert_eq!((e.line, e.field.as_deref()), (3, Some("chians")));
        assert!(e.to_string().starts_with("t.ron:3:"), "{e}");
        let e = err("(chains: (\n\n   colums: 3))");
        assert_eq!((e.line, e.field.as_deref()), (3, Some("colums")));
    }

    #[test]
    fn wrong_type_names_the_line() {
        let e = err("(\n seed: \"seven\",\n)");
        assert_eq!((e.line, e.column, e.field.as_deref()), (2, 8, Some("seed")));
        assert_eq!(
            e.message,
            "expected a whole number in 0..=18446744073709551615, got \"seven\""
        );
        let e = err("(particles: (integrator: Verlet))");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("Verlet"), "{}", e.message);
    }

    #[test]
    fn values_their_type_cannot_hold_name_the_field_and_what_it_accepts() {
        let e = err("(\n  terrain: (size: -64),\n)");
        assert_eq!(
            e.to_string(),
            "t.ron:2:19: field `terrain.size`: expected a whole number in 0..=4294967295, got -64"
        );
        let e = err("(\n  chains: (columns: 4.5),\n)");
        assert_eq!(
            e.to_string(),
            "t.ron:2:21: field `chains.columns`: expected a whole number in 0..=4294967295, got 4.5"
        );
        let e = err("(grass: (species: [(), (scale: (1.0, 2.0), colour: (1, 2, 3, 300))]))");
        assert_eq!(e.field, None, "a tuple element has no field of its own: {e}");
        let e = err("(grass: (species: [(), (blade: Preset(7))]))");
        assert_eq!(e.field.as_deref(), Some("grass.species[1].blade"), "{e}");
        assert_eq!(e.message, "expected a string in double quotes, got 7");
        let e = err("(colonize: (smooth_angles: yes))");
        assert_eq!(e.message, "expected `true` or `false`, got yes");
        // A value that fits is not blamed for an error after it.
        let e = err("(seed: 1 chains: ())");
        assert_eq!(e.field, None, "{e}");
    }

    #[test]
    fn out_of_range_values_name_the_field_where_it_is_written() {
        let e = err(
            "(\n  // stiffness: 1 in a comment must not be matched\n  chains: (\n    links: 4,\n    stiffness: 0.0,\n  ),\n)",
        );
        assert_eq!(e.field.as_deref(), Some("chains.stiffness"));
        assert_eq!((e.line, e.column), (5, 5));
        let e = err("(simulation: (step_seconds: -1.0))");
        assert_eq!(e.field.as_deref(), Some("simulation.step_seconds"));
        assert_eq!((e.line, e.column), (1, 15));
        let e = err("(camera: (near: 5.0, far: 1.0))");
        assert_eq!(e.field.as_deref(), Some("camera.near"));
    }

    #[test]
    fn a_defaulted_field_points_at_its_section() {
        // `links` is not written: the error points at `chains`, the nearest written key.
        let e = err("(\n name: \"x\",\n chains: (columns: 100000, rows: 100000),\n)");
        assert_eq!(e.field.as_deref(), Some("chains.links"));
        assert_eq!((e.line, e.column), (3, 2));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = err("(\n seed: 1,\n chains: (columns: 2\n");
        assert!(e.line >= 3, "{e}");
        let e = err("(seed: 1) trailing");
        assert_eq!(e.line, 1);
    }

    #[test]
    fn grammar_errors_point_into_the_scene_file() {
        let text = "(\n  tree: (\n    lsystem: (\n      grammar: r#\"axiom: A\n        A -> B(1]\"#,\n    ),\n  ),\n)";
        let e = err(text);
        assert_eq!(e.field.as_deref(), Some("tree.lsystem.grammar"));
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.starts_with("grammar line 2"), "{}", e.message);
        let e = err("(tree: (lsystem: (grammar: \"axiom: F(1 +\")))");
        assert_eq!(e.line, 1);
        assert!(e.column > 28, "{e}");
        // `\n` in a plain string starts a grammar line, not a file line.
        let e = err("(\n  tree: (lsystem: (grammar: \"axiom: A\\nA -> B(1]\")),\n)");
        assert_eq!((e.line, e.column), (2, 48), "{e}");
        assert!(e.message.starts_with("grammar line 2, column 9"), "{e}");
    }

    #[test]
    fn tree_parameters_are_validated() {
        let e = err("(tree: (\n mesh: (sides_min: 2)))");
        assert_eq!((e.field.as_deref(), e.line), (Some("tree.mesh.sides_min"), 2));
        let e = err("(tree: (radii: (exponent: 100.0)))");
        assert_eq!(e.field.as_deref(), Some("tree.radii.exponent"));
        let e = err("(tree: (lsystem: (iterations: 5000)))");
        assert_eq!(e.field.as_deref(), Some("tree.lsystem.iterations"));
        let e = err("(tree: (scale: 0.0))");
        assert_eq!(e.field.as_deref(), Some("tree.scale"));
    }

    #[test]
    fn colonize_parameters_are_validated() {
        let e = err("(colonize: (\n  influence_radius: 10.0,\n  kill_distance: 20.0))");
        assert_eq!(
            e.field.as_deref().map(|f| f.starts_with("colonize.")),
            Some(true),
            "{e}"
        );
        assert!(e.line >= 2, "{e}");
    }

    #[test]
    fn terrain_parameters_are_validated() {
        let e = err("(terrain: (\n  size: 0))");
        assert_eq!(
            (e.field.as_deref().map(|f| f.starts_with("terrain.")), e.line),
            (Some(true), 2),
            "{e}"
        );
    }
}
