//! Wind (thesis §7.2): each wind is three lattice value noises over space and
//! time — strength, polar and azimuth deflection — with normally distributed
//! node values and (corrected) cosine interpolation; active winds sum as
//! vectors; a [`Gust`] adds a local, time-limited push.
//!
//! Project choices the thesis leaves open: nodes sit `spacing` metres apart on
//! the ground plane (the thesis's "four nodes enclosing the particle") and
//! `1 / frequency` seconds apart in time; node values are `N(0, deviation)`
//! clamped to [−1, 1], mapped to [0, 1] for strength. One octave.
//!
//! The field stepper samples [`LANES`] blades at once (`WindField::plan` takes
//! what depends on time only, once per step); it and the scalar samplers call the
//! same per-blade arithmetic — sines and cosines included, which are a fixed
//! polynomial rather than the platform's library — so they agree to the bit.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{SWAY_WINDS, SwayGust, SwayNoise, SwayWind};
use sylva_runtime::rng::{hash_words, unit_f32};
use sylva_runtime::{FieldError, Validate};

use super::lane_vectors::{LANES, Lane, V3};

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
        self.time_factor(t).map_or(Vec3::ZERO, |f| self.at(pos, f))
    }

    /// The rise and fall over the gust's duration at `t`; `None` outside it.
    fn time_factor(&self, t: f32) -> Option<f32> {
        let u = (t - self.start) / self.duration;
        (0.0..1.0).contains(&u).then(|| (std::f32::consts::PI * u).sin())
    }

    /// The gust's wind at `pos` given its time factor.
    #[inline(always)]
    fn at(&self, pos: Vec3, factor: f32) -> Vec3 {
        let dx = pos.x - self.center.x;
        let dz = pos.z - self.center.z;
        let r2 = (dx * dx + dz * dz) / (self.radius * self.radius);
        if r2 >= 1.0 {
            return Vec3::ZERO;
        }
        let space = (1.0 - r2) * (1.0 - r2);
        self.velocity * space * factor
    }
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

/// A block's wind noise at the two time nodes around now: `[node][noise]`, one lane per blade.
pub(crate) type WindLanes = [[Lane; 3]; 2];

/// How a wind's cached node values change at a step.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Refresh {
    /// Same time node as the step before.
    Keep,
    /// The next node: the later values become the earlier ones, one new node is read.
    Shift,
    /// Both nodes are read.
    Full,
}

/// One active wind at one step: what depends on time only.
#[derive(Debug, Clone, Copy)]
struct WindPlan {
    wind: usize,
    it: i64,
    ft: f32,
    refresh: Refresh,
    direction: Vec3,
}

/// Everything of one step's wind that does not depend on the blade.
#[derive(Debug, Clone)]
pub(crate) struct WindStep {
    winds: Vec<WindPlan>,
    /// Active gusts and their time factors.
    gusts: Vec<(usize, f32)>,
}

impl WindStep {
    /// Whether sampling this step reads the blades' roots (a cache refresh or a gust).
    pub(crate) fn reads_roots(&self) -> bool {
        !self.gusts.is_empty() || self.winds.iter().any(|w| w.refresh != Refresh::Keep)
    }
}
#[inline]
fn cosine(f: f32) -> f32 {
    (1.0 - (std::f32::consts::PI * f).cos()) * 0.5
}

/// `(sin x, cos x)` from a fixed polynomial (Cephes' single-precision minimax on
/// [−π/4, π/4] after a three-part reduction by π/2), branch-free so a loop over lanes
/// vectorizes; plain multiplies and adds, so every code path gives the same bits.
/// Accurate to a few ulps for |x| < 10⁵ (far beyond any deflection angle).
#[inline(always)]
pub(crate) fn sin_cos(x: f32) -> (f32, f32) {
    // Adding and removing 1.5·2²³ rounds to the nearest integer without a rounding instruction.
    const ROUND: f32 = 12_582_912.0;
    let q = (x * std::f32::consts::FRAC_2_PI + ROUND) - ROUND;
    let r = ((x - q * 1.570_312_5) - q * 4.837_513e-4) - q * 7.549_79e-8;
    let z = r * r;
    let s = r + r * z * ((-1.951_529_6e-4 * z + 8.332_161e-3) * z - 1.666_665_5e-1);
    let c = ((2.443_315_7e-5 * z - 1.388_731_6e-3) * z + 4.166_664_6e-2) * z * z - 0.5 * z + 1.0;
    let k = q as i32;
    let (sw, cw) = if k & 1 == 0 { (s, c) } else { (c, s) };
    let sin = if k & 2 == 0 { sw } else { -sw };
    let cos = if k.wrapping_add(1) & 2 == 0 { cw } else { -cw };
    (sin, cos)
}

/// Strength along the main direction `d`, tilted up by `polar` and sideways by `azimuth`.
#[inline(always)]
fn turn(d: Vec3, (strength, polar, azimuth): (f32, f32, f32)) -> Vec3 {
    let side = Vec3::new(-d.z, 0.0, d.x);
    let (sp, cp) = sin_cos(polar);
    let (sa, ca) = sin_cos(azimuth);
    strength * (d * (cp * ca) + Vec3::Y * sp + side * (cp * sa))
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

    #[inline(always)]
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

    fn vector(&self, components: (f32, f32, f32)) -> Vec3 {
        turn(self.main_direction(), components)
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

impl Validate for WindField {
    /// Checks counts and ranges; the path names the wind or gust, `winds[1].spacing`.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.winds.len() <= MAX_WINDS, "winds", || {
            format!("at most {MAX_WINDS} winds, got {}", self.winds.len())
        })?;
        for (i, w) in self.winds.iter().enumerate() {
            let at = |field: &str| format!("winds[{i}].{field}");
            for (field, v) in [
                ("power_offset", w.power_offset),
                ("power_amplitude", w.power_amplitude),
                ("polar_amplitude", w.polar_amplitude),
                ("azimuth_amplitude", w.azimuth_amplitude),
                ("frequency", w.frequency),
                ("deviation", w.deviation),
            ] {
                FieldError::check(v.is_finite() && v >= 0.0, &at(field), || {
                    format!("must be finite and ≥ 0, got {v}")
                })?;
            }
            FieldError::check(w.spacing > 0.0 && w.spacing.is_finite(), &at("spacing"), || {
                format!("must be positive, got {}", w.spacing)
            })?;
        }
        for (i, g) in self.gusts.iter().enumerate() {
            let at = |field: &str| format!("gusts[{i}].{field}");
            FieldError::check(g.radius > 0.0, &at("radius"), || {
                format!("must be positive, got {}", g.radius)
            })?;
            FieldError::check(g.duration > 0.0, &at("duration"), || {
                format!("must be positive, got {}", g.duration)
            })?;
            FieldError::check(g.velocity.is_finite(), &at("velocity"), || {
                format!("must be finite, got {}", g.velocity)
            })?;
            FieldError::check(g.center.is_finite(), &at("center"), || {
                format!("must be finite, got {}", g.center)
            })?;
        }
        Ok(())
    }
}

/// The wind trees sway in where a scene has no grass: a breeze of 1–4 m/s from about
/// north-east, turning slowly, changing every few seconds over about 12 m.
pub fn breeze() -> WindField {
    WindField {
        winds: vec![Wind {
            seed: 1,
            power_offset: 1.0,
            power_amplitude: 3.0,
            polar_amplitude: 0.2,
            azimuth_amplitude: 0.6,
            frequency: 0.3,
            deviation: 1.0,
            spacing: 12.0,
            direction: 0.6,
            ..Wind::default()
        }],
        gusts: Vec::new(),
    }
}

impl Wind {
    /// The render contract's form of this wind ([`SwayNoise`]): its node hash started on its
    /// seed and each noise's index.
    fn sway(&self) -> SwayNoise {
        let d = self.main_direction();
        SwayNoise {
            keys: [0, 1, 2].map(|which| hash_words(&[self.seed, which])),
            power: [self.power_offset, self.power_amplitude],
            deflection: [self.polar_amplitude, self.azimuth_amplitude],
            frequency: self.frequency,
            deviation: self.deviation,
            spacing: self.spacing,
            direction: [d.x, d.z],
            active: [self.from, self.until],
        }
    }
}

impl WindField {
    /// This field as the renderer sways crowns in it: [`WindField::sample`] times `power`
    /// at `time_scale` wind seconds per frame second (the grass's wind power and wave speed).
    /// Winds past [`SWAY_WINDS`] are left out.
    ///
    /// ```
    /// use sylva_systems::grass::wind::breeze;
    /// let sway = breeze().sway(1.0, 1.0);
    /// assert_eq!(sway.winds.len(), 1);
    /// assert!(sway.blows());
    /// ```
    pub fn sway(&self, power: f32, time_scale: f32) -> SwayWind {
        SwayWind {
            winds: self.winds.iter().take(SWAY_WINDS).map(Wind::sway).collect(),
            gusts: (self.gusts.iter())
                .map(|g| SwayGust {
                    center: g.center,
                    radius: g.radius,
                    start: g.start,
                    duration: g.duration,
                    velocity: g.velocity,
                })
                .collect(),
            power,
            time_scale,
        }
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

    /// What the lane sampler needs at time `t`; `nodes` holds each wind's cached time node
    /// (shared by every block of a field) and is advanced as the blocks' caches will be.
    pub(crate) fn plan(&self, t: f32, nodes: &mut [i64]) -> WindStep {
        let mut winds = Vec::with_capacity(self.winds.len());
        for (k, w) in self.winds.iter().enumerate() {
            if !w.is_active(t) {
                continue;
            }
            let (it, ft) = w.time_node(t);
            let refresh = if nodes[k] == it {
                Refresh::Keep
            } else if nodes[k].checked_add(1) == Some(it) {
                Refresh::Shift
            } else {
                Refresh::Full
            };
            nodes[k] = it;
            winds.push(WindPlan {
                wind: k,
                it,
                ft,
                refresh,
                direction: w.main_direction(),
            });
        }
        let gusts = (self.gusts.iter().enumerate())
            .filter_map(|(k, g)| g.time_factor(t).map(|f| (k, f)))
            .collect();
        WindStep { winds, gusts }
    }

    /// The wind at each lane's root: the bits of [`WindField::sample_cached`] per blade.
    /// `values` is the block's cache, one entry per wind.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // one lane index reads the cache's nested arrays
    pub(crate) fn sample_lanes(&self, plan: &WindStep, roots: &[Vec3; LANES], values: &mut [WindLanes]) -> V3 {
        let mut sum = V3::default();
        for p in &plan.winds {
            let w = &self.winds[p.wind];
            let vals = &mut values[p.wind];
            let fill = |node: &mut [Lane; 3], it: i64| {
                for (l, root) in roots.iter().enumerate() {
                    let s = w.spatial(*root, it);
                    for j in 0..3 {
                        node[j][l] = s[j];
                    }
                }
            };
            match p.refresh {
                Refresh::Keep => {}
                Refresh::Shift => {
                    vals[0] = vals[1];
                    fill(&mut vals[1], p.it + 1);
                }
                Refresh::Full => {
                    fill(&mut vals[0], p.it);
                    fill(&mut vals[1], p.it + 1);
                }
            }
            let ft = p.ft;
            for l in 0..LANES {
                let n = [0, 1, 2].map(|j| vals[0][j][l] * (1.0 - ft) + vals[1][j][l] * ft);
                let v = turn(p.direction, w.compose(n));
                sum.x[l] += v.x;
                sum.y[l] += v.y;
                sum.z[l] += v.z;
            }
        }
        for &(k, factor) in &plan.gusts {
            // A copy, so its fields are values in the lanes: read through a
            // reference, those under `at`'s branch are gathered per lane.
            let gust = self.gusts[k];
            for (l, root) in roots.iter().enumerate() {
                let v = gust.at(*root, factor);
                sum.x[l] += v.x;
                sum.y[l] += v.y;
                sum.z[l] += v.z;
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use sylva_runtime::rng::mix64;

    use super::*;

    #[test]
    fn sway_keys_continue_the_node_hash() {
        let wind = Wind {
            seed: 77,
            ..Wind::default()
        };
        let sway = wind.sway();
        for which in 0..3u64 {
            let (ix, iz, it) = (-3i64, 5i64, 9i64);
            let folded = [ix, iz, it]
                .iter()
                .fold(sway.keys[which as usize], |acc, &w| mix64(acc ^ mix64(w as u64)));
            assert_eq!(folded, hash_words(&[77, which, ix as u64, iz as u64, it as u64]));
        }
    }

    #[test]
    fn polynomial_sin_cos_matches_the_library_within_a_few_ulps() {
        let mut worst = 0.0f64;
        for k in -200_000..=200_000 {
            let x = k as f32 * 2.5e-4;
            let (s, c) = sin_cos(x);
            let x = x as f64;
            worst = worst.max((s as f64 - x.sin()).abs()).max((c as f64 - x.cos()).abs());
        }
        assert!(worst < 5e-7, "worst error {worst}");
    }

    #[test]
    fn lane_sampling_gives_the_bits_of_per_blade_sampling() {
        let turbulent = Wind {
            seed: 3,
            power_offset: 1.0,
            power_amplitude: 2.0,
            polar_amplitude: 0.4,
            azimuth_amplitude: 0.9,
            frequency: 2.0,
            deviation: 1.5,
            spacing: 1.5,
            direction: 0.8,
            ..Wind::default()
        };
        let field = WindField {
            winds: vec![
                turbulent,
                Wind {
                    seed: 4,
                    from: 0.7,
                    until: 1.3,
                    ..turbulent
                },
            ],
            gusts: vec![Gust {
                center: Vec3::new(1.0, 0.0, 1.0),
                radius: 2.0,
                start: 0.4,
                duration: 0.5,
                velocity: Vec3::new(3.0, 0.2, 1.0),
            }],
        };
        let roots: [Vec3; LANES] = std::array::from_fn(|l| Vec3::new(l as f32 * 0.31 - 2.0, 0.0, l as f32 * 0.17));
        let mut nodes = vec![i64::MIN; field.winds.len()];
        let mut values = vec![WindLanes::default(); field.winds.len()];
        let mut caches = [WindCache::default(); LANES];
        for step in 0..600 {
            let t = step as f32 / 240.0;
            let plan = field.plan(t, &mut nodes);
            let lanes = field.sample_lanes(&plan, &roots, &mut values);
            for (l, root) in roots.iter().enumerate() {
                assert_eq!(
                    lanes.get(l),
                    field.sample_cached(*root, t, &mut caches[l]),
                    "t = {t}, lane {l}"
                );
            }
        }
    }
}
