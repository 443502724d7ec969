//! A field of hanging chains: pinned roots with a string of masses below each,
//! released from a random tilt so they swing. The showcase workload until trees
//! and terrain arrive, and a handy stress test for the spring solver.

use glam::{Quat, Vec3};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, stream};
use sylva_runtime::{FieldError, Validate};

use super::{InvMass, Pinned, Position, Spring, Velocity};

/// Parameters of a chain field (scene section `chains`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChainField {
    /// Chains along x. Default 16.
    pub columns: u32,
    /// Chains along z. Default 16.
    pub rows: u32,
    /// Distance between neighbouring roots, metres. Default 0.6.
    pub spacing: f32,
    /// Springs per chain (the chain has one particle more). Default 16.
    pub links: u32,
    /// Rest length of one link, metres. Default 0.2.
    pub link_length: f32,
    /// Height of the roots, metres. Default 5.
    pub root_height: f32,
    /// Mass of each free particle, kg. Default 0.05.
    pub particle_mass: f32,
    /// Spring constant of each link, N/m. Default 400.
    pub stiffness: f32,
    /// Damping of each link along its axis, N·s/m. Default 0.05.
    pub damping: f32,
    /// Largest initial tilt from hanging straight down, degrees; each chain
    /// draws its own tilt and direction from its random stream. Default 70.
    pub max_tilt_degrees: f32,
}

impl Default for ChainField {
    fn default() -> Self {
        Self {
            columns: 16,
            rows: 16,
            spacing: 0.6,
            links: 16,
            link_length: 0.2,
            root_height: 5.0,
            particle_mass: 0.05,
            stiffness: 400.0,
            damping: 0.05,
            max_tilt_degrees: 70.0,
        }
    }
}

/// Most particles one chain field may create, so a typo cannot eat the machine.
pub const MAX_CHAIN_PARTICLES: u64 = 50_000_000;

impl Validate for ChainField {
    /// Checks ranges.
    fn validate(&self) -> Result<(), FieldError> {
        let positive = |name: &str, v: f32| {
            FieldError::check(v.is_finite() && v > 0.0, name, || {
                format!("must be a positive number, got {v}")
            })
        };
        let non_negative = |name: &str, v: f32| {
            FieldError::check(v.is_finite() && v >= 0.0, name, || {
                format!("must be zero or positive, got {v}")
            })
        };
        positive("spacing", self.spacing)?;
        positive("link_length", self.link_length)?;
        positive("particle_mass", self.particle_mass)?;
        positive("stiffness", self.stiffness)?;
        non_negative("damping", self.damping)?;
        FieldError::check(self.root_height.is_finite(), "root_height", || {
            format!("must be a finite number, got {}", self.root_height)
        })?;
        FieldError::check(
            (0.0..=180.0).contains(&self.max_tilt_degrees),
            "max_tilt_degrees",
            || format!("must be within 0..=180, got {}", self.max_tilt_degrees),
        )?;
        FieldError::check(self.links > 0, "links", || "must be at least 1".into())?;
        FieldError::check(self.particle_count() <= MAX_CHAIN_PARTICLES, "links", || {
            format!(
                "columns × rows × (links + 1) = {} particles exceeds the limit of {MAX_CHAIN_PARTICLES}",
                self.particle_count()
            )
        })
    }
}

impl ChainField {
    /// Particles the field will spawn (roots included).
    pub fn particle_count(&self) -> u64 {
        u64::from(self.columns) * u64::from(self.rows) * (u64::from(self.links) + 1)
    }

    /// Springs the field will spawn.
    pub fn spring_count(&self) -> u64 {
        u64::from(self.columns) * u64::from(self.rows) * u64::from(self.links)
    }
}

/// Spawns the chains centred on the origin. Chain `i` (row-major) takes its
/// tilt from the stream `(seed, Index(i), "chain-tilt")`, so the field is the
/// same for a given seed however it is built.
pub fn spawn_chain_field(world: &mut hecs::World, field: &ChainField, seed: u64) {
    let inv_mass = InvMass(1.0 / field.particle_mass);
    let half = Vec3::new(
        (field.columns.saturating_sub(1)) as f32 * field.spacing * 0.5,
        0.0,
        (field.rows.saturating_sub(1)) as f32 * field.spacing * 0.5,
    );
    for row in 0..field.rows {
        for col in 0..field.columns {
            let chain = u64::from(row) * u64::from(field.columns) + u64::from(col);
            let mut rng = stream(seed, StreamKey::Index(chain), "chain-tilt");
            let tilt = rng.random::<f32>() * field.max_tilt_degrees.to_radians();
            let heading = rng.random::<f32>() * std::f32::consts::TAU;
            let axis = Quat::from_rotation_y(heading) * Vec3::X;
            let down = Quat::from_axis_angle(axis, tilt) * Vec3::NEG_Y;
            let root = Vec3::new(
                col as f32 * field.spacing,
                field.root_height,
                row as f32 * field.spacing,
            ) - half;
            let mut previous = world.spawn((Position(root), Velocity(Vec3::ZERO), inv_mass, Pinned));
            for link in 1..=field.links {
                let p = root + down * (link as f32 * field.link_length);
                let current = world.spawn((Position(p), Velocity(Vec3::ZERO), inv_mass));
                world.spawn((Spring {
                    a: previous,
                    b: current,
                    rest_length: field.link_length,
                    stiffness: field.stiffness,
                    damping: field.damping,
                },));
                previous = current;
            }
        }
    }
}
