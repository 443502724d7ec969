//! The bounds on a colonization's input: how many attractors, and how far
//! from the origin any position or length may reach. Parameters, regions,
//! point files and the colonizer all check against them.

use glam::Vec3;

/// Most attractors one tree may sample (about 240 MB of points and state).
pub const MAX_ATTRACTORS: u32 = 20_000_000;

/// Largest |coordinate| of a region, root or attractor, and largest length parameter (plant
/// units: 10 km at the scenes' centimetres). It keeps every position, difference and squared
/// distance of a run well inside f32 (f32 steps are 0.06 units out there), and the attractor
/// grid's extent far below the 2³² cells per axis that once overflowed its cell arithmetic.
pub const MAX_COORDINATE: f32 = 1e6;

/// Whether `p` is finite and within [`MAX_COORDINATE`] on every axis.
pub(crate) fn within_bounds(p: Vec3) -> bool {
    p.is_finite() && p.abs().max_element() <= MAX_COORDINATE
}
