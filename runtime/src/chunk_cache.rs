//! A disk cache of generated chunks: one framed file per key (see
//! [`crate::framed`]), written atomically, checked completely before
//! it is trusted.
//!
//! The key is a hash of everything the content depends on (the generation
//! parameters, the seed, the coordinate and a data version), so a stale file
//! simply has another name; a file whose header, checksum or key is wrong is
//! [`CacheRead::Rejected`], and the caller regenerates and overwrites it.
//!
//! A baked store (see `sylva bake`) is opened [read-only](ChunkCache::open_read_only):
//! readers generate what is missing or rejected but never write into it.
//!
//! ```
//! use sylva_runtime::chunk_cache::{CacheRead, ChunkCache};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let cache = ChunkCache::open(dir.path()).unwrap();
//! assert!(matches!(cache.read::<Vec<u32>>(7), CacheRead::Missing));
//! cache.write(7, &vec![1u32, 2, 3]).unwrap();
//! assert!(matches!(cache.read::<Vec<u32>>(7), CacheRead::Hit(v) if v == [1, 2, 3]));
//! ```

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::framed::{self, Frame, Links};

/// Cache files: the chunk's content key is the frame's key.
const FRAME: Frame = Frame {
    magic: *b"SYLVACHK",
    version: 1,
};

/// Largest cache file read, bytes: anything larger is refused unread.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// A directory of cached chunks.
#[derive(Clone, Debug)]
pub struct ChunkCache {
    dir: PathBuf,
    staging: Option<PathBuf>,
    read_only: bool,
}

/// What a lookup found.
#[derive(Debug)]
pub enum CacheRead<T> {
    /// A valid file for this key.
    Hit(T),
    /// No file for this key.
    Missing,
    /// A file that cannot be trusted, and why; regenerate it.
    Rejected(String),
}

impl ChunkCache {
    /// Opens (creating it if needed) the cache directory `dir`.
    pub fn open(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            staging: None,
            read_only: false,
        })
    }

    /// Opens the existing directory `dir` for reading only: [`write`](Self::write) refuses.
    pub fn open_read_only(dir: &Path) -> io::Result<Self> {
        if !std::fs::metadata(dir)?.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, "not a directory"));
        }
        Ok(Self {
            dir: dir.to_owned(),
            staging: None,
            read_only: true,
        })
    }

    /// Writes through temporary files in `staging` (an existing directory on
    /// the same file system) instead of temporary files next to the chunks.
    pub fn staged_in(mut self, staging: &Path) -> Self {
        self.staging = Some(staging.to_owned());
        self
    }

    /// Whether writes are refused.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: u64) -> PathBuf {
        self.dir.join(format!("{key:016x}.chunk"))
    }

    /// Reads the value cached under `key`.
    pub fn read<T: DeserializeOwned>(&self, key: u64) -> CacheRead<T> {
        let path = self.path(key);
        let bytes = match framed::read_regular(&path, MAX_FILE_BYTES, Links::Refuse) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return CacheRead::Missing,
            Err(e) => return CacheRead::Rejected(format!("{}: {e}", path.display())),
        };
        let checked = FRAME
            .open(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|(found, payload)| {
                if found == key {
                    framed::decode(payload).map_err(|e| e.to_string())
                } else {
                    Err(format!("holds key {found:016x}"))
                }
            });
        match checked {
            Ok(value) => CacheRead::Hit(value),
            Err(why) => CacheRead::Rejected(format!("{}: {why}", path.display())),
        }
    }

    /// Writes `value` under `key` atomically; returns the bytes written.
    pub fn write<T: Serialize>(&self, key: u64, value: &T) -> io::Result<u64> {
        if self.read_only {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "opened read-only (a baked store being read, or a store that cannot be written)",
            ));
        }
        let payload = framed::encode(value).map_err(io::Error::other)?;
        let bytes = FRAME.seal(key, &payload);
        let path = self.path(key);
        match &self.staging {
            Some(staging) => framed::write_atomic_via(staging, &path, &bytes)?,
            None => framed::write_atomic(&path, &bytes)?,
        }
        Ok(bytes.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_truncated_and_misnamed_files_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChunkCache::open(dir.path()).unwrap();
        cache.write(1, &vec![7u64; 100]).unwrap();
        let path = cache.path(1);
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        flipped[60] ^= 0x10;
        std::fs::write(&path, &flipped).unwrap();
        assert!(matches!(cache.read::<Vec<u64>>(1), CacheRead::Rejected(w) if w.contains("checksum")));
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(matches!(cache.read::<Vec<u64>>(1), CacheRead::Rejected(_)));
        std::fs::write(cache.path(2), &good).unwrap();
        assert!(matches!(cache.read::<Vec<u64>>(2), CacheRead::Rejected(w) if w.contains("key")));
        // A valid frame of another type is a decode error, not a panic.
        assert!(matches!(cache.read::<Vec<String>>(1), CacheRead::Rejected(_)));
        cache.write(1, &vec![7u64; 100]).unwrap();
        assert!(matches!(cache.read::<Vec<u64>>(1), CacheRead::Hit(v) if v.len() == 100));
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_rejected_unread_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ChunkCache::open(dir.path()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", cache.path(1)).unwrap();
        assert!(matches!(cache.read::<u32>(1), CacheRead::Rejected(w) if w.contains("symbolic link")));
        cache.write(1, &5u32).unwrap();
        assert!(matches!(cache.read::<u32>(1), CacheRead::Hit(5)));
        assert!(std::fs::symlink_metadata(cache.path(1)).unwrap().is_file());
    }

    #[test]
    fn read_only_caches_read_and_never_write() {
        let dir = tempfile::tempdir().unwrap();
        ChunkCache::open(dir.path()).unwrap().write(3, &5u32).unwrap();
        let store = ChunkCache::open_read_only(dir.path()).unwrap();
        assert!(matches!(store.read::<u32>(3), CacheRead::Hit(5)));
        assert_eq!(
            store.write(4, &6u32).unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
        assert!(!store.path(4).exists());
        assert!(ChunkCache::open_read_only(&dir.path().join("absent")).is_err());
    }

    #[test]
    fn staged_writes_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let staging = dir.path().join("staging");
        std::fs::create_dir(&staging).unwrap();
        let cache = ChunkCache::open(dir.path()).unwrap().staged_in(&staging);
        cache.write(9, &vec![1u8; 10]).unwrap();
        assert!(matches!(cache.read::<Vec<u8>>(9), CacheRead::Hit(v) if v.len() == 10));
        assert_eq!(std::fs::read_dir(&staging).unwrap().count(), 0);
    }
}
