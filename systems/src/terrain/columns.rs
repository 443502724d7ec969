//! Layered columns (thesis §2.1.3, Beneš & Forsbach): a chunk of the terrain
//! grid stored as structure-of-arrays planes.
//!
//! Each column holds a stack of at most `max_layers` layers, bottom first.
//! Layer slot `k` of every column lives in plane `k`: one material byte, one
//! f32 thickness and one u16 age counter per cell. Next to the stack each cell
//! has water, suspended sediment, four outflow fluxes and a velocity.
//!
//! The rock height of every column (the sum of its layer thicknesses, added
//! bottom up) is also kept in a flat plane that every layer change refreshes,
//! so kernels read one f32 per neighbour instead of walking stacks. It is
//! derived state: not serialized, rebuilt when a chunk is loaded.
//!
//! **Memory.** `37 + 7·max_layers` bytes per cell: 65 bytes with 4 layers,
//! so 4096² cells with 4 layers take 1.09 GB (the thesis's linked lists of
//! objects failed at this size). Erosion adds 21 (hydraulic) or about 2
//! (thermal: the plans of two rows in 16) bytes per cell of scratch that the
//! systems reuse between steps. Planes of 2 MiB or more sit on huge pages
//! where the system gives them (`pages::filled_huge`), less than
//! 1 MiB more each at most.
//!
//! **Layer rules.** Erosion removes a layer once less than [`MIN_THICKNESS`]
//! of it would remain; a layer added on top of one of the same material merges into it; when a column is
//! full, its two bottom-most layers merge into one of the lower material
//! before a new layer is pushed (with a single slot, the one layer takes the
//! new material's thickness and keeps its own material). The surface, which is what erosion reads, is
//! therefore always exact, and only the deepest structure coarsens.

use serde::{Deserialize, Serialize};

use crate::pages::{copied_huge, filled_huge};

use super::materials::{MATERIAL_COUNT, Material};

/// Sand on a river's bed, height units.
pub(crate) const BED_SAND: f32 = 0.25;

/// Thickness below which erosion removes what is left of a layer.
pub const MIN_THICKNESS: f32 = 1e-6;

/// Most layer slots a column may have.
pub const MAX_LAYER_SLOTS: u8 = 32;

/// Largest chunk side length, in cells.
pub const MAX_CHUNK_SIZE: u32 = 8192;

/// Index of a flux plane: outflow towards −x.
pub const LEFT: usize = 0;
/// Outflow towards +x.
pub const RIGHT: usize = 1;
/// Outflow towards −z (the thesis's B, y − 1).
pub const BACK: usize = 2;
/// Outflow towards +z (the thesis's T, y + 1).
pub const FRONT: usize = 3;

/// A square chunk of layered terrain columns: an ECS component.
///
/// Cell `(x, z)` has index `z·size + x`; world cell coordinates are
/// `coord·size + (x, z)`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ChunkData", into = "ChunkData")]
pub struct TerrainChunk {
    coord: [i32; 2],
    size: u32,
    slots: u8,
    pub(crate) count: Vec<u8>,
    pub(crate) material: Vec<u8>,
    pub(crate) thickness: Vec<f32>,
    pub(crate) age: Vec<u16>,
    /// Rock height per cell, always equal to the bottom-up sum of the layers.
    pub(crate) ground: Vec<f32>,
    pub(crate) water: Vec<f32>,
    pub(crate) sediment: Vec<f32>,
    pub(crate) flux: [Vec<f32>; 4],
    pub(crate) velocity: [Vec<f32>; 2],
}

/// A clone's planes are on huge pages, as a new chunk's are: cloned as plain
/// vectors, on small pages, a 1024² chunk's water step ran about 10 % slower.
impl Clone for TerrainChunk {
    fn clone(&self) -> Self {
        Self {
            coord: self.coord,
            size: self.size,
            slots: self.slots,
            count: copied_huge(&self.count),
            material: copied_huge(&self.material),
            thickness: copied_huge(&self.thickness),
            age: copied_huge(&self.age),
            ground: copied_huge(&self.ground),
            water: copied_huge(&self.water),
            sediment: copied_huge(&self.sediment),
            flux: self.flux.each_ref().map(|p| copied_huge(p)),
            velocity: self.velocity.each_ref().map(|p| copied_huge(p)),
        }
    }
}

/// The serialized form, checked on the way in so a corrupt snapshot is an
/// error rather than a chunk that panics later.
#[derive(Serialize, Deserialize)]
struct ChunkData {
    coord: [i32; 2],
    size: u32,
    slots: u8,
    count: Vec<u8>,
    material: Vec<u8>,
    thickness: Vec<f32>,
    age: Vec<u16>,
    water: Vec<f32>,
    sediment: Vec<f32>,
    flux: [Vec<f32>; 4],
    velocity: [Vec<f32>; 2],
}

/// Why decoded chunk data is not a terrain chunk (a snapshot or cache file that passed its
/// checksum yet holds planes no chunk could have).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChunkDataError {
    /// A size or slot count outside what a chunk may have.
    #[error("terrain chunk has size {size} and {slots} layer slots")]
    Shape {
        /// Cells along a side.
        size: u32,
        /// Layer slots per column.
        slots: u8,
    },
    /// A plane whose length does not fit the size and slots.
    #[error("terrain chunk planes have the wrong length")]
    PlaneLength,
    /// A layer count above the slots, or a material not in the table.
    #[error("terrain chunk has an invalid layer count or material")]
    Layers,
}

impl TryFrom<ChunkData> for TerrainChunk {
    type Error = ChunkDataError;
    fn try_from(d: ChunkData) -> Result<Self, ChunkDataError> {
        if d.size == 0 || d.size > MAX_CHUNK_SIZE || d.slots == 0 || d.slots > MAX_LAYER_SLOTS {
            return Err(ChunkDataError::Shape {
                size: d.size,
                slots: d.slots,
            });
        }
        let n = d.size as usize * d.size as usize;
        let s = n * usize::from(d.slots);
        let lens_ok = d.count.len() == n
            && d.material.len() == s
            && d.thickness.len() == s
            && d.age.len() == s
            && d.water.len() == n
            && d.sediment.len() == n
            && d.flux.iter().chain(&d.velocity).all(|p| p.len() == n);
        if !lens_ok {
            return Err(ChunkDataError::PlaneLength);
        }
        if d.count.iter().any(|&c| c > d.slots) || d.material.iter().any(|&m| usize::from(m) >= MATERIAL_COUNT) {
            return Err(ChunkDataError::Layers);
        }
        let mut chunk = TerrainChunk {
            coord: d.coord,
            size: d.size,
            slots: d.slots,
            count: d.count,
            material: d.material,
            thickness: d.thickness,
            age: d.age,
            ground: Vec::new(),
            water: d.water,
            sediment: d.sediment,
            flux: d.flux,
            velocity: d.velocity,
        };
        let mut ground = Vec::new();
        chunk.ground_heights(&mut ground);
        chunk.ground = ground;
        Ok(chunk)
    }
}

impl TerrainChunk {
    /// A chunk of the given layer stacks (`count` per cell; `material` and `thickness` per
    /// slot plane) with no water, sediment, flow or layer ages: a world chunk as its stored
    /// form keeps it. Checked as a decoded snapshot is.
    pub(crate) fn from_stacks(
        coord: [i32; 2],
        size: u32,
        slots: u8,
        count: Vec<u8>,
        material: Vec<u8>,
        thickness: Vec<f32>,
    ) -> Result<Self, ChunkDataError> {
        let n = count.len();
        let zero = || vec![0.0f32; n];
        let age = vec![0u16; thickness.len()];
        TerrainChunk::try_from(ChunkData {
            coord,
            size,
            slots,
            count,
            material,
            thickness,
            age,
            water: zero(),
            sediment: zero(),
            flux: [zero(), zero(), zero(), zero()],
            velocity: [zero(), zero()],
        })
    }
}

impl From<TerrainChunk> for ChunkData {
    fn from(c: TerrainChunk) -> Self {
        ChunkData {
            coord: c.coord,
            size: c.size,
            slots: c.slots,
            count: c.count,
            material: c.material,
            thickness: c.thickness,
            age: c.age,
            water: c.water,
            sediment: c.sediment,
            flux: c.flux,
            velocity: c.velocity,
        }
    }
}

/// A read-only view of one column.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    chunk: &'a TerrainChunk,
    cell: usize,
}

impl<'a> Column<'a> {
    /// Number of layers.
    pub fn len(&self) -> usize {
        usize::from(self.chunk.count[self.cell])
    }

    /// True when the column has no rock.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Layer `k` (0 = bottom): its material, thickness and unchanged-time counter.
    pub fn layer(&self, k: usize) -> Option<(Material, f32, u16)> {
        if k >= self.len() {
            return None;
        }
        let j = k * self.chunk.cells() + self.cell;
        let m = Material::from_u8(self.chunk.material[j])?;
        Some((m, self.chunk.thickness[j], self.chunk.age[j]))
    }

    /// Layers bottom to top: material and thickness.
    pub fn layers(&self) -> impl Iterator<Item = (Material, f32)> + 'a {
        let c = *self;
        (0..c.len()).filter_map(move |k| c.layer(k).map(|(m, t, _)| (m, t)))
    }

    /// Material of the top layer.
    pub fn top(&self) -> Option<Material> {
        self.len().checked_sub(1).and_then(|k| self.layer(k)).map(|l| l.0)
    }

    /// Rock height: the sum of the layer thicknesses (eq. 2.12 without water).
    pub fn ground(&self) -> f32 {
        self.layers().map(|l| l.1).sum()
    }

    /// Water height w.
    pub fn water(&self) -> f32 {
        self.chunk.water[self.cell]
    }

    /// Suspended sediment n.
    pub fn sediment(&self) -> f32 {
        self.chunk.sediment[self.cell]
    }

    /// Outflow fluxes towards −x, +x, −z, +z.
    pub fn flux(&self) -> [f32; 4] {
        self.chunk.flux.each_ref().map(|p| p[self.cell])
    }

    /// Water velocity (x, z).
    pub fn velocity(&self) -> [f32; 2] {
        self.chunk.velocity.each_ref().map(|p| p[self.cell])
    }
}

impl TerrainChunk {
    /// An empty chunk (no rock, no water) of `size`² columns with room for
    /// `max_layers` layers each; `None` when a size is zero or over its limit
    /// ([`MAX_CHUNK_SIZE`], [`MAX_LAYER_SLOTS`]).
    pub fn new(coord: [i32; 2], size: u32, max_layers: u8) -> Option<Self> {
        if size == 0 || size > MAX_CHUNK_SIZE || max_layers == 0 || max_layers > MAX_LAYER_SLOTS {
            return None;
        }
        let n = size as usize * size as usize;
        let s = n * usize::from(max_layers);
        Some(Self {
            coord,
            size,
            slots: max_layers,
            count: filled_huge(n, 0),
            material: filled_huge(s, 0),
            thickness: filled_huge(s, 0.0),
            age: filled_huge(s, 0),
            ground: filled_huge(n, 0.0),
            water: filled_huge(n, 0.0),
            sediment: filled_huge(n, 0.0),
            flux: std::array::from_fn(|_| filled_huge(n, 0.0)),
            velocity: std::array::from_fn(|_| filled_huge(n, 0.0)),
        })
    }

    /// The `size`² columns from local cell `(x0, z0)` on, as chunk `coord`:
    /// every plane copied, the rock heights summed again (to the same bits).
    /// `None` when the square does not fit inside this chunk.
    pub fn crop(&self, x0: u32, z0: u32, size: u32, coord: [i32; 2]) -> Option<TerrainChunk> {
        let fits = |a: u32| a.checked_add(size).is_some_and(|end| end <= self.size);
        if !(fits(x0) && fits(z0)) {
            return None;
        }
        let mut out = TerrainChunk::new(coord, size, self.slots)?;
        let (from_n, to_n) = (self.cells(), out.cells());
        let rows = |src: &[f32], dst: &mut [f32]| copy_square(src, dst, self.size, x0, z0, size);
        for k in 0..usize::from(self.slots) {
            let (s, d) = (k * from_n..(k + 1) * from_n, k * to_n..(k + 1) * to_n);
            copy_square(
                &self.material[s.clone()],
                &mut out.material[d.clone()],
                self.size,
                x0,
                z0,
                size,
            );
            copy_square(&self.age[s.clone()], &mut out.age[d.clone()], self.size, x0, z0, size);
            rows(&self.thickness[s], &mut out.thickness[d]);
        }
        copy_square(&self.count, &mut out.count, self.size, x0, z0, size);
        rows(&self.water, &mut out.water);
        rows(&self.sediment, &mut out.sediment);
        for (src, dst) in self
            .flux
            .iter()
            .chain(&self.velocity)
            .zip(out.flux.iter_mut().chain(&mut out.velocity))
        {
            rows(src, dst);
        }
        let mut ground = Vec::new();
        out.ground_heights(&mut ground);
        out.ground = ground;
        Some(out)
    }

    /// Bytes of state per cell for a given layer capacity.
    pub const fn bytes_per_cell(max_layers: u8) -> usize {
        37 + 7 * max_layers as usize
    }

    /// Chunk coordinate (x, z).
    pub fn coord(&self) -> [i32; 2] {
        self.coord
    }

    /// Side length in cells.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Layer slots per column.
    pub fn max_layers(&self) -> u8 {
        self.slots
    }

    pub(crate) fn cells(&self) -> usize {
        self.count.len()
    }

    /// World cell coordinate of local cell (0, 0).
    pub fn origin(&self) -> [i64; 2] {
        self.coord.map(|c| i64::from(c) * i64::from(self.size))
    }

    /// The column at local `(x, z)`, if inside the chunk.
    pub fn column(&self, x: u32, z: u32) -> Option<Column<'_>> {
        (x < self.size && z < self.size).then(|| Column {
            chunk: self,
            cell: (z * self.size + x) as usize,
        })
    }

    /// Puts `thickness` of `material` on top of column `(x, z)` (merging,
    /// and making room when full, as the module docs say). Returns false and
    /// changes nothing when the cell is outside or `thickness` is not a
    /// positive finite number.
    pub fn push_layer(&mut self, x: u32, z: u32, material: Material, thickness: f32) -> bool {
        if x >= self.size || z >= self.size || !(thickness.is_finite() && thickness > 0.0) {
            return false;
        }
        let cell = (z * self.size + x) as usize;
        self.layers_mut().push(cell, material as u8, thickness);
        true
    }

    /// Water heights, one per cell.
    pub fn water(&self) -> &[f32] {
        &self.water
    }

    /// Water heights, for setting up a scene.
    pub fn water_mut(&mut self) -> &mut [f32] {
        &mut self.water
    }

    /// Suspended sediment, one per cell.
    pub fn sediment(&self) -> &[f32] {
        &self.sediment
    }

    /// Rock height of every cell into `out` (resized to the cell count),
    /// summed from the layers.
    pub fn ground_heights(&self, out: &mut Vec<f32>) {
        out.clear();
        out.resize(self.cells(), 0.0);
        let n = self.cells();
        for (k, plane) in self.thickness.chunks_exact(n).enumerate() {
            for ((o, &t), &c) in out.iter_mut().zip(plane).zip(&self.count) {
                if usize::from(c) > k {
                    *o += t;
                }
            }
        }
    }

    /// Top material of every cell (None for an empty column) into `out`.
    pub fn top_materials(&self, out: &mut Vec<Option<Material>>) {
        out.clear();
        out.extend((0..self.cells()).map(|i| {
            let c = usize::from(self.count[i]);
            c.checked_sub(1)
                .and_then(|k| Material::from_u8(self.material[k * self.cells() + i]))
        }));
    }

    /// Total rock volume (sum of thicknesses; cell area 1), in f64.
    pub fn total_rock(&self) -> f64 {
        let mut g = Vec::new();
        self.ground_heights(&mut g);
        g.iter().map(|&v| f64::from(v)).sum()
    }

    /// Total water volume, in f64.
    pub fn total_water(&self) -> f64 {
        self.water.iter().map(|&v| f64::from(v)).sum()
    }

    /// Total suspended sediment, in f64.
    pub fn total_sediment(&self) -> f64 {
        self.sediment.iter().map(|&v| f64::from(v)).sum()
    }

    /// Cuts every column higher than `bed` (one per cell; NaN: leave it) down
    /// to [`BED_SAND`] below it and lays that much sand on it: a river's bed.
    pub(crate) fn lay_beds(&mut self, bed: &[f32]) {
        let sand = BED_SAND;
        let mut layers = self.layers_mut();
        for (i, &b) in bed.iter().enumerate() {
            if b.is_finite() && layers.ground[i] > b - sand {
                let excess = layers.ground[i] - (b - sand).max(0.0);
                layers.take(i, excess);
                layers.push(i, Material::Sand as u8, sand);
            }
        }
    }

    /// Total number of layers over all columns.
    pub fn layer_count(&self) -> u64 {
        self.count.iter().map(|&c| u64::from(c)).sum()
    }

    /// The whole layer stack as one mutable block.
    pub(crate) fn layers_mut(&mut self) -> Layers<'_> {
        let n = self.cells();
        Layers {
            count: &mut self.count,
            material: self.material.chunks_mut(n).collect(),
            thickness: self.thickness.chunks_mut(n).collect(),
            age: self.age.chunks_mut(n).collect(),
            ground: &mut self.ground,
        }
    }

    /// The chunk split for a parallel kernel: layer stacks in blocks of
    /// `block` consecutive cells (block `b` covers cells `b·block ..`), water
    /// sediment, fluxes and velocity to be split the same way.
    pub(crate) fn parts(&mut self, block: usize) -> Parts<'_> {
        let n = self.count.len();
        let mut material = transpose(&mut self.material, n, block);
        let mut thickness = transpose(&mut self.thickness, n, block);
        let mut age = transpose(&mut self.age, n, block);
        let layers = self
            .count
            .chunks_mut(block)
            .zip(self.ground.chunks_mut(block))
            .enumerate()
            .map(|(b, (count, ground))| Layers {
                count,
                material: std::mem::take(&mut material[b]),
                thickness: std::mem::take(&mut thickness[b]),
                age: std::mem::take(&mut age[b]),
                ground,
            })
            .collect();
        Parts {
            layers,
            water: &mut self.water,
            sediment: &mut self.sediment,
            flux: &mut self.flux,
            velocity: &mut self.velocity,
        }
    }
}

/// Disjoint borrows of a chunk for one kernel.
pub(crate) struct Parts<'a> {
    pub(crate) layers: Vec<Layers<'a>>,
    pub(crate) water: &'a mut [f32],
    pub(crate) sediment: &'a mut [f32],
    pub(crate) flux: &'a mut [Vec<f32>; 4],
    pub(crate) velocity: &'a mut [Vec<f32>; 2],
}

/// Splits `plane`-long planes into blocks of `block` cells, grouped per block.
fn transpose<T>(data: &mut [T], plane: usize, block: usize) -> Vec<Vec<&mut [T]>> {
    let blocks = plane.div_ceil(block);
    let mut out: Vec<Vec<&mut [T]>> = (0..blocks).map(|_| Vec::new()).collect();
    for p in data.chunks_mut(plane) {
        for (b, s) in p.chunks_mut(block).enumerate() {
            out[b].push(s);
        }
    }
    out
}

/// Mutable layer stacks of a block of cells (indices local to the block).
pub(crate) struct Layers<'a> {
    pub(crate) count: &'a mut [u8],
    pub(crate) material: Vec<&'a mut [u8]>,
    pub(crate) thickness: Vec<&'a mut [f32]>,
    pub(crate) age: Vec<&'a mut [u16]>,
    /// The chunk's ground plane for these cells.
    pub(crate) ground: &'a mut [f32],
}

impl Layers<'_> {
    pub(crate) fn len(&self, i: usize) -> usize {
        usize::from(self.count[i])
    }

    /// Recomputes the ground of cell `i` after its layers changed, summing in
    /// the same order as [`TerrainChunk::ground_heights`] so the plane matches
    /// it bit for bit.
    #[inline]
    pub(crate) fn refresh(&mut self, i: usize) {
        let mut g = 0.0;
        for t in &self.thickness[..self.len(i)] {
            g += t[i];
        }
        self.ground[i] = g;
    }

    /// Material byte and thickness of the top layer.
    pub(crate) fn top(&self, i: usize) -> Option<(u8, f32)> {
        let k = self.len(i).checked_sub(1)?;
        Some((self.material[k][i], self.thickness[k][i]))
    }

    /// Adds `t` of material `m` on top; the top layer's counter restarts.
    pub(crate) fn push(&mut self, i: usize, m: u8, t: f32) {
        if t <= 0.0 {
            return;
        }
        let c = self.len(i);
        if c > 0 && self.material[c - 1][i] == m {
            self.thickness[c - 1][i] += t;
            self.age[c - 1][i] = 0;
            self.refresh(i);
            return;
        }
        if c == self.material.len() {
            self.merge_bottom(i);
        }
        let k = self.len(i);
        if k == self.material.len() {
            // A single slot has nothing to merge: the layer absorbs the new material.
            self.thickness[k - 1][i] += t;
            self.age[k - 1][i] = 0;
            self.refresh(i);
            return;
        }
        self.material[k][i] = m;
        self.thickness[k][i] = t;
        self.age[k][i] = 0;
        self.count[i] += 1;
        self.refresh(i);
    }

    /// Merges the two bottom-most layers into one of the lower's material.
    fn merge_bottom(&mut self, i: usize) {
        let c = self.len(i);
        if c < 2 {
            return;
        }
        let t = self.thickness[1][i];
        self.thickness[0][i] += t;
        self.remove_slot(i, 1);
    }

    /// Removes slot `k`, shifting the layers above it down.
    pub(crate) fn remove_slot(&mut self, i: usize, k: usize) {
        let c = self.len(i);
        for j in k..c.saturating_sub(1) {
            self.material[j][i] = self.material[j + 1][i];
            self.thickness[j][i] = self.thickness[j + 1][i];
            self.age[j][i] = self.age[j + 1][i];
        }
        self.count[i] -= 1;
        self.refresh(i);
    }

    /// Removes `amount` of rock from the top down, deleting emptied layers.
    /// Returns what was removed: less when the column runs out, slightly more
    /// when a remaining sliver under [`MIN_THICKNESS`] went with it, so
    /// callers that conserve mass book the returned value.
    pub(crate) fn take(&mut self, i: usize, amount: f32) -> f32 {
        let mut removed = 0.0;
        while removed < amount {
            let Some(k) = self.len(i).checked_sub(1) else { break };
            let t = self.thickness[k][i];
            let want = amount - removed;
            if t - want > MIN_THICKNESS {
                self.thickness[k][i] = t - want;
                self.age[k][i] = 0;
                self.refresh(i);
                return amount;
            }
            removed += t;
            self.count[i] -= 1;
        }
        self.refresh(i);
        removed
    }

    /// Removes up to `amount` from slot `k` only (the layers above sink);
    /// returns what was removed.
    pub(crate) fn take_from_slot(&mut self, i: usize, k: usize, amount: f32) -> f32 {
        let t = self.thickness[k][i];
        if t - amount > MIN_THICKNESS {
            self.thickness[k][i] = t - amount;
            self.age[k][i] = 0;
            self.refresh(i);
            amount
        } else {
            self.remove_slot(i, k);
            self.merge_equal(i);
            t
        }
    }

    /// Merges adjacent layers of equal material; the merged layer keeps the
    /// smaller counter (it is as young as its youngest part).
    pub(crate) fn merge_equal(&mut self, i: usize) {
        // Many stacks have no equal neighbours: find the first pair over the
        // slots as they are, without the count read again after each step.
        let c = self.len(i);
        let Some(first) = self.material[..c].windows(2).position(|w| w[0][i] == w[1][i]) else {
            return;
        };
        // One pass, each layer moved once, where removing merged slots one at
        // a time shifted the stack above each. That left every freed slot
        // holding the old top layer, and so does this: dead slots are part of
        // the state's bits.
        let top = (self.material[c - 1][i], self.thickness[c - 1][i], self.age[c - 1][i]);
        let mut w = first;
        for r in first + 1..c {
            let (m, t, a) = (self.material[r][i], self.thickness[r][i], self.age[r][i]);
            if m == self.material[w][i] {
                self.thickness[w][i] += t;
                self.age[w][i] = self.age[w][i].min(a);
            } else {
                w += 1;
                self.material[w][i] = m;
                self.thickness[w][i] = t;
                self.age[w][i] = a;
            }
        }
        // The old top's own slot still holds it.
        for k in w + 1..c - 1 {
            (self.material[k][i], self.thickness[k][i], self.age[k][i]) = top;
        }
        self.count[i] = (w + 1) as u8;
        self.refresh(i);
    }
}

/// Copies the `size`² square at `(x0, z0)` of a `from_size`² plane into `dst`.
fn copy_square<T: Copy>(src: &[T], dst: &mut [T], from_size: u32, x0: u32, z0: u32, size: u32) {
    let (w, s, x0) = (from_size as usize, size as usize, x0 as usize);
    for (z, row) in dst.chunks_exact_mut(s).enumerate() {
        let at = (z0 as usize + z) * w + x0;
        row.copy_from_slice(&src[at..at + s]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clone (of a chunk large enough for huge pages) holds the same
    /// state, every plane in its place: each plane gets a value no other
    /// plane has, so a plane dropped or copied into another's place differs.
    #[test]
    fn a_clone_is_equal() {
        let mut chunk = TerrainChunk::new([3, -2], 512, 4).unwrap();
        assert!(chunk.push_layer(7, 9, Material::Sand, 0.5));
        assert!(chunk.push_layer(7, 9, Material::Granite, 0.75));
        chunk.age[1] = 4;
        chunk.water[11] = 2.0;
        chunk.sediment[11] = 3.0;
        for d in 0..4 {
            chunk.flux[d][12 + d] = 0.25 + d as f32;
        }
        for d in 0..2 {
            chunk.velocity[d][20 + d] = -1.0 - d as f32;
        }
        assert_eq!(chunk.clone(), chunk);
    }

    /// Merges as removing each merged slot on its own did, shifting the
    /// stack above it down every time.
    fn merge_one_at_a_time(layers: &mut Layers<'_>, i: usize) {
        let mut k = 1;
        while k < layers.len(i) {
            if layers.material[k][i] == layers.material[k - 1][i] {
                let t = layers.thickness[k][i];
                layers.thickness[k - 1][i] += t;
                layers.age[k - 1][i] = layers.age[k - 1][i].min(layers.age[k][i]);
                layers.remove_slot(i, k);
            } else {
                k += 1;
            }
        }
    }

    #[test]
    fn merging_in_one_pass_leaves_every_slot_as_merging_one_at_a_time() {
        const SLOTS: u8 = 6;
        // Every stack of up to six layers of three materials, under a dead
        // slot that must keep what it held.
        for len in 1..SLOTS {
            for code in 0..3u32.pow(u32::from(len)) {
                let mut chunk = TerrainChunk::new([0, 0], 1, SLOTS).unwrap();
                for k in 0..usize::from(SLOTS) {
                    chunk.material[k] = (code / 3u32.pow(k as u32) % 3) as u8;
                    chunk.thickness[k] = 0.1 + k as f32 * 0.37;
                    chunk.age[k] = (7 * k as u16 + 3) % 5;
                }
                chunk.count[0] = len;
                chunk.layers_mut().refresh(0);
                let mut expected = chunk.clone();
                merge_one_at_a_time(&mut expected.layers_mut(), 0);
                chunk.layers_mut().merge_equal(0);
                assert_eq!(chunk, expected, "stack {code} of {len} layers");
            }
        }
    }
}
