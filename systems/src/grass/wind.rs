//! Wind (thesis §7.2): each wind is three lattice value noises over space and
//! time — strength, polar and azimuth deflection — with normally distributed
//! node values and (corrected) cosine interpolation; active winds sum as
//! vectors; a [`Gust`] adds a local, time-limited push.
//!
//! Project choices the thesis leaves open: nodes sit `spacing` metres apart on
//! the ground plane (the thesis's "four nodes enclosing the particle") and
//! `1 / frequency` seconds apart in time; node values are `N(0, deviation)`
//! clamped to [−1, 1], mapped to [0, 1] for strength. One octave.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{hash_words, unit_f32};

/// Most winds a field may hold (per-blade caches are fixed-size arrays).
pub const MAX_WINDS: usize = 4;

/// One wind. Every value defaults to 0 (no wind), as in the thesis's editor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Wind {
    /// Seed of the node values: two winds with equal parameters but different seeds differ.
    pub seed: u64,
    /// Smallest strength, m/s.
    pub power_offset: f32,
    /// Strength modulation: strength lies in `[offset, offset + amplitude]`.
    pub power_amplitude: f32,
    /// Largest deflection out of the ground plane, radians.
    pub polar_amplitude: f32,
    /// Largest sideways deflection, radians.
    pub azimuth_amplitude: f32,
    /// Lattice nodes per second along time (0: the wind never changes).
    pub frequency: f32,
    /// Standard deviation of the node values (small: calm around the mean; large: white noise).
    pub deviation: f32,
    /// Metres between lattice nodes on the ground (default 4).
    pub spacing: f32,
    /// Main direction, radians about +Y from +X; turbulence turns with it.
    pub direction: f32,
    /// Seconds at which the wind switches on.
    pub from: f32,
    /// Seconds at which it switches off (default: never).
    pub until: f32,
}

impl Default for Wind {
    fn default() -> Self {
        Wind {
            seed: 0,
            power_offset: 0.0,
            power_amplitude: 0.0,
            polar_amplitude: 0.0,
            azimuth_amplitude: 0.0,
            frequency: 0.0,
            deviation: 0.0,
            spacing: 4.0,
            direction: 0.0,
            from: 0.0,
            until: f32::INFINITY,
        }
    }
}

/// A local, time-limited push: strongest at its centre and mid-way through, zero outside.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gust {
    /// Centre on the ground (y ignored).
    pub center: Vec3,
    /// Reach, metres.
    pub radius: f32,
    /// Start, seconds.
    pub start: f32,
    /// Duration, seconds.
    pub duration: f32,
    /// Peak wind velocity, m/s.
    pub velocity: Vec3,
}

impl Gust {
    /// The gust's wind at `pos` and time `t`.
    pub fn sample(&self, pos: Vec3, t: f32) -> Vec3 {
        let u = (t - self.start) / self.duration;
        let dx = pos.x - self.center.x;
        let dz = pos.z - self.center.z;
        let r2 = (dx * dx + dz * dz) / (self.radius * self.radius);
        if !(0.0..1.0).contains(&u) || r2 >= 1.0 {
            return Vec3::ZERO;
        }
        let space = (1.0 - r2) * (1.0 - r2);
        self.velocity * space * (std::f32::consts::PI * u).sin()
    }
}

/// Why a wind field was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WindError {
    /// More than [`MAX_WINDS`] winds.
    #[error("at most {MAX_WINDS} winds, got {0}")]
    TooMany(usize),
    /// A value is negative or not finite.
    #[error("wind {0}: {1}")]
    Value(usize, &'static str),
}

/// All winds and gusts acting on a field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WindField {
    /// The winds, summed.
    pub winds: Vec<Wind>,
    /// Local gusts, added.
    pub gusts: Vec<Gust>,
}

/// A blade's cached spatial interpolation at the two time nodes around now, per
/// wind and noise, so a step costs a time interpolation instead of 16 node lookups.
#[derive(Debug, Clone, Copy)]
pub struct WindCache {
    node: [i64; MAX_WINDS],
    values: [[[f32; 3]; 2]; MAX_WINDS],
}

impl Default for WindCache {
    fn default() -> Self {
        WindCache {
            node: [i64::MIN; MAX_WINDS],
            values: [[[0.0; 3]; 2]; MAX_WINDS],
        }
    }
}

#[inline]
fn cosine(f: f32) -> f32 {
    (1.0 - (std::f32::consts::PI * f).cos()) * 0.5
}

impl Wind {
    /// The standard-normal node value of noise `which` (0 strength, 1 polar, 2 azimuth)
    /// at lattice point (ix, iz, it), scaled by the deviation and clamped to [−1, 1].
    fn node(&self, which: u64, ix: i64, iz: i64, it: i64) -> f32 {
        let h = hash_words(&[self.seed, which, ix as u64, iz as u64, it as u64]);
        let u1 = unit_f32(h).max(1e-7);
        let u2 = unit_f32(h << 24);
        let z = (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos();
        (z * self.deviation).clamp(-1.0, 1.0)
    }

    /// The three noises at `pos`, time node `it`, cosine-interpolated over the ground plane.
    fn spatial(&self, pos: Vec3, it: i64) -> [f32; 3] {
        let gx = pos.x / self.spacing;
        let gz = pos.z / self.spacing;
        let (x0, z0) = (gx.floor(), gz.floor());
        let (fx, fz) = (cosine(gx - x0), cosine(gz - z0));
        let (ix, iz) = (x0 as i64, z0 as i64);
        let mut out = [0.0; 3];
        for (w, o) in out.iter_mut().enumerate() {
            let w = w as u64;
            let a = self.node(w, ix, iz, it) * (1.0 - fx) + self.node(w, ix + 1, iz, it) * fx;
            let b = self.node(w, ix, iz + 1, it) * (1.0 - fx) + self.node(w, ix + 1, iz + 1, it) * fx;
            *o = a * (1.0 - fz) + b * fz;
        }
        out
    }

    fn time_node(&self, t: f32) -> (i64, f32) {
        let g = t * self.frequency;
        let f = g.floor();
        (f as i64, cosine(g - f))
    }

    /// Strength (m/s), polar and azimuth deflection (radians) at `pos`, time `t`.
    pub fn components(&self, pos: Vec3, t: f32) -> (f32, f32, f32) {
        let (it, ft) = self.time_node(t);
        let a = self.spatial(pos, it);
        let b = self.spatial(pos, it + 1);
        self.compose([0, 1, 2].map(|k| a[k] * (1.0 - ft) + b[k] * ft))
    }

    fn compose(&self, n: [f32; 3]) -> (f32, f32, f32) {
        (
            self.power_offset + self.power_amplitude * (n[0] + 1.0) * 0.5,
            self.polar_amplitude * n[1],
            self.azimuth_amplitude * n[2],
        )
    }

    /// The unit main direction on the ground.
    pub fn main_direction(&self) -> Vec3 {
        Vec3::new(self.direction.cos(), 0.0, self.direction.sin())
    }

    fn vector(&self, (strength, polar, azimuth): (f32, f32, f32)) -> Vec3 {
        let d = self.main_direction();
        let side = Vec3::new(-d.z, 0.0, d.x);
        let (sp, cp) = polar.sin_cos();
        let (sa, ca) = azimuth.sin_cos();
        strength * (d * (cp * ca) + Vec3::Y * sp + side * (cp * sa))
    }

    fn is_active(&self, t: f32) -> bool {
        t >= self.from && t < self.until
    }

    /// This wind's velocity at `pos`, time `t` (zero while switched off).
    pub fn sample(&self, pos: Vec3, t: f32) -> Vec3 {
        if !self.is_active(t) {
            return Vec3::ZERO;
        }
        self.vector(self.components(pos, t))
    }
}

impl WindField {
    /// Checks counts and ranges.
    pub fn validate(&self) -> Result<(), WindError> {
        if self.winds.len() > MAX_WINDS {
            return Err(WindError::TooMany(self.winds.len()));
        }
        for (i, w) in self.winds.iter().enumerate() {
            let vals = [
                w.power_offset,
                w.power_amplitude,
                w.polar_amplitude,
                w.azimuth_amplitude,
                w.frequency,
            ];
            if vals.iter().any(|v| !(v.is_finite() && *v >= 0.0)) || !(w.deviation >= 0.0 && w.deviation.is_finite()) {
                return Err(WindError::Value(
                    i,
                    "powers, amplitudes, frequency and deviation must be finite and ≥ 0",
                ));
            }
            if !(w.spacing > 0.0 && w.spacing.is_finite()) {
                return Err(WindError::Value(i, "spacing must be positive"));
            }
        }
        for (i, g) in self.gusts.iter().enumerate() {
            if !(g.radius > 0.0 && g.duration > 0.0 && g.velocity.is_finite() && g.center.is_finite()) {
                return Err(WindError::Value(i, "gust radius and duration must be positive"));
            }
        }
        Ok(())
    }

    /// The summed wind at `pos`, time `t`, evaluated from scratch.
    pub fn sample(&self, pos: Vec3, t: f32) -> Vec3 {
        let winds: Vec3 = self.winds.iter().map(|w| w.sample(pos, t)).sum();
        winds + self.gusts.iter().map(|g| g.sample(pos, t)).sum::<Vec3>()
    }

    /// The same value as [`WindField::sample`] for a fixed `pos`, refreshing the
    /// blade's cache only when time crosses a lattice node.
    pub fn sample_cached(&self, pos: Vec3, t: f32, cache: &mut WindCache) -> Vec3 {
        let mut sum = Vec3::ZERO;
        for (k, w) in self.winds.iter().enumerate() {
            if !w.is_active(t) {
                continue;
            }
            let (it, ft) = w.time_node(t);
            if cache.node[k] != it {
                cache.values[k] = [w.spatial(pos, it), w.spatial(pos, it + 1)];
                cache.node[k] = it;
            }
            let [a, b] = cache.values[k];
            sum += w.vector(w.compose([0, 1, 2].map(|j| a[j] * (1.0 - ft) + b[j] * ft)));
        }
        for g in &self.gusts {
            sum += g.sample(pos, t);
        }
        sum
    }
}
