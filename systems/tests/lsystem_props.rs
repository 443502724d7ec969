//! Property tests: parallel derivation equals sequential derivation, and no
//! input, however malformed, makes parsing, derivation or the turtle panic.

use proptest::prelude::*;
use sylva_systems::lsystem::{DeriveOptions, LSystem, LSystemError, Position, TurtleOptions, interpret};

/// Successor fragments that keep brackets balanced and parameter counts right
/// (A and B take one parameter, C none).
const PIECES: [&str; 16] = [
    "A(x+1)",
    "B(x*0.5)",
    "C",
    "F(x)",
    "F",
    "+(x*10)",
    "-",
    "&(30)",
    "/",
    "[A(x-1)]",
    "[B(x)C]",
    "[+F(1)A(x*2)]",
    "%",
    "!(x)",
    "$",
    "f(1)",
];

fn successor() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&PIECES[..]), 0..6).prop_map(|v| v.concat())
}

/// A grammar mixing deterministic, conditional, stochastic and
/// context-sensitive productions, all of them random. `C` has no formal
/// `x`, so its successors read the constant `x`.
fn grammar() -> impl Strategy<Value = String> {
    (successor(), successor(), successor(), successor(), successor(), 0.0f32..3.0, 0.0f32..3.0, 0u8..4).prop_map(
        |(s1, s2, s3, s4, s5, w1, w2, ctx)| {
            let context = match ctx {
                0 => format!("B(y) < A(x) > C : x + y > 1 -> {s4}"),
                1 => format!("A(x) > [B(y)] -> {s4}"),
                2 => format!("C < C -> {s4}"),
                _ => format!("A(y) < B(x) -> {s4}"),
            };
            format!(
                "#define x 2\n#ignore + - & / F\naxiom: A(1)[B(2)C]C A(3)\n{context}\nA(x) : x > 4 -> {s1}\nA(x) -> {s2} : {w1}\nA(x) -> {s3} : {w2}\nB(x) -> {s5}\n"
            )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn parallel_derivation_equals_sequential(
        text in grammar(),
        seed in any::<u64>(),
        iterations in 0u32..7,
        chunk_size in 1usize..40,
        module_limit in 20usize..3000,
    ) {
        let system = LSystem::parse(&text).expect("generated grammars are valid");
        let sequential = DeriveOptions { seed, module_limit, chunk_size: usize::MAX, parallel: false };
        let parallel = DeriveOptions { chunk_size, parallel: true, ..sequential };
        let a = system.derive(iterations, &sequential);
        let b = system.derive(iterations, &parallel);
        prop_assert_eq!(&a, &b);
        if let Ok(word) = a {
            prop_assert!(word.len() <= module_limit);
            // Derived words are always balanced and well-formed for the turtle.
            let out = interpret(&word, &TurtleOptions::default());
            prop_assert!(out.is_ok(), "{:?}", out.err());
        }
    }
}

/// Runs the whole pipeline on arbitrary text; it may fail, but not panic,
/// and any error about the text must point into it.
fn pipeline_never_panics(text: &str, iterations: u32) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1) as u32;
    let check = |e: &LSystemError| -> Result<(), TestCaseError> {
        let pos = e.position();
        prop_assert!(pos.is_some(), "error without position: {e}");
        let pos = pos.unwrap_or_default();
        prop_assert!(
            pos.line >= 1 && pos.line <= lines + 1 && pos.column >= 1,
            "{e} for {text:?}"
        );
        prop_assert!(!e.to_string().is_empty());
        Ok(())
    };
    match LSystem::parse(text) {
        Err(e) => check(&e),
        Ok(system) => {
            let opts = DeriveOptions {
                module_limit: 2000,
                chunk_size: 7,
                ..DeriveOptions::default()
            };
            match system.derive(iterations, &opts) {
                Err(e) => check(&e),
                Ok(word) => {
                    let out = interpret(&word, &TurtleOptions::default());
                    prop_assert!(out.is_ok(), "{:?}", out.err());
                    Ok(())
                }
            }
        }
    }
}

const TOKENS: [&str; 48] = [
    "axiom:",
    "ω:",
    "A",
    "B",
    "F",
    "f",
    "a_r",
    "(",
    ")",
    "(x)",
    "(x,y)",
    ",",
    "->",
    "-->",
    "<",
    ">",
    ":",
    "[",
    "]",
    "+",
    "-",
    "*",
    "/",
    "\\",
    "^",
    "&",
    "|",
    "!",
    "$",
    "%",
    "x",
    "y",
    "0",
    "1.5",
    "1e40",
    "#define k",
    "#ignore",
    "#",
    "\n",
    " ",
    "&&",
    "||",
    "==",
    "sqrt(",
    "1/0",
    "x/0",
    "p1:",
    "*",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(text in "\\PC{0,80}", iterations in 0u32..4) {
        pipeline_never_panics(&text, iterations)?;
    }

    #[test]
    fn grammar_shaped_strings_never_panic(
        text in "(axiom: |#define [a-z] |#ignore |[A-Fa-f+\\-&^/\\\\|!$%\\[\\]()<>:,.*0-9xy ]|->|\n){0,60}",
        iterations in 0u32..5,
    ) {
        pipeline_never_panics(&text, iterations)?;
    }

    #[test]
    fn token_soups_never_panic(tokens in prop::collection::vec(prop::sample::select(&TOKENS[..]), 0..40), iterations in 0u32..5) {
        pipeline_never_panics(&tokens.concat(), iterations)?;
    }

    #[test]
    fn soups_after_a_valid_axiom_never_panic(tokens in prop::collection::vec(prop::sample::select(&TOKENS[..]), 0..30), iterations in 0u32..6) {
        let text = format!("axiom: A(1)F[B]\n{}", tokens.concat());
        pipeline_never_panics(&text, iterations)?;
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let text = format!("axiom: F({}1{})", "(".repeat(100_000), ")".repeat(100_000));
    let e = LSystem::parse(&text).unwrap_err();
    assert!(matches!(e, LSystemError::TooComplex { .. }), "{e}");
    let text = format!("axiom: F({}1)", "-".repeat(100_000));
    assert!(matches!(LSystem::parse(&text), Err(LSystemError::TooComplex { .. })));
    let text = format!("axiom: A\nA > {} -> B", "[".repeat(100_000));
    let e = LSystem::parse(&text).unwrap_err();
    assert_eq!(
        e,
        LSystemError::TooComplex {
            pos: Position { line: 2, column: 5 },
            message: "right context enters more than 32 branches"
        }
    );
}
