//! The pure chunk function: `(world, seed, coordinate) → ChunkPayload`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use glam::Vec3;
use serde::{Deserialize, Serialize};
use sylva_runtime::framed;
use sylva_runtime::rng::{StreamKey, hash_words, stream_seed};
use xxhash_rust::xxh3::xxh3_64;

use super::across_borders::{RegionGround, place};
use super::domains::Domains;
use super::params::{PlacementParams, WorldParams};
use super::relief::{self, Reach, Shaped};
use crate::terrain::{BARE, Eroder, TerrainBalance, TerrainChunk, TerrainParams, Transport};

/// Version of the payload layout and of the generation rules; part of every
/// cache key, so a build that generates differently never reads old files.
pub const DATA_VERSION: u64 = 2;

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
    /// Water depth over the rock per sample (rivers and sea), metres.
    pub water: Vec<f32>,
}

/// Where a river crosses a chunk's border.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiverCrossing {
    /// The crossing, world metres (x, z).
    pub at: glam::Vec2,
    /// Drainage area there, km² (discharge under uniform rain).
    pub area: f32,
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
    /// Where rivers cross its border.
    pub rivers: Vec<RiverCrossing>,
    /// xxh3 of everything above: equal for equal content, whatever the visit
    /// order, the thread count or the cache.
    pub hash: u64,
}

/// A square of a world's ground (see [`WorldGen::region`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// The layered columns, eroded; labelled chunk (0, 0).
    pub terrain: TerrainChunk,
    /// Water surface per cell (sea and rivers), metres; empty without basins.
    pub level: Vec<f32>,
    /// The river reaches near the region.
    pub reaches: Vec<Reach>,
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
    domains: Option<Arc<Domains>>,
    erosion: Option<(TerrainParams, u32)>,
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
        // Domains depend on their own parameters and the chunk size alone, so
        // retuning trees or grass keeps a store's solved domains.
        let domains = params.terrain.basins.clone().map(|b| {
            let bytes = framed::encode(&(&b, params.chunk_size())).unwrap_or_default();
            let key = hash_words(&[xxh3_64(&bytes), seed, DATA_VERSION]);
            Arc::new(Domains::new(b, params.chunk_size(), seed, key))
        });
        let erosion = params
            .terrain
            .erosion
            .as_ref()
            .map(|e| (e.terrain(params.cell_size, params.terrain.max_layers), e.iterations));
        Self {
            params,
            seed,
            domains,
            erosion,
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

    /// The basin domains, when the world has them.
    pub fn domains(&self) -> Option<&Arc<Domains>> {
        self.domains.as_ref()
    }

    /// The hash every chunk's cache key starts from: the generation-relevant
    /// parameters, the seed and [`DATA_VERSION`]; two worlds with the same
    /// world key make the same chunks.
    pub fn world_key(&self) -> u64 {
        self.key
    }

    /// The basin domains the chunks `first..=last` (inclusive) read, in order.
    pub fn domains_under(&self, first: [i32; 2], last: [i32; 2]) -> BTreeSet<[i64; 2]> {
        let Some(domains) = &self.domains else {
            return BTreeSet::new();
        };
        let p = &self.params;
        let n = i64::from(p.chunk_cells);
        let apron = i64::from(self.placement_apron() + self.erosion_apron());
        // The cells of the chunks with their aprons are one rectangle.
        let origin = first.map(|c| i64::from(c) * n - apron);
        let cells = [0, 1].map(|k| ((i64::from(last[k]) - i64::from(first[k]) + 1) * n + 2 * apron) as u64);
        let (lo, [w, h]) = relief::node_window(origin, cells, p.cell_size, domains.params().node_spacing);
        domains.cells_over(lo, w, h)
    }

    /// Cells an erosion run changes inwards from the region's edge: its
    /// iterations times the cells one iteration reaches (tested against a
    /// monolithic run in `systems/tests/world_rivers.rs`).
    fn erosion_apron(&self) -> u32 {
        self.erosion.as_ref().map_or(0, |(p, iterations)| {
            let reach = match p.hydraulic.transport {
                Transport::SemiLagrangian => 4,
                Transport::ThesisFlux | Transport::Flux => 2,
            };
            reach * iterations
        })
    }

    /// Cells of apron placement reads: the ground of every candidate within one
    /// min distance of the border, plus the slope's neighbours.
    fn placement_apron(&self) -> u32 {
        let p = &self.params;
        let reach = p
            .trees
            .iter()
            .map(|t| t.placement.min_distance)
            .chain(p.grass.species.iter().map(|g| g.placement.min_distance))
            .fold(0.0f32, f32::max);
        (reach / p.cell_size).ceil() as u32 + 2
    }

    /// The ground of the `size`² cells from world cell `origin` on: generated
    /// with the erosion apron around it, eroded, and cut out. The cells equal
    /// the same cells of any other region, a monolithic one over many chunks
    /// included, bit for bit.
    pub fn region(&self, origin: [i64; 2], size: u32) -> Region {
        let p = &self.params;
        let apron = self.erosion_apron();
        let outer = origin.map(|o| o - i64::from(apron));
        let side = size + 2 * apron;
        let mut shaped = None;
        let mut terrain = p
            .terrain
            .generator
            .generate_region_shaped(self.seed, outer, side, p.terrain.max_layers, |height| {
                shaped = self
                    .domains
                    .as_ref()
                    .map(|d| relief::shape(d, outer, side as usize, p.cell_size, height));
                shaped.as_ref().map(|s| s.bed.clone())
            })
            .expect("validated world terrain generates");
        if let Some((params, iterations)) = &self.erosion {
            // The rivers and the sea start full, so the water runs in the channels.
            if let Some(Shaped { level, .. }) = &shaped {
                let mut ground = Vec::new();
                terrain.ground_heights(&mut ground);
                for ((w, g), l) in terrain.water_mut().iter_mut().zip(&ground).zip(level) {
                    *w = (l - g).max(0.0);
                }
            }
            let (mut eroder, mut books) = (Eroder::default(), TerrainBalance::default());
            for it in 1..=u64::from(*iterations) {
                eroder.step(&mut terrain, params, self.seed, it, &mut books);
            }
            terrain = terrain
                .crop(apron, apron, size, [0, 0])
                .expect("the region lies inside its apron");
            // A river keeps its bed: what the iterations slid or washed into
            // a channel is cut away again.
            if let Some(s) = &shaped {
                terrain.lay_beds(&crop_plane(&s.bed, side, apron, size));
            }
        }
        let (level, reaches) = shaped.map_or_else(Default::default, |Shaped { level, reaches, .. }| {
            (crop_plane(&level, side, apron, size), reaches)
        });
        Region {
            terrain,
            level,
            reaches,
        }
    }

    /// Generates chunk `coord` (see [`ChunkPayload`]).
    pub fn chunk(&self, coord: [i32; 2]) -> ChunkPayload {
        let p = &self.params;
        let started = Instant::now();
        let (n, apron) = (p.chunk_cells, self.placement_apron());
        let origin = [i64::from(coord[0]) * i64::from(n), i64::from(coord[1]) * i64::from(n)];
        let region_origin = origin.map(|o| o - i64::from(apron));
        let seed = self.seed;
        let region = self.region(region_origin, n + 2 * apron);
        let terrain = region
            .terrain
            .crop(apron, apron, n, coord)
            .expect("the chunk lies inside its region");
        let mut ground = RegionGround::new(&region.terrain, region_origin, p.cell_size);
        let depth = if region.level.is_empty() {
            vec![0.0; ground.ground.len()]
        } else {
            ground.flood(&region.level);
            ground.depths(&region.level)
        };
        let rivers = crossings(&region.reaches, coord, p.chunk_size());
        let surface = surface(&ground, &depth, region.terrain.size(), apron, n);
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
            rivers,
            hash: 0,
        };
        payload.hash = xxh3_64(&framed::encode(&payload).unwrap_or_default());
        payload
    }
}

/// The `size`² middle of a `side`² plane with `apron` cells around it.
fn crop_plane(plane: &[f32], side: u32, apron: u32, size: u32) -> Vec<f32> {
    let (side, a, size) = (side as usize, apron as usize, size as usize);
    (0..size)
        .flat_map(|z| plane[(z + a) * side + a..][..size].iter().copied())
        .collect()
}

/// Where `reaches` cross the border of chunk `coord` (of `size` metres), in a
/// fixed order: sorted by position along the border.
fn crossings(reaches: &[Reach], coord: [i32; 2], size: f32) -> Vec<RiverCrossing> {
    let lo = glam::Vec2::new(coord[0] as f32, coord[1] as f32) * size;
    let hi = lo + glam::Vec2::splat(size);
    let mut out = Vec::new();
    for r in reaches {
        let [a, b] = r.ends;
        for (axis, line) in [(0, lo.x), (0, hi.x), (1, lo.y), (1, hi.y)] {
            let (u, v) = (a[axis] - line, b[axis] - line);
            // Half-open, so a reach ending exactly on a border crosses it once.
            if (u < 0.0) != (v < 0.0) {
                let t = u / (u - v);
                let at = a.lerp(b, t);
                let other = 1 - axis;
                if (lo[other]..=hi[other]).contains(&at[other]) {
                    out.push(RiverCrossing {
                        at,
                        area: r.area[0] + (r.area[1] - r.area[0]) * t,
                    });
                }
            }
        }
    }
    out.sort_by(|p, q| {
        (p.at.x, p.at.y)
            .partial_cmp(&(q.at.x, q.at.y))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out
}

/// The chunk's (n + 1)² surface samples from its `side`² region (apron ≥ 1).
fn surface(region: &RegionGround, depth: &[f32], side: u32, apron: u32, n: u32) -> Surface {
    let (ground, top) = (&region.ground, &region.top);
    let (side, r) = (side as usize, n as usize + 1);
    let mut s = Surface {
        resolution: n + 1,
        height: Vec::with_capacity(r * r),
        material: Vec::with_capacity(r * r),
        water: Vec::with_capacity(r * r),
    };
    for z in 0..r {
        let row = (z + apron as usize) * side + apron as usize;
        s.height.extend_from_slice(&ground[row..row + r]);
        s.water.extend_from_slice(&depth[row..row + r]);
        s.material
            .extend(top[row..row + r].iter().map(|m| m.map_or(BARE, |m| m as u8)));
    }
    s
}
