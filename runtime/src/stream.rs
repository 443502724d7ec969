//! Chunk streaming around moving viewers: which chunks to generate, in what
//! order, on which threads, and how many to install per frame.
//!
//! A chunk goes `Requested → Generating → Ready → Installed`, and is evicted
//! when every viewer is farther than the evict radius (larger than the load
//! radius, so a viewer on a border does not make chunks flicker). Each frame the
//! host calls [`Streamer::update`] with its viewers and a [`FrameBudget`]:
//!
//! 1. finished jobs become `Ready` (a result for a chunk that was evicted in the
//!    meantime is dropped);
//! 2. chunks beyond the evict radius leave, and so do the farthest chunks
//!    beyond the load radius while more are held than the resident budget
//!    ([`Streamer::ring_chunks`] per viewer): a `Requested` one is cancelled
//!    before it starts, a `Generating` one is told to cancel (if it has not
//!    started yet it never does), an `Installed` one is handed back as
//!    [`StreamEvent::Evicted`];
//! 3. chunks within the load radius are requested, and the nearest ones (chunks
//!    ahead of a viewer first) start on the generation pool, at most
//!    `max_in_flight` at a time;
//! 4. `Ready` chunks, nearest first, are handed to the host as
//!    [`StreamEvent::Ready`] while the budget allows (installs, milliseconds
//!    spent in the host's callback, upload bytes; at least one per frame).
//!
//! The evict radius alone would let a moving viewer trail a crescent of chunks
//! it has left behind (between the two radii), so a flight would hold more
//! chunks, and more memory, than the ring it started in (the default world's
//! flight: up to 38 against the 32 of its first ring). The budget keeps the
//! hysteresis within the number of chunks the load radius can need: a viewer
//! going back and forth keeps its chunks while there is room, and a flight
//! holds at most as many as a viewer standing still can.
//!
//! Generation runs on a pool of its own (or one the host hands over), never on
//! the simulation's, and is a pure function of the coordinate
//! ([`ChunkSource::generate`]), so the content of a chunk does not depend on the
//! order, the thread count or the cache. With a [`ChunkCache`], a job reads the
//! chunk from disk when a valid file exists and writes it after generating
//! (unless the cache is a read-only baked store).
//!
//! A toy [`ChunkSource`] streamed around a viewer that stands still, then flies a
//! kilometre east: the chunks around it come in a few per frame, and the ones it left are
//! handed back.
//!
//! ```
//! use std::collections::BTreeSet;
//! use std::sync::Arc;
//!
//! use sylva_runtime::glam::Vec3;
//! use sylva_runtime::stream::{ChunkCoord, ChunkSource, FrameBudget, StreamEvent, StreamSettings, Streamer, Viewer};
//!
//! /// A world whose chunk holds the sum of its coordinates.
//! struct Sums;
//!
//! impl ChunkSource for Sums {
//!     type Payload = i64;
//!     type Ready = i64;
//!     fn generate(&self, [x, z]: ChunkCoord) -> i64 {
//!         i64::from(x) + i64::from(z)
//!     }
//!     fn prepare(&self, payload: i64) -> i64 {
//!         payload
//!     }
//!     fn cache_key(&self, [x, z]: ChunkCoord) -> u64 {
//!         u64::from(x as u32) << 32 | u64::from(z as u32)
//!     }
//!     fn upload_bytes(_: &i64) -> u64 {
//!         8
//!     }
//! }
//!
//! let settings = StreamSettings {
//!     chunk_size: 100.0,
//!     load_radius: 150.0,
//!     evict_radius: 250.0,
//!     near_radius: 50.0,
//!     max_in_flight: 4,
//! };
//! let mut streamer = Streamer::new(Arc::new(Sums), settings, Streamer::<Sums>::pool(2)?);
//! let budget = FrameBudget { installs: 4, millis: 2.0, upload_bytes: 1 << 20 };
//! let mut installed = BTreeSet::new();
//! for at in [Vec3::ZERO, Vec3::new(1000.0, 0.0, 0.0)] {
//!     let viewers = [Viewer { position: at, forward: Vec3::X }];
//!     // One update a frame, until every chunk within the load radius is installed.
//!     while !streamer.is_settled(&viewers) {
//!         streamer.update(&viewers, &budget, |event| match event {
//!             StreamEvent::Ready { coord: [x, z], payload } => {
//!                 assert_eq!(payload, i64::from(x) + i64::from(z));
//!                 installed.insert([x, z]);
//!             }
//!             StreamEvent::Evicted { coord } => {
//!                 installed.remove(&coord);
//!             }
//!         });
//!         std::thread::yield_now();
//!     }
//!     assert_eq!(installed.len(), streamer.resident());
//! }
//! assert!(installed.contains(&[10, 0]) && !installed.contains(&[0, 0]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use glam::{Vec2, Vec3};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::chunk_cache::{CacheRead, ChunkCache};
use crate::metrics::Histogram;

/// A chunk's coordinate on the grid of chunks (x, z).
pub type ChunkCoord = [i32; 2];

/// What a streamer generates: a pure function from a coordinate to a payload.
pub trait ChunkSource: Send + Sync + 'static {
    /// A generated chunk, as it is cached.
    type Payload: Send + Serialize + DeserializeOwned + 'static;
    /// A chunk made ready to install (render data derived on the pool, not cached).
    type Ready: Send + 'static;

    /// Generates chunk `coord`. Must depend on `coord` and the source's own
    /// parameters only.
    fn generate(&self, coord: ChunkCoord) -> Self::Payload;

    /// Prepares a generated or cached payload for installing, on the pool.
    fn prepare(&self, payload: Self::Payload) -> Self::Ready;

    /// The cache key of chunk `coord`: a hash of everything its content depends on.
    fn cache_key(&self, coord: ChunkCoord) -> u64;

    /// Bytes installing `ready` uploads to a renderer (counted against the budget).
    fn upload_bytes(ready: &Self::Ready) -> u64;
}

/// Radii and limits of a [`Streamer`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamSettings {
    /// Side of a chunk, metres.
    pub chunk_size: f32,
    /// Chunks nearer than this to a viewer (x, z distance to the chunk's square) are loaded, metres.
    pub load_radius: f32,
    /// Chunks farther than this from every viewer are evicted, metres; at least `load_radius`.
    pub evict_radius: f32,
    /// A chunk this near a viewer that is not installed is a hole, metres.
    pub near_radius: f32,
    /// Most jobs on the generation pool at once.
    pub max_in_flight: usize,
}

/// What one frame may spend on installing chunks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameBudget {
    /// Most chunks installed per frame.
    pub installs: u32,
    /// Most milliseconds spent in the install callback per frame.
    pub millis: f32,
    /// Most bytes uploaded per frame.
    pub upload_bytes: u64,
}

/// Where a viewer is and where it looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewer {
    /// Position, world metres (Y up).
    pub position: Vec3,
    /// View direction (need not be normalized; zero means none).
    pub forward: Vec3,
}

/// What the host must do.
#[derive(Debug)]
pub enum StreamEvent<P> {
    /// Chunk `coord` is generated: install it.
    Ready {
        /// The chunk.
        coord: ChunkCoord,
        /// Its content.
        payload: P,
    },
    /// Chunk `coord` left: remove what was installed for it.
    Evicted {
        /// The chunk.
        coord: ChunkCoord,
    },
}

/// Where a chunk is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkState {
    /// Wanted, waiting for a generation slot.
    Requested,
    /// On the generation pool.
    Generating,
    /// Generated, waiting to be installed.
    Ready,
    /// Handed to the host.
    Installed,
}

/// Counters and latencies over a streamer's life.
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    /// Chunks requested.
    pub requested: u64,
    /// Chunks generated (not read from the cache).
    pub generated: u64,
    /// Chunks read from the cache.
    pub from_cache: u64,
    /// Cache files refused (corrupt, truncated, wrong key) and regenerated.
    pub cache_rejected: u64,
    /// Cache files that could not be written.
    pub cache_write_failed: u64,
    /// Why the first cache file that could not be written was not (its path and the OS error).
    pub cache_write_error: Option<String>,
    /// Chunks handed to the host.
    pub installed: u64,
    /// Installed chunks taken back.
    pub evicted: u64,
    /// Chunks that left before their job started.
    pub cancelled: u64,
    /// Results that arrived for chunks no longer wanted.
    pub dropped: u64,
    /// Jobs whose source panicked (the chunk is asked for again while wanted).
    pub panicked: u64,
    /// Most chunks installed at once.
    pub resident_max: usize,
    /// Request to ready, per chunk.
    pub ready: Histogram,
    /// Generation (or cache read) and preparation time on the pool, per chunk.
    pub generate: Histogram,
    /// Time in the install callback, per frame.
    pub install: Histogram,
}

/// What one [`Streamer::update`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStream {
    /// Chunks installed this frame.
    pub installs: u32,
    /// Milliseconds in the install callback (evictions included).
    pub install_ms: f64,
    /// Bytes the installs upload.
    pub upload_bytes: u64,
    /// Chunks within the near radius that are not installed.
    pub holes: u32,
    /// Chunks installed after this frame.
    pub resident: usize,
}

struct Slot<P> {
    state: ChunkState,
    requested_at: Instant,
    /// The host's clock when requested (stepped mode).
    requested_host: f64,
    cancel: Arc<AtomicBool>,
    payload: Option<P>,
}

enum Outcome<P> {
    Done {
        coord: ChunkCoord,
        payload: P,
        cache: CacheUse,
        ms: f64,
    },
    Cancelled,
    /// The source panicked making the chunk; it is asked for again.
    Panicked {
        coord: ChunkCoord,
    },
}

enum CacheUse {
    None,
    Hit,
    /// Generated, after a rejected file or none; why the new file could not be written.
    Generated {
        rejected: bool,
        write_failed: Option<String>,
    },
}

/// Streams the chunks of a [`ChunkSource`] around viewers (see the module docs).
pub struct Streamer<S: ChunkSource> {
    source: Arc<S>,
    cache: Option<ChunkCache>,
    pool: Arc<rayon::ThreadPool>,
    settings: StreamSettings,
    slots: BTreeMap<ChunkCoord, Slot<S::Ready>>,
    tx: Sender<Outcome<S::Ready>>,
    rx: Receiver<Outcome<S::Ready>>,
    stats: StreamStats,
    ring_chunks: usize,
    /// Jobs on the pool that have not reported back.
    pending: usize,
    /// The host's clock, seconds, once it steps the streamer ([`Streamer::step`]).
    host_clock: Option<f64>,
}

/// Why a [`Streamer::step`] was refused.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum StepError {
    /// The step was negative, infinite or NaN.
    #[error("a step must be a finite number of seconds from 0 to {MAX_STEP_SECONDS}, got {0}")]
    Step(f64),
}

/// The longest step a host may take, seconds (a day): anything longer is a unit mistake.
pub const MAX_STEP_SECONDS: f64 = 86_400.0;

impl<S: ChunkSource> Streamer<S> {
    /// A streamer generating on `pool` (the host's, or one made for it).
    pub fn new(source: Arc<S>, settings: StreamSettings, pool: Arc<rayon::ThreadPool>) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        Self {
            source,
            cache: None,
            pool,
            settings,
            slots: BTreeMap::new(),
            tx,
            rx,
            stats: StreamStats::default(),
            ring_chunks: settings.ring_chunks(),
            pending: 0,
            host_clock: None,
        }
    }

    /// A generation pool of `threads` threads named `sylva-gen-N`.
    pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, rayon::ThreadPoolBuildError> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("sylva-gen-{i}"))
            .build()
            .map(Arc::new)
    }

    /// Reads chunks from, and writes them to, `cache`.
    pub fn with_cache(mut self, cache: ChunkCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The cache chunks are read from, if any.
    pub fn cache(&self) -> Option<&ChunkCache> {
        self.cache.as_ref()
    }

    /// The pool chunks are generated on.
    pub fn generation_pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// The source chunks come from.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The source, to change before the first job starts: `None` once a job holds it.
    pub fn source_mut(&mut self) -> Option<&mut S> {
        Arc::get_mut(&mut self.source)
    }

    /// The radii and limits.
    pub fn settings(&self) -> &StreamSettings {
        &self.settings
    }

    /// Counters and latencies so far.
    pub fn stats(&self) -> &StreamStats {
        &self.stats
    }

    /// Forgets the latencies (ready, generate, install), keeping the counters:
    /// called after a loading screen, so they describe streaming while moving.
    pub fn reset_latencies(&mut self) {
        self.stats.ready = Histogram::default();
        self.stats.generate = Histogram::default();
        self.stats.install = Histogram::default();
    }

    /// The state of chunk `coord`, `None` when it is not wanted.
    pub fn state(&self, coord: ChunkCoord) -> Option<ChunkState> {
        self.slots.get(&coord).map(|s| s.state)
    }

    /// The resident budget per viewer: the most chunks the load radius holds around one
    /// viewer, wherever in its chunk it stands. Chunks beyond the load radius are kept
    /// only while the streamer holds no more than this many per viewer.
    pub fn ring_chunks(&self) -> usize {
        self.ring_chunks
    }

    /// Chunks installed now.
    pub fn resident(&self) -> usize {
        self.slots.values().filter(|s| s.state == ChunkState::Installed).count()
    }

    /// Chunks wanted and not generated yet: waiting for a generation slot or on the pool.
    pub fn generating(&self) -> usize {
        self.slots
            .values()
            .filter(|s| matches!(s.state, ChunkState::Requested | ChunkState::Generating))
            .count()
    }

    /// Whether every chunk within the load radius of `viewers` is installed.
    pub fn is_settled(&self, viewers: &[Viewer]) -> bool {
        self.wanted(viewers, self.settings.load_radius)
            .all(|c| self.state(c) == Some(ChunkState::Installed))
    }

    /// One frame of streaming (see the module docs); `on_event` installs and evicts.
    pub fn update(
        &mut self,
        viewers: &[Viewer],
        budget: &FrameBudget,
        mut on_event: impl FnMut(StreamEvent<S::Ready>),
    ) -> FrameStream {
        self.collect_results(false);
        let mut frame = FrameStream::default();
        let started = Instant::now();
        self.evict(viewers, &mut on_event);
        self.request(viewers);
        self.dispatch(viewers);
        self.install(viewers, budget, &mut frame, &mut on_event);
        self.finish_frame(viewers, started, frame)
    }

    /// One frame of streaming by the host's clock, `dt` seconds after the last: like
    /// [`update`](Self::update), but every job started this frame (and any still running) is
    /// waited for before installing, and the budget's milliseconds do not apply (its installs
    /// and bytes still do). What arrives in which frame then depends on the viewers of each
    /// step alone, never on the machine's speed: deterministic tests, headless tools and
    /// loading screens step. Latencies are counted in the host's seconds. Call it from the
    /// host's own thread, never from one of the generation pool's: it waits for the pool.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use sylva_runtime::glam::Vec3;
    /// # use sylva_runtime::stream::*;
    /// # struct Sums;
    /// # impl ChunkSource for Sums {
    /// #     type Payload = i64;
    /// #     type Ready = i64;
    /// #     fn generate(&self, [x, z]: ChunkCoord) -> i64 { i64::from(x) + i64::from(z) }
    /// #     fn prepare(&self, payload: i64) -> i64 { payload }
    /// #     fn cache_key(&self, [x, z]: ChunkCoord) -> u64 { u64::from(x as u32) << 32 | u64::from(z as u32) }
    /// #     fn upload_bytes(_: &i64) -> u64 { 8 }
    /// # }
    /// let settings = StreamSettings { chunk_size: 100.0, load_radius: 150.0, evict_radius: 250.0, near_radius: 50.0, max_in_flight: 64 };
    /// let mut streamer = Streamer::new(Arc::new(Sums), settings, Streamer::<Sums>::pool(2)?);
    /// let budget = FrameBudget { installs: 64, millis: 0.0, upload_bytes: u64::MAX };
    /// let viewers = [Viewer { position: Vec3::ZERO, forward: Vec3::X }];
    /// // One step generates and installs the whole ring, however slow the machine.
    /// streamer.step(&viewers, &budget, 1.0 / 60.0, |_| {})?;
    /// assert!(streamer.is_settled(&viewers));
    /// assert!(streamer.step(&viewers, &budget, f64::NAN, |_| {}).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step(
        &mut self,
        viewers: &[Viewer],
        budget: &FrameBudget,
        dt: f64,
        mut on_event: impl FnMut(StreamEvent<S::Ready>),
    ) -> Result<FrameStream, StepError> {
        if !(0.0..=MAX_STEP_SECONDS).contains(&dt) {
            return Err(StepError::Step(dt));
        }
        let now = self.host_clock.unwrap_or(0.0) + dt;
        self.host_clock = Some(now);
        let mut frame = FrameStream::default();
        let started = Instant::now();
        self.evict(viewers, &mut on_event);
        self.request(viewers);
        self.dispatch(viewers);
        self.collect_results(true);
        let unlimited = FrameBudget {
            millis: f32::INFINITY,
            ..*budget
        };
        self.install(viewers, &unlimited, &mut frame, &mut on_event);
        Ok(self.finish_frame(viewers, started, frame))
    }

    fn finish_frame(&mut self, viewers: &[Viewer], started: Instant, mut frame: FrameStream) -> FrameStream {
        frame.install_ms = started.elapsed().as_secs_f64() * 1e3;
        self.stats.install.record(started.elapsed());
        frame.resident = self.resident();
        self.stats.resident_max = self.stats.resident_max.max(frame.resident);
        frame.holes = self
            .wanted(viewers, self.settings.near_radius)
            .filter(|c| self.state(*c) != Some(ChunkState::Installed))
            .count() as u32;
        frame
    }

    /// Takes in what the pool finished; with `wait`, blocks until every job started has
    /// reported back.
    fn collect_results(&mut self, wait: bool) {
        loop {
            let outcome = if wait && self.pending > 0 {
                match self.rx.recv() {
                    Ok(o) => o,
                    Err(_) => break,
                }
            } else {
                match self.rx.try_recv() {
                    Ok(o) => o,
                    Err(_) => break,
                }
            };
            self.pending = self.pending.saturating_sub(1);
            match outcome {
                Outcome::Cancelled => self.stats.cancelled += 1,
                Outcome::Panicked { coord } => {
                    self.stats.panicked += 1;
                    if self
                        .slots
                        .get(&coord)
                        .is_some_and(|s| s.state == ChunkState::Generating)
                    {
                        self.slots.remove(&coord);
                    }
                }
                Outcome::Done {
                    coord,
                    payload,
                    cache,
                    ms,
                } => {
                    self.stats.generate.record(std::time::Duration::from_secs_f64(ms / 1e3));
                    match cache {
                        CacheUse::Hit => self.stats.from_cache += 1,
                        CacheUse::None => self.stats.generated += 1,
                        CacheUse::Generated { rejected, write_failed } => {
                            self.stats.generated += 1;
                            self.stats.cache_rejected += u64::from(rejected);
                            if let Some(why) = write_failed {
                                self.stats.cache_write_failed += 1;
                                self.stats.cache_write_error.get_or_insert(why);
                            }
                        }
                    }
                    match self.slots.get_mut(&coord) {
                        Some(slot) if slot.state == ChunkState::Generating => {
                            slot.state = ChunkState::Ready;
                            slot.payload = Some(payload);
                            let waited = match self.host_clock {
                                Some(now) => std::time::Duration::from_secs_f64((now - slot.requested_host).max(0.0)),
                                None => slot.requested_at.elapsed(),
                            };
                            self.stats.ready.record(waited);
                        }
                        _ => self.stats.dropped += 1,
                    }
                }
            }
        }
    }

    fn evict(&mut self, viewers: &[Viewer], on_event: &mut impl FnMut(StreamEvent<S::Ready>)) {
        let mut by_distance: Vec<(f32, ChunkCoord)> =
            self.slots.keys().map(|&c| (self.distance(viewers, c).0, c)).collect();
        // Farthest first; ties by coordinate, so the choice does not depend on float noise.
        by_distance.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let beyond_evict = by_distance
            .iter()
            .take_while(|(d, _)| *d > self.settings.evict_radius)
            .count();
        let beyond_load = by_distance
            .iter()
            .take_while(|(d, _)| *d >= self.settings.load_radius)
            .count();
        // Chunks within the load radius are never taken for the budget: the view needs them.
        let over_budget = self.slots.len().saturating_sub(self.ring_chunks * viewers.len().max(1));
        let leaving = beyond_evict.max(over_budget.min(beyond_load));
        for (_, coord) in by_distance.into_iter().take(leaving) {
            let slot = self.slots.remove(&coord).expect("listed above");
            match slot.state {
                ChunkState::Requested => self.stats.cancelled += 1,
                // Counted when the job reports back: cancelled if it had not started, dropped if it had.
                ChunkState::Generating => slot.cancel.store(true, Ordering::Relaxed),
                ChunkState::Ready => self.stats.dropped += 1,
                ChunkState::Installed => {
                    self.stats.evicted += 1;
                    on_event(StreamEvent::Evicted { coord });
                }
            }
        }
    }

    fn request(&mut self, viewers: &[Viewer]) {
        let wanted: Vec<ChunkCoord> = self.wanted(viewers, self.settings.load_radius).collect();
        for coord in wanted {
            self.slots.entry(coord).or_insert_with(|| {
                self.stats.requested += 1;
                Slot {
                    state: ChunkState::Requested,
                    requested_at: Instant::now(),
                    requested_host: self.host_clock.unwrap_or(0.0),
                    cancel: Arc::new(AtomicBool::new(false)),
                    payload: None,
                }
            });
        }
    }

    fn dispatch(&mut self, viewers: &[Viewer]) {
        let in_flight = self.in_state(ChunkState::Generating).count();
        let free = self.settings.max_in_flight.max(1).saturating_sub(in_flight);
        for coord in self.by_priority(viewers, ChunkState::Requested).into_iter().take(free) {
            let slot = self.slots.get_mut(&coord).expect("listed by priority");
            slot.state = ChunkState::Generating;
            let job = Job {
                coord,
                source: Arc::clone(&self.source),
                cache: self.cache.clone(),
                cancel: Arc::clone(&slot.cancel),
                tx: self.tx.clone(),
            };
            self.pending += 1;
            self.pool.spawn(move || job.run());
        }
    }

    fn install(
        &mut self,
        viewers: &[Viewer],
        budget: &FrameBudget,
        frame: &mut FrameStream,
        on_event: &mut impl FnMut(StreamEvent<S::Ready>),
    ) {
        let started = Instant::now();
        for coord in self.by_priority(viewers, ChunkState::Ready) {
            let slot = self.slots.get_mut(&coord).expect("listed by priority");
            let bytes = slot.payload.as_ref().map_or(0, S::upload_bytes);
            let spent = started.elapsed().as_secs_f64() * 1e3;
            let over = frame.installs >= budget.installs
                || spent >= f64::from(budget.millis)
                || frame.upload_bytes + bytes > budget.upload_bytes;
            if over && frame.installs > 0 {
                break;
            }
            let payload = slot.payload.take().expect("a ready chunk holds its payload");
            slot.state = ChunkState::Installed;
            frame.installs += 1;
            frame.upload_bytes += bytes;
            self.stats.installed += 1;
            on_event(StreamEvent::Ready { coord, payload });
        }
    }

    fn in_state(&self, state: ChunkState) -> impl Iterator<Item = ChunkCoord> + '_ {
        self.slots
            .iter()
            .filter(move |(_, s)| s.state == state)
            .map(|(c, _)| *c)
    }

    /// Chunks in `state`, most urgent first: nearest to a viewer, those behind it
    /// counted half again as far; ties by coordinate.
    fn by_priority(&self, viewers: &[Viewer], state: ChunkState) -> Vec<ChunkCoord> {
        let mut list: Vec<(f32, ChunkCoord)> = self.in_state(state).map(|c| (self.distance(viewers, c).1, c)).collect();
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        list.into_iter().map(|(_, c)| c).collect()
    }

    /// (Nearest distance from a viewer to the chunk's square, the same weighted by view direction.)
    fn distance(&self, viewers: &[Viewer], coord: ChunkCoord) -> (f32, f32) {
        let size = self.settings.chunk_size;
        let lo = Vec2::new(coord[0] as f32, coord[1] as f32) * size;
        let centre = lo + Vec2::splat(size * 0.5);
        viewers
            .iter()
            .fold((f32::INFINITY, f32::INFINITY), |(near, urgent), v| {
                let p = Vec2::new(v.position.x, v.position.z);
                let d = (p.clamp(lo, lo + Vec2::splat(size)) - p).length();
                let ahead = Vec2::new(v.forward.x, v.forward.z)
                    .normalize_or_zero()
                    .dot((centre - p).normalize_or_zero());
                (near.min(d), urgent.min(d * (1.25 - 0.25 * ahead)))
            })
    }

    /// Chunks whose square lies strictly within `radius` of some viewer.
    fn wanted(&self, viewers: &[Viewer], radius: f32) -> impl Iterator<Item = ChunkCoord> + '_ {
        let size = self.settings.chunk_size;
        let mut set = std::collections::BTreeSet::new();
        for v in viewers {
            let cell = |x: f32| (x / size).floor() as i32;
            let (x0, x1) = (cell(v.position.x - radius), cell(v.position.x + radius));
            let (z0, z1) = (cell(v.position.z - radius), cell(v.position.z + radius));
            for z in z0..=z1 {
                for x in x0..=x1 {
                    // Strictly nearer: a chunk touching the circle from outside is not wanted,
                    // so no viewer position needs more chunks than `ring_chunks` finds.
                    if self.distance(std::slice::from_ref(v), [x, z]).0 < radius {
                        set.insert([x, z]);
                    }
                }
            }
        }
        set.into_iter()
    }
}

impl<S: ChunkSource> Drop for Streamer<S> {
    fn drop(&mut self) {
        // Jobs still queued on a shared pool need not run.
        for slot in self.slots.values() {
            slot.cancel.store(true, Ordering::Relaxed);
        }
    }
}

impl StreamSettings {
    /// The resident budget per viewer ([`Streamer::ring_chunks`]): the most chunks whose
    /// square lies within the load radius of one viewer, over viewer positions on a grid of
    /// 32 × 32 points within a chunk. The count changes only where a chunk's square enters
    /// the circle, and is never larger on such a border than beside it (within means strictly
    /// nearer), so a position the grid misses lies in a sliver; there the view's chunks still
    /// stay, and only what is kept beyond them is smaller.
    ///
    /// ```
    /// let settings = sylva_runtime::stream::StreamSettings {
    ///     chunk_size: 100.0,
    ///     load_radius: 150.0,
    ///     evict_radius: 200.0,
    ///     near_radius: 50.0,
    ///     max_in_flight: 2,
    /// };
    /// assert!((9..=16).contains(&settings.ring_chunks()));
    /// ```
    pub fn ring_chunks(&self) -> usize {
        const STEPS: usize = 32;
        let (size, radius) = (self.chunk_size, self.load_radius);
        let reach = (radius / size).ceil() as i32 + 1;
        let mut most = 0;
        for i in 0..STEPS {
            for j in 0..STEPS {
                let p = (Vec2::new(i as f32, j as f32) + 0.5) * (size / STEPS as f32);
                let mut count = 0;
                for z in -reach..=reach {
                    for x in -reach..=reach {
                        let lo = Vec2::new(x as f32, z as f32) * size;
                        count += usize::from((p.clamp(lo, lo + Vec2::splat(size)) - p).length() < radius);
                    }
                }
                most = most.max(count);
            }
        }
        most
    }
}

/// One chunk's generation, as it runs on the pool.
struct Job<S: ChunkSource> {
    coord: ChunkCoord,
    source: Arc<S>,
    cache: Option<ChunkCache>,
    cancel: Arc<AtomicBool>,
    tx: Sender<Outcome<S::Ready>>,
}

impl<S: ChunkSource> Job<S> {
    /// Runs the job; a panic in the source is reported, so a streamer waiting for its jobs
    /// never waits for one that died.
    fn run(self) {
        let (coord, tx) = (self.coord, self.tx.clone());
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.make())).is_err() {
            let _ = tx.send(Outcome::Panicked { coord });
        }
    }

    fn make(self) {
        let coord = self.coord;
        if self.cancel.load(Ordering::Relaxed) {
            // The streamer may be gone; then nobody counts.
            let _ = self.tx.send(Outcome::Cancelled);
            return;
        }
        let started = Instant::now();
        let (payload, cache) = match &self.cache {
            None => (self.source.generate(coord), CacheUse::None),
            Some(cache) => {
                let key = self.source.cache_key(coord);
                match cache.read(key) {
                    CacheRead::Hit(payload) => (payload, CacheUse::Hit),
                    found => {
                        let payload = self.source.generate(coord);
                        let write_failed = if cache.is_read_only() {
                            None
                        } else {
                            let written = cache.write(key, &payload);
                            written.err().map(|e| format!("{}: {e}", cache.path(key).display()))
                        };
                        let rejected = matches!(found, CacheRead::Rejected(_));
                        (payload, CacheUse::Generated { rejected, write_failed })
                    }
                }
            }
        };
        let payload = self.source.prepare(payload);
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let _ = self.tx.send(Outcome::Done {
            coord,
            payload,
            cache,
            ms,
        });
    }
}
