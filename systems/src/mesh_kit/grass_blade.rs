//! A grass species' blade as a mesh, at rest or played back in the world's wind
//! (docs/design/embedding.md, "Grass blades").

use glam::{Quat, Vec2, Vec3};

use super::{KitError, Mesh, MeshKit};
use crate::grass::sampler::motion_sample;

impl MeshKit {
    /// One blade of grass species `species` rooted at `root`, turned by `yaw` about +Y and
    /// scaled by `scale`, in world coordinates: at rest when `time` is `None`, else displaced
    /// by the species' baked motion at `time` seconds (the world's `wind_power` and
    /// `wave_speed` applied), as Sylva's grass shader draws it. Each link is one quad from its
    /// parent's row to its own, as wide as the rows, across the blade's own turned x; the
    /// blade is two-sided and coloured as its species.
    pub fn blade(&self, species: usize, root: Vec3, yaw: f32, scale: f32, time: Option<f32>) -> Result<Mesh, KitError> {
        let kind = self.content.grass.get(species).ok_or(KitError::Missing {
            what: "grass species",
            index: species,
        })?;
        let (shape, turn) = (&kind.shape, Quat::from_rotation_y(yaw));
        let at = |p: usize| {
            let rest = root + turn * (shape.rest[p] * scale);
            match (p, time) {
                (0, _) | (_, None) => rest,
                (_, Some(t)) => {
                    let link = (p - 1) as u32;
                    rest + motion_sample(&kind.motion, link, root.x, root.z, t, self.wind_power, self.wave_speed)
                }
            }
        };
        let width_axis = turn * Vec3::X;
        let mut mesh = Mesh::default();
        let height = shape.rest.iter().map(|r| r.y).fold(f32::EPSILON, f32::max);
        for child in 1..shape.rest.len() {
            let parent = shape.parent[child] as usize;
            let (p0, p1) = (at(parent), at(child));
            let dir = (p1 - p0).normalize_or(Vec3::Y);
            let across = (width_axis - dir * width_axis.dot(dir)).normalize_or(Vec3::X);
            let normal = across.cross(p1 - p0).normalize_or(Vec3::Y);
            let mut row = |p: Vec3, particle: usize| {
                let half = across * 0.5 * shape.width[particle] * scale;
                let v = shape.rest[particle].y / height;
                [(p - half, 0.0), (p + half, 1.0)]
                    .map(|(q, u)| mesh.push_vertex(q, normal, kind.colour, Vec2::new(u, v)))
            };
            let [a, b] = row(p0, parent);
            let [d, c] = row(p1, child);
            // (parent −, parent +, child +), (parent −, child +, child −), as the shader.
            mesh.indices.extend_from_slice(&[a, b, c, a, c, d]);
        }
        Ok(mesh)
    }

    /// Number of grass species.
    pub fn grass_count(&self) -> usize {
        self.content.grass.len()
    }
}
