//! The L-system language: exact words from the thesis's examples, extensions, and errors.

use sylva_systems::lsystem::{DeriveOptions, LSystem, LSystemError, Position};

fn words(grammar: &str, max_n: u32, sep: &str) -> Vec<String> {
    let system = LSystem::parse(grammar).expect("grammar parses");
    (0..=max_n)
        .map(|n| system.format(&system.derive(n, &DeriveOptions::default()).expect("derives"), sep))
        .collect()
}

fn derive1(grammar: &str, n: u32) -> String {
    let system = LSystem::parse(grammar).expect("grammar parses");
    system.format(&system.derive(n, &DeriveOptions::default()).expect("derives"), " ")
}

fn parse_err(grammar: &str) -> LSystemError {
    LSystem::parse(grammar).expect_err("grammar must be rejected")
}

fn at(line: u32, column: u32) -> Option<Position> {
    Some(Position { line, column })
}

#[test]
fn anabaena_words_match_fig_2_1() {
    let grammar = "axiom: a_r
        a_r -> a_l b_r
        a_l -> b_l a_r
        b_r -> a_r
        b_l -> a_l";
    assert_eq!(
        words(grammar, 4, " "),
        [
            "a_r",
            "a_l b_r",
            "b_l a_r a_r",
            "a_l a_l b_r a_l b_r",
            "b_l a_r b_l a_r a_r b_l a_r a_r",
        ]
    );
}

#[test]
fn parametric_words_match_eq_2_2() {
    let grammar = "ω: A(1,1)
        p1: A(x,y) -> A(x+1, y*2) B(y)
        p2: B(x) -> B(x+1) C";
    assert_eq!(
        words(grammar, 4, " "),
        [
            "A(1,1)",
            "A(2,2) B(1)",
            "A(3,4) B(2) B(2) C",
            "A(4,8) B(4) B(3) C B(3) C C",
            "A(5,16) B(8) B(5) C B(4) C C B(4) C C C",
        ]
    );
}

#[test]
fn fig_2_5b_first_derivation_in_thesis_syntax() {
    let grammar = "#define d 25
        #define l 15
        axiom: F(l)
        F(l) -> F(l)[-(d)F(l)]F(l)[+(d)F(l)][F(l)]";
    assert_eq!(words(grammar, 1, "")[1], "F(15)[-(25)F(15)]F(15)[+(25)F(15)][F(15)]");
}

#[test]
fn abop_style_bare_symbols_parse_and_derive() {
    let grammar = "axiom: X
        X -> F[+X][-X]FX
        F -> FF";
    assert_eq!(words(grammar, 2, "")[2], "FF[+F[+X][-X]FX][-F[+X][-X]FX]FFF[+X][-X]FX");
}

#[test]
fn arithmetic_precedence_parentheses_and_functions() {
    let cases = [
        ("2+3*4", "14"),
        ("(2+3)*4", "20"),
        ("-2^2", "-4"),
        ("2^3^2", "512"),
        ("10-4-3", "3"),
        ("8/4/2", "1"),
        ("2*-3", "-6"),
        ("sqrt(16)+abs(-2)", "6"),
        ("min(3, 7) + max(3, 7)", "10"),
        ("floor(2.7)+ceil(2.1)", "5"),
        ("cos(180)", "-1"),
        ("3 > 2 && 2 > 3", "0"),
        ("3 > 2 || 2 > 3", "1"),
        ("!(1 == 1) + (2 != 3) + (2 <= 2) + (2 >= 3)", "2"),
        ("1.5e2", "150"),
    ];
    for (expr, expected) in cases {
        let grammar = format!("axiom: A({expr})");
        assert_eq!(derive1(&grammar, 0), format!("A({expected})"), "{expr}");
    }
}

#[test]
fn constants_may_use_earlier_constants_and_formals_shadow_them() {
    let grammar = "#define a 2
        #define b a*3+1
        axiom: A(b)
        A(a) -> A(a+b)";
    assert_eq!(derive1(grammar, 2), "A(21)");
}

#[test]
fn conditions_select_productions() {
    let grammar = "axiom: A(0)
        A(x) : x < 2 -> A(x+1) B
        A(x) : x >= 2 && x != 5 -> C(x)";
    assert_eq!(derive1(grammar, 3), "C(2) B B");
    // Short-circuit: the right operand is not evaluated when x == 0.
    let guarded = "axiom: A(0)
        A(x) : x != 0 && 1/x > 2 -> B
        A(x) : * -> C";
    assert_eq!(derive1(guarded, 1), "C");
}

#[test]
fn stochastic_choice_is_seeded_and_follows_probabilities() {
    let grammar = "axiom: A
        A -> B : 0.25
        A -> C : 0.75";
    let system = LSystem::parse(grammar).unwrap();
    let mut word = system.axiom().clone();
    // A word of 20,000 A's, rewritten once.
    let a = word.symbol(0);
    for _ in 1..20_000 {
        word.push(a, &[]);
    }
    let opts = DeriveOptions {
        seed: 7,
        ..DeriveOptions::default()
    };
    let out = system.step(&word, 1, &opts).unwrap();
    let b = system.symbols().id("B").unwrap();
    let bs = out.symbols().iter().filter(|&&s| s == b).count();
    assert!((4_600..5_400).contains(&bs), "{bs} B's of 20000, expected about 5000");
    assert_eq!(out, system.step(&word, 1, &opts).unwrap());
    let other_seed = DeriveOptions { seed: 8, ..opts };
    assert_ne!(out, system.step(&word, 1, &other_seed).unwrap());
    let other_step = system.step(&word, 2, &opts).unwrap();
    assert_ne!(out, other_step);
}

#[test]
fn deterministic_production_before_stochastic_ones_wins() {
    let grammar = "axiom: A(1) A(5)
        A(x) : x > 3 -> D
        A(x) -> B : 1
        A(x) -> C : 0";
    assert_eq!(derive1(grammar, 1), "B D");
}

#[test]
fn context_sensitive_signal_propagation_abop_fig_1_31() {
    // ABOP p. 31 style: an acropetal signal B travels along the axis,
    // skipping branches and ignored symbols.
    let grammar = "#ignore + -
        axiom: B a[+a]a[-a]a
        B < a -> B
        B -> a";
    let steps = words(grammar, 3, "");
    assert_eq!(steps[1], "aB[+a]a[-a]a");
    // The left context of the `a` in `[+a]` is the module before the
    // bracket, so the signal enters every branch on its way.
    assert_eq!(steps[2], "aa[+B]B[-a]a");
    assert_eq!(steps[3], "aa[+a]a[-B]B");
}

#[test]
fn left_context_steps_out_of_the_current_branch() {
    // The left context of the `b` inside `[+b]` is the `a` before the bracket.
    let grammar = "#ignore +
        axiom: a[+b]c
        a < b -> X
        a < c -> Y";
    assert_eq!(derive1(grammar, 1), "a [ + X ] Y");
}

#[test]
fn right_context_with_branches_and_parameters() {
    let grammar = "axiom: A(1)[B(2)][C(3)]D(4)
        A(x) > [C(y)] -> E(x+y)
        B(x) > D(y) -> F(x*y)
        C(x) > D(y) -> G(x)";
    // A's right context tries both sibling branches; B and C are each the
    // last module of their branch, so nothing follows them.
    assert_eq!(derive1(grammar, 1), "E(4) [ B(2) ] [ C(3) ] D(4)");
    let grammar2 = "axiom: A(1)[B(2)]D(4)
        A(x) > [B(y)]D(z) -> E(x+y+z)";
    assert_eq!(derive1(grammar2, 1), "E(7) [ B(2) ] D(4)");
}

#[test]
fn cut_removes_the_rest_of_the_branch() {
    let grammar = "axiom: E[BA[C]D]F
        A -> %";
    assert_eq!(derive1(grammar, 1), "E [ B ] F");
    // At the top level, `%` cuts the rest of the word.
    assert_eq!(derive1("axiom: BA[C]D\nA -> %", 1), "B");
}

#[test]
fn empty_successor_erases() {
    assert_eq!(derive1("axiom: A B A\nA ->", 1), "B");
}

#[test]
fn syntax_errors_carry_positions_and_expectations() {
    let e = parse_err("axiom: F\nF -> F(1 +)");
    assert_eq!(e.position(), at(2, 11));
    assert!(
        matches!(&e, LSystemError::Syntax { expected, .. } if expected.contains("number")),
        "{e}"
    );

    let e = parse_err("axiom: F(2\n");
    assert_eq!(e.position(), at(1, 11));

    let e = parse_err("axiom: A\nA B -> C");
    assert_eq!(e.position(), at(2, 3));

    let e = parse_err("axiom: A\nA = B");
    assert_eq!(e.position(), at(2, 3));
    assert!(e.to_string().contains("line 2, column 3"), "{e}");

    let e = parse_err("#frobnicate 3\naxiom: A");
    assert_eq!(e.position(), at(1, 2));

    let e = parse_err("F -> FF");
    assert_eq!(
        e,
        LSystemError::MissingAxiom {
            pos: Position { line: 2, column: 1 }
        }
    );
}

#[test]
fn unbalanced_brackets_are_errors() {
    let e = parse_err("axiom: F[F");
    assert!(
        matches!(
            e,
            LSystemError::UnbalancedBracket {
                pos: Position { line: 1, column: 9 },
                ..
            }
        ),
        "{e}"
    );
    let e = parse_err("axiom: F\nF -> F]F");
    assert!(
        matches!(
            e,
            LSystemError::UnbalancedBracket {
                pos: Position { line: 2, column: 7 },
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn unknown_names_are_errors() {
    let e = parse_err("axiom: A(1)\nA(x) -> A(y)");
    assert_eq!(
        e,
        LSystemError::UnknownIdentifier {
            pos: Position { line: 2, column: 11 },
            name: "y".into()
        }
    );
    let e = parse_err("axiom: A(foo(2))");
    assert!(
        matches!(
            e,
            LSystemError::UnknownFunction {
                pos: Position { line: 1, column: 10 },
                ..
            }
        ),
        "{e}"
    );
    let e = parse_err("axiom: A(sqrt(1, 2))");
    assert!(matches!(e, LSystemError::UnknownFunction { args: 2, .. }), "{e}");
}

#[test]
fn wrong_parameter_counts_are_errors() {
    let e = parse_err("axiom: A(1,2)\nA(x) -> A(x)");
    assert!(
        matches!(
            &e,
            LSystemError::Arity {
                pos: Position { line: 1, column: 8 },
                found: 2,
                ..
            }
        ),
        "{e}"
    );
    let e = parse_err("axiom: F(1,2)");
    assert!(matches!(&e, LSystemError::Arity { found: 2, .. }), "{e}");
    let e = parse_err("axiom: [(1)F]");
    assert!(matches!(&e, LSystemError::Arity { found: 1, .. }), "{e}");
    let e = parse_err("axiom: A\nA(x) -> B\nA -> C");
    assert!(
        matches!(
            &e,
            LSystemError::Arity {
                pos: Position { line: 3, column: 1 },
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn duplicates_are_errors() {
    assert!(matches!(
        parse_err("#define a 1\n#define a 2\naxiom: F"),
        LSystemError::Duplicate { .. }
    ));
    assert!(matches!(
        parse_err("axiom: F\naxiom: F"),
        LSystemError::Duplicate { .. }
    ));
    assert!(matches!(
        parse_err("axiom: A(1)\nA(x, x) -> A(x)"),
        LSystemError::Duplicate { .. }
    ));
}

#[test]
fn constant_division_by_zero_fails_at_parse_time() {
    let e = parse_err("axiom: F(1/0)");
    assert_eq!(
        e,
        LSystemError::Arithmetic {
            pos: Position { line: 1, column: 11 },
            message: "division by zero",
            step: 0
        }
    );
    let e = parse_err("#define big 1e30*1e30\naxiom: F");
    assert!(
        matches!(
            e,
            LSystemError::Arithmetic {
                pos: Position { line: 1, column: 17 },
                ..
            }
        ),
        "{e}"
    );
    let e = parse_err("axiom: F(sqrt(-1))");
    assert!(matches!(e, LSystemError::Arithmetic { .. }), "{e}");
}

#[test]
fn runtime_division_by_zero_reports_step_and_position() {
    let system = LSystem::parse("axiom: A(2)\nA(x) -> A(1/(x-1))").unwrap();
    let e = system.derive(2, &DeriveOptions::default()).unwrap_err();
    assert_eq!(
        e,
        LSystemError::Arithmetic {
            pos: Position { line: 2, column: 12 },
            message: "division by zero",
            step: 2
        }
    );
}

#[test]
fn overflow_is_an_error_not_infinity() {
    let system = LSystem::parse("axiom: A(10)\nA(x) -> A(x*x)").unwrap();
    let e = system.derive(10, &DeriveOptions::default()).unwrap_err();
    assert!(matches!(e, LSystemError::Arithmetic { step: 6, .. }), "{e}");
}

#[test]
fn negative_probability_is_an_error() {
    let system = LSystem::parse("axiom: A(1)\nA(x) -> B : x - 2\nA(x) -> C : 1").unwrap();
    let e = system.derive(1, &DeriveOptions::default()).unwrap_err();
    assert_eq!(
        e,
        LSystemError::Probability {
            pos: Position { line: 2, column: 13 },
            value: -1.0,
            step: 1
        }
    );
}

#[test]
fn module_limit_stops_runaway_growth() {
    let system = LSystem::parse("axiom: A\nA -> AA").unwrap();
    let opts = DeriveOptions {
        module_limit: 1000,
        ..DeriveOptions::default()
    };
    assert_eq!(system.derive(9, &opts).unwrap().len(), 512);
    let e = system.derive(40, &opts).unwrap_err();
    assert_eq!(
        e,
        LSystemError::ModuleLimit {
            pos: Position { line: 1, column: 1 },
            limit: 1000,
            step: 10
        }
    );
    let tiny = DeriveOptions {
        module_limit: 2,
        ..DeriveOptions::default()
    };
    let e = LSystem::parse("axiom: AAA").unwrap().derive(0, &tiny).unwrap_err();
    assert!(matches!(e, LSystemError::ModuleLimit { step: 0, .. }), "{e}");
}

#[test]
fn comments_labels_and_blank_lines_are_accepted() {
    let grammar = "# Koch island
        #define d 90   # right angle

        omega: F-(d)F
        p1: F --> F+(d)F # generator
        ";
    assert_eq!(derive1(grammar, 1), "F +(90) F -(90) F +(90) F");
}

/// A comment is `#` followed by a space (or at the end of a line), as the docs say; any other `#`
/// is an error, where it once started a comment and `A -> B#C` silently lost `C`
/// (docs/design/limits.md, "Grammar text").
#[test]
fn a_comment_is_a_hash_before_whitespace_or_the_end_of_the_line() {
    assert_eq!(derive1("axiom: A\nA -> B #\tC\n#", 1), "B");
    assert_eq!(derive1("axiom: A #", 0), "A");
    let e = parse_err("axiom: A\nA -> B#C");
    assert_eq!(e.position(), at(2, 7), "{e}");
    assert!(e.to_string().contains("found `#`"), "{e}");
    let e = parse_err("#define d 25#degrees\naxiom: F");
    assert_eq!(e.position(), at(1, 13), "{e}");
}

/// A subscript is one letter or digit, as in ABOP, so the symbol ends after it (`F_lF_l` was once
/// read as one symbol; docs/design/limits.md, "Grammar text").
#[test]
fn a_subscript_is_one_character_and_ends_the_symbol() {
    let system = LSystem::parse("axiom: F_lF_l+F_rf_xa_2B").unwrap();
    assert_eq!(system.format(system.axiom(), " "), "F_l F_l + F_r f_x a_2 B");
    // A bare `_` is not a subscript: `a_` is `a` then `_`, which is no symbol.
    assert!(parse_err("axiom: a_ b").to_string().contains("found `_`"));
}
