//! The JSON report written by `--report`: the contract benchmarks and CI read.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use sylva_runtime::metrics::{FrameReport, Histogram, SystemReport, peak_rss_bytes, rss_bytes};
use sylva_runtime::{App, SnapshotError};
use sylva_systems::colonize::ColonizeStats;
use sylva_systems::colonize::{Attractor, Colonizing};
use sylva_systems::grass::{GrassLayers, GrassStats};
use sylva_systems::particles::{Pinned, Position, Spring};
use sylva_systems::placement::forest::ForestStats;
use sylva_systems::species::TreeStats;
use sylva_systems::terrain::{self, TerrainChunk, TerrainReport};
use sylva_systems::tree::{Segment, Tree};
use sylva_systems::world::{StageMillis, WorldStreamer};

use crate::flight::FlightLog;

/// Everything measured in one run. Later domains add their own sections.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Scene name.
    pub scene: String,
    /// World seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Frames run.
    pub frames: u64,
    /// Fixed simulation steps run.
    pub steps: u64,
    /// Simulated seconds.
    pub sim_seconds: f64,
    /// Wall-clock time of the whole run, milliseconds.
    pub wall_ms: f64,
    /// Entity counts per kind.
    pub entities: BTreeMap<String, usize>,
    /// Per-system calls and timings, keyed by system name.
    pub systems: BTreeMap<String, SystemReport>,
    /// Frame-time percentiles, milliseconds.
    pub frame_ms: FrameReport,
    /// Peak resident memory of the process, bytes (null where the OS does not say).
    pub peak_rss_bytes: Option<u64>,
    /// Hash of the final simulation state as 16 hex digits; equal for any thread count.
    pub state_hash: String,
    /// Particle solver throughput.
    pub particles: ParticleReport,
    /// The scene's tree, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeReport>,
    /// The scene's forest, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forest: Option<ForestStats>,
    /// The scene's terrain, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terrain: Option<TerrainReport>,
    /// The scene's grass, when it has some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grass: Option<GrassReport>,
    /// Chunk streaming, for world scenes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingReport>,
    /// The renderer, when the run rendered (`--screenshot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub render: Option<RenderReport>,
}

/// The report's `streaming` object: chunk counts, latencies, frame times, memory.
#[derive(Clone, Debug, Serialize)]
pub struct StreamingReport {
    /// Chunks by what happened to them.
    pub chunks: ChunkCounts,
    /// Most chunks installed at once.
    pub resident_max: usize,
    /// Request to ready per chunk, milliseconds.
    pub ready_ms: Quantiles,
    /// Generation (or cache read) plus preparation per chunk on the pool, milliseconds.
    pub generate_ms: Quantiles,
    /// Mean generation cost per chunk by stage, milliseconds.
    pub stages_ms: StageMillis,
    /// Main-thread install work per frame, milliseconds.
    pub install_ms_per_frame: Quantiles,
    /// Main-thread frame time, milliseconds.
    pub frame_ms: Quantiles,
    /// Frames over twice the median or over 16.7 ms.
    pub hitches: u64,
    /// Frames in which a chunk within the near radius was not installed.
    pub holes: u64,
    /// Frames flown after the warm-up.
    pub frames: u64,
    /// Until the first ring was installed, milliseconds.
    pub warmup_ms: f64,
    /// Growing the tree variants and baking the grass, milliseconds.
    pub content_ms: f64,
    /// Resident memory, bytes.
    pub rss_bytes: RssReport,
    /// Content hash of every installed chunk, keyed `"x,z"`.
    pub chunk_hashes: BTreeMap<String, String>,
}

/// Chunk counters of the streaming report.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ChunkCounts {
    /// Requested.
    pub requested: u64,
    /// Generated.
    pub generated: u64,
    /// Read from the cache.
    pub from_cache: u64,
    /// Cache files refused and regenerated.
    pub cache_rejected: u64,
    /// Installed.
    pub installed: u64,
    /// Evicted after being installed.
    pub evicted: u64,
    /// Cancelled before generation started.
    pub cancelled: u64,
    /// Generated but no longer wanted when ready.
    pub dropped: u64,
}

/// Percentiles of a distribution, milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Quantiles {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Quantiles {
    fn of(h: &Histogram) -> Self {
        Self {
            p50: h.quantile_ms(0.5),
            p95: h.quantile_ms(0.95),
            p99: h.quantile_ms(0.99),
            max: h.max_ms(),
        }
    }
}

/// Resident memory of a flight.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RssReport {
    /// When the first ring of chunks was installed.
    pub first_ring: Option<u64>,
    /// After the warm-up: at the first eviction, when the window of resident chunks
    /// (out to the evict radius) is full; null when nothing was evicted.
    pub after_warmup: Option<u64>,
    /// At the end.
    pub end: Option<u64>,
    /// Most seen.
    pub max: u64,
}

impl StreamingReport {
    /// The report of a world's streaming over a flight.
    pub fn new(world: &WorldStreamer, log: &FlightLog) -> Self {
        let s = world.stats();
        let mut frames = Histogram::default();
        for &ms in &log.frame_ms {
            frames.record(Duration::from_secs_f64(f64::from(ms) / 1e3));
        }
        let median = frames.quantile_ms(0.5);
        let hitches = log
            .frame_ms
            .iter()
            .filter(|&&ms| f64::from(ms) > 2.0 * median || ms > 16.7)
            .count() as u64;
        let end = rss_bytes();
        Self {
            chunks: ChunkCounts {
                requested: s.requested,
                generated: s.generated,
                from_cache: s.from_cache,
                cache_rejected: s.cache_rejected,
                installed: s.installed,
                evicted: s.evicted,
                cancelled: s.cancelled,
                dropped: s.dropped,
            },
            resident_max: s.resident_max,
            ready_ms: Quantiles::of(&s.ready),
            generate_ms: Quantiles::of(&s.generate),
            stages_ms: world.stages(),
            install_ms_per_frame: Quantiles::of(&log.install),
            frame_ms: Quantiles::of(&frames),
            hitches,
            holes: log.holes,
            frames: log.frame_ms.len() as u64,
            warmup_ms: log.warmup_ms,
            content_ms: world.content().grow_ms + world.content().bake_ms,
            rss_bytes: RssReport {
                first_ring: log.rss_first_ring,
                after_warmup: log.rss_after_warmup,
                end,
                max: log.rss_max.max(end.unwrap_or(0)),
            },
            chunk_hashes: world
                .hashes()
                .iter()
                .map(|(c, h)| (format!("{},{}", c[0], c[1]), format!("{h:016x}")))
                .collect(),
        }
    }
}

/// The report's `render` object.
#[derive(Clone, Debug, Serialize)]
pub struct RenderReport {
    /// The Vulkan device's name.
    pub device: String,
    /// Frames rendered.
    pub frames: u64,
    /// Draw calls per frame, mean.
    pub draw_calls_per_frame: f64,
    /// Cylinder instances and points drawn in the last frame.
    pub instances: u64,
    /// Bytes uploaded per frame, mean.
    pub upload_bytes_per_frame: f64,
    /// Device memory reserved by the allocator, bytes.
    pub gpu_memory_bytes: u64,
    /// Validation-layer errors (0 when the layer is not installed).
    pub validation_errors: u32,
    /// Validation-layer warnings.
    pub validation_warnings: u32,
    /// Render time per frame on the CPU including the wait for the GPU, mean, ms.
    pub frame_ms: f64,
}

impl RenderReport {
    /// The report of a renderer's totals.
    #[cfg(feature = "render")]
    pub fn new(s: &sylva_vk::RenderStats) -> RenderReport {
        let per_frame = |x: f64| if s.frames == 0 { 0.0 } else { x / s.frames as f64 };
        RenderReport {
            device: s.device.clone(),
            frames: s.frames,
            draw_calls_per_frame: per_frame(s.draw_calls as f64),
            instances: s.last.instances(),
            upload_bytes_per_frame: per_frame(s.upload_bytes as f64),
            gpu_memory_bytes: s.last.gpu_memory_bytes,
            validation_errors: s.validation_errors,
            validation_warnings: s.validation_warnings,
            frame_ms: per_frame(s.frame_ms),
        }
    }
}

/// The report's `tree` object: the tree's sizes and timings, plus the colonization run for
/// colonization scenes.
#[derive(Clone, Debug, Serialize)]
pub struct TreeReport {
    /// Sizes and timings.
    #[serde(flatten)]
    pub stats: TreeStats,
    /// The colonization run, for colonization scenes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colonize: Option<ColonizeStats>,
}

/// The report's `grass` object.
#[derive(Clone, Debug, Serialize)]
pub struct GrassReport {
    /// Blade instances planted, over all species.
    pub blades: usize,
    /// Particles of all instances, roots included.
    pub particles: usize,
    /// Spring-damper links of all instances.
    pub springs: usize,
    /// Frames baked, over all species.
    pub baked_frames: u64,
    /// Wall time of all bakes, ms.
    pub bake_ms: f64,
    /// Blade steps per second of bake time (every blade of the bake field, warm-up and recording).
    pub steps_per_s: f64,
    /// Blades simulated live at the end of the run.
    pub live_blades: usize,
    /// Bytes of baked textures.
    pub texture_bytes: usize,
}

impl GrassReport {
    /// The grass object of `app`, when it has grass.
    pub fn of(app: &App) -> Option<Self> {
        let res = &app.world.resources;
        let stats = *res.get::<GrassStats>()?;
        Some(GrassReport {
            blades: stats.blades,
            particles: stats.particles,
            springs: stats.springs,
            baked_frames: stats.baked_frames,
            bake_ms: stats.bake_ms,
            steps_per_s: if stats.bake_ms > 0.0 {
                stats.bake_blade_steps as f64 / (stats.bake_ms / 1e3)
            } else {
                0.0
            },
            live_blades: res.get::<GrassLayers>().map_or(0, |l| l.live_blades()),
            texture_bytes: stats.texture_bytes,
        })
    }
}

/// Particle and spring throughput.
#[derive(Clone, Debug, Serialize)]
pub struct ParticleReport {
    /// Particles simulated (pinned roots included).
    pub particles: usize,
    /// Springs simulated.
    pub springs: usize,
    /// Particle updates per second of time spent in `particles.step`.
    pub updates_per_s: f64,
    /// Spring evaluations per second of time spent in `particles.step`.
    pub springs_per_s: f64,
}

/// The `tree` object: a tree grown while building, or one growing in the app (`colonize.grow`,
/// whose total time is then the colonization's `grow_ms`).
fn tree_report(app: &App, systems: &BTreeMap<String, SystemReport>) -> Option<TreeReport> {
    let world = &app.world;
    if let Some(t) = world.resources.get::<TreeStats>() {
        return Some(TreeReport {
            stats: *t,
            colonize: world.resources.get::<ColonizeStats>().map(|c| *c),
        });
    }
    let grow_ms = systems.get("colonize.grow").map_or(0.0, |s| s.total_ms);
    let mut growing = world.entities.query::<&Colonizing>();
    let c = growing.iter().next()?.colonizer();
    Some(TreeReport {
        stats: TreeStats {
            segments: c.nodes(),
            ..TreeStats::default()
        },
        colonize: Some(c.stats(grow_ms)),
    })
}

impl Report {
    /// Gathers the report of `app` after a run of `wall` wall-clock time.
    pub fn gather(app: &App, scene: &str, wall: Duration) -> Result<Self, SnapshotError> {
        let world = &app.world;
        let particles = world.count::<Position>();
        let springs = world.count::<Spring>();
        let entities = BTreeMap::from([
            ("particles".to_owned(), particles),
            ("pinned".to_owned(), world.count::<Pinned>()),
            ("springs".to_owned(), springs),
            ("trees".to_owned(), world.count::<Tree>()),
            ("segments".to_owned(), world.count::<Segment>()),
            ("attractors".to_owned(), world.count::<Attractor>()),
            ("terrain_chunks".to_owned(), world.count::<TerrainChunk>()),
            ("total".to_owned(), world.entities.len() as usize),
        ]);
        let systems = app.metrics().systems();
        let tree = tree_report(app, &systems);
        let time = app.time();
        let step_s = systems.get("particles.step").map(|s| s.total_ms / 1e3).unwrap_or(0.0);
        let per_s = |n: usize| {
            if step_s > 0.0 {
                n as f64 * time.tick as f64 / step_s
            } else {
                0.0
            }
        };
        Ok(Self {
            scene: scene.to_owned(),
            seed: time.seed,
            threads: app.threads(),
            frames: app.metrics().frame_count(),
            steps: time.tick,
            sim_seconds: time.elapsed,
            wall_ms: wall.as_secs_f64() * 1e3,
            entities,
            systems,
            frame_ms: app.metrics().frames(),
            peak_rss_bytes: peak_rss_bytes(),
            state_hash: format!("{:016x}", app.state_hash()?),
            particles: ParticleReport {
                particles,
                springs,
                updates_per_s: per_s(particles - world.count::<Pinned>()),
                springs_per_s: per_s(springs),
            },
            tree,
            forest: world.resources.get::<ForestStats>().map(|f| f.clone()),
            terrain: (world.count::<TerrainChunk>() > 0).then(|| terrain::report(app)),
            grass: GrassReport::of(app),
            streaming: None,
            render: None,
        })
    }

    /// Writes the report as pretty JSON, atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        sylva_runtime::framed::write_atomic(path, (json + "\n").as_bytes())
    }
}
