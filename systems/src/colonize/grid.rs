//! A uniform grid over attractors, their coordinates stored cell by cell as flat columns.
//!
//! The growth loop asks "which attractors lie within d_i of this new node" thousands of times per
//! run. The answer lies in a few rows of adjacent cells, each row one contiguous range of the
//! columns: no tree walk, no per-hit bookkeeping, and the scan reads memory in order. Cells only
//! widen past the asked side to bound the cell count for sparse clouds.

use std::ops::Range;

use glam::Vec3;

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

impl AttractorGrid {
    /// Grids `(attractor, position)` pairs with cells at least `min_cell` wide; `min_cell` must
    /// be positive and the positions finite.
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
        let extent = hi - lo;
        let max_cells = (n * CELLS_PER_POINT).max(MIN_CELLS);
        let mut cell = min_cell;
        let dims = loop {
            let d = (extent / cell).floor().as_uvec3() + 1;
            let dims = [d.x as usize, d.y as usize, d.z as usize];
            if dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .is_some_and(|c| c <= max_cells)
            {
                break dims;
            }
            cell *= 1.25;
        };
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
