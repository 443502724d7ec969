//! The 3D turtle: interprets a derived word into a [`BranchGraph`].
//!
//! The turtle frame is the thesis's (eq. 2.7–2.16): heading H, left L and up
//! U with H × L = U, every rotation post-multiplied (applied in the turtle's
//! own frame). The world is Z-up and the turtle starts at the origin with
//! H = +Z (growing up), L = −Y, U = +X. A plant drawn with `+`/`-` only
//! therefore lies in the Y–Z plane, as in the thesis's Unreal project; its
//! out-of-plane direction (U) is mirrored relative to those screenshots,
//! because Unreal's frame is left-handed (docs/design/trees.md, "Turtle frame").

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use glam::{Quat, Vec3, Vec3A};
use serde::{Deserialize, Serialize};

use super::error::LSystemError;
use super::foliage::{Frame, LeafSymbols, LeafTurtle};
use super::module::{ModuleBuffer, sym};
use crate::tree::{AngleCache, BranchGraph, Leaves, NO_PARENT};

/// The turtle's heading at the start (world up).
pub const INITIAL_HEADING: Vec3 = Vec3::Z;
/// The turtle's left at the start.
pub const INITIAL_LEFT: Vec3 = Vec3::NEG_Y;
/// The turtle's up at the start (`INITIAL_HEADING × INITIAL_LEFT`).
pub const INITIAL_UP: Vec3 = Vec3::X;

/// How tropism bends growth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TropismMode {
    /// Thesis eq. 2.18: each segment points along `normalize(H + e·T)`; the
    /// turtle's orientation is left unchanged, so bending does not accumulate.
    #[default]
    Thesis,
    /// ABOP (p. 58): after each `F` the turtle turns by `e·|H × T|` radians
    /// about `H × T`, so bending accumulates along a branch.
    Abop,
}

/// Settings of the turtle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurtleOptions {
    /// Length for `F` and `f` written without a parameter.
    pub step: f32,
    /// Angle δ in degrees for `+ - & ^ \ /` written without a parameter.
    pub angle: f32,
    /// Width at the start (`!(w)` sets it).
    pub width: f32,
    /// A bare `!` multiplies the width by this.
    pub width_factor: f32,
    /// Tropism vector T, in world coordinates, not normalised.
    pub tropism: Vec3,
    /// Susceptibility e ("Biegsamkeitsfaktor").
    pub tropism_strength: f32,
    /// Thesis or ABOP tropism.
    pub tropism_mode: TropismMode,
    /// Length of a vertical root segment drawn before the word, which the
    /// thesis's program always adds (10 units; docs/design/trees.md, "Root stub").
    /// 0 draws none. The stub is segment 0, at depth 0, and the first `F`
    /// grows from its end.
    pub root_stub: f32,
    /// The symbols that draw leaves (see [`LeafSymbols`]); none by default, as their ids
    /// belong to a grammar ([`LSystemParams::turtle_options_for`](super::LSystemParams::turtle_options_for)
    /// finds them).
    pub leaf_symbols: LeafSymbols,
}

impl Default for TurtleOptions {
    fn default() -> Self {
        Self {
            step: 10.0,
            angle: 25.0,
            width: 1.0,
            width_factor: 0.7,
            tropism: Vec3::ZERO,
            tropism_strength: 0.0,
            tropism_mode: TropismMode::Thesis,
            root_stub: 0.0,
            leaf_symbols: LeafSymbols::default(),
        }
    }
}

/// What the turtle draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurtleOutput {
    /// One segment per `F` (plus the root stub, if enabled). A segment's
    /// parent is the segment the turtle stood on (thesis §2.4.1), its depth
    /// the bracket nesting depth at the `F`, as in the thesis's program
    /// (docs/design/trees.md, "Branch depth by brackets"). Without a root
    /// stub, every `F` drawn from the start point is a root ([`NO_PARENT`]).
    pub graph: BranchGraph,
    /// The width in effect (`!`) when each segment was drawn, indexed like the graph.
    pub widths: Vec<f32>,
    /// The leaves of polygons and of the leaf symbol ([`TurtleOptions::leaf_symbols`]), in the
    /// graph's frame. Drawing them changes nothing in the graph.
    pub leaves: Leaves,
}

/// Where the turtle stands, how it is turned, the segment it stands on and its width.
///
/// Position and frame are SIMD vectors, each stored and loaded whole: as `Vec3`s, whose parts
/// were written one by one, later loads of them (a push copies the whole state) stalled.
#[derive(Clone, Copy)]
struct State {
    pos: Vec3A,
    h: Vec3A,
    l: Vec3A,
    u: Vec3A,
    node: u32,
    width: f32,
}

impl State {
    fn frame(&self) -> Frame {
        Frame {
            pos: self.pos.into(),
            heading: self.h.into(),
            up: self.u.into(),
        }
    }

    /// `R' = R·R_U(d)` (eq. 2.11/2.12): turn in the H–L plane.
    fn turn(&mut self, (s, c): (f32, f32)) {
        (self.h, self.l) = (c * self.h + s * self.l, c * self.l - s * self.h);
    }

    /// `R' = R·R_L(d)` (eq. 2.13/2.14): pitch in the H–U plane.
    fn pitch(&mut self, (s, c): (f32, f32)) {
        (self.h, self.u) = (c * self.h - s * self.u, s * self.h + c * self.u);
    }

    /// `R' = R·R_H(d)` (eq. 2.15/2.16): roll in the L–U plane.
    fn roll(&mut self, (s, c): (f32, f32)) {
        (self.l, self.u) = (c * self.l - s * self.u, s * self.l + c * self.u);
    }

    /// ABOP's `$`: roll about H so that L is horizontal.
    fn roll_to_vertical(&mut self) {
        let h = Vec3::from(self.h);
        let l = INITIAL_HEADING.cross(h);
        if l.length_squared() > 1e-12 {
            let l = l.normalize();
            self.l = l.into();
            self.u = h.cross(l).into();
        }
    }
}

/// Interprets `word` with the turtle.
///
/// Fails on words the derivation never produces (a `]` without `[`, a
/// turtle symbol with more than one parameter, a non-finite parameter) and
/// on a word whose steps carry the turtle past the `f32` range.
pub fn interpret(word: &ModuleBuffer, opts: &TurtleOptions) -> Result<TurtleOutput, LSystemError> {
    let mut out = TurtleOutput::default();
    interpret_into(word, opts, &mut out)?;
    Ok(out)
}

/// [`interpret`] into `out`, replacing its contents and reusing its allocations (a forest
/// draws many trees into one output). On failure `out` holds an unspecified partial drawing.
///
/// Large branches (`[ … ]` of thousands of modules) of a leafless word are drawn as tasks on
/// the pool: a branch starts from the state at its `[` and leaves the state after
/// its `]` unchanged, and its segments' indices follow from the `F`s before it, so every
/// segment comes out as the sequential walk draws it, on any number of threads.
pub fn interpret_into(word: &ModuleBuffer, opts: &TurtleOptions, out: &mut TurtleOutput) -> Result<(), LSystemError> {
    draw_word(word, opts, out, true)
}

/// [`interpret_into`], with branch tasks only where `split`.
fn draw_word(
    word: &ModuleBuffer,
    opts: &TurtleOptions,
    out: &mut TurtleOutput,
    split: bool,
) -> Result<(), LSystemError> {
    let graph = &mut out.graph;
    graph.clear();
    out.widths.clear();
    out.leaves.clear();
    let leafy = opts.leaf_symbols.any();
    let layout = Layout::of(word, split && !leafy);
    let stub = opts.root_stub > 0.0;
    let capacity = layout.draws + usize::from(stub);
    graph.reserve(capacity);
    out.widths.reserve(capacity);
    let mut slots = Slots::spare(graph, &mut out.widths, capacity);
    let mut state = State {
        pos: Vec3A::ZERO,
        h: INITIAL_HEADING.into(),
        l: INITIAL_LEFT.into(),
        u: INITIAL_UP.into(),
        node: NO_PARENT,
        width: opts.width,
    };
    if stub {
        let end = INITIAL_HEADING * opts.root_stub;
        state.node = slots.push(Vec3::ZERO, end, NO_PARENT, 0, state.width);
        state.pos = end.into();
    }
    let turtle = Turtle::new(word, opts);
    let whole = Branch {
        modules: 0..word.len(),
        depth: 0,
        groups: &layout.groups,
    };
    let drawn = if layout.groups.is_empty() {
        turtle.draw(whole, state, &mut slots, &mut out.leaves, None)
    } else {
        let failure = Failure::default();
        rayon::scope(|scope| {
            let tasks = Tasks {
                scope,
                failure: &failure,
            };
            if let Err(e) = turtle.draw(whole, state, &mut slots, &mut Leaves::new(), Some(tasks)) {
                failure.record(e);
            }
        });
        failure.into_result()
    };
    drawn?;
    // Only a cut (`%`), which no word with branch tasks has, leaves slots unwritten, and those
    // are the last ones.
    let len = slots.first as usize + slots.written;
    // SAFETY: the slots of all branch tasks, which cover the first `len` of each buffer before
    // `slots` (the rest of the whole word's), were all written, as `draw` asserts before it
    // returns, and so were the first `slots.written` of `slots`.
    unsafe {
        graph.set_len(len);
        out.widths.set_len(len);
    }
    Ok(())
}

/// Modules in a branch `[ … ]` for it to be drawn as a task of its own: enough to outweigh a
/// task's cost, few enough that a large tree's branches spread over the cores.
const GROUP_MODULES: usize = 2048;

/// A branch drawn as a task of its own.
#[derive(Clone, Copy, Debug)]
struct Group {
    /// Index of its `[`.
    open: usize,
    /// Index of its `]`.
    close: usize,
    /// Segments the word draws before it.
    before: u32,
    /// Segments it draws.
    draws: u32,
}

/// What drawing a word needs to know before it starts.
struct Layout {
    /// Modules that draw a segment.
    draws: usize,
    /// The branches drawn as tasks, by position of their `[`: none where the word is small, has
    /// a cut or an unmatched `]`, or where leaves are drawn (polygons span branches).
    groups: Vec<Group>,
}

impl Layout {
    fn of(word: &ModuleBuffer, split: bool) -> Self {
        let mut split = split && word.len() >= 2 * GROUP_MODULES;
        let mut draws = 0usize;
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut groups = Vec::new();
        for i in 0..word.len() {
            match word.command(i) {
                sym::DRAW => draws += 1,
                sym::PUSH if split => open.push((i, draws)),
                sym::POP if split => match open.pop() {
                    Some((o, before)) if i - o > GROUP_MODULES => groups.push((o, i, before, draws)),
                    Some(_) => {}
                    None => split = false,
                },
                sym::CUT => split = false,
                _ => {}
            }
        }
        // Tasks count their segments in `u32`, as segment indices are.
        if !split || u32::try_from(draws).is_err() {
            groups.clear();
        }
        let mut groups: Vec<Group> = groups
            .into_iter()
            .map(|(open, close, before, after)| Group {
                open,
                close,
                before: before as u32,
                draws: (after - before) as u32,
            })
            .collect();
        // Recorded at their `]`, inner branches first.
        groups.sort_unstable_by_key(|g| g.open);
        Self { draws, groups }
    }
}

/// The part of the word one call of [`Turtle::draw`] walks.
struct Branch<'a> {
    /// The modules, without the brackets of a branch task.
    modules: Range<usize>,
    /// Branch depth of its first modules.
    depth: u32,
    /// The branch tasks inside it, by position.
    groups: &'a [Group],
}

/// Where branch tasks are spawned, and the first error of all of them by module index, which
/// is the error the sequential walk meets first.
#[derive(Clone, Copy)]
struct Tasks<'s, 'f> {
    scope: &'s rayon::Scope<'f>,
    failure: &'f Failure,
}

impl<'f> Tasks<'_, 'f> {
    /// Runs `draw` as a task of the scope, which passes its own scope on.
    fn spawn(self, draw: impl FnOnce(Tasks<'_, 'f>) + Send + 'f) {
        let failure = self.failure;
        self.scope.spawn(move |scope| draw(Tasks { scope, failure }));
    }
}

#[derive(Default)]
struct Failure(Mutex<Option<(usize, LSystemError)>>);

impl Failure {
    fn record(&self, error: LSystemError) {
        // Drawing fails with turtle errors only.
        let module = match &error {
            LSystemError::Turtle { module, .. } => *module,
            _ => usize::MAX,
        };
        let mut first = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if first.as_ref().is_none_or(|(m, _)| module < *m) {
            *first = Some((module, error));
        }
    }

    fn into_result(self) -> Result<(), LSystemError> {
        match self.0.into_inner().unwrap_or_else(PoisonError::into_inner) {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }
}

/// Unwritten segment slots (the graph's buffers and the widths), written from the front in
/// drawing order.
struct Slots<'a> {
    start: &'a mut [MaybeUninit<Vec3>],
    end: &'a mut [MaybeUninit<Vec3>],
    start_radius: &'a mut [MaybeUninit<f32>],
    end_radius: &'a mut [MaybeUninit<f32>],
    parent: &'a mut [MaybeUninit<u32>],
    depth: &'a mut [MaybeUninit<u32>],
    widths: &'a mut [MaybeUninit<f32>],
    /// Index of the first slot's segment.
    first: u32,
    /// Slots written.
    written: usize,
}

impl<'a> Slots<'a> {
    /// The first `capacity` spare slots of `graph` and `widths`, which have room for them.
    fn spare(graph: &'a mut BranchGraph, widths: &'a mut Vec<f32>, capacity: usize) -> Slots<'a> {
        Slots {
            start: &mut graph.start.spare_capacity_mut()[..capacity],
            end: &mut graph.end.spare_capacity_mut()[..capacity],
            start_radius: &mut graph.start_radius.spare_capacity_mut()[..capacity],
            end_radius: &mut graph.end_radius.spare_capacity_mut()[..capacity],
            parent: &mut graph.parent.spare_capacity_mut()[..capacity],
            depth: &mut graph.depth.spare_capacity_mut()[..capacity],
            widths: &mut widths.spare_capacity_mut()[..capacity],
            first: 0,
            written: 0,
        }
    }

    /// Writes the next segment, with zero radii, and returns its index.
    fn push(&mut self, start: Vec3, end: Vec3, parent: u32, depth: u32, width: f32) -> u32 {
        let k = self.written;
        self.start[k].write(start);
        self.end[k].write(end);
        self.start_radius[k].write(0.0);
        self.end_radius[k].write(0.0);
        self.parent[k].write(parent);
        self.depth[k].write(depth);
        self.widths[k].write(width);
        self.written += 1;
        self.first + k as u32
    }

    /// Splits off the `n` slots after the written ones; the written ones are dropped from `self`.
    fn take(&mut self, n: usize) -> Slots<'a> {
        fn split<'b, T>(slots: &mut &'b mut [T], from: usize, n: usize) -> &'b mut [T] {
            let (taken, rest) = std::mem::take(slots)[from..].split_at_mut(n);
            *slots = rest;
            taken
        }
        let from = self.written;
        let taken = Slots {
            start: split(&mut self.start, from, n),
            end: split(&mut self.end, from, n),
            start_radius: split(&mut self.start_radius, from, n),
            end_radius: split(&mut self.end_radius, from, n),
            parent: split(&mut self.parent, from, n),
            depth: split(&mut self.depth, from, n),
            widths: split(&mut self.widths, from, n),
            first: self.first + from as u32,
            written: 0,
        };
        self.first += (from + n) as u32;
        self.written = 0;
        taken
    }

    fn is_full(&self) -> bool {
        self.written == self.start.len()
    }
}

/// The settings every part of a drawing shares.
struct Turtle<'a> {
    word: &'a ModuleBuffer,
    opts: &'a TurtleOptions,
    bend: Vec3,
    thesis_bend: bool,
    abop_bend: bool,
    default_angle: (f32, f32),
    leafy: bool,
}

impl<'a> Turtle<'a> {
    /// The settings of drawing `word` with `opts`.
    fn new(word: &'a ModuleBuffer, opts: &'a TurtleOptions) -> Self {
        let bend = opts.tropism * opts.tropism_strength;
        Turtle {
            word,
            opts,
            bend,
            thesis_bend: opts.tropism_mode == TropismMode::Thesis && bend != Vec3::ZERO,
            abop_bend: opts.tropism_mode == TropismMode::Abop && bend != Vec3::ZERO,
            default_angle: opts.angle.to_radians().sin_cos(),
            leafy: opts.leaf_symbols.any(),
        }
    }
}

impl Turtle<'_> {
    /// Walks `branch` from `start`, writing its segments into `slots`; with `tasks`, spawns
    /// its branch tasks, each with the slots of its segments.
    fn draw<'a: 'f, 'f>(
        &'a self,
        branch: Branch<'a>,
        start: State,
        slots: &mut Slots<'a>,
        leaves: &mut Leaves,
        tasks: Option<Tasks<'_, 'f>>,
    ) -> Result<(), LSystemError> {
        let Self { word, opts, bend, .. } = *self;
        // Walked as a copy of its own rather than in the argument, which lives in the caller's
        // memory: with the copy the walk took a fifth less time (Fig. 6.1b, 2 cores).
        let mut state = start;
        let mut angles = AngleCache::default();
        let mut stack: Vec<State> = Vec::new();
        let mut foliage = LeafTurtle::new(opts.leaf_symbols);
        // The next of the branch tasks.
        let mut next = 0;
        let n = branch.modules.end;
        let mut i = branch.modules.start;
        while i < n {
            let symbol = word.command(i);
            if symbol > sym::CUT {
                if self.leafy {
                    self.leaf_symbol(i, &mut state, &mut foliage, leaves)?;
                }
                i += 1;
                continue;
            }
            let arg = argument(word.params(i), i)?;
            let mut angle = || arg.map_or(self.default_angle, |d| angles.sin_cos(d));
            match symbol {
                sym::DRAW | sym::MOVE => {
                    let end = self.step_end(&state, arg.unwrap_or(opts.step), i)?;
                    if symbol == sym::DRAW {
                        let depth = branch.depth + stack.len() as u32;
                        state.node = slots.push(state.pos.into(), end, state.node, depth, state.width);
                        if self.abop_bend {
                            bend_abop(&mut state, bend);
                        }
                    }
                    state.pos = end.into();
                    if symbol == sym::MOVE && self.leafy {
                        foliage.moved(end);
                    }
                }
                sym::LEFT => state.turn(angle()),
                sym::RIGHT => state.turn(negate(angle())),
                sym::DOWN => state.pitch(angle()),
                sym::UP => state.pitch(negate(angle())),
                sym::ROLL_LEFT => state.roll(angle()),
                sym::ROLL_RIGHT => state.roll(negate(angle())),
                sym::TURN_AROUND => state.turn((0.0, -1.0)),
                sym::PUSH => match tasks {
                    Some(tasks) if branch.groups.get(next).is_some_and(|g| g.open == i) => {
                        let depth = branch.depth + stack.len() as u32 + 1;
                        // Its `]` restores the state the branch started from.
                        (next, i) = self.spawn(&branch, next, depth, state, slots, tasks);
                    }
                    _ => stack.push(state),
                },
                sym::POP => match stack.pop() {
                    Some(saved) => state = saved,
                    None => return Err(turtle_error(i, "`]` without a matching `[`")),
                },
                sym::WIDTH => state.width = arg.unwrap_or(state.width * opts.width_factor),
                sym::VERTICAL => state.roll_to_vertical(),
                sym::CUT => i = cut(word, i, n),
                _ => {}
            }
            i += 1;
        }
        assert!(
            tasks.is_none() || slots.is_full(),
            "a branch drew fewer segments than it has F modules"
        );
        Ok(())
    }

    /// A foliage symbol at module `i`: a polygon's vertex or a leaf, or a `G` moving the
    /// turtle inside a polygon.
    #[inline(always)]
    fn leaf_symbol(
        &self,
        i: usize,
        state: &mut State,
        foliage: &mut LeafTurtle,
        leaves: &mut Leaves,
    ) -> Result<(), LSystemError> {
        let (symbol, arg) = (self.word.command(i), self.word.params(i).first().copied());
        if let Some(length) = foliage.symbol(symbol, arg, self.opts.step, state.frame(), leaves) {
            let pos = polygon_move(state, length, i)?;
            state.pos = pos.into();
            foliage.moved(pos);
        }
        Ok(())
    }

    /// Where an `F` or `f` of `length` at module `i` takes the turtle from `state` (with the
    /// thesis's tropism, bent toward it).
    #[inline(always)]
    fn step_end(&self, state: &State, length: f32, i: usize) -> Result<Vec3, LSystemError> {
        let h = Vec3::from(state.h);
        let dir = if self.thesis_bend {
            (h + self.bend).try_normalize().unwrap_or(h)
        } else {
            h
        };
        let end = Vec3::from(state.pos) + length * dir;
        // Finite parameters can still add up past f32's range; an
        // infinite point would poison radii, meshes and exports.
        if !end.is_finite() {
            return Err(turtle_error(i, "position leaves the f32 range (steps too long)"));
        }
        Ok(end)
    }

    /// Spawns `branch`'s task `next`, at branch depth `depth` from `state`, with the slots of
    /// its segments split off `slots`; returns the next task after it and inside it, and the
    /// index of its `]`. Rare (a few per tree) and kept out of the walk's loop, which
    /// inlined it took more instructions per module.
    #[inline(never)]
    fn spawn<'a: 'f, 'f>(
        &'a self,
        branch: &Branch<'a>,
        next: usize,
        depth: u32,
        state: State,
        slots: &mut Slots<'a>,
        tasks: Tasks<'_, 'f>,
    ) -> (usize, usize) {
        let group = branch.groups[next];
        // The task's own branch tasks are the ones inside it, which follow it.
        let after = next + 1 + branch.groups[next + 1..].partition_point(|g| g.open < group.close);
        let mut own = slots.take(group.draws as usize);
        debug_assert_eq!(own.first, group.before + u32::from(self.opts.root_stub > 0.0));
        let inside = Branch {
            modules: group.open + 1..group.close,
            depth,
            groups: &branch.groups[next + 1..after],
        };
        let failure = tasks.failure;
        tasks.spawn(move |tasks| {
            if let Err(e) = self.draw(inside, state, &mut own, &mut Leaves::new(), Some(tasks)) {
                failure.record(e);
            }
        });
        (after, group.close)
    }
}

/// The one parameter a turtle symbol at module `i` may have.
#[inline(always)]
fn argument(params: &[f32], i: usize) -> Result<Option<f32>, LSystemError> {
    match *params {
        [] => Ok(None),
        [v] if v.is_finite() => Ok(Some(v)),
        [_] => Err(turtle_error(i, "parameter is not finite")),
        _ => Err(turtle_error(i, "turtle symbols take at most one parameter")),
    }
}

/// The module before the `]` that closes the branch a cut at module `i` is in (or before
/// `n`): the cut skips to it, and the `]` is then executed.
fn cut(word: &ModuleBuffer, mut i: usize, n: usize) -> usize {
    let mut depth = 0usize;
    while i + 1 < n {
        match word.symbol(i + 1) {
            sym::PUSH => depth += 1,
            sym::POP if depth == 0 => break,
            sym::POP => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Where a `G` of `length` inside a polygon takes the turtle (no segment, no tropism).
fn polygon_move(state: &State, length: f32, module: usize) -> Result<Vec3, LSystemError> {
    let end = Vec3::from(state.pos) + length * Vec3::from(state.h);
    if end.is_finite() {
        Ok(end)
    } else {
        Err(turtle_error(module, "position leaves the f32 range (steps too long)"))
    }
}

fn negate((s, c): (f32, f32)) -> (f32, f32) {
    (-s, c)
}

fn turtle_error(module: usize, message: &str) -> LSystemError {
    LSystemError::Turtle {
        module,
        message: message.to_string(),
    }
}

/// Turns the turtle toward `bend` by `|H × bend|` radians (ABOP p. 58, with `bend = e·T`).
fn bend_abop(state: &mut State, bend: Vec3) {
    let (h, l, u) = (Vec3::from(state.h), Vec3::from(state.l), Vec3::from(state.u));
    let axis = h.cross(bend);
    let alpha = axis.length();
    if alpha > 1e-9 {
        let q = Quat::from_axis_angle(axis / alpha, alpha);
        state.h = (q * h).normalize().into();
        state.l = (q * l).normalize().into();
        state.u = (q * u).normalize().into();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsystem::{DeriveOptions, LSystem};

    #[test]
    fn branch_tasks_draw_what_the_sequential_walk_draws() {
        let system = LSystem::parse(
            "axiom: /(45)A
             A -> F(50)[&(31)F(50)A]/(120)[&(31)F(50)A]/(190)[&(31)F(50)A]
             F(l) -> F(l*1.2)",
        )
        .expect("parses");
        let word = system.derive(8, &DeriveOptions::default()).expect("derives");
        assert!(
            Layout::of(&word, true).groups.len() > 3,
            "the word has nested branch tasks"
        );
        let opts = TurtleOptions {
            tropism: Vec3::new(1.0, 0.0, 1.0),
            tropism_strength: 0.3,
            root_stub: 10.0,
            ..TurtleOptions::default()
        };
        let mut walked = TurtleOutput::default();
        draw_word(&word, &opts, &mut walked, false).expect("draws");
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let mut split = TurtleOutput::default();
            pool.install(|| interpret_into(&word, &opts, &mut split))
                .expect("draws");
            // Debug text tells every bit of a float apart that is not NaN (none is).
            assert_eq!(format!("{split:?}"), format!("{walked:?}"), "{threads} threads");
        }
    }

    #[test]
    fn branch_tasks_fail_where_the_sequential_walk_fails_first() {
        let mut word = ModuleBuffer::new();
        word.push(sym::DRAW, &[1.0]);
        for last in [1.0, f32::NAN, f32::INFINITY] {
            word.push(sym::PUSH, &[]);
            for _ in 0..GROUP_MODULES {
                word.push(sym::LEFT, &[10.0]);
            }
            word.push(sym::DRAW, &[last]);
            word.push(sym::POP, &[]);
        }
        assert_eq!(Layout::of(&word, true).groups.len(), 3);
        let opts = TurtleOptions::default();
        let split = interpret(&word, &opts).expect_err("a NaN parameter");
        let walked = draw_word(&word, &opts, &mut TurtleOutput::default(), false).expect_err("a NaN parameter");
        assert_eq!(split.to_string(), walked.to_string());
        assert!(matches!(split, LSystemError::Turtle { module, .. } if module == 2 * GROUP_MODULES + 5));
    }
}
