//! [`EXTRACT_SYSTEM`]: keeps the runtime's [`TerrainBatch`] in step with the
//! [`TerrainChunk`] entities — ground heights, top materials and water per
//! sample, with each chunk's last row and column taken from its neighbours so
//! patches meet without gaps.
//!
//! A patch is brought up to date row by row in place: each row is read
//! straight from the chunk planes, compared with the patch's and copied only
//! where it changed, so a frame allocates nothing and a still chunk costs a
//! read of its rows.

use std::collections::BTreeMap;

use sylva_runtime::extract::{TerrainBatch, TerrainPatch};
use sylva_runtime::glam::Vec3;
use sylva_runtime::{Access, App, System};

use super::columns::TerrainChunk;
use super::materials::Material;

/// Byte of a bare column (no rock layer) in [`TerrainPatch::material`].
pub const BARE: u8 = 255;

/// Name of the frame system [`install_extraction`] adds.
pub const EXTRACT_SYSTEM: &str = "terrain.extract";

/// Inserts an empty [`TerrainBatch`] and adds the frame system [`EXTRACT_SYSTEM`]
/// for cells `cell_size` metres wide (the scene's `cell_length`). Chunks are
/// re-read only in frames after a simulation step, and a patch is marked dirty
/// only when its planes changed.
pub fn install_extraction(app: &mut App, cell_size: f32) {
    app.world.resources.insert(TerrainBatch::default());
    let mut extracted_at: Option<u64> = None;
    let mut row = Row::default();
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new().read::<TerrainChunk>().write_res::<TerrainBatch>(),
        move |ctx| {
            let tick = ctx.time().tick;
            if extracted_at == Some(tick) {
                return;
            }
            extracted_at = Some(tick);
            let mut query = ctx.query::<&TerrainChunk>();
            let chunks: BTreeMap<[i32; 2], &TerrainChunk> = query.iter().map(|c| (c.coord(), c)).collect();
            fill(&mut ctx.res_mut::<TerrainBatch>(), &chunks, cell_size, &mut row);
        },
    ));
}

/// One row of a patch's samples, built before it is compared.
#[derive(Default)]
struct Row {
    height: Vec<f32>,
    material: Vec<u8>,
    water: Vec<f32>,
}

/// Brings `batch` up to date with `chunks` (ordered by coordinate), `row` a
/// scratch row.
fn fill(batch: &mut TerrainBatch, chunks: &BTreeMap<[i32; 2], &TerrainChunk>, cell_size: f32, row: &mut Row) {
    let mut old: BTreeMap<[i32; 2], TerrainPatch> = batch.patches.drain(..).map(|p| (p.key, p)).collect();
    for (&key, chunk) in chunks {
        let origin = Vec3::new(key[0] as f32, 0.0, key[1] as f32) * (chunk.size() as f32 * cell_size);
        let resolution = chunk.size() + 1;
        let mut patch = old
            .remove(&key)
            .filter(|p| p.resolution == resolution && p.origin == origin && p.cell_size == cell_size)
            .unwrap_or_else(|| empty_patch(key, origin, cell_size, resolution));
        for j in 0..resolution {
            patch_row(key, j, chunks, row);
            patch.dirty |= update_row(&mut patch, j, row);
        }
        batch.patches.push(patch);
    }
    batch.evicted.extend(old.into_keys());
}

/// A patch of `resolution`² samples that differs from every chunk (NaN
/// heights), so its first update writes and dirties every row.
fn empty_patch(key: [i32; 2], origin: Vec3, cell_size: f32, resolution: u32) -> TerrainPatch {
    let samples = (resolution * resolution) as usize;
    TerrainPatch {
        key,
        origin,
        cell_size,
        resolution,
        height: vec![f32::NAN; samples],
        material: vec![BARE; samples],
        water: vec![0.0; samples],
        cover: None,
        dirty: true,
    }
}

/// Copies `row` into row `j` of `patch` where it differs; returns whether it did.
fn update_row(patch: &mut TerrainPatch, j: u32, row: &Row) -> bool {
    let n = patch.resolution as usize;
    let at = j as usize * n..(j as usize + 1) * n;
    // Compared as bits: a NaN sample (a new patch's) differs from itself.
    let same_bits = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    let same = same_bits(&patch.height[at.clone()], &row.height)
        && patch.material[at.clone()] == row.material[..]
        && same_bits(&patch.water[at.clone()], &row.water);
    if !same {
        patch.height[at.clone()].copy_from_slice(&row.height);
        patch.material[at.clone()].copy_from_slice(&row.material);
        patch.water[at].copy_from_slice(&row.water);
    }
    !same
}

/// Row `j` of chunk `key`'s patch into `row`: the chunk's cells plus one
/// more row and column from the neighbours in +x and +z (a neighbour of
/// another size counts as none), clamped to the chunk's own edge where there
/// is none.
fn patch_row(key: [i32; 2], j: u32, chunks: &BTreeMap<[i32; 2], &TerrainChunk>, row: &mut Row) {
    let own = chunks[&key];
    let size = own.size();
    // The chunk `dx` along x and `j / size` along z (the chunk itself for
    // none), with the row of it that row `j` reads.
    let neighbour = |dx: i32| {
        let dz = (j / size) as i32;
        let c = chunks.get(&[key[0] + dx, key[1] + dz]).filter(|c| c.size() == size);
        c.map(|c| (*c, j % size))
    };
    let clamped = (own, j.min(size - 1));
    row.height.clear();
    row.material.clear();
    row.water.clear();
    let (chunk, z) = neighbour(0).unwrap_or(clamped);
    push_cells(chunk, z, 0..size, row);
    let ((chunk, z), x) = neighbour(1).map_or((clamped, size - 1), |c| (c, 0));
    push_cells(chunk, z, x..x + 1, row);
}

/// Cells `xs` of row `z` of `chunk` onto `row`.
fn push_cells(chunk: &TerrainChunk, z: u32, xs: std::ops::Range<u32>, row: &mut Row) {
    let n = chunk.size() as usize;
    let cells = z as usize * n + xs.start as usize..z as usize * n + xs.end as usize;
    row.height.extend_from_slice(&chunk.ground[cells.clone()]);
    row.water.extend_from_slice(&chunk.water[cells.clone()]);
    let planes = chunk.cells();
    row.material.extend(cells.map(|i| {
        let top = usize::from(chunk.count[i]).checked_sub(1);
        top.and_then(|k| Material::from_u8(chunk.material[k * planes + i]))
            .map_or(BARE, |m| m as u8)
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::materials::Material;

    fn chunk(coord: [i32; 2], size: u32, height: f32) -> TerrainChunk {
        let mut c = TerrainChunk::new(coord, size, 4).unwrap();
        for z in 0..size {
            for x in 0..size {
                assert!(c.push_layer(x, z, Material::Sand, height + x as f32));
            }
        }
        c
    }

    fn by_coord(chunks: &[TerrainChunk]) -> BTreeMap<[i32; 2], &TerrainChunk> {
        chunks.iter().map(|c| (c.coord(), c)).collect()
    }

    fn fill_with(batch: &mut TerrainBatch, chunks: &[TerrainChunk]) {
        fill(batch, &by_coord(chunks), 1.0, &mut Row::default());
    }

    /// Sample `(i, j)` of chunk `key`'s patch, by the rule: from the chunk
    /// `(i / size, j / size)` along if it is there with the same size, else
    /// the chunk's own cell clamped to its edge.
    fn sample(chunks: &BTreeMap<[i32; 2], &TerrainChunk>, key: [i32; 2], i: u32, j: u32) -> (f32, u8, f32) {
        let own = chunks[&key];
        let size = own.size();
        let near = chunks.get(&[key[0] + (i / size) as i32, key[1] + (j / size) as i32]);
        let (c, x, z) = match near.filter(|c| c.size() == size) {
            Some(c) => (*c, i % size, j % size),
            None => (own, i.min(size - 1), j.min(size - 1)),
        };
        let cell = c.column(x, z).unwrap();
        let material = cell.top().map_or(BARE, |m| m as u8);
        (cell.ground(), material, cell.water())
    }

    /// Row by row, every sample of every patch follows the rule, also for a
    /// missing diagonal neighbour and a neighbour of another size, and after
    /// the chunks change.
    #[test]
    fn patches_follow_the_sampling_rule() {
        let mut chunks = vec![
            chunk([0, 0], 4, 1.0),
            chunk([1, 0], 4, 10.0),
            chunk([0, 1], 4, 20.0),
            chunk([2, 0], 8, 30.0),
        ];
        chunks[1].water_mut()[5] = 0.5;
        let mut batch = TerrainBatch::default();
        let mut row = Row::default();
        for round in 0..2 {
            if round == 1 {
                chunks[2].water_mut()[3] = 2.0;
                assert!(chunks[0].push_layer(3, 3, Material::Regolith, 0.25));
                for p in &mut batch.patches {
                    p.dirty = false;
                }
            }
            let map = by_coord(&chunks);
            fill(&mut batch, &map, 1.0, &mut row);
            for p in &batch.patches {
                let n = p.resolution;
                for j in 0..n {
                    for i in 0..n {
                        let k = (j * n + i) as usize;
                        let got = (p.height[k], p.material[k], p.water[k]);
                        assert_eq!(got, sample(&map, p.key, i, j), "{:?} ({i}, {j})", p.key);
                    }
                }
            }
        }
        let dirty: Vec<_> = batch.patches.iter().filter(|p| p.dirty).map(|p| p.key).collect();
        assert_eq!(
            dirty,
            vec![[0, 0], [0, 1]],
            "the changed chunks' patches and none other"
        );
    }

    #[test]
    fn patches_share_their_border_with_the_neighbour() {
        let chunks = [chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 10.0)];
        let mut batch = TerrainBatch::default();
        fill_with(&mut batch, &chunks);
        assert_eq!(batch.patches.len(), 2);
        let left = &batch.patches[0];
        assert!(left.is_consistent());
        assert_eq!(left.resolution, 5);
        // Sample (4, 0) of the left patch is cell (0, 0) of the right chunk.
        assert_eq!(left.height[4], 10.0);
        assert_eq!(left.height[3], 4.0);
        // The right patch has no +x neighbour: its edge repeats its own last cell.
        let right = &batch.patches[1];
        assert_eq!(right.origin, Vec3::new(4.0, 0.0, 0.0));
        assert_eq!(right.height[4], right.height[3]);
        assert_eq!(left.material[0], Material::Sand as u8);
    }

    #[test]
    fn unchanged_chunks_stay_clean_and_removed_ones_are_evicted() {
        let mut batch = TerrainBatch::default();
        fill_with(&mut batch, &[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 2.0)]);
        assert!(batch.patches.iter().all(|p| p.dirty));
        for p in &mut batch.patches {
            p.dirty = false;
        }
        fill_with(&mut batch, &[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 2.0)]);
        assert!(batch.patches.iter().all(|p| !p.dirty));
        // Raising the right chunk changes both patches (the left one borrows its border).
        fill_with(&mut batch, &[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 3.0)]);
        assert_eq!(batch.patches.iter().filter(|p| p.dirty).count(), 2);
        fill_with(&mut batch, &[chunk([0, 0], 4, 1.0)]);
        assert_eq!(batch.patches.len(), 1);
        assert_eq!(batch.evicted, vec![[1, 0]]);
    }
}
