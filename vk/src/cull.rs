//! Frustum culling against axis-aligned boxes.

use sylva_runtime::glam::{Mat4, Vec3, Vec4};

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
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

/// The six planes of a view-projection's frustum (Vulkan depth 0..1), inside positive.
#[derive(Clone, Copy, Debug)]
pub struct Frustum {
    planes: [Vec4; 6],
}

impl Frustum {
    /// The frustum of `view_proj`.
    pub fn new(view_proj: Mat4) -> Frustum {
        let (r0, r1, r2, r3) = (view_proj.row(0), view_proj.row(1), view_proj.row(2), view_proj.row(3));
        Frustum {
            planes: [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2],
        }
    }

    /// True when some of `b` may be visible.
    pub fn intersects(&self, b: &Aabb) -> bool {
        if b.is_empty() {
            return false;
        }
        self.planes.iter().all(|p| {
            let n = p.truncate();
            let corner = Vec3::select(n.cmpge(Vec3::ZERO), b.max, b.min);
            n.dot(corner) + p.w >= 0.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sylva_runtime::extract::Camera;

    #[test]
    fn boxes_in_front_pass_and_behind_fail() {
        let cam = Camera {
            position: Vec3::new(0.0, 0.0, 10.0),
            target: Vec3::ZERO,
            ..Camera::default()
        };
        let f = Frustum::new(cam.view_projection(1.0));
        let unit = |c: Vec3| Aabb {
            min: c - 0.5,
            max: c + 0.5,
        };
        assert!(f.intersects(&unit(Vec3::ZERO)));
        assert!(!f.intersects(&unit(Vec3::new(0.0, 0.0, 20.0))));
        assert!(!f.intersects(&unit(Vec3::new(100.0, 0.0, 0.0))));
        assert!(!f.intersects(&Aabb::EMPTY));
    }
}
