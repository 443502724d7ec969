//! [`WorldStreamer`]: the world an engine drives, frame by frame.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use sylva_runtime::chunk_cache::ChunkCache;
use sylva_runtime::extract::HorizonBatch;
use sylva_runtime::stream::{
    FrameBudget, FrameStream, StepError, StreamEvent, StreamSettings, StreamStats, Streamer, Viewer,
};
use sylva_runtime::{App, FieldError, Validate};

use crate::mesh_kit::MeshKit;

use super::blades::cover_rules;
use super::chunk::{ChunkContent, StageMillis, WorldGen};
use super::content::{ContentError, WorldContent, grow_content};
use super::domains::Domains;
use super::horizon::{FarCanopy, Horizon};
use super::install::{evict_chunk, install_chunk, install_world};
use super::live_grass::install_live;
use super::params::WorldParams;
use super::source::{ChunkHook, ChunkParts, MAX_LISTED_BLADES, PreparedCounts, ReadyChunk, WorldSource};
use super::store::{StoreError, is_store, open_store};

/// Why a world could not start.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// A parameter is out of range (the path is below `world`).
    #[error("world: {0}")]
    Invalid(#[from] FieldError),
    /// A species could not be grown or baked.
    #[error("world.{0}")]
    Content(#[from] ContentError),
    /// The generation pool could not start.
    #[error("generation pool: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
    /// The cache directory could not be opened.
    #[error("cache {path}: {source}")]
    Cache {
        /// The directory.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The baked store could not be opened.
    #[error("baked store {0}")]
    Store(#[from] StoreError),
    /// The chunk parts asked for are none.
    #[error(
        "the chunk parts ask for nothing: a ready chunk always carries its payload; ask for tree instances, the ground patch, blades or meshes"
    )]
    NoParts,
    /// Blades listed on the CPU ([`ChunkParts::blades`]) would pass [`MAX_LISTED_BLADES`] a
    /// chunk at the world's `draw.blades_per_m2`.
    #[error(
        "chunk parts: listing blades on the CPU makes up to {asked} blades a chunk at draw.blades_per_m2 \
         {per_m2}, more than {MAX_LISTED_BLADES}: lower draw.blades_per_m2, or expand the blades where they \
         are drawn from the ground patch's cover (expand_ground)"
    )]
    TooManyBlades {
        /// Blades a chunk may list.
        asked: u64,
        /// The world's drawn blades per m².
        per_m2: f32,
    },
    /// Chunk parts or a hook were set after streaming started.
    #[error("{0} must be set before the first update: chunks are being made already")]
    Started(&'static str),
    /// A step of the host's clock was refused.
    #[error("stream step: {0}")]
    Step(#[from] StepError),
    /// Settling gave up: chunks kept failing (their source panicked).
    #[error("not settled after {steps} steps: {panicked} chunk jobs panicked")]
    NotSettled {
        /// Steps taken.
        steps: u64,
        /// Jobs that panicked so far.
        panicked: u64,
    },
}

/// Builds a scene's world (scene section `world`) into `app`: grows its content on a generation
/// pool of its own ([`WorldStreamer::new`]) and installs its resources and frame systems; the
/// streamer it returns streams the chunks in, frame by frame.
pub fn build(app: &mut App, params: &WorldParams, seed: u64) -> Result<WorldStreamer, WorldError> {
    let world = WorldStreamer::new(params, seed, None)?;
    world.install(app);
    Ok(world)
}

/// A world streamed around viewers: the chunk function, its grown content, the
/// [`Streamer`] and the budget. Each frame, [`update`](Self::update) installs
/// into and evicts from an [`App`]; a host that keeps its own world calls
/// [`update_with`](Self::update_with) and handles the events itself.
///
/// ```no_run
/// # mod sylva { pub use sylva_runtime as runtime; pub use sylva_systems as systems; }
/// use sylva::runtime::glam::Vec3;
/// use sylva::runtime::stream::Viewer;
/// use sylva::systems::world::{WorldParams, WorldStreamer};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut app = sylva::runtime::App::new(Default::default())?;
/// let mut world = WorldStreamer::new(&WorldParams::default(), 1, None)?;
/// world.install(&mut app);
/// let viewer = Viewer { position: Vec3::ZERO, forward: Vec3::X };
/// loop {
///     world.update(&mut app, &[viewer]);
///     app.update(1.0 / 60.0);
///     # break;
/// }
/// # Ok(()) }
/// ```
pub struct WorldStreamer {
    streamer: Streamer<WorldSource>,
    budget: FrameBudget,
    grass: super::params::WorldGrass,
    content: Arc<WorldContent>,
    hashes: BTreeMap<[i32; 2], u64>,
    /// The far field around the first viewer, when the world has basin domains.
    horizon: Option<Horizon>,
    /// Whether a frame has been streamed (parts and hooks are set before).
    started: bool,
}

impl WorldStreamer {
    /// Validates `params`, grows the species and bakes the grass on the
    /// generation pool (`pool`, or one of `params.threads` threads), and opens
    /// the cache when the world names one.
    pub fn new(params: &WorldParams, seed: u64, pool: Option<Arc<rayon::ThreadPool>>) -> Result<Self, WorldError> {
        params.validate()?;
        let pool = match pool {
            Some(p) => p,
            None => Streamer::<WorldSource>::pool(params.generation_threads())?,
        };
        let content = Arc::new(pool.install(|| grow_content(params, seed))?);
        let settings = params.stream_settings(pool.current_num_threads() * 2);
        let source = WorldSource::new(WorldGen::new(params.clone(), seed), Arc::clone(&content));
        let canopy = Arc::new(FarCanopy {
            biomes: source.chunks().biomes().clone(),
            ecology: params.ecology.clone(),
        });
        let horizon = source
            .chunks()
            .domains()
            .map(|d| Horizon::new(Arc::clone(d), Some(Arc::clone(&canopy))));
        let mut streamer = Streamer::new(Arc::new(source), settings, pool);
        if let Some(dir) = &params.cache {
            streamer = with_cache(streamer, dir)?;
        }
        Ok(Self {
            streamer,
            budget: FrameBudget {
                installs: params.budget.installs,
                millis: params.budget.millis,
                upload_bytes: params.budget.upload_bytes,
            },
            grass: params.grass.clone(),
            content,
            hashes: BTreeMap::new(),
            horizon,
            started: false,
        })
    }

    /// Makes `parts` of each ready chunk instead of Sylva's render batches: a host with its
    /// own renderer asks for what it uses ([`ChunkParts::MESHES`], say), and nothing else is
    /// built. Set before the first update; a mask of no part is refused.
    ///
    /// ```no_run
    /// # mod sylva { pub use sylva_runtime as runtime; pub use sylva_systems as systems; }
    /// use sylva::systems::world::{ChunkParts, WorldParams, WorldStreamer};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let world = WorldStreamer::new(&WorldParams::default(), 1, None)?.with_parts(ChunkParts::MESHES)?;
    /// # Ok(()) }
    /// ```
    pub fn with_parts(mut self, parts: ChunkParts) -> Result<Self, WorldError> {
        if parts.is_empty() {
            return Err(WorldError::NoParts);
        }
        if parts.blades {
            let p = self.streamer.source().chunks().params();
            let per_m2 = p.draw.blades_per_m2;
            // At most the drawn density per cell, rounded up, in every cell.
            let per_cell = (per_m2 * p.cell_size * p.cell_size).ceil() as u64 + 1;
            let asked = per_cell * u64::from(p.chunk_cells).pow(2);
            if asked > MAX_LISTED_BLADES {
                return Err(WorldError::TooManyBlades { asked, per_m2 });
            }
        }
        self.source_mut("chunk parts")?.set_parts(parts);
        Ok(self)
    }

    /// Runs `hook` on the generation pool on every ready chunk, after its parts are made,
    /// with the world's mesh kit: the host turns the chunk into its own type there (GPU-ready
    /// buffers, say), off the main thread and outside the install budget, and takes it from
    /// the ready event with [`ReadyChunk::take_hosted`]. A hook that panics gives that chunk
    /// a [`HookError`](super::HookError) and the pool goes on. Set before the first update.
    ///
    /// ```no_run
    /// # mod sylva { pub use sylva_runtime as runtime; pub use sylva_systems as systems; }
    /// use sylva::runtime::glam::Vec3;
    /// use sylva::runtime::stream::{StreamEvent, Viewer};
    /// use sylva::systems::world::{ChunkParts, WorldParams, WorldStreamer};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut world = WorldStreamer::new(&WorldParams::default(), 1, None)?
    ///     .with_parts(ChunkParts::MESHES)?
    ///     .with_hook(|ready, _kit| ready.meshes.as_ref().map_or(0, |m| m.ground[0].triangle_count()))?;
    /// let viewer = Viewer { position: Vec3::ZERO, forward: Vec3::X };
    /// world.step(&[viewer], 1.0 / 60.0, |event| {
    ///     if let StreamEvent::Ready { mut payload, .. } = event {
    ///         let triangles: usize = payload.take_hosted().expect("a hook ran").expect("it did not panic");
    ///         println!("{triangles} ground triangles");
    ///     }
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn with_hook<T: Send + 'static>(
        mut self,
        hook: impl Fn(&ReadyChunk, &MeshKit) -> T + Send + Sync + 'static,
    ) -> Result<Self, WorldError> {
        let boxed: ChunkHook = Arc::new(move |ready: &ReadyChunk, kit: &MeshKit| Box::new(hook(ready, kit)) as _);
        self.source_mut("a chunk hook")?.set_hook(Some(boxed));
        Ok(self)
    }

    /// The source, while no job holds it.
    fn source_mut(&mut self, what: &'static str) -> Result<&mut WorldSource, WorldError> {
        if self.started {
            return Err(WorldError::Started(what));
        }
        self.streamer.source_mut().ok_or(WorldError::Started(what))
    }

    /// What the generation pool made of ready chunks so far: chunks and nanoseconds per part.
    pub fn prepared(&self) -> &PreparedCounts {
        self.streamer.source().prepared()
    }

    /// Reads and writes chunks in `dir` instead of the scene's cache; a baked
    /// store (see [`create_store`](super::store::create_store)) is only read.
    pub fn with_cache(mut self, dir: &Path) -> Result<Self, WorldError> {
        self.streamer = with_cache(self.streamer, dir)?;
        Ok(self)
    }

    /// The chunk cache or baked store, if any.
    pub fn cache(&self) -> Option<&ChunkCache> {
        self.streamer.cache()
    }

    /// The basin domains, when the world has them.
    pub fn domains(&self) -> Option<&Domains> {
        self.streamer.source().chunks().domains().map(|d| &**d)
    }

    /// Solves ahead, on the generation pool, the basin domains that own ground
    /// within the load radius plus a quarter domain of a viewer: a domain
    /// takes far longer than a chunk, and the chunks over it would wait for it.
    fn prefetch(&self, viewers: &[Viewer]) {
        let Some(domains) = self.streamer.source().chunks().domains() else {
            return;
        };
        let radius = self.streamer.settings().load_radius + 0.25 * domains.domain_size();
        for v in viewers {
            let at = glam::Vec2::new(v.position.x, v.position.z);
            domains.prefetch(at, radius, self.streamer.generation_pool());
        }
    }

    /// Inserts the world's resources and frame systems into `app` (once).
    pub fn install(&self, app: &mut App) {
        let source = self.streamer.source();
        let cell_size = source.chunks().params().cell_size;
        let cover = cover_rules(&self.grass.species, cell_size, source.blade_share());
        install_world(app, &self.content, &self.grass, &cover);
        let chunk_cells = source.chunks().params().chunk_cells;
        install_live(app, &self.content, &self.grass, &cover, (chunk_cells, cell_size));
        app.world.resources.insert(HorizonBatch {
            sea_level: self.domains().map(|d| d.params().sea_level),
            ..HorizonBatch::default()
        });
    }

    /// Starts the far field around the first viewer on the generation pool when it has
    /// none near and no chunk is being generated, and hands a finished one to `app`'s
    /// [`HorizonBatch`].
    fn horizon(&mut self, app: &mut App, viewers: &[Viewer]) {
        let (Some(horizon), Some(v)) = (&mut self.horizon, viewers.first()) else {
            return;
        };
        let at = glam::Vec2::new(v.position.x, v.position.z);
        let idle = self.streamer.generating() == 0;
        if let Some(field) = horizon.update(at, idle, self.streamer.generation_pool())
            && let Some(mut batch) = app.world.resources.get_mut::<HorizonBatch>()
        {
            batch.set_field(field);
        }
    }

    /// Whether the far field around the first of `viewers` is in the app (always true for
    /// a world without basin domains, which has none, and without viewers).
    pub fn is_horizon_ready(&self, viewers: &[Viewer]) -> bool {
        match (&self.horizon, viewers.first()) {
            (Some(h), Some(v)) => h.is_ready(glam::Vec2::new(v.position.x, v.position.z)),
            _ => true,
        }
    }

    /// One frame: installs ready chunks into `app` within the budget and evicts far ones.
    pub fn update(&mut self, app: &mut App, viewers: &[Viewer]) -> FrameStream {
        self.started = true;
        let content = Arc::clone(&self.content);
        self.prefetch(viewers);
        self.horizon(app, viewers);
        let hashes = &mut self.hashes;
        let mut left = Vec::new();
        let frame = self.streamer.update(viewers, &self.budget, |event| match event {
            StreamEvent::Ready { coord, payload } => {
                hashes.insert(coord, payload.payload.hash);
                install_chunk(app, payload, &content);
            }
            StreamEvent::Evicted { coord } => left.push(evict_chunk(app, coord)),
        });
        // Freeing an evicted chunk's megabytes is the generation pool's work, not the frame's.
        if !left.is_empty() {
            self.streamer.generation_pool().spawn(move || drop(left));
        }
        frame
    }

    /// One frame for a host with its own world: `on_event` receives each ready
    /// chunk (payload and render data) and each eviction. The far field is the
    /// host's to make ([`far_field`](super::far_field) over [`domains`](Self::domains)).
    pub fn update_with(
        &mut self,
        viewers: &[Viewer],
        mut on_event: impl FnMut(StreamEvent<ReadyChunk>),
    ) -> FrameStream {
        self.started = true;
        self.prefetch(viewers);
        let hashes = &mut self.hashes;
        self.streamer.update(viewers, &self.budget, |event| {
            if let StreamEvent::Ready { coord, payload } = &event {
                hashes.insert(*coord, payload.payload.hash);
            }
            on_event(event)
        })
    }

    /// One frame for a host with its own world and its own clock, `dt` seconds after the last:
    /// as [`update_with`](Self::update_with), but the chunks asked for this frame are made
    /// before it returns (see [`Streamer::step`]), so what arrives when depends on the
    /// viewers alone. A negative, infinite or NaN step is refused.
    pub fn step(
        &mut self,
        viewers: &[Viewer],
        dt: f64,
        mut on_event: impl FnMut(StreamEvent<ReadyChunk>),
    ) -> Result<FrameStream, WorldError> {
        self.started = true;
        self.prefetch(viewers);
        let hashes = &mut self.hashes;
        Ok(self.streamer.step(viewers, &self.budget, dt, |event| {
            if let StreamEvent::Ready { coord, payload } = &event {
                hashes.insert(*coord, payload.payload.hash);
            }
            on_event(event)
        })?)
    }

    /// Steps without advancing the host's clock until every chunk within the load radius of
    /// `viewers` has been handed to `on_event` (a loading screen without an [`App`]); returns
    /// the steps it took. Each step installs at most the budget's chunks, so this ends after
    /// at most the ring's chunks steps.
    pub fn settle_with(
        &mut self,
        viewers: &[Viewer],
        mut on_event: impl FnMut(StreamEvent<ReadyChunk>),
    ) -> Result<u64, WorldError> {
        // Each step hands over at least one chunk unless a job panicked, so a settled ring
        // takes at most its chunks' count in steps; far more means chunks keep failing.
        let limit = 16 * (self.streamer.ring_chunks() * viewers.len().max(1)) as u64 + 16;
        let mut steps = 0;
        while !self.streamer.is_settled(viewers) {
            if steps >= limit {
                return Err(WorldError::NotSettled {
                    steps,
                    panicked: self.streamer.stats().panicked,
                });
            }
            self.step(viewers, 0.0, &mut on_event)?;
            steps += 1;
        }
        Ok(steps)
    }

    /// The content hash of every chunk installed so far.
    pub fn hashes(&self) -> &BTreeMap<[i32; 2], u64> {
        &self.hashes
    }

    /// Streams until every chunk within the load radius of `viewers` is
    /// installed, then the far field around them (a loading screen), calling
    /// `progress` with the chunks installed so far after every frame; returns
    /// the milliseconds it took.
    pub fn settle(&mut self, app: &mut App, viewers: &[Viewer], mut progress: impl FnMut(u64)) -> f64 {
        let started = Instant::now();
        while !self.streamer.is_settled(viewers) || !self.is_horizon_ready(viewers) {
            self.update(app, viewers);
            progress(self.streamer.stats().installed);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        started.elapsed().as_secs_f64() * 1e3
    }

    /// Forgets the streaming latencies (after a loading screen), keeping the counters.
    pub fn reset_latencies(&mut self) {
        self.streamer.reset_latencies();
    }

    /// Whether every chunk within the load radius of `viewers` is installed.
    pub fn is_settled(&self, viewers: &[Viewer]) -> bool {
        self.streamer.is_settled(viewers)
    }

    /// Chunks installed now.
    pub fn resident(&self) -> usize {
        self.streamer.resident()
    }

    /// Chunks wanted and not generated yet: waiting for a generation slot or on the pool.
    pub fn generating(&self) -> usize {
        self.streamer.generating()
    }

    /// Counters and latencies.
    pub fn stats(&self) -> &StreamStats {
        self.streamer.stats()
    }

    /// Generation cost per stage.
    pub fn stages(&self) -> StageMillis {
        self.streamer.source().chunks().stages()
    }

    /// What the chunks generated so far hold, on average.
    pub fn chunk_content(&self) -> ChunkContent {
        self.streamer.source().chunks().content()
    }

    /// The grown content.
    pub fn content(&self) -> &WorldContent {
        &self.content
    }

    /// The mesh kit of this world: its chunks' ground and water, its tree variants and grass
    /// blades as plain triangle meshes, for a host with its own renderer.
    pub fn mesh_kit(&self) -> MeshKit {
        MeshKit::new(self.streamer.source().chunks().params(), Arc::clone(&self.content))
    }

    /// The streaming radii.
    pub fn settings(&self) -> &StreamSettings {
        self.streamer.settings()
    }
}

/// `streamer` reading chunks and basin domains from `dir`: a baked store of
/// this world read-only, any other directory as a cache it also writes.
fn with_cache(streamer: Streamer<WorldSource>, dir: &Path) -> Result<Streamer<WorldSource>, WorldError> {
    let world = streamer.source().chunks();
    let cache = if is_store(dir) {
        open_store(dir, world)?
    } else {
        ChunkCache::open(dir).map_err(|source| WorldError::Cache {
            path: dir.to_owned(),
            source,
        })?
    };
    if let Some(domains) = world.domains() {
        domains.use_cache(cache.clone());
    }
    Ok(streamer.with_cache(cache))
}
