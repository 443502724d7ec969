//! Output paths checked before a command does any work: a wrong extension, a
//! missing or unwritable directory fails at once, naming the flag, rather than
//! after the run, when the work is lost and the outputs written before it are
//! left behind.
//!
//! Every output a command writes goes through [`write`]. `-` (or any name for the file
//! standard output is, such as `/dev/stdout`) writes the output to standard output, and
//! the command's own lines then go to standard error, so the output pipes into `jq` or an
//! image viewer; where standard output cannot stand for an output, or two outputs would
//! share it, the command is refused before any work ([`check_all`]). Any other path is
//! written by [`write_output`](sylva::runtime::framed::write_output): a FIFO or device
//! written through, a link to a file resolved and that file replaced, a regular file
//! replaced atomically (docs/design/limits.md, "Files Sylva reads and writes").

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::cli::{Common, console};

/// What an output flag takes: the extensions its file may have (ASCII case ignored; any
/// name when empty) and what `-` means for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accepts {
    extensions: &'static [&'static str],
    stdout: Stdout,
}

/// Whether an output may be written to standard output.
#[derive(Clone, Copy, Debug)]
enum Stdout {
    /// Text, written wherever standard output leads.
    Text,
    /// Bytes for a program (named here, e.g. "a PNG"): never written to a terminal, where
    /// they would garble the screen and reach no program.
    Binary(&'static str),
    /// Not taken, for the reason given.
    Refused(&'static str),
}

/// `--report`: JSON, to a file or standard output.
pub(crate) const REPORT: Accepts = Accepts {
    extensions: &[],
    stdout: Stdout::Text,
};

/// A rendered frame (`--screenshot`): a PNG, to a file or standard output.
pub(crate) const SCREENSHOT: Accepts = Accepts {
    extensions: &["png"],
    stdout: Stdout::Binary("a PNG"),
};

/// `run --save`: a snapshot, to a file or standard output.
pub(crate) const SNAPSHOT: Accepts = Accepts {
    extensions: &[],
    stdout: Stdout::Binary("a snapshot"),
};

/// `tree --export`: the format is the extension's, which standard output has not.
pub(crate) const MESH: Accepts = Accepts {
    extensions: &["glb", "obj"],
    stdout: Stdout::Refused("the format is told by the extension, .glb or .obj"),
};

/// `export --out`: a glTF binary, to a file or standard output.
pub(crate) const GLTF: Accepts = Accepts {
    extensions: &["glb"],
    stdout: Stdout::Binary("a glTF binary"),
};

/// `grass --bake`: one file per species, the later ones named after the first.
pub(crate) const BAKE: Accepts = Accepts {
    extensions: &[],
    stdout: Stdout::Refused("species after the first are written beside it as NAME-k.EXT"),
};

/// `terrain --instances`: CSV text, to a file or standard output.
pub(crate) const TABLE: Accepts = Accepts {
    extensions: &[],
    stdout: Stdout::Text,
};

/// A picture of the terrain, written to a file only.
pub(crate) const PNG: Accepts = Accepts {
    extensions: &["png"],
    stdout: Stdout::Refused("the terrain's pictures are written to files"),
};

/// One output a command may write: its flag, the path given (if any), and what it accepts.
pub(crate) type Output<'a> = (&'static str, Option<&'a Path>, Accepts);

/// Checks `--report` and every output given: a path as [`check`] does, standard output as
/// [`stdout_taken`] does, and at most one output on standard output. When one is there,
/// the command's lines go to standard error from now on.
pub(crate) fn check_all(common: &Common, outputs: &[Output<'_>]) -> Result<(), String> {
    let report: Output<'_> = ("--report", common.report.as_deref(), REPORT);
    let terminal = std::io::stdout().is_terminal();
    let mut on_stdout = None;
    for &(flag, path, accepts) in std::iter::once(&report).chain(outputs) {
        let Some(path) = path else { continue };
        if !is_stdout(path) {
            check(flag, path, accepts)?;
            continue;
        }
        let at = format!("{flag} {}", path.display());
        stdout_taken(&at, accepts, terminal)?;
        if let Some(first) = on_stdout.replace(flag) {
            return Err(format!(
                "{at}: standard output already carries {first}; name a file for one of them"
            ));
        }
    }
    if on_stdout.is_some() {
        console::to_stderr();
    }
    Ok(())
}

/// Whether an output that `accepts` may go to standard output (`at` names flag and path
/// in the error); `terminal`: whether standard output is one.
fn stdout_taken(at: &str, accepts: Accepts, terminal: bool) -> Result<(), String> {
    match accepts.stdout {
        Stdout::Text => Ok(()),
        Stdout::Binary(what) if terminal => Err(format!(
            "{at}: standard output is a terminal, and {what} is not written to one; redirect it (`> FILE`, `| PROGRAM`) or name a file"
        )),
        Stdout::Binary(_) => Ok(()),
        Stdout::Refused(why) => Err(format!("{at}: standard output is not taken here ({why}); name a file")),
    }
}

/// Whether `path` means standard output: `-`, or a name of the very file
/// standard output is (`/dev/stdout`, `/proc/self/fd/1`, the file it is redirected to).
pub(crate) fn is_stdout(path: &Path) -> bool {
    if path.as_os_str() == "-" {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let stdout = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata());
        if let (Ok(named), Ok(stdout)) = (std::fs::metadata(path), stdout) {
            return named.dev() == stdout.dev() && named.ino() == stdout.ino();
        }
    }
    false
}

/// Writes an output's `bytes` to `path`: standard output when [`is_stdout`], else
/// through [`write_output`](sylva::runtime::framed::write_output). The one way every
/// output of the CLI is written, after [`check_all`] has accepted its path.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    sylva::runtime::framed::write_output(path, bytes)
}

/// Checks that `flag`'s `path` can be written: it ends in one of the extensions
/// `accepts`, names a file rather than a directory, and lies in a directory that exists.
pub(crate) fn check(flag: &str, path: &Path, accepts: Accepts) -> Result<(), String> {
    let at = format!("{flag} {}", path.display());
    let extensions = accepts.extensions;
    let extension = path.extension().and_then(|e| e.to_str());
    if !extensions.is_empty() && !extension.is_some_and(|e| extensions.iter().any(|x| x.eq_ignore_ascii_case(e))) {
        let accepted: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
        return Err(format!("{at}: expected a {} file", accepted.join(" or ")));
    }
    if path.file_name().is_none() || path.is_dir() {
        return Err(format!("{at}: names a directory, not a file"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => writable(&at, path, dir),
        Ok(_) => Err(format!("{at}: {} is not a directory", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{at}: directory {} does not exist", dir.display()))
        }
        Err(e) => Err(format!("{at}: directory {}: {e}", dir.display())),
    }
}

/// Checks that `path` (in `dir`) can be written as it will be: a file (or the
/// file a link leads to) is replaced through a temporary file in its directory,
/// so one is made there and removed. A FIFO or device is left alone: opening a
/// FIFO would wait for its reader.
fn writable(at: &str, path: &Path, dir: &Path) -> Result<(), String> {
    let probe_dir = match std::fs::metadata(path) {
        Err(_) if std::fs::symlink_metadata(path).is_ok() => {
            return Err(format!(
                "{at}: a symbolic link to nothing; refused (remove the link or make its target)"
            ));
        }
        Ok(m) if !m.is_file() => return Ok(()),
        Ok(_) => std::fs::canonicalize(path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_owned))
            .unwrap_or_else(|| dir.to_owned()),
        Err(_) => dir.to_owned(),
    };
    sylva::runtime::framed::probe_writable(&probe_dir)
        .map_err(|e| format!("{at}: directory {} cannot be written: {e}", probe_dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_and_directories_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let ok = dir.path().join("x.PNG");
        assert_eq!(check("--screenshot", &ok, SCREENSHOT), Ok(()));
        assert_eq!(check("--save", &dir.path().join("state"), SNAPSHOT), Ok(()));
        let jpg = dir.path().join("x.jpg");
        assert_eq!(
            check("--screenshot", &jpg, SCREENSHOT),
            Err(format!("--screenshot {d}/x.jpg: expected a .png file"))
        );
        assert_eq!(
            check("--export", Path::new("x"), MESH),
            Err("--export x: expected a .glb or .obj file".to_owned())
        );
        let missing = dir.path().join("out/x.png");
        assert_eq!(
            check("--heightmap", &missing, PNG),
            Err(format!("--heightmap {d}/out/x.png: directory {d}/out does not exist"))
        );
        std::fs::write(dir.path().join("file"), b"").unwrap();
        assert_eq!(
            check("--bake", &dir.path().join("file/g.bin"), BAKE),
            Err(format!("--bake {d}/file/g.bin: {d}/file is not a directory"))
        );
        assert_eq!(
            check("--save", dir.path(), SNAPSHOT),
            Err(format!("--save {d}: names a directory, not a file"))
        );
    }

    #[test]
    fn standard_output_takes_text_and_binary_off_a_terminal_only() {
        let at = "--x -";
        assert_eq!(stdout_taken(at, REPORT, true), Ok(()));
        assert_eq!(stdout_taken(at, SNAPSHOT, false), Ok(()));
        assert_eq!(stdout_taken(at, SCREENSHOT, false), Ok(()));
        let e = stdout_taken(at, SCREENSHOT, true).unwrap_err();
        assert!(
            e.starts_with("--x -: standard output is a terminal, and a PNG is not written to one"),
            "{e}"
        );
        let e = stdout_taken(at, MESH, false).unwrap_err();
        assert_eq!(
            e,
            "--x -: standard output is not taken here (the format is told by the extension, .glb or .obj); name a file"
        );
        assert!(stdout_taken(at, BAKE, false).is_err());
        assert!(stdout_taken(at, PNG, false).is_err());
    }
}
