//! A uniform grid over attractors, their coordinates stored cell by cell as flat columns.
//!
//! The growth loop asks "which attractors lie within d_i of this new node" thousands of times per
//! run. The answer lies in a few rows of adjacent cells, each row one contiguous range of the
//! columns: no tree walk, no per-hit bookkeeping, and the scan reads memory in order. Cells only
//! widen past the asked side to bound the cell count for sparse clouds.

use std::ops::Range;

use glam::{DVec3, Vec3};

/// Cells allowed per point (at least [`MIN_CELLS`]), so a sparse cloud cannot ask for a huge grid.
const CELLS_PER_POINT: usize = 4;
/// Cells always allowed, however few the points.
const MIN_CELLS: usize = 4096;

/// Attractors sorted by grid cell (within a cell: in the order given), as columns.
pub(super) struct AttractorGrid {
    origin: Vec3,
    cell: f32,
    dims: [usize; 3],
    /// Per cell (x fastest, then y, then z), the first slot of that cell; one more entry closes
    /// the last cell.
    start: Vec<u32>,
    /// The x, y and z of each slot.
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    pub z: Vec<f32>,
    /// The attractor of each slot.
    pub id: Vec<u32>,
}

/// The cell side (at least `min_cell`, widened by 1.25× steps) and cells per axis of a grid
/// over `extent` with at most `max_cells` cells.
///
/// Computed in `f64`: in `f32`, an extent over 2³² cells (a 10¹² radius with d_i = 500) saturated
/// the cast to `u32` and the `+ 1` wrapped it to a zero-cell axis, whose zero product passed the
/// cell budget and made every cell index run past the table. Every axis here has at least one
/// cell, and the loop ends within a few hundred steps for any finite extent (f32 differences are
/// finite in f64, and a side that halved to zero starts at the smallest normal f64 instead);
/// a NaN side gives one cell per axis rather than a loop that never ends.
fn layout(extent: DVec3, min_cell: f32, max_cells: usize) -> (f32, [usize; 3]) {
    let mut cell = f64::from(min_cell).max(f64::MIN_POSITIVE);
    loop {
        // `max` keeps NaN out: a NaN axis counts as one cell.
        let d = ((extent / cell).floor() + 1.0).max(DVec3::ONE);
        if d.x * d.y * d.z <= max_cells as f64 {
            return (cell as f32, [d.x as usize, d.y as usize, d.z as usize]);
        }
        cell *= 1.25;
    }
}

impl AttractorGrid {
    /// Grids `(attractor, position)` pairs with cells at least `min_cell` wide; `min_cell` must
    /// be positive, and the positions finite with differences within f32 (|coordinate| at most
    /// `f32::MAX / 2`; the colonizer allows far less, [`MAX_COORDINATE`](super::MAX_COORDINATE)).
    /// Past that no index leaves the table, but queries may miss points.
    pub fn build(points: impl ExactSizeIterator<Item = (u32, Vec3)> + Clone, min_cell: f32) -> Self {
        let n = points.len();
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for (_, p) in points.clone() {
            lo = lo.min(p);
            hi = hi.max(p);
        }
        if n == 0 {
            (lo, hi) = (Vec3::ZERO, Vec3::ZERO);
        }
        let (cell, dims) = layout(
            hi.as_dvec3() - lo.as_dvec3(),
            min_cell,
            (n * CELLS_PER_POINT).max(MIN_CELLS),
        );
        let mut grid = Self {
            origin: lo,
            cell,
            dims,
            start: vec![0; dims[0] * dims[1] * dims[2] + 1],
            x: vec![0.0; n],
            y: vec![0.0; n],
            z: vec![0.0; n],
            id: vec![0; n],
        };
        for (_, p) in points.clone() {
            let c = grid.cell_index(p);
            grid.start[c + 1] += 1;
        }
        for c in 1..grid.start.len() {
            grid.start[c] += grid.start[c - 1];
        }
        let mut next = grid.start.clone();
        for (a, p) in points {
            let c = grid.cell_index(p);
            let slot = next[c] as usize;
            next[c] += 1;
            (grid.x[slot], grid.y[slot], grid.z[slot], grid.id[slot]) = (p.x, p.y, p.z, a);
        }
        grid
    }

    /// Number of gridded points.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// The mean number of points in a cube of side `side` inside the grid: a work estimate.
    pub fn points_within_box(&self, side: f32) -> f32 {
        let volume = (self.dims[0] * self.dims[1] * self.dims[2]) as f32 * self.cell.powi(3);
        self.len() as f32 * side.powi(3) / volume
    }

    fn cell_index(&self, p: Vec3) -> usize {
        // Truncating a non-negative float floors it (and negatives clamp to 0 either way), without
        // the libm `floorf` call the baseline target makes for `floor`.
        let c = (p - self.origin) / self.cell;
        let clamp = |v: f32, d: usize| (v.max(0.0) as usize).min(d - 1);
        let [dx, dy, dz] = self.dims;
        (clamp(c.z, dz) * dy + clamp(c.y, dy)) * dx + clamp(c.x, dx)
    }

    /// Calls `f` with the slot ranges covering every point in the box `[lo, hi]` (and some
    /// outside it), in ascending slot order.
    pub fn for_each_range(&self, lo: Vec3, hi: Vec3, mut f: impl FnMut(Range<usize>)) {
        // Cell coordinates, floored by truncation where non-negative (as in `cell_index`); a
        // negative `a` truncates to 0, which is in range as its floor would be.
        let a = (lo - self.origin) / self.cell;
        let b = (hi - self.origin) / self.cell;
        let mut range = [(0, 0); 3];
        for k in 0..3 {
            let top = (self.dims[k] - 1) as f32;
            if b[k] < 0.0 || a[k] as usize >= self.dims[k] {
                return;
            }
            range[k] = (a[k].max(0.0) as usize, b[k].min(top) as usize);
        }
        let [dx, dy, _] = self.dims;
        for z in range[2].0..=range[2].1 {
            for y in range[1].0..=range[1].1 {
                let row = (z * dy + y) * dx;
                let first = self.start[row + range[0].0] as usize;
                let last = self.start[row + range[0].1 + 1] as usize;
                if first < last {
                    f(first..last);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots `for_each_range` visits for the box `[lo, hi]`, as attractor ids.
    fn found(grid: &AttractorGrid, lo: Vec3, hi: Vec3) -> Vec<u32> {
        let mut ids = Vec::new();
        grid.for_each_range(lo, hi, |r| ids.extend_from_slice(&grid.id[r]));
        ids
    }

    #[test]
    fn huge_extents_grid_every_point_where_queries_find_it() {
        // The fuzzer's cases: a sphere of radius 1e12 sampled with d_i = 500 (cells of 250), and
        // a point file reaching 1e13; then the widest extent f32 holds and a side that halves to zero.
        let clouds: [(&[Vec3], f32); 4] = [
            (
                &[
                    Vec3::splat(-1e12),
                    Vec3::ZERO,
                    Vec3::splat(1e12),
                    Vec3::new(3.0, -7e11, 5e11),
                ],
                250.0,
            ),
            (
                &[Vec3::ZERO, Vec3::new(1e13, 0.0, 0.0), Vec3::new(1e13, 1.0, 0.0)],
                250.0,
            ),
            (
                &[Vec3::splat(-f32::MAX / 2.0), Vec3::splat(f32::MAX / 2.0), Vec3::ONE],
                1e-30,
            ),
            (&[Vec3::ZERO, Vec3::splat(1e-40), Vec3::ONE], f32::from_bits(1) * 0.5),
        ];
        for (points, min_cell) in clouds {
            let grid = AttractorGrid::build((0..points.len() as u32).zip(points.iter().copied()), min_cell);
            let cells = grid.dims.iter().product::<usize>();
            assert!(grid.dims.iter().all(|&d| d >= 1), "{:?}", grid.dims);
            assert!(cells <= MIN_CELLS, "{cells} cells for {} points", points.len());
            assert_eq!(grid.start.len(), cells + 1);
            for (id, &p) in points.iter().enumerate() {
                assert!(found(&grid, p, p).contains(&(id as u32)), "{p} (min cell {min_cell})");
            }
            let mut all = found(&grid, Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX));
            all.sort_unstable();
            assert_eq!(all, (0..points.len() as u32).collect::<Vec<_>>());
        }
    }

    #[test]
    fn layout_ends_for_any_side() {
        for min_cell in [0.0, f32::from_bits(1), 1e-30, 1.0, f32::MAX, f32::INFINITY, f32::NAN] {
            let (cell, dims) = layout(DVec3::splat(2.0 * f64::from(f32::MAX)), min_cell, MIN_CELLS);
            assert!(dims.iter().all(|&d| d >= 1) && dims.iter().product::<usize>() <= MIN_CELLS);
            assert!(cell > 0.0 || cell.is_nan(), "{min_cell}: cell {cell}");
        }
    }
}
