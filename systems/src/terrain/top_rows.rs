//! Thermal moves that reach only a column's top, for a row of columns at
//! once: the top thins by what the column sends, and what it receives joins
//! a top of its material or lies on another as a new layer.
//!
//! On a landscape eroding from fresh, nine in ten columns that a thermal
//! pass moves are such columns: aging turns the regolith the last pass left
//! back into sandstone, which merges with the sandstone under it, so most
//! receiving columns lay a new layer on a top that sends less than it has.
//! [`StackRows`] runs the general rules, a pass over a row for each step of
//! `take` and `push` and each slot they reach, then another over every slot
//! to store; this runs one pass per slot, bottom up, that finds each
//! column's top, decides whether the column is one of these, changes it and
//! sums its ground. The columns it leaves (a top that empties, a full
//! column that would merge) go to [`StackRows`]. The arithmetic is that of
//! `take` and `push`, in the same order, so the bits are the same.
//!
//! [`StackRows`]: super::stack_rows::StackRows

use super::columns::{Layers, MIN_THICKNESS};
use super::grid::{ScratchRows, filled, scratch, widen};
use super::stack_rows::{add_slot, count_range, keep_bytes_of, keep_lanes_of, pick, pick_u32, restart_kept};

/// Row buffers of [`TopRows::run`], one lane per cell of a row.
#[derive(Default)]
pub(crate) struct TopRows {
    /// Layer counts, widened.
    count: Vec<u32>,
    /// A slot's materials, widened, then as changed.
    material: Vec<u32>,
    /// 1 for the columns this moves, from their top slot on.
    done: Vec<u32>,
    /// 1 for those of them that get a new layer.
    lay: Vec<u32>,
    /// The ground summed bottom up, and the sum with the next slot, swapped in.
    ground: [Vec<f32>; 2],
    /// A slot's new thickness row.
    thickness: Vec<f32>,
    /// 1 where a slot's unchanged-time counter restarts.
    fresh: Vec<u32>,
    rows: ScratchRows,
}

impl TopRows {
    /// Takes `send[x]` from and pushes `recv[x]` of `material` onto each
    /// `active` column of the row from cell `start` on whose change reaches
    /// only its top, as [`Layers::take`] then [`Layers::push`] would; marks
    /// in `left` the active columns it leaves, and returns how many.
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
        let capacity = layers.material.len() as u32;
        self.start(&layers.count[start..][..n]);
        // Slots below the lowest top stay as they are in every column and
        // only add to the ground; a new layer goes at most one above the
        // highest top.
        let [lowest, highest] = count_range(active, &self.count);
        let below = lowest.saturating_sub(1) as usize;
        for k in 0..below {
            let [sum, next] = &mut self.ground;
            add_slot(k as u32, &self.count, &layers.thickness[k][start..][..n], sum, next);
            std::mem::swap(sum, next);
        }
        for k in below..(highest as usize + 1).min(capacity as usize) {
            widen(&layers.material[k][start..][..n], &mut self.material);
            let [sum, next] = &mut self.ground;
            let slot = Slot {
                k: k as u32,
                capacity,
                material: u32::from(material),
                count: &self.count,
                active,
                send,
                recv,
            };
            let [changed, laid] = slot.run(
                &layers.thickness[k][start..][..n],
                &mut self.material,
                [&mut self.done, &mut self.lay],
                [sum, next],
                &mut self.thickness,
                &mut self.fresh,
            );
            std::mem::swap(sum, next);
            if !changed {
                continue;
            }
            layers.thickness[k][start..][..n].copy_from_slice(&self.thickness);
            let new = scratch(&mut self.rows.u16, n);
            restart_kept(&self.done, &self.fresh, &layers.age[k][start..][..n], new);
            layers.age[k][start..][..n].copy_from_slice(new);
            if laid {
                let new = scratch(&mut self.rows.u8, n);
                keep_bytes_of(&self.done, &self.material, &layers.material[k][start..][..n], new);
                layers.material[k][start..][..n].copy_from_slice(new);
            }
        }
        let new = scratch(&mut self.rows.f32, n);
        keep_lanes_of(&self.done, &self.ground[0], &layers.ground[start..][..n], new);
        layers.ground[start..][..n].copy_from_slice(new);
        for (c, &lay) in self.count.iter_mut().zip(&self.lay) {
            *c += lay;
        }
        let new = scratch(&mut self.rows.u8, n);
        keep_bytes_of(&self.done, &self.count, &layers.count[start..][..n], new);
        layers.count[start..][..n].copy_from_slice(new);
        let mut count = 0;
        for ((l, &a), &d) in left[..n].iter_mut().zip(active).zip(&self.done) {
            *l = u32::from((a != 0) & (d == 0));
            count += *l;
        }
        count as usize
    }

    /// Sizes the lanes for a row of layer counts `count`, none done yet.
    #[inline(always)]
    fn start(&mut self, count: &[u8]) {
        let n = count.len();
        self.count.clear();
        self.count.extend(count.iter().map(|&c| u32::from(c)));
        // Lanes that carry over from slot to slot start clear; the others
        // are written whole by each slot's pass.
        filled(&mut self.done, n, 0);
        filled(&mut self.lay, n, 0);
        let [sum, next] = &mut self.ground;
        filled(sum, n, 0.0);
        next.resize(n, 0.0);
        self.material.resize(n, 0);
        self.fresh.resize(n, 0);
        self.thickness.resize(n, 0.0);
    }
}

/// What one slot's pass reads besides the slot's own rows.
struct Slot<'a> {
    /// The slot.
    k: u32,
    /// Slots a column has.
    capacity: u32,
    /// What the columns receive.
    material: u32,
    count: &'a [u32],
    active: &'a [u32],
    send: &'a [f32],
    recv: &'a [f32],
}

impl Slot<'_> {
    /// Slot `k` of the row, bottom up: where it is a column's top and the
    /// column's change reaches only its top, decides the column done (and
    /// whether it lays a new layer), thins the top by what it sends and
    /// joins what it receives to a top of its material; where it is above
    /// the top of a column done that lays, fills it. Writes the slot's new
    /// `thickness` (and `material`), marks in `fresh` the layers changed,
    /// and adds the slot to the ground `sum` of the columns it is live in,
    /// into `next`. Returns whether any layer changed, and whether any was
    /// laid.
    #[inline(always)]
    fn run(
        &self,
        old: &[f32],
        material: &mut [u32],
        [done, lay]: [&mut [u32]; 2],
        [sum, next]: [&mut [f32]; 2],
        thickness: &mut [f32],
        fresh: &mut [u32],
    ) -> [bool; 2] {
        let n = thickness.len();
        let (count, active, send, recv, old) = (
            &self.count[..n],
            &self.active[..n],
            &self.send[..n],
            &self.recv[..n],
            &old[..n],
        );
        let (material, done, lay, sum, next, fresh) = (
            &mut material[..n],
            &mut done[..n],
            &mut lay[..n],
            &sum[..n],
            &mut next[..n],
            &mut fresh[..n],
        );
        let (k, m) = (self.k, self.material);
        let (mut changed, mut laid) = (0, 0);
        for x in 0..n {
            let (c, t, s, r) = (count[x], old[x], send[x], recv[x]);
            let (thins, receives, same) = (s > 0.0, r > 0.0, material[x] == m);
            // `take` stops inside the top, and `push` joins it or has a slot
            // to fill.
            let top = (active[x] != 0) & (c == k + 1);
            let here = top & (!thins | (t - s > MIN_THICKNESS)) & (!receives | same | (c < self.capacity));
            let joins = here & receives & same;
            let fills = (lay[x] != 0) & (c == k);
            let thinned = pick(thins, t - s, t);
            let value = pick(here, pick(joins, thinned + r, thinned), pick(fills, r, t));
            thickness[x] = value;
            material[x] = pick_u32(fills, m, material[x]);
            next[x] = pick((c > k) | fills, sum[x] + value, sum[x]);
            done[x] |= u32::from(here);
            lay[x] |= u32::from(here & receives & !same);
            let renewed = (here & (thins | joins)) | fills;
            fresh[x] = u32::from(renewed);
            changed |= u32::from(renewed);
            laid |= u32::from(fills);
        }
        [changed != 0, laid != 0]
    }
}
