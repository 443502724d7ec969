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
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{Camera, Sun};
use sylva_runtime::{FieldError, Validate};
use sylva_systems::colonize::ColonizeParams;
use sylva_systems::lsystem::LSystemError;
use sylva_systems::particles::{ChainField, ParticleSettings};
use sylva_systems::placement::forest::ForestParams;
use sylva_systems::terrain::TerrainParams;
use sylva_systems::world::WorldParams;

use crate::domains::{DOMAINS, GrassScene, Invalid, TreeScene};
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
        scene.check(file, text)?;
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

    /// Checks what the types cannot express: ranges, and that grammars parse. A scene read from
    /// text is checked already; one changed in code can be checked again.
    ///
    /// ```
    /// let mut scene = sylva::Scene::from_str("(chains: (columns: 2))", "c.ron").unwrap();
    /// scene.chains.as_mut().unwrap().stiffness = -1.0;
    /// let err = scene.validate().unwrap_err();
    /// // Not written in the file: placed at its section.
    /// assert_eq!(err.to_string(), "c.ron:1:2: field `chains.stiffness`: must be a positive number, got -1");
    /// ```
    pub fn validate(&self) -> Result<(), SceneError> {
        let (file, text) = self.file_and_text();
        self.check(file, text)
    }

    /// [`validate`](Self::validate), errors placed in `text`: the scene-wide sections, then
    /// each domain's.
    fn check(&self, file: &str, text: &str) -> Result<(), SceneError> {
        let field = |e: FieldError| field_error(file, text, &e);
        self.simulation.validate().map_err(|e| field(e.within("simulation")))?;
        for domain in DOMAINS {
            domain.validate(self).map_err(|e| match e {
                Invalid::Field(e) => field(e),
                Invalid::Grammar { field, error } => grammar_error(file, text, &field, &error),
            })?;
        }
        let cam = &self.camera;
        FieldError::check(
            cam.position.is_finite() && cam.target.is_finite() && cam.position != cam.target,
            "camera.position",
            || "position and target must be finite and different".into(),
        )
        .map_err(field)?;
        FieldError::check(
            cam.fov_y_degrees > 1.0 && cam.fov_y_degrees < 179.0,
            "camera.fov_y_degrees",
            || format!("must be within (1, 179), got {}", cam.fov_y_degrees),
        )
        .map_err(field)?;
        FieldError::check(cam.near > 0.0 && cam.far > cam.near, "camera.near", || {
            format!("need 0 < near < far, got near {} and far {}", cam.near, cam.far)
        })
        .map_err(field)?;
        FieldError::check(
            self.sun.direction.is_finite() && self.sun.direction.length() > 1e-6,
            "sun.direction",
            || "must be a finite, non-zero vector".into(),
        )
        .map_err(field)
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
    let message = match &e.code {
        // RON's own words advise its API; the user of a scene needs to know what to change.
        ron::Error::ExceededRecursionLimit => {
            "nested too deeply (RON reads at most 128 levels of brackets; no scene field needs that many)".to_owned()
        }
        code => code.to_string(),
    };
    SceneError {
        file: file.to_owned(),
        line: e.span.start.line,
        column: e.span.start.col,
        field,
        message,
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

    /// RON's recursion limit, met by a scene nested past it, is said in the scene's words.
    #[test]
    fn over_deep_nesting_is_said_in_the_scenes_words() {
        use ron::error::{Position, Span, SpannedError};
        let at = Position { line: 1, col: 9 };
        let e = SpannedError {
            code: ron::Error::ExceededRecursionLimit,
            span: Span { start: at, end: at },
        };
        let message = parse_error("deep.ron", "(world: [[[[", &e).to_string();
        assert!(message.starts_with("deep.ron:1:9: nested too deeply"), "{message}");
        assert!(!message.contains("serde_stacker"), "{message}");
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
