//! [`EXTRACT_SYSTEM`]: keeps the runtime's [`TerrainBatch`] in step with the
//! [`TerrainChunk`] entities — ground heights, top materials and water per
//! sample, with each chunk's last row and column taken from its neighbours so
//! patches meet without gaps.

use std::collections::BTreeMap;

use sylva_runtime::extract::{TerrainBatch, TerrainPatch};
use sylva_runtime::glam::Vec3;
use sylva_runtime::{Access, App, System};

use super::columns::TerrainChunk;

/// Byte of a bare column (no rock layer) in [`TerrainPatch::material`].
pub const BARE: u8 = 255;

/// Name of the frame system [`install_extraction`] adds.
pub const EXTRACT_SYSTEM: &str = "terrain.extract";

/// One chunk's planes at cell resolution.
struct Planes {
    size: u32,
    ground: Vec<f32>,
    material: Vec<u8>,
    water: Vec<f32>,
}

impl Planes {
    fn of(chunk: &TerrainChunk) -> Planes {
        let mut ground = Vec::new();
        chunk.ground_heights(&mut ground);
        let mut top = Vec::new();
        chunk.top_materials(&mut top);
        Planes {
            size: chunk.size(),
            ground,
            material: top.iter().map(|m| m.map_or(BARE, |m| m as u8)).collect(),
            water: chunk.water().to_vec(),
        }
    }
}

/// Inserts an empty [`TerrainBatch`] and adds the frame system [`EXTRACT_SYSTEM`]
/// for cells `cell_size` metres wide (the scene's `cell_length`). Chunks are
/// re-read only in frames after a simulation step, and a patch is marked dirty
/// only when its planes changed.
pub fn install_extraction(app: &mut App, cell_size: f32) {
    app.world.resources.insert(TerrainBatch::default());
    let mut extracted_at: Option<u64> = None;
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new().read::<TerrainChunk>().write_res::<TerrainBatch>(),
        move |ctx| {
            let tick = ctx.time().tick;
            if extracted_at == Some(tick) {
                return;
            }
            extracted_at = Some(tick);
            let mut planes = BTreeMap::new();
            for chunk in ctx.query::<&TerrainChunk>().iter() {
                planes.insert(chunk.coord(), Planes::of(chunk));
            }
            fill(&mut ctx.res_mut::<TerrainBatch>(), &planes, cell_size);
        },
    ));
}

/// Brings `batch` up to date with `chunks` (ordered by coordinate).
fn fill(batch: &mut TerrainBatch, chunks: &BTreeMap<[i32; 2], Planes>, cell_size: f32) {
    let mut old: BTreeMap<[i32; 2], TerrainPatch> = batch.patches.drain(..).map(|p| (p.key, p)).collect();
    for (&key, planes) in chunks {
        let fresh = patch(key, planes, chunks, cell_size);
        match old.remove(&key) {
            Some(mut existing) => {
                let changed = existing.resolution != fresh.resolution
                    || existing.origin != fresh.origin
                    || existing.height != fresh.height
                    || existing.material != fresh.material
                    || existing.water != fresh.water;
                if changed {
                    existing = TerrainPatch { dirty: true, ..fresh };
                }
                batch.patches.push(existing);
            }
            None => batch.patches.push(fresh),
        }
    }
    batch.evicted.extend(old.into_keys());
}

/// The patch of chunk `key`: its cells plus one more row and column from the
/// neighbours in +x and +z (clamped to its own edge where there is none).
fn patch(key: [i32; 2], planes: &Planes, chunks: &BTreeMap<[i32; 2], Planes>, cell_size: f32) -> TerrainPatch {
    let size = planes.size;
    let n = size + 1;
    let mut p = TerrainPatch {
        key,
        origin: Vec3::new(key[0] as f32, 0.0, key[1] as f32) * (size as f32 * cell_size),
        cell_size,
        resolution: n,
        height: Vec::with_capacity((n * n) as usize),
        material: Vec::with_capacity((n * n) as usize),
        water: Vec::with_capacity((n * n) as usize),
        dirty: true,
    };
    for j in 0..n {
        for i in 0..n {
            let (dx, dz) = ((i / size) as i32, (j / size) as i32);
            let neighbour = chunks.get(&[key[0] + dx, key[1] + dz]).filter(|c| c.size == size);
            let (source, x, z) = match neighbour {
                Some(c) => (c, i % size, j % size),
                None => (planes, i.min(size - 1), j.min(size - 1)),
            };
            let k = (z * size + x) as usize;
            p.height.push(source.ground[k]);
            p.material.push(source.material[k]);
            p.water.push(source.water[k]);
        }
    }
    p
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

    fn planes(chunks: &[TerrainChunk]) -> BTreeMap<[i32; 2], Planes> {
        chunks.iter().map(|c| (c.coord(), Planes::of(c))).collect()
    }

    #[test]
    fn patches_share_their_border_with_the_neighbour() {
        let chunks = planes(&[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 10.0)]);
        let mut batch = TerrainBatch::default();
        fill(&mut batch, &chunks, 1.0);
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
        fill(
            &mut batch,
            &planes(&[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 2.0)]),
            1.0,
        );
        assert!(batch.patches.iter().all(|p| p.dirty));
        for p in &mut batch.patches {
            p.dirty = false;
        }
        fill(
            &mut batch,
            &planes(&[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 2.0)]),
            1.0,
        );
        assert!(batch.patches.iter().all(|p| !p.dirty));
        // Raising the right chunk changes both patches (the left one borrows its border).
        fill(
            &mut batch,
            &planes(&[chunk([0, 0], 4, 1.0), chunk([1, 0], 4, 3.0)]),
            1.0,
        );
        assert_eq!(batch.patches.iter().filter(|p| p.dirty).count(), 2);
        fill(&mut batch, &planes(&[chunk([0, 0], 4, 1.0)]), 1.0);
        assert_eq!(batch.patches.len(), 1);
        assert_eq!(batch.evicted, vec![[1, 0]]);
    }
}
