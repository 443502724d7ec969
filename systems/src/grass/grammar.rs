//! Blade structures written as L-systems (thesis §7.1.2–7.1.4) in the project's
//! language ([`crate::lsystem`]), derived and converted into a [`BladeShape`].
//!
//! The symbol convention of a blade grammar (units: metres and degrees, Y up):
//!
//! - `S(length, width, mass, stiffness, angular)`: one segment, a particle at
//!   `length` along the turtle's heading from the particle the turtle stands on,
//!   joined to it by one spring-damper link. Any trailing parameters may be left
//!   out (`S`, `S(0.05)`, `S(0.05, 0.004)`, ...): a missing parameter is
//!   inherited from the parent segment (the thesis's inheritance rule); the root
//!   carries [`Segment::default`].
//! - `+(a)` / `-(a)` turn, `&(a)` / `^(a)` pitch, `/(a)` / `\(a)` roll by `a`
//!   degrees in the turtle's own frame (the tree turtle's rotations; heading +Y,
//!   left +Z, up +X, the tree turtle's Z-up frame turned to Y-up); written bare they
//!   use [`DEFAULT_ANGLE`]. Turns bend the rest pose only.
//! - `[` / `]` push and pop the turtle: position, orientation and the particle it
//!   stands on, so branches fork from one particle.
//! - Every other letter is a growth marker for productions and draws nothing.
//!
//! Deviation from the thesis: its parameters are percentage deltas added to the
//! inherited values; here a written parameter is the value itself and
//! productions compute it with expressions (`S(l*0.8)`), which says the same
//! with one rule less.

use glam::{Quat, Vec3};

use super::blade::{BladeError, BladeShape, MAX_PARTICLES, Segment};
use sylva_runtime::FieldError;

use crate::lsystem::{DeriveOptions, LSystem, LSystemError, MAX_ITERATIONS};

/// Angle of a turn written without a parameter, degrees.
pub const DEFAULT_ANGLE: f32 = 20.0;

/// Most modules a derived blade word may have (a blade has at most
/// [`MAX_PARTICLES`] particles, so anything longer is a runaway grammar).
const MODULE_LIMIT: usize = 10_000;

/// Most derivation steps of a blade grammar: the trees' bound ([`MAX_ITERATIONS`]). The module
/// limit alone does not bound the time, since a word that stops growing (`A -> A`) derives
/// for as many steps as asked; at most 1000 steps of at most 10,000 modules take a fraction of
/// a second.
pub const MAX_BLADE_ITERATIONS: u32 = MAX_ITERATIONS;

/// Checks a blade grammar's derivation steps against [`MAX_BLADE_ITERATIONS`]; the error is
/// at `iterations`.
pub fn validate_blade_iterations(iterations: u32) -> Result<(), FieldError> {
    FieldError::check(iterations <= MAX_BLADE_ITERATIONS, "iterations", || {
        format!("must be at most {MAX_BLADE_ITERATIONS}, got {iterations}")
    })
}

/// Derives `grammar` for `iterations` steps (at most [`MAX_BLADE_ITERATIONS`]) and converts the
/// word into a blade.
///
/// Errors are the L-system's: syntax and derivation errors carry the position in
/// the grammar text; conversion errors ([`LSystemError::Turtle`]) name the module; too many
/// steps is [`LSystemError::InvalidParameter`] at `iterations`.
pub fn blade_from_grammar(grammar: &str, iterations: u32) -> Result<BladeShape, LSystemError> {
    validate_blade_iterations(iterations)?;
    let system = LSystem::parse(grammar)?;
    let options = DeriveOptions {
        module_limit: MODULE_LIMIT,
        parallel: false,
        ..DeriveOptions::default()
    };
    let word = system.derive(iterations, &options)?;
    let names = system.symbols();
    let mut shape = BladeShape {
        parent: vec![0],
        rest: vec![Vec3::ZERO],
        segment: vec![Segment::default()],
    };
    // Module that created each particle, to name it in errors.
    let mut origin = vec![0usize];
    let mut turtle = Turtle::default();
    let mut stack = Vec::new();
    for m in 0..word.len() {
        let params = word.params(m);
        let fail = |message: String| LSystemError::Turtle { module: m, message };
        let name = names.name(word.symbol(m));
        let angle = || -> Result<f32, LSystemError> {
            match params {
                [] => Ok(DEFAULT_ANGLE.to_radians()),
                [a] => Ok(a.to_radians()),
                _ => Err(fail(format!("`{name}` takes at most one angle"))),
            }
        };
        match name {
            "S" => {
                let full = shape.len() == MAX_PARTICLES;
                let segment =
                    segment(params, shape.segment[turtle.node as usize], full).map_err(|e| fail(e.to_string()))?;
                turtle.position += turtle.orientation * Vec3::Y * segment.length;
                shape.parent.push(turtle.node);
                shape.rest.push(turtle.position);
                shape.segment.push(segment);
                origin.push(m);
                turtle.node = shape.len() as u32 - 1;
            }
            "+" => turtle.rotate(Vec3::X, angle()?),
            "-" => turtle.rotate(Vec3::X, -angle()?),
            "&" => turtle.rotate(Vec3::Z, angle()?),
            "^" => turtle.rotate(Vec3::Z, -angle()?),
            "\\" => turtle.rotate(Vec3::Y, angle()?),
            "/" => turtle.rotate(Vec3::Y, -angle()?),
            "[" => stack.push(turtle),
            "]" => turtle = stack.pop().ok_or_else(|| fail("`]` without `[`".into()))?,
            _ => {}
        }
    }
    shape.validate().map_err(|e| match e {
        BladeError::Count(n) => LSystemError::Turtle {
            module: word.len(),
            message: format!(
                "the word has {} segment(s) `S`; a blade needs at least one",
                n.saturating_sub(1)
            ),
        },
        BladeError::Parent(i, _) | BladeError::Value(i, _) => LSystemError::Turtle {
            module: origin[i],
            message: e.to_string(),
        },
    })?;
    Ok(shape)
}

/// Why an `S` gives no segment.
#[derive(Debug, thiserror::Error)]
enum SegmentError {
    #[error("`S` takes at most 5 parameters (length, width, mass, stiffness, angular), got {0}")]
    Parameters(usize),
    #[error("a blade may have at most {MAX_PARTICLES} particles (root included)")]
    Full,
    #[error("segment length must be positive, got {0}")]
    Length(f32),
}

/// The segment of an `S` with `params`, those missing inherited from its `parent`; none
/// where the blade is `full`.
fn segment(params: &[f32], parent: Segment, full: bool) -> Result<Segment, SegmentError> {
    if params.len() > 5 {
        return Err(SegmentError::Parameters(params.len()));
    }
    if full {
        return Err(SegmentError::Full);
    }
    let get = |i: usize, inherited: f32| params.get(i).copied().unwrap_or(inherited);
    let segment = Segment {
        length: get(0, parent.length),
        width: get(1, parent.width),
        mass: get(2, parent.mass),
        stiffness: get(3, parent.stiffness),
        angular_stiffness: get(4, parent.angular_stiffness),
    };
    if !(segment.length > 0.0 && segment.length.is_finite()) {
        return Err(SegmentError::Length(segment.length));
    }
    Ok(segment)
}

/// Position, orientation (turtle frame → world) and the particle stood on.
#[derive(Clone, Copy)]
struct Turtle {
    position: Vec3,
    orientation: Quat,
    node: u32,
}

impl Default for Turtle {
    fn default() -> Self {
        Turtle {
            position: Vec3::ZERO,
            orientation: Quat::IDENTITY,
            node: 0,
        }
    }
}

impl Turtle {
    /// Rotates about one of the turtle's own axes (post-multiplied, as the tree turtle does).
    fn rotate(&mut self, axis: Vec3, radians: f32) {
        self.orientation = (self.orientation * Quat::from_axis_angle(axis, radians)).normalize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_parameters_inherit_from_the_parent_segment() {
        let shape = blade_from_grammar("axiom: S(0.1, 0.02, 0.01, 0.5, 0.6) S(0.2) [S(0.3, 0.01)] S", 0).unwrap();
        assert_eq!(shape.parent, [0, 0, 1, 2, 2]);
        let s = &shape.segment;
        assert_eq!((s[2].length, s[2].width, s[2].mass), (0.2, 0.02, 0.01));
        assert_eq!((s[3].length, s[3].width, s[3].angular_stiffness), (0.3, 0.01, 0.6));
        assert_eq!((s[4].length, s[4].width), (0.2, 0.02));
    }

    #[test]
    fn turns_bend_the_rest_pose() {
        let shape = blade_from_grammar("axiom: S(1) +(90) S(1)", 0).unwrap();
        assert!((shape.rest[2] - shape.rest[1]).dot(Vec3::Y).abs() < 1e-6);
        assert!(((shape.rest[2] - shape.rest[1]).length() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn conversion_errors_name_the_module() {
        let e = blade_from_grammar("axiom: S(0.1) S(-1)", 0).unwrap_err();
        assert!(matches!(e, LSystemError::Turtle { module: 1, .. }), "{e}");
        let e = blade_from_grammar("axiom: A B", 0).unwrap_err();
        assert!(e.to_string().contains("at least one"), "{e}");
        let e = blade_from_grammar("axiom: S(0.1, 1, 1, 1, 1, 1)", 0).unwrap_err();
        assert!(e.to_string().contains("at most 5"), "{e}");
        let e = blade_from_grammar("axiom: S(0.1, 0.01, 0.01, 2.0)", 0).unwrap_err();
        assert!(e.to_string().contains("stiffness"), "{e}");
    }

    /// `iterations: 4294967295` on a word that stops growing once derived for 18 minutes; the bound
    /// is checked before deriving (docs/design/limits.md, "Iteration counts").
    #[test]
    fn iterations_are_bounded_before_deriving() {
        let grammar = "axiom: S(0.1) A\nA -> A";
        assert!(blade_from_grammar(grammar, MAX_BLADE_ITERATIONS).is_ok());
        let started = std::time::Instant::now();
        let e = blade_from_grammar(grammar, u32::MAX).unwrap_err();
        assert!(started.elapsed().as_secs_f32() < 1.0);
        let LSystemError::InvalidParameter(f) = e else {
            panic!("{e}")
        };
        assert_eq!(
            f.to_string(),
            "field `iterations`: must be at most 1000, got 4294967295"
        );
    }
}
