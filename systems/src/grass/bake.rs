//! Baking: an N × N field, k blades per cell at seeded random spots, a detected
//! warm-up, one frame every m steps, T frames with a cross-faded loop seam,
//! stored per non-root particle as a 3D texture (u, v = cell, w = frame).

use glam::Vec3;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use sylva_runtime::framed::{self, Frame, FrameError, HEADER_LEN};
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
pub enum GrassBakeError {
    /// Bad blade shape.
    #[error("blade: {0}")]
    Blade(#[from] BladeError),
    /// Bad wind, dynamics or bake settings; the path is that of a grass scene section
    /// (`wind.winds[0].spacing`, `dynamics.spring`, `bake.cells`).
    #[error("{}: {}", .0.dotted(), .0.message)]
    Settings(#[from] FieldError),
    /// A bake file's bytes are not a grass bake this build reads.
    #[error("{}: {source}", .path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with its bytes.
        source: BakeFileError,
    },
    /// A bake file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A bake file is sound but was baked from other inputs than the species it is read for.
    #[error(
        "{}: baked from other inputs than this species (its blade, the dynamics, wind, bake settings or seed differ); bake it again with `sylva grass SCENE --bake {}`",
        .path.display(),
        .path.display()
    )]
    Stale {
        /// The file.
        path: PathBuf,
    },
}

/// Why bytes are not a grass bake this build reads (see [`BakedGrass::from_bytes`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BakeFileError {
    /// Fewer bytes than the header alone.
    #[error("too short ({0} bytes) to be a grass bake")]
    TooShort(usize),
    /// The bytes do not start with the grass bake magic.
    #[error("not a grass bake (bad magic bytes)")]
    Magic,
    /// Written by an incompatible build.
    #[error("grass bake format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// Fewer payload bytes than the header promises: the end of the file is missing.
    #[error("truncated: the header promises {expected} payload bytes, the file has {found}")]
    Truncated {
        /// Payload length in the header.
        expected: u64,
        /// Payload bytes present.
        found: u64,
    },
    /// More bytes than the header promises: something was appended.
    #[error("{0} trailing bytes after the grass bake")]
    Trailing(u64),
    /// The payload does not match its checksum.
    #[error("corrupt grass bake (checksum mismatch)")]
    Checksum,
    /// The checksum matches but the payload does not decode.
    #[error("grass bake payload does not decode: {0}")]
    Decode(String),
    /// The payload decodes to a bake that cannot be played back.
    #[error("inconsistent grass bake: {0}")]
    Inconsistent(&'static str),
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
    /// Fingerprint of what the bake was made from ([`bake_inputs`]): a bake read from a
    /// file stands for a species only when its fingerprint is the species' own.
    pub inputs: u64,
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

/// Checks what a bake is made from: the blade, the wind, the dynamics and the settings.
pub fn validate_inputs(
    shape: &BladeShape,
    dynamics: &Dynamics,
    wind: &WindField,
    settings: &BakeSettings,
) -> Result<(), GrassBakeError> {
    shape.validate()?;
    wind.validate().map_err(|e| e.within("wind"))?;
    dynamics.validate().map_err(|e| e.within("dynamics"))?;
    settings.validate().map_err(|e| e.within("bake"))?;
    Ok(())
}

/// The fingerprint of everything a bake depends on: the blade shape, the dynamics,
/// the wind and the settings, seed included (every bit of each; equal inputs bake
/// equal textures on any build and thread count).
pub fn bake_inputs(shape: &BladeShape, dynamics: &Dynamics, wind: &WindField, settings: &BakeSettings) -> u64 {
    let bytes =
        framed::encode(&(shape, dynamics, wind, settings)).expect("plain numbers and vectors of them always encode");
    xxh3_64(&bytes)
}

/// Bakes `shape` under `wind`. Returns the baked textures and the wall time in ms.
pub fn bake(
    shape: &BladeShape,
    dynamics: &Dynamics,
    wind: &WindField,
    settings: &BakeSettings,
) -> Result<(BakedGrass, f64), GrassBakeError> {
    validate_inputs(shape, dynamics, wind, settings)?;
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
        inputs: bake_inputs(shape, dynamics, wind, settings),
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

/// Version of the baked file format. Bump it also when baking changes what the same
/// inputs give: a bake is matched to a species by its inputs alone.
pub const FILE_VERSION: u32 = 2;

/// A grass bake file: Sylva's framed header (magic, version, key, length, checksum),
/// keyed by the bake's [`BakedGrass::inputs`], then the bincode payload.
const FRAME: Frame = Frame {
    magic: *b"SYLVAGRS",
    version: FILE_VERSION,
};

/// Where species `k`'s bake lies when species 0's is `path`: `path` itself for
/// species 0, `dir/name-k.ext` beside it for the others.
pub fn species_file(path: &Path, k: usize) -> PathBuf {
    if k == 0 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{k}"),
    };
    path.with_file_name(name)
}

impl BakedGrass {
    /// Total texture bytes.
    pub fn texture_bytes(&self) -> usize {
        self.textures.len()
    }

    /// The file bytes: the framed header keyed by [`inputs`](Self::inputs), then the bincode payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = framed::encode(self).expect("plain numbers and bytes always encode");
        FRAME.seal(self.inputs, &payload)
    }

    /// Reads file bytes, checking length, magic, version, checksum and that the contents
    /// can be played back.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, BakeFileError> {
        if bytes.len() < HEADER_LEN {
            return Err(BakeFileError::TooShort(bytes.len()));
        }
        let (inputs, payload) = FRAME.open(bytes).map_err(|e| match e {
            FrameError::Magic => BakeFileError::Magic,
            FrameError::Version { found, supported } => BakeFileError::Version { found, supported },
            FrameError::Length { expected, found } if found > expected => BakeFileError::Trailing(found - expected),
            FrameError::Length { expected, found } => BakeFileError::Truncated { expected, found },
            FrameError::Checksum => BakeFileError::Checksum,
        })?;
        let baked: BakedGrass = framed::decode(payload).map_err(|e| BakeFileError::Decode(e.to_string()))?;
        let inconsistent =
            if Some(baked.textures.len()) != texture_bytes(baked.cells, baked.links, baked.frames, baked.layout) {
                Some("the textures do not hold cells² × links × frames texels")
            } else if baked.frames < 2 {
                Some("fewer than 2 frames")
            } else if !(baked.frame_seconds.is_finite() && baked.frame_seconds > 0.0) {
                Some("the seconds between frames are not a positive number")
            } else if baked.inputs != inputs {
                Some("the header and the payload name different inputs")
            } else {
                None
            };
        match inconsistent {
            Some(why) => Err(BakeFileError::Inconsistent(why)),
            None => Ok(baked),
        }
    }

    /// Writes the file the user named (see [`write_output`](framed::write_output): a regular
    /// file replaced atomically, a FIFO written through, a link's file replaced).
    pub fn save(&self, path: &Path) -> Result<(), GrassBakeError> {
        framed::write_output(path, &self.to_bytes()).map_err(|source| GrassBakeError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a file written by [`save`](Self::save).
    pub fn load(path: &Path) -> Result<Self, GrassBakeError> {
        let bytes = framed::read_regular(path, framed::MAX_READ_BYTES, framed::Links::Follow).map_err(|source| {
            GrassBakeError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Self::from_bytes(&bytes).map_err(|source| GrassBakeError::File {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a file as the bake of inputs with fingerprint `inputs` ([`bake_inputs`]);
    /// a bake of other inputs is [`GrassBakeError::Stale`].
    pub fn load_for(path: &Path, inputs: u64) -> Result<Self, GrassBakeError> {
        let baked = Self::load(path)?;
        if baked.inputs != inputs {
            return Err(GrassBakeError::Stale {
                path: path.to_path_buf(),
            });
        }
        Ok(baked)
    }
}
