//! Blade structures written as L-systems: derivation, inheritance, turns and errors.

use sylva_systems::grass::{BladeShape, Segment, blade_from_grammar};
use sylva_systems::lsystem::{LSystemError, Position};

#[test]
fn a_derived_grammar_grows_one_segment_per_iteration() {
    let grammar = "#define l 0.05
        axiom: S(l, 0.006, 0.002, 0.9, 0.9) A(5)
        A(k) : k > 0 -> S A(k-1)";
    for iterations in 0..=6 {
        let shape = blade_from_grammar(grammar, iterations).unwrap();
        let segments = 1 + iterations.min(5) as usize;
        assert_eq!(shape.len(), segments + 1, "iterations {iterations}");
        let want = BladeShape::blade(segments, 0.05 * segments as f32, Segment::default());
        assert_eq!(shape.parent, want.parent);
        for i in 1..shape.len() {
            assert_eq!(
                shape.segment[i],
                Segment {
                    length: 0.05,
                    ..Segment::default()
                }
            );
            assert!(shape.rest[i].distance(want.rest[i]) < 1e-6);
        }
    }
}

#[test]
fn productions_change_inherited_parameters_along_the_blade() {
    // Each step appends a segment 80 % as long and 80 % as wide as its parent's.
    let shape = blade_from_grammar(
        "axiom: S(0.1, 0.01, 0.002, 0.9, 0.8) A(0.1, 0.01)
         A(l, w) -> S(l*0.8, w*0.8) A(l*0.8, w*0.8)",
        3,
    )
    .unwrap();
    assert_eq!(shape.len(), 5);
    let lengths: Vec<f32> = shape.segment[1..].iter().map(|s| s.length).collect();
    let widths: Vec<f32> = shape.segment[1..].iter().map(|s| s.width).collect();
    for k in 1..4 {
        assert!((lengths[k] - lengths[k - 1] * 0.8).abs() < 1e-7, "{lengths:?}");
        assert!((widths[k] - widths[k - 1] * 0.8).abs() < 1e-8, "{widths:?}");
    }
    // Mass, stiffness and angular stiffness are never written after the first segment.
    assert!(
        shape.segment[1..]
            .iter()
            .all(|s| (s.mass, s.stiffness, s.angular_stiffness) == (0.002, 0.9, 0.8))
    );
}

#[test]
fn branches_fork_from_one_particle_and_turns_keep_lengths() {
    let shape = blade_from_grammar("axiom: S(0.1) [+(30) S(0.2)] [-(30) S(0.2)] &(45) S(0.05)", 0).unwrap();
    assert_eq!(shape.parent, [0, 0, 1, 1, 1]);
    for (i, len) in [(2, 0.2), (3, 0.2), (4, 0.05)] {
        let p = shape.parent[i] as usize;
        assert!((shape.rest[i].distance(shape.rest[p]) - len).abs() < 1e-6);
    }
    // The two branches mirror each other about the stem.
    let (a, b) = (shape.rest[2] - shape.rest[1], shape.rest[3] - shape.rest[1]);
    assert!((a.y - b.y).abs() < 1e-6 && (a.x + b.x).abs() < 1e-6 && (a.z + b.z).abs() < 1e-6);
    assert!((a.y - 0.2 * 30f32.to_radians().cos()).abs() < 1e-6);
}

#[test]
fn syntax_errors_carry_their_position() {
    let e = blade_from_grammar("axiom: S(0.1)\nA -> S(1]", 1).unwrap_err();
    assert_eq!(e.position().map(|p| p.line), Some(2), "{e}");
    let e = blade_from_grammar("S(0.1)", 0).unwrap_err();
    assert!(
        matches!(e, LSystemError::Syntax { .. } | LSystemError::MissingAxiom { .. }),
        "{e}"
    );
    let e = blade_from_grammar("axiom: S(x)", 0).unwrap_err();
    assert_eq!(e.position(), Some(Position { line: 1, column: 10 }), "{e}");
}

#[test]
fn structural_errors_name_the_module() {
    // 16 particles fit (root + 15 segments); a 16th segment does not.
    let fits = blade_from_grammar(&format!("axiom: S(0.01){}", " S".repeat(14)), 0).unwrap();
    assert_eq!(fits.len(), 16);
    let e = blade_from_grammar(&format!("axiom: S(0.01){}", " S".repeat(15)), 0).unwrap_err();
    assert!(matches!(e, LSystemError::Turtle { module: 15, .. }), "{e}");
    let e = blade_from_grammar("axiom: S(0.1) S(0.1, 0.01, -1)", 0).unwrap_err();
    assert!(
        matches!(e, LSystemError::Turtle { module: 1, .. }) && e.to_string().contains("mass"),
        "{e}"
    );
    let e = blade_from_grammar("axiom: S(0.1) +(1, 2) S", 0).unwrap_err();
    assert!(e.to_string().contains("`+`"), "{e}");
    let e = blade_from_grammar("axiom: A", 0).unwrap_err();
    assert!(e.to_string().contains("at least one"), "{e}");
    let e = blade_from_grammar("axiom: A\nA -> AA", 20).unwrap_err();
    assert!(matches!(e, LSystemError::ModuleLimit { .. }), "{e}");
}
