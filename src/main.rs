//! The `sylva` command line. Each command is a module of [`cli`] with its flags, its body and
//! its tests; this file only starts the process and hands the parsed line to [`cli::run`].

use std::process::ExitCode;

// First, so that the console's `println!` (a closed stdout is not a panic) is the one every
// module of the command line sees.
#[macro_use]
mod cli;

use clap::Parser;

fn main() -> ExitCode {
    fixed_mmap_threshold();
    file_size_limit_is_an_error();
    let result = cli::run(cli::Cli::parse());
    cli::console::exit_code(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    })
}

/// Allocations of 256 KiB and more get their own mapping, returned to the OS when freed.
///
/// glibc raises this threshold whenever such a block is freed, up to 32 MiB; then a
/// world's megabyte-sized chunk buffers, allocated on the generation threads and freed
/// as chunks leave, come from arenas that fragment and keep growing: a 60 s flight
/// ended at 461 MiB resident with the default against 271 MiB with a fixed threshold.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fixed_mmap_threshold() {
    const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
    unsafe extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: glibc's mallopt only sets an allocator tuning value; it is called
    // before any other thread exists, with a documented parameter and value.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fixed_mmap_threshold() {}

/// A write past the file size limit (`ulimit -f`) fails with "File too large", which the
/// command says and whose temporary file it removes like any failed write's; by default
/// SIGXFSZ would kill the process without a word and leave the temporary file behind.
#[cfg(unix)]
fn file_size_limit_is_an_error() {
    // SAFETY: ignoring a signal installs no handler code; it is done before any other
    // thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

#[cfg(not(unix))]
fn file_size_limit_is_an_error() {}
