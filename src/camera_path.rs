//! Flying a viewer through a streamed world: the path ([`Flight`]). What a flight measures
//! frame by frame is the world's [`FlightLog`](crate::FlightLog), reported as
//! [`StreamingReport`](crate::StreamingReport).

use glam::Vec3;
use sylva_runtime::extract::Camera;
use sylva_runtime::stream::Viewer;
use sylva_systems::world::FlightParams;

/// A path flown at constant speed: waypoints joined by straight legs.
#[derive(Clone, Debug, PartialEq)]
pub struct Flight {
    points: Vec<Vec3>,
    speed: f32,
    pitch: f32,
}

impl Flight {
    /// The scene's path; without waypoints, a straight line from the camera
    /// towards its target (level), `seconds` long at the path's speed.
    pub fn of_scene(params: &FlightParams, camera: &Camera, seconds: f32) -> Self {
        if params.waypoints.len() >= 2 {
            return Self {
                points: params.waypoints.clone(),
                speed: params.speed,
                pitch: params.pitch_degrees,
            };
        }
        Self::straight(camera, params.speed, seconds, params.pitch_degrees)
    }

    /// A level straight line from the camera towards its target, `speed` m/s for `seconds`.
    pub fn straight(camera: &Camera, speed: f32, seconds: f32, pitch_degrees: f32) -> Self {
        let along = (camera.target - camera.position) * Vec3::new(1.0, 0.0, 1.0);
        let dir = along.try_normalize().unwrap_or(Vec3::X);
        Self {
            points: vec![camera.position, camera.position + dir * speed * seconds.max(0.0)],
            speed,
            pitch: pitch_degrees,
        }
    }

    /// Seconds from start to end.
    pub fn seconds(&self) -> f32 {
        let length: f32 = self.points.windows(2).map(|w| w[0].distance(w[1])).sum();
        length / self.speed
    }

    /// Where the viewer is `t` seconds in (clamped to the path), looking along it.
    pub fn viewer(&self, t: f32) -> Viewer {
        let mut left = t.max(0.0) * self.speed;
        let mut leg = [self.points[0], self.points[0] + Vec3::X];
        for w in self.points.windows(2) {
            leg = [w[0], w[1]];
            let length = w[0].distance(w[1]);
            if left <= length {
                break;
            }
            left -= length;
        }
        let dir = (leg[1] - leg[0]).try_normalize().unwrap_or(Vec3::X);
        let at = leg[0] + dir * left.min(leg[0].distance(leg[1]));
        let level = (dir * Vec3::new(1.0, 0.0, 1.0)).try_normalize().unwrap_or(Vec3::X);
        let pitch = self.pitch.to_radians();
        Viewer {
            position: at,
            forward: level * pitch.cos() - Vec3::Y * pitch.sin(),
        }
    }

    /// The scene's camera moved to `viewer`.
    pub fn camera(camera: &Camera, viewer: &Viewer) -> Camera {
        Camera {
            position: viewer.position,
            target: viewer.position + viewer.forward * 100.0,
            ..*camera
        }
    }
}
