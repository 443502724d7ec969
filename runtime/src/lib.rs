//! Sylva's runtime: the engine-independent core every domain system builds on.
//!
//! - [`World`]: hecs entities plus typed [`Resources`].
//! - [`System`] and [`Schedule`]: functions with declared [`Access`], packed
//!   into conflict-free stages that run concurrently on rayon.
//! - [`App`]: a world, a schedule, a [`FixedClock`] and a thread pool.
//! - [`rng`]: deterministic random streams keyed by (seed, chunk or entity, purpose).
//! - [`runs`]: which runs of a growing array are in use (chunks' parts of shared batches).
//! - [`SpatialIndex`]: nearest and within-radius queries (kiddo).
//! - [`metrics`]: per-system timings, frame-time percentiles, peak memory.
//! - [`snapshot`]: versioned, checksummed state files; [`framed`]: the header and atomic write they share.
//! - [`extract`]: the plain batches a renderer draws.
//! - [`stream`]: chunks generated around moving viewers on a pool of their own, within
//!   per-frame budgets, cached on disk by [`chunk_cache`].
//! - [`FieldError`] and [`Validate`]: the one shape of a parameter that is out of range.
#![warn(missing_docs)]
// What must be unsafe (SIMD dispatch, Vulkan, the allocator) lives in the crates built on this one.
#![forbid(unsafe_code)]

pub mod aabb;
mod access;
mod app;
mod bounded;
pub mod chunk_cache;
mod clock;
pub mod extract;
pub mod framed;
pub mod metrics;
mod resources;
pub mod rng;
pub mod runs;
mod schedule;
pub mod snapshot;
mod spatial;
pub mod stream;
mod system;
mod validate;
mod world;

pub use access::Access;
pub use app::{App, AppConfig, AppError, MAX_THREADS, Progress};
pub use clock::FixedClock;
pub use metrics::Metrics;
pub use resources::{Res, ResMut, Resources};
pub use schedule::Schedule;
pub use snapshot::{SceneKey, SnapshotError, SnapshotRegistry, StatePart};
pub use spatial::{Hit, SpatialIndex};
pub use system::{System, SystemContext, SystemFn, Time};
pub use validate::{FieldError, Validate};
pub use world::World;

pub use glam;
pub use hecs;
