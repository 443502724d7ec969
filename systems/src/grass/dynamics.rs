//! The force law, RK4 and the length constraint (thesis §7.3), as a dense
//! struct-of-arrays solver: every blade of a field has the same shape, so a
//! field is stored as blocks of [`LANES`] blades — per particle, per
//! coordinate, one value per blade — and the arithmetic in [`super::lanes`]
//! runs on a whole block at once. Blocks are stepped in parallel over fixed
//! chunks (bit-identical for any thread count).
//!
//! Force on particle `i` with parent `p` (positions relative to the blade root):
//!
//! ```text
//! D      = x_i − x_p                        current link vector
//! D_R    = R_p · (rest_i − rest_p)          rest vector turned with the parent link
//!                                           (R_p: shortest rotation from p's rest link to its current link;
//!                                            identity for children of the root)
//! T      = a·D_R + (1 − a)·|D_R|·D/|D|      target: angular stiffness a ∈ [0,1] weights the rest direction
//! F      = (T − D)·s − (v_i − v_p)·d        thesis law with v = relative velocity (erratum 6)
//! f_i   += F + m_i·g + drag·length_i·W(root, t),   f_p −= F (unless p is the root)
//! ```
//!
//! After each RK4 step the length constraint moves each particle along its link
//! to `|D_m| = |D_o|·S + |D_a|·(1 − S)` (erratum 7 fixed: stiffness S = 1 restores
//! the rest length) and removes the same fraction of the radial relative velocity.
//!
//! `R_p` is applied in closed form (Rodrigues, see [`super::lanes`]); a rest link
//! parallel to its parent's rest link needs no rotation at all: `D_R = ±|D_R|·D_p/|D_p|`.
//!
//! [`BladeField::advance`] runs several steps per block while the block is in
//! cache; it gives exactly the bits of as many [`BladeField::step`] calls.

use glam::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

use super::blade::{BladeShape, MAX_PARTICLES};
use super::lanes::{LANES, Scratch, V3};
use super::wind::{WindField, WindLanes, WindStep};
use crate::registers::Registers;

/// How the damper constant is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum DamperRule {
    /// `d = 2ζ·√(m·s)` per link: the damping ratio ζ is what decides how long blades
    /// swing (erratum 8: the thesis's fixed ratio does not fix the behaviour).
    Ratio(f32),
    /// The thesis rule `s = 2·d` (heavily overdamped with this project's masses).
    Thesis,
}

/// Simulation constants (all project choices; the thesis gives none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Dynamics {
    /// Fixed RK4 step of the bake and of a [`BladeField`], seconds (default 1/240). Live blades
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

/// Blades per parallel work item: fixed, so results never depend on the thread count.
pub const CHUNK_BLADES: usize = 256;
const CHUNK_BLOCKS: usize = CHUNK_BLADES / LANES;
const _: () = assert!(CHUNK_BLADES.is_multiple_of(LANES), "chunks hold whole blocks");

/// Many blades of one shape: blocks of [`LANES`] blades, stepped in parallel.
#[derive(Debug, Clone)]
pub struct BladeField {
    /// The compiled shape.
    pub kernel: BladeKernel,
    /// Root position per blade, world metres.
    pub roots: Vec<Vec3>,
    /// Positions relative to each root, `[block × particle]`, one lane per blade.
    x: Vec<V3>,
    /// Velocities, laid out as `x`.
    v: Vec<V3>,
    /// Per block and wind: the wind noise at the two time nodes around now (`[block × wind]`).
    wind_values: Vec<WindLanes>,
    /// Per wind: the time node `wind_values` holds (shared by all blocks).
    wind_nodes: Vec<i64>,
    /// Simulated time, seconds.
    pub time: f32,
    /// Steps taken.
    pub steps: u64,
}

/// What every block of one `advance` call shares.
struct Advance<'a> {
    kernel: &'a BladeKernel,
    wind: &'a WindField,
    plans: &'a [WindStep],
    roots: &'a [Vec3],
    /// Entries of `wind_values` per block (at least one, so chunks line up when there is no wind).
    stride: usize,
}

impl Advance<'_> {
    /// The roots of block `b`'s lanes; lanes past the last blade repeat it.
    fn lane_roots(&self, b: usize) -> [Vec3; LANES] {
        let last = self.roots.len().saturating_sub(1);
        std::array::from_fn(|l| self.roots.get((b * LANES + l).min(last)).copied().unwrap_or(Vec3::ZERO))
    }

    #[inline(always)]
    fn run_inline(&self, first_block: usize, x: &mut [V3], v: &mut [V3], wind_values: &mut [WindLanes]) {
        let n = self.kernel.len();
        let winds = self.wind.winds.len();
        let reads_roots = self.plans.iter().any(WindStep::reads_roots);
        let mut scratch = Scratch::default();
        for (j, (xb, vb)) in x.chunks_mut(n).zip(v.chunks_mut(n)).enumerate() {
            let roots = if reads_roots {
                self.lane_roots(first_block + j)
            } else {
                [Vec3::ZERO; LANES]
            };
            let values = &mut wind_values[j * self.stride..j * self.stride + winds];
            for plan in self.plans {
                let w = self.wind.sample_lanes(plan, &roots, values);
                self.kernel.step_block_inline(xb, vb, &w, &mut scratch);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, first_block: usize, x: &mut [V3], v: &mut [V3], wind_values: &mut [WindLanes]) {
        self.run_inline(first_block, x, v, wind_values)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn run_avx512(&self, first_block: usize, x: &mut [V3], v: &mut [V3], wind_values: &mut [WindLanes]) {
        self.run_inline(first_block, x, v, wind_values)
    }

    /// Steps the blocks starting at `first_block` through every plan, on the widest
    /// registers the CPU offers (identical results either way).
    fn run(&self, first_block: usize, x: &mut [V3], v: &mut [V3], wind_values: &mut [WindLanes]) {
        match Registers::best() {
            Registers::Portable => self.run_inline(first_block, x, v, wind_values),
            // SAFETY: `best` detected the feature at run time.
            #[cfg(target_arch = "x86_64")]
            Registers::Avx2 => unsafe { self.run_avx2(first_block, x, v, wind_values) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Registers::Avx512 => unsafe { self.run_avx512(first_block, x, v, wind_values) },
        }
    }
}

impl BladeField {
    /// Blades at rest at `roots`, each particle offset by a seeded `initial_offset` so gravity can act.
    pub fn new(kernel: BladeKernel, roots: Vec<Vec3>, seed: u64, initial_offset: f32) -> Self {
        let n = kernel.len();
        let blocks = roots.len().div_ceil(LANES);
        let mut x: Vec<V3> = (0..blocks)
            .flat_map(|_| kernel.rest().iter().map(|r| V3::splat(*r)))
            .collect();
        for b in 0..roots.len() {
            for i in 1..n {
                let h = sylva_runtime::rng::hash_words(&[seed, b as u64, i as u64, 0x6f66]);
                let a = sylva_runtime::rng::unit_f32(h) * std::f32::consts::TAU;
                let jitter = Vec3::new(a.cos(), 0.0, a.sin()) * initial_offset;
                x[(b / LANES) * n + i].set(b % LANES, kernel.rest()[i] + jitter);
            }
        }
        BladeField {
            v: vec![V3::default(); x.len()],
            wind_values: Vec::new(),
            wind_nodes: Vec::new(),
            kernel,
            roots,
            x,
            time: 0.0,
            steps: 0,
        }
    }

    /// Number of blades.
    pub fn blades(&self) -> usize {
        self.roots.len()
    }

    /// Position of particle `i` of blade `blade`, relative to its root.
    pub fn x(&self, blade: usize, i: usize) -> Vec3 {
        self.x[(blade / LANES) * self.kernel.len() + i].get(blade % LANES)
    }

    /// Velocity of particle `i` of blade `blade`.
    pub fn v(&self, blade: usize, i: usize) -> Vec3 {
        self.v[(blade / LANES) * self.kernel.len() + i].get(blade % LANES)
    }

    /// One fixed step of every blade under `wind` (sampled once per blade per step at its root).
    pub fn step(&mut self, wind: &WindField) {
        self.advance(wind, 1);
    }

    /// `steps` fixed steps of every blade: the same result as as many [`BladeField::step`]
    /// calls, but each block of blades stays in cache for all of them.
    ///
    /// Pass the same `wind` on every call: each block caches its noise values keyed by the
    /// lattice time node only (a changed wind with the same number of winds is not noticed
    /// until the next node).
    pub fn advance(&mut self, wind: &WindField, steps: u64) {
        if steps == 0 {
            return;
        }
        let winds = wind.winds.len();
        let stride = winds.max(1);
        let blocks = self.roots.len().div_ceil(LANES);
        if self.wind_nodes.len() != winds || self.wind_values.len() != blocks * stride {
            self.wind_values = vec![WindLanes::default(); blocks * stride];
            self.wind_nodes = vec![i64::MIN; winds];
        }
        let h = self.kernel.h;
        let plans: Vec<WindStep> = (0..steps)
            .map(|j| {
                let t = if j == 0 { self.time } else { (self.steps + j) as f32 * h };
                wind.plan(t, &mut self.wind_nodes)
            })
            .collect();
        let run = Advance {
            kernel: &self.kernel,
            wind,
            plans: &plans,
            roots: &self.roots,
            stride,
        };
        let n = self.kernel.len();
        self.x
            .par_chunks_mut(CHUNK_BLOCKS * n)
            .zip(self.v.par_chunks_mut(CHUNK_BLOCKS * n))
            .zip(self.wind_values.par_chunks_mut(CHUNK_BLOCKS * stride))
            .enumerate()
            .for_each(|(c, ((x, v), values))| run.run(c * CHUNK_BLOCKS, x, v, values));
        self.steps += steps;
        self.time = self.steps as f32 * h;
    }

    /// Mean speed of all non-root particles, m/s (the warm-up detector's signal).
    pub fn mean_speed(&self) -> f32 {
        let n = self.kernel.len();
        let mut sum = 0.0f64;
        for b in 0..self.blades() {
            for i in 1..n {
                sum += self.v(b, i).length() as f64;
            }
        }
        (sum / (self.blades() * (n - 1)).max(1) as f64) as f32
    }
}
