//! Framed files: the header every Sylva file shares (magic, format version,
//! key, payload length, checksum), checked in full before a payload is
//! decoded, and the atomic write that puts a file in place only when complete.
//!
//! ```
//! use sylva_runtime::framed::{Frame, FrameError};
//!
//! let frame = Frame { magic: *b"EXAMPLE!", version: 2 };
//! let bytes = frame.seal(7, b"payload");
//! assert_eq!(frame.open(&bytes), Ok((7, &b"payload"[..])));
//! assert_eq!(frame.open(&bytes[..bytes.len() - 1]), Err(FrameError::Length { expected: 7, found: 6 }));
//! ```

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::bounded::Bounded;

/// Header bytes: magic 8, version 4, key 8, length 8, checksum 8.
pub const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 8;

/// The kind of a framed file: its magic bytes and the layout version this build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// First eight bytes of every file of this kind.
    pub magic: [u8; 8],
    /// Layout version written and accepted.
    pub version: u32,
}

/// Why framed bytes were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The bytes do not start with the expected magic.
    #[error("bad magic bytes (not this kind of file)")]
    Magic,
    /// Written by an incompatible build.
    #[error("format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// Shorter or longer than the header says.
    #[error("truncated or padded: header promises {expected} payload bytes, file has {found}")]
    Length {
        /// Payload length in the header.
        expected: u64,
        /// Payload bytes present.
        found: u64,
    },
    /// The payload does not match its checksum.
    #[error("checksum mismatch (the file is corrupt)")]
    Checksum,
}

impl Frame {
    /// The payload behind a header naming `key`.
    pub fn seal(&self, key: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&xxh3_64(payload).to_le_bytes());
        out.extend_from_slice(payload);
        out
    }

    /// The key and the payload of sealed bytes, after checking magic, version, length and checksum.
    pub fn open<'b>(&self, bytes: &'b [u8]) -> Result<(u64, &'b [u8]), FrameError> {
        if bytes.len() < HEADER_LEN || bytes[..8] != self.magic {
            return Err(FrameError::Magic);
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != self.version {
            return Err(FrameError::Version {
                found: version,
                supported: self.version,
            });
        }
        let payload = &bytes[HEADER_LEN..];
        let expected = u64_at(20);
        if payload.len() as u64 != expected {
            return Err(FrameError::Length {
                expected,
                found: payload.len() as u64,
            });
        }
        if xxh3_64(payload) != u64_at(28) {
            return Err(FrameError::Checksum);
        }
        Ok((u64_at(12), payload))
    }
}

/// The one bincode configuration of Sylva's files.
fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// Why a value did not encode to, or decode from, bincode bytes.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The value does not encode (a map or sequence of unknown length, or a failed write).
    #[error(transparent)]
    Encode(#[from] bincode::error::EncodeError),
    /// The bytes are not a value of the type asked for.
    #[error(transparent)]
    Decode(#[from] bincode::error::DecodeError),
    /// The bytes hold a value and then more.
    #[error("{0} trailing bytes")]
    Trailing(usize),
}

/// `value` as bincode bytes.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    Ok(bincode::serde::encode_to_vec(value, config())?)
}

/// `value` as bincode bytes written to `out` as they are encoded (never held whole);
/// the number of bytes written.
pub fn encode_into<T: Serialize + ?Sized, W: Write>(value: &T, out: &mut W) -> Result<u64, CodecError> {
    Ok(bincode::serde::encode_into_std_write(value, out, config())? as u64)
}

/// A value decoded from all of `bytes` (trailing bytes are an error). A length read
/// from `bytes` never sizes an allocation beyond what `bytes` hold (see `bounded.rs`).
///
/// ```
/// use sylva_runtime::framed::{CodecError, decode, encode};
///
/// let bytes = encode(&(7u32, "seven")).unwrap();
/// assert_eq!(decode::<(u32, String)>(&bytes).unwrap(), (7, "seven".to_owned()));
/// let longer = [&bytes[..], &[0]].concat();
/// assert!(matches!(decode::<(u32, String)>(&longer), Err(CodecError::Trailing(1))));
/// ```
pub fn decode<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T, CodecError> {
    let (Bounded(value), used) = bincode::serde::borrow_decode_from_slice::<Bounded<T>, _>(bytes, config())?;
    if used != bytes.len() {
        return Err(CodecError::Trailing(bytes.len() - used));
    }
    Ok(value)
}

/// Writes `bytes` to `path` atomically: a unique temporary file `.sylva-*.tmp` in the
/// same directory, flushed to disk, renamed over `path`, and the directory flushed
/// (so the rename itself survives a power cut). A reader sees the old file or the
/// new one, never a part; a crash leaves at most a stray temporary file, which
/// nothing reads. Errors carry no path: the caller names the file once.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_via(parent_dir(path), path, bytes)
}

/// The directory a file `path` lies in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// [`write_atomic`] with the temporary file in `staging`, which must be on the
/// same file system as `path`: a writer that owns `staging` can remove what a
/// crash of its own left there without touching another writer's files.
pub fn write_atomic_via(staging: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // `make_in` with a plain open, and writes through the inner `File`: the
    // tempfile crate's own wrappers add the temporary path to every error, and
    // callers add the target path, which printed a path twice.
    let mut tmp = tempfile::Builder::new()
        .prefix(".sylva-")
        .suffix(".tmp")
        .make_in(staging, |p| {
            let mut open = std::fs::OpenOptions::new();
            open.write(true).create_new(true);
            // A temporary file is usually private (0600); the file it becomes is an
            // ordinary one, readable as the umask allows (a store is read by other users).
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o666);
            open.open(p)
        })?;
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(parent_dir(path))
}

/// Flushes a directory's entries (a rename) to disk.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Directories cannot be opened as files here; the rename is as durable as the platform makes it.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: Frame = Frame {
        magic: *b"TESTTEST",
        version: 1,
    };

    #[test]
    fn every_corruption_is_refused() {
        let bytes = FRAME.seal(42, b"hello world");
        assert_eq!(FRAME.open(&bytes), Ok((42, &b"hello world"[..])));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(FRAME.open(&flipped), Err(FrameError::Checksum));
        assert_eq!(FRAME.open(&bytes[..10]), Err(FrameError::Magic));
        let other = Frame { version: 2, ..FRAME };
        assert!(matches!(other.open(&bytes), Err(FrameError::Version { found: 1, .. })));
        let mut padded = bytes.clone();
        padded.push(0);
        assert!(matches!(FRAME.open(&padded), Err(FrameError::Length { .. })));
    }

    #[test]
    fn atomic_writes_replace_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file is left"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let plain = dir.path().join("plain");
            std::fs::write(&plain, b"x").unwrap();
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
            assert_eq!(mode(&path), mode(&plain), "the permissions of any new file");
        }
    }

    #[test]
    fn atomic_write_errors_name_no_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let e = write_atomic(&missing.join("f.bin"), b"x").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        let message = e.to_string();
        assert!(
            !message.contains("missing") && !message.contains(".sylva-"),
            "the caller names the file: {message}"
        );
    }

    #[test]
    fn decode_refuses_trailing_bytes() {
        let mut bytes = encode(&(1u32, 2.5f32)).unwrap();
        assert_eq!(decode::<(u32, f32)>(&bytes).unwrap(), (1, 2.5));
        bytes.push(0);
        assert!(matches!(decode::<(u32, f32)>(&bytes), Err(CodecError::Trailing(1))));
    }
}
