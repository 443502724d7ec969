//! Symbols and the module buffer (a derived word, stored structure-of-arrays).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

/// Index of a symbol in a [`SymbolTable`].
pub type SymbolId = u16;

/// The turtle symbols, with ids fixed so the turtle needs no symbol table.
pub(crate) mod sym {
    use super::SymbolId;
    /// `F`: move and draw a segment.
    pub const DRAW: SymbolId = 0;
    /// `f`: move without drawing.
    pub const MOVE: SymbolId = 1;
    /// `+`: turn left (about U).
    pub const LEFT: SymbolId = 2;
    /// `-`: turn right.
    pub const RIGHT: SymbolId = 3;
    /// `&`: pitch down (about L).
    pub const DOWN: SymbolId = 4;
    /// `^`: pitch up.
    pub const UP: SymbolId = 5;
    /// `\`: roll left (about H).
    pub const ROLL_LEFT: SymbolId = 6;
    /// `/`: roll right.
    pub const ROLL_RIGHT: SymbolId = 7;
    /// `|`: turn around.
    pub const TURN_AROUND: SymbolId = 8;
    /// `[`: push the turtle state.
    pub const PUSH: SymbolId = 9;
    /// `]`: pop the turtle state.
    pub const POP: SymbolId = 10;
    /// `!`: set or shrink the width.
    pub const WIDTH: SymbolId = 11;
    /// `$`: roll so that L is horizontal.
    pub const VERTICAL: SymbolId = 12;
    /// `%`: cut the rest of the branch.
    pub const CUT: SymbolId = 13;
    /// Names of the turtle symbols, indexed by id.
    pub const NAMES: [&str; 14] = ["F", "f", "+", "-", "&", "^", "\\", "/", "|", "[", "]", "!", "$", "%"];
    /// Largest parameter count each turtle symbol accepts.
    pub const MAX_ARITY: [usize; 14] = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0];
}

/// Maps module names to ids. The turtle symbols always have the same ids.
#[derive(Clone, Debug, PartialEq)]
pub struct SymbolTable {
    names: Vec<String>,
    ids: HashMap<String, SymbolId>,
}

impl Default for SymbolTable {
    fn default() -> Self {
        let mut table = Self {
            names: Vec::new(),
            ids: HashMap::new(),
        };
        for name in sym::NAMES {
            table.names.push(name.to_string());
            table.ids.insert(name.to_string(), table.names.len() as SymbolId - 1);
        }
        table
    }
}

impl SymbolTable {
    /// The id of `name`, if the grammar uses it.
    pub fn id(&self, name: &str) -> Option<SymbolId> {
        self.ids.get(name).copied()
    }

    /// The name of `id` (`"?"` for an id this table never handed out).
    pub fn name(&self, id: SymbolId) -> &str {
        self.names.get(usize::from(id)).map_or("?", String::as_str)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: the turtle symbols are always present.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Per symbol id, the turtle command the symbol performs, when some symbol is a subscripted
    /// turtle letter (ABOP's `F_l`, `F_r` draw as `F`; `f_x` moves as `f`); every other symbol
    /// maps to itself. `None` when there is none: then only the turtle symbols act.
    pub(crate) fn turtle_commands(&self) -> Option<Arc<[SymbolId]>> {
        let command = |name: &str| match name.split_once('_') {
            Some(("F", _)) => Some(sym::DRAW),
            Some(("f", _)) => Some(sym::MOVE),
            _ => None,
        };
        self.names.iter().any(|n| command(n).is_some()).then(|| {
            (0..self.names.len())
                .map(|id| command(&self.names[id]).unwrap_or(id as SymbolId))
                .collect()
        })
    }

    /// The id of `name`, adding it if new; `None` when all ids are used.
    pub(crate) fn intern(&mut self, name: &str) -> Option<SymbolId> {
        if let Some(&id) = self.ids.get(name) {
            return Some(id);
        }
        let id = SymbolId::try_from(self.names.len()).ok()?;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        Some(id)
    }
}

/// A word of parametric modules, stored structure-of-arrays: one symbol id
/// per module, and the parameters of all modules in one flat array, with
/// module `i`'s parameters at `params[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, PartialEq)]
pub struct ModuleBuffer {
    symbols: Vec<SymbolId>,
    offsets: Vec<u32>,
    params: Vec<f32>,
    /// The grammar's [`SymbolTable::turtle_commands`], carried by the words it derives so the
    /// turtle, which sees ids only, draws `F_l` as `F`.
    commands: Option<Arc<[SymbolId]>>,
}

impl Clone for ModuleBuffer {
    fn clone(&self) -> Self {
        Self {
            symbols: self.symbols.clone(),
            offsets: self.offsets.clone(),
            params: self.params.clone(),
            commands: self.commands.clone(),
        }
    }

    /// Keeps `self`'s allocations, which a derived `clone_from` would drop: every derivation
    /// starts by copying the axiom into the word buffer of the last tree, and a reused buffer
    /// then grows the next word without fresh memory.
    fn clone_from(&mut self, source: &Self) {
        self.symbols.clone_from(&source.symbols);
        self.offsets.clone_from(&source.offsets);
        self.params.clone_from(&source.params);
        self.commands.clone_from(&source.commands);
    }
}

impl Default for ModuleBuffer {
    fn default() -> Self {
        Self {
            symbols: Vec::new(),
            offsets: vec![0],
            params: Vec::new(),
            commands: None,
        }
    }
}

impl ModuleBuffer {
    /// An empty word.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty word with room for `modules` modules and `params` parameters.
    pub fn with_capacity(modules: usize, params: usize) -> Self {
        let mut offsets = Vec::with_capacity(modules + 1);
        offsets.push(0);
        Self {
            symbols: Vec::with_capacity(modules),
            offsets,
            params: Vec::with_capacity(params),
            commands: None,
        }
    }

    /// Removes every module, keeping the allocations for the next word.
    pub fn clear(&mut self) {
        self.symbols.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.params.clear();
    }

    /// Makes room for `modules` more modules and `params` more parameters.
    pub(crate) fn reserve(&mut self, modules: usize, params: usize) {
        self.symbols.reserve(modules);
        self.offsets.reserve(modules);
        self.params.reserve(params);
    }

    /// Number of modules.
    #[inline]
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// True when the word has no module.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// All symbol ids, one per module.
    #[inline]
    pub fn symbols(&self) -> &[SymbolId] {
        &self.symbols
    }

    /// The flat parameter array of all modules.
    #[inline]
    pub fn all_params(&self) -> &[f32] {
        &self.params
    }

    /// Symbol of module `i`. Panics if `i >= self.len()`.
    #[inline]
    pub fn symbol(&self, i: usize) -> SymbolId {
        self.symbols[i]
    }

    /// The turtle command of module `i`: its symbol, or for a subscripted turtle letter (`F_l`)
    /// the letter's (`F`). Panics if `i >= self.len()`.
    #[inline]
    pub fn command(&self, i: usize) -> SymbolId {
        let symbol = self.symbols[i];
        match &self.commands {
            Some(commands) => commands.get(usize::from(symbol)).copied().unwrap_or(symbol),
            None => symbol,
        }
    }

    /// The table [`Self::command`] reads, shared.
    pub(crate) fn commands(&self) -> Option<Arc<[SymbolId]>> {
        self.commands.clone()
    }

    /// Sets the table [`Self::command`] reads (a grammar's [`SymbolTable::turtle_commands`]).
    pub(crate) fn set_commands(&mut self, commands: Option<Arc<[SymbolId]>>) {
        self.commands = commands;
    }

    /// Parameters of module `i`. Panics if `i >= self.len()`.
    #[inline]
    pub fn params(&self, i: usize) -> &[f32] {
        &self.params[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Appends a module. Returns `false` (and appends nothing) when the flat
    /// parameter array would outgrow its 32-bit offsets.
    #[inline]
    pub fn push(&mut self, symbol: SymbolId, params: &[f32]) -> bool {
        let end = self.params.len() + params.len();
        let Ok(end32) = u32::try_from(end) else {
            return false;
        };
        self.params.extend_from_slice(params);
        self.symbols.push(symbol);
        self.offsets.push(end32);
        true
    }

    /// Appends modules `range` of `word`, in one copy per array. Returns `false` (and appends
    /// nothing) when the flat parameter array would outgrow its 32-bit offsets. Panics if `range`
    /// is not within `word`.
    #[inline]
    pub(crate) fn extend_from(&mut self, word: &ModuleBuffer, range: Range<usize>) -> bool {
        let first = word.offsets[range.start];
        let params = &word.params[first as usize..word.offsets[range.end] as usize];
        let Ok(base) = u32::try_from(self.params.len()) else {
            return false;
        };
        if u32::try_from(self.params.len() + params.len()).is_err() {
            return false;
        }
        self.params.extend_from_slice(params);
        self.symbols.extend_from_slice(&word.symbols[range.clone()]);
        // Offsets after the first module of the range, moved from `word`'s parameters to ours.
        let shift = base.wrapping_sub(first);
        self.offsets.extend(
            word.offsets[range.start + 1..=range.end]
                .iter()
                .map(|&o| o.wrapping_add(shift)),
        );
        true
    }

    /// Starts a module whose parameters follow through [`Self::push_param`];
    /// the module is complete after [`Self::end_module`].
    #[inline]
    pub(crate) fn begin_module(&mut self, symbol: SymbolId) {
        self.symbols.push(symbol);
    }

    #[inline]
    pub(crate) fn push_param(&mut self, value: f32) {
        self.params.push(value);
    }

    /// Closes the module started by [`Self::begin_module`]; `false` on offset overflow.
    #[inline]
    pub(crate) fn end_module(&mut self) -> bool {
        match u32::try_from(self.params.len()) {
            Ok(end) => {
                self.offsets.push(end);
                true
            }
            Err(_) => false,
        }
    }

    /// Concatenates `parts` in order, copying them in parallel; `None` on
    /// offset overflow. Zero-initialised vectors come from the allocator as
    /// untouched pages, so the page faults of the new buffer are spread
    /// over the threads as well.
    pub(crate) fn concat(parts: &[ModuleBuffer]) -> Option<Self> {
        let total: usize = parts.iter().map(ModuleBuffer::len).sum();
        let total_params: usize = parts.iter().map(|p| p.params.len()).sum();
        u32::try_from(total_params).ok()?;
        let mut symbols = vec![0; total];
        let mut offsets = vec![0; total + 1];
        let mut params = vec![0.0; total_params];
        let (mut sym_rest, mut off_rest, mut par_rest) = (&mut symbols[..], &mut offsets[1..], &mut params[..]);
        let mut jobs = Vec::with_capacity(parts.len());
        let mut base = 0u32;
        for part in parts {
            let (s, rest) = std::mem::take(&mut sym_rest).split_at_mut(part.len());
            sym_rest = rest;
            let (o, rest) = std::mem::take(&mut off_rest).split_at_mut(part.len());
            off_rest = rest;
            let (p, rest) = std::mem::take(&mut par_rest).split_at_mut(part.params.len());
            par_rest = rest;
            jobs.push((part, s, o, p, base));
            base += part.params.len() as u32;
        }
        jobs.into_par_iter().for_each(|(part, s, o, p, base)| {
            s.copy_from_slice(&part.symbols);
            for (dst, src) in o.iter_mut().zip(&part.offsets[1..]) {
                *dst = src + base;
            }
            p.copy_from_slice(&part.params);
        });
        Some(Self {
            symbols,
            offsets,
            params,
            // The derivation step that concatenates sets the grammar's table.
            commands: None,
        })
    }

    /// Keeps only the modules for which `keep[i]` is true.
    pub(crate) fn retain_modules(&mut self, keep: &[bool]) {
        let mut out = ModuleBuffer::with_capacity(self.len(), self.params.len());
        for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
            out.push(self.symbols[i], self.params(i));
        }
        out.commands = self.commands.take();
        *self = out;
    }

    /// Formats the word with `names`, writing parameters in parentheses and
    /// putting `separator` between modules: `A(2,2) B(1)` with `" "`,
    /// `F(15)[-(25)F(15)]` with `""`.
    pub fn format(&self, names: &SymbolTable, separator: &str) -> String {
        let mut out = String::new();
        for i in 0..self.len() {
            if i > 0 {
                out.push_str(separator);
            }
            out.push_str(names.name(self.symbols[i]));
            let params = self.params(i);
            if !params.is_empty() {
                out.push('(');
                for (k, p) in params.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{p}");
                }
                out.push(')');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_from_copies_modules_with_their_parameters() {
        let mut word = ModuleBuffer::new();
        word.push(20, &[1.0, 2.0]);
        word.push(sym::PUSH, &[]);
        word.push(sym::DRAW, &[3.0]);
        word.push(21, &[4.0, 5.0, 6.0]);
        let mut out = ModuleBuffer::new();
        out.push(sym::LEFT, &[9.0]);
        assert!(out.extend_from(&word, 1..4));
        assert!(out.extend_from(&word, 2..2));
        assert!(out.extend_from(&word, 0..1));
        let mut expected = ModuleBuffer::new();
        for (s, p) in [
            (sym::LEFT, &[9.0][..]),
            (sym::PUSH, &[]),
            (sym::DRAW, &[3.0]),
            (21, &[4.0, 5.0, 6.0]),
            (20, &[1.0, 2.0]),
        ] {
            expected.push(s, p);
        }
        assert_eq!(out, expected);
    }
}
