//! Timings that feed `--report`: per-system calls and durations, frame times, a thread's time on
//! and off the cores, peak memory.
//!
//! ```
//! use std::time::Duration;
//! use sylva_runtime::metrics::Histogram;
//!
//! let mut h = Histogram::default();
//! for ms in 1..=100 {
//!     h.record(Duration::from_millis(ms));
//! }
//! assert_eq!(h.count(), 100);
//! // Buckets are 1 % wide, so the median of 1..=100 ms is 50 ms within 1 %.
//! assert!((h.quantile_ms(0.5) / 50.0 - 1.0).abs() <= 0.011);
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;

/// Lowest and highest duration the histogram resolves, in milliseconds.
const MIN_MS: f64 = 1e-4;
const MAX_MS: f64 = 1e6;
/// Ratio between neighbouring bucket edges: percentiles are exact to 1 %.
const RATIO: f64 = 1.01;

/// A log-bucketed histogram of durations in bounded memory.
///
/// Keeping every sample would grow without bound in a long session; buckets
/// 1 % wide keep percentiles accurate to 1 % in about 2.8k counters.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    total_ms: f64,
    max_ms: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        let n = ((MAX_MS / MIN_MS).ln() / RATIO.ln()).ceil() as usize + 1;
        Self {
            buckets: vec![0; n],
            count: 0,
            total_ms: 0.0,
            max_ms: 0.0,
        }
    }
}

impl Histogram {
    /// Adds one sample.
    pub fn record(&mut self, d: Duration) {
        let ms = d.as_secs_f64() * 1e3;
        let i = if ms <= MIN_MS {
            0
        } else {
            (((ms / MIN_MS).ln() / RATIO.ln()).ceil() as usize).min(self.buckets.len() - 1)
        };
        self.buckets[i] += 1;
        self.count += 1;
        self.total_ms += ms;
        self.max_ms = self.max_ms.max(ms);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of all samples, milliseconds.
    pub fn total_ms(&self) -> f64 {
        self.total_ms
    }

    /// Mean sample, milliseconds (0 when empty).
    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ms / self.count as f64
        }
    }

    /// Largest sample, milliseconds.
    pub fn max_ms(&self) -> f64 {
        self.max_ms
    }

    /// The `q` quantile (0..=1), milliseconds: the upper edge of the bucket
    /// holding it, capped by the true maximum.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (MIN_MS * RATIO.powi(i as i32)).min(self.max_ms);
            }
        }
        self.max_ms
    }
}

/// Calls and timing of one system, as written to the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SystemReport {
    /// How often the system ran.
    pub calls: u64,
    /// Total time spent in it.
    pub total_ms: f64,
    /// Mean time per call.
    pub mean_ms: f64,
    /// Median time per call (a few slow calls move the mean, not this).
    pub p50_ms: f64,
    /// 99th percentile per call.
    pub p99_ms: f64,
}

/// Frame-time summary, as written to the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FrameReport {
    /// Mean frame time.
    pub mean: f64,
    /// Median frame time.
    pub p50: f64,
    /// 99th percentile frame time.
    pub p99: f64,
    /// Longest frame.
    pub max: f64,
}

/// Everything the runtime measures while it runs.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    systems: BTreeMap<String, Histogram>,
    frames: Histogram,
}

impl Metrics {
    /// Records one call of system `name`.
    pub fn record_system(&mut self, name: &str, d: Duration) {
        match self.systems.get_mut(name) {
            Some(h) => h.record(d),
            None => {
                let mut h = Histogram::default();
                h.record(d);
                self.systems.insert(name.to_owned(), h);
            }
        }
    }

    /// Records one frame (one `App::update`).
    pub fn record_frame(&mut self, d: Duration) {
        self.frames.record(d);
    }

    /// Per-system summary, keyed by system name.
    pub fn systems(&self) -> BTreeMap<String, SystemReport> {
        self.systems
            .iter()
            .map(|(name, h)| {
                let r = SystemReport {
                    calls: h.count(),
                    total_ms: h.total_ms(),
                    mean_ms: h.mean_ms(),
                    p50_ms: h.quantile_ms(0.5),
                    p99_ms: h.quantile_ms(0.99),
                };
                (name.clone(), r)
            })
            .collect()
    }

    /// The histogram of system `name`'s calls, if it ran.
    pub fn system(&self, name: &str) -> Option<&Histogram> {
        self.systems.get(name)
    }

    /// Frame-time summary.
    pub fn frames(&self) -> FrameReport {
        let f = &self.frames;
        FrameReport {
            mean: f.mean_ms(),
            p50: f.quantile_ms(0.5),
            p99: f.quantile_ms(0.99),
            max: f.max_ms(),
        }
    }

    /// Number of frames recorded.
    pub fn frame_count(&self) -> u64 {
        self.frames.count()
    }
}

/// How the calling thread has spent its time since it started: on a core, and ready to run
/// but waiting for one. Two readings apart ([`ThreadTimes::since`]) tell a stretch of work
/// from the time other threads (a software GPU's, say) kept it off the cores.
///
/// ```
/// use sylva_runtime::metrics::ThreadTimes;
///
/// if let Some(before) = ThreadTimes::now() {
///     let busy = std::time::Instant::now();
///     while busy.elapsed().as_millis() < 5 {}
///     let spent = ThreadTimes::now().unwrap().since(before);
///     assert!(spent.on_cpu + spent.waiting >= std::time::Duration::from_millis(4));
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    /// Time on a core.
    pub on_cpu: Duration,
    /// Time ready to run, queued for a core.
    pub waiting: Duration,
}

impl ThreadTimes {
    /// The calling thread's times so far, where the OS tells them (Linux: its CPU clock and
    /// `/proc/thread-self/schedstat`; `None` elsewhere).
    pub fn now() -> Option<Self> {
        let waiting = parse_schedstat(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)?.waiting;
        Some(Self {
            on_cpu: thread_cpu_time()?,
            waiting,
        })
    }

    /// The times from `earlier` to `self`, none below zero.
    pub fn since(self, earlier: Self) -> Self {
        Self {
            on_cpu: self.on_cpu.saturating_sub(earlier.on_cpu),
            waiting: self.waiting.saturating_sub(earlier.waiting),
        }
    }
}

/// The calling thread's time on a core, to the moment (`CLOCK_THREAD_CPUTIME_ID`).
/// `schedstat`'s own first field is brought up to date only at scheduler ticks and
/// switches, so a running thread reading it sees its time as of the last tick (up to 4 ms
/// stale at 250 Hz): short stretches of work read as none. Its queued time has no such lag
/// for the reader: a wait ends, and is added, when the thread gets a core back, which it has
/// while it reads.
#[cfg(unix)]
fn thread_cpu_time() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

#[cfg(not(unix))]
fn thread_cpu_time() -> Option<Duration> {
    None
}

/// The first two fields of a `schedstat` line: nanoseconds on a core, nanoseconds queued.
fn parse_schedstat(text: &str) -> Option<ThreadTimes> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    let on_cpu = fields.next()?.ok()?;
    let waiting = fields.next()?.ok()?;
    Some(ThreadTimes {
        on_cpu: Duration::from_nanos(on_cpu),
        waiting: Duration::from_nanos(waiting),
    })
}

/// Peak resident set size of this process in bytes, where the OS tells it.
///
/// Reads `VmHWM` from `/proc/self/status` on Linux; `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Resident set size of this process now, in bytes, where the OS tells it
/// (`VmRSS` on Linux; `None` elsewhere).
pub fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

fn status_bytes(key: &str) -> Option<u64> {
    status_field(&std::fs::read_to_string("/proc/self/status").ok()?, key)
}

/// The value of `key` in the text of `/proc/self/status`, in bytes.
fn status_field(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stretch_of_work_is_counted_on_a_core_or_queued() {
        let Some(before) = ThreadTimes::now() else {
            return;
        };
        // Well under a scheduler tick: the schedstat field alone read it as nothing.
        let busy = std::time::Instant::now();
        while busy.elapsed() < Duration::from_micros(300) {}
        let spent = ThreadTimes::now().unwrap().since(before);
        assert!(spent.on_cpu + spent.waiting >= Duration::from_micros(250), "{spent:?}");
        assert!(spent.on_cpu > Duration::ZERO, "{spent:?}");
    }

    #[test]
    fn a_schedstat_line_reads_as_time_on_a_core_and_time_queued() {
        let t = parse_schedstat("1500000 250000 42\n").unwrap();
        assert_eq!(
            (t.on_cpu, t.waiting),
            (Duration::from_micros(1500), Duration::from_micros(250))
        );
        assert_eq!(parse_schedstat("12"), None);
        assert_eq!(parse_schedstat("x 1 2"), None);
        let later = ThreadTimes {
            on_cpu: Duration::from_millis(3),
            waiting: Duration::from_millis(1),
        };
        assert_eq!(t.since(later).on_cpu, Duration::ZERO, "never below zero");
        assert_eq!(later.since(t).waiting, Duration::from_micros(750));
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut h = Histogram::default();
        for i in 1..=1000u64 {
            h.record(Duration::from_micros(i * 10));
        }
        assert_eq!(h.count(), 1000);
        let p50 = h.quantile_ms(0.5);
        assert!((p50 - 5.0).abs() / 5.0 < 0.011, "p50 {p50}");
        let p99 = h.quantile_ms(0.99);
        assert!((p99 - 9.9).abs() / 9.9 < 0.011, "p99 {p99}");
        assert!((h.max_ms() - 10.0).abs() < 1e-9);
        assert!((h.mean_ms() - 5.005).abs() < 1e-9);
        assert_eq!(h.quantile_ms(1.0), 10.0);
    }

    #[test]
    fn empty_and_extreme_samples() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile_ms(0.99), 0.0);
        h.record(Duration::ZERO);
        h.record(Duration::from_secs(100_000));
        assert_eq!(h.count(), 2);
        assert_eq!(h.quantile_ms(0.0), MIN_MS);
    }

    #[test]
    fn system_reports_are_keyed_by_name() {
        let mut m = Metrics::default();
        m.record_system("b", Duration::from_millis(2));
        m.record_system("a", Duration::from_millis(1));
        m.record_system("a", Duration::from_millis(3));
        let s = m.systems();
        assert_eq!(s.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(s["a"].calls, 2);
        assert!((s["a"].mean_ms - 2.0).abs() < 1e-9);
        // One slow call moves the mean, not the median.
        for ms in [1, 2, 3, 3, 500] {
            m.record_system("c", Duration::from_millis(ms));
        }
        let c = &m.systems()["c"];
        assert!(c.mean_ms > 100.0);
        assert!((c.p50_ms - 3.0).abs() < 0.1, "{c:?}");
    }

    #[test]
    fn peak_rss_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(peak_rss_bytes().unwrap() > 1024 * 1024);
            assert!(rss_bytes().is_some());
            // One snapshot: other test threads allocate and free between two reads, and the
            // kernel's high-water mark lags a fall in the resident set.
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            assert!(status_field(&status, "VmRSS:").unwrap() <= status_field(&status, "VmHWM:").unwrap());
        }
    }
}
