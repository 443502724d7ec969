//! The 3D turtle: interprets a derived word into a [`BranchGraph`].
//!
//! The turtle frame is the thesis's (eq. 2.7–2.16): heading H, left L and up
//! U with H × L = U, every rotation post-multiplied (applied in the turtle's
//! own frame). The world is Z-up and the turtle starts at the origin with
//! H = +Z (growing up), L = −Y, U = +X. A plant drawn with `+`/`-` only
//! therefore lies in the Y–Z plane, as in the thesis's Unreal project; its
//! out-of-plane direction (U) is mirrored relative to those screenshots,
//! because Unreal's frame is left-handed (trees.md §1.7).

use glam::{Quat, Vec3};
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
    /// thesis's program always adds (10 units; trees.md §1.8, erratum 14).
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
    /// the bracket nesting depth at the `F` (trees.md §1.8). Without a root
    /// stub, every `F` drawn from the start point is a root ([`NO_PARENT`]).
    pub graph: BranchGraph,
    /// The width in effect (`!`) when each segment was drawn, indexed like the graph.
    pub widths: Vec<f32>,
    /// The leaves of polygons and of the leaf symbol ([`TurtleOptions::leaf_symbols`]), in the
    /// graph's frame. Drawing them changes nothing in the graph.
    pub leaves: Leaves,
}

#[derive(Clone, Copy)]
struct State {
    pos: Vec3,
    h: Vec3,
    l: Vec3,
    u: Vec3,
    node: u32,
    width: f32,
}

impl State {
    fn frame(&self) -> Frame {
        Frame {
            pos: self.pos,
            heading: self.h,
            up: self.u,
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
        let l = INITIAL_HEADING.cross(self.h);
        if l.length_squared() > 1e-12 {
            self.l = l.normalize();
            self.u = self.h.cross(self.l);
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
pub fn interpret_into(word: &ModuleBuffer, opts: &TurtleOptions, out: &mut TurtleOutput) -> Result<(), LSystemError> {
    let graph = &mut out.graph;
    graph.clear();
    out.widths.clear();
    out.leaves.clear();
    let draws = (0..word.len()).filter(|&i| word.command(i) == sym::DRAW).count();
    let capacity = draws + usize::from(opts.root_stub > 0.0);
    graph.start.reserve(capacity);
    graph.end.reserve(capacity);
    graph.start_radius.reserve(capacity);
    graph.end_radius.reserve(capacity);
    graph.parent.reserve(capacity);
    graph.depth.reserve(capacity);
    out.widths.reserve(capacity);

    let mut state = State {
        pos: Vec3::ZERO,
        h: INITIAL_HEADING,
        l: INITIAL_LEFT,
        u: INITIAL_UP,
        node: NO_PARENT,
        width: opts.width,
    };
    if opts.root_stub > 0.0 {
        let end = INITIAL_HEADING * opts.root_stub;
        state.node = graph.push(Vec3::ZERO, end, NO_PARENT, 0);
        out.widths.push(state.width);
        state.pos = end;
    }
    let bend = opts.tropism * opts.tropism_strength;
    let thesis_bend = opts.tropism_mode == TropismMode::Thesis && bend != Vec3::ZERO;
    let abop_bend = opts.tropism_mode == TropismMode::Abop && bend != Vec3::ZERO;
    let default_angle = opts.angle.to_radians().sin_cos();
    let mut angles = AngleCache::default();
    let mut stack: Vec<State> = Vec::new();
    let leafy = opts.leaf_symbols.any();
    let mut foliage = LeafTurtle::new(opts.leaf_symbols);

    let n = word.len();
    let mut i = 0;
    while i < n {
        let symbol = word.command(i);
        if symbol > sym::CUT {
            if leafy {
                let arg = word.params(i).first().copied();
                if let Some(length) = foliage.symbol(symbol, arg, opts.step, state.frame(), &mut out.leaves) {
                    state.pos = polygon_move(&state, length, i)?;
                    foliage.moved(state.pos);
                }
            }
            i += 1;
            continue;
        }
        let params = word.params(i);
        let arg = match *params {
            [] => None,
            [v] if v.is_finite() => Some(v),
            [_] => return Err(turtle_error(i, "parameter is not finite")),
            _ => return Err(turtle_error(i, "turtle symbols take at most one parameter")),
        };
        let mut angle = || arg.map_or(default_angle, |d| angles.sin_cos(d));
        match symbol {
            sym::DRAW | sym::MOVE => {
                let length = arg.unwrap_or(opts.step);
                let dir = if thesis_bend {
                    (state.h + bend).try_normalize().unwrap_or(state.h)
                } else {
                    state.h
                };
                let end = state.pos + length * dir;
                // Finite parameters can still add up past f32's range; an
                // infinite point would poison radii, meshes and exports.
                if !end.is_finite() {
                    return Err(turtle_error(i, "position leaves the f32 range (steps too long)"));
                }
                if symbol == sym::DRAW {
                    state.node = out.graph.push(state.pos, end, state.node, stack.len() as u32);
                    out.widths.push(state.width);
                    if abop_bend {
                        bend_abop(&mut state, bend);
                    }
                }
                state.pos = end;
                if symbol == sym::MOVE && leafy {
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
            sym::PUSH => stack.push(state),
            sym::POP => match stack.pop() {
                Some(saved) => state = saved,
                None => return Err(turtle_error(i, "`]` without a matching `[`")),
            },
            sym::WIDTH => state.width = arg.unwrap_or(state.width * opts.width_factor),
            sym::VERTICAL => state.roll_to_vertical(),
            sym::CUT => {
                // Skip to the `]` that closes this branch; it is then executed.
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
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Where a `G` of `length` inside a polygon takes the turtle (no segment, no tropism).
fn polygon_move(state: &State, length: f32, module: usize) -> Result<Vec3, LSystemError> {
    let end = state.pos + length * state.h;
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
    let axis = state.h.cross(bend);
    let alpha = axis.length();
    if alpha > 1e-9 {
        let q = Quat::from_axis_angle(axis / alpha, alpha);
        state.h = (q * state.h).normalize();
        state.l = (q * state.l).normalize();
        state.u = (q * state.u).normalize();
    }
}
