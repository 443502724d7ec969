//! A chunk's cells as a grid: neighbours under the boundary mode, and rows
//! of a plane with their neighbour rows. The kernels that work row by row
//! (the water step's pipes, sweep and transport, thermal erosion, aging)
//! share these and nothing of each other.

use std::ops::BitAnd;

use super::columns::{BACK, FRONT, LEFT, RIGHT};
use super::materials::MATERIAL_COUNT;
use super::params::Boundary;

/// Rows per parallel task: fixed, so block sums never depend on thread count.
pub(crate) const ROWS: usize = 16;

/// Neighbour lookup under a boundary mode.
#[derive(Clone, Copy)]
pub(crate) struct Grid {
    pub(crate) n: usize,
    pub(crate) boundary: Boundary,
}

/// The direction back from a neighbour, indexed by direction.
pub(crate) const OPPOSITE: [usize; 4] = [RIGHT, LEFT, FRONT, BACK];

impl Grid {
    /// Neighbours of `(x, z)` towards −x, +x, −z, +z.
    #[inline]
    pub(crate) fn around(&self, x: usize, z: usize) -> [Option<usize>; 4] {
        let n = self.n;
        if x > 0 && x + 1 < n && z > 0 && z + 1 < n {
            let i = z * n + x;
            return [Some(i - 1), Some(i + 1), Some(i - n), Some(i + n)];
        }
        [
            self.nb(x, z, LEFT),
            self.nb(x, z, RIGHT),
            self.nb(x, z, BACK),
            self.nb(x, z, FRONT),
        ]
    }

    /// Neighbours of cell `x` of a row towards −x and +x, within the row.
    #[inline]
    pub(crate) fn sides(&self, x: usize) -> [Option<usize>; 2] {
        [self.nb(x, 0, LEFT), self.nb(x, 0, RIGHT)]
    }

    /// Index of the neighbour of `(x, z)` in direction `dir`, or None beyond the edge.
    #[inline]
    pub(crate) fn nb(&self, x: usize, z: usize, dir: usize) -> Option<usize> {
        let n = self.n;
        let wrap = self.boundary == Boundary::Wrap;
        let (nx, nz) = match dir {
            LEFT if x > 0 => (x - 1, z),
            LEFT if wrap => (n - 1, z),
            RIGHT if x + 1 < n => (x + 1, z),
            RIGHT if wrap => (0, z),
            BACK if z > 0 => (x, z - 1),
            BACK if wrap => (x, n - 1),
            FRONT if z + 1 < n => (x, z + 1),
            FRONT if wrap => (x, 0),
            _ => return None,
        };
        Some(nz * n + nx)
    }
}

/// Row index of the neighbour row of `z` towards `dir` (BACK or FRONT), if any.
#[inline]
pub(crate) fn neighbour_row(grid: Grid, z: usize, dir: usize) -> Option<usize> {
    grid.nb(0, z, dir).map(|k| k / grid.n)
}

/// A plane's row and its neighbour rows towards −z and +z, where the
/// boundary mode gives it any.
#[derive(Clone, Copy)]
pub(crate) struct Around<T> {
    pub(crate) back: Option<T>,
    pub(crate) here: T,
    pub(crate) front: Option<T>,
}

/// `m` values of `p` from `start`.
#[inline(always)]
pub(crate) fn row_at(p: &[f32], start: usize, m: usize) -> &[f32] {
    &p[start..][..m]
}

/// `m` cells of `row` from cell 1, and the same shifted to the left and to the right.
pub(crate) fn shifted(row: &[f32], m: usize) -> [&[f32]; 3] {
    [&row[1..][..m], &row[..m], &row[2..][..m]]
}

/// The most layers any column of a row has (`count`: its layer counts):
/// slots at or above it are live in no column, and the row kernels skip them.
#[inline(always)]
pub(crate) fn highest(count: &[u8]) -> u8 {
    count.iter().copied().fold(0, u8::max)
}

/// The fewest layers any column of a row has (`count`: its layer counts):
/// slots below it are live in every column.
#[inline(always)]
pub(crate) fn lowest(count: &[u8]) -> u8 {
    count.iter().copied().fold(u8::MAX, u8::min)
}

/// `table[m]` for material `m`, or `eighth` where `m`'s low three bits are
/// all set (no material), by a tree of `select(c, if_c, else)` on those
/// bits: three selects per lane where comparing `m` with every material
/// took seven. Row kernels pass `m` in the width of their lanes (a wider
/// one would halve the lanes a register holds) and the select that
/// vectorizes for them.
#[inline(always)]
pub(crate) fn by_material<M, T>(m: M, table: &[T; MATERIAL_COUNT], eighth: T, select: impl Fn(bool, T, T) -> T) -> T
where
    M: Copy + BitAnd<Output = M> + PartialEq + From<u8>,
    T: Copy,
{
    const { assert!(MATERIAL_COUNT == 7) };
    let bit = |b: u8| m & M::from(b) != M::from(0);
    let [b0, b1, b2] = [bit(1), bit(2), bit(4)];
    let low = select(b1, select(b0, table[3], table[2]), select(b0, table[1], table[0]));
    let high = select(b1, select(b0, eighth, table[6]), select(b0, table[5], table[4]));
    select(b2, high, low)
}

/// `bytes` as wider lanes, so a row loop works on lanes of one width and
/// vectorizes.
#[inline(always)]
pub(crate) fn widen<T: From<u8>>(bytes: &[u8], lanes: &mut [T]) {
    for (l, &b) in lanes.iter_mut().zip(bytes) {
        *l = T::from(b);
    }
}

/// `lanes` as `len` copies of `value`. Filling a kept row writes whole
/// registers, where `clear` then `resize` wrote a lane at a time inside the
/// row kernels (4 % of a thermal pass from fresh).
#[inline(always)]
pub(crate) fn filled<T: Copy>(lanes: &mut Vec<T>, len: usize, value: T) -> &mut [T] {
    lanes.resize(len, value);
    let lanes = &mut lanes[..len];
    lanes.fill(value);
    lanes
}

/// Lanes of a row [`marked`] tests at once.
const MARK_GROUP: usize = 32;

/// The indices of the non-zero `lanes`, for the rare cells of a row that a
/// kernel hands to a per-cell path: tested a group of lanes at a time, so a
/// clear stretch costs a vector test rather than a test per cell.
#[inline(always)]
pub(crate) fn marked<T>(lanes: &[T]) -> impl Iterator<Item = usize> + '_
where
    T: Copy + Default + PartialEq + std::ops::BitOr<Output = T>,
{
    let clear = T::default();
    lanes
        .chunks(MARK_GROUP)
        .enumerate()
        .filter(move |(_, group)| group.iter().fold(clear, |any, &w| any | w) != clear)
        .flat_map(move |(c, group)| {
            group
                .iter()
                .enumerate()
                .filter(move |&(_, &w)| w != clear)
                .map(move |(x, _)| c * MARK_GROUP + x)
        })
}

/// Scratch rows of each lane width, for [`scratch`].
#[derive(Default)]
pub(crate) struct ScratchRows {
    pub(crate) f32: Vec<f32>,
    pub(crate) u16: Vec<u16>,
    pub(crate) u8: Vec<u8>,
}

/// The scratch `row` as `len` cells: a kernel that changes a few cells of a
/// plane writes the plane's new row here from the old one, and the row is
/// then copied over the plane.
///
/// A loop that stores into a plane a select of what it read from the same
/// cells compiles to masked stores under AVX-512, which leave the lanes that
/// keep their value unwritten. On AMD Zen 4 a masked store whose mask is all
/// clear costs about 200 ns, some 3,000 times a full store, and a row that
/// changes a few cells of a layer plane is mostly such stores: on a loaded
/// machine they took hydraulic erosion 60 % of its time on a fresh
/// landscape, and on a quiet one they cost its first iterations most.
/// Computed into a separate row and copied back, every store is a full one. (The kernel is
/// called directly, not passed in as a closure: a closure's body is not
/// compiled for the wider registers of the `Kernel` that calls it.)
#[inline(always)]
pub(crate) fn scratch<T: Copy + Default>(row: &mut Vec<T>, len: usize) -> &mut [T] {
    row.resize(len, T::default());
    &mut row[..len]
}

/// Asks the caches for `row` ahead of its use. A row kernel over layer
/// stacks reads a row of every live slot of several planes, more streams
/// than the hardware prefetcher follows, and without this waits on memory
/// at the start of every slot's row.
#[inline(always)]
pub(crate) fn prefetch<T>(row: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start = row.as_ptr().cast::<i8>();
        for at in (0..std::mem::size_of_val(row)).step_by(64) {
            // SAFETY: a prefetch neither reads nor writes memory, and the
            // address is within `row`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.add(at)) };
        }
    }
}
