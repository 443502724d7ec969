//! Output paths checked before a command does any work: a wrong extension or a
//! missing directory fails at once, naming the flag, rather than after the run,
//! when the work is lost and the outputs written before it are left behind.

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
    let report: Output<'_> = ("--report", common.report.as_deref(), ANY);
    for (flag, path, extensions) in std::iter::once(&report).chain(outputs) {
        if let Some(path) = path {
            check(flag, path, extensions)?;
        }
    }
    Ok(())
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
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("{at}: {} is not a directory", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{at}: directory {} does not exist", dir.display()))
        }
        Err(e) => Err(format!("{at}: directory {}: {e}", dir.display())),
    }
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
