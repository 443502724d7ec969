//! Output paths checked before a command does any work: a wrong extension, a
//! missing or unwritable directory fails at once, naming the flag, rather than
//! after the run, when the work is lost and the outputs written before it are
//! left behind.
//!
//! `--report -` writes the report to standard output (as does any name for the
//! file standard output is, such as `/dev/stdout`), and the command's own lines
//! then go to standard error, so the output pipes into `jq`. Any other path is
//! written by [`write_output`](sylva::runtime::framed::write_output): a FIFO or
//! device written through, a link to a file resolved and that file replaced.

use std::io::Write;
use std::path::Path;

use crate::cli::Common;

/// What a PNG flag accepts.
pub(crate) const PNG: &[&str] = &["png"];

/// What `tree --export` accepts.
pub(crate) const MESH: &[&str] = &["glb", "obj"];

/// Any file name.
pub(crate) const ANY: &[&str] = &[];

/// One output a command may write: its flag, the path given (if any), and the
/// extensions it accepts (any when empty).
pub(crate) type Output<'a> = (&'static str, Option<&'a Path>, &'static [&'static str]);

/// Checks `--report` and every output given (see [`check`]).
pub(crate) fn check_all(common: &Common, outputs: &[Output<'_>]) -> Result<(), String> {
    let report = common.report.as_deref().filter(|p| !is_stdout(p));
    let report: Output<'_> = ("--report", report, ANY);
    for (flag, path, extensions) in std::iter::once(&report).chain(outputs) {
        if let Some(path) = path {
            check(flag, path, extensions)?;
        }
    }
    Ok(())
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
/// through [`write_output`](sylva::runtime::framed::write_output).
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        return out.flush();
    }
    sylva::runtime::framed::write_output(path, bytes)
}

/// Checks that `flag`'s `path` can be written: it ends in one of `extensions`
/// (ASCII case ignored; any when empty), names a file rather than a directory,
/// and lies in a directory that exists.
pub(crate) fn check(flag: &str, path: &Path, extensions: &[&str]) -> Result<(), String> {
    let at = format!("{flag} {}", path.display());
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
        assert_eq!(check("--screenshot", &ok, PNG), Ok(()));
        assert_eq!(check("--save", &dir.path().join("state"), ANY), Ok(()));
        let jpg = dir.path().join("x.jpg");
        assert_eq!(
            check("--screenshot", &jpg, PNG),
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
            check("--bake", &dir.path().join("file/g.bin"), ANY),
            Err(format!("--bake {d}/file/g.bin: {d}/file is not a directory"))
        );
        assert_eq!(
            check("--save", dir.path(), ANY),
            Err(format!("--save {d}: names a directory, not a file"))
        );
    }
}
