//! The force law, RK4 and the length constraint (thesis §7.3): the model's
//! constants ([`Dynamics`]) and a blade shape compiled for stepping
//! ([`BladeKernel`]), whose arithmetic runs on a block of blades at once (the
//! block step, `block_step.rs`); [`BladeField`](super::BladeField) steps many
//! blades of one shape.
//!
//! Force on particle `i` with parent `p` (positions relative to the blade root):
//!
//! ```text
//! D      = x_i − x_p                        current link vector
//! D_R    = R_p · (rest_i − rest_p)          rest vector turned with the parent link
//!                                           (R_p: shortest rotation from p's rest link to its current link;
//!                                            identity for children of the root)
//! T      = a·D_R + (1 − a)·|D_R|·D/|D|      target: angular stiffness a ∈ [0,1] weights the rest direction
//! F      = (T − D)·s − (v_i − v_p)·d        thesis law, v relative to the parent
//! f_i   += F + m_i·g + drag·length_i·W(root, t),   f_p −= F (unless p is the root)
//! ```
//!
//! The thesis leaves the target and the damper's velocity open (docs/design/grass.md, "Force
//! law" and "Damper velocity").
//!
//! After each RK4 step the length constraint moves each particle along its link
//! to `|D_m| = |D_o|·S + |D_a|·(1 − S)` (stiffness S = 1 restores the rest length,
//! the reverse of the thesis's printed formula; docs/design/grass.md, "Stiffness restores the
//! length") and removes the same fraction of the radial relative velocity.
//!
//! `R_p` is applied in closed form (Rodrigues, in the block step); a rest link
//! parallel to its parent's rest link needs no rotation at all: `D_R = ±|D_R|·D_p/|D_p|`.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

use super::blade::{BladeShape, MAX_PARTICLES};

/// How the damper constant is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum DamperRule {
    /// `d = 2ζ·√(m·s)` per link: the damping ratio ζ is what decides how long blades
    /// swing; the thesis's fixed ratio does not fix it (docs/design/grass.md, "Damper rule").
    Ratio(f32),
    /// The thesis rule `s = 2·d` (heavily overdamped with this project's masses).
    Thesis,
}

/// Simulation constants (all project choices; the thesis gives none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Dynamics {
    /// Fixed RK4 step of the bake and of a blade field, seconds (default 1/240). Live blades
    /// take their own, [`super::LiveSettings::step_seconds`].
    pub step_seconds: f32,
    /// Gravity, m/s² (always on; default (0, −9.81, 0)).
    pub gravity: Vec3,
    /// Spring constant s, N/m (default 20).
    pub spring: f32,
    /// Damper rule (default ζ = 0.25).
    pub damper: DamperRule,
    /// Wind force per metre of link per m/s of wind, N·s/m² (default 0.05).
    pub drag: f32,
    /// Size of the seeded initial offset that lets gravity act (thesis §7.2.1), metres (default 0.001).
    pub initial_offset: f32,
}

impl Default for Dynamics {
    fn default() -> Self {
        Dynamics {
            step_seconds: 1.0 / 240.0,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            spring: 20.0,
            damper: DamperRule::Ratio(0.25),
            drag: 0.05,
            initial_offset: 0.001,
        }
    }
}

impl Validate for Dynamics {
    /// Checks ranges.
    fn validate(&self) -> Result<(), FieldError> {
        let positive = |field: &str, v: f32| {
            FieldError::check(v > 0.0 && v.is_finite(), field, || format!("must be positive, got {v}"))
        };
        positive("step_seconds", self.step_seconds)?;
        positive("spring", self.spring)?;
        FieldError::check(self.gravity.is_finite(), "gravity", || {
            format!("must be finite, got {}", self.gravity)
        })?;
        FieldError::check(self.drag.is_finite(), "drag", || {
            format!("must be finite, got {}", self.drag)
        })?;
        FieldError::check(
            self.initial_offset >= 0.0 && self.initial_offset.is_finite(),
            "initial_offset",
            || format!("must be finite and ≥ 0, got {}", self.initial_offset),
        )?;
        match self.damper {
            DamperRule::Ratio(z) => FieldError::check(z >= 0.0 && z.is_finite(), "damper", || {
                format!("the damping ratio must be finite and ≥ 0, got {z}")
            }),
            DamperRule::Thesis => Ok(()),
        }
    }
}

/// How a particle's rest link turns with its parent link.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Turn {
    /// The parent is the root: the rest link never turns.
    Fixed,
    /// The rest link is `along` × the parent's rest direction: it turns into `along` × the
    /// parent's current direction.
    Along(f32),
    /// `along` × the parent's rest direction plus `perp` (orthogonal to it), which the
    /// shortest-arc rotation turns.
    General {
        /// Component along the parent's rest direction.
        along: f32,
        /// The rest, orthogonal to the parent's rest direction.
        perp: Vec3,
    },
}

/// A blade shape compiled for stepping: per-particle constants in flat arrays,
/// products of constants precomputed.
#[derive(Debug, Clone)]
pub struct BladeKernel {
    pub(crate) n: usize,
    pub(crate) parent: [usize; MAX_PARTICLES],
    rest: [Vec3; MAX_PARTICLES],
    pub(crate) rest_link: [Vec3; MAX_PARTICLES],
    pub(crate) rest_dir: [Vec3; MAX_PARTICLES],
    pub(crate) turn: [Turn; MAX_PARTICLES],
    pub(crate) inv_mass: [f32; MAX_PARTICLES],
    pub(crate) stiffness: [f32; MAX_PARTICLES],
    pub(crate) angular: [f32; MAX_PARTICLES],
    /// `|rest link|·(1 − angular)`: the weight of the current direction in the target.
    pub(crate) hold: [f32; MAX_PARTICLES],
    /// `|rest link|·stiffness`: the constraint's pull towards the rest length.
    pub(crate) restore: [f32; MAX_PARTICLES],
    /// `1 − stiffness`: the share of the current length the constraint keeps.
    pub(crate) keep: [f32; MAX_PARTICLES],
    /// `m·g`.
    pub(crate) weight: [Vec3; MAX_PARTICLES],
    /// `drag·|rest link|`.
    pub(crate) drag_len: [f32; MAX_PARTICLES],
    pub(crate) damper: [f32; MAX_PARTICLES],
    pub(crate) spring: f32,
    pub(crate) h: f32,
}

/// Below this share of the rest length, a rest link's part orthogonal to its parent's
/// rest direction is treated as zero (a straight continuation).
const PARALLEL: f32 = 1e-6;

impl BladeKernel {
    /// Compiles a validated shape with the given constants.
    pub fn new(shape: &BladeShape, dynamics: &Dynamics) -> Self {
        let n = shape.len().min(MAX_PARTICLES);
        let mut k = BladeKernel {
            n,
            parent: [0; MAX_PARTICLES],
            rest: [Vec3::ZERO; MAX_PARTICLES],
            rest_link: [Vec3::ZERO; MAX_PARTICLES],
            rest_dir: [Vec3::Y; MAX_PARTICLES],
            turn: [Turn::Fixed; MAX_PARTICLES],
            inv_mass: [0.0; MAX_PARTICLES],
            stiffness: [0.0; MAX_PARTICLES],
            angular: [0.0; MAX_PARTICLES],
            hold: [0.0; MAX_PARTICLES],
            restore: [0.0; MAX_PARTICLES],
            keep: [0.0; MAX_PARTICLES],
            weight: [Vec3::ZERO; MAX_PARTICLES],
            drag_len: [0.0; MAX_PARTICLES],
            damper: [0.0; MAX_PARTICLES],
            spring: dynamics.spring,
            h: dynamics.step_seconds,
        };
        for i in 0..n {
            k.rest[i] = shape.rest[i];
            if i == 0 {
                continue;
            }
            let p = shape.parent[i] as usize;
            let seg = shape.segment[i];
            k.parent[i] = p;
            k.rest_link[i] = shape.rest[i] - shape.rest[p];
            let len = k.rest_link[i].length();
            k.rest_dir[i] = k.rest_link[i] / len;
            if p != 0 {
                let along = k.rest_link[i].dot(k.rest_dir[p]);
                let perp = k.rest_link[i] - k.rest_dir[p] * along;
                k.turn[i] = if perp.length() <= PARALLEL * len {
                    Turn::Along(along)
                } else {
                    Turn::General { along, perp }
                };
            }
            k.inv_mass[i] = 1.0 / seg.mass;
            k.stiffness[i] = seg.stiffness;
            k.angular[i] = seg.angular_stiffness;
            k.hold[i] = len * (1.0 - seg.angular_stiffness);
            k.restore[i] = len * seg.stiffness;
            k.keep[i] = 1.0 - seg.stiffness;
            k.weight[i] = dynamics.gravity * seg.mass;
            k.drag_len[i] = dynamics.drag * len;
            k.damper[i] = match dynamics.damper {
                DamperRule::Ratio(z) => 2.0 * z * (seg.mass * dynamics.spring).sqrt(),
                DamperRule::Thesis => dynamics.spring * 0.5,
            };
        }
        k
    }

    /// Particles per blade, root included.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false (a kernel has a root).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Rest positions relative to the root.
    pub fn rest(&self) -> &[Vec3] {
        &self.rest[..self.n]
    }

    /// The damper constant of particle `i`'s link.
    pub fn damper(&self, i: usize) -> f32 {
        self.damper[i]
    }

    /// The fixed step, seconds.
    pub fn step_seconds(&self) -> f32 {
        self.h
    }

    /// The same shape and constants stepping `seconds` at a time.
    pub fn with_step(mut self, seconds: f32) -> Self {
        self.h = seconds;
        self
    }

    /// An estimate of the largest RK4 step that is stable for this shape, seconds.
    ///
    /// Linearised at the rest pose, a mode of the blade is `λ² = κ + γ·λ` per unit mass; its
    /// rate `|λ|` is at most `√κ` while underdamped and below `|γ|` when overdamped, and
    /// Gershgorin row sums bound the largest `|κ|` and `|γ|` over the modes. RK4 is stable while
    /// `h·λ` stays in the half-disc [`RK4_HALF_DISC`] of the left half-plane.
    /// An estimate, not a proof (the Jacobian changes as the blade bends): tests/grass_live_step.rs
    /// runs every preset at it in a storm and shows the stiffest one blowing up at 1.5 times it.
    pub fn stable_step(&self) -> f32 {
        let (stiffness, damping) = self.rest_jacobian_bounds();
        RK4_HALF_DISC / stiffness.sqrt().max(damping)
    }
}

/// Radius of the largest half-disc of the left half-plane inside RK4's stability region
/// (`|1 + z + z²/2 + z³/6 + z⁴/24| ≤ 1`): the region reaches 2√2 on the imaginary axis and
/// 2.785 on the real one, and is narrowest near 120° (2.6156).
pub const RK4_HALF_DISC: f32 = 2.6;
