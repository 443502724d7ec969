//! Parametric bracketed L-systems: language, derivation and 3D turtle.
//!
//! ```
//! use sylva_systems::lsystem::{DeriveOptions, LSystem, TurtleOptions, interpret};
//!
//! let system = LSystem::parse(
//!     "#define d 25
//!      axiom: F(15)
//!      F(l) -> F(l)[-(d)F(l)]F(l)[+(d)F(l)][F(l)]",
//! )?;
//! let word = system.derive(1, &DeriveOptions::default())?;
//! assert_eq!(system.format(&word, ""), "F(15)[-(25)F(15)]F(15)[+(25)F(15)][F(15)]");
//! let tree = interpret(&word, &TurtleOptions::default())?;
//! assert_eq!(tree.graph.len(), 5);
//! # Ok::<(), sylva_systems::lsystem::LSystemError>(())
//! ```
//!
//! # The grammar language
//!
//! One statement per line; `#` followed by a space or tab (or at the end of a
//! line) starts a comment that runs to the end of the line. Any other `#`
//! inside a statement is an error (`A -> B#C`), not the start of a comment.
//!
//! - `#define name expr`: a constant, usable in every later expression.
//!   Formal parameters shadow constants of the same name.
//! - `#ignore + - & ^`: symbols context matching skips (ABOP's ignore list).
//! - `axiom: word` (or `omega:`/`ω:`): the start word; exactly one.
//! - A production, optionally labelled `p1:` as in the thesis:
//!   `[left <] pred [> right] [: condition] -> successor [: probability]`,
//!   with `-->` or `→` also accepted as the arrow.
//!
//! **Modules.** A symbol is one letter (`FF` is two modules) with an
//! optional subscript of `_` and one letter or digit (`a_r`, `F_l`; as with
//! `FF`, `F_lF_r` is two modules), or one of `+ - & ^ \ / | ! $ % [ ]` or
//! the inert ABOP symbols `{ } . ~ ' @ ? *`. Parameters follow in
//! parentheses: `F(l*lr)`, `A(x+1, y*2)`.
//!
//! **Expressions** have the usual precedence and parentheses: `+ - * /`,
//! `^` (power, right-associative, above unary minus), unary `-` and `!`,
//! comparisons `< <= > >= == !=`, short-circuit `&&` `||`, and the
//! functions `sqrt abs floor ceil exp ln min max` and `sin cos tan` (in
//! degrees). Division by zero and non-finite results are errors.
//!
//! **Matching.** A production applies to a module with the same symbol and
//! parameter count; every use of a symbol that has productions must have
//! that count (an error otherwise, as in the thesis program). Letters
//! without an applicable production are copied (identity production).
//! Productions are tried in text order: a context-sensitive one needs its
//! contexts to match (ABOP semantics: the left context is found towards the
//! root, skipping sibling branches; the right context skips branches the
//! pattern does not enter, a `[` in it may match any following sibling
//! branch; `*` alone means "any"), and a conditional one needs its condition
//! to be non-zero. If the first applicable production has no probability it
//! applies; otherwise one of all applicable productions with a probability
//! is drawn, in proportion to the (normalised) probabilities, from a hash of
//! (seed, step, module index).
//!
//! **Turtle** (see [`interpret`]): `F(l)` draws, `f(l)` moves,
//! `+(d) -(d)` turn, `&(d) ^(d)` pitch, `\(d) /(d)` roll, `|` turns around,
//! `[ ]` push and pop (position, orientation, current node, width), `!(w)`
//! sets the width (bare `!` shrinks it), `$` rolls L horizontal, `%` cuts
//! the rest of its branch (during derivation and in the turtle). A turtle
//! symbol without a parameter uses the default step or angle δ, so both the
//! thesis's fully parameterised strings and ABOP-style `F+F` work.
//! A subscripted `F` (ABOP's `F_l`, `F_r` of edge-rewriting curves, Fig.
//! 1.10/1.11) draws like `F` and a subscripted `f` moves like `f`, while
//! productions tell them apart. Other letters draw nothing.
//!
//! **Leaves** (see [`LeafSymbols`]): ABOP's polygons `{ … }` (vertices at `.` and after `f`
//! or `G` moves; `G` moves only inside a polygon) each become one leaf, and so does each
//! module of the leaf symbol ([`LSystemParams::leaf_symbol`], e.g. `L` or `L(size)`). Leaves
//! never change the branch graph.
//!
//! # Differences from the thesis program
//!
//! - Expressions use precedence (`2+3*4` is 14); the thesis program
//!   evaluates strictly left to right (20). Every thesis example has at most
//!   one operator per expression, so all of them give the same words.
//! - Parameters are evaluated during derivation, not substituted as text
//!   and evaluated by the turtle; the values are the same.
//! - Bare turtle symbols use defaults; the thesis program ignores them.
//! - The thesis's vertical 10-unit root stub is an option
//!   ([`TurtleOptions::root_stub`], [`LSystemParams::root_stub`]), off by
//!   default and on in the `scenes/thesis` presets.

mod derive;
mod error;
mod expr;
mod foliage;
mod grammar;
mod lexer;
mod module;
mod params;
mod parser;
mod turtle;

pub use derive::DeriveOptions;
pub use error::{LSystemError, Position};
pub use foliage::LeafSymbols;
pub use grammar::LSystem;
pub use module::{ModuleBuffer, SymbolId, SymbolTable};
pub use params::{LSystemOutput, LSystemParams, MAX_ITERATIONS, MAX_MODULE_LIMIT, generate};
pub use turtle::{
    INITIAL_HEADING, INITIAL_LEFT, INITIAL_UP, TropismMode, TurtleOptions, TurtleOutput, interpret, interpret_into,
};
