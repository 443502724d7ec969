//! Live interaction (beyond the thesis): pushers are spheres that move. Blades
//! whose root lies within a pusher's reach (a kiddo query) switch from their
//! baked motion to live simulation, starting from the baked pose, with a
//! collision constraint that keeps particles outside every sphere. Once no
//! pusher has been near for `hold_seconds`, a blade fades back to its baked
//! motion over `blend_seconds` and leaves the live set.
//!
//! Each live blade is simulated in its instance's own frame (the shape as
//! compiled, unturned and unscaled): pushers and wind are taken into that frame,
//! and the pose comes back turned by the instance's yaw and scaled, as the
//! renderer draws its rest pose.
//!
//! Live blades keep their own clock: one live step is [`LiveSettings::step_seconds`]
//! (default 1/120 s, two RK4 steps per 60 Hz frame, where the bake steps 1/240 s). The
//! force law and RK4 are the bake's; only the step differs, so a bake, its files and
//! its images do not depend on it. A shape whose estimated stable step
//! ([`BladeKernel::stable_step`]) is shorter splits each live step into as many equal
//! RK4 steps as it needs.

use glam::{Quat, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::snapshot::StateMismatch;
use sylva_runtime::{FieldError, SpatialIndex, Validate};

use super::bake::BakedGrass;
use super::blade::BladeShape;
use super::blade::MAX_PARTICLES;
use super::block_step::Scratch;
use super::dynamics::{BladeKernel, Dynamics};
use super::lane_vectors::{LANES, V3};
use super::wind::{WindCache, WindField};

/// A moving sphere that pushes grass aside (e.g. a walking character's feet).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pusher {
    /// Centre, world metres.
    pub center: Vec3,
    /// Radius, metres.
    pub radius: f32,
}

/// Timing of the switch to live simulation and back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiveSettings {
    /// Extra reach beyond a pusher's radius at which blades go live (default: 0.5 m).
    pub reach: f32,
    /// Seconds a blade stays fully live after the last pusher left (default 1.5).
    pub hold_seconds: f32,
    /// Seconds of the fade back to baked motion (default 0.5).
    pub blend_seconds: f32,
    /// The fixed step of live blades, seconds, in [[`MIN_LIVE_STEP`], [`MAX_LIVE_STEP`]]
    /// (default 1/120: two steps per 60 Hz frame). Independent of the bake's step.
    pub step_seconds: f32,
}

/// The longest live step: every preset (1-, 2-, 6-segment blade, tuft, shrub) stays
/// stable at it and within a few percent of a 1/240 s run (tests/grass_live_step.rs).
pub const MAX_LIVE_STEP: f32 = 1.0 / 120.0;

/// The shortest live step (10 kHz): live blades catch up with simulated time in whole steps,
/// so a shorter one costs that many more per frame, and at 1 ns the f32 live clock would stop
/// advancing one second in.
pub const MIN_LIVE_STEP: f32 = 1e-4;

/// Most RK4 substeps one live step may take: a blade too stiff for the live step (its segments'
/// masses tiny for their springs) would otherwise ask for billions per step and never finish.
pub const MAX_LIVE_SUBSTEPS: u32 = 256;

impl Validate for LiveSettings {
    /// Checks ranges.
    fn validate(&self) -> Result<(), FieldError> {
        for (field, v) in [("reach", self.reach), ("hold_seconds", self.hold_seconds)] {
            FieldError::check(v >= 0.0 && v.is_finite(), field, || {
                format!("must be finite and >= 0, got {v}")
            })?;
        }
        FieldError::check(
            self.blend_seconds > 0.0 && self.blend_seconds.is_finite(),
            "blend_seconds",
            || format!("must be finite and > 0, got {}", self.blend_seconds),
        )?;
        FieldError::check(
            (MIN_LIVE_STEP..=MAX_LIVE_STEP).contains(&self.step_seconds),
            "step_seconds",
            || format!("must lie in [{MIN_LIVE_STEP}, 1/120], got {}", self.step_seconds),
        )
    }
}

impl Default for LiveSettings {
    fn default() -> Self {
        LiveSettings {
            reach: 0.5,
            hold_seconds: 1.5,
            blend_seconds: 0.5,
            step_seconds: MAX_LIVE_STEP,
        }
    }
}

#[derive(Debug, Clone)]
struct LiveBlade {
    blade: u32,
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    cache: WindCache,
    idle: f32,
}

/// The simulation state of a [`LiveGrass`]: its clock and its live blades, what a
/// snapshot keeps (the wind caches are rebuilt on the next step).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveState {
    time: f32,
    blades: Vec<LiveBladeState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct LiveBladeState {
    blade: u32,
    x: Vec<Vec3>,
    v: Vec<Vec3>,
    idle: f32,
}

/// An instance's placement: world = root + turn·(scale·local).
#[derive(Debug, Clone, Copy)]
struct Frame {
    root: Vec3,
    turn: Quat,
    scale: f32,
}

impl Frame {
    /// A world vector (a direction or a force) in the blade's frame, unscaled.
    fn turn_back(self, v: Vec3) -> Vec3 {
        self.turn.inverse() * v
    }

    /// A world offset from the root as a local position.
    fn to_local(self, offset: Vec3) -> Vec3 {
        self.turn_back(offset) / self.scale
    }

    /// A local position as a world offset from the root.
    fn to_world(self, local: Vec3) -> Vec3 {
        self.turn * (local * self.scale)
    }

    /// A pusher in the blade's frame.
    fn pusher(self, p: &Pusher) -> Pusher {
        Pusher {
            center: self.to_local(p.center - self.root),
            radius: p.radius / self.scale,
        }
    }
}

impl LiveBlade {
    /// The collision constraint: particles inside a pusher move to its surface and lose
    /// their velocity into it (in the blade's frame).
    fn push_out(&mut self, frame: Frame, pushers: &[Pusher]) {
        for p in pushers.iter().map(|p| frame.pusher(p)) {
            for (x, v) in self.x.iter_mut().zip(self.v.iter_mut()).skip(1) {
                let d = *x - p.center;
                let dist = d.length();
                if dist < p.radius && dist > 1e-6 {
                    let n = d / dist;
                    *x += n * (p.radius - dist);
                    *v -= n * v.dot(n).min(0.0);
                }
            }
        }
    }
}

/// A field of blades played back from a bake, some of them live.
pub struct LiveGrass {
    kernel: BladeKernel,
    roots: Vec<Vec3>,
    /// Yaw per blade, radians (about +Y, as the renderer turns the rest pose).
    yaw: Vec<f32>,
    /// Scale per blade.
    scale: Vec<f32>,
    index: SpatialIndex<u32>,
    settings: LiveSettings,
    /// RK4 steps per live step (more than one only for shapes too stiff for the live step).
    substeps: u32,
    live: Vec<LiveBlade>,
    /// Simulated time, seconds.
    pub time: f32,
}

/// The RK4 substeps a live step of `step_seconds` needs to stay stable for `kernel`'s shape (at
/// least 1, perhaps more than [`MAX_LIVE_SUBSTEPS`]).
pub fn substeps_needed(kernel: &BladeKernel, step_seconds: f32) -> f32 {
    (step_seconds / kernel.stable_step()).ceil().max(1.0)
}

/// How many live steps of `h` seconds bring a live clock at `clock` up to `until` (within
/// half a step), within one fixed step of `dt` seconds: at most its worth of steps and one
/// for rounding, so once the f32 clock is too coarse to advance by `h` (days of simulated
/// time) it falls behind instead of stepping forever. Each step adds `h` to the clock, as
/// [`LiveGrass::step`] does.
pub fn live_steps_due(clock: f32, until: f32, h: f32, dt: f32) -> u32 {
    let most = (dt / h).ceil() as u32 + 1;
    let (mut t, mut steps) = (clock, 0);
    while t + h <= until + h * 0.5 && steps < most {
        t += h;
        steps += 1;
    }
    steps
}

/// The kernel blades of `shape` step with live under `dynamics` and `settings`; an error
/// (at `step_seconds`) where a live step would need more than [`MAX_LIVE_SUBSTEPS`]
/// substeps.
pub fn live_kernel(
    shape: &BladeShape,
    dynamics: &Dynamics,
    settings: &LiveSettings,
) -> Result<BladeKernel, FieldError> {
    let kernel = BladeKernel::new(shape, dynamics);
    let needed = substeps_needed(&kernel, settings.step_seconds);
    if needed > MAX_LIVE_SUBSTEPS as f32 {
        let message = format!(
            "blade needs {needed} RK4 substeps per live step (its stable step is {:e} s), at most \
             {MAX_LIVE_SUBSTEPS}: give its segments more mass or less stiffness",
            kernel.stable_step()
        );
        return Err(FieldError::new("step_seconds", message));
    }
    Ok(kernel)
}

impl LiveGrass {
    /// Blades of `kernel`'s shape rooted at `roots`, unturned and unscaled, stepped at
    /// `settings.step_seconds` (the kernel's own step is not used) in at most
    /// [`MAX_LIVE_SUBSTEPS`] substeps: a shape that needs more (which `grass::install` refuses)
    /// runs unstable rather than forever.
    pub fn new(kernel: BladeKernel, roots: Vec<Vec3>, settings: LiveSettings) -> Self {
        let index = SpatialIndex::build(roots.iter().enumerate().map(|(i, r)| (*r, i as u32)));
        let substeps = substeps_needed(&kernel, settings.step_seconds).min(MAX_LIVE_SUBSTEPS as f32) as u32;
        LiveGrass {
            kernel: kernel.with_step(settings.step_seconds / substeps as f32),
            substeps,
            yaw: vec![0.0; roots.len()],
            scale: vec![1.0; roots.len()],
            roots,
            index,
            settings,
            live: Vec::new(),
            time: 0.0,
        }
    }

    /// Turns each blade's rest pose by `yaw` (radians about +Y) and scales it by `scale`, one
    /// entry per blade, as the renderer places instances.
    ///
    /// # Errors
    ///
    /// When a list's length differs from the number of blades or a scale is not positive and finite.
    pub fn with_placement(mut self, yaw: Vec<f32>, scale: Vec<f32>) -> Result<Self, &'static str> {
        if yaw.len() != self.roots.len() || scale.len() != self.roots.len() {
            return Err("one yaw and one scale per blade");
        }
        if !scale.iter().all(|s| *s > 0.0 && s.is_finite()) || !yaw.iter().all(|y| y.is_finite()) {
            return Err("scales must be positive and finite, yaws finite");
        }
        self.yaw = yaw;
        self.scale = scale;
        Ok(self)
    }

    fn frame(&self, blade: usize) -> Frame {
        Frame {
            root: self.roots[blade],
            turn: Quat::from_rotation_y(self.yaw[blade]),
            scale: self.scale[blade],
        }
    }

    /// One live step, seconds.
    pub fn step_seconds(&self) -> f32 {
        self.settings.step_seconds
    }

    /// RK4 steps per live step: 1 unless the shape's stable step is shorter than the live step.
    pub fn substeps(&self) -> u32 {
        self.substeps
    }

    /// The blades simulated live now, ascending.
    pub fn live_indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.live.iter().map(|b| b.blade)
    }

    /// Number of blades currently simulated live.
    pub fn live_blades(&self) -> usize {
        self.live.len()
    }

    /// The clock and the live blades, for snapshots.
    pub fn state(&self) -> LiveState {
        LiveState {
            time: self.time,
            blades: self
                .live
                .iter()
                .map(|b| LiveBladeState {
                    blade: b.blade,
                    x: b.x.clone(),
                    v: b.v.clone(),
                    idle: b.idle,
                })
                .collect(),
        }
    }

    /// Whether `state` can be restored here: blades of this field, ascending, each with
    /// one finite position and velocity per particle.
    ///
    /// # Errors
    /// The first thing that does not fit.
    pub fn check_state(&self, state: &LiveState) -> Result<(), StateMismatch> {
        if !state.time.is_finite() {
            return Err(StateMismatch::new(format!("live clock {} is not finite", state.time)));
        }
        let n = self.kernel.len();
        let mut previous = None;
        for b in &state.blades {
            if b.blade as usize >= self.roots.len() || previous.is_some_and(|p| p >= b.blade) {
                return Err(StateMismatch::new(format!(
                    "live blade {} is out of order or not among {}",
                    b.blade,
                    self.roots.len()
                )));
            }
            previous = Some(b.blade);
            if b.x.len() != n || b.v.len() != n {
                return Err(StateMismatch::new(format!(
                    "live blade {} has {} particles, the shape {n}",
                    b.blade,
                    b.x.len()
                )));
            }
            if !(b.idle.is_finite() && b.x.iter().chain(&b.v).all(|p| p.is_finite())) {
                return Err(StateMismatch::new(format!("live blade {} is not finite", b.blade)));
            }
        }
        Ok(())
    }

    /// Replaces the clock and the live blades with a [checked](Self::check_state) state.
    pub fn restore(&mut self, state: LiveState) {
        self.time = state.time;
        self.live = state
            .blades
            .into_iter()
            .map(|b| LiveBlade {
                blade: b.blade,
                x: b.x,
                v: b.v,
                cache: WindCache::default(),
                idle: b.idle,
            })
            .collect();
    }

    /// The baked displacement of particle `i` (world metres, not turned; zero at the root).
    fn baked_displacement(&self, baked: &BakedGrass, blade: usize, i: usize, time: f32) -> Vec3 {
        let r = self.roots[blade];
        if i == 0 {
            Vec3::ZERO
        } else {
            baked.sample(i as u32 - 1, r.x, r.z, time, 1.0, 1.0)
        }
    }

    /// The baked pose in the blade's frame.
    fn baked_pose(&self, baked: &BakedGrass, blade: usize, time: f32) -> Vec<Vec3> {
        let frame = self.frame(blade);
        let rest = self.kernel.rest();
        (0..rest.len())
            .map(|i| rest[i] + frame.to_local(self.baked_displacement(baked, blade, i, time)))
            .collect()
    }

    /// Advances one live step ([`LiveSettings::step_seconds`]).
    pub fn step(&mut self, baked: &BakedGrass, wind: &WindField, pushers: &[Pusher]) {
        let (t, h) = (self.time, self.settings.step_seconds);
        let mut near = vec![false; self.live.len()];
        for p in pushers {
            for hit in self.index.within(p.center, p.radius + self.settings.reach) {
                let b = *hit.payload;
                match self.live.binary_search_by_key(&b, |l| l.blade) {
                    Ok(i) => near[i] = true,
                    Err(i) => {
                        let x = self.baked_pose(baked, b as usize, t);
                        let blade = LiveBlade {
                            blade: b,
                            v: vec![Vec3::ZERO; x.len()],
                            x,
                            cache: WindCache::default(),
                            idle: 0.0,
                        };
                        self.live.insert(i, blade);
                        near.insert(i, true);
                    }
                }
            }
        }
        let n = self.kernel.len();
        let frames: Vec<Frame> = self.live.iter().map(|b| self.frame(b.blade as usize)).collect();
        let (kernel, roots, substeps) = (&self.kernel, &self.roots, self.substeps);
        // Live blades are stepped LANES at a time (lanes are independent, so the grouping
        // does not change any blade's result); a short last group repeats its first blade.
        self.live
            .par_chunks_mut(LANES)
            .zip(near.par_chunks(LANES))
            .zip(frames.par_chunks(LANES))
            .for_each_init(Scratch::default, |scratch, ((group, near), frames)| {
                let (mut x, mut v, mut w) = (
                    [V3::default(); MAX_PARTICLES],
                    [V3::default(); MAX_PARTICLES],
                    V3::default(),
                );
                for j in 0..substeps {
                    let at = t + j as f32 * kernel.step_seconds();
                    for (l, (b, frame)) in group.iter_mut().zip(frames).enumerate() {
                        let world = wind.sample_cached(roots[b.blade as usize], at, &mut b.cache);
                        w.set(l, frame.turn_back(world));
                    }
                    for l in 0..LANES {
                        let (b, src) = if l < group.len() {
                            (&group[l], l)
                        } else {
                            (&group[0], 0)
                        };
                        w.set(l, w.get(src));
                        for i in 0..n {
                            x[i].set(l, b.x[i]);
                            v[i].set(l, b.v[i]);
                        }
                    }
                    kernel.step_block(&mut x[..n], &mut v[..n], &w, scratch);
                    for (l, (b, frame)) in group.iter_mut().zip(frames).enumerate() {
                        for i in 0..n {
                            b.x[i] = x[i].get(l);
                            b.v[i] = v[i].get(l);
                        }
                        b.push_out(*frame, pushers);
                    }
                }
                for (b, near) in group.iter_mut().zip(near) {
                    b.idle = if *near { 0.0 } else { b.idle + h };
                }
            });
        let end = self.settings.hold_seconds + self.settings.blend_seconds;
        self.live.retain(|l| l.idle < end);
        self.time += h;
    }

    /// Particle `i`'s position relative to blade `blade`'s root in world metres: the live
    /// pose, faded into the baked pose after the hold time, or the baked pose.
    pub fn position(&self, baked: &BakedGrass, blade: usize, i: usize) -> Vec3 {
        self.frame(blade).to_world(self.kernel.rest()[i]) + self.displacement(baked, blade, i)
    }

    /// Particle `i`'s displacement from its turned and scaled rest position, world metres
    /// (what the renderer adds to the rest pose it draws).
    pub fn displacement(&self, baked: &BakedGrass, blade: usize, i: usize) -> Vec3 {
        let bakedd = self.baked_displacement(baked, blade, i, self.time);
        match self.live.binary_search_by_key(&(blade as u32), |l| l.blade) {
            Ok(k) => {
                let l = &self.live[k];
                let frame = self.frame(blade);
                let lived = frame.to_world(l.x[i] - self.kernel.rest()[i]);
                let fade = ((l.idle - self.settings.hold_seconds) / self.settings.blend_seconds).clamp(0.0, 1.0);
                lived * (1.0 - fade) + bakedd * fade
            }
            Err(_) => bakedd,
        }
    }
}
