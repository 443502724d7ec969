//! The dense particle solver: topology cache, spring forces, integrators.

use std::collections::HashMap;

use glam::Vec3;
use hecs::{Archetype, Entity};
use rayon::prelude::*;
use sylva_runtime::SystemContext;
use sylva_runtime::extract::CylinderBatch;

use super::{Integrator, InvMass, ParticleSettings, Pinned, Position, Spring, Velocity};

/// Elements per parallel work item. Fixed (not derived from the thread count)
/// so the split, and with it every result, is the same on any machine.
const CHUNK: usize = 4096;

/// Marks a spring end whose entity is not a particle; such springs exert no force.
const DANGLING: u32 = u32::MAX;

/// A run of particles stored contiguously in one archetype.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Block {
    offset: usize,
    len: usize,
    pinned: bool,
}

/// Cached topology and scratch arrays of the particle system, a resource.
///
/// Rebuilt automatically when particles or springs are spawned, despawned or
/// re-linked; the check compares entity ids and spring ends, which is a
/// linear scan but far cheaper than a step.
#[derive(Default)]
pub struct ParticleSolver {
    blocks: Vec<Block>,
    ids: Vec<u32>,
    spring_lens: Vec<usize>,
    spring_entities: Vec<[Entity; 2]>,
    spring_ends: Vec<[u32; 2]>,
    incidence_start: Vec<u32>,
    incidence: Vec<u32>,
    dangling: usize,
    rebuilds: u64,
    scratch: Scratch,
}

/// Per-particle and per-spring work arrays, reused across steps.
#[derive(Default)]
struct Scratch {
    pos: Vec<Vec3>,
    vel: Vec<Vec3>,
    inv_mass: Vec<f32>,
    pinned: Vec<bool>,
    force: Vec<Vec3>,
    spring_force: Vec<Vec3>,
    rk_x: Vec<Vec3>,
    rk_v: Vec<Vec3>,
    rk_sum_x: Vec<Vec3>,
    rk_sum_v: Vec<Vec3>,
}

fn is_particle_archetype(a: &Archetype) -> bool {
    a.has::<Position>() && a.has::<Velocity>() && a.has::<InvMass>() && !a.is_empty()
}

fn particle_archetypes<'w>(ctx: &SystemContext<'w>) -> Vec<&'w Archetype> {
    ctx.archetypes_with::<Position>()
        .filter(|a| is_particle_archetype(a))
        .collect()
}

fn spring_columns<'w>(ctx: &SystemContext<'w>) -> Vec<hecs::ArchetypeColumn<'w, Spring>> {
    ctx.archetypes_with::<Spring>()
        .filter_map(|a| ctx.column::<Spring>(a))
        .collect()
}

impl ParticleSolver {
    /// Number of particles in the cached topology.
    pub fn particle_count(&self) -> usize {
        self.ids.len()
    }

    /// Number of springs in the cached topology.
    pub fn spring_count(&self) -> usize {
        self.spring_ends.len()
    }

    /// Springs whose ends are not both particles (they exert no force).
    pub fn dangling_springs(&self) -> usize {
        self.dangling
    }

    /// How often the topology was rebuilt (for tests and reports).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Advances every free particle by one step of `ctx.time().dt`.
    pub fn step(&mut self, ctx: &SystemContext, settings: &ParticleSettings) {
        let archetypes = particle_archetypes(ctx);
        let springs = spring_columns(ctx);
        if !self.is_current(&archetypes, &springs) {
            self.rebuild(ctx, &archetypes, &springs);
        }
        let dt = ctx.time().dt;
        match settings.integrator {
            Integrator::SemiImplicitEuler => self.euler(ctx, &archetypes, &springs, settings.gravity, dt),
            Integrator::Rk4 => self.rk4(ctx, &archetypes, &springs, settings.gravity, dt),
        }
    }

    fn is_current(&self, archetypes: &[&Archetype], springs: &[hecs::ArchetypeColumn<Spring>]) -> bool {
        if archetypes.len() != self.blocks.len() || springs.len() != self.spring_lens.len() {
            return false;
        }
        let particles_same = archetypes.iter().zip(&self.blocks).all(|(a, b)| {
            a.len() as usize == b.len
                && a.has::<Pinned>() == b.pinned
                && same_chunks(a.ids(), &self.ids[b.offset..b.offset + b.len], |x, y| x == y)
        });
        if !particles_same {
            return false;
        }
        let mut offset = 0;
        for (col, &len) in springs.iter().zip(&self.spring_lens) {
            if col.len() != len {
                return false;
            }
            let cached = &self.spring_entities[offset..offset + len];
            if !same_chunks(col, cached, |s, c| s.a == c[0] && s.b == c[1]) {
                return false;
            }
            offset += len;
        }
        true
    }

    fn rebuild(&mut self, ctx: &SystemContext, archetypes: &[&Archetype], springs: &[hecs::ArchetypeColumn<Spring>]) {
        self.rebuilds += 1;
        self.blocks.clear();
        self.ids.clear();
        for a in archetypes {
            self.blocks.push(Block {
                offset: self.ids.len(),
                len: a.len() as usize,
                pinned: a.has::<Pinned>(),
            });
            self.ids.extend_from_slice(a.ids());
        }
        let n = self.ids.len();
        // hecs queries walk archetypes in storage order, the same order as above.
        let mut index: HashMap<Entity, u32> = HashMap::with_capacity(n);
        let mut query = ctx.query::<(Entity, &Position)>().with::<(&Velocity, &InvMass)>();
        for (i, (e, _)) in query.iter().enumerate() {
            assert_eq!(e.id(), self.ids[i], "hecs query order differs from archetype order");
            index.insert(e, i as u32);
        }
        self.spring_lens = springs.iter().map(|c| c.len()).collect();
        self.spring_entities.clear();
        self.spring_ends.clear();
        self.dangling = 0;
        for col in springs {
            for s in col.iter() {
                self.spring_entities.push([s.a, s.b]);
                let ends = match (index.get(&s.a), index.get(&s.b)) {
                    (Some(&a), Some(&b)) if a != b => [a, b],
                    _ => {
                        self.dangling += 1;
                        [DANGLING, DANGLING]
                    }
                };
                self.spring_ends.push(ends);
            }
        }
        // Incidence lists (CSR): for each particle, its springs in spring order,
        // encoded as 2·spring + side. Summing in this order keeps forces
        // independent of how the work is split.
        let mut counts = vec![0u32; n + 1];
        for e in &self.spring_ends {
            if e[0] != DANGLING {
                counts[e[0] as usize + 1] += 1;
                counts[e[1] as usize + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        self.incidence = vec![0; counts[n] as usize];
        let mut fill = counts.clone();
        for (s, e) in self.spring_ends.iter().enumerate() {
            if e[0] == DANGLING {
                continue;
            }
            for (side, &end) in e.iter().enumerate() {
                let p = end as usize;
                self.incidence[fill[p] as usize] = 2 * s as u32 + side as u32;
                fill[p] += 1;
            }
        }
        self.incidence_start = counts;
        let sc = &mut self.scratch;
        sc.pinned.clear();
        for b in &self.blocks {
            sc.pinned.extend(std::iter::repeat_n(b.pinned, b.len));
        }
        for v in [&mut sc.pos, &mut sc.vel, &mut sc.force] {
            v.resize(n, Vec3::ZERO);
        }
        sc.inv_mass.resize(n, 0.0);
        sc.spring_force.resize(self.spring_ends.len(), Vec3::ZERO);
    }

    /// Copies positions and velocities (and inverse masses) from the ECS columns
    /// into the dense arrays.
    fn gather(&mut self, ctx: &SystemContext, archetypes: &[&Archetype], with_mass: bool) {
        let sc = &mut self.scratch;
        for (a, b) in archetypes.iter().zip(&self.blocks) {
            let range = b.offset..b.offset + b.len;
            let pos = ctx.column::<Position>(a).expect("particle archetype has Position");
            let vel = ctx.column::<Velocity>(a).expect("particle archetype has Velocity");
            copy_chunks(&mut sc.pos[range.clone()], &pos, |p| p.0);
            copy_chunks(&mut sc.vel[range.clone()], &vel, |v| v.0);
            if with_mass {
                let inv = ctx.column::<InvMass>(a).expect("particle archetype has InvMass");
                copy_chunks(&mut sc.inv_mass[range], &inv, |m| m.0);
            }
        }
    }

    /// Net spring force on every particle for the state `(pos, vel)`, into `scratch.force`.
    fn forces(&mut self, springs: &[hecs::ArchetypeColumn<Spring>], pos: &[Vec3], vel: &[Vec3]) {
        let sc = &mut self.scratch;
        let mut offset = 0;
        for col in springs {
            let out = &mut sc.spring_force[offset..offset + col.len()];
            let ends = &self.spring_ends[offset..offset + col.len()];
            out.par_chunks_mut(CHUNK)
                .zip(ends.par_chunks(CHUNK))
                .zip(col.par_chunks(CHUNK))
                .for_each(|((out, ends), springs)| {
                    for ((f, e), s) in out.iter_mut().zip(ends).zip(springs) {
                        *f = spring_force(s, *e, pos, vel);
                    }
                });
            offset += col.len();
        }
        let spring_force = &sc.spring_force;
        let start = &self.incidence_start;
        let incidence = &self.incidence;
        sc.force.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
            for (j, f) in chunk.iter_mut().enumerate() {
                let i = c * CHUNK + j;
                let mut sum = Vec3::ZERO;
                for &code in &incidence[start[i] as usize..start[i + 1] as usize] {
                    let sf = spring_force[(code >> 1) as usize];
                    sum += if code & 1 == 0 { sf } else { -sf };
                }
                *f = sum;
            }
        });
    }

    fn euler(
        &mut self,
        ctx: &SystemContext,
        archetypes: &[&Archetype],
        springs: &[hecs::ArchetypeColumn<Spring>],
        gravity: Vec3,
        dt: f32,
    ) {
        let has_springs = self.spring_ends.len() > self.dangling;
        if has_springs {
            self.gather(ctx, archetypes, false);
            let pos = std::mem::take(&mut self.scratch.pos);
            let vel = std::mem::take(&mut self.scratch.vel);
            self.forces(springs, &pos, &vel);
            self.scratch.pos = pos;
            self.scratch.vel = vel;
        }
        for (a, b) in archetypes.iter().zip(&self.blocks) {
            if b.pinned {
                continue;
            }
            let mut pos = ctx.column_mut::<Position>(a).expect("particle archetype has Position");
            let mut vel = ctx.column_mut::<Velocity>(a).expect("particle archetype has Velocity");
            let inv = ctx.column::<InvMass>(a).expect("particle archetype has InvMass");
            let force = has_springs.then(|| &self.scratch.force[b.offset..b.offset + b.len]);
            pos.par_chunks_mut(CHUNK)
                .zip(vel.par_chunks_mut(CHUNK))
                .zip(inv.par_chunks(CHUNK))
                .enumerate()
                .for_each(|(c, ((pos, vel), inv))| match force {
                    Some(force) => {
                        let force = &force[c * CHUNK..c * CHUNK + pos.len()];
                        for (((x, v), m), f) in pos.iter_mut().zip(vel.iter_mut()).zip(inv).zip(force) {
                            v.0 += (gravity + *f * m.0) * dt;
                            x.0 += v.0 * dt;
                        }
                    }
                    None => {
                        let dv = gravity * dt;
                        for (x, v) in pos.iter_mut().zip(vel.iter_mut()) {
                            v.0 += dv;
                            x.0 += v.0 * dt;
                        }
                    }
                });
        }
    }

    fn rk4(
        &mut self,
        ctx: &SystemContext,
        archetypes: &[&Archetype],
        springs: &[hecs::ArchetypeColumn<Spring>],
        gravity: Vec3,
        dt: f32,
    ) {
        self.gather(ctx, archetypes, true);
        let n = self.ids.len();
        let mut tx = std::mem::take(&mut self.scratch.rk_x);
        let mut tv = std::mem::take(&mut self.scratch.rk_v);
        let mut sx = std::mem::take(&mut self.scratch.rk_sum_x);
        let mut sv = std::mem::take(&mut self.scratch.rk_sum_v);
        tx.clear();
        tx.extend_from_slice(&self.scratch.pos);
        tv.clear();
        tv.extend_from_slice(&self.scratch.vel);
        sx.clear();
        sx.resize(n, Vec3::ZERO);
        sv.clear();
        sv.resize(n, Vec3::ZERO);
        // Stage weights of the classic scheme and where the next stage samples.
        const WEIGHT: [f32; 4] = [1.0, 2.0, 2.0, 1.0];
        const NEXT: [f32; 3] = [0.5, 0.5, 1.0];
        for (stage, &w) in WEIGHT.iter().enumerate() {
            self.forces(springs, &tx, &tv);
            let sc = &self.scratch;
            let next = NEXT.get(stage).map(|c| c * dt);
            tx.par_chunks_mut(CHUNK)
                .zip(tv.par_chunks_mut(CHUNK))
                .zip(sx.par_chunks_mut(CHUNK))
                .zip(sv.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (((tx, tv), sx), sv))| {
                    let base = c * CHUNK;
                    for j in 0..tx.len() {
                        let i = base + j;
                        if sc.pinned[i] {
                            continue;
                        }
                        let kx = tv[j];
                        let kv = gravity + sc.force[i] * sc.inv_mass[i];
                        sx[j] += kx * w;
                        sv[j] += kv * w;
                        if let Some(h) = next {
                            tx[j] = sc.pos[i] + kx * h;
                            tv[j] = sc.vel[i] + kv * h;
                        }
                    }
                });
        }
        let sixth = dt / 6.0;
        for (a, b) in archetypes.iter().zip(&self.blocks) {
            if b.pinned {
                continue;
            }
            let range = b.offset..b.offset + b.len;
            let mut pos = ctx.column_mut::<Position>(a).expect("particle archetype has Position");
            let mut vel = ctx.column_mut::<Velocity>(a).expect("particle archetype has Velocity");
            let (x0, v0) = (&self.scratch.pos[range.clone()], &self.scratch.vel[range.clone()]);
            let (sx, sv) = (&sx[range.clone()], &sv[range]);
            pos.par_chunks_mut(CHUNK)
                .zip(vel.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (pos, vel))| {
                    let base = c * CHUNK;
                    for j in 0..pos.len() {
                        pos[j].0 = x0[base + j] + sx[base + j] * sixth;
                        vel[j].0 = v0[base + j] + sv[base + j] * sixth;
                    }
                });
        }
        self.scratch.rk_x = tx;
        self.scratch.rk_v = tv;
        self.scratch.rk_sum_x = sx;
        self.scratch.rk_sum_v = sv;
    }

    /// Writes one cylinder per live spring into `out`, coloured by strain
    /// (green at rest length, red at ±50 %). `positions` is scratch space.
    pub fn extract(&self, ctx: &SystemContext, out: &mut CylinderBatch, radius: f32, positions: &mut Vec<Vec3>) {
        out.clear();
        let archetypes = particle_archetypes(ctx);
        if archetypes.len() != self.blocks.len() {
            return;
        }
        positions.clear();
        for a in &archetypes {
            let column = ctx.column::<Position>(a).expect("particle archetype has Position");
            positions.extend(column.iter().map(|p| p.0));
        }
        if positions.len() != self.ids.len() {
            return;
        }
        let mut s = 0;
        for col in &spring_columns(ctx) {
            for spring in col.iter() {
                let [a, b] = self.spring_ends[s];
                s += 1;
                if a == DANGLING {
                    continue;
                }
                let (pa, pb) = (positions[a as usize], positions[b as usize]);
                let strain = if spring.rest_length > 0.0 {
                    ((pa.distance(pb) - spring.rest_length) / spring.rest_length).abs()
                } else {
                    0.0
                };
                let t = (strain * 2.0).min(1.0);
                let colour = [(255.0 * t) as u8, (255.0 * (1.0 - t)) as u8, 40, 255];
                out.push(pa, pb, radius, radius, colour);
            }
        }
    }
}

/// Element-wise equality of two equally long slices, checked in parallel chunks.
fn same_chunks<A: Sync, B: Sync>(a: &[A], b: &[B], eq: impl Fn(&A, &B) -> bool + Sync) -> bool {
    a.len() == b.len()
        && a.par_chunks(CHUNK)
            .zip(b.par_chunks(CHUNK))
            .all(|(x, y)| x.iter().zip(y).all(|(x, y)| eq(x, y)))
}

/// `dst[i] = f(&src[i])` in parallel chunks.
fn copy_chunks<S: Sync, D: Send>(dst: &mut [D], src: &[S], f: impl Fn(&S) -> D + Sync) {
    dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| {
        for (d, s) in d.iter_mut().zip(s) {
            *d = f(s);
        }
    });
}

#[inline]
fn spring_force(s: &Spring, ends: [u32; 2], pos: &[Vec3], vel: &[Vec3]) -> Vec3 {
    if ends[0] == DANGLING {
        return Vec3::ZERO;
    }
    let (a, b) = (ends[0] as usize, ends[1] as usize);
    let d = pos[b] - pos[a];
    let len = d.length();
    if len <= f32::MIN_POSITIVE {
        // Coincident ends have no direction to push along.
        return Vec3::ZERO;
    }
    let n = d / len;
    let closing = (vel[b] - vel[a]).dot(n);
    n * (s.stiffness * (len - s.rest_length) + s.damping * closing)
}
