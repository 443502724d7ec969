//! The lane vector types: one `f32` per blade of a block of [`LANES`]
//! blades, and vectors stored by coordinate, whose every operation is an
//! element-wise loop that LLVM turns into vector instructions. The block
//! step (`block_step.rs`), the wind sampler and the live blades compute on
//! them.

use std::ops::{Add, Mul, Sub};

/// Blades per block (one 512-bit register of `f32`).
pub const LANES: usize = 16;

/// One value per lane.
pub type Lane = [f32; LANES];

/// A vector per lane, stored by coordinate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct V3 {
    /// x per lane.
    pub x: Lane,
    /// y per lane.
    pub y: Lane,
    /// z per lane.
    pub z: Lane,
}

/// `f` on every lane.
#[inline(always)]
fn map(a: Lane, f: impl Fn(f32) -> f32) -> Lane {
    let mut o = [0.0; LANES];
    for l in 0..LANES {
        o[l] = f(a[l]);
    }
    o
}

/// `f` on every pair of lanes.
#[inline(always)]
pub(crate) fn zip(a: Lane, b: Lane, f: impl Fn(f32, f32) -> f32) -> Lane {
    let mut o = [0.0; LANES];
    for l in 0..LANES {
        o[l] = f(a[l], b[l]);
    }
    o
}

impl V3 {
    /// The same vector in every lane.
    #[inline(always)]
    pub fn splat(v: glam::Vec3) -> V3 {
        V3 {
            x: [v.x; LANES],
            y: [v.y; LANES],
            z: [v.z; LANES],
        }
    }

    /// Lane `l` as a vector.
    #[inline(always)]
    pub fn get(&self, l: usize) -> glam::Vec3 {
        glam::Vec3::new(self.x[l], self.y[l], self.z[l])
    }

    /// Sets lane `l`.
    #[inline(always)]
    pub fn set(&mut self, l: usize, v: glam::Vec3) {
        self.x[l] = v.x;
        self.y[l] = v.y;
        self.z[l] = v.z;
    }

    /// `self·s + o`, each lane and coordinate rounded once (IEEE fused multiply-add).
    #[inline(always)]
    pub(crate) fn mul_add(self, s: f32, o: V3) -> V3 {
        V3 {
            x: zip(self.x, o.x, |a, b| a.mul_add(s, b)),
            y: zip(self.y, o.y, |a, b| a.mul_add(s, b)),
            z: zip(self.z, o.z, |a, b| a.mul_add(s, b)),
        }
    }

    /// The dot product per lane.
    #[inline(always)]
    pub(crate) fn dot(self, o: V3) -> Lane {
        std::array::from_fn(|l| self.x[l] * o.x[l] + self.y[l] * o.y[l] + self.z[l] * o.z[l])
    }

    /// Each lane's vector times that lane's `s`.
    #[inline(always)]
    pub(crate) fn scale(self, s: Lane) -> V3 {
        V3 {
            x: zip(self.x, s, |a, b| a * b),
            y: zip(self.y, s, |a, b| a * b),
            z: zip(self.z, s, |a, b| a * b),
        }
    }
}

impl Add for V3 {
    type Output = V3;
    #[inline(always)]
    fn add(self, o: V3) -> V3 {
        V3 {
            x: zip(self.x, o.x, |a, b| a + b),
            y: zip(self.y, o.y, |a, b| a + b),
            z: zip(self.z, o.z, |a, b| a + b),
        }
    }
}

impl Sub for V3 {
    type Output = V3;
    #[inline(always)]
    fn sub(self, o: V3) -> V3 {
        V3 {
            x: zip(self.x, o.x, |a, b| a - b),
            y: zip(self.y, o.y, |a, b| a - b),
            z: zip(self.z, o.z, |a, b| a - b),
        }
    }
}

impl Mul<f32> for V3 {
    type Output = V3;
    #[inline(always)]
    fn mul(self, s: f32) -> V3 {
        V3 {
            x: map(self.x, |a| a * s),
            y: map(self.y, |a| a * s),
            z: map(self.z, |a| a * s),
        }
    }
}
