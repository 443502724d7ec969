//! The fuzz property in stable Rust: no text makes parsing, bounded
//! derivation or the turtle panic, and every error points into the text.
//! `fuzz/fuzz_targets/lsystem_parse.rs` checks the same property (the shared
//! [`check`] module) under libFuzzer; this test runs it briefly on every
//! `cargo test`.

#[path = "lsystem_fuzz/check.rs"]
mod check;

use check::{MODULE_LIMIT, check_pipeline, position_in_text};
use proptest::prelude::*;
use sylva_systems::lsystem::{DeriveOptions, LSystem, LSystemError, Position, TurtleOptions, interpret};

/// Expressions that evaluate to a finite number wherever they appear
/// (`x`, `y` and `k` are constants unless a formal shadows them).
const GOOD_EXPRS: [&str; 9] = ["x", "y", "k", "1", "0.5", "2", "x*2", "x/2", "x+y"];

/// Expressions that stress evaluation: zero divisors, overflow, domain
/// errors, literals too large for an `f32`, unknown names and functions.
const BAD_EXPRS: [&str; 12] = [
    "x/0", "0/0", "x/(y-y)", "1e39", "1e400", "3.4e38*x", "x^k^k^k", "sqrt(-1)", "ln(0)", "-1", "z", "nope(x)",
];

/// Symbols with the parameter counts this grammar family uses: `A` takes
/// one, `B` two, `X` none, turtle symbols none or one.
const SYMBOLS: [(&str, &[usize]); 16] = [
    ("A", &[1]),
    ("B", &[2]),
    ("X", &[0]),
    ("F", &[0, 1]),
    ("f", &[0, 1]),
    ("+", &[0, 1]),
    ("-", &[0, 1]),
    ("&", &[0, 1]),
    ("^", &[0, 1]),
    ("\\", &[0, 1]),
    ("/", &[0, 1]),
    ("!", &[0, 1]),
    ("|", &[0]),
    ("$", &[0]),
    ("%", &[0]),
    ("a_r", &[0]),
];

/// Mostly good expressions, sometimes a bad one, combined up to two deep.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        40 => prop::sample::select(&GOOD_EXPRS[..]),
        1 => prop::sample::select(&BAD_EXPRS[..]),
    ]
    .prop_map(str::to_owned);
    leaf.prop_recursive(2, 6, 2, |inner| {
        (inner.clone(), prop::sample::select(&["+", "-", "*"][..]), inner)
            .prop_map(|(a, op, b)| format!("({a}{op}{b})"))
    })
}

/// A module with its symbol's parameter count, or (rarely) a wrong one.
fn module() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&SYMBOLS[..]),
        any::<prop::sample::Index>(),
        prop::bool::weighted(0.01),
        0usize..4,
    )
        .prop_flat_map(|((symbol, arities), pick, wrong, any_count)| {
            let count = if wrong { any_count } else { *pick.get(arities) };
            prop::collection::vec(expr(), count).prop_map(move |params| {
                if params.is_empty() {
                    symbol.to_owned()
                } else {
                    format!("{symbol}({})", params.join(","))
                }
            })
        })
}

/// A word of modules and balanced branches, with a rare stray bracket.
fn word() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        40 => module(),
        10 => prop::collection::vec(module(), 0..4).prop_map(|m| format!("[{}]", m.concat())),
        1 => prop::sample::select(&["[", "]"][..]).prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

/// A predecessor or left-context module with formals matching its symbol,
/// or (rarely) a duplicate formal, a wrong count or a bracket.
fn pattern() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => prop::sample::select(&["A(x)", "A(y)", "B(x,y)", "B(y,x)", "X"][..]),
        1 => prop::sample::select(&["B(x,x)", "A(x,y)", "B", "[", "*", "F"][..]),
    ]
    .prop_map(str::to_owned)
}

/// A left context; its formals are distinct from the predecessor's.
fn left_context() -> impl Strategy<Value = String> {
    prop_oneof![
        30 => prop::sample::select(&["A(u)", "B(u,t)", "X", "F", "F(u)"][..]),
        1 => prop::sample::select(&["A(x)", "[", "*"][..]),
    ]
    .prop_map(str::to_owned)
}

/// A right context: a module, a branch to enter, or "any".
fn right_context() -> impl Strategy<Value = String> {
    prop::sample::select(&["A(v)", "B(v,w)", "X", "F", "F(v)", "[A(v)]", "[B(v,w)]X", "*"][..]).prop_map(str::to_owned)
}

/// A condition: a comparison of expressions.
fn condition() -> impl Strategy<Value = String> {
    (expr(), prop::sample::select(&["<", ">", "<=", "==", "!="][..]), expr())
        .prop_map(|(a, op, b)| format!("{a}{op}{b}"))
}

/// A production with every optional part (label, contexts, condition,
/// probability) present or not, and a rare malformed arrow.
fn production() -> impl Strategy<Value = String> {
    (
        (
            prop::option::weighted(0.2, left_context()),
            pattern(),
            prop::option::weighted(0.2, right_context()),
        ),
        prop::option::weighted(0.3, condition()),
        prop_oneof![
            30 => prop::sample::select(&["->", "-->", "→"][..]),
            1 => prop::sample::select(&["-", "> >", ""][..]),
        ],
        word(),
        prop::option::weighted(0.3, expr()),
        any::<bool>(),
    )
        .prop_map(|((left, pred, right), cond, arrow, succ, prob, label)| {
            let mut s = if label { "p1: ".to_owned() } else { String::new() };
            if let Some(l) = left {
                s += &format!("{l} < ");
            }
            s += &pred;
            if let Some(r) = right {
                s += &format!(" > {r}");
            }
            if let Some(c) = cond {
                s += &format!(" : {c}");
            }
            s += &format!(" {arrow} {succ}");
            if let Some(p) = prob {
                s += &format!(" : {p}");
            }
            s
        })
}

/// Constants, usually one axiom, productions and noise lines, joined by
/// `\n` or `\r\n`.
fn grammar() -> impl Strategy<Value = String> {
    let constants = prop_oneof![
        20 => Just(vec!["#define x 2".to_owned(), "#define y 3".to_owned()]),
        3 => prop::sample::select(&["1/0", "1e39", "2^200", "0.5", "k"][..])
            .prop_map(|e| vec![format!("#define x {e}"), "#define y 1".to_owned()]),
        1 => Just(Vec::new()),
    ];
    let axioms = prop_oneof![8 => Just(1usize), 1 => 0usize..3]
        .prop_flat_map(|n| prop::collection::vec(word().prop_map(|w| format!("axiom: X{w}")), n));
    // The growth production lets some grammars outgrow the module limit.
    let extra = prop::sample::select(&["#ignore + - F", "# a comment", "", "#define w 0.5", "X -> X[+X]FX-X"][..])
        .prop_map(str::to_owned);
    (
        constants,
        prop::collection::vec(extra, 0..2),
        axioms,
        prop::collection::vec(production(), 0..5),
        prop::sample::select(&["\n", "\r\n"][..]),
    )
        .prop_map(|(mut lines, extra, axioms, productions, newline)| {
            lines.extend(extra);
            lines.push("#define k 1.5".to_owned());
            lines.extend(axioms);
            lines.extend(productions);
            lines.join(newline)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "(\\PC|\n|\r\n|\t){0,100}", iterations in 0u32..5) {
        check_pipeline(&text, iterations).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn grammar_shaped_text_never_panics(text in grammar(), iterations in 0u32..7) {
        check_pipeline(&text, iterations).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn positions_are_checked_against_the_text() {
    let at = |line, column| Position { line, column };
    assert!(position_in_text(at(1, 4), "abc").is_ok());
    assert!(position_in_text(at(1, 5), "abc").is_err());
    assert!(position_in_text(at(2, 1), "abc\n").is_ok());
    assert!(position_in_text(at(2, 2), "abc\n").is_err());
    assert!(position_in_text(at(3, 1), "abc\n").is_err());
    assert!(position_in_text(at(1, 1), "").is_ok());
    assert!(position_in_text(at(0, 1), "abc").is_err());
}

/// Each kind of bad input the fuzzer explores reports where it is.
#[test]
fn bad_input_errors_point_into_the_text() {
    let cases: [(&str, u32, u32); 6] = [
        ("axiom: A\nA -> F[+F", 2, 7),
        ("axiom: A(q)", 1, 10),
        ("axiom: A(1)\nA(x) -> A(x,x)", 2, 9),
        ("#define k 1/0\naxiom: F(k)", 1, 12),
        ("axiom: F(1e39)", 1, 10),
        ("axiom: A\r\nB -> C(", 2, 8),
    ];
    for (text, line, column) in cases {
        let e = LSystem::parse(text).expect_err(text);
        assert_eq!(e.position(), Some(Position { line, column }), "{text:?}: {e}");
        assert!(position_in_text(Position { line, column }, text).is_ok());
    }
}

#[test]
fn runaway_growth_stops_at_the_limit() {
    let system = LSystem::parse("axiom: F\nF -> FF").expect("valid grammar");
    let opts = DeriveOptions {
        module_limit: MODULE_LIMIT,
        ..DeriveOptions::default()
    };
    // 2^10 = 1024 fits, 2^11 = 2048 does not.
    assert_eq!(system.derive(10, &opts).map(|w| w.len()), Ok(1024));
    let e = system.derive(11, &opts).expect_err("2048 modules exceed the limit");
    assert!(
        matches!(
            e,
            LSystemError::ModuleLimit {
                limit: MODULE_LIMIT,
                step: 11,
                ..
            }
        ),
        "{e}"
    );
    assert!(check_pipeline("axiom: F\nF -> FF", 11).is_ok());
}

/// Regression (found while auditing for the fuzz target): finite steps that
/// add up past `f32::MAX` drew infinite points; now the turtle names the module.
#[test]
fn steps_past_the_f32_range_are_a_turtle_error() {
    let system = LSystem::parse("axiom: F(3e38)F(3e38)").expect("finite parameters");
    let word = system.derive(0, &DeriveOptions::default()).expect("no productions");
    let e = interpret(&word, &TurtleOptions::default()).expect_err("6e38 is past f32::MAX");
    assert!(matches!(e, LSystemError::Turtle { module: 1, .. }), "{e}");
    assert!(check_pipeline("axiom: F(3e38)F(3e38)", 0).is_ok());
    assert!(check_pipeline("axiom: f(3e38)f(3e38)F", 0).is_ok());
    let one = LSystem::parse("axiom: F(3e38)").expect("finite parameter");
    let out = interpret(one.axiom(), &TurtleOptions::default()).expect("3e38 is within f32");
    assert_eq!(out.graph.len(), 1);
}
