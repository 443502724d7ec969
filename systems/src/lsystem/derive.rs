//! Derivation: rewriting every module of a word in parallel (in the
//! L-system sense), optionally split over threads.
//!
//! A step is a pure function of (grammar, word, step number, seed): the
//! stochastic choice for module `i` hashes `(seed, step, i)`, and long words
//! are cut into chunks of a fixed module count, not one per thread, whose
//! outputs are concatenated in order. The parallel path therefore returns
//! exactly what the sequential one returns, errors included.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use sylva_runtime::rng::{hash_words, purpose_hash, unit_f32};

use super::error::{LSystemError, Position};
use super::expr::EvalError;
use super::grammar::{LSystem, PatModule, Production, RightElem};
use super::module::{ModuleBuffer, SymbolId, sym};

/// Most formal parameters of one production (matches the parser's limit).
const MAX_SLOTS: usize = 64;

/// How often (in source modules) a parallel chunk looks at what the other
/// chunks produced, to stop early when the word outgrows the module limit.
const GLOBAL_CHECK_INTERVAL: usize = 1024;

/// No matching bracket.
const UNMATCHED: u32 = u32::MAX;

/// Settings of a derivation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeriveOptions {
    /// Seed of the stochastic choices. Default 0.
    pub seed: u64,
    /// Largest word allowed after any step; a larger one is an error, found
    /// while the word is being built, so memory stays bounded. Default 20,000,000.
    pub module_limit: usize,
    /// Source modules per parallel work item; words up to this length are
    /// derived on one thread. It changes speed only, never the result. Default 32,768.
    pub chunk_size: usize,
    /// Allow the parallel path. Default true.
    pub parallel: bool,
}

impl Default for DeriveOptions {
    fn default() -> Self {
        Self {
            seed: 0,
            module_limit: 20_000_000,
            chunk_size: 32_768,
            parallel: true,
        }
    }
}

/// Why deriving a range of modules stopped.
enum RangeError {
    /// An expression failed after `before` complete output modules.
    Eval { error: LSystemError, before: usize },
    /// The range's own output exceeded the limit.
    Limit,
    /// All chunks together exceeded the limit (parallel path only); the
    /// exact error is then found by finishing sequentially.
    GlobalLimit,
}

impl LSystem {
    /// Derives `iterations` steps from the axiom.
    pub fn derive(&self, iterations: u32, opts: &DeriveOptions) -> Result<ModuleBuffer, LSystemError> {
        let mut word = ModuleBuffer::new();
        self.derive_into(iterations, opts, &mut word, &mut ModuleBuffer::new())?;
        Ok(word)
    }

    /// [`Self::derive`] into `word`, with `spare` as the second buffer each step writes into:
    /// deriving many trees with the same two buffers allocates (and page-faults) nothing once
    /// they have grown to the largest word. On failure both buffers hold unspecified words.
    pub fn derive_into(
        &self,
        iterations: u32,
        opts: &DeriveOptions,
        word: &mut ModuleBuffer,
        spare: &mut ModuleBuffer,
    ) -> Result<(), LSystemError> {
        if self.axiom.len() > opts.module_limit {
            return Err(self.limit_error(opts, 0));
        }
        word.clone_from(&self.axiom);
        let mut room = (0, 0);
        for step in 1..=iterations {
            self.step_into(word, step, opts, spare, room)?;
            room = next_room(word, spare, opts);
            std::mem::swap(word, spare);
        }
        Ok(())
    }

    /// Rewrites every module of `word` once; `step` (1-based) keys the random choices.
    pub fn step(&self, word: &ModuleBuffer, step: u32, opts: &DeriveOptions) -> Result<ModuleBuffer, LSystemError> {
        let mut out = ModuleBuffer::new();
        self.step_into(word, step, opts, &mut out, (0, 0))?;
        Ok(out)
    }

    /// [`Self::step`] into `out`, replacing its contents and reusing its allocations, with room
    /// for `room` (modules, parameters) reserved up front.
    fn step_into(
        &self,
        word: &ModuleBuffer,
        step: u32,
        opts: &DeriveOptions,
        out: &mut ModuleBuffer,
        room: (usize, usize),
    ) -> Result<(), LSystemError> {
        let brackets = if self.has_context {
            match_brackets(word.symbols())
        } else {
            Vec::new()
        };
        let ctx = StepContext {
            sys: self,
            word,
            brackets: &brackets,
            step,
            seed: hash_words(&[opts.seed, purpose_hash("lsystem")]),
            limit: opts.module_limit,
        };
        let n = word.len();
        let chunk = opts.chunk_size.max(1);
        // Chunks only pay off with a second thread to take them; on one they would just add a
        // copy of the word (both paths give the same result).
        if opts.parallel && n > chunk && rayon::current_num_threads() > 1 {
            *out = self.step_parallel(&ctx, chunk, opts)?;
        } else {
            out.clear();
            out.reserve(room.0, room.1);
            ctx.derive_range_into(0..n, 0, None, out)
                .map_err(|e| self.range_error(&e, 0, opts, step))?;
        }
        if self.has_cut && out.symbols().contains(&sym::CUT) {
            cut(out);
        }
        // The chunks of a parallel step, and a spare buffer, start without the grammar's table.
        out.set_commands(self.axiom.commands());
        Ok(())
    }

    fn step_parallel(
        &self,
        ctx: &StepContext<'_>,
        chunk: usize,
        opts: &DeriveOptions,
    ) -> Result<ModuleBuffer, LSystemError> {
        let n = ctx.word.len();
        let produced = AtomicUsize::new(0);
        let parts: Vec<Result<ModuleBuffer, RangeError>> = (0..n.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let part = ctx.derive_range(c * chunk..n.min((c + 1) * chunk), 0, Some(&produced));
                if let Ok(buffer) = &part {
                    produced.fetch_add(buffer.len(), Ordering::Relaxed);
                }
                part
            })
            .collect();
        let mut total = 0usize;
        for (c, part) in parts.iter().enumerate() {
            match part {
                Ok(buffer) => {
                    total += buffer.len();
                    if total > opts.module_limit {
                        return Err(self.limit_error(opts, ctx.step));
                    }
                }
                Err(RangeError::GlobalLimit) => {
                    // Another chunk's output pushed the total over the limit.
                    // Finish from here on one thread, which reports whatever
                    // the sequential path would report first.
                    let before = total;
                    let rest = ctx
                        .derive_range(c * chunk..n, before, None)
                        .map_err(|e| self.range_error(&e, before, opts, ctx.step));
                    return match rest {
                        Err(e) => Err(e),
                        Ok(_) => Err(self.limit_error(opts, ctx.step)),
                    };
                }
                Err(e) => return Err(self.range_error(e, total, opts, ctx.step)),
            }
        }
        let parts: Vec<ModuleBuffer> = parts.into_iter().flatten().collect();
        ModuleBuffer::concat(&parts).ok_or_else(|| self.limit_error(opts, ctx.step))
    }

    fn limit_error(&self, opts: &DeriveOptions, step: u32) -> LSystemError {
        LSystemError::ModuleLimit {
            pos: self.axiom_pos,
            limit: opts.module_limit,
            step,
        }
    }

    /// Resolves a range error given `before` output modules of earlier ranges:
    /// an expression error counts only if the word had not already outgrown the limit.
    fn range_error(&self, e: &RangeError, before: usize, opts: &DeriveOptions, step: u32) -> LSystemError {
        match e {
            RangeError::Eval { error, before: partial } if before + partial <= opts.module_limit => error.clone(),
            _ => self.limit_error(opts, step),
        }
    }
}

/// The room (modules, parameters) to reserve for the step after the one that turned `before`
/// into `after`.
///
/// A word outgrowing its buffer is copied as it grows, and in fresh memory every copy faults in
/// new pages. Words grow by about the same factor each step, so the last step's factor, a
/// sixteenth more and at most 4, usually covers the next word at once; the unused rest of the
/// reservation is never touched.
fn next_room(before: &ModuleBuffer, after: &ModuleBuffer, opts: &DeriveOptions) -> (usize, usize) {
    let grown = |from: usize, to: usize| {
        let factor = if from == 0 {
            1.0
        } else {
            (to as f64 / from as f64).clamp(1.0, 4.0)
        };
        (to as f64 * factor * (17.0 / 16.0)) as usize
    };
    let modules = grown(before.len(), after.len()).min(opts.module_limit.saturating_add(1));
    // At most the last word's parameters per module (rounded up) for each module of room, so
    // the module limit bounds the parameters' room too.
    let per_module = after.all_params().len().div_ceil(after.len().max(1));
    let params = grown(before.all_params().len(), after.all_params().len()).min(modules.saturating_mul(per_module));
    (modules, params)
}

struct StepContext<'a> {
    sys: &'a LSystem,
    word: &'a ModuleBuffer,
    /// For each bracket, the index of its partner (only for context-sensitive grammars).
    brackets: &'a [u32],
    step: u32,
    seed: u64,
    limit: usize,
}

impl StepContext<'_> {
    /// Derives the modules in `range` into a fresh buffer. `base` output
    /// modules precede this range; `global` counts the output of finished
    /// parallel chunks.
    fn derive_range(
        &self,
        range: Range<usize>,
        base: usize,
        global: Option<&AtomicUsize>,
    ) -> Result<ModuleBuffer, RangeError> {
        let mut out = ModuleBuffer::new();
        self.derive_range_into(range, base, global, &mut out)?;
        Ok(out)
    }

    /// [`Self::derive_range`] into `out`, replacing its contents.
    fn derive_range_into(
        &self,
        range: Range<usize>,
        base: usize,
        global: Option<&AtomicUsize>,
        out: &mut ModuleBuffer,
    ) -> Result<(), RangeError> {
        let word = self.word;
        out.clear();
        out.reserve(range.len() * 2, word.all_params().len().min(range.len() * 2));
        let mut env = [0.0f32; MAX_SLOTS];
        let mut stack = Vec::with_capacity(32);
        let mut next_check = range.start + GLOBAL_CHECK_INTERVAL;
        let mut i = range.start;
        while i < range.end {
            let productions = self.sys.productions_of(word.symbol(i));
            let ok = if productions.is_empty() {
                // A run of modules no production rewrites is copied whole.
                let rest = &word.symbols()[i + 1..range.end];
                let run = 1 + rest
                    .iter()
                    .position(|&s| !self.sys.productions_of(s).is_empty())
                    .unwrap_or(rest.len());
                i += run;
                out.extend_from(word, i - run..i)
            } else {
                let before = out.len();
                let eval_err = |error| RangeError::Eval { error, before };
                let chosen = self.choose(i, productions, &mut env, &mut stack).map_err(eval_err)?;
                let ok = match chosen {
                    None => out.extend_from(word, i..i + 1),
                    Some(p) => self.emit(p, &env, &mut stack, out).map_err(eval_err)?,
                };
                i += 1;
                ok
            };
            if !ok || base + out.len() > self.limit {
                return Err(RangeError::Limit);
            }
            if let Some(global) = global
                && i >= next_check
            {
                next_check = i + GLOBAL_CHECK_INTERVAL;
                if out.len() + global.load(Ordering::Relaxed) > self.limit {
                    return Err(RangeError::GlobalLimit);
                }
            }
        }
        Ok(())
    }

    fn eval_error(&self, (pos, message): EvalError) -> LSystemError {
        LSystemError::Arithmetic {
            pos,
            message,
            step: self.step,
        }
    }

    /// Writes `p`'s successor; `Ok(false)` when the parameter array overflows.
    #[inline]
    fn emit(
        &self,
        p: &Production,
        env: &[f32],
        stack: &mut Vec<f32>,
        out: &mut ModuleBuffer,
    ) -> Result<bool, LSystemError> {
        if let Some(word) = &p.constant {
            return Ok(out.extend_from(word, 0..word.len()));
        }
        for m in &p.successor {
            out.begin_module(m.symbol);
            for arg in &p.args[m.args.start as usize..m.args.end as usize] {
                let v = arg.eval(env, stack).map_err(|e| self.eval_error(e))?;
                out.push_param(v);
            }
            if !out.end_module() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The production to apply to module `i`, with its parameters bound in
    /// `env`; `None` for the identity production.
    ///
    /// Productions are tried in text order. If the first applicable one is
    /// deterministic it applies. Otherwise one of all applicable stochastic
    /// productions is drawn with probability proportional to its weight.
    fn choose<'p>(
        &self,
        i: usize,
        productions: &'p [Production],
        env: &mut [f32; MAX_SLOTS],
        stack: &mut Vec<f32>,
    ) -> Result<Option<&'p Production>, LSystemError> {
        let mut total = 0.0f32;
        let mut stochastic = false;
        for p in productions {
            if !self.applicable(p, i, env, stack)? {
                continue;
            }
            match &p.probability {
                None if !stochastic => return Ok(Some(p)),
                None => {}
                Some(weight) => {
                    total += self.weight(weight, env, stack)?;
                    stochastic = true;
                }
            }
        }
        if !stochastic || total <= 0.0 {
            return Ok(None);
        }
        let r = unit_f32(hash_words(&[self.seed, u64::from(self.step), i as u64])) * total;
        let mut cumulative = 0.0f32;
        let mut last = None;
        for p in productions {
            let Some(weight) = &p.probability else { continue };
            if !self.applicable(p, i, env, stack)? {
                continue;
            }
            cumulative += self.weight(weight, env, stack)?;
            last = Some(p);
            if r < cumulative {
                return Ok(Some(p));
            }
        }
        // Rounding can leave r just above the last cumulative sum: take the
        // last candidate, rebinding its parameters.
        if let Some(p) = last {
            self.applicable(p, i, env, stack)?;
        }
        Ok(last)
    }

    fn weight(
        &self,
        (expr, pos): &(super::expr::Expr, Position),
        env: &[f32],
        stack: &mut Vec<f32>,
    ) -> Result<f32, LSystemError> {
        let w = expr.eval(env, stack).map_err(|e| self.eval_error(e))?;
        if w.is_finite() && w >= 0.0 {
            Ok(w)
        } else {
            Err(LSystemError::Probability {
                pos: *pos,
                value: w,
                step: self.step,
            })
        }
    }

    /// Does `p` apply to module `i`? Binds the formal parameters on success.
    #[inline]
    fn applicable(
        &self,
        p: &Production,
        i: usize,
        env: &mut [f32; MAX_SLOTS],
        stack: &mut Vec<f32>,
    ) -> Result<bool, LSystemError> {
        let params = self.word.params(i);
        if !bind(env, &p.pred, params) {
            return Ok(false);
        }
        if !p.left.is_empty() && !self.match_left(&p.left, i, env) {
            return Ok(false);
        }
        if !p.right.is_empty() && !self.match_right(&p.right, i + 1, env) {
            return Ok(false);
        }
        match &p.condition {
            None => Ok(true),
            Some(c) => Ok(c.eval(env, stack).map_err(|e| self.eval_error(e))? != 0.0),
        }
    }

    fn is_ignored(&self, symbol: SymbolId) -> bool {
        self.sys.ignore.get(usize::from(symbol)).copied().unwrap_or(false)
    }

    fn partner(&self, j: usize) -> Option<usize> {
        match self.brackets.get(j) {
            Some(&p) if p != UNMATCHED => Some(p as usize),
            _ => None,
        }
    }

    /// ABOP left context: walk towards the root, skipping ignored symbols
    /// and whole sibling branches, and stepping out of the current branch at `[`.
    fn match_left(&self, pattern: &[PatModule], i: usize, env: &mut [f32; MAX_SLOTS]) -> bool {
        let word = self.word;
        let mut j = i;
        for pat in pattern.iter().rev() {
            loop {
                if j == 0 {
                    return false;
                }
                j -= 1;
                match word.symbol(j) {
                    sym::POP => match self.partner(j) {
                        Some(open) => j = open,
                        None => return false,
                    },
                    sym::PUSH => {}
                    s if self.is_ignored(s) => {}
                    _ => break,
                }
            }
            if word.symbol(j) != pat.symbol || !bind(env, pat, word.params(j)) {
                return false;
            }
        }
        true
    }

    /// ABOP right context, starting at module `j`: skip ignored symbols and
    /// sibling branches the pattern does not enter; a `[` in the pattern
    /// tries each following sibling branch in turn, a `]` skips the rest of
    /// the current branch; the end of the current branch stops the match.
    fn match_right(&self, pattern: &[RightElem], mut j: usize, env: &mut [f32; MAX_SLOTS]) -> bool {
        let word = self.word;
        let n = word.len();
        for (k, elem) in pattern.iter().enumerate() {
            match elem {
                RightElem::Module(pat) => {
                    loop {
                        if j >= n {
                            return false;
                        }
                        match word.symbol(j) {
                            sym::PUSH => match self.partner(j) {
                                Some(close) => j = close + 1,
                                None => return false,
                            },
                            sym::POP => return false,
                            s if self.is_ignored(s) => j += 1,
                            _ => break,
                        }
                    }
                    if word.symbol(j) != pat.symbol || !bind(env, pat, word.params(j)) {
                        return false;
                    }
                    j += 1;
                }
                RightElem::Push => loop {
                    while j < n
                        && word.symbol(j) != sym::PUSH
                        && word.symbol(j) != sym::POP
                        && self.is_ignored(word.symbol(j))
                    {
                        j += 1;
                    }
                    if j >= n || word.symbol(j) != sym::PUSH {
                        return false;
                    }
                    if self.match_right(&pattern[k + 1..], j + 1, env) {
                        return true;
                    }
                    match self.partner(j) {
                        Some(close) => j = close + 1,
                        None => return false,
                    }
                },
                RightElem::Pop => loop {
                    if j >= n {
                        return false;
                    }
                    match word.symbol(j) {
                        sym::PUSH => match self.partner(j) {
                            Some(close) => j = close + 1,
                            None => return false,
                        },
                        sym::POP => {
                            j += 1;
                            break;
                        }
                        _ => j += 1,
                    }
                },
            }
        }
        true
    }
}

/// Copies `params` into the slots of `pat` if the parameter counts agree.
#[inline]
fn bind(env: &mut [f32; MAX_SLOTS], pat: &PatModule, params: &[f32]) -> bool {
    if params.len() != usize::from(pat.arity) {
        return false;
    }
    let first = usize::from(pat.first_slot);
    match env.get_mut(first..first + params.len()) {
        Some(slots) => {
            slots.copy_from_slice(params);
            true
        }
        None => false,
    }
}

/// For each `[` and `]`, the index of its partner, or [`UNMATCHED`].
fn match_brackets(symbols: &[SymbolId]) -> Vec<u32> {
    let mut partner = vec![UNMATCHED; symbols.len()];
    let mut open = Vec::new();
    for (i, &s) in symbols.iter().enumerate() {
        match s {
            sym::PUSH => open.push(i),
            sym::POP => {
                if let Some(o) = open.pop() {
                    partner[o] = i as u32;
                    partner[i] = o as u32;
                }
            }
            _ => {}
        }
    }
    partner
}

/// ABOP's `%`: removes each `%` and the rest of its branch, keeping the `]`
/// that closes the branch (so brackets stay balanced).
fn cut(word: &mut ModuleBuffer) {
    let symbols = word.symbols();
    let mut keep = vec![true; symbols.len()];
    let mut i = 0;
    while i < symbols.len() {
        if symbols[i] != sym::CUT {
            i += 1;
            continue;
        }
        let mut depth = 0usize;
        while i < symbols.len() {
            match symbols[i] {
                sym::PUSH => depth += 1,
                sym::POP if depth == 0 => break,
                sym::POP => depth -= 1,
                _ => {}
            }
            keep[i] = false;
            i += 1;
        }
    }
    word.retain_modules(&keep);
}
