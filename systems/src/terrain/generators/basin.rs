//! A drainage basin as a height source: stream-power erosion
//! ([`crate::terrain::basin`]) solved on a coarse lattice over a square of
//! world cells, upsampled to cells with Catmull-Rom (slopes continuous).
//!
//! The square is the whole domain, from world cell (0, 0): its chosen edges
//! are the outlets, the others walls, so the rivers it carves join into one
//! dendritic network. Every chunk of the square solves the same lattice, so
//! chunks meet exactly; outside the square the source adds nothing.

use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{hash_words, unit_f32};
use sylva_runtime::{FieldError, Validate};

use crate::terrain::basin::{BasinGrid, BasinParams, solve};

/// Most lattice nodes along the square's side.
pub const MAX_BASIN_NODES: u32 = 1024;

/// A basin source: see the module docs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Basin {
    /// Side of the square, cells. Default: 512.
    pub cells: u32,
    /// Cells between lattice nodes; divides `cells`. Default: 4.
    pub node_cells: u32,
    /// Length of a cell, metres (the solver's units). Default: 1.
    pub cell_length: f32,
    /// Which edges are outlets at height 0, in the order −x, +x, −z, +z.
    /// Default: all four.
    pub outlets: [bool; 4],
    /// The stream-power model.
    pub solver: BasinParams,
}

impl Default for Basin {
    fn default() -> Self {
        Self {
            cells: 512,
            node_cells: 4,
            cell_length: 1.0,
            outlets: [true; 4],
            solver: BasinParams::default(),
        }
    }
}

impl Validate for Basin {
    fn validate(&self) -> Result<(), FieldError> {
        let nodes = self.cells.checked_div(self.node_cells);
        FieldError::check(
            self.node_cells >= 1
                && self.cells.is_multiple_of(self.node_cells)
                && nodes.is_some_and(|n| (4..=MAX_BASIN_NODES).contains(&n)),
            "cells",
            || {
                format!(
                    "must be a multiple of node_cells giving 4..={MAX_BASIN_NODES} nodes, got {} cells of {} per node",
                    self.cells, self.node_cells
                )
            },
        )?;
        FieldError::check(
            self.cell_length.is_finite() && self.cell_length > 0.0 && self.cell_length <= 1e3,
            "cell_length",
            || format!("must be in (0, 1000], got {}", self.cell_length),
        )?;
        FieldError::check(self.outlets.contains(&true), "outlets", || {
            "needs at least one outlet edge".into()
        })?;
        self.solver.validate().map_err(|e| e.within("solver"))
    }
}

/// Catmull-Rom weights of the four samples around fraction `t` (they sum to
/// one and interpolate the middle two).
pub(crate) fn catmull_rom(t: f32) -> [f32; 4] {
    let (t2, t3) = (t * t, t * t * t);
    [
        0.5 * (-t3 + 2.0 * t2 - t),
        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
        0.5 * (t3 - t2),
    ]
}

impl Basin {
    /// The solved lattice heights, `(nodes + 1)²` row-major.
    fn lattice(&self, seed: u64) -> Vec<f32> {
        let n = (self.cells / self.node_cells) as usize + 1;
        let edge = |x: usize, z: usize| {
            (self.outlets[0] && x == 0)
                || (self.outlets[1] && x == n - 1)
                || (self.outlets[2] && z == 0)
                || (self.outlets[3] && z == n - 1)
        };
        let fixed: Vec<bool> = (0..n * n).map(|i| edge(i % n, i / n)).collect();
        let initial: Vec<f32> = (0..n * n)
            .map(|i| {
                if fixed[i] {
                    0.0
                } else {
                    0.5 + unit_f32(hash_words(&[seed, i as u64]))
                }
            })
            .collect();
        let uplift = vec![1.0; n * n];
        let grid = BasinGrid {
            width: n,
            height: n,
            spacing: self.node_cells as f32 * self.cell_length,
            initial: &initial,
            uplift: &uplift,
            fixed: &fixed,
        };
        // Validated parameters on a lattice with an outlet always solve.
        solve(&grid, &self.solver).map_or(initial.clone(), |b| b.heights)
    }

    /// Adds the basin's heights of the `size`² cells at world `origin` to `out`.
    pub(crate) fn add_to(&self, seed: u64, origin: [i64; 2], size: usize, out: &mut [f32]) {
        let lattice = self.lattice(seed);
        let n = (self.cells / self.node_cells) as i64 + 1;
        let at = |i: i64, j: i64| lattice[(j.clamp(0, n - 1) * n + i.clamp(0, n - 1)) as usize];
        let step = i64::from(self.node_cells);
        // The lattice node at or before world cell `c` and the weights of the four around it;
        // `None` outside the square.
        let axis = |c: i64| {
            (0..=i64::from(self.cells))
                .contains(&c)
                .then(|| (c.div_euclid(step), catmull_rom(c.rem_euclid(step) as f32 / step as f32)))
        };
        for z in 0..size {
            let Some((j, kz)) = axis(origin[1] + z as i64) else {
                continue;
            };
            for x in 0..size {
                let Some((i, kx)) = axis(origin[0] + x as i64) else {
                    continue;
                };
                let mut h = 0.0;
                for (b, wb) in kz.iter().enumerate() {
                    let row: f32 = (0..4).map(|a| kx[a] * at(i - 1 + a as i64, j - 1 + b as i64)).sum();
                    h += wb * row;
                }
                out[z * size + x] += h;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two chunks of the square meet exactly, and the lattice's outlets lie at height 0.
    #[test]
    fn chunks_agree_and_outlets_are_low() {
        let b = Basin {
            cells: 64,
            ..Basin::default()
        };
        let mut whole = vec![0.0; 64 * 64];
        b.add_to(3, [0, 0], 64, &mut whole);
        let mut part = vec![0.0; 32 * 32];
        b.add_to(3, [32, 16], 32, &mut part);
        for z in 0..32 {
            assert_eq!(part[z * 32..][..32], whole[(z + 16) * 64 + 32..][..32]);
        }
        assert_eq!(whole[0], 0.0);
        assert!(whole[32 * 64 + 32] > 1.0, "the middle rises");
    }

    #[test]
    fn catmull_rom_interpolates() {
        for t in [0.0f32, 0.25, 0.5, 0.9] {
            assert!((catmull_rom(t).iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
        assert_eq!(catmull_rom(0.0), [0.0, 1.0, 0.0, 0.0]);
    }
}
