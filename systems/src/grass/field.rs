//! Many blades of one shape, stepped together: a field is stored as blocks
//! of [`LANES`] blades — per particle, per coordinate, one value per blade —
//! and the arithmetic of [`super::block_step`] runs on a whole block at once.
//! Blocks are stepped in parallel over fixed chunks (bit-identical for any
//! thread count).
//!
//! [`BladeField::advance`] runs several steps per block while the block is in
//! cache; it gives exactly the bits of as many [`BladeField::step`] calls.

use glam::Vec3;
use rayon::prelude::*;

use super::block_step::Scratch;
use super::dynamics::BladeKernel;
use super::lane_vectors::{LANES, V3};
use super::wind::{WindField, WindLanes, WindStep};
use crate::registers::Registers;

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

    /// `run_inline`, compiled for AVX2 and FMA.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA: call it only where `Registers::best` found them at run time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, first_block: usize, x: &mut [V3], v: &mut [V3], wind_values: &mut [WindLanes]) {
        self.run_inline(first_block, x, v, wind_values)
    }

    /// `run_inline`, compiled for AVX-512F and FMA.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512F and FMA: call it only where `Registers::best` found them at run time.
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
            // SAFETY: `run_avx2` needs AVX2 and FMA, and `best` returns Avx2
            // only where it detected both on this CPU at run time.
            #[cfg(target_arch = "x86_64")]
            Registers::Avx2 => unsafe { self.run_avx2(first_block, x, v, wind_values) },
            // SAFETY: `run_avx512` needs AVX-512F and FMA, and `best` returns
            // Avx512 only where it detected both on this CPU at run time.
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
