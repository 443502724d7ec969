//! The CLI's standard output, which a reader may close early (`sylva tree … | head -1`).
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and `println!`
//! panics on a failed write. Every `println!` of the binary is this module's instead (it is
//! declared first in `cli/mod.rs`, so its `println!` shadows std's in every module after it):
//!
//! - Once the reader has gone, the rest of the output is dropped without a word and the command
//!   carries on: its files (exports, bakes, snapshots) are still written, and its exit status
//!   still says whether they were. ripgrep, whose output is all its work, exits 0 at once; a
//!   Sylva command that stopped there would report success for files it never wrote.
//! - Any other write error (a full disk behind `>`) is said once on stderr, the rest of the
//!   output is dropped, and [`exit_code`] turns the run's status into a failure.
//!
//! When standard output carries the JSON report (`--report -`), the lines go to standard error
//! instead ([`to_stderr`]), so the report reaches its reader alone.

use std::fmt;
use std::io::{self, ErrorKind, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

const OPEN: u8 = 0;
/// The reader closed the pipe.
const CLOSED: u8 = 1;
/// A write failed otherwise.
const FAILED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(OPEN);

/// Whether the lines go to standard error.
static TO_STDERR: AtomicBool = AtomicBool::new(false);

/// Sends the lines to standard error from now on: standard output carries the report.
pub(crate) fn to_stderr() {
    TO_STDERR.store(true, Ordering::Relaxed);
}

/// `println!` that neither panics nor stops the command when stdout fails (see the module docs).
macro_rules! println {
    () => {
        crate::cli::console::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        crate::cli::console::line(format_args!($($arg)*))
    };
}

/// Writes `args` and a newline to stdout, unless an earlier write failed.
pub(crate) fn line(args: fmt::Arguments<'_>) {
    write(format_args!("{args}\n"));
}

/// Writes `bytes` (a generated file: completions, a man page) to stdout, unless an earlier
/// write failed.
pub(crate) fn bytes(bytes: &[u8]) {
    write(format_args!("{}", String::from_utf8_lossy(bytes)));
}

fn write(args: fmt::Arguments<'_>) {
    if STATE.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let written = if TO_STDERR.load(Ordering::Relaxed) {
        io::stderr().lock().write_fmt(args)
    } else {
        io::stdout().lock().write_fmt(args)
    };
    if let Err(e) = written {
        if e.kind() == ErrorKind::BrokenPipe {
            STATE.store(CLOSED, Ordering::Relaxed);
        } else {
            eprintln!("error: cannot write to stdout: {e}");
            STATE.store(FAILED, Ordering::Relaxed);
        }
    }
}

/// `code`, or a failure when some output was lost to a write error other than a closed pipe.
pub(crate) fn exit_code(code: ExitCode) -> ExitCode {
    if STATE.load(Ordering::Relaxed) == FAILED {
        ExitCode::FAILURE
    } else {
        code
    }
}
