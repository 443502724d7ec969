//! Rock-cycle aging (thesis §3.1.2; its Fig. 3.2 chain is not in the text, see
//! docs/design/terrain.md, "Rock cycle chain"): a layer left unchanged long
//! enough turns into the next harder rock, regolith → sand → sandstone →
//! limestone → slate → marble → granite.
//!
//! Each layer slot carries a counter of unchanged iterations. Erosion resets it
//! whenever it changes the layer; every aging call adds the iterations since
//! the last call (saturating). A layer whose counter reaches its material's
//! threshold changes type, restarts its counter, optionally halves (compaction;
//! docs/design/terrain.md, "Compaction halving"), and merges with an equal
//! neighbour — the thesis's sandstone turning into limestone after 64
//! iterations and joining the limestone below is this rule.

use std::ops::Range;

use rayon::prelude::*;

use super::columns::{Layers, TerrainChunk};
use super::grid::{ROWS, by_material, highest, marked, prefetch, widen};
use super::materials::{MATERIAL_COUNT, Material};
use super::params::AgingParams;
use crate::registers::{Kernel, Registers};

/// Ages every layer of `chunk` by `elapsed` iterations; returns the thickness
/// lost to compaction. Blocks of [`ROWS`] rows in parallel, each row by row
/// ([`Ager::row`]).
pub(crate) fn step(chunk: &mut TerrainChunk, p: &AgingParams, elapsed: u32, registers: Registers) -> f64 {
    let n = chunk.size() as usize;
    let ager = Ager::new(p, elapsed, registers);
    let lost: Vec<f64> = chunk
        .parts(ROWS * n)
        .layers
        .into_par_iter()
        .map(|mut layers| {
            let mut rows = AgeRows::default();
            let height = layers.count.len() / n;
            (0..height).fold(0.0, |lost, row| {
                lost + ager.row(&mut layers, row * n..(row + 1) * n, &mut rows)
            })
        })
        .collect();
    sum_blocks(lost)
}

/// The thickness lost over a chunk, from the losses of its blocks of
/// [`ROWS`] rows in order, each summed row by row: the sum [`step`] books,
/// whatever runs the rows.
pub(crate) fn sum_blocks(lost: impl IntoIterator<Item = f64>) -> f64 {
    lost.into_iter().sum()
}

/// Ages rows of layer stacks by a number of iterations.
pub(crate) struct Ager {
    /// Thresholds by material as 16-bit lanes, 0 for rock that does not age
    /// (granite).
    threshold: [u16; MATERIAL_COUNT],
    inc: u16,
    compaction: bool,
    registers: Registers,
}

impl Ager {
    /// Ages by `elapsed` iterations with `p`'s thresholds, on `registers`.
    pub(crate) fn new(p: &AgingParams, elapsed: u32, registers: Registers) -> Self {
        // Regolith is step 0 of the chain, marble step 5; each step ages
        // into the material one below it.
        let mut threshold = [0u16; MATERIAL_COUNT];
        for m in Material::ALL {
            if m.aged().is_some() {
                threshold[m as usize] = p.thresholds[Material::Regolith as usize - m as usize];
            }
        }
        Ager {
            threshold,
            inc: u16::try_from(elapsed).unwrap_or(u16::MAX),
            compaction: p.compaction_halving,
            registers,
        }
    }

    /// Ages the row `cells` of `layers`, asking the caches for the next
    /// row's slots while it does; returns the thickness lost.
    ///
    /// A branch-free loop over 16-bit lanes advances the counters
    /// of every slot up to the row's highest layer, turns each layer that
    /// reached its threshold into the next rock and restarts its counter, and
    /// marks the cells whose stack now has two equal neighbours. Only those
    /// cells (and, with compaction, every cell where a layer aged) take the
    /// per-column pass that halves and merges. Deposits keep young regolith and
    /// sand coming of age all over a fresh landscape, a few percent of the cells
    /// at each call and a quarter at some; a per-column pass for every such cell
    /// cost more than the counters, and half of those cells merge nothing.
    pub(crate) fn row(&self, layers: &mut Layers<'_>, cells: Range<usize>, rows: &mut AgeRows) -> f64 {
        let next = cells.end..cells.end + cells.len();
        if next.end <= layers.count.len() {
            for k in 0..usize::from(highest(&layers.count[next.clone()])) {
                prefetch(&layers.material[k][next.clone()]);
                prefetch(&layers.age[k][next.clone()]);
            }
        }
        rows.resize(cells.len());
        let (start, inc, threshold) = (cells.start, self.inc, &self.threshold);
        let any = if self.compaction {
            self.registers
                .run(AgeRow::<true>::new(layers, cells, inc, threshold, rows))
        } else {
            self.registers
                .run(AgeRow::<false>::new(layers, cells, inc, threshold, rows))
        };
        if any {
            settle(layers, start, rows, self.compaction)
        } else {
            0.0
        }
    }
}

/// The per-column pass over the cells of the row at `start` that
/// [`AgeRow`] marked in `rows.work`: with compaction, halves each layer that
/// aged (bottom up, so the lost thickness sums in the same order in any
/// build) and refreshes the ground; merges equal neighbours where the row
/// pass found some. Returns the thickness lost.
fn settle(layers: &mut Layers<'_>, start: usize, rows: &AgeRows, compaction: bool) -> f64 {
    let mut lost = 0.0;
    for x in marked(&rows.work) {
        let i = start + x;
        if compaction {
            let mut bits = rows.due[x];
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let t = layers.thickness[k][i];
                layers.thickness[k][i] = t * 0.5;
                lost += f64::from(t - t * 0.5);
            }
        }
        if rows.pairs[x] != 0 {
            layers.merge_equal(i);
        }
        // Merging refreshes the ground; only halving changes it without a merge.
        if compaction {
            layers.refresh(i);
        }
    }
    lost
}

/// Row buffers for [`AgeRow`], one lane per cell of a row.
#[derive(Default)]
pub(crate) struct AgeRows {
    /// Layer counts, widened.
    count: Vec<u16>,
    /// The slot's materials, widened, then as aged.
    material: Vec<u16>,
    /// The slot below's materials as aged.
    below: Vec<u16>,
    /// 1 where a layer aged.
    changed: Vec<u16>,
    /// With compaction, bit `k` for each slot `k` whose layer aged.
    due: Vec<u32>,
    /// 1 where two live neighbouring layers have one material after aging.
    pairs: Vec<u16>,
    /// 1 where the column needs the per-column pass ([`settle`]).
    work: Vec<u16>,
}

impl AgeRows {
    /// Makes every buffer `n` lanes long.
    fn resize(&mut self, n: usize) {
        for v in [
            &mut self.count,
            &mut self.material,
            &mut self.below,
            &mut self.changed,
            &mut self.pairs,
            &mut self.work,
        ] {
            v.resize(n, 0);
        }
        self.due.resize(n, 0);
    }
}

/// Ages row `cells` of `layers` by `inc` (`threshold` by material, 0 for
/// rock that does not age) and marks the cells that need the per-column
/// pass (with `COMPACTION`, every cell where a layer aged, and which layers
/// did); returns whether any does.
struct AgeRow<'a, 'l, const COMPACTION: bool> {
    layers: &'a mut Layers<'l>,
    cells: Range<usize>,
    inc: u16,
    threshold: &'a [u16; MATERIAL_COUNT],
    rows: &'a mut AgeRows,
}

impl<'a, 'l, const COMPACTION: bool> AgeRow<'a, 'l, COMPACTION> {
    fn new(
        layers: &'a mut Layers<'l>,
        cells: Range<usize>,
        inc: u16,
        threshold: &'a [u16; MATERIAL_COUNT],
        rows: &'a mut AgeRows,
    ) -> Self {
        Self {
            layers,
            cells,
            inc,
            threshold,
            rows,
        }
    }
}

impl<const COMPACTION: bool> Kernel for AgeRow<'_, '_, COMPACTION> {
    type Output = bool;

    #[inline(always)]
    fn run(self) -> bool {
        let Self {
            layers,
            cells,
            inc,
            threshold,
            rows,
        } = self;
        let counts = &layers.count[cells.clone()];
        widen(counts, &mut rows.count);
        rows.changed.fill(0);
        rows.pairs.fill(0);
        if COMPACTION {
            rows.due.fill(0);
        }
        // Slots above the row's highest layer hold no live layer.
        for k in 0..usize::from(highest(counts)) {
            widen(&layers.material[k][cells.clone()], &mut rows.material);
            let aged = age_slot::<COMPACTION>(k, inc, threshold, &mut layers.age[k][cells.clone()], rows);
            if aged {
                narrow(&rows.material, &mut layers.material[k][cells.clone()]);
            }
            std::mem::swap(&mut rows.material, &mut rows.below);
        }
        let (changed, pairs) = (&rows.changed, &rows.pairs);
        for ((w, &c), &p) in rows.work.iter_mut().zip(changed).zip(pairs) {
            *w = c & (p | u16::from(COMPACTION));
        }
        rows.work.iter().fold(0, |any, &w| any | w) != 0
    }
}

/// 16-bit lanes holding bytes back to bytes.
#[inline(always)]
fn narrow(lanes: &[u16], bytes: &mut [u8]) {
    for (b, &l) in bytes.iter_mut().zip(lanes) {
        *b = l as u8;
    }
}

/// Slot `k` of a row: advances its counters `age` by `inc` (saturating)
/// where the slot is live, in place (6 % faster than into a row copied
/// back, timed in pairs in one process); where a live layer reached its
/// material's threshold, ages `rows.material` to the next rock, restarts
/// the counter and marks the cell in `rows.changed` (with `COMPACTION`,
/// sets bit `k` of `rows.due`; a 32-bit lane halves the lanes a register
/// holds, which the common case does not pay for); marks in `rows.pairs` the
/// cells where the layer now equals the live one below (`rows.below`).
/// Returns whether any layer of the slot aged.
#[inline(always)]
fn age_slot<const COMPACTION: bool>(
    k: usize,
    inc: u16,
    threshold: &[u16; MATERIAL_COUNT],
    age: &mut [u16],
    rows: &mut AgeRows,
) -> bool {
    let n = rows.count.len();
    let AgeRows {
        count,
        material,
        below,
        changed,
        due,
        pairs,
        ..
    } = rows;
    let (count, material, below, age, changed, due, pairs) = (
        &count[..n],
        &mut material[..n],
        &below[..n],
        &mut age[..n],
        &mut changed[..n],
        &mut due[..n],
        &mut pairs[..n],
    );
    let slot = k as u16;
    let above_bottom = u16::from(k > 0);
    let mut any = 0u16;
    for x in 0..n {
        let live = count[x] > slot;
        let a = age[x].saturating_add(inc * u16::from(live));
        let m = material[x];
        // Materials are below 7, so the eighth leaf is never taken.
        let th = by_material(m, threshold, 0, |c, a, b| if c { a } else { b });
        let aged = u16::from(live & (th != 0) & (a >= th));
        age[x] = if aged != 0 { 0 } else { a };
        let m = m - aged;
        material[x] = m;
        changed[x] |= aged;
        if COMPACTION {
            due[x] |= u32::from(aged) << k;
        }
        pairs[x] |= above_bottom & u16::from(live) & u16::from(m == below[x]);
        any |= aged;
    }
    any != 0
}
