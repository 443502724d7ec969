//! The 3D turtle: thesis matrices, brackets, graph structure, tropism, widths.

use glam::{Mat3, Vec3};
use proptest::prelude::*;
use sylva_systems::lsystem::{
    DeriveOptions, INITIAL_HEADING, INITIAL_LEFT, INITIAL_UP, LSystem, LSystemError, ModuleBuffer, TropismMode,
    TurtleOptions, TurtleOutput, interpret,
};
use sylva_systems::tree::NO_PARENT;

fn draw_with(axiom: &str, opts: &TurtleOptions) -> TurtleOutput {
    let system = LSystem::parse(&format!("axiom: {axiom}")).expect("parses");
    let word = system.derive(0, &DeriveOptions::default()).expect("derives");
    interpret(&word, opts).expect("interprets")
}

fn draw(axiom: &str) -> TurtleOutput {
    draw_with(axiom, &TurtleOptions::default())
}

fn assert_close(a: Vec3, b: Vec3) {
    assert!((a - b).length() < 1e-5, "{a} != {b}");
}

#[test]
fn initial_frame_is_right_handed_with_heading_up() {
    assert_eq!(INITIAL_HEADING, Vec3::Z);
    assert_eq!(INITIAL_HEADING.cross(INITIAL_LEFT), INITIAL_UP);
}

#[test]
fn thesis_symbol_directions() {
    assert_close(draw("F(1)").graph.end[0], INITIAL_HEADING);
    assert_close(draw("+(90)F(1)").graph.end[0], INITIAL_LEFT);
    assert_close(draw("-(90)F(1)").graph.end[0], -INITIAL_LEFT);
    assert_close(draw("&(90)F(1)").graph.end[0], -INITIAL_UP);
    assert_close(draw("^(90)F(1)").graph.end[0], INITIAL_UP);
    // `\(90)` maps U to L, so pitching down afterwards moves along -L.
    assert_close(draw("\\(90)&(90)F(1)").graph.end[0], -INITIAL_LEFT);
    assert_close(draw("/(90)&(90)F(1)").graph.end[0], INITIAL_LEFT);
    assert_close(draw("|F(1)").graph.end[0], -INITIAL_HEADING);
}

#[test]
fn rotations_are_in_the_turtle_frame() {
    // After pitching down, H = -U0 and L is unchanged; turning left then heads along L0.
    assert_close(draw("&(90)+(90)F(1)").graph.end[0], INITIAL_LEFT);
    // After turning left, H = L0 and U is unchanged; pitching down heads along -U0.
    assert_close(draw("+(90)&(90)F(1)").graph.end[0], -INITIAL_UP);
    // Rolling left by 90° maps L to -U0, so turning left then heads along -U0.
    assert_close(draw("\\(90)+(90)F(1)").graph.end[0], -INITIAL_UP);
}

#[test]
fn bare_symbols_use_default_step_and_angle() {
    let opts = TurtleOptions {
        step: 2.0,
        angle: 90.0,
        ..TurtleOptions::default()
    };
    let out = draw_with("F+F", &opts);
    assert_close(out.graph.end[0], 2.0 * INITIAL_HEADING);
    assert_close(out.graph.end[1], 2.0 * INITIAL_HEADING + 2.0 * INITIAL_LEFT);
}

#[test]
fn brackets_restore_position_orientation_and_node() {
    let out = draw("F(1)[+(90)F(1)[&(90)F(1)]F(1)]F(1)");
    let g = &out.graph;
    assert_eq!(g.parent, [NO_PARENT, 0, 1, 1, 0]);
    assert_eq!(g.depth, [0, 1, 2, 1, 0]);
    // The inner branch's sibling continues from the same point in the same direction.
    assert_close(g.start[3], g.end[1]);
    assert_close(g.end[3] - g.start[3], INITIAL_LEFT);
    // After the outer `]`, the trunk continues upward from the first segment's end.
    assert_close(g.start[4], INITIAL_HEADING);
    assert_close(g.end[4], 2.0 * INITIAL_HEADING);
}

#[test]
fn move_without_drawing_keeps_the_current_node() {
    let g = draw("F(1)f(2)F(1)").graph;
    assert_eq!(g.len(), 2);
    assert_eq!(g.parent[1], 0);
    assert_close(g.start[1], 3.0 * INITIAL_HEADING);
}

#[test]
fn width_is_set_shrunk_and_restored() {
    let opts = TurtleOptions {
        width: 5.0,
        width_factor: 0.5,
        ..TurtleOptions::default()
    };
    assert_eq!(
        draw_with("F!(3)F[!(2)F!F]F!F", &opts).widths,
        [5.0, 3.0, 2.0, 1.0, 3.0, 1.5]
    );
}

#[test]
fn root_stub_precedes_the_word() {
    let opts = TurtleOptions {
        root_stub: 10.0,
        ..TurtleOptions::default()
    };
    let g = draw_with("F(1)[F(1)]", &opts).graph;
    assert_eq!(g.len(), 3);
    assert_eq!((g.start[0], g.end[0]), (Vec3::ZERO, Vec3::new(0.0, 0.0, 10.0)));
    assert_eq!(g.parent, [NO_PARENT, 0, 1]);
    assert_eq!(g.depth, [0, 0, 1]);
    assert_close(g.start[1], 10.0 * INITIAL_HEADING);
}

#[test]
fn roll_to_vertical_makes_left_horizontal() {
    let tilted = draw("&(30)\\(40)+(90)F(1)").graph;
    assert!(
        (tilted.end[0].z).abs() > 0.1,
        "without $ the left vector is not horizontal"
    );
    let levelled = draw("&(30)\\(40)$+(90)F(1)").graph;
    assert!(levelled.end[0].z.abs() < 1e-5, "{}", levelled.end[0]);
    // `$` keeps the heading.
    assert_close(draw("&(30)\\(40)$F(1)").graph.end[0], draw("&(30)F(1)").graph.end[0]);
}

#[test]
fn cut_in_the_word_skips_the_rest_of_the_branch() {
    let g = draw("F(1)[F(1)%F(1)[F(1)]F(1)]F(1)").graph;
    assert_eq!(g.len(), 3);
    assert_eq!(g.parent, [NO_PARENT, 0, 0]);
}

#[test]
fn thesis_tropism_bends_segments_without_accumulating() {
    let opts = TurtleOptions {
        tropism: Vec3::X,
        tropism_strength: 1.0,
        tropism_mode: TropismMode::Thesis,
        ..TurtleOptions::default()
    };
    let g = draw_with("F(1)F(1)+(90)F(1)", &opts).graph;
    let bent = (INITIAL_HEADING + Vec3::X).normalize();
    assert_close(g.end[0] - g.start[0], bent);
    assert_close(g.end[1] - g.start[1], bent);
    // The orientation was never changed: turning left still turns from H0 to L0.
    assert_close(g.end[2] - g.start[2], (INITIAL_LEFT + Vec3::X).normalize());
}

#[test]
fn abop_tropism_rotates_the_turtle() {
    let opts = TurtleOptions {
        tropism: Vec3::X,
        tropism_strength: 0.5,
        tropism_mode: TropismMode::Abop,
        ..TurtleOptions::default()
    };
    let g = draw_with("F(1)F(1)F(1)", &opts).graph;
    assert_close(g.end[0] - g.start[0], INITIAL_HEADING);
    // After each F the heading turns toward T by e·|H × T| = 0.5 rad at first.
    let d1 = g.end[1] - g.start[1];
    assert_close(d1, Vec3::new(0.5f32.sin(), 0.0, 0.5f32.cos()));
    let alpha2 = 0.5 * d1.cross(Vec3::X).length();
    let d2 = g.end[2] - g.start[2];
    assert!((d2.angle_between(d1) - alpha2).abs() < 1e-5);
}

#[test]
fn hand_built_words_with_bad_brackets_are_errors() {
    let system = LSystem::parse("axiom: F").unwrap();
    let pop = system.symbols().id("]").unwrap();
    let draw_id = system.symbols().id("F").unwrap();
    let mut word = ModuleBuffer::new();
    word.push(draw_id, &[]);
    word.push(pop, &[]);
    let e = interpret(&word, &TurtleOptions::default()).unwrap_err();
    assert!(matches!(e, LSystemError::Turtle { module: 1, .. }), "{e}");
    let mut nan = ModuleBuffer::new();
    nan.push(draw_id, &[f32::NAN]);
    assert!(matches!(
        interpret(&nan, &TurtleOptions::default()),
        Err(LSystemError::Turtle { module: 0, .. })
    ));
}

/// The thesis matrices exactly as printed (eq. 2.7–2.9), row-major.
fn thesis_matrix(axis: char, degrees: f32) -> Mat3 {
    let (s, c) = degrees.to_radians().sin_cos();
    let rows = match axis {
        'H' => [[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]],
        'L' => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
        _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
    };
    Mat3::from_cols_array_2d(&rows).transpose()
}

proptest! {
    #[test]
    fn turtle_matches_the_printed_thesis_matrices(ops in prop::collection::vec((0usize..6, -180.0f32..180.0), 0..12)) {
        let symbols = ["+", "-", "&", "^", "\\", "/"];
        let mut text = String::new();
        let mut r = Mat3::IDENTITY;
        for &(k, d) in &ops {
            text.push_str(&format!("{}({d})", symbols[k]));
            let m = match k {
                0 => thesis_matrix('U', d),
                1 => thesis_matrix('U', -d),
                2 => thesis_matrix('L', d),
                3 => thesis_matrix('L', -d),
                4 => thesis_matrix('H', d),
                _ => thesis_matrix('H', -d),
            };
            r *= m; // eq. 2.11-2.16: R' = R · R_axis
        }
        text.push_str("F(1)");
        let world = Mat3::from_cols(INITIAL_HEADING, INITIAL_LEFT, INITIAL_UP);
        let expected = world * r * Vec3::X;
        let end = draw(&text).graph.end[0];
        prop_assert!((end - expected).length() < 1e-4, "{} vs {}", end, expected);
    }
}

/// ABOP Fig. 1.11a, the hexagonal Gosper curve, an edge-rewriting curve written with ABOP's
/// subscripted `F_l` and `F_r` (which once drew nothing, and `F_lF_l` was read as one symbol;
/// docs/design/limits.md, "Grammar text"). Each step replaces every edge by 7 and adds 8 turns per
/// edge, so after n steps the word has 7ⁿ edges plus 8·(7ⁿ − 1)/6 turns (15, 113, 799, 5601
/// modules); the curve's chord grows by √7 per step, and it never draws an edge twice.
#[test]
fn gosper_curve_abop_fig_1_11a() {
    let system = LSystem::parse(
        "axiom: F_l
         F_l -> F_l+F_r++F_r-F_l--F_lF_l-F_r+
         F_r -> -F_l+F_rF_r++F_r+F_l--F_l-F_r",
    )
    .expect("parses");
    let opts = TurtleOptions {
        step: 1.0,
        angle: 60.0,
        ..TurtleOptions::default()
    };
    let modules = [1, 15, 113, 799, 5601];
    for (n, &expected) in modules.iter().enumerate() {
        let word = system.derive(n as u32, &DeriveOptions::default()).expect("derives");
        let edges = 7usize.pow(n as u32);
        assert_eq!(
            (word.len(), word.len() - edges),
            (expected, 8 * (edges - 1) / 6),
            "n = {n}"
        );
        let graph = interpret(&word, &opts).expect("interprets").graph;
        assert_eq!(graph.len(), edges, "n = {n}: one segment per F_l and F_r");
        let chord = graph.end[edges - 1].length();
        let want = 7f32.sqrt().powi(n as i32);
        assert!(
            (chord - want).abs() < 1e-4 * want,
            "n = {n}: chord {chord}, want {want}"
        );
        let mut midpoints: Vec<[i64; 3]> = (0..edges)
            .map(|i| {
                assert!(
                    i == 0 || graph.start[i] == graph.end[i - 1],
                    "n = {n}: edge {i} does not continue"
                );
                ((graph.start[i] + graph.end[i]) * 500.0)
                    .round()
                    .as_i64vec3()
                    .to_array()
            })
            .collect();
        midpoints.sort_unstable();
        midpoints.dedup();
        assert_eq!(midpoints.len(), edges, "n = {n}: an edge is drawn twice");
    }
}

/// A subscripted `f` moves like `f`: it draws nothing and carries the turtle.
#[test]
fn subscripted_move_letters_move() {
    let g = draw("F(1)f_x(2)F_a(1)").graph;
    assert_eq!(g.len(), 2);
    assert_close(g.start[1], INITIAL_HEADING * 3.0);
}
