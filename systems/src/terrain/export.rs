//! Height and material maps as PNG: 16-bit heights, the thesis's 8-bit grey
//! (eq. 2.1), top materials and a topographic false-colour map.

use std::path::Path;

use super::columns::TerrainChunk;
use super::materials::Material;
use super::params::MAX_TOTAL_CELLS;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `h_max` was not a positive number.
    #[error("maximum height must be a positive number, got {0}")]
    HeightRange(f32),
    /// The map has no cells or is too big for a PNG.
    #[error("cannot export a {0}×{1} map")]
    Size(usize, usize),
    /// The file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The PNG encoder failed.
    #[error("PNG encoding failed: {0}")]
    Png(#[from] png::EncodingError),
}

/// Which picture to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PngKind {
    /// 16-bit grey, `round(h / h_max · 65535)`, clamped.
    Height16,
    /// The thesis's 8-bit grey, eq. 2.1: `INT(h / h_max · 255)`, clamped.
    ThesisGrey8,
    /// RGB colour of each column's top material; water deeper than 0.01 is blue.
    Materials,
    /// RGB topographic palette by height (green → brown → white); water blue.
    FalseColour,
}

/// A rectangular map of ground height, water and top material, row-major
/// (`z·width + x`); exported images have z = 0 in their top row.
#[derive(Clone, Debug, PartialEq)]
pub struct Heightfield {
    /// Cells along x.
    pub width: usize,
    /// Cells along z.
    pub depth: usize,
    /// Rock height per cell.
    pub ground: Vec<f32>,
    /// Water height per cell.
    pub water: Vec<f32>,
    /// Top material per cell (None: no rock).
    pub top: Vec<Option<Material>>,
}

impl Heightfield {
    /// The map of one chunk.
    pub fn from_chunk(chunk: &TerrainChunk) -> Self {
        let n = chunk.size() as usize;
        let mut ground = Vec::new();
        let mut top = Vec::new();
        chunk.ground_heights(&mut ground);
        chunk.top_materials(&mut top);
        Self {
            width: n,
            depth: n,
            ground,
            water: chunk.water().to_vec(),
            top,
        }
    }

    /// All chunks of a world stitched by chunk coordinate (cells of missing
    /// chunks are empty); `None` without chunks, with chunks of unequal size,
    /// or when the bounding box is too large.
    pub fn from_world(world: &hecs::World) -> Option<Self> {
        let mut q = world.query::<&TerrainChunk>();
        let chunks: Vec<&TerrainChunk> = q.iter().collect();
        let size = chunks.first()?.size();
        if chunks.iter().any(|c| c.size() != size) {
            return None;
        }
        let lo = |a: usize| chunks.iter().map(|c| c.coord()[a]).min().unwrap_or(0);
        let hi = |a: usize| chunks.iter().map(|c| c.coord()[a]).max().unwrap_or(0);
        let span = |a: usize| (i64::from(hi(a)) - i64::from(lo(a)) + 1) as u64 * u64::from(size);
        if span(0) * span(1) > MAX_TOTAL_CELLS {
            return None;
        }
        let (width, depth) = (span(0) as usize, span(1) as usize);
        let mut hf = Self {
            width,
            depth,
            ground: vec![0.0; width * depth],
            water: vec![0.0; width * depth],
            top: vec![None; width * depth],
        };
        let n = size as usize;
        for c in &chunks {
            let part = Self::from_chunk(c);
            let ox = (c.coord()[0] - lo(0)) as usize * n;
            let oz = (c.coord()[1] - lo(1)) as usize * n;
            for z in 0..n {
                let dst = (oz + z) * width + ox;
                hf.ground[dst..dst + n].copy_from_slice(&part.ground[z * n..][..n]);
                hf.water[dst..dst + n].copy_from_slice(&part.water[z * n..][..n]);
                hf.top[dst..dst + n].copy_from_slice(&part.top[z * n..][..n]);
            }
        }
        Some(hf)
    }

    /// Highest ground, at least the smallest positive number: white in a heightmap.
    pub fn max_ground(&self) -> f32 {
        self.ground.iter().fold(0.0f32, |m, &h| m.max(h)).max(f32::MIN_POSITIVE)
    }

    /// Highest ground plus water, for choosing `h_max`.
    pub fn max_height(&self) -> f32 {
        self.ground.iter().zip(&self.water).fold(0.0, |m, (g, w)| m.max(g + w))
    }
}

/// Eq. 2.1: the thesis's 8-bit grey value of height `h`.
pub fn thesis_grey(h: f32, h_max: f32) -> u8 {
    (h / h_max * 255.0).clamp(0.0, 255.0) as u8
}

/// The RGB colour of a top material in pictures and meshes (none: black).
pub fn material_colour(m: Option<Material>) -> [u8; 3] {
    match m {
        None => [0, 0, 0],
        Some(Material::Granite) => [150, 120, 125],
        Some(Material::Marble) => [235, 232, 225],
        Some(Material::Slate) => [70, 80, 95],
        Some(Material::Limestone) => [205, 195, 160],
        Some(Material::Sandstone) => [190, 120, 75],
        Some(Material::Sand) => [235, 210, 140],
        Some(Material::Regolith) => [110, 85, 60],
    }
}

const WATER: [u8; 3] = [40, 90, 200];

fn topographic(t: f32) -> [u8; 3] {
    const STOPS: [(f32, [f32; 3]); 5] = [
        (0.0, [30.0, 110.0, 40.0]),
        (0.35, [120.0, 170.0, 70.0]),
        (0.6, [150.0, 110.0, 60.0]),
        (0.85, [120.0, 100.0, 90.0]),
        (1.0, [250.0, 250.0, 250.0]),
    ];
    let t = t.clamp(0.0, 1.0);
    let k = STOPS.iter().rposition(|s| s.0 <= t).unwrap_or(0).min(STOPS.len() - 2);
    let (a, b) = (STOPS[k], STOPS[k + 1]);
    let f = (t - a.0) / (b.0 - a.0);
    std::array::from_fn(|c| (a.1[c] + (b.1[c] - a.1[c]) * f) as u8)
}

/// Encodes `hf` as a PNG of `kind`; heights are scaled by `h_max`.
pub fn encode_png(hf: &Heightfield, kind: PngKind, h_max: f32) -> Result<Vec<u8>, ExportError> {
    if !(h_max.is_finite() && h_max > 0.0) {
        return Err(ExportError::HeightRange(h_max));
    }
    let cells = hf.width * hf.depth;
    let (w, d) = (u32::try_from(hf.width), u32::try_from(hf.depth));
    let (Ok(w), Ok(d)) = (w, d) else {
        return Err(ExportError::Size(hf.width, hf.depth));
    };
    if cells == 0 || hf.ground.len() != cells || hf.water.len() != cells || hf.top.len() != cells {
        return Err(ExportError::Size(hf.width, hf.depth));
    }
    // Standing water shows as water whatever lies beneath it.
    let rgb_unless_wet = |colour: &dyn Fn(usize) -> [u8; 3]| -> Vec<u8> {
        (0..cells)
            .flat_map(|i| if hf.water[i] > 0.01 { WATER } else { colour(i) })
            .collect()
    };
    let (colour, depth, data): (png::ColorType, png::BitDepth, Vec<u8>) = match kind {
        PngKind::Height16 => (
            png::ColorType::Grayscale,
            png::BitDepth::Sixteen,
            hf.ground
                .iter()
                .flat_map(|&h| (((h / h_max).clamp(0.0, 1.0) * 65535.0).round() as u16).to_be_bytes())
                .collect(),
        ),
        PngKind::ThesisGrey8 => (
            png::ColorType::Grayscale,
            png::BitDepth::Eight,
            hf.ground.iter().map(|&h| thesis_grey(h, h_max)).collect(),
        ),
        PngKind::Materials => (
            png::ColorType::Rgb,
            png::BitDepth::Eight,
            rgb_unless_wet(&|i| material_colour(hf.top[i])),
        ),
        PngKind::FalseColour => (
            png::ColorType::Rgb,
            png::BitDepth::Eight,
            rgb_unless_wet(&|i| topographic(hf.ground[i] / h_max)),
        ),
    };
    encode_image(w, d, colour, depth, &data)
}

/// `data` (rows top to bottom) as a PNG of `width × height` pixels.
pub(crate) fn encode_image(
    width: u32,
    height: u32,
    colour: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(colour);
        enc.set_depth(depth);
        let mut writer = enc.write_header()?;
        writer.write_image_data(data)?;
        writer.finish()?;
    }
    Ok(out)
}

/// Writes `hf` as a PNG of `kind` to `path`: encoded in memory, then written as a file the
/// user named ([`write_output`](sylva_runtime::framed::write_output): a regular file replaced
/// whole, a FIFO written through, a link's file replaced).
pub fn write_png(path: &Path, hf: &Heightfield, kind: PngKind, h_max: f32) -> Result<(), ExportError> {
    let bytes = encode_png(hf, kind, h_max)?;
    sylva_runtime::framed::write_output(path, &bytes).map_err(|source| ExportError::Io {
        path: path.display().to_string(),
        source,
    })
}
