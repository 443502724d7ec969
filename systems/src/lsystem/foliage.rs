//! Leaves the turtle draws: ABOP polygons `{ … }` and a leaf symbol.
//!
//! Inside `{ … }` the turtle records polygon vertices: at each `.`, and at the end of each
//! `f` or `G` move (`G` moves only inside a polygon, so grammars that use `G` as a plain letter
//! draw as before; a vertex equal to the last one is recorded once, so `G.` is one vertex).
//! At `}` the polygon becomes one leaf: its centroid, its plane's normal (Newell's, or the
//! turtle's up U for a degenerate polygon) and its size (twice the largest distance from the
//! centroid to a vertex). Polygons nest; one left open at the end of the word is dropped.
//!
//! The leaf symbol (e.g. `L`) puts a leaf with its stalk at the turtle: centred half a leaf
//! along the heading H, facing U, as long as its first parameter (`L(12)`) or the step.

use glam::Vec3;

use super::module::{SymbolId, SymbolTable};
use crate::tree::Leaves;

/// The grammar symbols the turtle makes leaves of, as ids of the grammar's [`SymbolTable`];
/// `None` where the grammar does not use the symbol (then nothing happens for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeafSymbols {
    /// `{`: start a polygon.
    pub open: Option<SymbolId>,
    /// `}`: close the polygon into a leaf.
    pub close: Option<SymbolId>,
    /// `.`: record a vertex.
    pub vertex: Option<SymbolId>,
    /// `G`: inside a polygon, move forward and record a vertex.
    pub polygon_move: Option<SymbolId>,
    /// The leaf symbol.
    pub leaf: Option<SymbolId>,
}

impl LeafSymbols {
    /// The polygon symbols of `symbols`, and `leaf` (a symbol name) when given.
    pub fn of(symbols: &SymbolTable, leaf: Option<&str>) -> Self {
        Self {
            open: symbols.id("{"),
            close: symbols.id("}"),
            vertex: symbols.id("."),
            polygon_move: symbols.id("G"),
            leaf: leaf.and_then(|name| symbols.id(name)),
        }
    }

    /// True when any of them is in use.
    pub fn any(&self) -> bool {
        *self != Self::default()
    }
}

/// Where the turtle stands and how it is turned, as leaves need it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub pos: Vec3,
    pub heading: Vec3,
    pub up: Vec3,
}

/// The turtle's polygon state: recorded vertices and where each open polygon's start.
#[derive(Debug, Default)]
pub(crate) struct LeafTurtle {
    symbols: LeafSymbols,
    vertices: Vec<Vec3>,
    open: Vec<usize>,
}

impl LeafTurtle {
    pub(crate) fn new(symbols: LeafSymbols) -> Self {
        Self {
            symbols,
            ..Self::default()
        }
    }

    /// Acts on a non-turtle `symbol` with first parameter `arg`; returns the length of a move
    /// the turtle must make (a `G` inside a polygon), after which it calls [`Self::moved`].
    pub(crate) fn symbol(
        &mut self,
        symbol: SymbolId,
        arg: Option<f32>,
        step: f32,
        at: Frame,
        out: &mut Leaves,
    ) -> Option<f32> {
        let is = |s: Option<SymbolId>| s == Some(symbol);
        if is(self.symbols.leaf) {
            let size = arg.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(step);
            out.push(at.pos + at.heading * (0.5 * size), at.up, size);
        } else if is(self.symbols.open) {
            self.open.push(self.vertices.len());
        } else if is(self.symbols.close) {
            self.close(at.up, out);
        } else if is(self.symbols.vertex) {
            self.record(at.pos);
        } else if is(self.symbols.polygon_move) && !self.open.is_empty() {
            return Some(arg.filter(|l| l.is_finite()).unwrap_or(step));
        }
        None
    }

    /// The turtle moved to `pos` with `f` or `G`: a vertex, inside a polygon.
    pub(crate) fn moved(&mut self, pos: Vec3) {
        self.record(pos);
    }

    fn record(&mut self, pos: Vec3) {
        let Some(&start) = self.open.last() else {
            return;
        };
        if self.vertices.len() == start || self.vertices.last() != Some(&pos) {
            self.vertices.push(pos);
        }
    }

    fn close(&mut self, up: Vec3, out: &mut Leaves) {
        let Some(start) = self.open.pop() else {
            return;
        };
        if let Some((centre, normal, size)) = polygon_leaf(&self.vertices[start..], up) {
            out.push(centre, normal, size);
        }
        self.vertices.truncate(start);
    }
}

/// Centroid, unit normal and size of a polygon; `None` for one without extent.
fn polygon_leaf(vertices: &[Vec3], up: Vec3) -> Option<(Vec3, Vec3, f32)> {
    if vertices.is_empty() {
        return None;
    }
    let centre = vertices.iter().copied().sum::<Vec3>() / vertices.len() as f32;
    let size = 2.0 * vertices.iter().map(|v| v.distance(centre)).fold(0.0, f32::max);
    if !(size > 0.0 && size.is_finite()) {
        return None;
    }
    // Newell's method: the polygon's area vector, robust for non-planar and concave outlines.
    let newell = vertices
        .iter()
        .zip(vertices.iter().cycle().skip(1))
        .map(|(a, b)| (*a - centre).cross(*b - centre))
        .sum::<Vec3>();
    Some((centre, newell.try_normalize().unwrap_or(up), size))
}
