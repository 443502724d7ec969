//! The pure chunk function: `(world, seed, coordinate) → ChunkPayload`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::framed;
use sylva_runtime::rng::{StreamKey, hash_words, stream_seed};
use xxhash_rust::xxh3::xxh3_64;

use super::params::{PlacementParams, WorldParams};
use super::placement::{RegionGround, place};
use crate::terrain::{BARE, TerrainChunk};

/// Version of the payload layout and of the generation rules; part of every
/// cache key, so a build that generates differently never reads old files.
pub const DATA_VERSION: u64 = 1;

/// One placed tree: which grown variant, where, turned and scaled how.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeInstance {
    /// Species index in the world's `trees`.
    pub species: u16,
    /// Variant of the species.
    pub variant: u16,
    /// Root position, world metres, Y up.
    pub position: Vec3,
    /// Rotation about Y, radians.
    pub yaw: f32,
    /// Scale on top of the species' own.
    pub scale: f32,
}

/// The blades of one grass species in one chunk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GrassPatch {
    /// Species index in the world's grass.
    pub species: u16,
    /// Root per blade, world metres.
    pub root: Vec<Vec3>,
    /// Yaw per blade, radians.
    pub yaw: Vec<f32>,
    /// Scale per blade.
    pub scale: Vec<f32>,
}

/// What a renderer draws of a chunk's ground: (cells + 1)² samples, the last
/// row and column being the neighbours' first, so patches meet exactly.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    /// Samples along a side (cells + 1).
    pub resolution: u32,
    /// Rock height per sample, metres.
    pub height: Vec<f32>,
    /// Top material per sample ([`BARE`] for none).
    pub material: Vec<u8>,
}

/// A generated chunk: a pure function of the world, the seed and the coordinate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkPayload {
    /// The chunk.
    pub coord: [i32; 2],
    /// Its layered columns.
    pub terrain: TerrainChunk,
    /// Its ground as drawn.
    pub surface: Surface,
    /// Its trees.
    pub trees: Vec<TreeInstance>,
    /// Its grass, one patch per species that has blades here.
    pub grass: Vec<GrassPatch>,
    /// xxh3 of everything above: equal for equal content, whatever the visit
    /// order, the thread count or the cache.
    pub hash: u64,
}

/// Generation cost per stage, summed over chunks (nanoseconds).
#[derive(Debug, Default)]
pub struct StageClock {
    terrain: AtomicU64,
    trees: AtomicU64,
    grass: AtomicU64,
    chunks: AtomicU64,
}

/// Mean milliseconds per generated chunk of each stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StageMillis {
    /// Chunks generated.
    pub chunks: u64,
    /// Terrain: the region with its apron, the chunk's columns, the surface.
    pub terrain: f64,
    /// Tree placement.
    pub trees: f64,
    /// Grass placement.
    pub grass: f64,
}

impl StageClock {
    fn add(counter: &AtomicU64, since: Instant) -> Instant {
        counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Instant::now()
    }

    /// The means so far.
    pub fn millis(&self) -> StageMillis {
        let chunks = self.chunks.load(Ordering::Relaxed);
        let mean = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e6 / chunks.max(1) as f64;
        StageMillis {
            chunks,
            terrain: mean(&self.terrain),
            trees: mean(&self.trees),
            grass: mean(&self.grass),
        }
    }
}

/// Everything a chunk depends on, and the function that generates it.
#[derive(Debug)]
pub struct WorldGen {
    params: WorldParams,
    seed: u64,
    variants: Vec<u32>,
    key: u64,
    clock: StageClock,
}

impl WorldGen {
    /// The generator of world `params` (validated) with `seed`.
    pub fn new(params: WorldParams, seed: u64) -> Self {
        let variants = params.trees.iter().map(|t| t.species.variants.max(1)).collect();
        let relevant = (
            params.chunk_cells,
            params.cell_size,
            &params.terrain,
            &params.trees,
            params.grass.species.iter().map(|g| &g.placement).collect::<Vec<_>>(),
        );
        let bytes = framed::encode(&relevant).unwrap_or_default();
        let key = hash_words(&[xxh3_64(&bytes), seed, DATA_VERSION]);
        Self {
            params,
            seed,
            variants,
            key,
            clock: StageClock::default(),
        }
    }

    /// The world's parameters.
    pub fn params(&self) -> &WorldParams {
        &self.params
    }

    /// Generation cost per stage so far.
    pub fn stages(&self) -> StageMillis {
        self.clock.millis()
    }

    /// The cache key of chunk `coord`: the generation-relevant parameters, the
    /// seed, the coordinate and [`DATA_VERSION`].
    pub fn cache_key(&self, coord: [i32; 2]) -> u64 {
        hash_words(&[self.key, u64::from(coord[0] as u32), u64::from(coord[1] as u32)])
    }

    /// Cells of apron around a chunk: enough for the ground of every candidate
    /// within one min distance of the border, plus the slope's neighbours.
    fn apron(&self) -> u32 {
        let p = &self.params;
        let reach = p
            .trees
            .iter()
            .map(|t| t.placement.min_distance)
            .chain(p.grass.species.iter().map(|g| g.placement.min_distance))
            .fold(0.0f32, f32::max);
        (reach / p.cell_size).ceil() as u32 + 2
    }

    /// Generates chunk `coord` (see [`ChunkPayload`]).
    pub fn chunk(&self, coord: [i32; 2]) -> ChunkPayload {
        let p = &self.params;
        let started = Instant::now();
        let (n, apron) = (p.chunk_cells, self.apron());
        let origin = [i64::from(coord[0]) * i64::from(n), i64::from(coord[1]) * i64::from(n)];
        let region_origin = origin.map(|o| o - i64::from(apron));
        let seed = self.seed;
        let region = p
            .terrain
            .generator
            .generate_region(seed, region_origin, n + 2 * apron, p.terrain.max_layers)
            .expect("validated world terrain generates");
        let terrain = region
            .crop(apron, apron, n, coord)
            .expect("the chunk lies inside its region");
        let ground = RegionGround::new(&region, region_origin, p.cell_size);
        let surface = surface(&ground, region.size(), apron, n);
        let t = StageClock::add(&self.clock.terrain, started);
        let size = p.chunk_size();
        let kinds: Vec<&PlacementParams> = p.trees.iter().map(|t| &t.placement).collect();
        let trees = place(seed, "world.trees", &kinds, coord, size, &ground)
            .into_iter()
            .map(|t| TreeInstance {
                species: t.kind as u16,
                variant: (t.pick % u64::from(self.variants[t.kind as usize])) as u16,
                position: t.position,
                yaw: t.yaw,
                scale: t.scale,
            })
            .collect();
        let t = StageClock::add(&self.clock.trees, t);
        let kinds: Vec<&PlacementParams> = p.grass.species.iter().map(|g| &g.placement).collect();
        let grass_seed = stream_seed(seed, StreamKey::Global, "world.grass");
        let mut grass: Vec<GrassPatch> = (0..kinds.len())
            .map(|k| GrassPatch {
                species: k as u16,
                ..GrassPatch::default()
            })
            .collect();
        for b in place(grass_seed, "world.grass", &kinds, coord, size, &ground) {
            let patch = &mut grass[b.kind as usize];
            patch.root.push(b.position);
            patch.yaw.push(b.yaw);
            patch.scale.push(b.scale);
        }
        grass.retain(|g| !g.root.is_empty());
        StageClock::add(&self.clock.grass, t);
        self.clock.chunks.fetch_add(1, Ordering::Relaxed);
        let mut payload = ChunkPayload {
            coord,
            terrain,
            surface,
            trees,
            grass,
            hash: 0,
        };
        payload.hash = xxh3_64(&framed::encode(&payload).unwrap_or_default());
        payload
    }
}

/// The chunk's (n + 1)² surface samples from its `side`² region (apron ≥ 1).
fn surface(region: &RegionGround, side: u32, apron: u32, n: u32) -> Surface {
    let (ground, top) = (&region.ground, &region.top);
    let (side, r) = (side as usize, n as usize + 1);
    let mut s = Surface {
        resolution: n + 1,
        height: Vec::with_capacity(r * r),
        material: Vec::with_capacity(r * r),
    };
    for z in 0..r {
        let row = (z + apron as usize) * side + apron as usize;
        s.height.extend_from_slice(&ground[row..row + r]);
        s.material
            .extend(top[row..row + r].iter().map(|m| m.map_or(BARE, |m| m as u8)));
    }
    s
}
