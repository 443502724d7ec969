//! Blade structures: a massless fixed root plus particles, each joined to its
//! one parent by a spring-damper link (thesis §7.1.4).

use glam::Vec3;
use serde::{Deserialize, Serialize};

/// Most particles (root included) a blade may have; the kernels keep a blade's
/// state on the stack, so this bounds their scratch arrays.
pub const MAX_PARTICLES: usize = 16;

/// The thesis's five per-module parameters (length is turned into rest offsets,
/// width is visual only; the other three reach the simulation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Rest distance to the parent, metres.
    pub length: f32,
    /// Blade width at the segment's end, metres (visual only; older files without it get the default).
    #[serde(default = "default_width")]
    pub width: f32,
    /// Mass of the particle at the segment's end, kg.
    pub mass: f32,
    /// Length-constraint strength in [0, 1]: 1 restores the rest length fully after each
    /// step, 0 leaves stretch alone (the thesis formula's S, with its inversion fixed).
    pub stiffness: f32,
    /// Angular stiffness in [0, 1]: how strongly the link holds its rest direction
    /// relative to its parent link (the weight of the rotated rest vector).
    pub angular_stiffness: f32,
}

impl Default for Segment {
    /// Project choice: a 5 cm segment, 6 mm wide, of 2 g, nearly inextensible, fairly stiff in angle.
    fn default() -> Self {
        Segment {
            length: 0.05,
            width: default_width(),
            mass: 0.002,
            stiffness: 0.9,
            angular_stiffness: 0.9,
        }
    }
}

fn default_width() -> f32 {
    0.006
}

/// A plant structure: particle 0 is the root; every other particle names a parent
/// with a smaller index, so a forward pass visits parents first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BladeShape {
    /// Parent index per particle (the root's own entry is 0 and never used).
    pub parent: Vec<u32>,
    /// Rest position per particle relative to the root, metres, Y up.
    pub rest: Vec<Vec3>,
    /// Per-particle segment parameters (the root's entry is unused: it is massless).
    pub segment: Vec<Segment>,
}

/// Why a blade shape was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BladeError {
    /// Too few or too many particles.
    #[error("a blade needs 2..={MAX_PARTICLES} particles (root included), got {0}")]
    Count(usize),
    /// A parent index is not smaller than its child's.
    #[error("particle {0}: parent {1} must come before it")]
    Parent(usize, u32),
    /// A value is out of range or not finite.
    #[error("particle {0}: {1}")]
    Value(usize, &'static str),
}

impl BladeShape {
    /// A straight blade of `segments` equal segments reaching `height` metres.
    pub fn blade(segments: usize, height: f32, segment: Segment) -> Self {
        let len = height / segments as f32;
        let mut shape = BladeShape {
            parent: vec![0],
            rest: vec![Vec3::ZERO],
            segment: vec![segment],
        };
        for i in 1..=segments {
            shape.push(
                i as u32 - 1,
                Vec3::Y * len * i as f32,
                Segment { length: len, ..segment },
            );
        }
        shape
    }

    /// A tuft: `stems` two-segment stems fanning out from one root at `lean` radians.
    pub fn tuft(stems: usize, height: f32, lean: f32, segment: Segment) -> Self {
        let len = height / 2.0;
        let mut shape = BladeShape {
            parent: vec![0],
            rest: vec![Vec3::ZERO],
            segment: vec![segment],
        };
        for k in 0..stems {
            let a = std::f32::consts::TAU * k as f32 / stems as f32;
            let dir = Vec3::new(lean.sin() * a.cos(), lean.cos(), lean.sin() * a.sin());
            let first = shape.push(0, dir * len, Segment { length: len, ..segment });
            shape.push(first, dir * 2.0 * len, Segment { length: len, ..segment });
        }
        shape
    }

    /// A small shrub: a stiff two-segment stem that forks into `twigs` flexible twigs.
    pub fn shrub(twigs: usize, height: f32, segment: Segment) -> Self {
        let len = height / 3.0;
        let stem = Segment {
            length: len,
            mass: segment.mass * 3.0,
            angular_stiffness: 0.97,
            ..segment
        };
        let mut shape = BladeShape {
            parent: vec![0],
            rest: vec![Vec3::ZERO],
            segment: vec![segment],
        };
        let a = shape.push(0, Vec3::Y * len, stem);
        let b = shape.push(a, Vec3::Y * 2.0 * len, stem);
        for k in 0..twigs {
            let ang = std::f32::consts::TAU * k as f32 / twigs as f32;
            let dir = Vec3::new(0.6 * ang.cos(), 0.8, 0.6 * ang.sin());
            shape.push(b, Vec3::Y * 2.0 * len + dir * len, Segment { length: len, ..segment });
        }
        shape
    }

    fn push(&mut self, parent: u32, rest: Vec3, segment: Segment) -> u32 {
        self.parent.push(parent);
        self.rest.push(rest);
        self.segment.push(segment);
        self.parent.len() as u32 - 1
    }

    /// Number of particles, root included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Always false for a valid shape (it has a root).
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Number of links (= non-root particles = textures per baked frame).
    pub fn links(&self) -> usize {
        self.len().saturating_sub(1)
    }

    /// Checks topology and values.
    pub fn validate(&self) -> Result<(), BladeError> {
        let n = self.len();
        if !(2..=MAX_PARTICLES).contains(&n) || self.rest.len() != n || self.segment.len() != n {
            return Err(BladeError::Count(n));
        }
        for i in 1..n {
            if self.parent[i] as usize >= i {
                return Err(BladeError::Parent(i, self.parent[i]));
            }
            let s = &self.segment[i];
            if !(s.mass > 0.0 && s.mass.is_finite()) {
                return Err(BladeError::Value(i, "mass must be positive and finite"));
            }
            if !(s.width >= 0.0 && s.width.is_finite()) {
                return Err(BladeError::Value(i, "width must be finite and not negative"));
            }
            if !(0.0..=1.0).contains(&s.stiffness) || !(0.0..=1.0).contains(&s.angular_stiffness) {
                return Err(BladeError::Value(
                    i,
                    "stiffness and angular stiffness must lie in [0, 1]",
                ));
            }
            let d = self.rest[i] - self.rest[self.parent[i] as usize];
            if !d.is_finite() || d.length() < 1e-6 {
                return Err(BladeError::Value(
                    i,
                    "rest offset to the parent must be non-zero and finite",
                ));
            }
        }
        Ok(())
    }
}
