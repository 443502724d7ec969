//! [`Aabb`]: an axis-aligned box, a plain value type: what the renderer culls with and the
//! mesh kit bounds its meshes with.

use glam::Vec3;

/// An axis-aligned box.
///
/// ```
/// use sylva_runtime::aabb::Aabb;
/// use sylva_runtime::glam::Vec3;
/// let b = Aabb::EMPTY.with(Vec3::ZERO).with(Vec3::new(2.0, 1.0, 3.0));
/// assert!(b.contains(Vec3::ONE) && !b.contains(Vec3::splat(4.0)));
/// assert_eq!(b.union(Aabb::EMPTY), b);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Default for Aabb {
    fn default() -> Self {
        Aabb::EMPTY
    }
}

impl Aabb {
    /// The empty box (any union with it is the other box).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// True when the box holds no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// The box grown to hold `p`.
    pub fn with(self, p: Vec3) -> Aabb {
        Aabb {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The box holding both.
    pub fn union(self, other: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// Whether `p` lies inside or on the box.
    pub fn contains(&self, p: Vec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// The box around this one's eight corners moved by `f` (a rotation, scale and move keep
    /// every point of the box inside it); the empty box stays empty.
    pub fn transformed(&self, f: impl Fn(Vec3) -> Vec3) -> Aabb {
        if self.is_empty() {
            return *self;
        }
        (0..8).fold(Aabb::EMPTY, |out, k| {
            let corner = Vec3::select(glam::BVec3::new(k & 1 != 0, k & 2 != 0, k & 4 != 0), self.max, self.min);
            out.with(f(corner))
        })
    }

    /// Grows the box to hold a sphere.
    pub fn add_sphere(&mut self, centre: Vec3, radius: f32) {
        self.min = self.min.min(centre - radius);
        self.max = self.max.max(centre + radius);
    }

    /// Distance from `p` to the box (0 inside).
    pub fn distance(&self, p: Vec3) -> f32 {
        (self.min - p).max(p - self.max).max(Vec3::ZERO).length()
    }

    /// Distance from `p` to the box's farthest corner: nothing in the box is farther.
    pub fn farthest(&self, p: Vec3) -> f32 {
        (self.min - p).abs().max((self.max - p).abs()).length()
    }
}
