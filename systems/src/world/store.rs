//! A baked store: a chunk cache directory that `sylva bake` filled ahead of
//! time, marked by a manifest naming the world it holds.
//!
//! The manifest (`sylva-store.json`) records the world key
//! ([`WorldGen::world_key`]), so a bake into a store of another world, or a
//! reader of another world, is refused instead of silently filling or missing
//! it. Its bytes depend on the world alone, so every shard of a bake writes
//! the same manifest. Readers open a store read-only: what is missing or
//! corrupt is generated in memory, never written back.
//!
//! A manifest that is there but cannot be read as one (cut short, junk, too
//! large, a FIFO or a link) is a damaged store: refused, and never written
//! over, so a bake of another world does not take the store over. Sylva reads
//! a store's files only as regular files it made, never through a symbolic
//! link (see [`read_regular`]), and writes and deletes only under
//! [`STAGING`] folders it made itself: a link or other file in their place is
//! refused, naming it, and nothing is removed through it.

use std::fs::{File, TryLockError};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sylva_runtime::chunk_cache::ChunkCache;
use sylva_runtime::framed::{Links, read_regular, write_atomic};

use super::chunk::{DATA_VERSION, WorldGen};

/// The manifest's file name inside a store.
pub const MANIFEST: &str = "sylva-store.json";

/// The directory inside a store where each writer stages its temporary files.
pub const STAGING: &str = ".staging";

/// Largest manifest read, bytes (one is about 150).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 10;

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
    /// The store was baked by a Sylva that stores chunks another way: its files are
    /// never read as this version's.
    #[error(
        "{path}: baked with chunk data version {found}; this Sylva reads version {expected}: bake the world again into another directory (or delete this one)"
    )]
    OtherVersion {
        /// The manifest.
        path: PathBuf,
        /// The store's data version.
        found: u64,
        /// This build's [`DATA_VERSION`].
        expected: u64,
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
    /// The directory has no manifest.
    #[error("{0}: not a baked store (no {MANIFEST}); bake one with `sylva bake`")]
    NotAStore(PathBuf),
    /// The manifest is there but is not one: the store is damaged.
    #[error("{path}: damaged store manifest: {why}; left as it is (move the store aside or delete it to bake afresh)")]
    Damaged {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Another run of the same writer (shard and phase) holds the store's lock for it.
    #[error("{path}: another bake of this shard is writing the store ({holder}); wait for it to end, or stop it")]
    Busy {
        /// The writer's lock file.
        path: PathBuf,
        /// Who holds it, as the holder wrote it.
        holder: String,
    },
    /// A folder Sylva writes or deletes in is not a real directory it made
    /// (a symbolic link, which may lead out of the store, or a file).
    #[error("{path}: {what}, not a directory Sylva made; refused (remove it to bake here)")]
    NotOwnDirectory {
        /// The folder.
        path: PathBuf,
        /// What is there instead.
        what: &'static str,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Whether `dir` is a baked store: it has a manifest, even a damaged one (which
/// [`open_store`] then refuses rather than the directory being taken for a cache).
pub fn is_store(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(MANIFEST)).is_ok()
}

/// Checks that the store in `dir` holds `world` (a missing manifest is no store,
/// one that cannot be read as a manifest is a damaged store).
fn check(dir: &Path, world: &WorldGen) -> Result<(), StoreError> {
    let path = dir.join(MANIFEST);
    let damaged = |why: String| StoreError::Damaged {
        path: path.clone(),
        why,
    };
    let bytes = match read_regular(&path, MAX_MANIFEST_BYTES, Links::Refuse) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(StoreError::NotAStore(dir.to_owned())),
        Err(e) if e.kind() == io::ErrorKind::InvalidData => return Err(damaged(e.to_string())),
        Err(e) => return Err(io_error(&path)(e)),
    };
    let found = serde_json::from_slice::<Manifest>(&bytes).map_err(|e| damaged(e.to_string()))?;
    let expected = Manifest::of(world);
    if found.data_version != expected.data_version {
        return Err(StoreError::OtherVersion {
            path,
            found: found.data_version,
            expected: expected.data_version,
        });
    }
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

/// A store opened for one writer's bake: the cache it writes through and, unless the store
/// opened read-only, the writer's lock, which keeps a second run of the same shard out of
/// the store (where it would clear and fill the staging folder under the first) until
/// [`finish`](Self::finish) or drop.
pub struct StoreWriter {
    /// The cache the bake reads and writes through.
    pub cache: ChunkCache,
    dir: PathBuf,
    writer: String,
    lock: Option<File>,
}

/// Opens (creating it if needed) the store `dir` for a bake of `world` by the
/// writer `writer` (a shard's name): writes the manifest unless an equal one
/// is there, takes the writer's lock (`.staging/WRITER.lock`; held by another
/// process, the store is [`StoreError::Busy`]), and stages the writer's temporary
/// files in a directory of its own, cleared of what a killed run of the same
/// writer left: with the lock held, nothing else can be writing there.
///
/// A complete store on a read-only file system or directory opens read-only
/// (a bake then writes nothing, and fails only if a file is missing).
pub fn create_store(dir: &Path, world: &WorldGen, writer: &str) -> Result<StoreWriter, StoreError> {
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
    let locked = own_dir(&dir.join(STAGING)).and_then(|()| {
        let lock = lock_writer(dir, writer, Role::Writer)?;
        clear_staging(dir, writer)?;
        own_dir(&staging)?;
        sweep_orphans(dir, writer)?;
        Ok(lock)
    });
    let (cache, lock) = match locked {
        Err(StoreError::Io { source, .. }) if !fresh && is_unwritable(&source) => {
            (ChunkCache::open_read_only(dir).map_err(io_error(dir))?, None)
        }
        Err(e) => return Err(e),
        Ok(lock) => (
            ChunkCache::open(dir).map_err(io_error(dir))?.staged_in(&staging),
            Some(lock),
        ),
    };
    Ok(StoreWriter {
        cache,
        dir: dir.to_owned(),
        writer: writer.to_owned(),
        lock,
    })
}

/// Removes what a killed run of `writer` left in its staging folder; the caller holds the
/// writer's lock, so nothing else writes there.
fn clear_staging(dir: &Path, writer: &str) -> Result<(), StoreError> {
    let staging = staging_dir(dir, writer);
    if std::fs::symlink_metadata(&staging).is_ok() {
        // `own_dir` refuses a link here, and `remove_dir_all` never follows one inside.
        own_dir(&staging)?;
        std::fs::remove_dir_all(&staging).map_err(io_error(&staging))?;
    }
    Ok(())
}

/// Removes the staging folders of other writers that have ended without finishing (killed
/// shards that will not be rerun): a folder whose writer's lock this process can take has
/// no writer. A folder whose lock is held, or that has no lock file, is left alone.
fn sweep_orphans(dir: &Path, me: &str) -> Result<(), StoreError> {
    let root = dir.join(STAGING);
    for entry in std::fs::read_dir(&root).map_err(io_error(&root))? {
        let entry = entry.map_err(io_error(&root))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if name == me || !is_dir || std::fs::symlink_metadata(lock_path(dir, &name)).is_err() {
            continue;
        }
        match lock_writer(dir, &name, Role::Sweeper) {
            Ok(_held) => {
                clear_staging(dir, &name)?;
                let lock = lock_path(dir, &name);
                std::fs::remove_file(&lock).map_err(io_error(&lock))?;
            }
            Err(StoreError::Busy { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Why a process takes a writer's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// To write as that writer.
    Writer,
    /// To sweep what that writer left: held for as long as removing a folder takes.
    Sweeper,
}

/// What a sweeper writes into the lock it holds, before its identity.
const SWEEPING: &str = "sweeping: ";

/// How long a writer waits for a sweeper to let go of its lock, seconds.
const SWEEP_WAIT_SECONDS: f64 = 10.0;

/// Takes the lock of `writer` in the store `dir`, and writes into it who holds it (and, for a
/// sweeper, that it sweeps). A writer that finds a sweeper holding its lock waits for it (a
/// retried shard starting while an earlier run's leftovers are swept), and a lock on a file
/// a sweeper unlinked meanwhile is taken again on the file now at the path, so two writers of
/// one shard never both hold "the" lock (docs/design/limits.md, "Files Sylva reads and
/// writes").
fn lock_writer(dir: &Path, writer: &str, role: Role) -> Result<File, StoreError> {
    let path = lock_path(dir, writer);
    let started = std::time::Instant::now();
    loop {
        if started.elapsed().as_secs_f64() > 2.0 * SWEEP_WAIT_SECONDS {
            return Err(StoreError::Busy {
                path,
                holder: "sweepers, one after another, for too long".into(),
            });
        }
        let mut file = open_lock(&path)?;
        match file.try_lock() {
            Ok(()) if !is_at(&file, &path) => continue,
            Ok(()) => {
                let me = format!("process {} on {}", std::process::id(), host_name());
                let me = if role == Role::Sweeper {
                    format!("{SWEEPING}{me}")
                } else {
                    me
                };
                file.set_len(0)
                    .and_then(|()| file.write_all(me.as_bytes()))
                    .map_err(io_error(&path))?;
                return Ok(file);
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // What the holder wrote is only shown: any bytes, at most a line's worth.
                let _ = (&file).take(256).read_to_string(&mut holder);
                let holder = holder.trim();
                let swept = holder.starts_with(SWEEPING) && role == Role::Writer;
                if swept && started.elapsed().as_secs_f64() < SWEEP_WAIT_SECONDS {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
                return Err(StoreError::Busy {
                    path,
                    holder: if holder.is_empty() {
                        "unknown".into()
                    } else {
                        holder.to_owned()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io_error(&path)(e)),
        }
    }
}

/// Opens (creating it) the lock file at `path`: a regular file, never through a link.
fn open_lock(path: &Path) -> Result<File, StoreError> {
    let mut open = std::fs::OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        // A link in its place may lead anywhere, and a FIFO would block the open.
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = open.open(path).map_err(|e| match e.raw_os_error() {
        #[cfg(unix)]
        Some(libc::ELOOP) => StoreError::NotOwnDirectory {
            path: path.to_owned(),
            what: "a symbolic link",
        },
        _ => io_error(path)(e),
    })?;
    if !file.metadata().map_err(io_error(path))?.is_file() {
        return Err(StoreError::NotOwnDirectory {
            path: path.to_owned(),
            what: "a special file",
        });
    }
    Ok(file)
}

/// Whether `file` is still the file at `path` (a sweeper may have unlinked it after it was
/// opened; a lock on an unlinked file guards nothing).
fn is_at(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// This machine's name, for a lock's holder (Slurm and Kubernetes run shards on many).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "this machine".into())
}

fn lock_path(dir: &Path, writer: &str) -> PathBuf {
    dir.join(STAGING).join(format!("{writer}.lock"))
}

/// Makes the folder `path` unless it is there, and checks that it is a real
/// directory, not a link (which may lead out of the store) or a file.
fn own_dir(path: &Path) -> Result<(), StoreError> {
    match std::fs::create_dir(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(io_error(path)(e)),
        _ => {}
    }
    let kind = std::fs::symlink_metadata(path).map_err(io_error(path))?.file_type();
    let what = if kind.is_dir() {
        return Ok(());
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "a file"
    };
    Err(StoreError::NotOwnDirectory {
        path: path.to_owned(),
        what,
    })
}

/// Whether `e` says a directory cannot be written to at all.
fn is_unwritable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

impl StoreWriter {
    /// Ends a complete bake: removes the writer's staging folder, its lock (and the staging
    /// root when no other writer has one there); a store opened read-only has none.
    pub fn finish(self) -> Result<(), StoreError> {
        if self.lock.is_none() {
            return Ok(());
        }
        let staging = staging_dir(&self.dir, &self.writer);
        match std::fs::remove_dir(&staging) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_error(&staging)(e)),
            _ => {}
        }
        // Removed while held: a writer that opens the name after this takes a lock of its own.
        let lock = lock_path(&self.dir, &self.writer);
        std::fs::remove_file(&lock).map_err(io_error(&lock))?;
        // Another writer still staging keeps the root; that is not an error.
        let _ = std::fs::remove_dir(self.dir.join(STAGING));
        Ok(())
    }
}

/// What killed writers left in the store `dir`: temporary files `.sylva-*.tmp`
/// beside the files, and whatever is in writers' staging folders (a finished
/// writer removes its folder). Nothing reads them; each is safe to delete once
/// no bake of the store runs. Links are listed, never followed.
pub fn leftovers(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error(dir))? {
        let path = entry.map_err(io_error(dir))?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with(".sylva-") && name.ends_with(".tmp") {
            found.push(path);
        }
    }
    let root = dir.join(STAGING);
    if std::fs::symlink_metadata(&root).is_ok_and(|m| m.is_dir()) {
        for writer in std::fs::read_dir(&root).map_err(io_error(&root))? {
            let writer = writer.map_err(io_error(&root))?.path();
            if !std::fs::symlink_metadata(&writer).is_ok_and(|m| m.is_dir()) {
                found.push(writer);
                continue;
            }
            for entry in std::fs::read_dir(&writer).map_err(io_error(&writer))? {
                found.push(entry.map_err(io_error(&writer))?.path());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn staging_dir(dir: &Path, writer: &str) -> PathBuf {
    dir.join(STAGING).join(writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweeper that holds `writer`'s lock for `ms`, then removes the lock file and lets go,
    /// as `sweep_orphans` does.
    fn sweep_for(dir: &Path, writer: &str, ms: u64) -> std::thread::JoinHandle<()> {
        let held = lock_writer(dir, writer, Role::Sweeper).expect("the sweeper takes the lock");
        let path = lock_path(dir, writer);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(ms));
            std::fs::remove_file(&path).unwrap();
            drop(held);
        })
    }

    #[test]
    fn a_writer_waits_for_a_sweeper_and_locks_the_file_that_stays() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(STAGING)).unwrap();
        // The writer opens the lock file the sweeper holds, waits, and then holds a lock on a
        // file the sweeper unlinked: it must take the lock again on the file at the path.
        let sweeper = sweep_for(dir.path(), "all-0-of-2", 150);
        let mine = lock_writer(dir.path(), "all-0-of-2", Role::Writer).expect("the writer waits, then writes");
        sweeper.join().unwrap();
        assert!(
            is_at(&mine, &lock_path(dir.path(), "all-0-of-2")),
            "the lock held is the file at the path"
        );
        // So a second writer of the shard is refused, naming the first.
        match lock_writer(dir.path(), "all-0-of-2", Role::Writer) {
            Err(StoreError::Busy { holder, .. }) => assert!(holder.starts_with("process "), "{holder}"),
            other => panic!("a second writer got {other:?}"),
        }
        // A sweeper never waits for a writer: it leaves a busy writer alone.
        assert!(matches!(
            lock_writer(dir.path(), "all-0-of-2", Role::Sweeper),
            Err(StoreError::Busy { .. })
        ));
    }
}
