//! Growth parameters (`ColonizeParams`) with the thesis code's defaults
//! (docs/design/trees.md, "Program defaults").

use glam::Vec3;
use serde::{Deserialize, Serialize};

use sylva_runtime::{FieldError, Validate};

use super::limits::{MAX_ATTRACTORS, MAX_COORDINATE, within_bounds};
use super::regions::{Region, Shape, validate_shapes};

/// Largest iteration limit N_I (the thesis's trees take 20 to 80): each iteration, and each trunk
/// extension, costs at least a scan of the growing nodes.
pub const MAX_ITERATIONS: u32 = 10_000;

/// How the step length depends on the branch depth Z ("Gewichtetes Wachstum").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WeightedGrowth {
    /// Every step is D.
    Off,
    /// The thesis text: 2·D at Z = 0, D at Z = max_Z, linear in between (by the growing node's Z).
    #[default]
    Linear,
    /// The thesis code's integer division: 2·D at Z = 0, D otherwise.
    Thesis,
}

/// Everything space colonization needs: where the attractors come from and how the trees grow.
///
/// Defaults are the thesis code's (\[C\]; docs/design/trees.md, "Program defaults"); the thesis
/// text states none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ColonizeParams {
    /// Influence radius d_i: an attractor steers its nearest node only within this distance. Default 500.
    pub influence_radius: f32,
    /// Kill distance d_k: an attractor with a node this close is removed. Must be below d_i. Default 100.
    pub kill_distance: f32,
    /// Step D between a node and its successor. Default 10.
    pub step: f32,
    /// Tropism T, added to the normalized attraction direction. Default (0, 0, 1).
    pub tropism: Vec3,
    /// Iteration limit N_I, at most [`MAX_ITERATIONS`]. Default 20.
    pub iterations: u32,
    /// Maximum number of successors of a node (max_grad). Default 4.
    pub max_degree: u32,
    /// Maximum branch depth max_Z. Default 6.
    pub max_depth: u32,
    /// A node that did not grow for more than this many iterations stops growing (max_NG). Default 2.
    pub max_no_growth: u32,
    /// Step length by branch depth. Default [`WeightedGrowth::Linear`] (the code's `true`).
    pub weighted_growth: WeightedGrowth,
    /// Pull the successors of a fork halfway toward their mean end (corrected eq. 3.5). Default true.
    pub smooth_angles: bool,
    /// Curve reduction max_K applied to the grown graph; 1.0 (default) leaves it to meshing,
    /// which applies `MeshParams::curve_reduction`.
    pub curve_reduction: f32,
    /// Total attractor count sampled over the union of `regions`. Default 2000.
    pub count: u32,
    /// Attractor regions; their union is sampled without doubled density where they overlap.
    pub regions: Vec<Region>,
    /// Regions that receive no attractors.
    pub exclusions: Vec<Shape>,
    /// A point file (one `x y z` per line, see [`parse_points`](super::parse_points)) whose points
    /// are added to the sampled ones, together at most [`MAX_ATTRACTORS`]. A relative path is
    /// relative to the scene file's folder ([`Colonizer::new`](super::Colonizer::new) itself
    /// takes it as it is, relative to the working directory).
    pub points_file: Option<String>,
    /// Tree roots; several roots grow a forest competing for one attractor cloud. Default the origin.
    pub roots: Vec<Vec3>,
    /// Crown gap for forests (beyond the thesis): an attractor within this distance of nodes of
    /// two different trees dies, so no tree is drawn into the space next to another's branches
    /// and neighbouring crowns keep roughly this far apart. 0 (default) turns it off: crowns
    /// then part only by each attractor feeding its nearest node, about d_k apart.
    pub crown_gap: f32,
    /// In a scene: 0 (default) grows the trees completely while the scene is built; n > 0 grows
    /// them n iterations per fixed step while the app runs (`colonize.grow`), with the
    /// attractors as entities. `sylva tree` and forest species always grow completely.
    pub iterations_per_step: u32,
}

impl Default for ColonizeParams {
    fn default() -> Self {
        Self {
            influence_radius: 500.0,
            kill_distance: 100.0,
            step: 10.0,
            tropism: Vec3::Z,
            iterations: 20,
            max_degree: 4,
            max_depth: 6,
            max_no_growth: 2,
            weighted_growth: WeightedGrowth::Linear,
            smooth_angles: true,
            curve_reduction: 1.0,
            count: 2000,
            regions: vec![Region::default()],
            exclusions: Vec::new(),
            points_file: None,
            roots: vec![Vec3::ZERO],
            crown_gap: 0.0,
            iterations_per_step: 0,
        }
    }
}

impl Validate for ColonizeParams {
    /// Checks every field.
    fn validate(&self) -> Result<(), FieldError> {
        self.validate_growth()?;
        FieldError::check(
            !self.regions.is_empty() || self.points_file.is_some(),
            "regions",
            || "is empty and no points_file is given: no attractors".to_owned(),
        )?;
        FieldError::check(self.count <= MAX_ATTRACTORS, "count", || {
            format!("is {}, at most {MAX_ATTRACTORS} attractors are allowed", self.count)
        })?;
        FieldError::check(self.regions.is_empty() || self.count > 0, "count", || {
            "is 0, regions need at least one attractor".to_owned()
        })?;
        validate_shapes(&self.regions, &self.exclusions)
    }
}

impl ColonizeParams {
    /// Checks the fields growth uses (everything but the attractor sources).
    pub(crate) fn validate_growth(&self) -> Result<(), FieldError> {
        let positive = |field: &str, v: f32| {
            FieldError::check(v.is_finite() && v > 0.0 && v <= MAX_COORDINATE, field, || {
                format!("is {v}, must be a number > 0 and at most {MAX_COORDINATE}")
            })
        };
        positive("influence_radius", self.influence_radius)?;
        positive("kill_distance", self.kill_distance)?;
        positive("step", self.step)?;
        FieldError::check(self.kill_distance < self.influence_radius, "kill_distance", || {
            format!(
                "is {}, must be below influence_radius ({}): attractors would never be killed",
                self.kill_distance, self.influence_radius
            )
        })?;
        FieldError::check((0.0..=MAX_COORDINATE).contains(&self.crown_gap), "crown_gap", || {
            format!("is {}, must be within 0..={MAX_COORDINATE} (0: off)", self.crown_gap)
        })?;
        FieldError::check(self.iterations <= MAX_ITERATIONS, "iterations", || {
            format!("is {}, must be at most {MAX_ITERATIONS}", self.iterations)
        })?;
        FieldError::check(self.tropism.is_finite(), "tropism", || {
            format!("is {}, must be finite", self.tropism)
        })?;
        FieldError::check(self.max_degree > 0, "max_degree", || {
            "is 0, must be at least 1".to_owned()
        })?;
        FieldError::check((0.0..=1.0).contains(&self.curve_reduction), "curve_reduction", || {
            format!("is {}, must be in [0, 1]", self.curve_reduction)
        })?;
        FieldError::check(!self.roots.is_empty(), "roots", || {
            "is empty, at least one tree root is needed".to_owned()
        })?;
        match self.roots.iter().position(|r| !within_bounds(*r)) {
            Some(i) => Err(FieldError::new(
                &format!("roots[{i}]"),
                format!(
                    "is {}, must be finite and within ±{MAX_COORDINATE} on every axis",
                    self.roots[i]
                ),
            )),
            None => Ok(()),
        }
    }
}
