//! Long runs found out early: a run of many frames or iterations is timed over its first
//! steps, says how long the rest will take when that is more than a minute, and stops there
//! when it would take longer than [`CEILING`], unless `--force` is given. A typo of a few
//! zeros costs a few steps, not days of a machine.

use std::time::{Duration, Instant};

use indicatif::ProgressBar;

/// Steps timed before the estimate.
const PROBE_STEPS: u32 = 3;

/// The longest a run goes on without `--force`.
pub(crate) const CEILING: Duration = Duration::from_secs(12 * 3600);

/// Remaining work past this is announced with its estimate.
const ANNOUNCED: Duration = Duration::from_secs(60);

/// Called after step `done` (from 1) of a run of `total` `unit`s that started at `since`:
/// after the [`PROBE_STEPS`]th, [`check`]s the rest, above `bar`.
pub(crate) fn after_step(
    done: u32,
    total: u32,
    unit: &str,
    since: Instant,
    force: bool,
    bar: &ProgressBar,
) -> Result<(), String> {
    if done != PROBE_STEPS {
        return Ok(());
    }
    let took = since.elapsed();
    bar.suspend(|| check(total.into(), unit, done.into(), took, force))
}

/// Checks a run of `total` `unit`s ("iterations") after its first `done` took `took`: an
/// error past [`CEILING`] unless `force`, and an estimate printed past a minute.
pub(crate) fn check(total: u64, unit: &str, done: u64, took: Duration, force: bool) -> Result<(), String> {
    if done == 0 || done >= total {
        return Ok(());
    }
    let each = took.as_secs_f64() / done as f64;
    let left = each * (total - done) as f64;
    let pace = format!(
        "{} at this rate ({:.1} ms each over the first {done})",
        about(left),
        each * 1e3
    );
    if left > CEILING.as_secs_f64() && !force {
        return Err(format!(
            "{total} {unit} would take {pace}, over the limit of {} without --force; ask for fewer, or pass --force to run them all",
            about(CEILING.as_secs_f64())
        ));
    }
    if left > ANNOUNCED.as_secs_f64() {
        println!("{total} {unit}: the rest takes {pace}");
    }
    Ok(())
}

/// `seconds` in the largest unit that keeps a number of at least one: "about 70 days".
fn about(seconds: f64) -> String {
    const UNITS: [(f64, &str); 5] = [
        (365.25 * 86400.0, "year"),
        (86400.0, "day"),
        (3600.0, "hour"),
        (60.0, "minute"),
        (1.0, "second"),
    ];
    let (size, name) = UNITS
        .iter()
        .copied()
        .find(|&(size, _)| seconds >= size)
        .unwrap_or(UNITS[4]);
    let n = (seconds / size).round().max(1.0);
    if n == 1.0 {
        format!("about 1 {name}")
    } else {
        format!("about {n:.0} {name}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_read_in_the_largest_unit() {
        assert_eq!(about(0.2), "about 1 second");
        assert_eq!(about(90.0), "about 2 minutes");
        assert_eq!(about(70.0 * 86400.0), "about 70 days");
        assert_eq!(about(3.0e9), "about 95 years");
    }

    #[test]
    fn a_run_past_the_ceiling_stops_unless_forced() {
        let step = Duration::from_millis(1500);
        let err = check(4_000_000_000, "iterations", 3, step * 3, false).unwrap_err();
        assert!(
            err.starts_with(
                "4000000000 iterations would take about 190 years at this rate (1500.0 ms each over the first 3)"
            ),
            "{err}"
        );
        assert!(err.contains("--force"), "{err}");
        assert_eq!(check(4_000_000_000, "iterations", 3, step * 3, true), Ok(()));
        assert_eq!(check(100, "frames", 3, step * 3, false), Ok(()));
        assert_eq!(
            check(3, "frames", 3, step * 3, false),
            Ok(()),
            "nothing left to estimate"
        );
    }
}
