//! The force law, RK4 and the length constraint run on [`LANES`] blades at
//! once: every blade of a field has the same shape, so a block stores, per
//! particle and per coordinate, one `[f32; LANES]` and every operation of the
//! model is an element-wise loop that LLVM turns into vector instructions.
//!
//! The same code is also compiled for 256-bit (AVX2 + FMA) and 512-bit
//! (AVX-512F + FMA) registers and the widest the CPU has is chosen at run time.
//! All builds perform the same IEEE operations in the same order, so they give
//! identical bits: Rust never contracts a plain `a * b + c`, and the products
//! that are fused are written as `mul_add`, IEEE's fusedMultiplyAdd with its one
//! rounding, exact on every build — in hardware on the wide builds (and on
//! targets whose baseline has FMA, such as aarch64), through libm's correctly
//! rounded `fmaf` on an x86-64 without FMA (slow there, but identical). Fusing
//! removes about a quarter of a step's vector operations.

use super::blade::MAX_PARTICLES;
use super::dynamics::{BladeKernel, Turn};
use super::lane_vectors::{LANES, V3, zip};
use crate::registers::Registers;

/// Links shorter than this keep their rest direction (and are left alone by the constraint).
const MIN_LEN: f32 = 1e-9;
/// [`MIN_LEN`] squared, compared against squared lengths.
const MIN_LEN_SQUARED: f32 = MIN_LEN * MIN_LEN;

/// Floor of `1 + cos` in the shortest-arc rotation: a parent link turned (almost) exactly
/// against its rest direction has no unique shortest arc; the floor keeps the result finite.
const MIN_ONE_PLUS_COS: f32 = 1e-6;

type Block = [V3; MAX_PARTICLES];

/// Per-link intermediates of one force evaluation.
#[derive(Debug, Clone)]
struct Forces {
    /// Current link directions (children turn their rest links with them).
    dir: Block,
    /// Summed force per particle (entry 0 collects the root's reactions, never read).
    f: Block,
}

/// Where one link's evaluation writes: its direction, and the summed forces
/// (its particle's and, as the reaction, its parent's).
struct LinkOut<'a> {
    /// The link's current direction.
    dir: &'a mut V3,
    /// Summed force per particle.
    f: &'a mut Block,
}

/// Scratch state of a block step, reused across steps so nothing is zeroed per step.
/// Only entries `1..n` are read; the root entries of `xs`, `vs` stay zero, as the root does.
#[derive(Debug, Clone)]
pub(crate) struct Scratch {
    forces: Forces,
    /// Weight plus wind drag per particle (the wind is sampled once per step).
    ext: Block,
    xs: Block,
    vs: Block,
    dx: Block,
    dv: Block,
}

impl Default for Scratch {
    fn default() -> Self {
        let zero = [V3::default(); MAX_PARTICLES];
        Scratch {
            forces: Forces { dir: zero, f: zero },
            ext: zero,
            xs: zero,
            vs: zero,
            dx: zero,
            dv: zero,
        }
    }
}

impl BladeKernel {
    /// Forces on a block's particles at state (`x`, `v`) plus the external forces `ext`
    /// (weight and wind, fixed over a step), into `forces.f`.
    #[inline(always)]
    fn forces(&self, x: &[V3], v: &[V3], ext: &Block, forces: &mut Forces) {
        for i in 1..self.n {
            let p = self.parent[i];
            // Parents come first, so dir[p] is already this evaluation's.
            let (done, rest) = forces.dir.split_at_mut(i);
            let dir_p = &done[p];
            let out = LinkOut {
                dir: &mut rest[0],
                f: &mut forces.f,
            };
            let (ext, ang) = (&ext[i], self.angular[i]);
            // The closures give a·D_R per lane.
            match self.turn[i] {
                Turn::Fixed => {
                    let r = self.rest_link[i] * ang;
                    self.link(i, x, v, ext, out, |_| (r.x, r.y, r.z));
                }
                Turn::Along(along) => {
                    let a = along * ang;
                    self.link(i, x, v, ext, out, |l| (dir_p.x[l] * a, dir_p.y[l] * a, dir_p.z[l] * a));
                }
                Turn::General { along, perp } => {
                    let dr = (*dir_p * along + self.rotate(*dir_p, self.rest_dir[p], perp)) * ang;
                    self.link(i, x, v, ext, out, |l| (dr.x[l], dr.y[l], dr.z[l]));
                }
            }
        }
    }

    /// Particle `i`'s link: its direction into `out.dir`, the link force (`held`: a·D_R per
    /// lane) plus the external force `ext` into `out.f[i]`, the reaction into `out.f[parent]`.
    #[inline(always)]
    fn link(&self, i: usize, x: &[V3], v: &[V3], ext: &V3, out: LinkOut<'_>, held: impl Fn(usize) -> (f32, f32, f32)) {
        let LinkOut { dir: dir_i, f } = out;
        let p = self.parent[i];
        let (xi, xp, vi, vp) = (&x[i], &x[p], &v[i], &v[p]);
        let rest = self.rest_dir[i];
        let (hold, spring, damper) = (self.hold[i], self.spring, self.damper[i]);
        // Results go to locals first: the loop then provably writes nothing it reads, so it vectorizes.
        let (mut e, mut force, mut total) = (V3::default(), V3::default(), V3::default());
        for l in 0..LANES {
            let (dx, dy, dz) = (xi.x[l] - xp.x[l], xi.y[l] - xp.y[l], xi.z[l] - xp.z[l]);
            let len2 = dz.mul_add(dz, dy.mul_add(dy, dx * dx));
            let inv = 1.0 / len2.sqrt();
            let ok = len2 > MIN_LEN_SQUARED;
            let ex = if ok { dx * inv } else { rest.x };
            let ey = if ok { dy * inv } else { rest.y };
            let ez = if ok { dz * inv } else { rest.z };
            let (rx, ry, rz) = held(l);
            let fx = (vp.x[l] - vi.x[l]).mul_add(damper, (ex.mul_add(hold, rx) - dx) * spring);
            let fy = (vp.y[l] - vi.y[l]).mul_add(damper, (ey.mul_add(hold, ry) - dy) * spring);
            let fz = (vp.z[l] - vi.z[l]).mul_add(damper, (ez.mul_add(hold, rz) - dz) * spring);
            e.x[l] = ex;
            e.y[l] = ey;
            e.z[l] = ez;
            force.x[l] = fx;
            force.y[l] = fy;
            force.z[l] = fz;
            total.x[l] = fx + ext.x[l];
            total.y[l] = fy + ext.y[l];
            total.z[l] = fz + ext.z[l];
        }
        *dir_i = e;
        // Children come later, so nothing has been added to f[i] yet.
        f[i] = total;
        f[p] = f[p] - force;
    }

    /// Rodrigues' shortest-arc rotation taking unit `from` to unit `to` (per lane), applied to `w`:
    /// with `k = from × to`, `c = from · to`: `w·c + k × w + k·(k·w)/(1 + c)`.
    #[inline(always)]
    fn rotate(&self, to: V3, from: glam::Vec3, w: glam::Vec3) -> V3 {
        let k = V3 {
            x: zip(to.z, to.y, |tz, ty| from.y * tz - from.z * ty),
            y: zip(to.x, to.z, |tx, tz| from.z * tx - from.x * tz),
            z: zip(to.y, to.x, |ty, tx| from.x * ty - from.y * tx),
        };
        let c = to.dot(V3::splat(from));
        let kw = k.dot(V3::splat(w));
        let k_cross_w = V3 {
            x: zip(k.y, k.z, |ky, kz| ky * w.z - kz * w.y),
            y: zip(k.z, k.x, |kz, kx| kz * w.x - kx * w.z),
            z: zip(k.x, k.y, |kx, ky| kx * w.y - ky * w.x),
        };
        let q = zip(kw, c, |kw, c| kw / (1.0 + c).max(MIN_ONE_PLUS_COS));
        V3::splat(w).scale(c) + k_cross_w + k.scale(q)
    }

    /// One RK4 step plus the length constraint for the block (`x`, `v`: `n` particles,
    /// the root entry stays exactly zero).
    #[inline(always)]
    pub(crate) fn step_block_inline(&self, x: &mut [V3], v: &mut [V3], w: &V3, s: &mut Scratch) {
        let (n, h, hh, sixth) = (self.n, self.h, 0.5 * self.h, self.h / 6.0);
        let Scratch {
            forces,
            ext,
            xs,
            vs,
            dx,
            dv,
        } = s;
        for ((e, weight), drag) in ext.iter_mut().zip(&self.weight).zip(&self.drag_len).take(n).skip(1) {
            *e = w.mul_add(*drag, V3::splat(*weight));
        }
        // `dv` sums forces, not accelerations: every use scales by 1/m times the stage's step,
        // a scalar, so no stage spends a vector multiply on turning forces into accelerations.
        self.forces(x, v, ext, forces);
        for i in 1..n {
            let f = forces.f[i];
            xs[i] = v[i].mul_add(hh, x[i]);
            vs[i] = f.mul_add(self.inv_mass[i] * hh, v[i]);
            dx[i] = v[i];
            dv[i] = f;
        }
        for k in [hh, h] {
            self.forces(xs, vs, ext, forces);
            for i in 1..n {
                let f = forces.f[i];
                dx[i] = vs[i].mul_add(2.0, dx[i]);
                dv[i] = f.mul_add(2.0, dv[i]);
                xs[i] = vs[i].mul_add(k, x[i]);
                vs[i] = f.mul_add(self.inv_mass[i] * k, v[i]);
            }
        }
        self.forces(xs, vs, ext, forces);
        for i in 1..n {
            x[i] = (dx[i] + vs[i]).mul_add(sixth, x[i]);
            v[i] = (dv[i] + forces.f[i]).mul_add(self.inv_mass[i] * sixth, v[i]);
        }
        self.constrain(x, v);
    }

    /// Moves each particle along its link to `|D_o|·S + |D|·(1 − S)` and removes the fraction S
    /// of the radial relative velocity (parents first, so children follow their moved parent).
    #[inline(always)]
    fn constrain(&self, x: &mut [V3], v: &mut [V3]) {
        for i in 1..self.n {
            let p = self.parent[i];
            let (xp, vp) = (x[p], v[p]);
            let (xi, vi) = (&mut x[i], &mut v[i]);
            let (restore, keep, stiffness) = (self.restore[i], self.keep[i], self.stiffness[i]);
            for l in 0..LANES {
                let (dx, dy, dz) = (xi.x[l] - xp.x[l], xi.y[l] - xp.y[l], xi.z[l] - xp.z[l]);
                let len2 = dz.mul_add(dz, dy.mul_add(dy, dx * dx));
                let len = len2.sqrt();
                let inv = 1.0 / len;
                let (ex, ey, ez) = (dx * inv, dy * inv, dz * inv);
                let target = len.mul_add(keep, restore);
                let radial = (vi.z[l] - vp.z[l]).mul_add(ez, (vi.y[l] - vp.y[l]).mul_add(ey, (vi.x[l] - vp.x[l]) * ex));
                let r = radial * stiffness;
                let ok = len2 > MIN_LEN_SQUARED;
                xi.x[l] = if ok { ex.mul_add(target, xp.x[l]) } else { xi.x[l] };
                xi.y[l] = if ok { ey.mul_add(target, xp.y[l]) } else { xi.y[l] };
                xi.z[l] = if ok { ez.mul_add(target, xp.z[l]) } else { xi.z[l] };
                vi.x[l] = if ok { (-ex).mul_add(r, vi.x[l]) } else { vi.x[l] };
                vi.y[l] = if ok { (-ey).mul_add(r, vi.y[l]) } else { vi.y[l] };
                vi.z[l] = if ok { (-ez).mul_add(r, vi.z[l]) } else { vi.z[l] };
            }
        }
    }

    /// Gershgorin bounds on the linearised forces at the rest pose, per unit mass: the largest
    /// row sums of `|∂f/∂x| / m` (s⁻²) and of `|∂f/∂v| / m` (s⁻¹) over all non-root coordinates.
    /// Columns are central differences, [`LANES`] at a time: lane `l` of a pass perturbs
    /// coordinate `first + l`.
    pub(crate) fn rest_jacobian_bounds(&self) -> (f32, f32) {
        let n = self.n;
        let coordinates = 3 * (n - 1);
        let shortest = (1..n).map(|i| self.rest_link[i].length()).fold(f32::INFINITY, f32::min);
        let eps = 1e-3 * shortest;
        let rest: Vec<V3> = self.rest().iter().map(|r| V3::splat(*r)).collect();
        let zero = [V3::default(); MAX_PARTICLES];
        let mut forces = Forces { dir: zero, f: zero };
        let mut largest_row = |velocity: bool| {
            let mut rows = [[0.0f32; 3]; MAX_PARTICLES];
            for first in (0..coordinates).step_by(LANES) {
                let lanes = LANES.min(coordinates - first);
                let mut quotient = [[[0.0f32; LANES]; 3]; MAX_PARTICLES];
                for sign in [1.0f32, -1.0] {
                    let (mut x, mut v) = (rest.clone(), vec![V3::default(); n]);
                    for l in 0..lanes {
                        let (i, axis) = (1 + (first + l) / 3, (first + l) % 3);
                        let moved = if velocity { &mut v[i] } else { &mut x[i] };
                        [&mut moved.x, &mut moved.y, &mut moved.z][axis][l] += sign * eps;
                    }
                    self.forces(&x, &v, &zero, &mut forces);
                    for (q, f) in quotient.iter_mut().zip(&forces.f).take(n).skip(1) {
                        for (q, values) in q.iter_mut().zip([f.x, f.y, f.z]) {
                            for l in 0..lanes {
                                q[l] += sign * values[l] * (0.5 / eps);
                            }
                        }
                    }
                }
                for (row, q) in rows.iter_mut().zip(&quotient).take(n).skip(1) {
                    for (r, q) in row.iter_mut().zip(q) {
                        *r += q[..lanes].iter().map(|d| d.abs()).sum::<f32>();
                    }
                }
            }
            (1..n)
                .flat_map(|i| rows[i].map(|r| r * self.inv_mass[i]))
                .fold(0.0f32, f32::max)
        };
        (largest_row(false), largest_row(true))
    }

    /// Steps one block, on the widest registers the CPU offers (identical results either way).
    pub(crate) fn step_block(&self, x: &mut [V3], v: &mut [V3], w: &V3, s: &mut Scratch) {
        match Registers::best() {
            Registers::Portable => self.step_block_inline(x, v, w, s),
            // SAFETY: `step_block_avx2` needs AVX2 and FMA, and `best` returns Avx2
            // only where it detected both on this CPU at run time.
            #[cfg(target_arch = "x86_64")]
            Registers::Avx2 => unsafe { self.step_block_avx2(x, v, w, s) },
            // SAFETY: `step_block_avx512` needs AVX-512F and FMA, and `best` returns
            // Avx512 only where it detected both on this CPU at run time.
            #[cfg(target_arch = "x86_64")]
            Registers::Avx512 => unsafe { self.step_block_avx512(x, v, w, s) },
        }
    }

    /// `step_block_inline`, compiled for AVX2 and FMA.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA: call it only where `Registers::best` found them at run time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn step_block_avx2(&self, x: &mut [V3], v: &mut [V3], w: &V3, s: &mut Scratch) {
        self.step_block_inline(x, v, w, s)
    }

    /// `step_block_inline`, compiled for AVX-512F and FMA.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512F and FMA: call it only where `Registers::best` found them at run time.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn step_block_avx512(&self, x: &mut [V3], v: &mut [V3], w: &V3, s: &mut Scratch) {
        self.step_block_inline(x, v, w, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grass::{BladeShape, Dynamics, Segment};

    /// The closed-form rotation equals glam's shortest-arc quaternion, also beyond 165°.
    #[test]
    fn rodrigues_rotation_matches_the_shortest_arc_quaternion() {
        let k = BladeKernel::new(&BladeShape::blade(2, 0.3, Segment::default()), &Dynamics::default());
        let from = glam::Vec3::new(0.3, 0.9, -0.2).normalize();
        let w = glam::Vec3::new(-0.4, 0.1, 0.7);
        let mut to = V3::default();
        for l in 0..LANES {
            let a = l as f32 * 0.4;
            let dir = if l == LANES - 1 {
                -from + glam::Vec3::new(0.0, 0.0, 0.2)
            } else {
                glam::Vec3::new(a.cos(), 0.5 - 0.1 * l as f32, a.sin())
            };
            to.set(l, dir.normalize());
        }
        let turned = k.rotate(to, from, w);
        for l in 0..LANES {
            let q = glam::Quat::from_rotation_arc(from, to.get(l));
            assert!((turned.get(l) - q * w).length() < 1e-4 * w.length(), "lane {l}");
        }
    }

    /// Every build of the block step this CPU runs gives the portable build's bits.
    #[test]
    fn wide_and_portable_steps_are_bit_identical() {
        for shape in [
            BladeShape::blade(6, 0.3, Segment::default()),
            BladeShape::shrub(4, 0.4, Segment::default()),
        ] {
            let k = BladeKernel::new(&shape, &Dynamics::default());
            let n = k.len();
            let mut x0 = vec![V3::default(); n];
            let mut w = V3::default();
            for l in 0..LANES {
                for (i, r) in shape.rest.iter().enumerate().skip(1) {
                    x0[i].set(l, *r + glam::Vec3::new(0.01 * l as f32, 0.0, -0.004 * i as f32));
                }
                w.set(l, glam::Vec3::new(2.0 + l as f32, 0.3, -1.0));
            }
            let run = |build: Registers| {
                let (mut x, mut v, mut s) = (x0.clone(), vec![V3::default(); n], Scratch::default());
                for _ in 0..500 {
                    match build {
                        Registers::Portable => k.step_block_inline(&mut x, &mut v, &w, &mut s),
                        // SAFETY: `run` is asked for Avx2 only below, after
                        // detecting AVX2 and FMA, which `step_block_avx2` needs.
                        #[cfg(target_arch = "x86_64")]
                        Registers::Avx2 => unsafe { k.step_block_avx2(&mut x, &mut v, &w, &mut s) },
                        // SAFETY: `run` is asked for Avx512 only below, after
                        // detecting AVX-512F and FMA, which `step_block_avx512`
                        // needs.
                        #[cfg(target_arch = "x86_64")]
                        Registers::Avx512 => unsafe { k.step_block_avx512(&mut x, &mut v, &w, &mut s) },
                    }
                }
                (x, v)
            };
            let portable = run(Registers::Portable);
            assert_ne!(portable.0[n - 1], x0[n - 1]);
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    assert_eq!(run(Registers::Avx2), portable);
                }
                if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("fma") {
                    assert_eq!(run(Registers::Avx512), portable);
                }
            }
        }
    }
}
