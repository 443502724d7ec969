//! A chunk's ground and water as meshes (docs/design/embedding.md, "Ground meshes").

use glam::{Vec2, Vec3};

use super::{KitError, Mesh, MeshKit};
use crate::ecology::{DENSITY_UNIT, NO_KIND};
use crate::terrain::Material;
use crate::world::ChunkPayload;

/// Levels of detail of the ground: level `l` keeps every `2^l`-th sample (where the chunk's
/// cells divide by it).
pub const GROUND_LEVELS: usize = 4;

/// Colour of the water surface: sRGB RGBA8, translucent.
pub const WATER_COLOUR: [u8; 4] = [28, 70, 96, 170];

/// Water shallower than this, metres, is dry ground.
const WET: f32 = 0.02;

/// Ground fully grown over at this many blades per cell takes the grass colour whole.
const LUSH_BLADES: f32 = 4.0;

/// Grassy ground's colour, sRGB RGBA8.
const GRASS: [u8; 4] = [70, 104, 38, 255];

/// The colour of a sample's top material byte, sRGB RGBA8 (no rock: regolith's, as soil).
fn material_colour(m: u8) -> [u8; 4] {
    let [r, g, b] = crate::terrain::material_colour(Some(Material::from_u8(m).unwrap_or(Material::Regolith)));
    [r, g, b, 255]
}

/// Heights of a chunk's samples and of the ring around them, read by sample index from −1 to
/// `r` on both axes.
struct Heights<'a> {
    r: usize,
    inner: &'a [f32],
    ring: &'a [f32],
}

impl Heights<'_> {
    fn at(&self, x: isize, z: isize) -> f32 {
        let r = self.r as isize;
        if (0..r).contains(&x) && (0..r).contains(&z) {
            return self.inner[z as usize * self.r + x as usize];
        }
        // The ring's layout: row z = −1, row z = r (each from x = −1), column x = −1, column x = r.
        let (rows, column) = (self.r + 2, self.r);
        let i = match (x, z) {
            (_, -1) => (x + 1) as usize,
            (_, z) if z == r => rows + (x + 1) as usize,
            (-1, z) => 2 * rows + z as usize,
            (_, z) => 2 * rows + column + z as usize,
        };
        self.ring[i]
    }

    /// The normal at sample (x, z) by central differences: the same four heights, in the same
    /// order, in whichever chunk the sample is on.
    fn normal(&self, x: isize, z: isize, cell: f32) -> Vec3 {
        Vec3::new(
            self.at(x - 1, z) - self.at(x + 1, z),
            2.0 * cell,
            self.at(x, z - 1) - self.at(x, z + 1),
        )
        .normalize()
    }
}

impl MeshKit {
    /// Checks that `payload`'s ground has this world's shape; returns samples per side.
    fn samples(&self, payload: &ChunkPayload) -> Result<usize, KitError> {
        let s = &payload.surface;
        let r = self.chunk_cells as usize + 1;
        let fits = s.resolution as usize == r
            && s.height.len() == r * r
            && s.material.len() == r * r
            && s.water.len() == r * r
            && s.ring.len() == 4 * r + 4;
        if !fits {
            return Err(KitError::Ground {
                coord: payload.coord,
                found: s.height.len(),
                ring: s.ring.len(),
                expected: r * r,
            });
        }
        Ok(r)
    }

    /// World position of sample (x, z) of chunk `coord` at height `y`: from the sample's world
    /// cell index, so two chunks sharing a sample compute the same bits.
    fn sample_position(&self, coord: [i32; 2], x: usize, z: usize, y: f32) -> Vec3 {
        let n = i64::from(self.chunk_cells);
        let gx = i64::from(coord[0]) * n + x as i64;
        let gz = i64::from(coord[1]) * n + z as i64;
        Vec3::new(gx as f32 * self.cell_size, y, gz as f32 * self.cell_size)
    }

    /// The colour of sample (x, z): its material, grown over by its ground cover.
    fn ground_colour(&self, payload: &ChunkPayload, r: usize, x: usize, z: usize) -> [u8; 4] {
        let rock = material_colour(payload.surface.material[z * r + x]);
        let cover = &payload.cover;
        let spacing = cover.spacing.max(1) as usize;
        let side = cover.side as usize;
        let (cx, cz) = ((x + spacing / 2) / spacing, (z + spacing / 2) / spacing);
        let i = cz.min(side.saturating_sub(1)) * side + cx.min(side.saturating_sub(1));
        let lush = match (cover.density.get(i), cover.kind.get(i)) {
            (Some(&d), Some(&k)) if k != NO_KIND => (f32::from(d) / DENSITY_UNIT as f32 / LUSH_BLADES).min(1.0),
            _ => 0.0,
        };
        let mix = |a: u8, b: u8| (f32::from(a) + (f32::from(b) - f32::from(a)) * lush).round() as u8;
        [
            mix(rock[0], GRASS[0]),
            mix(rock[1], GRASS[1]),
            mix(rock[2], GRASS[2]),
            255,
        ]
    }

    /// Chunk `payload`'s ground at level `level` (every `2^level`-th sample), in world
    /// coordinates, with a skirt hanging from each border so neighbours at other levels leave
    /// no crack. Border vertices and their normals equal the neighbour's bit for bit at the
    /// same level: normals come from central differences over the chunk's ring.
    ///
    /// Fails for a level beyond [`GROUND_LEVELS`] or one the chunk's cells do not divide by,
    /// and for a payload of another world's shape.
    pub fn ground(&self, payload: &ChunkPayload, level: usize) -> Result<Mesh, KitError> {
        let r = self.samples(payload)?;
        let n = r - 1;
        let step = 1usize << level.min(31);
        let last = (0..GROUND_LEVELS)
            .take_while(|&l| n % (1 << l) == 0)
            .last()
            .unwrap_or(0);
        if level > last {
            return Err(KitError::Level { asked: level, last });
        }
        let h = Heights {
            r,
            inner: &payload.surface.height,
            ring: &payload.surface.ring,
        };
        let k = n / step + 1;
        let mut mesh = Mesh::default();
        for z in (0..r).step_by(step) {
            for x in (0..r).step_by(step) {
                let y = h.at(x as isize, z as isize);
                let p = self.sample_position(payload.coord, x, z, y);
                mesh.push_vertex(
                    p,
                    h.normal(x as isize, z as isize, self.cell_size),
                    self.ground_colour(payload, r, x, z),
                    Vec2::new(p.x, p.z) / 64.0,
                );
            }
        }
        let at = |x: usize, z: usize| (z * k + x) as u32;
        for z in 0..k - 1 {
            for x in 0..k - 1 {
                let (a, b, c, d) = (at(x, z), at(x, z + 1), at(x + 1, z + 1), at(x + 1, z));
                mesh.indices.extend_from_slice(&[a, b, c, a, c, d]);
            }
        }
        self.skirts(&mut mesh, k, step);
        Ok(mesh)
    }

    /// A skirt under each border of a `k`² grid of ground vertices, `2 · step` cells plus 2 m
    /// deep, facing out of the chunk.
    fn skirts(&self, mesh: &mut Mesh, k: usize, step: usize) {
        let depth = 2.0 * step as f32 * self.cell_size + 2.0;
        let grid = |x: usize, z: usize| (z * k + x) as u32;
        let edges: [(Vec<u32>, Vec3); 4] = [
            ((0..k).map(|x| grid(x, 0)).collect(), Vec3::NEG_Z),
            ((0..k).map(|x| grid(x, k - 1)).collect(), Vec3::Z),
            ((0..k).map(|z| grid(0, z)).collect(), Vec3::NEG_X),
            ((0..k).map(|z| grid(k - 1, z)).collect(), Vec3::X),
        ];
        for (top, out) in edges {
            let bottom: Vec<u32> = top
                .iter()
                .map(|&t| {
                    let t = t as usize;
                    let p = mesh.positions[t] - Vec3::Y * depth;
                    mesh.push_vertex(p, mesh.normals[t], mesh.colours[t], mesh.uvs[t])
                })
                .collect();
            for i in 0..k - 1 {
                let (a, b, c, d) = (top[i], top[i + 1], bottom[i + 1], bottom[i]);
                let face = (mesh.positions[b as usize] - mesh.positions[a as usize])
                    .cross(mesh.positions[c as usize] - mesh.positions[a as usize]);
                if face.dot(out) >= 0.0 {
                    mesh.indices.extend_from_slice(&[a, b, c, a, c, d]);
                } else {
                    mesh.indices.extend_from_slice(&[a, c, b, a, d, c]);
                }
            }
        }
    }

    /// Chunk `payload`'s water: every cell with a wet corner, at the water's surface (the
    /// ground's height at a dry corner), facing up, in [`WATER_COLOUR`]. Empty for a dry chunk.
    pub fn water(&self, payload: &ChunkPayload) -> Result<Mesh, KitError> {
        let r = self.samples(payload)?;
        let s = &payload.surface;
        let wet = |x: usize, z: usize| s.water[z * r + x] > WET;
        let mut index = vec![u32::MAX; r * r];
        let mut mesh = Mesh::default();
        let mut vertex = |mesh: &mut Mesh, x: usize, z: usize| {
            let i = z * r + x;
            if index[i] == u32::MAX {
                let p = self.sample_position(payload.coord, x, z, s.height[i] + s.water[i]);
                index[i] = mesh.push_vertex(p, Vec3::Y, WATER_COLOUR, Vec2::new(p.x, p.z) / 64.0);
            }
            index[i]
        };
        for z in 0..r - 1 {
            for x in 0..r - 1 {
                if !(wet(x, z) || wet(x + 1, z) || wet(x, z + 1) || wet(x + 1, z + 1)) {
                    continue;
                }
                let a = vertex(&mut mesh, x, z);
                let b = vertex(&mut mesh, x, z + 1);
                let c = vertex(&mut mesh, x + 1, z + 1);
                let d = vertex(&mut mesh, x + 1, z);
                mesh.indices.extend_from_slice(&[a, b, c, a, c, d]);
            }
        }
        Ok(mesh)
    }
}
