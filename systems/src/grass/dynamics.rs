//! The force law, RK4 and the length constraint (thesis §7.3), as a dense
//! struct-of-arrays solver: every blade of a field has the same shape, so a
//! field is flat `[blade × particle]` position and velocity arrays, stepped in
//! parallel over fixed chunks of blades (bit-identical for any thread count).
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

use glam::{Quat, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::blade::{BladeShape, MAX_PARTICLES};
use super::wind::{WindCache, WindField};

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
    /// Fixed RK4 step, seconds (default 1/240).
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

impl Dynamics {
    /// Checks ranges.
    pub fn validate(&self) -> Result<(), &'static str> {
        let ok = self.step_seconds > 0.0
            && self.step_seconds.is_finite()
            && self.spring > 0.0
            && self.spring.is_finite()
            && self.gravity.is_finite()
            && self.drag.is_finite()
            && self.initial_offset.is_finite()
            && self.initial_offset >= 0.0;
        let damper_ok = match self.damper {
            DamperRule::Ratio(z) => z >= 0.0 && z.is_finite(),
            DamperRule::Thesis => true,
        };
        if ok && damper_ok {
            Ok(())
        } else {
            Err("step, spring must be positive; all values finite; damping ≥ 0")
        }
    }
}

/// A blade shape compiled for stepping: per-particle constants in flat arrays.
#[derive(Debug, Clone)]
pub struct BladeKernel {
    n: usize,
    parent: [usize; MAX_PARTICLES],
    rest: [Vec3; MAX_PARTICLES],
    rest_link: [Vec3; MAX_PARTICLES],
    rest_dir: [Vec3; MAX_PARTICLES],
    rest_len: [f32; MAX_PARTICLES],
    mass: [f32; MAX_PARTICLES],
    inv_mass: [f32; MAX_PARTICLES],
    stiffness: [f32; MAX_PARTICLES],
    angular: [f32; MAX_PARTICLES],
    damper: [f32; MAX_PARTICLES],
    spring: f32,
    drag: f32,
    gravity: Vec3,
    h: f32,
}

type State = [Vec3; MAX_PARTICLES];

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
            rest_len: [0.0; MAX_PARTICLES],
            mass: [0.0; MAX_PARTICLES],
            inv_mass: [0.0; MAX_PARTICLES],
            stiffness: [0.0; MAX_PARTICLES],
            angular: [0.0; MAX_PARTICLES],
            damper: [0.0; MAX_PARTICLES],
            spring: dynamics.spring,
            drag: dynamics.drag,
            gravity: dynamics.gravity,
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
            k.rest_len[i] = k.rest_link[i].length();
            k.rest_dir[i] = k.rest_link[i] / k.rest_len[i];
            k.mass[i] = seg.mass;
            k.inv_mass[i] = 1.0 / seg.mass;
            k.stiffness[i] = seg.stiffness;
            k.angular[i] = seg.angular_stiffness;
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

    fn accel(&self, x: &State, v: &State, wind: Vec3, a: &mut State) {
        let n = self.n;
        let mut dir = [Vec3::Y; MAX_PARTICLES];
        let mut len = [0.0f32; MAX_PARTICLES];
        let mut f = [Vec3::ZERO; MAX_PARTICLES];
        for i in 1..n {
            let d = x[i] - x[self.parent[i]];
            len[i] = d.length();
            dir[i] = if len[i] > 1e-9 { d / len[i] } else { self.rest_dir[i] };
        }
        for i in 1..n {
            let p = self.parent[i];
            let d = x[i] - x[p];
            let dr = if p == 0 {
                self.rest_link[i]
            } else {
                Quat::from_rotation_arc(self.rest_dir[p], dir[p]) * self.rest_link[i]
            };
            let ang = self.angular[i];
            let target = dr * ang + dir[i] * (self.rest_len[i] * (1.0 - ang));
            let force = (target - d) * self.spring - (v[i] - v[p]) * self.damper[i];
            f[i] += force + self.gravity * self.mass[i] + wind * (self.drag * self.rest_len[i]);
            if p != 0 {
                f[p] -= force;
            }
        }
        a[0] = Vec3::ZERO;
        for i in 1..n {
            a[i] = f[i] * self.inv_mass[i];
        }
    }

    /// One RK4 step plus the length constraint for one blade; `x`, `v` are its
    /// particles relative to the root (the root entry stays exactly zero).
    pub fn step(&self, x: &mut [Vec3], v: &mut [Vec3], wind: Vec3) {
        let n = self.n;
        let h = self.h;
        let mut x0 = [Vec3::ZERO; MAX_PARTICLES];
        let mut v0 = [Vec3::ZERO; MAX_PARTICLES];
        x0[..n].copy_from_slice(&x[..n]);
        v0[..n].copy_from_slice(&v[..n]);
        let (mut a1, mut a2, mut a3, mut a4) = (
            [Vec3::ZERO; MAX_PARTICLES],
            [Vec3::ZERO; MAX_PARTICLES],
            [Vec3::ZERO; MAX_PARTICLES],
            [Vec3::ZERO; MAX_PARTICLES],
        );
        let (mut xs, mut vs) = ([Vec3::ZERO; MAX_PARTICLES], [Vec3::ZERO; MAX_PARTICLES]);
        self.accel(&x0, &v0, wind, &mut a1);
        for i in 1..n {
            xs[i] = x0[i] + v0[i] * (0.5 * h);
            vs[i] = v0[i] + a1[i] * (0.5 * h);
        }
        let v2 = vs;
        self.accel(&xs, &vs, wind, &mut a2);
        for i in 1..n {
            xs[i] = x0[i] + v2[i] * (0.5 * h);
            vs[i] = v0[i] + a2[i] * (0.5 * h);
        }
        let v3 = vs;
        self.accel(&xs, &vs, wind, &mut a3);
        for i in 1..n {
            xs[i] = x0[i] + v3[i] * h;
            vs[i] = v0[i] + a3[i] * h;
        }
        let v4 = vs;
        self.accel(&xs, &vs, wind, &mut a4);
        let sixth = h / 6.0;
        for i in 1..n {
            x[i] = x0[i] + (v0[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i]) * sixth;
            v[i] = v0[i] + (a1[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i]) * sixth;
        }
        self.constrain(x, v);
    }

    fn constrain(&self, x: &mut [Vec3], v: &mut [Vec3]) {
        for i in 1..self.n {
            let p = self.parent[i];
            let d = x[i] - x[p];
            let len = d.length();
            if len <= 1e-9 {
                continue;
            }
            let dir = d / len;
            let s = self.stiffness[i];
            x[i] = x[p] + dir * (self.rest_len[i] * s + len * (1.0 - s));
            let radial = (v[i] - v[p]).dot(dir);
            v[i] -= dir * (radial * s);
        }
    }
}

/// Blades per parallel work item: fixed, so results never depend on the thread count.
pub const CHUNK_BLADES: usize = 256;

/// Many blades of one shape: flat SoA state, stepped in parallel.
#[derive(Debug, Clone)]
pub struct BladeField {
    /// The compiled shape.
    pub kernel: BladeKernel,
    /// Root position per blade, world metres.
    pub roots: Vec<Vec3>,
    /// Positions relative to each root, `[blade × particle]`.
    pub x: Vec<Vec3>,
    /// Velocities, `[blade × particle]`.
    pub v: Vec<Vec3>,
    caches: Vec<WindCache>,
    /// Simulated time, seconds.
    pub time: f32,
    /// Steps taken.
    pub steps: u64,
}

impl BladeField {
    /// Blades at rest at `roots`, each particle offset by a seeded `initial_offset` so gravity can act.
    pub fn new(kernel: BladeKernel, roots: Vec<Vec3>, seed: u64, initial_offset: f32) -> Self {
        let n = kernel.len();
        let mut x = Vec::with_capacity(roots.len() * n);
        for b in 0..roots.len() {
            for (i, r) in kernel.rest().iter().enumerate() {
                let jitter = if i == 0 {
                    Vec3::ZERO
                } else {
                    let h = sylva_runtime::rng::hash_words(&[seed, b as u64, i as u64, 0x6f66]);
                    let a = sylva_runtime::rng::unit_f32(h) * std::f32::consts::TAU;
                    Vec3::new(a.cos(), 0.0, a.sin()) * initial_offset
                };
                x.push(*r + jitter);
            }
        }
        BladeField {
            v: vec![Vec3::ZERO; x.len()],
            caches: vec![WindCache::default(); roots.len()],
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

    /// One fixed step of every blade under `wind` (sampled once per blade per step at its root).
    pub fn step(&mut self, wind: &WindField) {
        let n = self.kernel.len();
        let t = self.time;
        let kernel = &self.kernel;
        let roots = &self.roots;
        self.x
            .par_chunks_mut(CHUNK_BLADES * n)
            .zip(self.v.par_chunks_mut(CHUNK_BLADES * n))
            .zip(self.caches.par_chunks_mut(CHUNK_BLADES))
            .enumerate()
            .for_each(|(c, ((x, v), caches))| {
                for (j, cache) in caches.iter_mut().enumerate() {
                    let root = roots[c * CHUNK_BLADES + j];
                    let w = wind.sample_cached(root, t, cache);
                    kernel.step(&mut x[j * n..(j + 1) * n], &mut v[j * n..(j + 1) * n], w);
                }
            });
        self.steps += 1;
        self.time = self.steps as f32 * kernel.h;
    }

    /// Mean speed of all non-root particles, m/s (the warm-up detector's signal).
    pub fn mean_speed(&self) -> f32 {
        let n = self.kernel.len();
        let sum: f64 = self
            .v
            .iter()
            .enumerate()
            .filter(|(i, _)| i % n != 0)
            .map(|(_, v)| v.length() as f64)
            .sum();
        (sum / (self.blades() * (n - 1)).max(1) as f64) as f32
    }
}
