//! A camera for a scene that names none: it frames what the scene extracted,
//! so a thesis preset shows its whole tree or landscape instead of whatever
//! the default camera happens to catch.

use sylva_runtime::App;
use sylva_runtime::extract::{Camera, CylinderBatch, GrassBatch, TerrainBatch};
use sylva_runtime::glam::Vec3;
use sylva_systems::colonize::AttractorBatch;
use sylva_systems::particles::SpringBatch;
use sylva_systems::tree::TreeBatch;

use crate::Scene;

/// How far above the horizontal the framing camera looks down, degrees.
const ELEVATION_DEGREES: f32 = 15.0;
/// The share of the field of view the content's bounding sphere fills.
const FILL: f32 = 0.9;

/// The scene's camera, or, when it names none (its camera is the default) and is not a
/// streamed world (which streams around its camera), one that frames the content `app`
/// extracted last: trees, springs, attractors, terrain and grass. With nothing extracted,
/// the scene's camera.
pub fn camera_for(scene: &Scene, app: &App) -> Camera {
    if !framed_on_content(scene) {
        return scene.camera;
    }
    content_bounds(app).map_or(scene.camera, |(min, max)| framing(min, max, scene.camera))
}

/// Whether [`camera_for`] frames `scene` on its content: it names no camera and is not a
/// streamed world.
pub fn framed_on_content(scene: &Scene) -> bool {
    scene.world.is_none() && scene.camera == Camera::default()
}

/// `camera` moved to see the box `min..max` whole: from the front (+z), a little above,
/// looking at its centre.
pub fn framing(min: Vec3, max: Vec3, camera: Camera) -> Camera {
    let centre = (min + max) * 0.5;
    let radius = ((max - min).length() * 0.5).max(1e-3);
    let half_fov = (camera.fov_y_degrees.to_radians() * 0.5 * FILL).min(1.5);
    let distance = radius / half_fov.sin();
    let elevation = ELEVATION_DEGREES.to_radians();
    let position = centre + Vec3::new(0.0, elevation.sin(), elevation.cos()) * distance;
    Camera {
        position,
        target: centre,
        near: camera.near.min(distance * 0.01),
        far: camera.far.max(distance + 2.0 * radius),
        ..camera
    }
}

/// The box of everything `app` extracted, if anything.
fn content_bounds(app: &App) -> Option<(Vec3, Vec3)> {
    let res = &app.world.resources;
    let mut b = Bounds::default();
    if let Some(t) = res.get::<TreeBatch>() {
        b.cylinders(&t.cylinders);
    }
    if let Some(s) = res.get::<SpringBatch>() {
        b.cylinders(&s.cylinders);
    }
    if let Some(a) = res.get::<AttractorBatch>() {
        a.points.position.iter().for_each(|&p| b.add(p));
    }
    if let Some(t) = res.get::<TerrainBatch>() {
        for p in &t.patches {
            let side = p.cell_size * p.resolution.saturating_sub(1) as f32;
            let (lo, hi) = p
                .height
                .iter()
                .fold((f32::MAX, f32::MIN), |(l, h), &y| (l.min(y), h.max(y)));
            b.add(p.origin + Vec3::new(0.0, lo, 0.0));
            b.add(p.origin + Vec3::new(side, hi, side));
        }
    }
    if let Some(g) = res.get::<GrassBatch>() {
        g.layers.iter().flat_map(|l| &l.root).for_each(|&p| b.add(p));
    }
    b.into_box()
}

/// A growing box over finite points.
struct Bounds {
    min: Vec3,
    max: Vec3,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            min: Vec3::INFINITY,
            max: Vec3::NEG_INFINITY,
        }
    }
}

impl Bounds {
    fn add(&mut self, p: Vec3) {
        if p.is_finite() {
            self.min = self.min.min(p);
            self.max = self.max.max(p);
        }
    }

    fn cylinders(&mut self, c: &CylinderBatch) {
        c.start.iter().chain(&c.end).for_each(|&p| self.add(p));
    }

    fn into_box(self) -> Option<(Vec3, Vec3)> {
        self.min.cmple(self.max).all().then_some((self.min, self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framed_box_is_in_view_whole() {
        let (min, max) = (Vec3::new(-3.0, 0.0, -4.0), Vec3::new(5.0, 22.0, 2.0));
        let camera = framing(min, max, Camera::default());
        let view_proj = camera.view_projection(16.0 / 9.0);
        for k in 0..8 {
            let corner = Vec3::select(
                sylva_runtime::glam::BVec3::new(k & 1 != 0, k & 2 != 0, k & 4 != 0),
                max,
                min,
            );
            let clip = view_proj * corner.extend(1.0);
            let ndc = clip.truncate() / clip.w;
            assert!(
                clip.w > 0.0 && ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0,
                "corner {corner} at {ndc}"
            );
        }
        assert!(camera.position.y > (min.y + max.y) * 0.5, "looks down on it");
    }
}
