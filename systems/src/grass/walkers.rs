//! Walkers: spheres that move through the grass along a loop (a path or an
//! orbit) at a height above the ground, as [`Pusher`]s for live interaction.

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

use super::interaction::Pusher;
use crate::placement::Ground;

/// Points an orbit is resolved into (enough for a smooth circle at walking pace).
const ORBIT_POINTS: usize = 64;

/// Where a walker goes. Coordinates are (x, z) on the ground, metres.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Walk {
    /// A closed loop through `points` (the last joins the first).
    Path {
        /// Corners of the loop, at least 2.
        points: Vec<(f32, f32)>,
    },
    /// A circle around `center` of `radius` metres, counter-clockwise seen from above.
    Orbit {
        /// Centre of the circle.
        center: (f32, f32),
        /// Radius, metres.
        radius: f32,
    },
}

/// A sphere walking a loop at constant speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Walker {
    /// The loop. Default: an orbit of 3 m around the origin.
    pub walk: Walk,
    /// Speed along the loop, m/s. Default 1.4 (walking pace).
    pub speed: f32,
    /// Sphere radius, metres. Default 0.3.
    pub radius: f32,
    /// Height of the sphere's centre above the ground, metres. Default 0.2.
    pub height: f32,
}

impl Default for Walker {
    fn default() -> Self {
        Walker {
            walk: Walk::Orbit {
                center: (0.0, 0.0),
                radius: 3.0,
            },
            speed: 1.4,
            radius: 0.3,
            height: 0.2,
        }
    }
}

/// Largest pusher radius, metres: a sphere that size is a hill, not a walker (the live
/// simulation's work grows with the blades it covers).
pub const MAX_PUSHER_RADIUS: f32 = 100.0;

/// Fastest pusher, m/s.
pub const MAX_PUSHER_SPEED: f32 = 1000.0;

/// Farthest a walk may reach from the origin on any axis, metres.
pub const MAX_WALK_EXTENT: f32 = 1.0e6;

impl Validate for Walker {
    /// Checks ranges: finite, positive where it must be, and within physically sensible bounds.
    fn validate(&self) -> Result<(), FieldError> {
        let within = |v: f32, most: f32| v.is_finite() && v.abs() <= most;
        let positive = |v: f32, most: f32| within(v, most) && v > 0.0;
        let extent = MAX_WALK_EXTENT;
        match &self.walk {
            Walk::Path { points } => FieldError::check(
                points.len() >= 2 && points.iter().all(|p| within(p.0, extent) && within(p.1, extent)),
                "walk",
                || format!("a path needs at least 2 finite points within ±{extent} m"),
            )?,
            Walk::Orbit { center, radius } => FieldError::check(
                within(center.0, extent) && within(center.1, extent) && positive(*radius, extent),
                "walk",
                || format!("an orbit needs a centre within ±{extent} m and a radius in (0, {extent}] m, got {radius}"),
            )?,
        }
        FieldError::check(positive(self.speed, MAX_PUSHER_SPEED), "speed", || {
            format!("must be in (0, {MAX_PUSHER_SPEED}] m/s, got {}", self.speed)
        })?;
        FieldError::check(positive(self.radius, MAX_PUSHER_RADIUS), "radius", || {
            format!("must be in (0, {MAX_PUSHER_RADIUS}] m, got {}", self.radius)
        })?;
        FieldError::check(within(self.height, extent), "height", || {
            format!("must be within ±{extent} m, got {}", self.height)
        })
    }
}

impl Walker {
    /// The loop resolved on `ground`: corners at their ground height plus `height`
    /// (off the ground: at `height` above y = 0).
    pub fn resolve(&self, ground: &impl Ground) -> WalkPath {
        let corners: Vec<(f32, f32)> = match &self.walk {
            Walk::Path { points } => points.clone(),
            Walk::Orbit { center, radius } => (0..ORBIT_POINTS)
                .map(|k| {
                    let a = std::f32::consts::TAU * k as f32 / ORBIT_POINTS as f32;
                    (center.0 + radius * a.cos(), center.1 - radius * a.sin())
                })
                .collect(),
        };
        let points: Vec<Vec3> = corners
            .iter()
            .map(|&(x, z)| {
                let y = ground.sample(x, z).map_or(0.0, |g| g.height);
                Vec3::new(x, y + self.height, z)
            })
            .collect();
        let mut distance = Vec::with_capacity(points.len() + 1);
        let mut total = 0.0;
        distance.push(0.0);
        for (i, p) in points.iter().enumerate() {
            total += p.distance(points[(i + 1) % points.len()]);
            distance.push(total);
        }
        WalkPath {
            points,
            distance,
            speed: self.speed,
            radius: self.radius,
        }
    }
}

/// A walker's loop in world space (an entity component): the sphere moves along
/// it at constant speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkPath {
    points: Vec<Vec3>,
    /// Distance along the loop at each corner, plus the whole loop's length last.
    distance: Vec<f32>,
    speed: f32,
    radius: f32,
}

impl WalkPath {
    /// The sphere at `seconds` after the start.
    pub fn pusher(&self, seconds: f64) -> Pusher {
        let total = self.distance[self.distance.len() - 1];
        let center = if total <= 0.0 {
            self.points[0]
        } else {
            let s = (seconds * f64::from(self.speed)).rem_euclid(f64::from(total)) as f32;
            let i = self.distance.partition_point(|&d| d <= s).clamp(1, self.points.len()) - 1;
            let (a, b) = (self.points[i], self.points[(i + 1) % self.points.len()]);
            let span = self.distance[i + 1] - self.distance[i];
            let f = if span > 0.0 { (s - self.distance[i]) / span } else { 0.0 };
            a.lerp(b, f)
        };
        Pusher {
            center,
            radius: self.radius,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::Plane;

    #[test]
    fn a_path_loops_at_constant_speed() {
        let w = Walker {
            walk: Walk::Path {
                points: vec![(0.0, 0.0), (2.0, 0.0)],
            },
            speed: 1.0,
            height: 0.5,
            ..Walker::default()
        };
        let path = w.resolve(&Plane { y: 1.0 });
        assert_eq!(path.pusher(0.0).center, Vec3::new(0.0, 1.5, 0.0));
        assert_eq!(path.pusher(1.0).center, Vec3::new(1.0, 1.5, 0.0));
        assert_eq!(path.pusher(3.0).center, Vec3::new(1.0, 1.5, 0.0));
        assert_eq!(path.pusher(4.0).center, Vec3::new(0.0, 1.5, 0.0));
    }

    #[test]
    fn an_orbit_keeps_its_radius() {
        let w = Walker::default();
        let path = w.resolve(&Plane { y: 0.0 });
        for t in [0.0, 1.0, 2.5, 7.0] {
            let c = path.pusher(t).center;
            let r = (c.x * c.x + c.z * c.z).sqrt();
            assert!((2.98..=3.0).contains(&r), "{r}");
        }
        assert!(
            Walker {
                speed: 0.0,
                ..Walker::default()
            }
            .validate()
            .is_err()
        );
    }
}
