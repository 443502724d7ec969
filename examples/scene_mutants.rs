//! A mutation campaign over the bundled scenes: each mutant is one scene from
//! `scenes/` with one change — a number replaced by an extreme, a line deleted
//! or repeated, two lines swapped, the text cut short — run by
//! `sylva run MUTANT --frames 2` in a child process with a time limit. A
//! mutant must run or be refused with an error naming its file and line; a
//! panic, an abort (or any signal) or a run past the time limit is a failure.
//!
//! ```sh
//! cargo build --release && cargo run --release --example scene_mutants -- 4000
//! ```
//!
//! Arguments: mutants (default 4000), seed (default 1), seconds per run
//! (default 20), runs at once (default 2). Failures are listed with their mutant
//! files, kept under `target/scene-mutants/`; the exit status is 1 if any.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, RngExt};
use sylva::runtime::rng::{StreamKey, stream};

/// What replaces a number.
const EXTREMES: [&str; 12] = [
    "0",
    "-1",
    "1e12",
    "-1e12",
    "4294967295",
    "1e-30",
    "0.0",
    "65535",
    "1e38",
    "-0.5",
    "3",
    "100000000",
];

/// How one mutant ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ran,
    Refused,
    RefusedWithoutLine,
    Panic,
    Signal,
    Hang,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (count, seed, seconds, parallel) = (arg(0, 4000), arg(1, 1), arg(2, 20), arg(3, 2).max(1));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sylva = root.join("target/release/sylva");
    assert!(sylva.exists(), "build the CLI first: cargo build --release");
    let scenes = scene_files(&root.join("scenes"));
    let out = root.join("target/scene-mutants");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("target/ is writable");
    let mut running: Vec<(Child, Instant, PathBuf)> = Vec::new();
    let mut outcomes: Vec<(Outcome, PathBuf, String)> = Vec::new();
    let started = Instant::now();
    for k in 0..count {
        while running.len() as u64 >= parallel {
            reap(&mut running, &mut outcomes, seconds);
        }
        let mut rng = stream(seed, StreamKey::Index(k), "scene-mutants");
        let scene = &scenes[rng.random_range(0..scenes.len())];
        let text = std::fs::read_to_string(scene).expect("a bundled scene reads");
        let (mutant, how) = mutate(&text, &mut rng);
        let stem = scene
            .file_stem()
            .map_or("scene".into(), |s| s.to_string_lossy().into_owned());
        let path = out.join(format!("{k:05}-{stem}.ron"));
        std::fs::write(&path, format!("// {how} of {}\n{mutant}", scene.display())).expect("target/ is writable");
        let child = Command::new(&sylva)
            .args(["run", "--frames", "2", "--threads", "2", "--memory-limit", "4G"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sylva starts");
        running.push((child, Instant::now(), path));
    }
    while !running.is_empty() {
        reap(&mut running, &mut outcomes, seconds);
    }
    summarize(&outcomes, started.elapsed());
}

/// Every `.ron` file under `dir`, sorted.
fn scene_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("scenes/ reads") {
            let path = entry.expect("scenes/ reads").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "ron") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `text` with one change, and what the change was.
fn mutate(text: &str, rng: &mut impl Rng) -> (String, String) {
    let lines: Vec<&str> = text.lines().collect();
    let numbers = number_spans(text);
    match rng.random_range(0..10) {
        0..=5 if !numbers.is_empty() => {
            let (a, b) = numbers[rng.random_range(0..numbers.len())];
            let with = EXTREMES[rng.random_range(0..EXTREMES.len())];
            let how = format!("number `{}` at byte {a} replaced by {with}", &text[a..b]);
            (format!("{}{with}{}", &text[..a], &text[b..]), how)
        }
        6 => {
            let i = rng.random_range(0..lines.len());
            let mut l = lines.clone();
            l.remove(i);
            (l.join("\n"), format!("line {} deleted", i + 1))
        }
        7 => {
            let i = rng.random_range(0..lines.len());
            let mut l = lines.clone();
            l.insert(i, lines[i]);
            (l.join("\n"), format!("line {} repeated", i + 1))
        }
        8 if lines.len() > 1 => {
            let i = rng.random_range(0..lines.len() - 1);
            let mut l = lines.clone();
            l.swap(i, i + 1);
            (l.join("\n"), format!("lines {} and {} swapped", i + 1, i + 2))
        }
        _ => {
            let mut at = rng.random_range(0..text.len().max(1));
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            (text[..at].to_owned(), format!("cut at byte {at}"))
        }
    }
}

/// Byte ranges of the numeric literals of `text` (outside comments).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let starts =
            bytes[i].is_ascii_digit() && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let a = if i > 0 && bytes[i - 1] == b'-' { i - 1 } else { i };
        while i < bytes.len()
            && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.' || bytes[i] == b'-' && bytes[i - 1] == b'e')
        {
            i += 1;
        }
        spans.push((a, i));
    }
    spans
}

/// Collects the children that ended or ran out of time.
fn reap(running: &mut Vec<(Child, Instant, PathBuf)>, outcomes: &mut Vec<(Outcome, PathBuf, String)>, seconds: u64) {
    let mut k = 0;
    let mut any = false;
    while k < running.len() {
        let (child, since, _) = &mut running[k];
        let status = child.try_wait().expect("a child can be waited for");
        let timed_out = status.is_none() && since.elapsed() > Duration::from_secs(seconds);
        if status.is_none() && !timed_out {
            k += 1;
            continue;
        }
        if timed_out {
            let _ = child.kill();
        }
        let (child, _, path) = running.swap_remove(k);
        let output = child.wait_with_output().expect("a child's output reads");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let outcome = match output.status.code() {
            _ if timed_out => Outcome::Hang,
            Some(0) => Outcome::Ran,
            Some(101) => Outcome::Panic,
            Some(_) if located(&stderr, &path) => Outcome::Refused,
            Some(_) => Outcome::RefusedWithoutLine,
            None => Outcome::Signal,
        };
        let first = stderr.lines().next().unwrap_or("").to_owned();
        outcomes.push((outcome, path, first));
        any = true;
    }
    if !any {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether `stderr` names the mutant's file and a line in it.
fn located(stderr: &str, path: &Path) -> bool {
    let name = path.display().to_string();
    stderr.lines().any(|l| {
        l.find(&name)
            .and_then(|at| l[at + name.len()..].strip_prefix(':'))
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    })
}

fn summarize(outcomes: &[(Outcome, PathBuf, String)], wall: Duration) {
    let count = |o: Outcome| outcomes.iter().filter(|(x, _, _)| *x == o).count();
    println!(
        "{} mutants in {:.0} s: {} ran, {} refused with file:line, {} refused without a line, {} panics, {} signals (aborts), {} hangs",
        outcomes.len(),
        wall.as_secs_f64(),
        count(Outcome::Ran),
        count(Outcome::Refused),
        count(Outcome::RefusedWithoutLine),
        count(Outcome::Panic),
        count(Outcome::Signal),
        count(Outcome::Hang)
    );
    let mut bad: Vec<_> = outcomes.iter().filter(|(o, _, _)| *o > Outcome::Refused).collect();
    bad.sort();
    for (o, path, first) in &bad {
        println!("  {o:?}: {}: {first}", path.display());
    }
    if bad.iter().any(|(o, _, _)| *o >= Outcome::Panic) {
        std::process::exit(1);
    }
}
