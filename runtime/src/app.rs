//! The app: a world, its schedule, a fixed clock and a thread pool, stepped by
//! whoever owns the main loop (Sylva's CLI, or an embedding engine).

use std::path::Path;
use std::time::Instant;

use crate::clock::FixedClock;
use crate::metrics::Metrics;
use crate::schedule::Schedule;
use crate::snapshot::{SceneKey, SnapshotError, SnapshotRegistry};
use crate::system::{System, Time};
use crate::world::World;

/// Most worker threads an app (or any Sylva pool) starts: far past any machine Sylva runs on,
/// and low enough that a mistyped count (`--threads 65535`) is an error, not minutes of start-up
/// and gigabytes of thread stacks.
pub const MAX_THREADS: usize = 1024;

/// How an [`App`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    /// World seed: every random stream derives from it.
    pub seed: u64,
    /// Worker threads, at most [`MAX_THREADS`]; 0 means one per core.
    pub threads: usize,
    /// Fixed simulation step, seconds.
    pub step_seconds: f64,
    /// Most fixed steps one [`App::update`] may run (drops the rest of a long frame).
    pub max_steps_per_update: u32,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            threads: 0,
            step_seconds: 1.0 / 60.0,
            max_steps_per_update: 8,
        }
    }
}

/// Why an app could not be created.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The configuration is unusable.
    #[error("invalid app configuration: {0}")]
    Config(String),
    /// The thread pool could not start.
    #[error("could not start {threads} worker threads: {source}")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// The cause.
        source: rayon::ThreadPoolBuildError,
    },
}

/// How far a state had run when an [`App`] took it over: nothing for a fresh
/// build, the snapshot's count after a load. What the app ran since is the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Frames run before.
    pub frames: u64,
    /// Fixed steps run before.
    pub steps: u64,
    /// Simulated seconds before.
    pub seconds: f64,
}

/// A world plus everything that advances it.
///
/// ```
/// use sylva_runtime::{Access, App, AppConfig, System};
/// struct Counter(u64);
/// let mut app = App::new(AppConfig { step_seconds: 0.5, ..AppConfig::default() }).unwrap();
/// app.world.resources.insert(Counter(0));
/// app.add_system(System::new("count", Access::new().write_res::<Counter>(), |ctx| {
///     ctx.res_mut::<Counter>().0 += 1;
/// }));
/// assert_eq!(app.update(1.2), 2); // two whole steps fit into 1.2 s
/// assert_eq!(app.world.resources.get::<Counter>().unwrap().0, 2);
/// ```
pub struct App {
    /// Entities and resources.
    pub world: World,
    schedule: Schedule,
    frame_schedule: Schedule,
    clock: FixedClock,
    pool: rayon::ThreadPool,
    metrics: Metrics,
    snapshot: SnapshotRegistry,
    time: Time,
    /// The scene the state belongs to, written into snapshots and checked against them.
    scene: SceneKey,
    origin: Progress,
}

impl App {
    /// An app with an empty world and no systems.
    pub fn new(config: AppConfig) -> Result<Self, AppError> {
        if !(config.step_seconds.is_finite() && config.step_seconds > 0.0) {
            return Err(AppError::Config(format!(
                "step must be a positive number of seconds, got {}",
                config.step_seconds
            )));
        }
        if config.max_steps_per_update == 0 {
            return Err(AppError::Config("max_steps_per_update must be at least 1".into()));
        }
        if config.threads > MAX_THREADS {
            return Err(AppError::Config(format!(
                "threads must be at most {MAX_THREADS} (0: one per core), got {}",
                config.threads
            )));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .thread_name(|i| format!("sylva-worker-{i}"))
            .build()
            .map_err(|source| AppError::Threads {
                threads: config.threads,
                source,
            })?;
        Ok(Self {
            world: World::new(),
            schedule: Schedule::new(),
            frame_schedule: Schedule::new(),
            clock: FixedClock::new(config.step_seconds, config.max_steps_per_update),
            pool,
            metrics: Metrics::default(),
            snapshot: SnapshotRegistry::new(),
            time: Time {
                tick: 0,
                dt: config.step_seconds as f32,
                elapsed: 0.0,
                seed: config.seed,
            },
            scene: SceneKey {
                seed: config.seed,
                ..SceneKey::default()
            },
            origin: Progress::default(),
        })
    }

    /// Appends a simulation system: it runs once per fixed step (see [`Schedule::add`]).
    pub fn add_system(&mut self, system: System) -> &mut Self {
        self.schedule.add(system);
        self
    }

    /// Appends a frame system: it runs once per frame, after that frame's fixed
    /// steps. Extraction for drawing belongs here, since drawing happens per
    /// frame however many steps the frame took.
    pub fn add_frame_system(&mut self, system: System) -> &mut Self {
        self.frame_schedule.add(system);
        self
    }

    /// The fixed-step schedule, e.g. to inspect its stages.
    pub fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    /// Declares which components and resources are simulation state.
    pub fn snapshot_registry_mut(&mut self) -> &mut SnapshotRegistry {
        &mut self.snapshot
    }

    /// Feeds `frame_seconds` of real time and runs the fixed steps now due.
    /// Returns how many steps ran.
    pub fn update(&mut self, frame_seconds: f64) -> u32 {
        let t0 = Instant::now();
        let steps = self.clock.advance(frame_seconds);
        for _ in 0..steps {
            self.run_step();
        }
        self.run_frame_systems();
        self.metrics.record_frame(t0.elapsed());
        steps
    }

    /// Runs exactly `steps` fixed steps as one frame, ignoring the clock
    /// (benchmarks, tests, offline baking).
    pub fn advance(&mut self, steps: u32) {
        let t0 = Instant::now();
        for _ in 0..steps {
            self.run_step();
        }
        self.run_frame_systems();
        self.metrics.record_frame(t0.elapsed());
    }

    /// [`advance`](Self::advance) for a frame nobody draws: the fixed steps
    /// and no frame system, so no extraction (headless runs; frame systems
    /// only fill render batches, never simulation state).
    pub fn advance_headless(&mut self, steps: u32) {
        let t0 = Instant::now();
        for _ in 0..steps {
            self.run_step();
        }
        self.metrics.record_frame(t0.elapsed());
    }

    fn run_frame_systems(&mut self) {
        let Self {
            world,
            frame_schedule,
            pool,
            metrics,
            time,
            ..
        } = self;
        let now = *time;
        pool.install(|| frame_schedule.run(world, now, metrics));
    }

    fn run_step(&mut self) {
        let Self {
            world,
            schedule,
            pool,
            metrics,
            time,
            ..
        } = self;
        let now = *time;
        pool.install(|| schedule.run(world, now, metrics));
        time.tick += 1;
        time.elapsed = time.tick as f64 * self.clock.step();
    }

    /// Runs `f` inside the app's thread pool, so rayon work in it uses the app's threads.
    pub fn in_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Time of the next step to run.
    pub fn time(&self) -> Time {
        self.time
    }

    /// Fraction of the next step already accumulated, for interpolating drawn state.
    pub fn alpha(&self) -> f64 {
        self.clock.alpha()
    }

    /// Worker threads in the app's pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Timings gathered so far.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Hash of the registered simulation state (equal across thread counts).
    pub fn state_hash(&self) -> Result<u64, SnapshotError> {
        self.snapshot.state_hash(&self.world, self.time)
    }

    /// Names the scene this app's state belongs to: `fingerprint` hashes the scene
    /// parameters that shape the state, and the app's seed completes the key.
    /// Snapshots carry the key; [`load_snapshot`](Self::load_snapshot) refuses one
    /// saved under another fingerprint or seed.
    pub fn set_scene(&mut self, name: &str, fingerprint: u64) {
        self.scene = SceneKey {
            name: name.to_owned(),
            fingerprint,
            seed: self.time.seed,
        };
    }

    /// The scene this app's state belongs to (see [`set_scene`](Self::set_scene)).
    pub fn scene(&self) -> &SceneKey {
        &self.scene
    }

    /// How far the state had run when this app took it over (zero unless it was loaded).
    pub fn origin(&self) -> Progress {
        self.origin
    }

    /// Writes the registered simulation state to `path` (as
    /// [`write_output`](crate::framed::write_output) writes a file the user named), with the
    /// scene key and the frames run to reach it (before this app and in it).
    pub fn save_snapshot(&self, path: &Path) -> Result<(), SnapshotError> {
        self.snapshot
            .save_file(&self.world, self.time, &self.scene, self.frames_run(), path)
    }

    /// The bytes [`save_snapshot`](Self::save_snapshot) writes, for a host that puts them
    /// somewhere else (standard output, a socket).
    pub fn snapshot_bytes(&self) -> Result<Vec<u8>, SnapshotError> {
        self.snapshot
            .save(&self.world, self.time, &self.scene, self.frames_run())
    }

    /// Frames run to reach the state: before this app and in it.
    fn frames_run(&self) -> u64 {
        self.origin.frames + self.metrics.frame_count()
    }

    /// Restores state saved by [`save_snapshot`](Self::save_snapshot) from the same
    /// scene and seed; on error nothing changes. The saved progress becomes the
    /// [`origin`](Self::origin), and the metrics start again: from here on they
    /// time this app's frames only.
    pub fn load_snapshot(&mut self, path: &Path) -> Result<(), SnapshotError> {
        let loaded = self.snapshot.load_file_into(path, &mut self.world, &self.scene)?;
        self.time = Time {
            dt: self.time.dt,
            ..loaded.time
        };
        self.origin = Progress {
            frames: loaded.frames,
            steps: loaded.time.tick,
            seconds: loaded.time.elapsed,
        };
        self.metrics = Metrics::default();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;

    #[test]
    fn bad_configs_are_errors() {
        let bad = AppConfig {
            step_seconds: 0.0,
            ..AppConfig::default()
        };
        assert!(matches!(App::new(bad), Err(AppError::Config(_))));
        let bad = AppConfig {
            max_steps_per_update: 0,
            ..AppConfig::default()
        };
        assert!(matches!(App::new(bad), Err(AppError::Config(_))));
        let bad = AppConfig {
            threads: 65535,
            ..AppConfig::default()
        };
        let started = Instant::now();
        let e = App::new(bad).err().expect("65535 threads are refused");
        assert_eq!(
            e.to_string(),
            "invalid app configuration: threads must be at most 1024 (0: one per core), got 65535"
        );
        assert!(started.elapsed().as_secs_f32() < 1.0, "refused before starting threads");
    }

    #[test]
    fn frame_systems_run_once_per_frame_after_the_steps() {
        struct Log(Vec<&'static str>);
        let mut app = App::new(AppConfig {
            step_seconds: 0.1,
            ..AppConfig::default()
        })
        .unwrap();
        app.world.resources.insert(Log(vec![]));
        app.add_frame_system(System::new("draw", Access::new().write_res::<Log>(), |ctx| {
            ctx.res_mut::<Log>().0.push("frame");
        }));
        app.add_system(System::new("sim", Access::new().write_res::<Log>(), |ctx| {
            ctx.res_mut::<Log>().0.push("step");
        }));
        app.advance(2);
        assert_eq!(app.update(0.05), 0);
        assert_eq!(
            app.world.resources.get::<Log>().unwrap().0,
            ["step", "step", "frame", "frame"]
        );
    }

    #[test]
    fn time_advances_per_step_and_reaches_systems() {
        struct Seen(Vec<(u64, f64)>);
        let mut app = App::new(AppConfig {
            step_seconds: 0.25,
            seed: 3,
            threads: 2,
            ..AppConfig::default()
        })
        .unwrap();
        app.world.resources.insert(Seen(vec![]));
        app.add_system(System::new("see", Access::new().write_res::<Seen>(), |ctx| {
            let t = ctx.time();
            assert_eq!(t.seed, 3);
            ctx.res_mut::<Seen>().0.push((t.tick, t.elapsed));
        }));
        app.advance(1);
        app.update(0.5);
        assert_eq!(
            app.world.resources.get::<Seen>().unwrap().0,
            vec![(0, 0.0), (1, 0.25), (2, 0.5)]
        );
        assert_eq!(app.time().tick, 3);
        assert_eq!(app.metrics().frame_count(), 2);
        assert_eq!(app.metrics().systems()["see"].calls, 3);
        assert_eq!(app.threads(), 2);
    }
}
