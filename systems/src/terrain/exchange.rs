//! Dissolving and depositing (eq. 2.27–2.29): the sediment exchange between
//! flowing water and the layers beneath it, for a whole row of columns.
//!
//! Where the water can carry more than it does, it dissolves rock from the
//! top layer, eating into the layer below when the top runs out; where it
//! carries more than it can, it deposits regolith, which joins a regolith top
//! or starts a layer of its own. Column by column ([`column`]) those are
//! branches that go one way or the other at random across a wet row, and
//! mispredicted branches cost more than the arithmetic. [`ExchangeRow`] runs
//! every case that touches only the top two layers as selects over the whole
//! row in 32-bit lanes, so the loops vectorize, with the arithmetic of
//! [`column`] in the same order, so results are bit for bit the same. It
//! leaves three cases to [`column`]: dissolving through more than two layers,
//! a deposit onto a full column of another material (which merges the bottom
//! layers first), and cells under standing water.

use super::columns::{Layers, MIN_THICKNESS};
use super::grid::{by_material, highest};
use super::materials::{MATERIAL_COUNT, Material};
use super::stack_rows::{TopTwo, pick, pick_u32};
use super::standing_water::grind;
use crate::registers::Kernel;

const REGOLITH: u8 = Material::Regolith as u8;

/// Per-material rates of the exchange.
pub(crate) struct Rates {
    /// K_s: the share of the capacity excess dissolved per step.
    pub(crate) ks: [f32; MATERIAL_COUNT],
    /// The share of the sediment excess deposited, by the top's material.
    pub(crate) deposit: [f32; MATERIAL_COUNT],
}

/// What a row of cells brings to the exchange, all indexed like the row.
pub(crate) struct RowInput<'a> {
    /// Transport capacity C.
    pub(crate) cap: &'a [f32],
    /// Highest N4 neighbour ground: deposits never rise above it.
    pub(crate) rim: &'a [f32],
    /// Lowest N4 neighbour ground: dissolving never digs below it.
    pub(crate) floor: &'a [f32],
    /// 1 where standing-water erosion is due.
    pub(crate) stand: &'a [u8],
}

/// The exchange of cell `i` of `layers` (the per-column path), then
/// standing-water erosion where `stand`: changes the layers, the suspended
/// sediment `sed` and the water `water`; returns the water absorbed.
pub(crate) fn column(
    layers: &mut Layers<'_>,
    i: usize,
    [cap, rim, floor]: [f32; 3],
    stand: bool,
    sed: &mut f32,
    water: &mut f32,
    rates: &Rates,
) -> f32 {
    let susp = *sed;
    if cap > susp {
        // Flowing water cuts no pit below all four neighbours, the mirror of
        // the deposition cap below.
        let room = (layers.ground[i] - floor).max(0.0);
        *sed += dissolve(layers, i, cap - susp, &rates.ks, room);
    } else if susp > cap {
        let m = layers.top(i).map_or(REGOLITH, |t| t.0);
        // Deposits fill hollows up to the highest neighbour but never build
        // a tower above all four (Fig. 5.16–5.17).
        let room = (rim - layers.ground[i]).max(0.0);
        let amount = (rates.deposit[usize::from(m)] * (susp - cap)).min(room);
        if amount > 0.0 {
            layers.push(i, REGOLITH, amount);
            *sed -= amount;
        }
    }
    if !stand {
        return 0.0;
    }
    let converted = grind(layers, i, *water, &rates.ks);
    *water -= converted;
    converted
}

/// Dissolving (eq. 2.28) eats through the top layer into the ones below: the
/// fraction of the capacity excess a layer could not supply is applied to the
/// next layer at that layer's own K_s, and no more than `limit` in all
/// (up to a sliver under [`MIN_THICKNESS`]). Returns the amount dissolved.
fn dissolve(layers: &mut Layers<'_>, i: usize, excess: f32, ks: &[f32; MATERIAL_COUNT], limit: f32) -> f32 {
    let mut rem = 1.0f32;
    let mut taken = 0.0;
    while rem > 0.0 {
        let Some((m, t)) = layers.top(i) else { break };
        let want = (ks[usize::from(m)] * excess * rem).min(limit - taken);
        if want <= 0.0 {
            break;
        }
        let k = layers.len(i) - 1;
        if t - want > MIN_THICKNESS {
            layers.thickness[k][i] = t - want;
            layers.age[k][i] = 0;
            taken += want;
            break;
        }
        taken += t;
        rem *= 1.0 - t / want;
        layers.count[i] -= 1;
    }
    if taken > 0.0 {
        layers.refresh(i);
    }
    taken
}

/// Row buffers of the lane path, one lane per cell; reused row after row.
#[derive(Default)]
pub(crate) struct ExchangeRow {
    /// The slot whose thickness was set (its counter restarts), or none
    /// (`u32::MAX`).
    slot: Vec<u32>,
    /// The new thickness of slot `slot`.
    value: Vec<f32>,
    /// The slot of a new regolith layer, or none (`u32::MAX`).
    fill: Vec<u32>,
    /// 1 where the cell needs [`column`].
    slow: Vec<u32>,
    /// How many cells need [`column`]: mostly none, and then the row is not
    /// scanned for them.
    slow_cells: u32,
}

/// Most slots the lane path reads; rows with deeper stacks go column by
/// column.
const LANE_SLOTS: usize = 8;

impl ExchangeRow {
    /// Runs the exchange on the `n` cells of `layers` from cell `start` on
    /// (`sed` and `input` hold those cells), except the cells it then lists
    /// in [`Self::slow`], which it leaves unchanged for [`column`].
    #[inline(always)]
    pub(crate) fn run(
        &mut self,
        layers: &mut Layers<'_>,
        start: usize,
        input: &RowInput<'_>,
        sed: &mut [f32],
        rates: &Rates,
    ) {
        let n = sed.len();
        for v in [&mut self.slot, &mut self.fill, &mut self.slow] {
            v.resize(n, 0);
        }
        self.value.resize(n, 0.0);
        // Slots at or above the row's highest layer hold nothing to read:
        // the lanes pick no slot at or above a column's count (at least one
        // is read, so the kernel has a loop).
        let highest = usize::from(highest(&layers.count[start..][..n]));
        let lanes = Lanes {
            capacity: layers.material.len() as u32,
            input,
            rates,
        };
        let out = [&mut self.slot, &mut self.fill, &mut self.slow].map(|v| v.as_mut_slice());
        let value = &mut self.value[..];
        self.slow_cells = match highest {
            0 | 1 => lanes.run::<1>(layers, start, sed, out, value),
            2 => lanes.run::<2>(layers, start, sed, out, value),
            3 => lanes.run::<3>(layers, start, sed, out, value),
            4 => lanes.run::<4>(layers, start, sed, out, value),
            5 => lanes.run::<5>(layers, start, sed, out, value),
            6 => lanes.run::<6>(layers, start, sed, out, value),
            7 => lanes.run::<7>(layers, start, sed, out, value),
            LANE_SLOTS => lanes.run::<LANE_SLOTS>(layers, start, sed, out, value),
            _ => {
                self.slot.fill(u32::MAX);
                self.fill.fill(u32::MAX);
                self.slow.fill(1);
                n as u32
            }
        };
        // The cells that change a layer are a few, scattered over the row
        // and its slots: written cell by cell, they leave the lines of the
        // planes around them unread and clean, where rewriting each changed
        // slot's rows (thickness, counter, material) read and wrote back
        // whole rows of planes the lanes do not otherwise touch. Found 64
        // cells at a time by a mask, then bit by bit: a branch per cell
        // would be mispredicted.
        for (group, slots) in self.slot.chunks(64).enumerate() {
            let mut bits = slots
                .iter()
                .enumerate()
                .fold(0u64, |b, (i, &k)| b | (u64::from(k != u32::MAX) << i));
            while bits != 0 {
                let x = group * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let (k, j) = (self.slot[x] as usize, start + x);
                layers.thickness[k][j] = self.value[x];
                layers.age[k][j] = 0;
                // A new layer fills the slot whose thickness it sets. New
                // layers are rare once the tops are regolith, and a store of
                // the material the others keep would dirty its line.
                if self.fill[x] != u32::MAX {
                    layers.material[k][j] = REGOLITH;
                }
            }
        }
    }

    /// The cells left to [`column`], by index in the row.
    pub(crate) fn slow(&self) -> impl Iterator<Item = usize> + '_ {
        let none = self.slow_cells == 0;
        let cells = if none { &[][..] } else { &self.slow[..] };
        cells.iter().enumerate().filter(|c| *c.1 != 0).map(|c| c.0)
    }
}

/// What the lanes of a row read besides the layers and the sediment.
struct Lanes<'a> {
    /// Layer slots per column.
    capacity: u32,
    input: &'a RowInput<'a>,
    rates: &'a Rates,
}

impl Lanes<'_> {
    /// The lanes over columns of at most `K` slots (those above are none of
    /// their business): changes count, ground and sediment, and writes per
    /// cell the slot whose thickness changes and its new `value`, the slot
    /// filled with a new layer, and whether the cell is left slow; returns
    /// how many are.
    #[inline(always)]
    fn run<const K: usize>(
        &self,
        layers: &mut Layers<'_>,
        start: usize,
        sed: &mut [f32],
        out: [&mut [u32]; 3],
        value: &mut [f32],
    ) -> u32 {
        let cells = start..start + sed.len();
        let slots = Slots::<K> {
            material: std::array::from_fn(|k| &layers.material[k][cells.clone()]),
            thickness: std::array::from_fn(|k| &layers.thickness[k][cells.clone()]),
        };
        exchange(
            self,
            slots,
            &mut layers.count[cells.clone()],
            &mut layers.ground[cells],
            sed,
            out,
            value,
        )
    }
}

/// The first `K` slots of a row's stacks, which the lanes only read.
struct Slots<'a, const K: usize> {
    /// Each slot's material per cell.
    material: [&'a [u8]; K],
    /// Each slot's thickness per cell.
    thickness: [&'a [f32]; K],
}

/// `table[m]` for a material `m` ([`by_material`]). Materials are below 7,
/// so the eighth leaf is never taken; as the seventh, it folds away.
#[inline(always)]
fn lookup(table: &[f32; MATERIAL_COUNT], m: u32) -> f32 {
    by_material(m, table, table[6], pick)
}

/// The exchange of every cell of a row, in one pass over its `K` slots: the
/// top layer (slot count − 1) and the one beneath (count − 2) and the
/// bottom-up sums below each are read, the new count, ground and sediment
/// written in place, and the slot changed and its new thickness `value`
/// noted; cells left slow keep everything as it was. The planes are only
/// read: a loop that also wrote `K` of them would not vectorize for seven
/// slots or more (too many slices to check for overlap). Returns how many
/// cells are left slow.
// Long by design: one loop body of selects, so a cell's dissolve and deposit vectorize together.
#[inline(always)]
fn exchange<const K: usize>(
    lanes: &Lanes<'_>,
    slots: Slots<'_, K>,
    count: &mut [u8],
    ground: &mut [f32],
    sed: &mut [f32],
    [slot, fill, slow]: [&mut [u32]; 3],
    value: &mut [f32],
) -> u32 {
    let Slots { material, thickness } = slots;
    let n = sed.len();
    let input = lanes.input;
    let (cap, rim, floor, stand) = (&input.cap[..n], &input.rim[..n], &input.floor[..n], &input.stand[..n]);
    let (count, ground) = (&mut count[..n], &mut ground[..n]);
    let material = material.map(|m| &m[..n]);
    let thickness = thickness.map(|t| &t[..n]);
    let (slot, fill, slow, value) = (&mut slot[..n], &mut fill[..n], &mut slow[..n], &mut value[..n]);
    let regolith = u32::from(REGOLITH);
    let (ks, deposit, capacity) = (lanes.rates.ks, lanes.rates.deposit, lanes.capacity);
    let mut slows = 0;
    for x in 0..n {
        let (c, s, g, cap) = (u32::from(count[x]), sed[x], ground[x], cap[x]);
        // SAFETY: every plane was cut to `n` cells above, and x < n.
        let TopTwo {
            material: [m1, m2],
            thickness: [t1, t2],
            below: [below1, below2],
        } = unsafe { TopTwo::of(&material, &thickness, x, c) };
        let dissolving = cap > s;
        let depositing = s > cap;

        // Dissolve: the top layer, then the one beneath, as `dissolve` loops.
        let excess = cap - s;
        let room = (g - floor[x]).max(0.0);
        // `dissolve`'s first round has rem = 1 and nothing taken yet.
        let want1 = (lookup(&ks, m1) * excess * 1.0).min(room - 0.0);
        // `dissolve` goes on unless want ≤ 0, so also when want is NaN.
        let go1 = dissolving & (c >= 1) & ((want1 > 0.0) | want1.is_nan());
        let part1 = go1 & (t1 - want1 > MIN_THICKNESS);
        let gone1 = go1 & !part1;
        let taken1 = 0.0 + t1;
        let rem = 1.0 * (1.0 - t1 / want1);
        let want2 = (lookup(&ks, m2) * excess * rem).min(room - taken1);
        let go2 = gone1 & (rem > 0.0) & (c >= 2) & ((want2 > 0.0) | want2.is_nan());
        let part2 = go2 & (t2 - want2 > MIN_THICKNESS);
        let deeper = go2 & !part2;
        let taken = pick(
            part1,
            0.0 + want1,
            pick(part2, taken1 + want2, pick(gone1, taken1, 0.0)),
        );
        let dissolved_ground = pick(part1, below1 + (t1 - want1), pick(part2, below2 + (t2 - want2), below1));

        // Deposit: joins a regolith top or fills the slot above.
        let top = pick_u32(c >= 1, m1, regolith);
        let up = (rim[x] - g).max(0.0);
        let amount = (lookup(&deposit, top) * (s - cap)).min(up);
        let put = depositing & (amount > 0.0);
        let join = put & (c >= 1) & (m1 == regolith);
        let new = put & !join & (c < capacity);
        let full = put & !join & !new;
        let all = pick(c >= 1, below1 + t1, 0.0);

        let out = deeper | full | (stand[x] != 0);
        slow[x] = u32::from(out);
        slows += u32::from(out);
        let (dissolving, part1, part2, gone1) = (dissolving & !out, part1 & !out, part2 & !out, gone1 & !out);
        let (join, new) = (join & !out, new & !out);
        let refreshed = (dissolving & (taken > 0.0)) | join | new;
        ground[x] = pick(
            refreshed,
            pick(
                dissolving,
                dissolved_ground,
                pick(join, below1 + (t1 + amount), all + amount),
            ),
            g,
        );
        sed[x] = pick(dissolving, s + taken, pick(join | new, s - amount, s));
        let top_slot = c.wrapping_sub(1);
        slot[x] = pick_u32(
            part1 | join,
            top_slot,
            pick_u32(part2, c.wrapping_sub(2), pick_u32(new, c, u32::MAX)),
        );
        value[x] = pick(
            part1,
            t1 - want1,
            pick(part2, t2 - want2, pick(join, t1 + amount, amount)),
        );
        fill[x] = pick_u32(new, c, u32::MAX);
        count[x] = (c - u32::from(gone1) + u32::from(new)) as u8;
    }
    slows
}

/// [`ExchangeRow::run`] as a [`Kernel`].
pub(crate) struct ExchangeKernel<'a, 'l> {
    pub(crate) lanes: &'a mut ExchangeRow,
    pub(crate) layers: &'a mut Layers<'l>,
    pub(crate) start: usize,
    pub(crate) input: RowInput<'a>,
    pub(crate) sed: &'a mut [f32],
    pub(crate) rates: &'a Rates,
}

impl Kernel for ExchangeKernel<'_, '_> {
    type Output = ();

    #[inline(always)]
    fn run(self) {
        self.lanes
            .run(self.layers, self.start, &self.input, self.sed, self.rates);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::registers::Registers;
    use crate::terrain::columns::TerrainChunk;
    use crate::terrain::materials::MaterialTable;

    fn rates() -> Rates {
        let table = MaterialTable::default();
        Rates {
            ks: table.lut(|m| m.ks),
            deposit: table.lut(|m| m.deposit),
        }
    }

    /// A column: layers bottom up, capacity, suspended sediment, how far the
    /// rim lies above and the floor below its ground, standing water, water.
    type Case = (Vec<(u8, f32)>, f32, f32, f32, f32, bool, f32);

    /// Runs a row of cases both ways: column by column, and lanes (compiled
    /// for `registers`) with the slow cells by column. Returns both results
    /// (chunk, sediment, water, water absorbed) and how many cells the lanes
    /// left slow.
    #[allow(clippy::type_complexity)]
    fn both(slots: u8, cases: &[Case], registers: Registers) -> ([(TerrainChunk, Vec<f32>, Vec<f32>, f32); 2], usize) {
        let n = cases.len();
        let mut chunk = TerrainChunk::new([0, 0], n as u32, slots).unwrap();
        for (x, c) in cases.iter().enumerate() {
            for &(m, t) in &c.0 {
                assert!(chunk.push_layer(x as u32, 0, Material::from_u8(m).unwrap(), t));
            }
        }
        let cap: Vec<f32> = cases.iter().map(|c| c.1).collect();
        let rim: Vec<f32> = cases.iter().zip(&chunk.ground).map(|(c, g)| g + c.3).collect();
        let floor: Vec<f32> = cases.iter().zip(&chunk.ground).map(|(c, g)| g - c.4).collect();
        let stand: Vec<u8> = cases.iter().map(|c| u8::from(c.5)).collect();
        let start_sed: Vec<f32> = cases.iter().map(|c| c.2).collect();
        let start_water: Vec<f32> = cases.iter().map(|c| c.6).collect();
        let rates = rates();

        let column_by_column = {
            let mut chunk = chunk.clone();
            let (mut sed, mut water, mut absorbed) = (start_sed.clone(), start_water.clone(), 0.0);
            let mut layers = chunk.layers_mut();
            for x in 0..n {
                let here = [cap[x], rim[x], floor[x]];
                absorbed += column(&mut layers, x, here, stand[x] != 0, &mut sed[x], &mut water[x], &rates);
            }
            (chunk, sed, water, absorbed)
        };
        let mut lanes = ExchangeRow::default();
        let lane_path = {
            let mut chunk = chunk.clone();
            let (mut sed, mut water, mut absorbed) = (start_sed.clone(), start_water.clone(), 0.0);
            let mut layers = chunk.layers_mut();
            let input = RowInput {
                cap: &cap,
                rim: &rim,
                floor: &floor,
                stand: &stand,
            };
            registers.run(ExchangeKernel {
                lanes: &mut lanes,
                layers: &mut layers,
                start: 0,
                input,
                sed: &mut sed,
                rates: &rates,
            });
            for x in lanes.slow().collect::<Vec<_>>() {
                let here = [cap[x], rim[x], floor[x]];
                absorbed += column(&mut layers, x, here, stand[x] != 0, &mut sed[x], &mut water[x], &rates);
            }
            (chunk, sed, water, absorbed)
        };
        let slow = lanes.slow().count();
        ([column_by_column, lane_path], slow)
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|f| f.to_bits()).collect()
    }

    /// Both ways alike on every register build this CPU runs; returns how
    /// many cells the lanes left slow.
    fn assert_same(slots: u8, cases: &[Case]) -> usize {
        let slows: Vec<usize> = Registers::all_available()
            .into_iter()
            .map(|registers| {
                let ([a, b], slow) = both(slots, cases, registers);
                assert_eq!(a.0, b.0, "layers, {registers:?}");
                assert_eq!(bits(&a.1), bits(&b.1), "sediment, {registers:?}");
                assert_eq!(bits(&a.2), bits(&b.2), "water, {registers:?}");
                assert_eq!(a.3.to_bits(), b.3.to_bits(), "absorbed, {registers:?}");
                slow
            })
            .collect();
        assert!(
            slows.windows(2).all(|w| w[0] == w[1]),
            "slow cells per build: {slows:?}"
        );
        slows[0]
    }

    const REG: u8 = REGOLITH;
    const GRANITE: u8 = Material::Granite as u8;
    const SAND: u8 = Material::Sandstone as u8;

    /// Every case the lanes take on: dissolving within the top layer,
    /// through it and into the next, through the only layer, and not at all
    /// (no room); depositing onto regolith, onto another rock, onto an empty
    /// column, and not at all (no room). None is left slow, and every one
    /// ends as the column path ends it.
    #[test]
    fn lanes_take_the_common_cases() {
        let stack = vec![(GRANITE, 2.0), (SAND, 0.5), (REG, 0.01)];
        let cases: Vec<Case> = vec![
            (stack.clone(), 0.5, 0.1, 1.0, 1.0, false, 0.3),
            (stack.clone(), 0.5, 0.0, 1.0, 5.0, false, 0.3),
            (vec![(REG, 0.001)], 3.0, 0.0, 1.0, 5.0, false, 0.3),
            (stack.clone(), 0.5, 0.1, 1.0, -1.0, false, 0.3),
            (stack.clone(), 0.0, 0.4, 1.0, 1.0, false, 0.3),
            (vec![(GRANITE, 2.0), (SAND, 0.5)], 0.1, 0.4, 1.0, 1.0, false, 0.3),
            (vec![], 0.1, 0.4, 1.0, 1.0, false, 0.3),
            (stack.clone(), 0.1, 0.4, -1.0, 1.0, false, 0.3),
            (stack.clone(), 0.2, 0.2, 1.0, 1.0, false, 0.3),
        ];
        assert_eq!(assert_same(4, &cases), 0);
        let ([column_path, _], _) = both(4, &cases, Registers::Portable);
        let (chunk, sed, _, _) = column_path;
        // Dissolving through the regolith into the sandstone left two layers.
        assert_eq!(chunk.column(1, 0).unwrap().len(), 2);
        assert_eq!(chunk.column(2, 0).unwrap().len(), 0);
        // The deposit onto sandstone started a regolith layer.
        assert_eq!(chunk.column(5, 0).unwrap().top(), Some(Material::Regolith));
        assert_eq!(sed[8].to_bits(), 0.2f32.to_bits());
    }

    /// The three cases left to the column path: dissolving through two
    /// layers into a third, a deposit onto a full column, standing water.
    #[test]
    fn lanes_leave_the_rare_cases() {
        let thin = vec![(GRANITE, 2.0), (SAND, 0.001), (REG, 0.001)];
        let full = vec![(GRANITE, 2.0), (SAND, 0.5), (GRANITE, 0.5), (SAND, 0.5)];
        let cases: Vec<Case> = vec![
            (thin.clone(), 3.0, 0.0, 1.0, 5.0, false, 0.3),
            (full, 0.1, 0.4, 1.0, 1.0, false, 0.3),
            (thin, 0.2, 0.2, 1.0, 1.0, true, 0.3),
        ];
        assert_eq!(assert_same(4, &cases), 3);
    }

    /// A row whose stacks are deeper than the lanes read goes column by
    /// column, every cell of it, with the same results.
    #[test]
    fn deep_rows_go_column_by_column() {
        let deep: Vec<(u8, f32)> = (0..9).map(|k| ((k % 2) as u8 * SAND, 0.5)).collect();
        let cases: Vec<Case> = vec![
            (deep, 0.5, 0.1, 1.0, 1.0, false, 0.3),
            (vec![(GRANITE, 2.0)], 0.1, 0.4, 1.0, 1.0, false, 0.3),
        ];
        assert_eq!(assert_same(10, &cases), 2);
    }

    fn thickness() -> impl Strategy<Value = f32> {
        prop_oneof![
            Just(MIN_THICKNESS),
            Just(2.0 * MIN_THICKNESS),
            Just(0.01),
            Just(0.25),
            1e-7f32..2.0,
        ]
    }

    fn amount() -> impl Strategy<Value = f32> {
        prop_oneof![Just(0.0f32), Just(0.25), thickness(), 0.0f32..3.0]
    }

    fn case() -> impl Strategy<Value = Case> {
        let material = prop_oneof![Just(REG), 0u8..7];
        let layers = prop::collection::vec((material, thickness()), 0..11);
        let margin = prop_oneof![Just(0.0f32), Just(-0.1), 0.0f32..3.0];
        (
            layers,
            amount(),
            amount(),
            margin.clone(),
            margin,
            prop::bool::weighted(0.1),
            amount(),
        )
    }

    proptest! {
        /// The lanes and the column path change layers, sediment and water
        /// bit for bit alike.
        #[test]
        fn lanes_match_columns(slots in 1u8..12, cases in prop::collection::vec(case(), 1..40)) {
            assert_same(slots, &cases);
        }
    }
}
