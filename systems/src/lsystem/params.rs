//! Scene parameters of an L-system tree and the grammar-to-graph pipeline.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

use super::derive::DeriveOptions;
use super::error::LSystemError;
use super::foliage::LeafSymbols;
use super::grammar::LSystem;
use super::module::ModuleBuffer;
use super::turtle::{TropismMode, TurtleOptions, interpret};
use crate::tree::{BranchGraph, Leaves};

/// Largest accepted `module_limit` (about 2.7 · 10⁸ modules, a few GB).
pub const MAX_MODULE_LIMIT: usize = 1 << 28;

/// Largest accepted `iterations`.
pub const MAX_ITERATIONS: u32 = 1000;

/// The thesis's ternary tree (eq. 2.17, Fig. 2.6a), the default grammar.
const DEFAULT_GRAMMAR: &str = "#define d 137.5
#define a 18.95
#define lr 1.3
axiom: /(45)A
A -> F(50)[&(a)F(50)A]/(d)[&(a)F(50)A]/(d)[&(a)F(50)A]
F(l) -> F(l*lr)
";

/// An L-system tree as a scene describes it.
///
/// Defaults reproduce thesis Fig. 2.6a at n = 5 (the thesis program's
/// default derivation count) without tropism.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LSystemParams {
    /// Grammar text (see the [module docs](super) for the language).
    /// Default: the ternary tree of thesis eq. 2.17.
    pub grammar: String,
    /// Number of derivation steps n, at most [`MAX_ITERATIONS`]. Default 5.
    pub iterations: u32,
    /// Length of `F`/`f` written without a parameter; > 0. Default 10.
    pub step: f32,
    /// Angle δ in degrees for rotations written without a parameter. Default 25.
    pub angle: f32,
    /// Initial segment width (`!(w)` changes it); >= 0. Default 1.
    pub width: f32,
    /// Factor a bare `!` multiplies the width by; > 0. Default 0.7.
    pub width_factor: f32,
    /// Largest word any step may produce, 1 to [`MAX_MODULE_LIMIT`]. Default 20,000,000.
    pub module_limit: usize,
    /// Tropism vector T (world, Z-up), not normalised. Default (0, 0, 0).
    pub tropism: Vec3,
    /// Tropism susceptibility e, >= 0. Default 0.2 (as the thesis program;
    /// no effect while T is zero).
    pub tropism_strength: f32,
    /// Thesis (bend the segment only, eq. 2.18) or ABOP (rotate the turtle). Default `Thesis`.
    pub tropism_mode: TropismMode,
    /// Length of the vertical root stub the thesis program adds below every
    /// tree; set 10 to reproduce the thesis's segment and vertex counts,
    /// 0 for none. >= 0. Default 0.
    pub root_stub: f32,
    /// Added to the scene seed for the stochastic productions, so one scene
    /// can hold different trees of one species. Default 0.
    pub seed_offset: u64,
    /// The symbol that puts a leaf at the turtle (`L` or `L(size)`, size in turtle units,
    /// the step without one), besides the polygons `{ … }` that are always leaves. A symbol
    /// name as the grammar writes it (`"L"`, `"a_l"`); a turtle symbol draws as before and
    /// makes no leaf. Default: none. Serialized only when set, so scenes without one keep
    /// their fingerprints and world chunk keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_symbol: Option<String>,
}

impl Default for LSystemParams {
    fn default() -> Self {
        let turtle = TurtleOptions::default();
        Self {
            grammar: DEFAULT_GRAMMAR.to_string(),
            iterations: 5,
            step: turtle.step,
            angle: turtle.angle,
            width: turtle.width,
            width_factor: turtle.width_factor,
            module_limit: DeriveOptions::default().module_limit,
            tropism: Vec3::ZERO,
            tropism_strength: 0.2,
            tropism_mode: TropismMode::Thesis,
            root_stub: 0.0,
            seed_offset: 0,
            leaf_symbol: None,
        }
    }
}

/// The result of [`generate`].
#[derive(Clone, Debug, PartialEq)]
pub struct LSystemOutput {
    /// The derived word.
    pub modules: ModuleBuffer,
    /// The tree the turtle drew.
    pub graph: BranchGraph,
    /// Width per graph segment, from `!`.
    pub widths: Vec<f32>,
    /// The leaves the grammar draws (polygons and the leaf symbol), in the graph's frame.
    pub leaves: Leaves,
}

impl Validate for LSystemParams {
    /// Checks ranges; the error names the field and says what is wrong.
    /// Grammar syntax is checked by [`LSystem::parse`], not here.
    fn validate(&self) -> Result<(), FieldError> {
        fn finite(field: &str, v: f32) -> Result<(), FieldError> {
            FieldError::check(v.is_finite(), field, || format!("must be a finite number, got {v}"))
        }
        fn at_least(field: &str, v: f32, min: f32, strict: bool) -> Result<(), FieldError> {
            finite(field, v)?;
            let op = if strict { ">" } else { ">=" };
            FieldError::check(v > min || (!strict && v == min), field, || {
                format!("must be {op} {min}, got {v}")
            })
        }
        FieldError::check(!self.grammar.trim().is_empty(), "grammar", || {
            "is empty; it needs at least an `axiom:` line".into()
        })?;
        FieldError::check(self.iterations <= MAX_ITERATIONS, "iterations", || {
            format!("must be at most {MAX_ITERATIONS}, got {}", self.iterations)
        })?;
        at_least("step", self.step, 0.0, true)?;
        finite("angle", self.angle)?;
        at_least("width", self.width, 0.0, false)?;
        at_least("width_factor", self.width_factor, 0.0, true)?;
        FieldError::check(
            (1..=MAX_MODULE_LIMIT).contains(&self.module_limit),
            "module_limit",
            || format!("must be in 1..={MAX_MODULE_LIMIT}, got {}", self.module_limit),
        )?;
        FieldError::check(self.tropism.is_finite(), "tropism", || {
            format!("must be finite, got {}", self.tropism)
        })?;
        at_least("tropism_strength", self.tropism_strength, 0.0, false)?;
        at_least("root_stub", self.root_stub, 0.0, false)?;
        FieldError::check(
            self.leaf_symbol.as_deref().is_none_or(valid_leaf_symbol),
            "leaf_symbol",
            || "must be one letter, optionally subscripted (`L`, `a_l`), or one ABOP symbol".into(),
        )
    }
}

/// A name the grammar language reads as one module symbol.
fn valid_leaf_symbol(name: &str) -> bool {
    let chars: Vec<char> = name.chars().collect();
    match chars[..] {
        [c] => c.is_alphabetic() || "~'@?*".contains(c),
        [c, '_', s] => c.is_alphabetic() && s.is_alphanumeric(),
        _ => false,
    }
}

impl LSystemParams {
    /// The derivation settings for scene seed `seed`.
    pub fn derive_options(&self, seed: u64) -> DeriveOptions {
        DeriveOptions {
            seed: seed.wrapping_add(self.seed_offset),
            module_limit: self.module_limit,
            ..DeriveOptions::default()
        }
    }

    /// The turtle settings.
    pub fn turtle_options(&self) -> TurtleOptions {
        TurtleOptions {
            step: self.step,
            angle: self.angle,
            width: self.width,
            width_factor: self.width_factor,
            tropism: self.tropism,
            tropism_strength: self.tropism_strength,
            tropism_mode: self.tropism_mode,
            root_stub: self.root_stub,
            leaf_symbols: LeafSymbols::default(),
        }
    }

    /// [`Self::turtle_options`] with the leaf symbols of `system`, the grammar these
    /// parameters parse to.
    pub fn turtle_options_for(&self, system: &LSystem) -> TurtleOptions {
        TurtleOptions {
            leaf_symbols: LeafSymbols::of(system.symbols(), self.leaf_symbol.as_deref()),
            ..self.turtle_options()
        }
    }
}

/// Validates, parses, derives and interprets: scene parameters to branch graph.
pub fn generate(params: &LSystemParams, seed: u64) -> Result<LSystemOutput, LSystemError> {
    params.validate()?;
    let system = LSystem::parse(&params.grammar)?;
    let modules = system.derive(params.iterations, &params.derive_options(seed))?;
    let drawn = interpret(&modules, &params.turtle_options_for(&system))?;
    Ok(LSystemOutput {
        modules,
        graph: drawn.graph,
        widths: drawn.widths,
        leaves: drawn.leaves,
    })
}
