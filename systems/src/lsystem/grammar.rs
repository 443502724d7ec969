//! The compiled grammar: symbols, axiom and productions indexed by symbol.

use std::ops::Range;

use super::error::Position;
use super::expr::Expr;
use super::module::{ModuleBuffer, SymbolId, SymbolTable};

/// One module of a successor: its symbol and its argument expressions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SuccModule {
    pub symbol: SymbolId,
    /// Range into [`Production::args`].
    pub args: Range<u32>,
}

/// A module of a context pattern; its parameters bind slots `first_slot..`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PatModule {
    pub symbol: SymbolId,
    pub arity: u16,
    pub first_slot: u16,
}

/// An element of a right-context pattern, which may contain branches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RightElem {
    Module(PatModule),
    Push,
    Pop,
}

/// A production `left < pred > right : condition -> successor : probability`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Production {
    /// Where the predecessor is written (for errors).
    pub pos: Position,
    pub pred: PatModule,
    /// Left context, in text order.
    pub left: Vec<PatModule>,
    pub right: Vec<RightElem>,
    /// Number of formal parameters over all of left context, predecessor and right context.
    pub slots: u16,
    pub condition: Option<Expr>,
    /// Weight and its position; `None` for a deterministic production.
    pub probability: Option<(Expr, Position)>,
    pub successor: Vec<SuccModule>,
    pub args: Vec<Expr>,
    /// The successor as a word, where every argument is a constant: derivation appends it in
    /// one copy instead of module by module.
    pub constant: Option<ModuleBuffer>,
}

impl Production {
    /// The word `successor` always produces, when every one of its `args` is a constant.
    pub(crate) fn constant_successor(successor: &[SuccModule], args: &[Expr]) -> Option<ModuleBuffer> {
        let mut word = ModuleBuffer::new();
        for m in successor {
            word.begin_module(m.symbol);
            for arg in &args[m.args.start as usize..m.args.end as usize] {
                match arg {
                    Expr::Const(v) => word.push_param(*v),
                    Expr::Slot(_) | Expr::Code(_) => return None,
                }
            }
            word.end_module();
        }
        Some(word)
    }
}

/// A parsed and compiled L-system: parse once, derive as often as needed.
///
/// The grammar language is described in the [module docs](super).
#[derive(Clone, Debug, PartialEq)]
pub struct LSystem {
    pub(crate) symbols: SymbolTable,
    pub(crate) axiom: ModuleBuffer,
    pub(crate) axiom_pos: Position,
    /// Sorted by predecessor symbol, text order within a symbol.
    pub(crate) productions: Vec<Production>,
    /// For each symbol id, its range in `productions`.
    pub(crate) by_symbol: Vec<Range<u32>>,
    /// For each symbol id, whether context matching skips it.
    pub(crate) ignore: Vec<bool>,
    pub(crate) has_context: bool,
    pub(crate) has_cut: bool,
}

impl LSystem {
    /// The axiom (ω), with its parameters evaluated.
    pub fn axiom(&self) -> &ModuleBuffer {
        &self.axiom
    }

    /// The symbol names of this grammar, for formatting words.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// Formats `word` with this grammar's symbol names (see [`ModuleBuffer::format`]).
    pub fn format(&self, word: &ModuleBuffer, separator: &str) -> String {
        word.format(&self.symbols, separator)
    }

    /// The most parameters a module of any word this grammar derives has: a derived word is
    /// made of the axiom's modules and the successors' (copied or rewritten), so the most
    /// among those bounds every module's. What a word of a given length can take in memory.
    ///
    /// ```
    /// use sylva_systems::lsystem::LSystem;
    ///
    /// let l = LSystem::parse("axiom: A(1)\nA(x) -> F(x)B(x, x, 2)A(x)").unwrap();
    /// assert_eq!(l.max_params(), 3);
    /// assert_eq!(LSystem::parse("axiom: F").unwrap().max_params(), 0);
    /// ```
    pub fn max_params(&self) -> usize {
        let axiom = (0..self.axiom.len()).map(|i| self.axiom.params(i).len());
        let successors = (self.productions.iter())
            .flat_map(|p| &p.successor)
            .map(|m| m.args.len());
        axiom.chain(successors).max().unwrap_or(0)
    }

    /// The productions whose predecessor is `symbol`.
    #[inline]
    pub(crate) fn productions_of(&self, symbol: SymbolId) -> &[Production] {
        match self.by_symbol.get(usize::from(symbol)) {
            Some(r) => &self.productions[r.start as usize..r.end as usize],
            None => &[],
        }
    }
}
