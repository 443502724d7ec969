//! Rock-cycle aging (thesis §3.1.2, Fig. 3.2 as reconstructed in the notes,
//! erratum 16): a layer left unchanged long enough turns into the next harder
//! rock, regolith → sand → sandstone → limestone → slate → marble → granite.
//!
//! Each layer slot carries a counter of unchanged iterations. Erosion resets
//! it whenever it changes the layer; every aging call adds the iterations
//! since the last call (saturating). A layer whose counter reaches its
//! material's threshold changes type, restarts its counter, optionally halves
//! (compaction, erratum 15), and merges with an equal neighbour — the thesis's
//! sandstone turning into limestone after 64 iterations and joining the
//! limestone below is this rule.

use std::ops::Range;

use rayon::prelude::*;

use super::columns::{Layers, TerrainChunk};
use super::grid::{ROWS, highest, prefetch, scratch};
use super::materials::{MATERIAL_COUNT, Material};
use super::params::AgingParams;
use crate::registers::{Kernel, Registers};

/// Ages every layer of `chunk` by `elapsed` iterations; returns the thickness
/// lost to compaction.
///
/// Row by row, the counters of every slot up to the row's highest layer
/// advance in a branch-free loop over 16-bit lanes that also marks the cells
/// where a layer reached its threshold; only those cells take the
/// per-column pass that changes materials and merges. Deposits keep young
/// regolith and sand coming of age all over a fresh landscape, so nearly
/// every row has a few such cells, and a pass over the whole row for them
/// cost several times the counters.
pub(crate) fn step(chunk: &mut TerrainChunk, p: &AgingParams, elapsed: u32, registers: Registers) -> f64 {
    let n = chunk.size() as usize;
    let block = ROWS * n;
    let inc = u16::try_from(elapsed).unwrap_or(u16::MAX);
    // Threshold and successor by material byte; a 256-entry table needs no
    // bounds check. Rock that does not age (granite) never reaches its threshold.
    // The row check takes them as 16-bit lanes, 0 for rock that does not age.
    let mut threshold = [u32::MAX; 256];
    let mut lanes = [0u16; MATERIAL_COUNT];
    let mut next = [0u8; 256];
    for m in Material::ALL {
        if let Some(to) = m.aged() {
            // Regolith is step 0 of the chain, marble step 5.
            let t = p.thresholds[Material::Regolith as usize - m as usize];
            threshold[m as usize] = u32::from(t);
            lanes[m as usize] = t;
            next[m as usize] = to as u8;
        }
    }
    chunk
        .parts(block)
        .layers
        .into_par_iter()
        .map(|mut layers| {
            let mut lost = 0.0f64;
            let (mut count, mut material, mut due) = (vec![0u16; n], vec![0u16; n], vec![0u16; n]);
            let mut ages = Vec::new();
            let rows = layers.count.len() / n;
            for row in 0..rows {
                let start = row * n;
                // The next row's slots arrive while this one ages.
                if row + 1 < rows {
                    let next = start + n..start + 2 * n;
                    for k in 0..usize::from(highest(&layers.count[next.clone()])) {
                        prefetch(&layers.material[k][next.clone()]);
                        prefetch(&layers.age[k][next.clone()]);
                    }
                }
                let any = registers.run(AgeRow {
                    layers: &mut layers,
                    cells: start..start + n,
                    inc,
                    threshold: &lanes,
                    count: &mut count,
                    material: &mut material,
                    due: &mut due,
                    ages: &mut ages,
                });
                if !any {
                    continue;
                }
                // By groups of lanes, so a clear stretch between due cells
                // costs a vector test rather than a test per cell.
                for (c, group) in due.chunks(DUE_GROUP).enumerate() {
                    if group.iter().fold(0, |any, &d| any | d) == 0 {
                        continue;
                    }
                    for (x, &slots) in group.iter().enumerate() {
                        if slots == 0 {
                            continue;
                        }
                        let i = start + c * DUE_GROUP + x;
                        let mut changed = false;
                        // Only the slots the row check marked, bottom up as a
                        // walk over the whole stack would change them.
                        let mut bits = slots;
                        while bits != 0 {
                            let b = bits.trailing_zeros() as usize;
                            bits &= bits - 1;
                            let from = if b == LAST_BIT { b..layers.len(i) } else { b..b + 1 };
                            for k in from {
                                let m = usize::from(layers.material[k][i]);
                                if u32::from(layers.age[k][i]) >= threshold[m] {
                                    layers.material[k][i] = next[m];
                                    layers.age[k][i] = 0;
                                    if p.compaction_halving {
                                        let t = layers.thickness[k][i];
                                        layers.thickness[k][i] = t * 0.5;
                                        lost += f64::from(t - t * 0.5);
                                    }
                                    changed = true;
                                }
                            }
                        }
                        if changed {
                            layers.merge_equal(i);
                            // Merging refreshes the ground; only halving changes
                            // it without a merge.
                            if p.compaction_halving {
                                layers.refresh(i);
                            }
                        }
                    }
                }
            }
            lost
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum()
}

/// Lanes of `due` tested at once for a due cell among them.
const DUE_GROUP: usize = 32;

/// The bit of `due` that stands for every slot from it up: a 16-bit lane
/// has one bit per slot below it, and columns may have up to 32.
const LAST_BIT: usize = 15;

/// Advances the counters of row `cells` of `layers` by `inc` and marks in
/// `due` the cells where a live layer reached its threshold (`threshold` by
/// material, 0 for rock that does not age), bit `k` for slot `k` (bit
/// [`LAST_BIT`] for it and every slot above); returns whether any did.
/// `count` and `material` are row buffers.
struct AgeRow<'a, 'l> {
    layers: &'a mut Layers<'l>,
    cells: Range<usize>,
    inc: u16,
    threshold: &'a [u16; MATERIAL_COUNT],
    count: &'a mut [u16],
    material: &'a mut [u16],
    due: &'a mut [u16],
    /// The scratch row the counters are rewritten through (`grid::scratch`).
    ages: &'a mut Vec<u16>,
}

impl Kernel for AgeRow<'_, '_> {
    type Output = bool;

    #[inline(always)]
    fn run(self) -> bool {
        let Self {
            layers,
            cells,
            inc,
            threshold,
            count,
            material,
            due,
            ages,
        } = self;
        let counts = &layers.count[cells.clone()];
        widen(counts, count);
        due.fill(0);
        // Slots above the row's highest layer hold no live counter.
        let highest = highest(counts);
        for k in 0..usize::from(highest) {
            widen(&layers.material[k][cells.clone()], material);
            let new = scratch(ages, cells.len());
            age_slot(
                k as u16,
                inc,
                count,
                material,
                &layers.age[k][cells.clone()],
                new,
                threshold,
                due,
            );
            layers.age[k][cells.clone()].copy_from_slice(new);
        }
        due.iter().fold(0, |any, &d| any | d) != 0
    }
}

/// Bytes to 16-bit lanes, so the counter loop compares lanes of one width and vectorizes.
#[inline(always)]
fn widen(bytes: &[u8], lanes: &mut [u16]) {
    for (l, &b) in lanes.iter_mut().zip(bytes) {
        *l = u16::from(b);
    }
}

/// Advances the counters `age` of slot `k` by `inc` (saturating) where the
/// slot is live, into `new`; sets bit `k` (at most [`LAST_BIT`]) of `due` in
/// the cells whose live layer reached its material's threshold (`threshold`
/// is 0 for rock that does not age).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn age_slot(
    k: u16,
    inc: u16,
    count: &[u16],
    material: &[u16],
    age: &[u16],
    new: &mut [u16],
    threshold: &[u16; MATERIAL_COUNT],
    due: &mut [u16],
) {
    let n = new.len();
    let (count, material, age, due) = (&count[..n], &material[..n], &age[..n], &mut due[..n]);
    let bit = k.min(LAST_BIT as u16);
    // The threshold by a tree of selects on the material's three bits: three
    // masks per lane where a compare per material took seven. Materials are
    // below 7, so the eighth leaf is never taken.
    let [t0, t1, t2, t3, t4, t5, t6] = *threshold;
    for x in 0..n {
        let live = count[x] > k;
        let a = age[x].saturating_add(inc * u16::from(live));
        new[x] = a;
        let m = material[x];
        let odd = |even: u16, odd: u16| if m & 1 != 0 { odd } else { even };
        let (l0, l1, l2, l3) = (odd(t0, t1), odd(t2, t3), odd(t4, t5), odd(t6, 0));
        let (h0, h1) = if m & 2 != 0 { (l1, l3) } else { (l0, l2) };
        let th = if m & 4 != 0 { h1 } else { h0 };
        due[x] |= u16::from(live & (th != 0) & (a >= th)) << bit;
    }
}
