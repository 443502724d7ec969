//! What the binary's tests share: `sylva` run as a user runs it, and scratch files.
//!
//! Each test binary includes this module (`mod support;`) and uses the part it needs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
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
