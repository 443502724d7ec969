//! Baking: an N × N field, k blades per cell at seeded random spots, a detected
//! warm-up, one frame every m steps, T frames with a cross-faded loop seam,
//! stored per non-root particle as a 3D texture (u, v = cell, w = frame).

use glam::Vec3;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use sylva_runtime::rng::{hash_words, unit_f32};
use sylva_runtime::{FieldError, Validate};
use xxhash_rust::xxh3::xxh3_64;

use super::blade::{BladeError, BladeShape};
use super::dynamics::{BladeKernel, Dynamics};
use super::field::BladeField;
use super::wind::WindField;

/// Texel layout of the baked textures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TextureLayout {
    /// RGBA16F: x, y, z displacement in metres as half floats, A = 0 (8 bytes per texel).
    Rgba16F,
    /// The thesis's RGB8: each axis `128 + displacement / scale`, clipped to 0..=255 (3 bytes per texel).
    ThesisRgb8,
}

impl TextureLayout {
    /// Bytes per texel.
    pub fn texel_bytes(self) -> usize {
        match self {
            TextureLayout::Rgba16F => 8,
            TextureLayout::ThesisRgb8 => 3,
        }
    }
}

/// Bake settings (project choices where the thesis is silent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BakeSettings {
    /// Cells per side N (= texture width and height; default 16).
    pub cells: u32,
    /// Cell size, metres (default 0.5).
    pub cell_size: f32,
    /// Blades per cell k, averaged into one texel (default 1).
    pub instances: u32,
    /// Steps between recorded frames m (default 24: 10 frames per second at 1/240 s).
    pub record_every: u32,
    /// Frames T in the loop (default 64).
    pub frames: u32,
    /// Warm-up ends when the mean speed changes less than this fraction between two 1-second windows (default 0.1)…
    pub settle_tolerance: f32,
    /// …or after this many seconds at most (default 20).
    pub max_warmup_seconds: f32,
    /// Texel layout (default RGBA16F).
    pub layout: TextureLayout,
    /// Metres per RGB8 unit (default 0.002: ±25 cm).
    pub rgb8_scale: f32,
    /// Seed of blade positions and initial offsets.
    pub seed: u64,
}

impl Default for BakeSettings {
    fn default() -> Self {
        BakeSettings {
            cells: 16,
            cell_size: 0.5,
            instances: 1,
            record_every: 24,
            frames: 64,
            settle_tolerance: 0.1,
            max_warmup_seconds: 20.0,
            layout: TextureLayout::Rgba16F,
            rgb8_scale: 0.002,
            seed: 0,
        }
    }
}

/// Most cells per side N (one blade per cell already makes [`MAX_BAKE_BLADES`]).
pub const MAX_BAKE_CELLS: u32 = 1024;
/// Most frames T of a baked loop (410 s at the default 10 frames per second).
pub const MAX_BAKE_FRAMES: u32 = 4096;
/// Most blades per cell k.
pub const MAX_BAKE_INSTANCES: u32 = 64;
/// Most blades one bake simulates, N² × k (about 1 GB of blade state at 16 particles).
pub const MAX_BAKE_BLADES: u64 = 1 << 20;
/// Most texels per link texture, N² × T (such as 1024² × 16 or 128² × 1024): with at most 15
/// links a bake records at most 4.5 GB and keeps at most 2 GB of RGBA16F textures.
pub const MAX_BAKE_TEXELS: u64 = 1 << 24;
/// Most steps between recorded frames m (42 s at the default step).
pub const MAX_RECORD_EVERY: u32 = 10_000;
/// Longest warm-up, seconds of simulated time.
pub const MAX_WARMUP_SECONDS: f32 = 600.0;

impl Validate for BakeSettings {
    /// Checks ranges, and the sizes the bake allocates and steps by, each with its bound in the
    /// message: an unchecked `frames: 4294967295` once sized the texture past memory and aborted.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check((1..=MAX_BAKE_CELLS).contains(&self.cells), "cells", || {
            format!("must be within 1..={MAX_BAKE_CELLS}, got {}", self.cells)
        })?;
        FieldError::check((2..=MAX_BAKE_FRAMES).contains(&self.frames), "frames", || {
            format!("must be within 2..={MAX_BAKE_FRAMES}, got {}", self.frames)
        })?;
        FieldError::check(
            (1..=MAX_RECORD_EVERY).contains(&self.record_every),
            "record_every",
            || format!("must be within 1..={MAX_RECORD_EVERY}, got {}", self.record_every),
        )?;
        FieldError::check((1..=MAX_BAKE_INSTANCES).contains(&self.instances), "instances", || {
            format!("must be within 1..={MAX_BAKE_INSTANCES}, got {}", self.instances)
        })?;
        let cells = u64::from(self.cells).pow(2);
        let blades = cells * u64::from(self.instances);
        FieldError::check(blades <= MAX_BAKE_BLADES, "instances", || {
            format!("cells² × instances must be at most {MAX_BAKE_BLADES} blades, got {blades}")
        })?;
        let texels = cells * u64::from(self.frames);
        FieldError::check(texels <= MAX_BAKE_TEXELS, "frames", || {
            format!("cells² × frames must be at most {MAX_BAKE_TEXELS} texels per link, got {texels}")
        })?;
        for (field, v) in [("cell_size", self.cell_size), ("rgb8_scale", self.rgb8_scale)] {
            FieldError::check(v > 0.0 && v.is_finite(), field, || {
                format!("must be positive and finite, got {v}")
            })?;
        }
        FieldError::check(
            (0.0..=MAX_WARMUP_SECONDS).contains(&self.max_warmup_seconds),
            "max_warmup_seconds",
            || {
                format!(
                    "must be within 0..={MAX_WARMUP_SECONDS}, got {}",
                    self.max_warmup_seconds
                )
            },
        )?;
        FieldError::check(
            self.settle_tolerance >= 0.0 && self.settle_tolerance.is_finite(),
            "settle_tolerance",
            || format!("must be finite and ≥ 0, got {}", self.settle_tolerance),
        )
    }
}

/// Why a bake or a baked file failed.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// Bad blade shape.
    #[error("blade: {0}")]
    Blade(#[from] BladeError),
    /// Bad wind, dynamics or bake settings; the path is that of a grass scene section
    /// (`wind.winds[0].spacing`, `dynamics.spring`, `bake.cells`).
    #[error("{}: {}", .0.dotted(), .0.message)]
    Settings(#[from] FieldError),
    /// The file is not a baked grass file of this version, or is damaged.
    #[error("baked grass file: {0}")]
    File(String),
    /// Reading or writing failed.
    #[error("baked grass file: {0}")]
    Io(#[from] std::io::Error),
}

/// Baked motion of one plant type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BakedGrass {
    /// Cells per side N.
    pub cells: u32,
    /// Cell size, metres.
    pub cell_size: f32,
    /// Frames T.
    pub frames: u32,
    /// Non-root particles (one 3D texture each).
    pub links: u32,
    /// Seconds between frames.
    pub frame_seconds: f32,
    /// Texel layout of `textures`.
    pub layout: TextureLayout,
    /// Metres per unit in the RGB8 layout.
    pub rgb8_scale: f32,
    /// Steps spent warming up.
    pub warmup_steps: u64,
    /// The textures: `[link][frame][cell z][cell x]` texels, `layout` bytes each.
    pub textures: Vec<u8>,
}

/// The texture bytes of `cells² × links × frames` texels in `layout` (the thesis
/// RGB8 table: 3 B × 10 frames = 30 B per blade part); `None` when that does not fit a `usize`
/// (sizes read from a file, or settings that skipped validation).
pub fn texture_bytes(cells: u32, links: u32, frames: u32, layout: TextureLayout) -> Option<usize> {
    [cells, links, frames]
        .into_iter()
        .try_fold(cells as usize, |bytes, n| bytes.checked_mul(n as usize))?
        .checked_mul(layout.texel_bytes())
}

/// The root of blade `instance` in cell (cx, cz): a seeded random spot inside the cell.
pub fn blade_root(settings: &BakeSettings, cx: u32, cz: u32, instance: u32) -> Vec3 {
    let h = hash_words(&[settings.seed, cx as u64, cz as u64, instance as u64, 0x726f6f74]);
    let (fx, fz) = (unit_f32(h), unit_f32(h << 24));
    Vec3::new(
        (cx as f32 + fx) * settings.cell_size,
        0.0,
        (cz as f32 + fz) * settings.cell_size,
    )
}

fn encode(layout: TextureLayout, scale: f32, d: Vec3, out: &mut Vec<u8>) {
    match layout {
        TextureLayout::Rgba16F => {
            for c in [d.x, d.y, d.z, 0.0] {
                out.extend_from_slice(&half::f16::from_f32(c).to_le_bytes());
            }
        }
        TextureLayout::ThesisRgb8 => {
            for c in [d.x, d.y, d.z] {
                out.push((128.0 + (c / scale).round()).clamp(0.0, 255.0) as u8);
            }
        }
    }
}

/// Decodes one texel (the shader's fetch).
pub fn decode(layout: TextureLayout, scale: f32, bytes: &[u8]) -> Vec3 {
    match layout {
        TextureLayout::Rgba16F => {
            let c = |i: usize| half::f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f32();
            Vec3::new(c(0), c(1), c(2))
        }
        TextureLayout::ThesisRgb8 => {
            Vec3::new(
                bytes[0] as f32 - 128.0,
                bytes[1] as f32 - 128.0,
                bytes[2] as f32 - 128.0,
            ) * scale
        }
    }
}

/// Bakes `shape` under `wind`. Returns the baked textures and the wall time in ms.
pub fn bake(
    shape: &BladeShape,
    dynamics: &Dynamics,
    wind: &WindField,
    settings: &BakeSettings,
) -> Result<(BakedGrass, f64), BakeError> {
    shape.validate()?;
    wind.validate().map_err(|e| e.within("wind"))?;
    dynamics.validate().map_err(|e| e.within("dynamics"))?;
    settings.validate().map_err(|e| e.within("bake"))?;
    let s = settings;
    let start = Instant::now();
    // Validated: at most MAX_BAKE_BLADES blades, so these products fit.
    let mut roots = Vec::with_capacity(s.cells as usize * s.cells as usize * s.instances as usize);
    for cz in 0..s.cells {
        for cx in 0..s.cells {
            for k in 0..s.instances {
                roots.push(blade_root(s, cx, cz, k));
            }
        }
    }
    let mut field = BladeField::new(
        BladeKernel::new(shape, dynamics),
        roots,
        s.seed,
        dynamics.initial_offset,
    );
    let warmup_steps = warm_up(&mut field, wind, dynamics.step_seconds, s);
    let seam = (s.frames / 2).max(1) as usize;
    let total = s.frames as usize + seam;
    let cells = s.cells as usize * s.cells as usize;
    let n = field.kernel.len();
    let links = n - 1;
    let mut rec = vec![Vec3::ZERO; total * cells * links];
    for f in 0..total {
        field.advance(wind, s.record_every as u64);
        record(
            &field,
            s.instances as usize,
            &mut rec[f * cells * links..(f + 1) * cells * links],
        );
    }
    let frames = s.frames as usize;
    let at = |f: usize, c: usize, l: usize| rec[(f * cells + c) * links + l];
    let bytes = texture_bytes(s.cells, links as u32, s.frames, s.layout)
        .ok_or_else(|| FieldError::new("bake.frames", "the textures do not fit in memory"))?;
    let mut textures = Vec::with_capacity(bytes);
    for l in 0..links {
        for f in 0..frames {
            for c in 0..cells {
                // The first T/2 frames fade (smoothstep) from the frames recorded after the loop's
                // end into their own, so frame T−1 → frame 0 is a real consecutive step.
                let d = if f < seam {
                    let u = f as f32 / seam as f32;
                    let w = u * u * (3.0 - 2.0 * u);
                    at(frames + f, c, l) * (1.0 - w) + at(f, c, l) * w
                } else {
                    at(f, c, l)
                };
                encode(s.layout, s.rgb8_scale, d, &mut textures);
            }
        }
    }
    let baked = BakedGrass {
        cells: s.cells,
        cell_size: s.cell_size,
        frames: s.frames,
        links: links as u32,
        frame_seconds: s.record_every as f32 * dynamics.step_seconds,
        layout: s.layout,
        rgb8_scale: s.rgb8_scale,
        warmup_steps,
        textures,
    };
    Ok((baked, start.elapsed().as_secs_f64() * 1e3))
}

/// Steps between two readings of the mean speed during warm-up: reading it is a
/// full pass over the field, so it is sampled rather than taken every step.
const SPEED_EVERY: u64 = 8;

/// Steps until the mean speed over one second changes by less than the tolerance
/// between consecutive seconds (the swing-in of Fig. 96 is over), or the cap. The
/// mean over a second is taken from readings every [`SPEED_EVERY`] steps.
fn warm_up(field: &mut BladeField, wind: &WindField, h: f32, s: &BakeSettings) -> u64 {
    let window = (1.0 / h).ceil().max(1.0) as u64;
    let cap = (s.max_warmup_seconds / h).ceil() as u64;
    let mut prev: Option<f32> = None;
    while field.steps < cap {
        let (mut sum, mut readings, mut done) = (0.0, 0u32, 0);
        while done < window {
            let k = SPEED_EVERY.min(window - done);
            field.advance(wind, k);
            done += k;
            sum += field.mean_speed();
            readings += 1;
        }
        let mean = sum / readings as f32;
        if let Some(p) = prev
            && (mean - p).abs() <= s.settle_tolerance * p.max(mean).max(1e-6)
        {
            break;
        }
        prev = Some(mean);
    }
    field.steps
}

/// Mean displacement from rest per cell and link into `out` (`[cell][link]`).
fn record(field: &BladeField, k: usize, out: &mut [Vec3]) {
    let n = field.kernel.len();
    let rest = field.kernel.rest();
    let links = n - 1;
    for (c, cell) in out.chunks_mut(links).enumerate() {
        for (l, o) in cell.iter_mut().enumerate() {
            let mut sum = Vec3::ZERO;
            for b in c * k..(c + 1) * k {
                sum += field.x(b, l + 1) - rest[l + 1];
            }
            *o = sum / k as f32;
        }
    }
}

const MAGIC: &[u8; 8] = b"SYLVAGRS";
/// Version of the baked file format.
pub const FILE_VERSION: u32 = 1;

impl BakedGrass {
    /// Total texture bytes.
    pub fn texture_bytes(&self) -> usize {
        self.textures.len()
    }

    /// The file bytes: magic, version (u32 LE), payload length (u64 LE), xxh3 checksum (u64 LE), bincode payload.
    pub fn to_bytes(&self) -> Result<Vec<u8>, BakeError> {
        let payload = bincode::serde::encode_to_vec(self, bincode::config::standard())
            .map_err(|e| BakeError::File(e.to_string()))?;
        let mut out = Vec::with_capacity(payload.len() + 28);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&xxh3_64(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Reads file bytes, checking magic, version, length, checksum and the texture size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BakeError> {
        let err = |m: &str| BakeError::File(m.to_string());
        if bytes.len() < 28 || &bytes[..8] != MAGIC {
            return Err(err("not a Sylva baked grass file (bad magic)"));
        }
        let word = |a: usize, b: usize| bytes[a..b].iter().rev().fold(0u64, |acc, x| (acc << 8) | *x as u64);
        let version = word(8, 12) as u32;
        if version != FILE_VERSION {
            return Err(BakeError::File(format!(
                "version {version}, this build reads {FILE_VERSION}"
            )));
        }
        let payload = &bytes[28..];
        if word(12, 20) != payload.len() as u64 {
            return Err(err("truncated (payload length mismatch)"));
        }
        if word(20, 28) != xxh3_64(payload) {
            return Err(err("corrupt (checksum mismatch)"));
        }
        let (baked, used): (BakedGrass, usize) =
            bincode::serde::decode_from_slice(payload, bincode::config::standard())
                .map_err(|e| BakeError::File(e.to_string()))?;
        if used != payload.len()
            || Some(baked.textures.len()) != texture_bytes(baked.cells, baked.links, baked.frames, baked.layout)
            || baked.frames < 2
            || baked.frame_seconds.is_nan()
            || baked.frame_seconds <= 0.0
        {
            return Err(err("inconsistent contents"));
        }
        Ok(baked)
    }

    /// Writes the file.
    pub fn save(&self, path: &std::path::Path) -> Result<(), BakeError> {
        Ok(std::fs::write(path, self.to_bytes()?)?)
    }

    /// Reads a file.
    pub fn load(path: &std::path::Path) -> Result<Self, BakeError> {
        Self::from_bytes(&std::fs::read(path)?)
    }
}
