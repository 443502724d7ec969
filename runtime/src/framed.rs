//! Framed files: the header every Sylva file shares (magic, format version,
//! key, payload length, checksum), checked in full before a payload is
//! decoded, the atomic write that puts a file in place only when complete, and
//! the capped read of a regular file ([`read_regular`]) every reader goes through.
//!
//! ```
//! use sylva_runtime::framed::{Frame, FrameError};
//!
//! let frame = Frame { magic: *b"EXAMPLE!", version: 2 };
//! let bytes = frame.seal(7, b"payload");
//! assert_eq!(frame.open(&bytes), Ok((7, &b"payload"[..])));
//! assert_eq!(frame.open(&bytes[..bytes.len() - 1]), Err(FrameError::Length { expected: 7, found: 6 }));
//! ```

use std::io::{self, Read, Write};
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

/// Largest file [`read_regular`] reads where a format sets no smaller bound, bytes.
pub const MAX_READ_BYTES: u64 = 1 << 34;

/// Whether [`read_regular`] follows a symbolic link at the path itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Follow it: the user named the file (a snapshot, a grass bake).
    Follow,
    /// Refuse it: Sylva made the file (a store's or a cache's), and never makes a link,
    /// so a link there was put by someone else and may lead anywhere (`/dev/zero`).
    Refuse,
}

/// The bytes of the regular file at `path`, at most `max` of them.
///
/// A FIFO, device, socket or directory is refused before it is read (a FIFO would
/// block a reader forever, a device never ends), as is a symbolic link under
/// [`Links::Refuse`], and a file over `max` bytes. The open does not block, and
/// the type is checked on the opened handle, so a file swapped after the check is
/// still caught. A refusal is an [`io::ErrorKind::InvalidData`] error saying what
/// the file is; a missing file is [`io::ErrorKind::NotFound`]. Errors carry no
/// path: the caller names the file once.
pub fn read_regular(path: &Path, max: u64, links: Links) -> io::Result<Vec<u8>> {
    let seen = match links {
        Links::Refuse => std::fs::symlink_metadata(path)?,
        Links::Follow => std::fs::metadata(path)?,
    };
    // Checked before opening too: opening some devices acts on them.
    refuse_unless_regular(&seen, max)?;
    let mut open = std::fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        // Without O_NONBLOCK, opening a FIFO waits for a writer.
        let nofollow = if links == Links::Refuse { libc::O_NOFOLLOW } else { 0 };
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut open, libc::O_NONBLOCK | nofollow);
    }
    let file = open.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return not_regular("a symbolic link");
        }
        e
    })?;
    let meta = file.metadata()?;
    refuse_unless_regular(&meta, max)?;
    // The length is at most `max`; a file that grows meanwhile is cut off one byte past it.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

/// `Ok` for a regular file of at most `max` bytes.
fn refuse_unless_regular(meta: &std::fs::Metadata, max: u64) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        return if meta.len() > max { Err(too_large(max)) } else { Ok(()) };
    }
    if kind.is_symlink() {
        return Err(not_regular("a symbolic link"));
    }
    if kind.is_dir() {
        return Err(not_regular("a directory"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Err(not_regular("a FIFO"));
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Err(not_regular("a device"));
        }
        if kind.is_socket() {
            return Err(not_regular("a socket"));
        }
    }
    Err(not_regular("a special file"))
}

fn not_regular(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{what}, not a regular file; refused unread"),
    )
}

fn too_large(max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {max} bytes; refused unread"),
    )
}

/// Writes `bytes` to `path` atomically: a unique temporary file `.sylva-*.tmp` in the
/// same directory, flushed to disk, renamed over `path`, and the directory flushed
/// (so the rename itself survives a power cut). A reader sees the old file or the
/// new one, never a part; a crash leaves at most a stray temporary file, which
/// nothing reads. Errors carry no path: the caller names the file once.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_via(parent_dir(path), path, bytes)
}

/// Writes a file the user named (a report, an export) to `path`, by what is there:
///
/// - nothing or a regular file: [`write_atomic`];
/// - a symbolic link to a regular file: the link is resolved and the file it
///   leads to replaced atomically (the link stays a link);
/// - a FIFO or a character device (`/dev/stdout`, a terminal, `/dev/null`):
///   written through, never replaced, so its reader gets the bytes;
/// - anything else (a directory, a block device, a socket, a link to nothing): refused.
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let entry = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return write_atomic(path, bytes),
        entry => entry?,
    };
    let target = match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "a symbolic link to nothing; refused (remove the link or make its target)",
            ));
        }
        target => target?,
    };
    let kind = target.file_type();
    if kind.is_file() {
        if entry.file_type().is_symlink() {
            return write_atomic(&std::fs::canonicalize(path)?, bytes);
        }
        return write_atomic(path, bytes);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() || kind.is_char_device() {
            // Opened through the name (a link such as /dev/stdout leads to the
            // process's own descriptor), without creating or truncating anything.
            let mut out = std::fs::OpenOptions::new().write(true).open(path)?;
            out.write_all(bytes)?;
            return out.flush();
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "neither a regular file nor a FIFO or character device; refused",
    ))
}

/// The directory a file `path` lies in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks that [`write_atomic`] can put a file in `dir`, by making one of its
/// temporary files there and removing it.
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    temporary_in(dir).map(drop)
}

/// A new temporary file `.sylva-*.tmp` in `dir`, removed when dropped.
fn temporary_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    // `make_in` with a plain open, and writes through the inner `File`: the
    // tempfile crate's own wrappers add the temporary path to every error, and
    // callers add the target path, which printed a path twice.
    tempfile::Builder::new()
        .prefix(".sylva-")
        .suffix(".tmp")
        .make_in(dir, |p| {
            let mut open = std::fs::OpenOptions::new();
            open.write(true).create_new(true);
            // A temporary file is usually private (0600); the file it becomes is an
            // ordinary one, readable as the umask allows (a store is read by other users).
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o666);
            open.open(p)
        })
}

/// [`write_atomic`] with the temporary file in `staging`, which must be on the
/// same file system as `path`: a writer that owns `staging` can remove what a
/// crash of its own left there without touching another writer's files.
pub fn write_atomic_via(staging: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = temporary_in(staging)?;
    tmp.as_file_mut().write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(parent_dir(path))
}

/// Flushes a directory's entries (a rename) to disk.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Directories cannot be opened as files here; the rename is as durable as the platform makes it.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
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

    #[cfg(unix)]
    fn make_fifo(path: &Path) {
        // coreutils' mkfifo: this crate has no unsafe code, not even in tests.
        let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
    }

    #[cfg(unix)]
    #[test]
    fn outputs_write_through_devices_and_replace_link_targets() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        let reading = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"through").unwrap();
        // Checked before joining: a reader of a replaced FIFO would wait forever.
        assert!(
            std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(),
            "never replaced"
        );
        assert_eq!(reading.join().unwrap(), b"through");
        let target = dir.path().join("target.json");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("latest.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
            "the link stays"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("absent/x.json"), &dangling).unwrap();
        let e = write_output(&dangling, b"x").unwrap_err();
        assert!(e.to_string().contains("a symbolic link to nothing"), "{e}");
        assert!(write_output(dir.path(), b"x").is_err());
    }

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_regular(&path, 5, Links::Refuse).unwrap(), b"12345");
        let big = read_regular(&path, 4, Links::Refuse).unwrap_err();
        assert_eq!(big.kind(), io::ErrorKind::InvalidData);
        assert!(big.to_string().contains("larger than 4 bytes"), "{big}");
        let missing = read_regular(&dir.path().join("absent"), 5, Links::Refuse).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let folder = read_regular(dir.path(), 5, Links::Follow).unwrap_err();
        assert!(folder.to_string().contains("a directory"), "{folder}");
    }

    #[cfg(unix)]
    #[test]
    fn links_fifos_and_devices_are_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_regular(&link, 1 << 20, Links::Refuse).unwrap_err();
        assert!(e.to_string().contains("a symbolic link"), "{e}");
        let e = read_regular(&link, 1 << 20, Links::Follow).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        // Returns at once: a blocking open would wait here for a writer forever.
        let e = read_regular(&fifo, 1 << 20, Links::Follow).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let regular = dir.path().join("regular");
        std::fs::write(&regular, b"x").unwrap();
        let to_regular = dir.path().join("to-regular");
        std::os::unix::fs::symlink(&regular, &to_regular).unwrap();
        assert_eq!(read_regular(&to_regular, 1, Links::Follow).unwrap(), b"x");
        assert!(read_regular(&to_regular, 1, Links::Refuse).is_err());
    }

    #[test]
    fn decode_refuses_trailing_bytes() {
        let mut bytes = encode(&(1u32, 2.5f32)).unwrap();
        assert_eq!(decode::<(u32, f32)>(&bytes).unwrap(), (1, 2.5));
        bytes.push(0);
        assert!(matches!(decode::<(u32, f32)>(&bytes), Err(CodecError::Trailing(1))));
    }
}
