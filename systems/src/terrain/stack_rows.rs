//! Layer-stack changes for a whole row of columns at once.
//!
//! [`Layers::take`] and [`Layers::push`] change one column and branch on its
//! state at every step: which slot is on top, whether it empties, whether the
//! material matches. Where most columns of a row change, as in a thermal
//! pass, those branches cost more than the arithmetic. [`StackRows`] copies a
//! row of stacks into 32-bit row buffers and runs the same rules slot by slot
//! over every column of the row, with each choice a select, so the loops
//! vectorize. The arithmetic is the same as the per-column methods', in the
//! same order, so the results are bit for bit the same.
//!
//! Only the slots that `take` and `push` reach are loaded, from the top down
//! to the lowest slot either changes in any column, and only those a kept
//! column changed are written back. Two
//! cases are left to the caller: a push onto a full column of another
//! material, which would merge the two bottom layers first, and a second push
//! that would need a slot above those loaded. Such columns are marked slow and
//! written back unchanged, for the caller to redo with [`Layers`].

use super::columns::{Layers, MIN_THICKNESS};
use super::grid::{ScratchRows, filled, highest, scratch, widen};

/// One row of layer stacks in 32-bit lanes (slot `k` of cell `x` at
/// `k·n + x`), and which of its cells change.
#[derive(Default)]
pub(crate) struct StackRows {
    n: usize,
    /// The row's first cell in the planes.
    start: usize,
    /// The slots of the row: one above its highest layer, at most the
    /// columns' capacity. A push that would need a slot above them is left slow.
    slots: usize,
    count: Vec<u32>,
    material: Vec<u32>,
    thickness: Vec<f32>,
    /// 1 where the slot's unchanged-time counter restarts.
    fresh: Vec<u32>,
    /// The slots from `loaded` up have their material, thickness and
    /// `fresh` lanes set (see [`StackRows::open`]); those below are as
    /// in the planes.
    loaded: usize,
    /// Bit `k` set where a push filled slot `k` of some column: the only
    /// change to a slot's material, so the material of the others is not
    /// written back.
    filled: u32,
    /// Bit `k` set where `take` or a push changed slot `k` of some column:
    /// the others are as they were loaded and are not written back.
    changed: u32,
    /// 1 for the cells this row changes; the others are written back as they were.
    active: Vec<u32>,
    /// 1 for active cells this row could not change (see the module docs).
    slow: Vec<u32>,
    /// Scratch of `take`, `push` and `store`, one lane per cell.
    lanes: [Vec<u32>; 3],
    /// The ground of each column, summed while storing, and the sum with
    /// the next slot, swapped in.
    ground: [Vec<f32>; 2],
    /// Rows that rows changed in a few lanes are rewritten through ([`scratch`]).
    rows: ScratchRows,
}

impl StackRows {
    /// Starts on the `n` columns of `layers` from cell `start` on; the cells
    /// with a non-zero `active` are the ones the following calls change.
    /// Their slots are loaded as `take` and `push` reach them.
    #[inline(always)]
    pub(crate) fn load(&mut self, layers: &Layers<'_>, start: usize, active: &[u32]) {
        let n = active.len();
        let count = &layers.count[start..][..n];
        // Slots above the row's highest layer hold nothing to change: one is
        // kept for a push and the rest left.
        let highest = highest(count);
        let slots = (usize::from(highest) + 1).min(layers.material.len());
        (self.n, self.start, self.slots) = (n, start, slots);
        self.count.clear();
        self.count.extend(count.iter().map(|&c| u32::from(c)));
        for lanes in [&mut self.material, &mut self.fresh] {
            lanes.resize(slots * n, 0);
        }
        self.thickness.resize(slots * n, 0.0);
        self.loaded = slots;
        self.filled = 0;
        self.changed = 0;
        self.active.clear();
        self.active.extend_from_slice(active);
        filled(&mut self.slow, n, 0);
        for lane in &mut self.lanes {
            lane.resize(n, 0);
        }
    }

    /// [`Layers::take`] of `amount[x]` from every active column: removes
    /// rock from the top down, deleting emptied layers, and stores in
    /// `removed[x]` what `take` returns. Comes first after [`StackRows::load`].
    #[inline(always)]
    pub(crate) fn take(&mut self, layers: &Layers<'_>, amount: &[f32], removed: &mut [f32]) {
        let (n, start) = (self.n, self.start);
        debug_assert_eq!(self.loaded, self.slots, "take comes first after load");
        let [taking, done, _] = &mut self.lanes;
        start_take(&self.active, &amount[..n], &mut removed[..n], taking, done);
        // From the highest top of a column that takes down, and no further
        // once none takes: slots outside those change nothing.
        let [_, highest] = count_range(taking, &self.count);
        for k in (0..(highest as usize).min(self.slots)).rev() {
            // Slot k is the lowest loaded once it is taken from: its
            // thickness and fresh lanes are written from the plane, where
            // loading them first and writing the new thickness aside cost
            // two copies of the row and a fill.
            self.open(k + 1, layers);
            self.load_material(k, layers);
            self.loaded = k;
            let cells = k * n..(k + 1) * n;
            let [taking, done, _] = &mut self.lanes;
            let round = TakeRound {
                top: k as u32 + 1,
                thickness: &layers.thickness[k][start..][..n],
                amount,
            };
            let [changed, taking] = take_slot(
                round,
                &mut self.thickness[cells.clone()],
                &mut self.fresh[cells],
                &mut self.count,
                removed,
                taking,
                done,
            );
            self.changed |= u32::from(changed) << k;
            if !taking {
                break;
            }
        }
        let [_, done, _] = &self.lanes;
        let new = scratch(&mut self.rows.f32, n);
        end_take(done, amount, removed, new);
        removed[..n].copy_from_slice(new);
    }

    /// [`Layers::push`] of `amount[x]` of `material` onto every active
    /// column (nothing where the amount is not positive).
    #[inline(always)]
    pub(crate) fn push(&mut self, layers: &Layers<'_>, material: u8, amount: &[f32]) {
        let (n, slots) = (self.n, self.slots);
        let m = u32::from(material);
        let [pushing, joined, _] = &mut self.lanes;
        start_push(&self.active, &amount[..n], pushing, joined);
        // Bottom up, a column's top (slot count − 1) comes before the slot a
        // new layer fills (slot count), so one pass per slot decides both,
        // from the lowest top of a column that pushes to the slot above the
        // highest: the slots outside them change nothing.
        let [lowest, highest] = count_range(pushing, &self.count);
        let from = lowest.saturating_sub(1) as usize;
        let to = (highest as usize + 1).min(slots);
        self.open(from, layers);
        let [pushing, joined, _] = &mut self.lanes;
        for k in from..to {
            let cells = k * n..(k + 1) * n;
            let round = PushRound {
                k: k as u32,
                m,
                count: &self.count,
                amount,
                pushing,
            };
            let [filled, changed] = push_slot(
                round,
                &mut self.material[cells.clone()],
                &mut self.thickness[cells.clone()],
                &mut self.fresh[cells],
                joined,
            );
            self.filled |= u32::from(filled) << k;
            self.changed |= u32::from(changed) << k;
        }
        end_push(slots as u32, pushing, joined, &mut self.count, &mut self.slow);
    }

    /// Writes the changed columns back to `layers` from cell `start` on, with
    /// their ground refreshed; slow and inactive columns stay as they were.
    ///
    /// A slot that neither `take` nor a push changed in any column is as it
    /// was loaded and is not written: the low slots of a row, which only its
    /// shallowest columns reach, are read for the ground from the planes and
    /// never loaded.
    #[inline(always)]
    pub(crate) fn store(&mut self, layers: &mut Layers<'_>) {
        let (n, start) = (self.n, self.start);
        let [keep, _, _] = &mut self.lanes;
        keep_lanes(&self.active, &self.slow, keep);
        let [sum, next] = &mut self.ground;
        filled(sum, n, 0.0);
        next.resize(n, 0.0);
        let rows = &mut self.rows;
        for k in 0..self.slots {
            let cells = k * n..(k + 1) * n;
            let [sum, next] = &mut self.ground;
            if k < self.loaded {
                add_slot(k as u32, &self.count, &layers.thickness[k][start..][..n], sum, next);
                std::mem::swap(sum, next);
                continue;
            }
            let thickness = &self.thickness[cells.clone()];
            add_slot(k as u32, &self.count, thickness, sum, next);
            std::mem::swap(sum, next);
            if self.changed & (1 << k) == 0 {
                continue;
            }
            let new = scratch(&mut rows.f32, n);
            keep_lanes_of(keep, thickness, &layers.thickness[k][start..][..n], new);
            layers.thickness[k][start..][..n].copy_from_slice(new);
            if self.filled & (1 << k) != 0 {
                let new = scratch(&mut rows.u8, n);
                keep_bytes_of(
                    keep,
                    &self.material[cells.clone()],
                    &layers.material[k][start..][..n],
                    new,
                );
                layers.material[k][start..][..n].copy_from_slice(new);
            }
            let new = scratch(&mut rows.u16, n);
            restart_kept(keep, &self.fresh[cells], &layers.age[k][start..][..n], new);
            layers.age[k][start..][..n].copy_from_slice(new);
        }
        let new = scratch(&mut rows.f32, n);
        keep_lanes_of(keep, &self.ground[0], &layers.ground[start..][..n], new);
        layers.ground[start..][..n].copy_from_slice(new);
        let new = scratch(&mut rows.u8, n);
        keep_bytes_of(keep, &self.count, &layers.count[start..][..n], new);
        layers.count[start..][..n].copy_from_slice(new);
    }

    /// Loads slot `k` of `layers` and those above it not yet loaded, with
    /// their fresh lanes cleared. `take` and `push` change a row's upper
    /// slots only, so the slots below are neither loaded nor cleared: a
    /// row's lanes cleared in one go cost more than the whole `take`.
    #[inline(always)]
    fn open(&mut self, k: usize, layers: &Layers<'_>) {
        let (n, start) = (self.n, self.start);
        for j in k..self.loaded {
            self.load_material(j, layers);
            let cells = j * n..(j + 1) * n;
            self.thickness[cells.clone()].copy_from_slice(&layers.thickness[j][start..][..n]);
            self.fresh[cells].fill(0);
        }
        self.loaded = self.loaded.min(k);
    }

    /// Loads slot `k`'s material lanes.
    #[inline(always)]
    fn load_material(&mut self, k: usize, layers: &Layers<'_>) {
        let (n, start) = (self.n, self.start);
        widen(&layers.material[k][start..][..n], &mut self.material[k * n..][..n]);
    }

    /// 1 for the active columns that still need [`Layers`], one by one.
    #[inline(always)]
    pub(crate) fn slow(&self) -> &[u32] {
        &self.slow
    }
}

/// The lowest and highest layer count of the columns whose `on` lane is
/// set (`[u32::MAX, 0]` for none).
#[inline(always)]
pub(crate) fn count_range(on: &[u32], count: &[u32]) -> [u32; 2] {
    let n = on.len();
    let count = &count[..n];
    let (mut lo, mut hi) = (u32::MAX, 0);
    for x in 0..n {
        let live = on[x] != 0;
        lo = lo.min(pick_u32(live, count[x], u32::MAX));
        hi = hi.max(pick_u32(live, count[x], 0));
    }
    [lo, hi]
}

#[inline(always)]
fn start_take(active: &[u32], amount: &[f32], removed: &mut [f32], taking: &mut [u32], done: &mut [u32]) {
    let n = active.len();
    let (amount, removed, taking, done) = (&amount[..n], &mut removed[..n], &mut taking[..n], &mut done[..n]);
    for x in 0..n {
        removed[x] = 0.0;
        taking[x] = u32::from((active[x] != 0) & (amount[x] > 0.0));
        done[x] = 0;
    }
}

/// What one round of `take`'s loop reads. The lanes it writes are
/// `take_slot`'s parameters of their own: as parameters, the compiler knows
/// they alias nothing, and the loop vectorizes without checks.
struct TakeRound<'a> {
    /// The round's columns are those whose top is slot `top − 1`.
    top: u32,
    /// The slot's thickness in the planes.
    thickness: &'a [f32],
    /// What each column gives up.
    amount: &'a [f32],
}

/// One round of `take`'s loop for the columns whose top is slot
/// `round.top − 1`: the slot's thickness becomes `new`, and `fresh` is set
/// where it thinned. Returns whether any column thinned the slot, and
/// whether any takes on below it.
#[inline(always)]
fn take_slot(
    round: TakeRound<'_>,
    new: &mut [f32],
    fresh: &mut [u32],
    count: &mut [u32],
    removed: &mut [f32],
    taking: &mut [u32],
    done: &mut [u32],
) -> [bool; 2] {
    let TakeRound { top, thickness, amount } = round;
    let n = new.len();
    let (thickness, fresh, count, amount) = (&thickness[..n], &mut fresh[..n], &mut count[..n], &amount[..n]);
    let (removed, taking, done) = (&mut removed[..n], &mut taking[..n], &mut done[..n]);
    let (mut thinned, mut more) = (0, 0);
    for x in 0..n {
        let on = (taking[x] != 0) & (count[x] == top);
        let t = thickness[x];
        let want = amount[x] - removed[x];
        let part = on & (t - want > MIN_THICKNESS);
        let gone = on & !part;
        new[x] = pick(part, t - want, t);
        fresh[x] = u32::from(part);
        done[x] |= u32::from(part);
        let r = pick(gone, removed[x] + t, removed[x]);
        removed[x] = r;
        count[x] -= u32::from(gone);
        taking[x] = u32::from((taking[x] != 0) & !part & (!gone | (r < amount[x])));
        thinned |= u32::from(part);
        more |= taking[x];
    }
    [thinned != 0, more != 0]
}

/// `take` returns the whole amount when it stopped inside a layer: what
/// was `removed` becomes `returned`.
#[inline(always)]
fn end_take(done: &[u32], amount: &[f32], removed: &[f32], returned: &mut [f32]) {
    let n = returned.len();
    let (done, amount, removed) = (&done[..n], &amount[..n], &removed[..n]);
    for x in 0..n {
        returned[x] = pick(done[x] != 0, amount[x], removed[x]);
    }
}

/// Lanes of `push`: whether the column pushes, and whether the amount
/// joined its top.
#[inline(always)]
fn start_push(active: &[u32], amount: &[f32], pushing: &mut [u32], joined: &mut [u32]) {
    let n = active.len();
    let (amount, pushing, joined) = (&amount[..n], &mut pushing[..n], &mut joined[..n]);
    for x in 0..n {
        pushing[x] = u32::from((active[x] != 0) & (amount[x] > 0.0));
        joined[x] = 0;
    }
}

/// What `push`'s change to one slot reads (the lanes it writes are
/// `push_slot`'s own parameters, as for [`TakeRound`]).
struct PushRound<'a> {
    /// The slot.
    k: u32,
    /// The material pushed.
    m: u32,
    /// Layer count per column.
    count: &'a [u32],
    /// What each column receives.
    amount: &'a [f32],
    /// 1 where the column pushes.
    pushing: &'a [u32],
}

/// `push`'s change to slot `round.k`: the amount of material `round.m`
/// joins a top of the same material, or fills the slot above a top of
/// another. Returns whether any column filled it, and whether any changed it.
#[inline(always)]
fn push_slot(
    round: PushRound<'_>,
    material: &mut [u32],
    thickness: &mut [f32],
    fresh: &mut [u32],
    joined: &mut [u32],
) -> [bool; 2] {
    let PushRound {
        k,
        m,
        count,
        amount,
        pushing,
    } = round;
    let n = material.len();
    let (thickness, fresh, count, amount) = (&mut thickness[..n], &mut fresh[..n], &count[..n], &amount[..n]);
    let (pushing, joined) = (&pushing[..n], &mut joined[..n]);
    let (mut filled, mut changed) = (0, 0);
    for x in 0..n {
        let on = pushing[x] != 0;
        let join = on & (count[x] == k + 1) & (material[x] == m);
        let fill = on & (count[x] == k) & (joined[x] == 0);
        joined[x] |= u32::from(join);
        let t = thickness[x];
        thickness[x] = pick(join, t + amount[x], pick(fill, amount[x], t));
        material[x] = pick_u32(fill, m, material[x]);
        fresh[x] |= u32::from(join | fill);
        filled |= u32::from(fill);
        changed |= u32::from(join | fill);
    }
    [filled != 0, changed != 0]
}

/// A column that got a new layer counts it; one with no loaded slot left
/// (full, or needing a slot above those loaded) is left slow.
#[inline(always)]
fn end_push(slots: u32, pushing: &[u32], joined: &[u32], count: &mut [u32], slow: &mut [u32]) {
    let n = pushing.len();
    let (joined, count, slow) = (&joined[..n], &mut count[..n], &mut slow[..n]);
    for x in 0..n {
        let new = (pushing[x] != 0) & (joined[x] == 0);
        let room = count[x] < slots;
        count[x] += u32::from(new & room);
        slow[x] |= u32::from(new & !room);
    }
}

#[inline(always)]
fn keep_lanes(active: &[u32], slow: &[u32], keep: &mut [u32]) {
    let n = active.len();
    let (slow, keep) = (&slow[..n], &mut keep[..n]);
    for x in 0..n {
        keep[x] = u32::from((active[x] != 0) & (slow[x] == 0));
    }
}

/// Adds slot `k`'s thickness to the ground `sum` of the columns where it is
/// live, bottom up as [`Layers::refresh`] sums, into `new`.
#[inline(always)]
pub(crate) fn add_slot(k: u32, count: &[u32], thickness: &[f32], sum: &[f32], new: &mut [f32]) {
    let n = new.len();
    let (count, thickness, sum) = (&count[..n], &thickness[..n], &sum[..n]);
    for x in 0..n {
        new[x] = pick(count[x] > k, sum[x] + thickness[x], sum[x]);
    }
}

/// `value` in the kept lanes, `old` in the others, into `new`.
#[inline(always)]
pub(crate) fn keep_lanes_of(keep: &[u32], value: &[f32], old: &[f32], new: &mut [f32]) {
    let n = new.len();
    let (keep, value, old) = (&keep[..n], &value[..n], &old[..n]);
    for x in 0..n {
        new[x] = pick(keep[x] != 0, value[x], old[x]);
    }
}

/// The low bytes of `value` in the kept lanes, `old` in the others, into
/// `new` (a slot's materials, or the layer counts).
#[inline(always)]
pub(crate) fn keep_bytes_of(keep: &[u32], value: &[u32], old: &[u8], new: &mut [u8]) {
    let n = new.len();
    let (keep, value, old) = (&keep[..n], &value[..n], &old[..n]);
    // Byte lanes by masks: the compiler will not vectorize selects across
    // lane widths.
    for x in 0..n {
        let kept = 0u8.wrapping_sub(u8::from(keep[x] != 0));
        new[x] = (value[x] as u8 & kept) | (old[x] & !kept);
    }
}

/// A slot's counters `old`, restarted in the kept lanes where it changed,
/// into `new`.
#[inline(always)]
pub(crate) fn restart_kept(keep: &[u32], fresh: &[u32], old: &[u16], new: &mut [u16]) {
    let n = new.len();
    let (keep, fresh, old) = (&keep[..n], &fresh[..n], &old[..n]);
    for x in 0..n {
        let reset = 0u16.wrapping_sub(u16::from((keep[x] != 0) & (fresh[x] != 0)));
        new[x] = old[x] & !reset;
    }
}

/// A column's top layer (slot count − 1) and the one beneath (count − 2),
/// material and thickness, and the bottom-up sums of the layers under each,
/// as [`Layers::refresh`] adds them; zero where there is no such layer.
#[derive(Clone, Copy)]
pub(crate) struct TopTwo {
    pub(crate) material: [u32; 2],
    pub(crate) thickness: [f32; 2],
    pub(crate) below: [f32; 2],
}

impl TopTwo {
    /// Cell `x` of a row of columns of `count` layers, from the rows of
    /// their first `K` slots: one pass bottom up, where each live layer
    /// shifts through the top two and the one leaving them joins the sum,
    /// one comparison per slot, so a loop over a row's cells vectorizes.
    ///
    /// # Safety
    ///
    /// `x` is below the length of every row.
    #[inline(always)]
    pub(crate) unsafe fn of<const K: usize>(
        material: &[&[u8]; K],
        thickness: &[&[f32]; K],
        x: usize,
        count: u32,
    ) -> Self {
        let (mut m1, mut t1) = (0u32, 0.0f32);
        let (mut m2, mut t2, mut below2) = (0u32, 0.0f32, 0.0f32);
        for (k, (material, thickness)) in material.iter().zip(thickness).enumerate() {
            // SAFETY: the caller's promise. Indexed with a check, the first
            // row read keeps that check in the caller's loop over the cells
            // (the compiler does not see the rows' lengths in time), and the
            // exit it adds makes the vector loop leave its last 1–16 cells to
            // a scalar loop: a sixth of the sediment exchange's time on
            // 512-cell rows.
            let (m, t) = unsafe { (*material.get_unchecked(x), *thickness.get_unchecked(x)) };
            let live = (k as u32) < count;
            if k >= 2 {
                below2 = pick(live, below2 + t2, below2);
            }
            m2 = pick_u32(live, m1, m2);
            t2 = pick(live, t1, t2);
            m1 = pick_u32(live, u32::from(m), m1);
            t1 = pick(live, t, t1);
        }
        // The sum below the top is the sum below the layer beneath, plus
        // it: the last addition of the same bottom-up sum.
        let below1 = pick(count >= 2, below2 + t2, 0.0);
        Self {
            material: [m1, m2],
            thickness: [t1, t2],
            below: [below1, below2],
        }
    }
}

/// `if c { a } else { b }` by bit masks. Where `b` was read from the place
/// the result goes, the compiler turns a select into a conditional store,
/// which x86's SSE2 cannot vectorize; masks keep the store unconditional
/// there. Under AVX-512 the compiler still sees the select and stores with
/// a mask, which costs AMD Zen 4 dearly when the mask is empty: such loops
/// write a separate row instead ([`scratch`]).
#[inline(always)]
pub(crate) fn pick(c: bool, a: f32, b: f32) -> f32 {
    f32::from_bits(pick_u32(c, a.to_bits(), b.to_bits()))
}

/// [`pick`] for integers.
#[inline(always)]
pub(crate) fn pick_u32(c: bool, a: u32, b: u32) -> u32 {
    let m = 0u32.wrapping_sub(u32::from(c));
    (a & m) | (b & !m)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::terrain::columns::TerrainChunk;
    use crate::terrain::materials::Material;
    use crate::terrain::top_rows::TopRows;

    const REGOLITH: u8 = Material::Regolith as u8;

    /// A column: layers bottom up, what it sends and what it receives.
    type Case = (Vec<(u8, f32)>, f32, f32);

    fn chunk(slots: u8, cases: &[Case]) -> TerrainChunk {
        let mut chunk = TerrainChunk::new([0, 0], cases.len() as u32, slots).unwrap();
        for (x, (layers, _, _)) in cases.iter().enumerate() {
            for &(m, t) in layers {
                let m = Material::from_u8(m).unwrap();
                assert!(chunk.push_layer(x as u32, 0, m, t));
            }
        }
        chunk
    }

    /// Thicknesses around MIN_THICKNESS and amounts around a layer's
    /// thickness, where `take` and `push` change course.
    fn thickness() -> impl Strategy<Value = f32> {
        prop_oneof![
            Just(MIN_THICKNESS),
            Just(2.0 * MIN_THICKNESS),
            Just(0.25),
            Just(0.5),
            1e-7f32..2.0,
        ]
    }

    fn case() -> impl Strategy<Value = Case> {
        let material = prop_oneof![Just(REGOLITH), 0u8..7];
        let layers = prop::collection::vec((material, thickness()), 0..6);
        let amount = prop_oneof![
            Just(0.0f32),
            Just(0.25),
            Just(0.5 - 0.5 * MIN_THICKNESS),
            thickness(),
            0.0f32..3.0
        ];
        (layers, amount.clone(), amount)
    }

    /// How the thermal pass's row path may change a row.
    #[derive(Clone, Copy, Debug)]
    enum Path {
        /// [`StackRows`] alone.
        Stacks,
        /// [`TopRows`], then [`StackRows`] for the columns it leaves.
        TopsThenStacks,
        /// [`TopRows`] alone.
        Tops,
    }

    /// The row path over the `active` columns of `layers`: returns the
    /// active columns it leaves to [`Layers`].
    fn row_path(layers: &mut Layers<'_>, active: &[u32], send: &[f32], recv: &[f32], path: Path) -> Vec<u32> {
        let n = active.len();
        let mut left = active.to_vec();
        if !matches!(path, Path::Stacks)
            && TopRows::default().run(layers, 0, active, [send, recv], REGOLITH, &mut left) == 0
        {
            return vec![0; n];
        }
        if matches!(path, Path::Tops) {
            return left;
        }
        let mut stacks = StackRows::default();
        stacks.load(layers, 0, &left);
        let mut removed = vec![0.0; n];
        stacks.take(layers, send, &mut removed);
        let sliver: Vec<f32> = removed.iter().zip(send).map(|(r, s)| r - s).collect();
        stacks.push(layers, REGOLITH, &sliver);
        stacks.push(layers, REGOLITH, recv);
        stacks.store(layers);
        stacks.slow().to_vec()
    }

    proptest! {
        /// The row path changes every column as `take` and two `push`es of
        /// regolith do, bit for bit, and leaves only full columns to them;
        /// so does [`TopRows`], which leaves also the columns whose take
        /// reaches deeper than two layers or leaves a sliver, on its own or
        /// before [`StackRows`].
        #[test]
        fn rows_match_columns(
            slots in 1u8..9,
            cases in prop::collection::vec(case(), 1..40),
            path in prop_oneof![Just(Path::Stacks), Just(Path::TopsThenStacks), Just(Path::Tops)],
        ) {
            let n = cases.len();
            let mut one_by_one = chunk(slots, &cases);
            let mut rows = one_by_one.clone();
            let send: Vec<f32> = cases.iter().map(|c| c.1).collect();
            let recv: Vec<f32> = cases.iter().map(|c| c.2).collect();
            let column = |layers: &mut Layers<'_>, x: usize| {
                if send[x] > 0.0 {
                    let removed = layers.take(x, send[x]);
                    layers.push(x, REGOLITH, removed - send[x]);
                }
                layers.push(x, REGOLITH, recv[x]);
            };
            let mut layers = one_by_one.layers_mut();
            (0..n).for_each(|x| column(&mut layers, x));

            let active: Vec<u32> = (0..n).map(|x| u32::from(x % 3 != 2)).collect();
            let mut layers = rows.layers_mut();
            let slow = row_path(&mut layers, &active, &send, &recv, path);
            for (x, &on) in active.iter().enumerate() {
                if on == 0 || slow[x] != 0 {
                    column(&mut layers, x);
                }
            }
            prop_assert_eq!(rows, one_by_one);
        }
    }
}
