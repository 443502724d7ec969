//! Grass blades expanded from a chunk's ground-cover field: the one function a
//! renderer, live grass near walkers and a host without Vulkan all call
//! (docs/design/ecology.md, "Ground cover is a field").

use glam::Vec3;
use sylva_runtime::extract::{CoverRule, GroundCover, TerrainPatch};

use super::chunk::ChunkPayload;
use super::params::WorldGrassSpecies;
use crate::ecology::{CoverField, NO_KIND, blade_hash};

/// One blade of ground cover.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Blade {
    /// Grass species index in the world's grass.
    pub species: u8,
    /// Its world cell.
    pub cell: [i32; 2],
    /// Its index among the cell's blades.
    pub index: u32,
    /// Root, world metres, Y up (on the ground).
    pub root: Vec3,
    /// Rotation about Y, radians.
    pub yaw: f32,
    /// Scale within the species' range.
    pub scale: f32,
}

/// A rectangle of a chunk's cells, `[x0, z0, x1, z1)` in the chunk's own cells.
pub type CellRect = [u32; 4];

/// The rules of the world's grass species `grass` (species `k` is kind `k`) on cells of
/// `cell_size` metres, drawing `share` of each cell's blades: what [`expand_blades`] and a
/// renderer's expansion read (docs/design/grass.md, "Blades from the field on the GPU").
pub fn cover_rules(grass: &[WorldGrassSpecies], cell_size: f32, share: f32) -> Vec<CoverRule> {
    grass
        .iter()
        .enumerate()
        .map(|(k, g)| CoverRule {
            kind: k.min(usize::from(NO_KIND) - 1) as u8,
            share: share.clamp(0.0, 1.0),
            gradient: [
                CoverRule::gradient_of(g.rules.slope.0, cell_size),
                CoverRule::gradient_of(g.rules.slope.1, cell_size),
            ],
            height: [g.rules.height.0, g.rules.height.1],
            materials: if g.rules.materials.is_empty() {
                u32::MAX
            } else {
                g.rules.materials.iter().fold(0, |m, &t| m | 1 << (t as u32))
            },
            scale: [g.scale.0, g.scale.1],
            colour: g.colour,
        })
        .collect()
}

/// `field` packed for a renderer, its cell (0, 0) at world cell `origin_cell`.
pub fn ground_cover(field: &CoverField, origin_cell: [i32; 2]) -> GroundCover {
    GroundCover {
        seed: field.seed,
        origin_cell,
        spacing: field.spacing,
        side: field.side,
        samples: field
            .density
            .iter()
            .zip(&field.kind)
            .map(|(&d, &k)| u32::from(d) | u32::from(k) << 16)
            .collect(),
    }
}

/// `cover` unpacked: the field [`ground_cover`] packed.
pub fn unpack_cover(cover: &GroundCover) -> CoverField {
    CoverField {
        seed: cover.seed,
        spacing: cover.spacing,
        side: cover.side,
        density: cover.samples.iter().map(|&w| w as u16).collect(),
        kind: cover.samples.iter().map(|&w| (w >> 16) as u8).collect(),
    }
}

/// The ground a cover grows on: a chunk's surface planes (`resolution`² samples, row by
/// row) and its cover field, its cell (0, 0) at world cell `origin_cell`.
#[derive(Clone, Copy, Debug)]
pub struct CoverGround<'a> {
    /// World cell of the chunk's cell (0, 0).
    pub origin_cell: [i64; 2],
    /// Samples per side.
    pub resolution: u32,
    /// Side of a cell, metres.
    pub cell_size: f32,
    /// Ground height per sample, metres.
    pub height: &'a [f32],
    /// Water depth per sample, metres.
    pub water: &'a [f32],
    /// Top material per sample.
    pub material: &'a [u8],
    /// The ground cover.
    pub cover: &'a CoverField,
}

impl<'a> CoverGround<'a> {
    /// A generated chunk's ground.
    pub fn of_payload(payload: &'a ChunkPayload) -> Self {
        let n = i64::from(payload.surface.resolution.saturating_sub(1));
        CoverGround {
            origin_cell: [i64::from(payload.coord[0]) * n, i64::from(payload.coord[1]) * n],
            resolution: payload.surface.resolution,
            cell_size: payload.attributes.cell_size,
            height: &payload.surface.height,
            water: &payload.surface.water,
            material: &payload.surface.material,
            cover: &payload.cover,
        }
    }

    /// A drawn patch's ground, with `cover` its [`TerrainPatch::cover`] unpacked
    /// ([`unpack_cover`]); `None` when the patch carries no cover.
    pub fn of_patch(patch: &'a TerrainPatch, cover: &'a CoverField) -> Option<Self> {
        let packed = patch.cover.as_ref()?;
        Some(CoverGround {
            origin_cell: packed.origin_cell.map(i64::from),
            resolution: patch.resolution,
            cell_size: patch.cell_size,
            height: &patch.height,
            water: &patch.water,
            material: &patch.material,
            cover,
        })
    }
}

/// The blades of `payload`'s cells in `cells` (clamped to the chunk), `share`
/// of each cell's, for the world's grass species `grass`: [`expand_ground`] with their
/// [`cover_rules`].
pub fn expand_blades(
    payload: &ChunkPayload,
    grass: &[WorldGrassSpecies],
    cells: CellRect,
    share: f32,
    out: &mut Vec<Blade>,
) {
    let rules = cover_rules(grass, payload.attributes.cell_size, share);
    expand_ground(&CoverGround::of_payload(payload), &rules, cells, out);
}

/// The blades of `ground`'s cells in `cells` (clamped to the chunk) by `rules` (rule `k`
/// for kind `k`), each rule's share of each cell's blades (its first ones, so a smaller
/// share gives a subset; the fraction rounded by the cell's hash), appended to `out` cell
/// by cell, row by row. A blade stands where its cell is dry and passes its kind's rule;
/// its height is the ground's under it. The same inputs give the same blades, bit for
/// bit, on any thread, and on the GPU.
pub fn expand_ground(ground: &CoverGround<'_>, rules: &[CoverRule], cells: CellRect, out: &mut Vec<Blade>) {
    let field = ground.cover;
    let n = ground.resolution.saturating_sub(1);
    let cell_size = ground.cell_size;
    let r = ground.resolution as usize;
    if n == 0 || field.density.is_empty() || cell_size <= 0.0 || ground.height.len() < r * r {
        return;
    }
    let [x0, z0, x1, z1] = [cells[0].min(n), cells[1].min(n), cells[2].min(n), cells[3].min(n)];
    for z in z0..z1 {
        for x in x0..x1 {
            let world = [
                ground.origin_cell[0] + i64::from(x),
                ground.origin_cell[1] + i64::from(z),
            ];
            let cover = field.cell(x, z, world);
            let Some(rule) = rules.get(usize::from(cover.kind)).filter(|_| cover.kind != NO_KIND) else {
                continue;
            };
            let i = z as usize * r + x as usize;
            let corners = [i, i + 1, i + r, i + r + 1];
            if corners.iter().any(|&c| ground.water[c] > 0.0) {
                continue;
            }
            let h = corners.map(|c| ground.height[c]);
            if !rule.allows(h, ground.material[i]) {
                continue;
            }
            let [s0, s1] = rule.scale;
            let round = (blade_hash(field.seed, world, u32::MAX, 0x5eed) >> 8) as f32 / (1u32 << 24) as f32;
            let count = (cover.count as f32 * rule.share + round) as u32;
            for b in 0..count.min(cover.count) {
                let draw = field.blade(world, b);
                let [u, v] = draw.offset;
                let y = (h[0] * (1.0 - u) + h[1] * u) * (1.0 - v) + (h[2] * (1.0 - u) + h[3] * u) * v;
                out.push(Blade {
                    species: cover.kind,
                    cell: [world[0] as i32, world[1] as i32],
                    index: b,
                    root: Vec3::new((world[0] as f32 + u) * cell_size, y, (world[1] as f32 + v) * cell_size),
                    yaw: draw.yaw,
                    scale: s0 + (s1 - s0) * draw.size,
                });
            }
        }
    }
}
