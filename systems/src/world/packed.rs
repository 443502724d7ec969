//! A chunk's stored form (docs/design/chunk-store.md): what a game needs of a
//! [`ChunkPayload`], quantized to documented steps, each plane predicted from its
//! neighbours, and the whole compressed by zstd.
//!
//! The payload a chunk function hands out is always this form read back, so a
//! chunk generated fresh and one read from a store are equal bit for bit, and
//! the content hash is xxh3 of the quantized stream (before compression, so a
//! zstd release that compresses differently keeps every hash).
//!
//! What is stored, in this order:
//! - the terrain's layer stacks: count, then per slot the material and the top
//!   of every column that has the slot, in [`HEIGHT_STEP`]s (the lowest top,
//!   then each layer's thickness as the difference of quantized tops, so the
//!   ground is within half a step and no layer is negative);
//! - the surface: its heights (the chunk's own cells are the stacks' tops; only
//!   the neighbours' last row and column are stored), materials, water in
//!   [`WATER_STEP`]s and the ring;
//! - the attribute maps in [`ATTRIBUTE_STEPS`], the ground-cover field as it is;
//! - trees (positions in [`POSITION_STEP`]s, yaw and scale in [`ANGLE_STEP`]s and
//!   [`SCALE_STEP`]s) and river crossings (exact).
//!
//! The erosion solver's state (water film, sediment, flux, velocity and the
//! layers' age counters) is not stored: a world chunk is eroded once, in its
//! region, before it is cut out, and nothing reads that state afterwards, so a
//! read chunk has it at zero.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use xxhash_rust::xxh3::xxh3_64;

use super::chunk::{ChunkPayload, RiverCrossing, Surface, TreeInstance};
use crate::ecology::{ATTRIBUTES, AttributeMaps, CoverField};
use crate::terrain::{ChunkDataError, MAX_CHUNK_SIZE, MAX_LAYER_SLOTS, TerrainChunk};

/// Step of the stored heights (layer tops, surface, ring), metres: a stored
/// height is within half a step of the generated one.
pub const HEIGHT_STEP: f32 = 0.01;
/// Step of the stored water depths, metres.
pub const WATER_STEP: f32 = 0.001;
/// Step of the stored tree positions, metres.
pub const POSITION_STEP: f32 = 0.001;
/// Step of the stored tree yaws, radians.
pub const ANGLE_STEP: f32 = 1e-4;
/// Step of the stored tree scales.
pub const SCALE_STEP: f32 = 1e-4;
/// Step of each stored attribute, in [`crate::ecology::Attribute::ALL`] order:
/// 1 cm of height, 0.01° of slope, 1e-4 of insolation, 1 cm of soil, 1e-3 of
/// wetness, 1 cm of river and sea distance, 1e-3 °C.
pub const ATTRIBUTE_STEPS: [f32; ATTRIBUTES] = [0.01, 0.01, 1e-4, 0.01, 1e-3, 0.01, 0.01, 1e-3];
/// Largest quantized stream a stored chunk may unpack to, bytes: a file that
/// claims more is refused before anything is allocated.
pub const MAX_STREAM_BYTES: usize = 64 << 20;
/// zstd's level for stored chunks (docs/design/chunk-store.md, "Codec").
const LEVEL: i32 = 3;
/// Largest sample grid side of the attribute maps and the cover field.
const MAX_SIDE: u32 = MAX_CHUNK_SIZE + 1;

/// Why a stored chunk could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The compressed stream is damaged or longer than it claims.
    #[error("stored chunk: {0}")]
    Codec(String),
    /// The stream ends inside a value.
    #[error("stored chunk ends early")]
    Truncated,
    /// A count or size beyond what a chunk may have, or beyond the stream.
    #[error("stored chunk: {what} is {found}, beyond {limit}")]
    Limit {
        /// The field.
        what: &'static str,
        /// Its value.
        found: u64,
        /// The most it may be.
        limit: u64,
    },
    /// The stream goes on past the chunk.
    #[error("stored chunk: {0} bytes after the end")]
    Trailing(usize),
    /// The layer stacks are not a terrain chunk.
    #[error("stored chunk: {0}")]
    Terrain(#[from] ChunkDataError),
}

/// The quantized stream of `payload`, before compression (see the module docs).
pub fn stream(payload: &ChunkPayload) -> Vec<u8> {
    let mut w = Writer::default();
    w.int(i64::from(payload.coord[0]));
    w.int(i64::from(payload.coord[1]));
    let tops = put_terrain(&mut w, &payload.terrain);
    put_surface(&mut w, &payload.surface, &payload.terrain, &tops);
    put_attributes(&mut w, &payload.attributes);
    put_cover(&mut w, &payload.cover);
    put_trees(&mut w, &payload.trees);
    put_rivers(&mut w, &payload.rivers);
    w.out
}

/// The payload a quantized stream holds, its hash being the stream's xxh3.
pub fn read_stream(bytes: &[u8]) -> Result<ChunkPayload, PackError> {
    let mut r = Reader { data: bytes, at: 0 };
    let coord = [r.i32("coord")?, r.i32("coord")?];
    let (terrain, tops) = get_terrain(&mut r, coord)?;
    let surface = get_surface(&mut r, &tops, terrain.size())?;
    let attributes = get_attributes(&mut r)?;
    let cover = get_cover(&mut r)?;
    let trees = get_trees(&mut r)?;
    let rivers = get_rivers(&mut r)?;
    if r.at != bytes.len() {
        return Err(PackError::Trailing(bytes.len() - r.at));
    }
    Ok(ChunkPayload {
        coord,
        terrain,
        surface,
        trees,
        attributes,
        cover,
        rivers,
        hash: xxh3_64(bytes),
    })
}

/// `payload` as it is stored and read back: quantized, its hash set.
pub fn settle(payload: &ChunkPayload) -> ChunkPayload {
    read_stream(&stream(payload)).expect("a stream just written reads back")
}

/// `terrain`'s layer stacks as a stored chunk keeps them: tops quantized, the
/// solver's state at zero. A monolithic region's columns, cut out and settled,
/// equal the chunk's.
pub fn settle_terrain(terrain: &TerrainChunk) -> TerrainChunk {
    let mut w = Writer::default();
    put_terrain(&mut w, terrain);
    let mut r = Reader { data: &w.out, at: 0 };
    get_terrain(&mut r, terrain.coord())
        .expect("stacks just written read back")
        .0
}

/// `maps` with every value on its [`ATTRIBUTE_STEPS`] grid, as a stored chunk keeps them.
pub fn settle_attributes(maps: &AttributeMaps) -> AttributeMaps {
    let mut w = Writer::default();
    put_attributes(&mut w, maps);
    get_attributes(&mut Reader { data: &w.out, at: 0 }).expect("maps just written read back")
}

/// The file body: the stream's length and the stream compressed.
#[derive(Serialize, Deserialize)]
struct Packed {
    stream_bytes: u32,
    zstd: Vec<u8>,
}

/// `payload`'s stored bytes as a file holds them (the stream, compressed).
pub fn pack(payload: &ChunkPayload) -> Vec<u8> {
    compress(&stream(payload))
}

/// The stored bytes of a stream.
fn compress(stream: &[u8]) -> Vec<u8> {
    // Compressing a buffer in memory fails only on allocation, which aborts anyway.
    zstd::bulk::compress(stream, LEVEL).expect("zstd compresses a buffer in memory")
}

/// The payload stored in `bytes` (from [`pack`]).
pub fn unpack(bytes: &[u8]) -> Result<ChunkPayload, PackError> {
    read_stream(&decompress(bytes)?)
}

fn decompress(bytes: &[u8]) -> Result<Vec<u8>, PackError> {
    let claimed = zstd::zstd_safe::get_frame_content_size(bytes)
        .map_err(|_| PackError::Codec("not a zstd frame".into()))?
        .ok_or_else(|| PackError::Codec("zstd frame without its size".into()))?;
    if claimed > MAX_STREAM_BYTES as u64 {
        return Err(PackError::Limit {
            what: "stream length",
            found: claimed,
            limit: MAX_STREAM_BYTES as u64,
        });
    }
    zstd::bulk::decompress(bytes, claimed as usize).map_err(|e| PackError::Codec(e.to_string()))
}

impl Serialize for ChunkPayload {
    /// The stored form (see [`crate::world::packed`]).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let stream = stream(self);
        Packed {
            stream_bytes: stream.len() as u32,
            zstd: compress(&stream),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ChunkPayload {
    /// The stored form, checked: a damaged or hostile file is an error, never a panic
    /// or an allocation it does not pay for with its own bytes.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let packed = Packed::deserialize(d)?;
        let stream = decompress(&packed.zstd).map_err(D::Error::custom)?;
        if stream.len() != packed.stream_bytes as usize {
            return Err(D::Error::custom(PackError::Codec(format!(
                "stream of {} bytes where {} were stored",
                stream.len(),
                packed.stream_bytes
            ))));
        }
        read_stream(&stream).map_err(D::Error::custom)
    }
}

/// `x` in steps of `1 / per`, saturating (heights beyond ±20 km lose their bound).
fn quantize(x: f32, per: f64) -> i32 {
    (f64::from(x) * per).round() as i32
}

/// The value of `n` steps of `1 / per`.
fn value(n: i32, per: f64) -> f32 {
    (f64::from(n) / per) as f32
}

fn per(step: f32) -> f64 {
    (1.0 / f64::from(step)).round()
}

/// Writes the stacks, each slot's material and thickness for the columns that
/// have it; returns the top of every column in height steps.
fn put_terrain(w: &mut Writer, t: &TerrainChunk) -> Vec<i32> {
    let (n, slots, width) = (t.cells(), usize::from(t.max_layers()), t.size() as usize);
    w.uint(u64::from(t.size()));
    w.uint(slots as u64);
    w.bytes(&t.count);
    let h = per(HEIGHT_STEP);
    // Tops from the f32 sums the ground is, so the top tops are the ground's own steps.
    let mut sum = vec![0.0f32; n];
    let mut top = vec![0i32; n];
    let mut plane = vec![0i32; n];
    for k in 0..slots {
        let live = |i: usize| usize::from(t.count[i]) > k;
        let material: Vec<u8> = (0..n).filter(|&i| live(i)).map(|i| t.material[k * n + i]).collect();
        w.bytes(&material);
        for (i, &thick) in t.thickness[k * n..(k + 1) * n].iter().enumerate() {
            plane[i] = 0;
            if live(i) {
                sum[i] += thick;
                let new = quantize(sum[i], h);
                plane[i] = if k == 0 { new } else { new - top[i] };
                top[i] = new;
            }
        }
        w.plane_where(&plane, width, live);
    }
    top
}

fn get_terrain(r: &mut Reader, coord: [i32; 2]) -> Result<(TerrainChunk, Vec<i32>), PackError> {
    let size = r.bounded("terrain size", u64::from(MAX_CHUNK_SIZE))? as u32;
    let slots = r.bounded("layer slots", u64::from(MAX_LAYER_SLOTS))? as usize;
    let (n, width) = (size as usize * size as usize, size as usize);
    // Read before anything of size n is made: the stream holds n bytes for it.
    let count = r.bytes(n)?.to_vec();
    let h = per(HEIGHT_STEP);
    let mut material = vec![0u8; n * slots];
    let mut thickness = vec![0.0f32; n * slots];
    let mut top = vec![0i32; n];
    for k in 0..slots {
        let live = |i: usize| usize::from(count[i]) > k;
        let live_count = count.iter().filter(|&&c| usize::from(c) > k).count();
        let mut stored = r.bytes(live_count)?.iter();
        for (i, m) in material[k * n..(k + 1) * n].iter_mut().enumerate() {
            if live(i) {
                *m = *stored.next().expect("one stored byte per live column");
            }
        }
        let plane = r.plane_where(n, width, live)?;
        for (i, (&d, t)) in plane.iter().zip(&mut top).enumerate() {
            if live(i) {
                *t = if k == 0 { d } else { t.saturating_add(d) };
                thickness[k * n + i] = value(d, h);
            }
        }
    }
    // The layers' ages count erosion steps, which a stored chunk has done all of.
    let terrain = TerrainChunk::from_stacks(coord, size, slots as u8, count, material, thickness)?;
    Ok((terrain, top))
}

/// Writes the surface: its own cells' heights are the stacks' tops whenever they
/// quantize to them (always, for a generated chunk), so only the neighbours' row
/// and column are stored; otherwise the whole plane.
fn put_surface(w: &mut Writer, s: &Surface, t: &TerrainChunk, tops: &[i32]) {
    let (r, n) = (s.resolution as usize, t.size() as usize);
    let h = per(HEIGHT_STEP);
    let heights: Vec<i32> = s.height.iter().map(|&x| quantize(x, h)).collect();
    w.uint(r as u64);
    let derived = r == n + 1 && heights.len() == r * r && (0..n).all(|z| heights[z * r..][..n] == tops[z * n..][..n]);
    w.uint(u64::from(derived));
    if derived {
        let edge: Vec<i32> = (0..r)
            .map(|x| heights[n * r + x])
            .chain((0..n).map(|z| heights[z * r + n]))
            .collect();
        w.run(&edge);
    } else {
        w.uint(heights.len() as u64);
        w.plane(&heights, r);
    }
    w.uint(s.material.len() as u64);
    w.bytes(&s.material);
    let water: Vec<i32> = s.water.iter().map(|&x| quantize(x, per(WATER_STEP))).collect();
    w.uint(water.len() as u64);
    w.plane(&water, r);
    let ring: Vec<i32> = s.ring.iter().map(|&x| quantize(x, h)).collect();
    w.uint(ring.len() as u64);
    w.run(&ring);
}

fn get_surface(rd: &mut Reader, tops: &[i32], size: u32) -> Result<Surface, PackError> {
    let n = size as usize;
    let r = rd.bounded("surface resolution", u64::from(MAX_SIDE))? as usize;
    let h = per(HEIGHT_STEP);
    let heights = if rd.uint()? == 1 {
        if r != n + 1 {
            return Err(PackError::Limit {
                what: "surface resolution",
                found: r as u64,
                limit: n as u64 + 1,
            });
        }
        let edge = rd.run(2 * n + 1)?;
        let mut heights = vec![0i32; r * r];
        for z in 0..n {
            heights[z * r..][..n].copy_from_slice(&tops[z * n..][..n]);
            heights[z * r + n] = edge[r + z];
        }
        heights[n * r..].copy_from_slice(&edge[..r]);
        heights
    } else {
        let len = rd.len("surface heights", r * r)?;
        rd.plane(len, r)?
    };
    let len = rd.len("surface materials", r * r)?;
    let material = rd.bytes(len)?.to_vec();
    let len = rd.len("surface water", r * r)?;
    let water = rd.plane(len, r)?;
    let len = rd.len("surface ring", 4 * r + 4)?;
    let ring = rd.run(len)?;
    Ok(Surface {
        resolution: r as u32,
        height: heights.into_iter().map(|x| value(x, h)).collect(),
        material,
        water: water.into_iter().map(|x| value(x, per(WATER_STEP))).collect(),
        ring: ring.into_iter().map(|x| value(x, h)).collect(),
    })
}

fn put_attributes(w: &mut Writer, m: &AttributeMaps) {
    w.int(m.origin[0]);
    w.int(m.origin[1]);
    w.uint(u64::from(m.spacing));
    w.uint(u64::from(m.side));
    w.uint(u64::from(m.cell_size.to_bits()));
    w.uint(m.values.len() as u64);
    let side = m.side.max(1) as usize;
    let per_map = m.samples().max(1);
    for (map, step) in m.values.chunks(per_map).zip(ATTRIBUTE_STEPS.iter().cycle()) {
        let q: Vec<i32> = map.iter().map(|&x| quantize(x, per(*step))).collect();
        w.plane(&q, side);
    }
}

fn get_attributes(r: &mut Reader) -> Result<AttributeMaps, PackError> {
    let origin = [r.int()?, r.int()?];
    let spacing = r.bounded("attribute spacing", u64::from(MAX_CHUNK_SIZE))? as u32;
    let side = r.bounded("attribute side", u64::from(MAX_SIDE))? as u32;
    let cell_size = f32::from_bits(r.bounded("cell size", u64::from(u32::MAX))? as u32);
    let samples = side as usize * side as usize;
    let len = r.len("attribute values", samples * ATTRIBUTES)?;
    let per_map = samples.max(1);
    let mut values = Vec::with_capacity(len);
    for (k, step) in (0..len.div_ceil(per_map)).zip(ATTRIBUTE_STEPS.iter().cycle()) {
        let count = per_map.min(len - k * per_map);
        values.extend(
            r.plane(count, side.max(1) as usize)?
                .into_iter()
                .map(|x| value(x, per(*step))),
        );
    }
    Ok(AttributeMaps {
        origin,
        spacing,
        side,
        cell_size,
        values,
    })
}

fn put_cover(w: &mut Writer, c: &CoverField) {
    w.uint(u64::from(c.seed));
    w.uint(u64::from(c.spacing));
    w.uint(u64::from(c.side));
    w.uint(c.density.len() as u64);
    let density: Vec<i32> = c.density.iter().map(|&d| i32::from(d)).collect();
    w.plane(&density, c.side.max(1) as usize);
    w.uint(c.kind.len() as u64);
    w.bytes(&c.kind);
}

fn get_cover(r: &mut Reader) -> Result<CoverField, PackError> {
    let seed = r.bounded("cover seed", u64::from(u32::MAX))? as u32;
    let spacing = r.bounded("cover spacing", u64::from(MAX_CHUNK_SIZE))? as u32;
    let side = r.bounded("cover side", u64::from(MAX_SIDE))? as u32;
    let samples = side as usize * side as usize;
    let len = r.len("cover densities", samples)?;
    let density = r.plane(len, side.max(1) as usize)?;
    let len = r.len("cover kinds", samples)?;
    Ok(CoverField {
        seed,
        spacing,
        side,
        density: density
            .into_iter()
            .map(|d| d.clamp(0, i32::from(u16::MAX)) as u16)
            .collect(),
        kind: r.bytes(len)?.to_vec(),
    })
}

fn put_trees(w: &mut Writer, trees: &[TreeInstance]) {
    w.uint(trees.len() as u64);
    let (p, a, s) = (per(POSITION_STEP), per(ANGLE_STEP), per(SCALE_STEP));
    let mut last = [0i32; 3];
    for t in trees {
        w.uint(u64::from(t.species));
        w.uint(u64::from(t.variant));
        for (k, x) in t.position.to_array().into_iter().enumerate() {
            let q = quantize(x, p);
            w.int(i64::from(q) - i64::from(last[k]));
            last[k] = q;
        }
        w.int(i64::from(quantize(t.yaw, a)));
        w.int(i64::from(quantize(t.scale, s)));
    }
}

fn get_trees(r: &mut Reader) -> Result<Vec<TreeInstance>, PackError> {
    // Every tree takes at least 7 bytes.
    let len = r.len("trees", r.left() / 7)?;
    let (p, a, s) = (per(POSITION_STEP), per(ANGLE_STEP), per(SCALE_STEP));
    let mut last = [0i32; 3];
    let mut trees = Vec::with_capacity(len);
    for _ in 0..len {
        let species = r.bounded("tree species", u64::from(u16::MAX))? as u16;
        let variant = r.bounded("tree variant", u64::from(u16::MAX))? as u16;
        let mut position = [0.0f32; 3];
        for (k, x) in position.iter_mut().enumerate() {
            last[k] = last[k].wrapping_add(r.i32("tree position")?);
            *x = value(last[k], p);
        }
        trees.push(TreeInstance {
            species,
            variant,
            position: position.into(),
            yaw: value(r.i32("tree yaw")?, a),
            scale: value(r.i32("tree scale")?, s),
        });
    }
    Ok(trees)
}

fn put_rivers(w: &mut Writer, rivers: &[RiverCrossing]) {
    w.uint(rivers.len() as u64);
    for c in rivers {
        for x in [c.at.x, c.at.y, c.area] {
            w.uint(u64::from(x.to_bits()));
        }
    }
}

fn get_rivers(r: &mut Reader) -> Result<Vec<RiverCrossing>, PackError> {
    let len = r.len("river crossings", r.left() / 3)?;
    (0..len)
        .map(|_| {
            let mut f = || Ok::<_, PackError>(f32::from_bits(r.bounded("river crossing", u64::from(u32::MAX))? as u32));
            Ok(RiverCrossing {
                at: glam::Vec2::new(f()?, f()?),
                area: f()?,
            })
        })
        .collect()
}

/// The quantized stream being written: LEB128 integers, zigzag for signed ones.
#[derive(Default)]
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn uint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    fn int(&mut self, v: i64) {
        self.uint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    /// A plane of `width`-wide rows, each value less its median-edge prediction.
    fn plane(&mut self, v: &[i32], width: usize) {
        self.plane_where(v, width, |_| true);
    }

    /// The values of a plane where `live` holds (the others are 0 and are not
    /// written), each less its median-edge prediction.
    #[inline(always)]
    fn plane_where(&mut self, v: &[i32], width: usize, live: impl Fn(usize) -> bool) {
        let width = width.max(1);
        for (z, row) in v.chunks(width).enumerate() {
            let up = if z == 0 {
                None
            } else {
                Some(&v[(z - 1) * width..z * width])
            };
            let mut left = 0;
            for (x, &value) in row.iter().enumerate() {
                if live(z * width + x) {
                    self.int(i64::from(value) - predict(left, up, x));
                }
                left = value;
            }
        }
    }

    /// A line of values, each less the one before.
    fn run(&mut self, v: &[i32]) {
        let mut last = 0i64;
        for &x in v {
            self.int(i64::from(x) - last);
            last = i64::from(x);
        }
    }
}

/// The median-edge predictor of LOCO-I (the left or upper value across an edge,
/// their plane through the corner on smooth ground) for the value in column `x`
/// after `left`, below row `up` (none in the first row).
#[inline(always)]
fn predict(left: i32, up: Option<&[i32]>, x: usize) -> i64 {
    let a = i64::from(left);
    let Some(up) = up else {
        return a;
    };
    let b = i64::from(up[x]);
    if x == 0 {
        return b;
    }
    let c = i64::from(up[x - 1]);
    // The median of a, b and a + b - c, which is the predictor's three cases
    // without a branch that noisy ground would mispredict.
    a.min(b).max(a.max(b).min(a + b - c))
}

/// The quantized stream being read, every read checked against its end.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.data.len() - self.at
    }

    #[inline(always)]
    fn uint(&mut self) -> Result<u64, PackError> {
        // Most residuals of smooth planes fit one byte.
        if let Some(&b) = self.data.get(self.at)
            && b < 0x80
        {
            self.at += 1;
            return Ok(u64::from(b));
        }
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let &b = self.data.get(self.at).ok_or(PackError::Truncated)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(PackError::Codec("an integer longer than 64 bits".into()))
    }

    #[inline(always)]
    fn int(&mut self) -> Result<i64, PackError> {
        let u = self.uint()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, PackError> {
        let v = self.int()?;
        i32::try_from(v).map_err(|_| PackError::Limit {
            what,
            found: v.unsigned_abs(),
            limit: i32::MAX as u64,
        })
    }

    fn bounded(&mut self, what: &'static str, limit: u64) -> Result<u64, PackError> {
        let found = self.uint()?;
        if found > limit {
            return Err(PackError::Limit { what, found, limit });
        }
        Ok(found)
    }

    /// A length of at most `limit`, and of at most the bytes left (every value takes one).
    fn len(&mut self, what: &'static str, limit: usize) -> Result<usize, PackError> {
        let limit = limit.min(self.left());
        Ok(self.bounded(what, limit as u64)? as usize)
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], PackError> {
        if n > self.left() {
            return Err(PackError::Truncated);
        }
        self.at += n;
        Ok(&self.data[self.at - n..self.at])
    }

    fn plane(&mut self, n: usize, width: usize) -> Result<Vec<i32>, PackError> {
        if n > self.left() {
            return Err(PackError::Truncated);
        }
        self.plane_where(n, width, |_| true)
    }

    /// A plane of `n` values written by [`Writer::plane_where`] with the same `live`.
    #[inline(always)]
    fn plane_where(&mut self, n: usize, width: usize, live: impl Fn(usize) -> bool) -> Result<Vec<i32>, PackError> {
        let width = width.max(1);
        let mut v = vec![0i32; n];
        for start in (0..n).step_by(width) {
            let (done, rest) = v.split_at_mut(start);
            let up = (start > 0).then(|| &done[start - width..]);
            let mut left = 0;
            for (x, value) in rest[..width.min(n - start)].iter_mut().enumerate() {
                if live(start + x) {
                    *value = self.int()?.wrapping_add(predict(left, up, x)) as i32;
                }
                left = *value;
            }
        }
        Ok(v)
    }

    fn run(&mut self, n: usize) -> Result<Vec<i32>, PackError> {
        if n > self.left() {
            return Err(PackError::Truncated);
        }
        let mut last = 0i64;
        (0..n)
            .map(|_| {
                last = last.wrapping_add(self.int()?);
                Ok(last as i32)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::world::{WorldGen, WorldParams};

    /// A stored chunk of the default world with a few trees added, so every part is there.
    fn stored() -> ChunkPayload {
        let params = WorldParams {
            chunk_cells: 32,
            ..WorldParams::default()
        };
        let mut chunk = WorldGen::new(params, 7).chunk([1, -2]);
        chunk.trees = (0..40u16)
            .map(|k| TreeInstance {
                species: k % 3,
                variant: k % 5,
                position: glam::Vec3::new(40.0 + f32::from(k) * 0.37, 3.0, -60.0 - f32::from(k) * 1.3),
                yaw: f32::from(k) * 0.1,
                scale: 1.0 + f32::from(k) * 0.01,
            })
            .collect();
        settle(&chunk)
    }

    #[test]
    fn every_truncation_of_a_stored_chunk_is_an_error() {
        let chunk = stored();
        let stream = stream(&chunk);
        for len in 0..stream.len() {
            assert!(read_stream(&stream[..len]).is_err(), "a stream cut at {len} read");
        }
        let packed = pack(&chunk);
        for len in 0..packed.len() {
            assert!(unpack(&packed[..len]).is_err(), "stored bytes cut at {len} read");
        }
        let mut longer = stream.clone();
        longer.push(0);
        assert!(matches!(read_stream(&longer), Err(PackError::Trailing(1))));
    }

    #[test]
    fn flipped_bits_never_panic_and_what_reads_is_a_chunk() {
        let chunk = stored();
        let (stream, packed) = (stream(&chunk), pack(&chunk));
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let (mut s, mut p) = (stream.clone(), packed.clone());
            let at = (state >> 33) as usize;
            s[at % stream.len()] ^= 1 << (state % 8);
            p[at % packed.len()] ^= 1 << (state % 8);
            for payload in [read_stream(&s), unpack(&p)].into_iter().flatten() {
                // A read chunk is a chunk: stored once more, it stays as it is stored.
                let again = settle(&payload);
                assert_eq!(settle(&again), again);
            }
        }
    }

    #[test]
    fn sizes_beyond_the_stream_are_refused_before_anything_is_made() {
        // A terrain beyond the largest chunk, then one whose planes the stream cannot hold.
        let mut w = Writer::default();
        w.int(0);
        w.int(0);
        w.uint(u64::from(MAX_CHUNK_SIZE) + 1);
        assert!(matches!(
            read_stream(&w.out),
            Err(PackError::Limit {
                what: "terrain size",
                ..
            })
        ));
        let mut w = Writer::default();
        w.int(0);
        w.int(0);
        w.uint(u64::from(MAX_CHUNK_SIZE));
        w.uint(u64::from(MAX_LAYER_SLOTS));
        assert!(matches!(read_stream(&w.out), Err(PackError::Truncated)));
        // A list longer than the bytes left.
        let mut w = Writer::default();
        w.uint(1 << 40);
        let mut r = Reader { data: &w.out, at: 0 };
        assert!(matches!(get_trees(&mut r), Err(PackError::Limit { what: "trees", .. })));
        // A frame that claims more than a chunk may unpack to.
        let huge = zstd::bulk::compress(&vec![0u8; MAX_STREAM_BYTES + 1], 1).unwrap();
        assert!(matches!(
            unpack(&huge),
            Err(PackError::Limit {
                what: "stream length",
                ..
            })
        ));
    }

    proptest! {
        /// Any plane of any width reads back as written, extreme values included.
        #[test]
        fn a_plane_reads_back_as_written(
            values in proptest::collection::vec(prop_oneof![any::<i32>(), -3i32..3, Just(i32::MIN), Just(i32::MAX)], 0..300),
            width in 1usize..40,
        ) {
            let mut w = Writer::default();
            w.plane(&values, width);
            w.run(&values);
            let mut r = Reader { data: &w.out, at: 0 };
            prop_assert_eq!(r.plane(values.len(), width).unwrap(), values.clone());
            prop_assert_eq!(r.run(values.len()).unwrap(), values);
            prop_assert_eq!(r.left(), 0);
        }
    }
}
