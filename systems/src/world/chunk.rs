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

use super::across_borders::{LayerPlan, RegionGround, place};
use super::attributes::{self, Sampling};
use super::domains::Domains;
use super::packed;
use super::params::WorldParams;
use super::relief::{self, Reach, Shaped};
use crate::ecology::{AttributeMaps, Biomes, CoverField, Layer, NO_KIND, blade_hash, thrown_for};
use crate::terrain::{BARE, Eroder, TerrainBalance, TerrainChunk, TerrainParams, Transport};

/// Version of the payload layout and of the generation rules; part of every
/// cache key, so a build that generates differently never reads old files.
pub const DATA_VERSION: u64 = 5;

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
    /// Rock height of the one-sample ring around the chunk, the neighbours' samples, so a
    /// normal on the border sees both sides (the mesh kit's ground): the row before
    /// (`resolution + 2` samples, x from −1), the row after, the column before (`resolution`
    /// samples, z from 0), the column after; `4 · resolution + 4` in all.
    pub ring: Vec<f32>,
}

/// Where a river crosses a chunk's border.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiverCrossing {
    /// The crossing, world metres (x, z).
    pub at: glam::Vec2,
    /// Drainage area there, km² (discharge under uniform rain).
    pub area: f32,
}

/// A generated chunk: a pure function of the world, the seed and the coordinate,
/// always in its stored form ([`super::packed`]): serialized, it is that form.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkPayload {
    /// The chunk.
    pub coord: [i32; 2],
    /// Its layered columns.
    pub terrain: TerrainChunk,
    /// Its ground as drawn.
    pub surface: Surface,
    /// Its trees and shrubs.
    pub trees: Vec<TreeInstance>,
    /// Its terrain attributes, one sample every `ecology.sample_cells` cells, the
    /// last row and column being the neighbours' first.
    pub attributes: AttributeMaps,
    /// Its ground cover on the same samples; blades are expanded from it
    /// (`world::blades`), never stored.
    pub cover: CoverField,
    /// Where rivers cross its border.
    pub rivers: Vec<RiverCrossing>,
    /// xxh3 of everything above as stored ([`super::packed::stream`]): equal for
    /// equal content, whatever the visit order, the thread count or the cache.
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
    ecology: AtomicU64,
    trees: AtomicU64,
    grass: AtomicU64,
    chunks: AtomicU64,
    /// Payload bytes (the quantized stream, as hashed, before compression), canopy and
    /// understory instances.
    bytes: AtomicU64,
    layers: [AtomicU64; 2],
}

/// What a generated chunk holds, on average.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ChunkContent {
    /// Payload bytes: the quantized stream, as hashed, before compression
    /// ([`super::packed`]).
    pub payload_bytes: f64,
    /// Canopy trees.
    pub canopy: f64,
    /// Understory shrubs.
    pub understory: f64,
}

/// Mean milliseconds per generated chunk of each stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StageMillis {
    /// Chunks generated.
    pub chunks: u64,
    /// Terrain: the region with its apron, the chunk's columns, the surface.
    pub terrain: f64,
    /// Attributes and biome memberships of the samples.
    pub ecology: f64,
    /// Tree and shrub placement.
    pub trees: f64,
    /// The ground-cover field.
    pub grass: f64,
}

impl StageClock {
    /// The mean content per chunk so far.
    pub fn content(&self) -> ChunkContent {
        let chunks = self.chunks.load(Ordering::Relaxed).max(1) as f64;
        let mean = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / chunks;
        ChunkContent {
            payload_bytes: mean(&self.bytes),
            canopy: mean(&self.layers[0]),
            understory: mean(&self.layers[1]),
        }
    }

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
            ecology: mean(&self.ecology),
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
    biomes: Biomes,
    /// Per tree species, the share a renderer's copies hold.
    draw_shares: Vec<f32>,
    /// Per layer, its species (world indices) and candidates thrown per m².
    layers: [(Vec<usize>, f32); 2],
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
            &params.ecology,
            params.grass.species.iter().map(|g| &g.name).collect::<Vec<_>>(),
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
        let biomes = params.biomes(seed).expect("validated world biomes resolve");
        let spacing: Vec<f32> = params.trees.iter().map(|t| t.placement.min_distance).collect();
        let layers = Layer::ALL.map(|layer| {
            let species = (0..params.trees.len())
                .filter(|&s| biomes.layer_of(s) == Some(layer))
                .collect();
            let (most, cover) = biomes.layer_peak(layer, &spacing);
            (species, thrown_for(most, cover))
        });
        let draw_shares = params.draw_shares(&biomes);
        Self {
            params,
            seed,
            domains,
            erosion,
            variants,
            biomes,
            draw_shares,
            layers,
            key,
            clock: StageClock::default(),
        }
    }

    /// The resolved biome table.
    pub fn biomes(&self) -> &Biomes {
        &self.biomes
    }

    /// The share of tree species `species`'s instances a renderer's copies hold
    /// ([`WorldParams::draw_shares`]).
    pub fn draw_share(&self, species: usize) -> f32 {
        self.draw_shares.get(species).copied().unwrap_or(0.0)
    }

    /// Biome memberships at `(x, z)` metres from `maps`, into `out` (one per
    /// biome); false outside the maps.
    pub fn memberships(&self, maps: &AttributeMaps, x: f32, z: f32, out: &mut [f32]) -> bool {
        match maps.at(x, z) {
            Some(at) => {
                self.biomes.memberships(&at, x, z, out);
                true
            }
            None => false,
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

    /// What the chunks generated so far hold, on average.
    pub fn content(&self) -> ChunkContent {
        self.clock.content()
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

    /// The basin domains the chunks `first..=last` (inclusive) read, in order:
    /// those under their regions' cells, and those whose rivers and sea their
    /// attribute samples look for.
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
        let spacing = domains.params().node_spacing;
        let (lo, [w, h]) = relief::node_window(origin, cells, p.cell_size, spacing);
        let mut under = domains.cells_over(lo, w, h);
        let samples = i64::from(self.sample_apron() * p.ecology.sample_cells);
        let ends = [
            first.map(|c| i64::from(c) * n - samples),
            last.map(|c| (i64::from(c) + 1) * n + samples),
        ];
        let [_, (flo, fhi)] = attributes::node_windows(spacing, p.cell_size, ends, p.ecology.max_distance);
        under.extend(domains.cells_over(flo, (fhi[0] - flo[0] + 1) as usize, (fhi[1] - flo[1] + 1) as usize));
        under
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

    /// Attribute samples around the chunk that placement reads: those around
    /// every candidate within one min distance of the border.
    fn sample_apron(&self) -> u32 {
        let p = &self.params;
        let reach = p.trees.iter().map(|t| t.placement.min_distance).fold(0.0f32, f32::max);
        ((reach / p.cell_size).ceil() as u32).div_ceil(p.ecology.sample_cells) + 1
    }

    /// Cells of apron placement reads: the samples of [`Self::sample_apron`] with
    /// the neighbours their slopes read, and the ground of every candidate within
    /// one min distance of the border with its slope's neighbours.
    fn placement_apron(&self) -> u32 {
        self.sample_apron() * self.params.ecology.sample_cells + 2
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

    /// The attribute maps of `side`² samples from world cell `first` (a multiple
    /// of the sample spacing) on, from a region of their own, on their stored steps
    /// ([`packed::ATTRIBUTE_STEPS`]): equal to every chunk's maps at the same
    /// samples, bit for bit.
    pub fn attributes(&self, first: [i64; 2], side: u32) -> AttributeMaps {
        let p = &self.params;
        let cells = side.saturating_sub(1) * p.ecology.sample_cells + 1;
        // Two cells around the samples: the slope's neighbours and the ground's.
        let origin = first.map(|f| f - 2);
        let region = self.region(origin, cells + 4);
        let ground = RegionGround::new(&region.terrain, origin, p.cell_size);
        let sampling = Sampling {
            ground: &ground,
            terrain: &region.terrain,
            domains: self.domains.as_deref(),
            first,
            side,
        };
        packed::settle_attributes(&attributes::sample(&p.ecology, &sampling))
    }

    /// Generates chunk `coord` (see [`ChunkPayload`]), in its stored form.
    pub fn chunk(&self, coord: [i32; 2]) -> ChunkPayload {
        let stream = packed::stream(&self.generated(coord));
        let payload = packed::read_stream(&stream).expect("a stream just written reads back");
        self.clock.bytes.fetch_add(stream.len() as u64, Ordering::Relaxed);
        for t in &payload.trees {
            let layer = self.biomes.layer_of(usize::from(t.species)).unwrap_or(Layer::Canopy);
            self.clock.layers[layer as usize].fetch_add(1, Ordering::Relaxed);
        }
        payload
    }

    /// Chunk `coord` at full precision, before the store's steps
    /// ([`packed`]): what [`chunk`](Self::chunk) stores, with the erosion solver's
    /// state as the solver left it. Its hash is 0; nothing is counted in the clock.
    pub fn generated(&self, coord: [i32; 2]) -> ChunkPayload {
        let p = &self.params;
        let started = Instant::now();
        let (n, apron) = (p.chunk_cells, self.placement_apron());
        let origin = [i64::from(coord[0]) * i64::from(n), i64::from(coord[1]) * i64::from(n)];
        let region_origin = origin.map(|o| o - i64::from(apron));
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
        let (s, k) = (p.ecology.sample_cells, self.sample_apron());
        let maps = attributes::sample(
            &p.ecology,
            &Sampling {
                ground: &ground,
                terrain: &region.terrain,
                domains: self.domains.as_deref(),
                first: origin.map(|o| o - i64::from(k * s)),
                side: n / s + 1 + 2 * k,
            },
        );
        let attributes = maps
            .crop(k, k, n / s + 1)
            .expect("the chunk's samples lie inside the region's");
        let t = StageClock::add(&self.clock.ecology, t);
        let trees = self.trees(coord, &ground, &maps);
        let t = StageClock::add(&self.clock.trees, t);
        let cover = self.cover(&attributes);
        StageClock::add(&self.clock.grass, t);
        self.clock.chunks.fetch_add(1, Ordering::Relaxed);
        ChunkPayload {
            coord,
            terrain,
            surface,
            trees,
            attributes,
            cover,
            rivers,
            hash: 0,
        }
    }
}

impl WorldGen {
    /// The trees and shrubs of chunk `coord`, both layers, the canopy first.
    fn trees(&self, coord: [i32; 2], ground: &RegionGround, maps: &AttributeMaps) -> Vec<TreeInstance> {
        let p = &self.params;
        let mut memberships = vec![0.0f32; self.biomes.len()];
        let mut stems = vec![0.0f32; p.trees.len()];
        let mut out = Vec::new();
        for (l, layer) in Layer::ALL.into_iter().enumerate() {
            let (species, thrown) = &self.layers[l];
            if species.is_empty() || *thrown <= 0.0 {
                continue;
            }
            let plan = LayerPlan {
                species: species.iter().map(|&s| &p.trees[s].placement).collect(),
                thrown: *thrown,
            };
            let asked = |at: glam::Vec2, out: &mut [f32]| {
                if !self.memberships(maps, at.x, at.y, &mut memberships) {
                    return false;
                }
                stems.fill(0.0);
                self.biomes.stems(layer, &memberships, at.x, at.y, &mut stems);
                for (o, &s) in out.iter_mut().zip(species) {
                    *o = stems[s];
                }
                true
            };
            let placed = place(
                self.seed,
                "world.trees",
                (l as u32, &plan),
                coord,
                p.chunk_size(),
                ground,
                asked,
            );
            out.extend(placed.into_iter().map(|t| {
                let s = species[t.kind as usize];
                TreeInstance {
                    species: s as u16,
                    variant: (t.pick % u64::from(self.variants[s])) as u16,
                    position: t.position,
                    yaw: t.yaw,
                    scale: t.scale,
                }
            }));
        }
        out
    }

    /// The ground-cover field on the chunk's samples: the biomes' blades per
    /// cell, and one grass species per sample drawn by its share.
    fn cover(&self, maps: &AttributeMaps) -> CoverField {
        let p = &self.params;
        let seed = stream_seed(self.seed, StreamKey::Global, "world.grass") as u32;
        let n = maps.samples();
        let mut field = CoverField {
            seed,
            spacing: maps.spacing,
            side: maps.side,
            density: vec![0; n],
            kind: vec![NO_KIND; n],
        };
        let species = p.grass.species.len();
        if species == 0 || self.biomes.is_empty() {
            return field;
        }
        let mut memberships = vec![0.0f32; self.biomes.len()];
        let mut blades = vec![0.0f32; species];
        let cell_area = p.cell_size * p.cell_size;
        for k in 0..n {
            let cell = maps.cell_of((k % maps.side as usize) as u32, (k / maps.side as usize) as u32);
            let (x, z) = (cell[0] as f32 * p.cell_size, cell[1] as f32 * p.cell_size);
            self.biomes.memberships(&maps.sample(k), x, z, &mut memberships);
            blades.fill(0.0);
            self.biomes.blades(&memberships, &mut blades);
            let total: f32 = blades.iter().sum();
            if total <= 0.0 {
                continue;
            }
            let mut u = (blade_hash(seed, cell, 0, 0x6b1d) >> 8) as f32 / (1u32 << 24) as f32 * total;
            let kind = blades.iter().position(|&b| {
                let hit = u < b;
                u -= b;
                hit
            });
            field.density[k] = CoverField::quantize(total * cell_area);
            field.kind[k] = kind.unwrap_or(species - 1) as u8;
        }
        field
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
        ring: Vec::with_capacity(4 * r + 4),
    };
    let a = apron as usize;
    for z in 0..r {
        let row = (z + a) * side + a;
        s.height.extend_from_slice(&ground[row..row + r]);
        s.water.extend_from_slice(&depth[row..row + r]);
        s.material
            .extend(top[row..row + r].iter().map(|m| m.map_or(BARE, |m| m as u8)));
    }
    // The apron is at least two samples wide, so the ring lies inside the region.
    for z in [a - 1, a + r] {
        let row = z * side + a - 1;
        s.ring.extend_from_slice(&ground[row..row + r + 2]);
    }
    for x in [a - 1, a + r] {
        s.ring.extend((a..a + r).map(|z| ground[z * side + x]));
    }
    s
}
