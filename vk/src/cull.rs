//! Frustum culling against axis-aligned boxes (the runtime's [`Aabb`]).

use sylva_runtime::glam::{Mat4, Vec3, Vec4};

pub use sylva_runtime::aabb::Aabb;

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
