//! Thermal moves that change a column at its top two layers, for a row of
//! columns at once: the top thins by what the column sends, or empties and
//! the layer beneath thins by the rest; what the column receives then joins
//! the remaining top where that is of its material, or lies on it as a new
//! layer.
//!
//! On a landscape eroding from fresh, nearly every column that a thermal
//! pass moves is such a column: aging turns the regolith the last pass left
//! back into sandstone, which merges with the sandstone under it, so most
//! receiving columns lay a new layer on a top that sends less than it has,
//! and most of the others send more than a thin regolith top holds.
//! [`StackRows`] runs the general rules, a pass over a row for each step of
//! `take` and `push` and each slot they reach, then another over every slot
//! to store. This reads each column's top two layers and the ground under
//! them in one pass over the row and its slots ([`TopTwo`]), decides the
//! move from them (as [`ExchangeRow`] decides the sediment exchange), and
//! then writes back only the slots that a column's new top or new layer is
//! in. The columns it leaves (a sliver left under [`MIN_THICKNESS`], a take
//! deeper than two layers, a full column that would merge, an empty one) go
//! to [`StackRows`]. The arithmetic is that of `take` and `push`, in the
//! same order, so the bits are the same.
//!
//! [`StackRows`]: super::stack_rows::StackRows
//! [`ExchangeRow`]: super::exchange::ExchangeRow

use std::ops::Range;

use super::columns::{Layers, MIN_THICKNESS};
use super::grid::{ScratchRows, scratch};
use super::stack_rows::{TopTwo, count_range, pick, pick_u32, restart_kept};

/// Most slots the lanes read; rows with deeper stacks are left whole to the
/// general rules.
const LANE_SLOTS: usize = 8;

/// Row buffers of [`TopRows::run`], one lane per cell of a row.
#[derive(Default)]
pub(crate) struct TopRows {
    /// Layer counts, widened.
    count: Vec<u32>,
    /// The slot of each column's top after the move where it thinned or
    /// grew (its counter restarts), `u32::MAX` where none did.
    renewed: Vec<u32>,
    /// Its new thickness.
    value: Vec<f32>,
    /// The slot of each column's new layer, `u32::MAX` where none is laid.
    laid: Vec<u32>,
    /// Per slot: 1 where it takes its column's new top, 2 where the new layer.
    fresh: Vec<u32>,
    rows: ScratchRows,
}

impl TopRows {
    /// Takes `send[x]` from and pushes `recv[x]` of `material` onto each
    /// `active` column of the row from cell `start` on whose change reaches
    /// only its top two layers, as [`Layers::take`] then [`Layers::push`]
    /// would; marks in `left` the active columns it leaves, and returns how
    /// many.
    #[inline(always)]
    pub(crate) fn run(
        &mut self,
        layers: &mut Layers<'_>,
        start: usize,
        active: &[u32],
        [send, recv]: [&[f32]; 2],
        material: u8,
        left: &mut [u32],
    ) -> usize {
        let n = active.len();
        if active.iter().fold(0, |a, &b| a | b) == 0 {
            left[..n].fill(0);
            return 0;
        }
        self.count.clear();
        self.count
            .extend(layers.count[start..][..n].iter().map(|&c| u32::from(c)));
        let [_, highest] = count_range(active, &self.count);
        for lanes in [&mut self.renewed, &mut self.laid] {
            lanes.resize(n, 0);
        }
        self.value.resize(n, 0.0);
        let lanes = Lanes {
            capacity: layers.material.len() as u32,
            material: u32::from(material),
            active,
            send,
            recv,
        };
        let out = Decided {
            count: &self.count,
            renewed: &mut self.renewed,
            value: &mut self.value,
            laid: &mut self.laid,
            left,
        };
        let (left, written) = match highest as usize {
            1 => lanes.run::<1>(layers, start, out),
            2 => lanes.run::<2>(layers, start, out),
            3 => lanes.run::<3>(layers, start, out),
            4 => lanes.run::<4>(layers, start, out),
            5 => lanes.run::<5>(layers, start, out),
            6 => lanes.run::<6>(layers, start, out),
            7 => lanes.run::<7>(layers, start, out),
            LANE_SLOTS => lanes.run::<LANE_SLOTS>(layers, start, out),
            _ => {
                out.left[..n].copy_from_slice(active);
                return active.iter().filter(|&&a| a != 0).count();
            }
        };
        for k in written {
            self.write_slot(layers, start, k, recv, material);
        }
        left
    }

    /// Writes slot `k` of the row from cell `start` on where a column's new
    /// top or new layer is in it: thickness, a restarted counter and, for a
    /// new layer, `material`.
    #[inline(always)]
    fn write_slot(&mut self, layers: &mut Layers<'_>, start: usize, k: u32, recv: &[f32], material: u8) {
        let n = self.renewed.len();
        let slot = k as usize;
        let thickness = scratch(&mut self.rows.f32, n);
        self.fresh.resize(n, 0);
        let changed = changed_slot(
            k,
            [&self.renewed, &self.laid],
            [&self.value, recv],
            &layers.thickness[slot][start..][..n],
            thickness,
            &mut self.fresh,
        );
        if changed == 0 {
            return;
        }
        layers.thickness[slot][start..][..n].copy_from_slice(thickness);
        let age = scratch(&mut self.rows.u16, n);
        restart_kept(&self.fresh, &self.fresh, &layers.age[slot][start..][..n], age);
        layers.age[slot][start..][..n].copy_from_slice(age);
        if changed & LAID != 0 {
            let bytes = scratch(&mut self.rows.u8, n);
            laid_bytes(&self.fresh, material, &layers.material[slot][start..][..n], bytes);
            layers.material[slot][start..][..n].copy_from_slice(bytes);
        }
    }
}

/// What the lanes of a row read besides the layers.
struct Lanes<'a> {
    /// Layer slots per column.
    capacity: u32,
    /// What the columns receive.
    material: u32,
    active: &'a [u32],
    send: &'a [f32],
    recv: &'a [f32],
}

/// What the lanes decide, per column: see [`TopRows`]'s fields. `left`
/// marks the active columns they leave.
struct Decided<'a> {
    count: &'a [u32],
    renewed: &'a mut [u32],
    value: &'a mut [f32],
    laid: &'a mut [u32],
    left: &'a mut [u32],
}

impl Lanes<'_> {
    /// The lanes over columns of at most `K` layers: decides every column,
    /// writes the new ground and count of those it moves; returns how many
    /// active columns it leaves, and the slots it decided to write.
    #[inline(always)]
    fn run<const K: usize>(&self, layers: &mut Layers<'_>, start: usize, out: Decided<'_>) -> (usize, Range<u32>) {
        let cells = start..start + self.active.len();
        let material: [&[u8]; K] = std::array::from_fn(|k| &layers.material[k][cells.clone()]);
        let thickness: [&[f32]; K] = std::array::from_fn(|k| &layers.thickness[k][cells.clone()]);
        decide(
            self,
            material,
            thickness,
            &mut layers.ground[cells.clone()],
            &mut layers.count[cells],
            out,
        )
    }
}

/// The move of every column of a row, in one pass over its `K` slots: the
/// top layer (slot count − 1), the one beneath (count − 2) and the
/// bottom-up sum below them are read ([`TopTwo`]); the
/// new ground and count are written in place, and the slot of the new top,
/// its thickness and whether a layer is laid on it noted. Columns left keep
/// everything as it was. Returns how many active columns are left, and the
/// slots that a new top or new layer is in: a column's new top is its old
/// top or the layer beneath, and a new layer lies right above it, so in a
/// row of even counts most of the slots the lanes read keep their rows.
#[inline(always)]
fn decide<const K: usize>(
    lanes: &Lanes<'_>,
    material: [&[u8]; K],
    thickness: [&[f32]; K],
    ground: &mut [f32],
    count_bytes: &mut [u8],
    out: Decided<'_>,
) -> (usize, Range<u32>) {
    let n = lanes.active.len();
    let (active, send, recv) = (&lanes.active[..n], &lanes.send[..n], &lanes.recv[..n]);
    let (ground, count_bytes) = (&mut ground[..n], &mut count_bytes[..n]);
    let material = material.map(|m| &m[..n]);
    let thickness = thickness.map(|t| &t[..n]);
    let Decided {
        count,
        renewed,
        value,
        laid,
        left,
    } = out;
    let (count, renewed, value, laid, left) = (
        &count[..n],
        &mut renewed[..n],
        &mut value[..n],
        &mut laid[..n],
        &mut left[..n],
    );
    let (m, capacity) = (lanes.material, lanes.capacity);
    let (mut lefts, mut first, mut end) = (0, u32::MAX, 0);
    for x in 0..n {
        let (c, s, r) = (count[x], send[x], recv[x]);
        // SAFETY: every plane was cut to `n` cells above, and x < n.
        let TopTwo {
            material: [m1, m2],
            thickness: [t1, t2],
            below: [below1, below2],
        } = unsafe { TopTwo::of(&material, &thickness, x, c) };
        let (thins, receives) = (s > 0.0, r > 0.0);

        // `take` stops inside the top (its first round wants all of `s`),
        // and `push` joins the top or has a slot to fill.
        let stays = !thins | (t1 - s > MIN_THICKNESS);
        let on_top = (c >= 1) & stays & (!receives | (m1 == m) | (c < capacity));
        let top = pick(thins, t1 - s, t1);
        // Or `take` empties the top, which held less than `s`, and stops
        // inside the layer beneath; `push` then has the top's old slot.
        let taken1 = 0.0 + t1;
        let beneath = (c >= 2) & !stays & (taken1 < s) & (t2 - (s - taken1) > MIN_THICKNESS);
        let next = t2 - (s - taken1);

        let moved = (active[x] != 0) & (on_top | beneath);
        let joins = receives & (pick_u32(on_top, m1, m2) == m);
        let lays = moved & receives & !joins;
        let kept = pick(on_top, top, next);
        let new = pick(joins, kept + r, kept);
        let under = pick(on_top, below1, below2);
        let slot = pick_u32(on_top, c.wrapping_sub(1), c.wrapping_sub(2));
        let renews = moved & (beneath | thins | joins);
        renewed[x] = pick_u32(renews, slot, u32::MAX);
        value[x] = new;
        laid[x] = pick_u32(lays, slot.wrapping_add(1), u32::MAX);
        first = first.min(renewed[x].min(laid[x]));
        end = end.max(pick_u32(
            lays,
            slot.wrapping_add(2),
            pick_u32(renews, slot.wrapping_add(1), 0),
        ));
        ground[x] = pick(moved, pick(lays, (under + new) + r, under + new), ground[x]);
        count_bytes[x] = pick_u32(moved, slot.wrapping_add(1 + u32::from(lays)), c) as u8;
        left[x] = u32::from((active[x] != 0) & !moved);
        lefts += left[x];
    }
    (lefts as usize, first..end)
}

/// Marks a slot where it is a column's new layer (in [`TopRows::fresh`]).
const LAID: u32 = 2;

/// Slot `k` of a row: the new top's thickness `value` where it is the slot
/// `renewed`, the received `recv` where it is the slot `laid`, the `old`
/// thickness elsewhere, into `new`; `fresh` gets 1 and [`LAID`] for the
/// two. Returns the or of `fresh`.
#[inline(always)]
fn changed_slot(
    k: u32,
    [renewed, laid]: [&[u32]; 2],
    [value, recv]: [&[f32]; 2],
    old: &[f32],
    new: &mut [f32],
    fresh: &mut [u32],
) -> u32 {
    let n = new.len();
    let (renewed, laid, value, recv, old) = (&renewed[..n], &laid[..n], &value[..n], &recv[..n], &old[..n]);
    let fresh = &mut fresh[..n];
    let mut changed = 0;
    for x in 0..n {
        let (top, lays) = (renewed[x] == k, laid[x] == k);
        new[x] = pick(top, value[x], pick(lays, recv[x], old[x]));
        fresh[x] = u32::from(top) | (LAID * u32::from(lays));
        changed |= fresh[x];
    }
    changed
}

/// A slot's materials `old`, `material` where [`changed_slot`] laid a
/// layer, into `new`.
#[inline(always)]
fn laid_bytes(fresh: &[u32], material: u8, old: &[u8], new: &mut [u8]) {
    let n = new.len();
    let (fresh, old) = (&fresh[..n], &old[..n]);
    for x in 0..n {
        let laid = 0u8.wrapping_sub(u8::from(fresh[x] & LAID != 0));
        new[x] = (material & laid) | (old[x] & !laid);
    }
}
