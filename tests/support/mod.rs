//! What the binary's tests share: `sylva` run as a user runs it, and scratch files.
//!
//! Each test binary includes this module (`mod support;`) and uses the part it needs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::LazyLock;

/// The `sylva` binary, not yet run; no shard index leaks in from a CI job's environment.
pub fn sylva() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sylva"));
    c.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
    c
}

/// Runs `sylva ARGS` to the end.
pub fn run(args: &[&str]) -> Output {
    sylva().args(args).output().expect("the binary runs")
}

/// What a run printed on stdout.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a run printed on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// This test process's scratch directory, made by `tempfile` under the system's temporary
/// directory. Tests run in parallel, so each names its own files in it.
static SCRATCH: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    tempfile::Builder::new()
        .prefix("sylva-test-")
        .tempdir()
        .expect("a scratch directory")
});

/// A path named `name` in this process's scratch directory.
pub fn temp(name: &str) -> PathBuf {
    SCRATCH.path().join(name)
}

/// Whether `tool` is installed: it starts at all (`-help` needs no display).
pub fn installed(tool: &str) -> bool {
    Command::new(tool)
        .arg("-help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Starts Xvfb on a free display (it writes the number to fd 1 once it accepts clients):
/// the server, to kill, and the display's name.
pub fn start_xvfb() -> (Child, String) {
    use std::io::BufRead;
    let mut xvfb = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut number = String::new();
    std::io::BufReader::new(xvfb.stdout.take().unwrap())
        .read_line(&mut number)
        .unwrap();
    (xvfb, format!(":{}", number.trim()))
}
