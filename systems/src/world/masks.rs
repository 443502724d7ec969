//! A region's ecology for other tools: one map per attribute and the biome of
//! every sample, as Gaea exports masks, and a table of every tree and shrub.

use super::chunk::{ChunkPayload, WorldGen};
use crate::ecology::{ATTRIBUTES, Attribute, Biomes};
use crate::terrain::{ExportError, encode_image};

/// The attribute and biome maps of a rectangle of chunks: one sample every
/// `sample_cells` cells, +x to the right and +z downward (row 0 the first chunk row).
#[derive(Clone, Debug, PartialEq)]
pub struct Masks {
    /// Samples along x.
    pub width: usize,
    /// Samples along z.
    pub depth: usize,
    /// Metres between samples.
    pub spacing: f32,
    /// World position of sample (0, 0), metres (x, z).
    pub origin: [f32; 2],
    /// Each attribute's samples, row by row ([`Attribute::ALL`] order).
    pub attributes: [Vec<f32>; ATTRIBUTES],
    /// The dominant biome's index per sample.
    pub biome: Vec<u8>,
}

/// One tree or shrub of a region.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceRow {
    /// Its species' name.
    pub species: String,
    /// The name of the dominant biome where it stands.
    pub biome: String,
    /// Root, world metres, Y up.
    pub position: [f32; 3],
    /// Its scale on top of the species' own.
    pub scale: f32,
}

/// The masks of `chunks` (a whole rectangle of `world`'s chunks, any order).
pub fn masks(world: &WorldGen, chunks: &[ChunkPayload]) -> Masks {
    let p = world.params();
    let per = (p.chunk_cells / p.ecology.sample_cells) as usize;
    let first = [0, 1].map(|k| chunks.iter().map(|c| c.coord[k]).min().unwrap_or(0));
    let last = [0, 1].map(|k| chunks.iter().map(|c| c.coord[k]).max().unwrap_or(-1));
    let [width, depth] = [0, 1].map(|k| (i64::from(last[k]) - i64::from(first[k]) + 1).max(0) as usize * per);
    let mut attributes: [Vec<f32>; ATTRIBUTES] = std::array::from_fn(|_| vec![0.0; width * depth]);
    let mut biome = vec![0u8; width * depth];
    let mut memberships = vec![0.0f32; world.biomes().len()];
    for c in chunks {
        let maps = &c.attributes;
        let (ox, oz) = (
            (c.coord[0] - first[0]) as usize * per,
            (c.coord[1] - first[1]) as usize * per,
        );
        for j in 0..per {
            for i in 0..per {
                let at = (j * maps.side as usize) + i;
                let to = (oz + j) * width + ox + i;
                for a in Attribute::ALL {
                    attributes[a as usize][to] = maps.map(a)[at];
                }
                if !memberships.is_empty() {
                    let cell = maps.cell_of(i as u32, j as u32);
                    let (x, z) = (cell[0] as f32 * p.cell_size, cell[1] as f32 * p.cell_size);
                    world.biomes().memberships(&maps.sample(at), x, z, &mut memberships);
                    biome[to] = Biomes::dominant(&memberships) as u8;
                }
            }
        }
    }
    let spacing = p.ecology.sample_cells as f32 * p.cell_size;
    Masks {
        width,
        depth,
        spacing,
        origin: first.map(|f| f as f32 * p.chunk_size()),
        attributes,
        biome,
    }
}

impl Masks {
    /// Attribute `a` as a 16-bit grey PNG: `round((v − lo) / (hi − lo) · 65535)`
    /// over its [`Attribute::mask_range`], clamped.
    pub fn png(&self, a: Attribute) -> Result<Vec<u8>, ExportError> {
        let (lo, hi) = a.mask_range();
        let data: Vec<u8> = self.attributes[a as usize]
            .iter()
            .flat_map(|&v| ((((v - lo) / (hi - lo)).clamp(0.0, 1.0) * 65535.0).round() as u16).to_be_bytes())
            .collect();
        self.encode(png::ColorType::Grayscale, png::BitDepth::Sixteen, &data)
    }

    /// The biome index per sample as an 8-bit grey PNG.
    pub fn biome_png(&self) -> Result<Vec<u8>, ExportError> {
        self.encode(png::ColorType::Grayscale, png::BitDepth::Eight, &self.biome)
    }

    fn encode(&self, colour: png::ColorType, depth: png::BitDepth, data: &[u8]) -> Result<Vec<u8>, ExportError> {
        let size = |n: usize| u32::try_from(n).ok().filter(|&n| n > 0);
        let (Some(w), Some(d)) = (size(self.width), size(self.depth)) else {
            return Err(ExportError::Size(self.width, self.depth));
        };
        encode_image(w, d, colour, depth, data)
    }
}

/// Every tree and shrub of `chunks`, chunk by chunk as given, with its species'
/// name and the dominant biome where it stands.
pub fn instances(world: &WorldGen, chunks: &[ChunkPayload]) -> Vec<InstanceRow> {
    let p = world.params();
    let mut memberships = vec![0.0f32; world.biomes().len()];
    let mut rows = Vec::new();
    for c in chunks {
        for t in &c.trees {
            let (x, z) = (t.position.x, t.position.z);
            let biome = if world.memberships(&c.attributes, x, z, &mut memberships) {
                world.biomes().name(Biomes::dominant(&memberships)).to_owned()
            } else {
                String::new()
            };
            rows.push(InstanceRow {
                species: p.trees[usize::from(t.species)].species.name.clone(),
                biome,
                position: t.position.to_array(),
                scale: t.scale,
            });
        }
    }
    rows
}
