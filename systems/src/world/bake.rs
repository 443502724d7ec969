//! Baking a world ahead of time into a store, one shard at a time, and
//! checking a store.
//!
//! Chunks and basin domains are pure functions of (world, seed, coordinate),
//! so a bake is a list of files to make. A [`BakePlan`] lists one shard's
//! part of a rectangle of chunks: the chunks are put in Hilbert order (chunks
//! near in the order are near on the map, so a shard's chunks share their
//! domains) and shard `i` of `n` takes the `i`-th of `n` contiguous ranges.
//! [`bake`] makes the plan's domains, then its chunks, into a store
//! ([`create_store`](super::store::create_store)): a valid file already there
//! is skipped, a corrupt one is made again, and every file is written
//! atomically, so a shard run twice, killed and rerun, or run beside the
//! others in any order leaves the same bytes. [`verify`] lists what a store
//! lacks of a plan (the whole [`Phase::All`] plan of a region checks it all).
//!
//! ```
//! use sylva_systems::world::{BakePlan, Phase, Shard, WorldGen, WorldParams};
//!
//! let world = WorldGen::new(WorldParams::default(), 1);
//! let whole = BakePlan::new(&world, [0, 0], [3, 3], Shard::WHOLE, Phase::Chunks).unwrap();
//! let shards: Vec<BakePlan> = (0..3)
//!     .map(|i| BakePlan::new(&world, [0, 0], [3, 3], Shard::new(i, 3).unwrap(), Phase::Chunks).unwrap())
//!     .collect();
//! assert_eq!(whole.chunks.len(), 16);
//! assert_eq!(shards.iter().map(|s| s.chunks.len()).sum::<usize>(), 16);
//! ```

use std::collections::BTreeSet;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sylva_runtime::chunk_cache::{CacheRead, ChunkCache};

use super::chunk::{ChunkPayload, WorldGen};
use super::domains::Domain;

/// Most chunks one bake or verification covers (a square of 4,096 chunks a side).
pub const MAX_BAKE_CHUNKS: u64 = 1 << 24;

/// One of `count` equal parts of a bake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// The whole bake, one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` (from 0) of `count`; `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Self> {
        (index < count).then_some(Self { index, count })
    }

    /// The shard's index, from 0.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many shards the bake has.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The shard's contiguous part of `items` (the parts of all shards tile it).
    pub fn part<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let at = |i: u32| (items.len() as u128 * u128::from(i) / u128::from(self.count)) as usize;
        &items[at(self.index)..at(self.index + 1)]
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why text is not a [`Shard`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not two whole numbers around a `/`.
    #[error("expected a shard INDEX/COUNT such as 0/4, got `{0}`")]
    Syntax(String),
    /// An index at or past the count (indices run from 0), or a count of 0.
    #[error("shard {index}/{count}: the index must be below the count")]
    Index {
        /// The index given.
        index: u32,
        /// The count given.
        count: u32,
    },
}

impl FromStr for Shard {
    type Err = ShardError;

    /// Parses `I/N`.
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let parsed = s
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) => Shard::new(index, count).ok_or(ShardError::Index { index, count }),
            None => Err(ShardError::Syntax(s.to_owned())),
        }
    }
}

/// Which files a bake makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The domains the shard's chunks read, then the chunks.
    #[default]
    All,
    /// The shard's part of the region's domains only (the first job of a two-phase bake).
    Domains,
    /// The shard's chunks only, reading domains from the store.
    Chunks,
}

/// Why a bake could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// The region is empty or too large.
    #[error("region ({}, {}) to ({}, {}): {why}", first[0], first[1], last[0], last[1])]
    Region {
        /// First chunk.
        first: [i32; 2],
        /// Last chunk.
        last: [i32; 2],
        /// What is wrong with it.
        why: String,
    },
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// One shard's files: domains first, then chunks in Hilbert order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BakePlan {
    /// Basin domains to make.
    pub domains: Vec<[i64; 2]>,
    /// Chunks to make.
    pub chunks: Vec<[i32; 2]>,
}

impl BakePlan {
    /// Shard `shard`'s part of `phase` over the chunks `first..=last` (inclusive).
    pub fn new(
        world: &WorldGen,
        first: [i32; 2],
        last: [i32; 2],
        shard: Shard,
        phase: Phase,
    ) -> Result<Self, BakeError> {
        let order = hilbert_order(first, last)?;
        let mine = shard.part(&order);
        let domains = match phase {
            Phase::Chunks => Vec::new(),
            Phase::Domains => shard.part(&Vec::from_iter(world.domains_under(first, last))).to_vec(),
            Phase::All => mine
                .par_iter()
                .map(|&c| world.domains_under(c, c))
                .reduce(BTreeSet::new, |mut a, b| {
                    a.extend(b);
                    a
                })
                .into_iter()
                .collect(),
        };
        let chunks = if phase == Phase::Domains {
            Vec::new()
        } else {
            mine.to_vec()
        };
        Ok(Self { domains, chunks })
    }

    /// Files in the plan.
    pub fn len(&self) -> usize {
        self.domains.len() + self.chunks.len()
    }

    /// Whether the plan has no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The chunks `first..=last` (inclusive) along a Hilbert curve over the
/// smallest power-of-two square holding them.
pub fn hilbert_order(first: [i32; 2], last: [i32; 2]) -> Result<Vec<[i32; 2]>, BakeError> {
    let span = [0, 1].map(|k| i64::from(last[k]) - i64::from(first[k]) + 1);
    let refuse = |why: String| BakeError::Region { first, last, why };
    if span[0] < 1 || span[1] < 1 {
        return Err(refuse("the last chunk lies before the first".into()));
    }
    // Wide: the spans of a region across the i32 range multiply past u64.
    let count = span[0] as u128 * span[1] as u128;
    if count > u128::from(MAX_BAKE_CHUNKS) {
        return Err(refuse(format!("{count} chunks; at most {MAX_BAKE_CHUNKS} per bake")));
    }
    let side = (span[0].max(span[1]) as u64).next_power_of_two();
    let mut order: Vec<(u64, [i32; 2])> = (0..span[1])
        .flat_map(|z| (0..span[0]).map(move |x| (x as u64, z as u64)))
        .map(|(x, z)| (hilbert_index(side, x, z), [first[0] + x as i32, first[1] + z as i32]))
        .collect();
    order.sort_unstable_by_key(|(d, _)| *d);
    Ok(order.into_iter().map(|(_, c)| c).collect())
}

/// Position of `(x, y)` along the Hilbert curve over a `side`² square (`side` a power of two).
fn hilbert_index(side: u64, mut x: u64, mut y: u64) -> u64 {
    let mut d = 0;
    let mut s = side / 2;
    while s > 0 {
        let (rx, ry) = (u64::from(x & s > 0), u64::from(y & s > 0));
        d += s * s * ((3 * rx) ^ ry);
        // Turn the quadrant so the curve inside it runs the standard way.
        if ry == 0 {
            if rx == 1 {
                x = side - 1 - x;
                y = side - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d
}

/// What a bake did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BakeReport {
    /// Chunk files written (new or made again).
    pub chunks: u64,
    /// Domain files written (new or made again).
    pub domains: u64,
    /// Valid files found and left as they were.
    pub skipped: u64,
    /// Corrupt files made again (counted in `chunks` and `domains` too).
    pub redone: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Chunks written per second of the chunk phase.
    pub chunks_per_s: f64,
    /// Milliseconds making domains.
    pub domains_ms: f64,
    /// Milliseconds making chunks.
    pub chunks_ms: f64,
}

/// How one file of a bake went.
enum Made {
    Skipped,
    Written { bytes: u64, redone: bool },
}

/// Makes `plan`'s files in `store` (domains first, on the current rayon
/// pool), calling `done` after each file.
pub fn bake(
    world: &WorldGen,
    store: &ChunkCache,
    plan: &BakePlan,
    done: impl Fn() + Sync,
) -> Result<BakeReport, BakeError> {
    let counters = Counters::default();
    let mut report = BakeReport::default();
    let started = Instant::now();
    if let Some(domains) = world.domains() {
        // Chunks read their domains from the store rather than solving them again.
        domains.use_cache(store.clone());
        plan.domains.par_iter().try_for_each(|&cell| {
            let key = domains.cache_key(cell);
            let made = make(store, key, || domains.solve_fresh(cell));
            done();
            counters.count(made, store, key)
        })?;
    }
    report.domains = counters.written.swap(0, Ordering::Relaxed);
    report.domains_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    plan.chunks.par_iter().try_for_each(|&coord| {
        let key = world.cache_key(coord);
        let made = make(store, key, || world.chunk(coord));
        done();
        counters.count(made, store, key)
    })?;
    report.chunks = counters.written.load(Ordering::Relaxed);
    report.chunks_ms = started.elapsed().as_secs_f64() * 1e3;
    report.chunks_per_s = report.chunks as f64 / (report.chunks_ms / 1e3).max(1e-9);
    report.skipped = counters.skipped.load(Ordering::Relaxed);
    report.redone = counters.redone.load(Ordering::Relaxed);
    report.bytes = counters.bytes.load(Ordering::Relaxed);
    Ok(report)
}

/// The tallies of a running bake.
#[derive(Default)]
struct Counters {
    written: AtomicU64,
    skipped: AtomicU64,
    redone: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    fn count(&self, made: io::Result<Made>, store: &ChunkCache, key: u64) -> Result<(), BakeError> {
        match made {
            Ok(Made::Skipped) => self.skipped.fetch_add(1, Ordering::Relaxed),
            Ok(Made::Written { bytes, redone }) => {
                self.bytes.fetch_add(bytes, Ordering::Relaxed);
                self.redone.fetch_add(u64::from(redone), Ordering::Relaxed);
                self.written.fetch_add(1, Ordering::Relaxed)
            }
            Err(source) => {
                return Err(BakeError::Write {
                    path: store.path(key),
                    source,
                });
            }
        };
        Ok(())
    }
}

/// Leaves a valid file for `key` as it is; otherwise writes what `generate` makes.
fn make<T: Serialize + DeserializeOwned>(
    store: &ChunkCache,
    key: u64,
    generate: impl FnOnce() -> T,
) -> io::Result<Made> {
    let redone = match store.read::<T>(key) {
        CacheRead::Hit(_) => return Ok(Made::Skipped),
        CacheRead::Missing => false,
        CacheRead::Rejected(_) => true,
    };
    let bytes = store.write(key, &generate())?;
    Ok(Made::Written { bytes, redone })
}

/// One file a region needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum StoreFile {
    /// The basin domain of this lattice square.
    Domain([i64; 2]),
    /// The chunk at this coordinate.
    Chunk([i32; 2]),
}

impl fmt::Display for StoreFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreFile::Domain(c) => write!(f, "domain ({}, {})", c[0], c[1]),
            StoreFile::Chunk(c) => write!(f, "chunk ({}, {})", c[0], c[1]),
        }
    }
}

/// What [`verify`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct VerifyReport {
    /// Files checked.
    pub checked: u64,
    /// Files that are not there.
    pub missing: Vec<StoreFile>,
    /// Files that are there but cannot be trusted, with the reason.
    pub corrupt: Vec<(StoreFile, String)>,
    /// What killed writers left (see [`leftovers`](super::store::leftovers)):
    /// harmless, but a sign that a bake did not finish.
    pub leftovers: Vec<PathBuf>,
}

impl VerifyReport {
    /// Whether every file is there and valid.
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty() && self.corrupt.is_empty()
    }
}

/// Checks in `store` every file of `plan` (header, checksum, key, and that it
/// decodes), calling `done` after each.
pub fn verify(world: &WorldGen, store: &ChunkCache, plan: &BakePlan, done: impl Fn() + Sync) -> VerifyReport {
    let domain_files = plan.domains.iter().map(|&c| StoreFile::Domain(c));
    let files: Vec<StoreFile> = domain_files
        .chain(plan.chunks.iter().map(|&c| StoreFile::Chunk(c)))
        .collect();
    let mut found: Vec<(StoreFile, Option<String>)> = files
        .par_iter()
        .filter_map(|&file| {
            let read = match (file, world.domains()) {
                (StoreFile::Domain(cell), Some(d)) => status(store.read::<Domain>(d.cache_key(cell))),
                (StoreFile::Chunk(c), _) => status(store.read::<ChunkPayload>(world.cache_key(c))),
                (StoreFile::Domain(_), None) => Ok(()),
            };
            done();
            read.err().map(|why| (file, why))
        })
        .collect();
    found.sort();
    let mut report = VerifyReport {
        checked: files.len() as u64,
        ..Default::default()
    };
    for (file, why) in found {
        match why {
            None => report.missing.push(file),
            Some(why) => report.corrupt.push((file, why)),
        }
    }
    report
}

/// `Ok` for a valid file; `Err(None)` for a missing one, `Err(Some(why))` for a corrupt one.
fn status<T>(read: CacheRead<T>) -> Result<(), Option<String>> {
    match read {
        CacheRead::Hit(_) => Ok(()),
        CacheRead::Missing => Err(None),
        CacheRead::Rejected(why) => Err(Some(why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hilbert_order_visits_every_chunk_once_stepping_to_neighbours() {
        let order = hilbert_order([-3, 5], [4, 12]).unwrap();
        assert_eq!(order.len(), 64);
        assert_eq!(order.iter().collect::<BTreeSet<_>>().len(), 64);
        for w in order.windows(2) {
            let step = (w[0][0] - w[1][0]).abs() + (w[0][1] - w[1][1]).abs();
            assert_eq!(step, 1, "{:?} to {:?}", w[0], w[1]);
        }
        let wide = hilbert_order([0, 0], [9, 2]).unwrap();
        assert_eq!(wide.iter().collect::<BTreeSet<_>>().len(), 30);
        assert!(hilbert_order([1, 0], [0, 0]).is_err());
        assert!(hilbert_order([0, 0], [i32::MAX, 5]).is_err());
        let corners = hilbert_order([i32::MIN, i32::MIN], [i32::MAX, i32::MAX]).unwrap_err();
        assert!(corners.to_string().contains("18446744073709551616 chunks"), "{corners}");
    }

    #[test]
    fn shards_tile_the_order() {
        let items: Vec<u32> = (0..17).collect();
        for count in 1..=20 {
            let joined: Vec<u32> = (0..count)
                .flat_map(|i| Shard::new(i, count).unwrap().part(&items).to_vec())
                .collect();
            assert_eq!(joined, items, "{count} shards");
        }
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert!("3/3".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }
}
