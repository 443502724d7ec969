//! Parameters of the tree operations, as they appear in scene files.
//!
//! Defaults are the thesis code's defaults (\[C\] `FTreeConstructionData`; docs/design/trees.md,
//! "Program defaults"), because the thesis text itself gives none.

use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

/// How the pipe model (thesis eq. 3.6, `r^g = Σ r_child^g`) assigns start and end radii.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RadiusRule {
    /// The thesis text (§4.4.3): a segment's end radius follows eq. 3.6 over its children's end
    /// radii, its start radius is its parent's end radius, and a root starts at
    /// `trunk_multiplier ×` its end radius.
    Thesis,
    /// The thesis code \[C\]: a segment's start radius follows eq. 3.6 over its children's start
    /// radii, its end radius is the largest child start radius, a leaf is `r₀` at both ends, and a
    /// root's start radius is multiplied by `trunk_multiplier`.
    #[default]
    Code,
}

/// Radius parameters (thesis §4.4.2 "Radius-Daten").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RadiusParams {
    /// Leaf radius `r₀` ("Blattradius"), in scene units. Default 3.0; must be in (0, 10⁶].
    pub leaf_radius: f32,
    /// Exponent `g` of eq. 3.6 ("Radiuswachstumswert"). Default 2.5; must be in [0.5, 16].
    pub exponent: f32,
    /// Trunk width multiplier applied at the root. Default 1.41; must be in (0, 100].
    pub trunk_multiplier: f32,
    /// "Do radius calculations": when false every radius is `r₀` (no trunk multiplier either,
    /// as in \[C\]). Default true.
    pub enabled: bool,
    /// Which of the two published radius assignments to use. Default [`RadiusRule::Code`].
    pub rule: RadiusRule,
}

impl Default for RadiusParams {
    fn default() -> Self {
        Self {
            leaf_radius: 3.0,
            exponent: 2.5,
            trunk_multiplier: 1.41,
            enabled: true,
            rule: RadiusRule::Code,
        }
    }
}

impl RadiusParams {
    /// The settings of the thesis's Fig. 6.1b tree, from the demo level (docs/design/trees.md,
    /// "Fig. 6.1b counts"): r₀ = 1, g = 2, trunk multiplier 1.1, code rule.
    pub fn thesis_fig_6_1b() -> Self {
        Self {
            leaf_radius: 1.0,
            exponent: 2.0,
            trunk_multiplier: 1.1,
            enabled: true,
            rule: RadiusRule::Code,
        }
    }
}

impl Validate for RadiusParams {
    /// Checks every field's range.
    fn validate(&self) -> Result<(), FieldError> {
        in_range("leaf_radius", self.leaf_radius, Bound::Open(0.0), 1.0e6)?;
        in_range("exponent", self.exponent, Bound::Closed(0.5), 16.0)?;
        in_range("trunk_multiplier", self.trunk_multiplier, Bound::Open(0.0), 100.0)
    }
}

/// What drives the number of sides of a chain's cylinders between `sides_min` and `sides_max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum SidesRule {
    /// The thesis code \[C\] `CalcNumOfBranchSections`:
    /// `min(n_max, trunc(r_chain / r_root · (n_max − n_min + 0.5) + n_min))`, where `r_chain` is
    /// the chain's start radius and `r_root` its tree root's start radius.
    #[default]
    Radius,
    /// The thesis text (§5.3.2): linear in branch depth, `n_max` at depth 0 down to `n_min` at the
    /// graph's deepest depth, rounded to the nearest integer.
    Depth,
}

/// The start normal of a root segment, which eq. 4.1 needs but has no predecessor for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RootNormal {
    /// +Z, as the thesis code \[C\] does.
    #[default]
    Up,
    /// The root segment's direction, as the thesis text (§4.4.3) says.
    Direction,
}

/// How segments become cylinders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MeshStyle {
    /// Generalized cylinders: runs of same-depth segments (chains) share their rings.
    #[default]
    Chains,
    /// The thesis's "fractal mesh": every segment is its own cylinder along its direction,
    /// lengthened by its radius at both ends to cover the joints.
    Fractal {
        /// Leave out root segments, as \[C\] does (there the root is the L-system's 10-unit stub).
        drop_root: bool,
    },
}

/// Mesh parameters (thesis §4.4.2 "Genauigkeit" and the rest).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeshParams {
    /// Fewest sides around a cylinder, `n_min`. Default 3; must be in [3, 512].
    pub sides_min: u32,
    /// Most sides around a cylinder, `n_max`. Default 4; must be in [`sides_min`, 512].
    ///
    /// [`sides_min`]: MeshParams::sides_min
    pub sides_max: u32,
    /// What picks a chain's side count between the two. Default [`SidesRule::Radius`].
    pub sides_rule: SidesRule,
    /// Curve reduction threshold `max_K` (eq. 3.8): a node with one child is removed when the
    /// cosine between its two segments exceeds this. As in \[C\], only values strictly between 0
    /// and 1 reduce anything, so 1.0 switches it off. Default 0.95; must be in [0, 1].
    pub curve_reduction: f32,
    /// Rotation `rot_z` of the first ring vertex about the ring normal, in degrees. Default 0.
    pub start_rotation_deg: f32,
    /// Added to a child's rotation per child index (child 0 inherits its parent's), in degrees.
    /// Default 120.
    pub rotation_per_branch_deg: f32,
    /// Start normal of root segments. Default [`RootNormal::Up`].
    pub root_normal: RootNormal,
    /// Chained generalized cylinders or the fractal mesh. Default [`MeshStyle::Chains`].
    pub style: MeshStyle,
}

impl Default for MeshParams {
    fn default() -> Self {
        Self {
            sides_min: 3,
            sides_max: 4,
            sides_rule: SidesRule::Radius,
            curve_reduction: 0.95,
            start_rotation_deg: 0.0,
            rotation_per_branch_deg: 120.0,
            root_normal: RootNormal::Up,
            style: MeshStyle::Chains,
        }
    }
}

impl MeshParams {
    /// The thesis-compatible settings of Fig. 6.1b (docs/design/trees.md, "Fig. 6.1b counts"): 8
    /// sides, no curve reduction, code conventions. With the 10-unit root stub in the graph they
    /// reproduce the thesis's 206,658 vertices.
    pub fn thesis_fig_6_1b() -> Self {
        Self {
            sides_min: 8,
            sides_max: 8,
            curve_reduction: 1.0,
            ..Self::default()
        }
    }
}

impl Validate for MeshParams {
    /// Checks every field's range.
    fn validate(&self) -> Result<(), FieldError> {
        const MAX_SIDES: u32 = 512;
        FieldError::check((3..=MAX_SIDES).contains(&self.sides_min), "sides_min", || {
            format!("is {}, must be in [3, {MAX_SIDES}]", self.sides_min)
        })?;
        FieldError::check(
            (self.sides_min..=MAX_SIDES).contains(&self.sides_max),
            "sides_max",
            || {
                format!(
                    "is {}, must be in [sides_min = {}, {MAX_SIDES}]",
                    self.sides_max, self.sides_min
                )
            },
        )?;
        in_range("curve_reduction", self.curve_reduction, Bound::Closed(0.0), 1.0)?;
        for (field, angle) in [
            ("start_rotation_deg", self.start_rotation_deg),
            ("rotation_per_branch_deg", self.rotation_per_branch_deg),
        ] {
            FieldError::check(angle.is_finite(), field, || {
                format!("is {angle}, must be a finite angle in degrees")
            })?;
        }
        Ok(())
    }
}

enum Bound {
    Open(f32),
    Closed(f32),
}

fn in_range(field: &str, value: f32, low: Bound, high: f32) -> Result<(), FieldError> {
    let (ok_low, low_text) = match low {
        Bound::Open(l) => (value > l, format!("({l}")),
        Bound::Closed(l) => (value >= l, format!("[{l}")),
    };
    // NaN fails both comparisons, so it is reported like any other out-of-range value.
    FieldError::check(ok_low && value <= high, field, || {
        format!("is {value}, must be in {low_text}, {high}]")
    })
}
