//! Errors of parsing, derivation and interpretation.

use std::fmt;

use sylva_runtime::FieldError;
use thiserror::Error;

/// A 1-based line and column (in characters) in the grammar text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Line, starting at 1.
    pub line: u32,
    /// Column in characters, starting at 1.
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Everything that can go wrong between grammar text and branch graph.
///
/// Errors about the text carry its [`Position`]; errors found while deriving
/// carry the position of the expression or production that failed and the
/// derivation step (1-based) it failed in.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum LSystemError {
    /// The text does not follow the grammar syntax.
    #[error("{pos}: expected {expected}, found {found}")]
    Syntax {
        /// Where the unexpected input starts.
        pos: Position,
        /// What the parser could have accepted there.
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// An expression names something that is neither a parameter nor a constant.
    #[error("{pos}: unknown identifier `{name}` (expected a formal parameter or a #define constant)")]
    UnknownIdentifier {
        /// Where the name starts.
        pos: Position,
        /// The name.
        name: String,
    },
    /// An expression calls a function that does not exist or with the wrong argument count.
    #[error("{pos}: unknown function `{name}` with {args} argument(s) (expected one of {expected})")]
    UnknownFunction {
        /// Where the name starts.
        pos: Position,
        /// The name.
        name: String,
        /// Number of arguments given.
        args: usize,
        /// The functions that exist.
        expected: &'static str,
    },
    /// A name is defined twice (constant, or a formal parameter within one production).
    #[error("{pos}: `{name}` is already defined")]
    Duplicate {
        /// Where the second definition starts.
        pos: Position,
        /// The name.
        name: String,
    },
    /// A module is written with a parameter count its symbol does not take.
    #[error("{pos}: `{symbol}` takes {expected} parameter(s), found {found}")]
    Arity {
        /// Where the module starts.
        pos: Position,
        /// The module's symbol.
        symbol: String,
        /// What the turtle or the symbol's productions take.
        expected: String,
        /// How many parameters were written.
        found: usize,
    },
    /// A `[` without `]` or a `]` without `[` in the axiom or a successor.
    #[error("{pos}: unbalanced bracket: {message}")]
    UnbalancedBracket {
        /// Where the offending bracket is.
        pos: Position,
        /// Which bracket is missing.
        message: &'static str,
    },
    /// A limit that protects against hostile input was exceeded while parsing.
    #[error("{pos}: {message}")]
    TooComplex {
        /// Where the limit was hit.
        pos: Position,
        /// Which limit.
        message: &'static str,
    },
    /// The grammar has no `axiom:` line.
    #[error("{pos}: expected an `axiom:` line, found end of grammar")]
    MissingAxiom {
        /// The end of the text.
        pos: Position,
    },
    /// An expression evaluated to infinity or NaN, or divided by zero.
    #[error("{pos}: {message} (derivation step {step})")]
    Arithmetic {
        /// The operator or expression that failed.
        pos: Position,
        /// What happened.
        message: &'static str,
        /// Derivation step, 0 for the axiom and constants.
        step: u32,
    },
    /// A stochastic production's probability was negative or not finite.
    #[error("{pos}: probability must be finite and >= 0, got {value} (derivation step {step})")]
    Probability {
        /// The probability expression.
        pos: Position,
        /// Its value.
        value: f32,
        /// Derivation step.
        step: u32,
    },
    /// The word grew beyond the configured module limit.
    #[error(
        "{pos}: derivation step {step} exceeds the module limit of {limit} modules (raise `module_limit` or lower `iterations`)"
    )]
    ModuleLimit {
        /// Position of the axiom (the limit belongs to the whole grammar).
        pos: Position,
        /// The limit.
        limit: usize,
        /// The step that exceeded it (0: the axiom itself).
        step: u32,
    },
    /// The turtle met a word it cannot interpret: malformed (only possible
    /// for hand-built buffers) or drawing past the `f32` range.
    #[error("module {module}: {message}")]
    Turtle {
        /// Index of the module in the word.
        module: usize,
        /// What is wrong.
        message: String,
    },
    /// A parameter of [`LSystemParams`](super::LSystemParams) is out of range.
    #[error("parameter `{}`: {}", .0.dotted(), .0.message)]
    InvalidParameter(#[from] FieldError),
}

impl LSystemError {
    /// The grammar-text position the error refers to, if it refers to the text.
    pub fn position(&self) -> Option<Position> {
        match self {
            Self::Syntax { pos, .. }
            | Self::UnknownIdentifier { pos, .. }
            | Self::UnknownFunction { pos, .. }
            | Self::Duplicate { pos, .. }
            | Self::Arity { pos, .. }
            | Self::UnbalancedBracket { pos, .. }
            | Self::TooComplex { pos, .. }
            | Self::MissingAxiom { pos }
            | Self::Arithmetic { pos, .. }
            | Self::Probability { pos, .. }
            | Self::ModuleLimit { pos, .. } => Some(*pos),
            Self::Turtle { .. } | Self::InvalidParameter(_) => None,
        }
    }
}
