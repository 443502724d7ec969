//! The report's `streaming` object: what a flight through a streamed world measures frame by
//! frame ([`FlightLog`]) and the [`WorldStreamer`]'s own counters, latencies and chunk hashes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use sylva_runtime::metrics::{Histogram, ThreadTimes, rss_bytes};
use sylva_runtime::stream::FrameStream;

use super::chunk::{ChunkContent, StageMillis};
use super::domains::{DomainCounts, Domains};
use super::streamer::WorldStreamer;

/// Per-frame measurements of a flight.
#[derive(Clone, Debug, Default)]
pub struct FlightLog {
    /// Main-thread milliseconds per frame (streaming, installs, simulation, rendering).
    pub frame_ms: Vec<f32>,
    /// Install milliseconds per frame.
    pub install: Histogram,
    /// The renderer's own CPU work per rendered frame (its time less its wait for the GPU):
    /// it spikes where installs bring new batches. A software GPU (lavapipe) rasterizes on
    /// the same cores, which inflates it.
    pub render_cpu: Histogram,
    /// The frame thread's time on a core over each render call: the renderer's own work.
    pub render_on_cpu: Histogram,
    /// The frame thread's time queued for a core over each render call, while other threads
    /// (a software GPU's) held the cores.
    pub render_queued: Histogram,
    /// Frames in which some chunk within the near radius was not installed.
    pub holes: u64,
    /// Resident memory once the first ring was installed, bytes.
    pub rss_first_ring: Option<u64>,
    /// Resident memory at the first eviction, bytes: the streaming window is full
    /// (chunks up to the evict radius are resident), so memory should stay near
    /// this from here on.
    pub rss_after_warmup: Option<u64>,
    /// Most resident memory seen at a frame, bytes.
    pub rss_max: u64,
    /// Milliseconds until the first ring of chunks was installed.
    pub warmup_ms: f64,
    /// Milliseconds of the first frame rendered after the warm-up, which uploads the whole
    /// first ring (none without a renderer). It is not in `frame_ms`.
    pub first_frame_ms: Option<f64>,
}

impl FlightLog {
    /// Records one frame; `evicted` is how many chunks were evicted so far.
    pub fn record(&mut self, frame: Duration, stream: &FrameStream, evicted: u64) {
        self.frame_ms.push(frame.as_secs_f32() * 1e3);
        if self.rss_after_warmup.is_none() && evicted > 0 {
            self.rss_after_warmup = rss_bytes();
        }
        self.install.record(Duration::from_secs_f64(stream.install_ms / 1e3));
        self.holes += u64::from(stream.holes > 0);
        if self.frame_ms.len() % 30 == 1 {
            self.rss_max = self.rss_max.max(rss_bytes().unwrap_or(0));
        }
    }

    /// Records the renderer's own CPU work in one frame of the flight: its time less its wait
    /// for the GPU (`cpu`), and the frame thread's time on a core and queued for one over the
    /// render call (`times`), where the OS tells them.
    pub fn rendered(&mut self, cpu: Duration, times: Option<ThreadTimes>) {
        self.render_cpu.record(cpu);
        if let Some(t) = times {
            self.render_on_cpu.record(t.on_cpu);
            self.render_queued.record(t.waiting);
        }
    }

    /// Marks the end of the loading screen: the first ring is installed.
    pub fn warmed_up(&mut self, warmup_ms: f64) {
        self.warmup_ms = warmup_ms;
        self.rss_first_ring = rss_bytes();
        self.rss_max = self.rss_max.max(self.rss_first_ring.unwrap_or(0));
    }
}

/// The report's `streaming` object: chunk counts, latencies, frame times, memory.
#[derive(Clone, Debug, Serialize)]
pub struct StreamingReport {
    /// Chunks by what happened to them.
    pub chunks: ChunkCounts,
    /// Basin domains by how they were obtained (null for a world without basins).
    pub domains: Option<DomainCounts>,
    /// Most chunks installed at once.
    pub resident_max: usize,
    /// Request to ready per chunk, milliseconds.
    pub ready_ms: Quantiles,
    /// Generation (or cache read) plus preparation per chunk on the pool, milliseconds.
    pub generate_ms: Quantiles,
    /// Mean generation cost per chunk by stage, milliseconds.
    pub stages_ms: StageMillis,
    /// What a generated chunk holds on average: payload bytes, canopy and understory instances.
    pub per_chunk: ChunkContent,
    /// Resident memory at the end over the most chunks resident at once, bytes (everything
    /// the process holds, shared by the chunks).
    pub host_bytes_per_resident_chunk: Option<u64>,
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
    /// The first frame rendered after the warm-up, which uploads the whole first ring and is
    /// not counted in `frame_ms`, milliseconds (null without a renderer).
    pub first_frame_ms: Option<f64>,
    /// The renderer's own CPU work per frame of the flight, its wait for the GPU left out
    /// (null without a renderer).
    pub render_cpu_ms: Option<Quantiles>,
    /// The frame thread's time on a core over each frame's render call: the renderer's own
    /// work (null without a renderer, or where the OS does not tell).
    pub render_on_cpu_ms: Option<Quantiles>,
    /// The frame thread's time queued for a core over each frame's render call, while other
    /// threads held the cores (null as `render_on_cpu_ms`).
    pub render_queued_ms: Option<Quantiles>,
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
    /// Generated chunks that could not be written to the cache (a full disk, a
    /// read-only directory).
    pub cache_write_failed: u64,
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
                cache_write_failed: s.cache_write_failed,
                installed: s.installed,
                evicted: s.evicted,
                cancelled: s.cancelled,
                dropped: s.dropped,
            },
            domains: world.domains().map(Domains::counts),
            resident_max: s.resident_max,
            ready_ms: Quantiles::of(&s.ready),
            generate_ms: Quantiles::of(&s.generate),
            stages_ms: world.stages(),
            per_chunk: world.chunk_content(),
            host_bytes_per_resident_chunk: end.map(|e| e / s.resident_max.max(1) as u64),
            install_ms_per_frame: Quantiles::of(&log.install),
            frame_ms: Quantiles::of(&frames),
            hitches,
            holes: log.holes,
            frames: log.frame_ms.len() as u64,
            warmup_ms: log.warmup_ms,
            first_frame_ms: log.first_frame_ms,
            render_cpu_ms: (log.render_cpu.count() > 0).then(|| Quantiles::of(&log.render_cpu)),
            render_on_cpu_ms: (log.render_on_cpu.count() > 0).then(|| Quantiles::of(&log.render_on_cpu)),
            render_queued_ms: (log.render_queued.count() > 0).then(|| Quantiles::of(&log.render_queued)),
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
