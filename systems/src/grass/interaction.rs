//! Live interaction (beyond the thesis): pushers are spheres that move. Blades
//! whose root lies within a pusher's reach (a kiddo query) switch from their
//! baked motion to live simulation, starting from the baked pose, with a
//! collision constraint that keeps particles outside every sphere. Once no
//! pusher has been near for `hold_seconds`, a blade fades back to its baked
//! motion over `blend_seconds` and leaves the live set.

use glam::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::SpatialIndex;

use super::bake::BakedGrass;
use super::blade::MAX_PARTICLES;
use super::dynamics::BladeKernel;
use super::lanes::{LANES, Scratch, V3};
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
}

impl Default for LiveSettings {
    fn default() -> Self {
        LiveSettings {
            reach: 0.5,
            hold_seconds: 1.5,
            blend_seconds: 0.5,
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

impl LiveBlade {
    /// The collision constraint: particles inside a pusher move to its surface and lose
    /// their velocity into it.
    fn push_out(&mut self, root: Vec3, pushers: &[Pusher]) {
        for p in pushers {
            for (x, v) in self.x.iter_mut().zip(self.v.iter_mut()).skip(1) {
                let d = root + *x - p.center;
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
    index: SpatialIndex<u32>,
    settings: LiveSettings,
    live: Vec<LiveBlade>,
    /// Simulated time, seconds.
    pub time: f32,
}

impl LiveGrass {
    /// Blades of `kernel`'s shape rooted at `roots`.
    pub fn new(kernel: BladeKernel, roots: Vec<Vec3>, settings: LiveSettings) -> Self {
        let index = SpatialIndex::build(roots.iter().enumerate().map(|(i, r)| (*r, i as u32)));
        LiveGrass {
            kernel,
            roots,
            index,
            settings,
            live: Vec::new(),
            time: 0.0,
        }
    }

    /// Number of blades currently simulated live.
    pub fn live_blades(&self) -> usize {
        self.live.len()
    }

    fn baked_pose(&self, baked: &BakedGrass, blade: usize, time: f32) -> Vec<Vec3> {
        let r = self.roots[blade];
        let rest = self.kernel.rest();
        (0..rest.len())
            .map(|i| {
                if i == 0 {
                    Vec3::ZERO
                } else {
                    rest[i] + baked.sample(i as u32 - 1, r.x, r.z, time, 1.0, 1.0)
                }
            })
            .collect()
    }

    /// Advances one fixed step of `h` seconds (the kernel's step).
    pub fn step(&mut self, baked: &BakedGrass, wind: &WindField, pushers: &[Pusher], h: f32) {
        let t = self.time;
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
        let (kernel, roots) = (&self.kernel, &self.roots);
        let n = kernel.len();
        // Live blades are stepped LANES at a time (lanes are independent, so the grouping
        // does not change any blade's result); a short last group repeats its first blade.
        self.live
            .par_chunks_mut(LANES)
            .zip(near.par_chunks(LANES))
            .for_each(|(group, near)| {
                let (mut x, mut v, mut w) = (
                    [V3::default(); MAX_PARTICLES],
                    [V3::default(); MAX_PARTICLES],
                    V3::default(),
                );
                for (l, b) in group.iter_mut().enumerate() {
                    w.set(l, wind.sample_cached(roots[b.blade as usize], t, &mut b.cache));
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
                kernel.step_block(&mut x[..n], &mut v[..n], &w, &mut Scratch::default());
                for (l, (b, near)) in group.iter_mut().zip(near).enumerate() {
                    for i in 0..n {
                        b.x[i] = x[i].get(l);
                        b.v[i] = v[i].get(l);
                    }
                    b.push_out(roots[b.blade as usize], pushers);
                    b.idle = if *near { 0.0 } else { b.idle + h };
                }
            });
        let end = self.settings.hold_seconds + self.settings.blend_seconds;
        self.live.retain(|l| l.idle < end);
        self.time += h;
    }

    /// Particle `i`'s position relative to blade `blade`'s root: the live pose,
    /// faded into the baked pose after the hold time, or the baked pose.
    pub fn position(&self, baked: &BakedGrass, blade: usize, i: usize) -> Vec3 {
        let rest = self.kernel.rest()[i];
        let r = self.roots[blade];
        let bakedp = if i == 0 {
            Vec3::ZERO
        } else {
            rest + baked.sample(i as u32 - 1, r.x, r.z, self.time, 1.0, 1.0)
        };
        match self.live.binary_search_by_key(&(blade as u32), |l| l.blade) {
            Ok(k) => {
                let l = &self.live[k];
                let fade = ((l.idle - self.settings.hold_seconds) / self.settings.blend_seconds).clamp(0.0, 1.0);
                l.x[i] * (1.0 - fade) + bakedp * fade
            }
            Err(_) => bakedp,
        }
    }
}
