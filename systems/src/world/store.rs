//! A baked store: a chunk cache directory that `sylva bake` filled ahead of
//! time, marked by a manifest naming the world it holds.
//!
//! The manifest (`sylva-store.json`) records the world key
//! ([`WorldGen::world_key`]), so a bake into a store of another world, or a
//! reader of another world, is refused instead of silently filling or missing
//! it. Its bytes depend on the world alone, so every shard of a bake writes
//! the same manifest. Readers open a store read-only: what is missing or
//! corrupt is generated in memory, never written back.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sylva_runtime::chunk_cache::ChunkCache;
use sylva_runtime::framed::write_atomic;

use super::chunk::{DATA_VERSION, WorldGen};

/// The manifest's file name inside a store.
pub const MANIFEST: &str = "sylva-store.json";

/// The directory inside a store where each writer stages its temporary files.
pub const STAGING: &str = ".staging";

/// Layout version of the manifest.
const FORMAT: u32 = 1;

/// What a store holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    world_key: String,
    data_version: u64,
    chunk_size: f32,
}

impl Manifest {
    fn of(world: &WorldGen) -> Self {
        Self {
            format: FORMAT,
            world_key: format!("{:016x}", world.world_key()),
            data_version: DATA_VERSION,
            chunk_size: world.params().chunk_size(),
        }
    }
}

/// Why a store could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing a file or directory failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The store holds another world (another scene, seed or build).
    #[error(
        "{path}: holds world {found}, not this scene's {expected} (another scene, seed or Sylva version); use another directory"
    )]
    OtherWorld {
        /// The manifest.
        path: PathBuf,
        /// Its world key.
        found: String,
        /// The scene's world key.
        expected: String,
    },
    /// The directory has no readable manifest.
    #[error("{0}: not a baked store (no readable {MANIFEST}); bake one with `sylva bake`")]
    NotAStore(PathBuf),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Whether `dir` is a baked store (it has a manifest).
pub fn is_store(dir: &Path) -> bool {
    dir.join(MANIFEST).is_file()
}

/// Checks that the store in `dir` holds `world` (a missing or unreadable manifest is no store).
fn check(dir: &Path, world: &WorldGen) -> Result<(), StoreError> {
    let path = dir.join(MANIFEST);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(StoreError::NotAStore(dir.to_owned())),
        Err(e) => return Err(io_error(&path)(e)),
    };
    let Ok(found) = serde_json::from_slice::<Manifest>(&bytes) else {
        return Err(StoreError::NotAStore(dir.to_owned()));
    };
    let expected = Manifest::of(world);
    if found != expected {
        return Err(StoreError::OtherWorld {
            path,
            found: format!("{} (data version {})", found.world_key, found.data_version),
            expected: format!("{} (data version {})", expected.world_key, expected.data_version),
        });
    }
    Ok(())
}

/// Opens the baked store `dir` of `world` for reading only.
pub fn open_store(dir: &Path, world: &WorldGen) -> Result<ChunkCache, StoreError> {
    check(dir, world)?;
    ChunkCache::open_read_only(dir).map_err(io_error(dir))
}

/// Opens (creating it if needed) the store `dir` for a bake of `world` by the
/// writer `writer` (a shard's name): writes the manifest unless an equal one
/// is there, and stages the writer's temporary files in a directory of its
/// own, cleared of what a killed run of the same writer left.
pub fn create_store(dir: &Path, world: &WorldGen, writer: &str) -> Result<ChunkCache, StoreError> {
    std::fs::create_dir_all(dir).map_err(io_error(dir))?;
    let fresh = match check(dir, world) {
        Ok(()) => false,
        Err(StoreError::NotAStore(_)) => true,
        Err(e) => return Err(e),
    };
    if fresh {
        let path = dir.join(MANIFEST);
        let mut bytes = serde_json::to_vec_pretty(&Manifest::of(world)).map_err(|e| io_error(&path)(e.into()))?;
        bytes.push(b'\n');
        write_atomic(&path, &bytes).map_err(io_error(&path))?;
    }
    let staging = staging_dir(dir, writer);
    match std::fs::remove_dir_all(&staging) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_error(&staging)(e)),
        _ => {}
    }
    std::fs::create_dir_all(&staging).map_err(io_error(&staging))?;
    Ok(ChunkCache::open(dir).map_err(io_error(dir))?.staged_in(&staging))
}

/// Removes the staging directory of `writer` after a complete bake (and the
/// staging root when no other writer has one).
pub fn finish_store(dir: &Path, writer: &str) -> Result<(), StoreError> {
    let staging = staging_dir(dir, writer);
    std::fs::remove_dir(&staging).map_err(io_error(&staging))?;
    // Another writer still staging keeps the root; that is not an error.
    let _ = std::fs::remove_dir(dir.join(STAGING));
    Ok(())
}

fn staging_dir(dir: &Path, writer: &str) -> PathBuf {
    dir.join(STAGING).join(writer)
}
