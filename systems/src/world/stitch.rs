//! A rectangle of a world's chunks generated chunk by chunk and stitched into
//! one map: what `sylva terrain --region` writes and measures.

use rayon::prelude::*;
use serde::Serialize;

use super::chunk::{ChunkPayload, RiverCrossing, WorldGen};
use super::packed;
use crate::terrain::Heightfield;
use crate::terrain::basin::{Drainage, depression_depths, drainage};

/// Most cells a stitched map may have (8192²).
pub const MAX_STITCHED_CELLS: u64 = 1 << 26;

/// Chunks `first..=last` of a world as one map.
#[derive(Clone, Debug)]
pub struct Stitched {
    /// Ground, water depth and top material; z = 0 is the row of `first`.
    pub field: Heightfield,
    /// The river measures of the stitched region.
    pub report: RegionReport,
    /// The chunks, row by row from `first`.
    pub chunks: Vec<ChunkPayload>,
}

/// What `terrain --region` reports (the report's `terrain` section).
#[derive(Clone, Debug, Serialize)]
pub struct RegionReport {
    /// First and last chunk, inclusive: `[x0, z0, x1, z1]`.
    pub region: [i32; 4],
    /// Chunks generated.
    pub chunks: usize,
    /// Cells of the map.
    pub cells: u64,
    /// Side of a cell, metres.
    pub cell_size: f32,
    /// Height of white in the 16-bit heightmap, metres (the highest ground).
    pub height_scale: f32,
    /// Drainage measures of the water surface (ground plus water); channels
    /// drain at least the world's `river_area`, or 0.1 km² without basins.
    pub drainage: Option<Drainage>,
    /// River crossings of inner chunk borders found on one side only, or with
    /// drainage areas more than 1 % apart.
    pub border_mismatches: u32,
    /// Crossings of inner chunk borders matched on both sides.
    pub border_crossings: u32,
    /// Deepest closed depression of the water surface under a river (a wet
    /// cell above the sea), metres; 0 without rivers.
    pub river_depression_max: f32,
}

/// Why a region cannot be stitched.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StitchError {
    /// The last chunk lies before the first.
    #[error("the region's last chunk ({0}, {1}) lies before its first")]
    Empty(i32, i32),
    /// Too many cells.
    #[error("the region has {0} cells, over the limit of {MAX_STITCHED_CELLS}")]
    TooLarge(u128),
}

/// Generates chunks `first..=last` of `world` on the current rayon pool,
/// calling `done` after each, and stitches them.
pub fn stitch(
    world: &WorldGen,
    first: [i32; 2],
    last: [i32; 2],
    done: impl Fn() + Sync,
) -> Result<Stitched, StitchError> {
    if last[0] < first[0] || last[1] < first[1] {
        return Err(StitchError::Empty(last[0], last[1]));
    }
    let n = world.params().chunk_cells as usize;
    let span = [0, 1].map(|a| (i64::from(last[a]) - i64::from(first[a]) + 1) as u64);
    // Wide: the spans of a region across the i32 range multiply past u64.
    let wide = u128::from(span[0]) * u128::from(span[1]) * (n as u128).pow(2);
    if wide > u128::from(MAX_STITCHED_CELLS) {
        return Err(StitchError::TooLarge(wide));
    }
    let cells = wide as u64;
    let coords: Vec<[i32; 2]> = (first[1]..=last[1])
        .flat_map(|z| (first[0]..=last[0]).map(move |x| [x, z]))
        .collect();
    let chunks: Vec<ChunkPayload> = coords
        .par_iter()
        .map(|&c| {
            let chunk = world.chunk(c);
            done();
            chunk
        })
        .collect();
    let field = ground_field(&chunks, first, last, n);
    let (width, depth) = (field.width, field.depth);
    let surface: Vec<f32> = field.ground.iter().zip(&field.water).map(|(g, w)| g + w).collect();
    let p = world.params();
    // A stored sea cell's ground and water are each on their own step, so its
    // surface is the sea level only within those steps (docs/design/chunk-store.md).
    let sea = p.terrain.basins.as_ref().map_or(f32::NEG_INFINITY, |b| {
        b.sea_level + packed::HEIGHT_STEP + packed::WATER_STEP
    });
    let river_depression_max = depression_depths(&surface, width, depth).map_or(0.0, |d| {
        d.iter()
            .zip(&field.water)
            .zip(&surface)
            .filter(|((_, w), s)| **w > 0.0 && **s > sea)
            .fold(0.0f32, |m, ((d, _), _)| m.max(*d))
    });
    let channel = p.terrain.basins.as_ref().map_or(0.1, |b| b.river_area) * 1e6;
    let (mismatches, crossings) = borders(&chunks, &coords, p.chunk_size(), p.cell_size);
    let report = RegionReport {
        region: [first[0], first[1], last[0], last[1]],
        chunks: chunks.len(),
        cells,
        cell_size: p.cell_size,
        height_scale: field.max_ground(),
        drainage: drainage(&surface, width, depth, p.cell_size, channel),
        border_mismatches: mismatches,
        border_crossings: crossings,
        river_depression_max,
    };
    Ok(Stitched { field, report, chunks })
}

/// The ground and water of `chunks` (of `n` cells each) stitched into one map of chunks
/// `first..=last`: cells of chunks not given are empty, and chunks outside or of another
/// size are left out. The map takes 9 bytes per cell, which the caller bounds ([`stitch`]
/// refuses more than [`MAX_STITCHED_CELLS`]).
///
/// ```
/// use sylva_systems::world::{WorldGen, WorldParams, ground_field};
/// let world = WorldGen::new(WorldParams { chunk_cells: 16, ..WorldParams::default() }, 1);
/// let chunks = [world.chunk([0, 0]), world.chunk([1, 0])];
/// let field = ground_field(&chunks, [0, 0], [1, 0], 16);
/// assert_eq!((field.width, field.depth), (32, 16));
/// ```
pub fn ground_field(chunks: &[ChunkPayload], first: [i32; 2], last: [i32; 2], n: usize) -> Heightfield {
    let span = |a: usize| (i64::from(last[a]) - i64::from(first[a]) + 1).max(0) as usize;
    let (width, depth) = (span(0) * n, span(1) * n);
    let mut field = Heightfield {
        width,
        depth,
        ground: vec![0.0; width * depth],
        water: vec![0.0; width * depth],
        top: vec![None; width * depth],
    };
    let fits = |c: &&ChunkPayload| {
        (0..2).all(|a| (first[a]..=last[a]).contains(&c.coord[a]))
            && c.terrain.size() as usize == n
            && c.surface.water.len() == (n + 1) * (n + 1)
    };
    for c in chunks.iter().filter(fits) {
        let part = Heightfield::from_chunk(&c.terrain);
        let ox = (i64::from(c.coord[0]) - i64::from(first[0])) as usize * n;
        let oz = (i64::from(c.coord[1]) - i64::from(first[1])) as usize * n;
        let r = n + 1;
        for z in 0..n {
            let dst = (oz + z) * width + ox;
            field.ground[dst..dst + n].copy_from_slice(&part.ground[z * n..][..n]);
            field.water[dst..dst + n].copy_from_slice(&c.surface.water[z * r..][..n]);
            field.top[dst..dst + n].copy_from_slice(&part.top[z * n..][..n]);
        }
    }
    field
}

/// Unmatched and matched river crossings over the inner borders of `chunks`
/// (in the order of `coords`).
fn borders(chunks: &[ChunkPayload], coords: &[[i32; 2]], size: f32, cell: f32) -> (u32, u32) {
    let at = |c: [i32; 2]| coords.iter().position(|&x| x == c).map(|k| &chunks[k]);
    let (mut mismatches, mut matched) = (0, 0);
    for a in chunks {
        for (axis, step) in [(0usize, [1, 0]), (1, [0, 1])] {
            let Some(b) = at([a.coord[0] + step[0], a.coord[1] + step[1]]) else {
                continue;
            };
            let line = (a.coord[axis] + 1) as f32 * size;
            let on = |r: &&RiverCrossing| (r.at[axis] - line).abs() <= 1e-3 * size;
            let (xa, xb): (Vec<_>, Vec<_>) = (
                a.rivers.iter().filter(on).collect(),
                b.rivers.iter().filter(on).collect(),
            );
            let twin = |r: &RiverCrossing, others: &[&RiverCrossing]| {
                others
                    .iter()
                    .any(|s| s.at.distance(r.at) <= cell && (s.area - r.area).abs() <= 0.01 * r.area)
            };
            for r in &xa {
                if twin(r, &xb) {
                    matched += 1;
                } else {
                    mismatches += 1;
                }
            }
            mismatches += xb.iter().filter(|r| !twin(r, &xa)).count() as u32;
        }
    }
    (mismatches, matched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::WorldParams;

    #[test]
    fn a_region_across_the_i32_range_is_refused_before_any_chunk() {
        let world = WorldGen::new(WorldParams::default(), 1);
        let refused = stitch(&world, [i32::MIN; 2], [i32::MAX; 2], || panic!("no chunk is made"));
        assert!(matches!(refused, Err(StitchError::TooLarge(c)) if c > u128::from(u64::MAX)));
    }
}
