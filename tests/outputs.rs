//! What the `sylva` binary writes: every output replaced whole or not at all, even
//! when the process is killed while writing it; output paths and formats checked
//! before any work, so a bad one fails fast and writes nothing.
//!
//! A process killed mid-write leaves at most a temporary file `.sylva-*.tmp` beside
//! the target: harmless, never read by Sylva, and safe to delete.
mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{run as sylva, stderr};

const SCENES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes");

/// What a target holds before a killed write: a complete file of known bytes.
const OLD: &[u8] = b"the old file, complete\n";

fn scene(rel: &str) -> String {
    format!("{SCENES}/{rel}")
}

/// splitmix64: reproducible "random" kill points.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How a finished target is recognised as complete.
enum Complete {
    /// Equal to the output of an uninterrupted run.
    Same,
    /// A whole JSON document (a report holds wall times, so no two runs are equal).
    Json,
    /// A whole PNG of the given size (a GPU need not draw the same bits twice).
    Png(u32, u32),
}

impl Complete {
    fn holds(&self, bytes: &[u8], new: &[u8]) -> bool {
        match self {
            Complete::Same => bytes == new,
            Complete::Json => serde_json::from_slice::<serde_json::Value>(bytes).is_ok(),
            Complete::Png(w, h) => {
                let file = tempfile::NamedTempFile::new().unwrap();
                std::fs::write(file.path(), bytes).unwrap();
                sylva::vk::read_png(file.path()).is_ok_and(|(pw, ph, _)| (pw, ph) == (*w, *h))
            }
        }
    }
}

/// One kind of output: the command (`{}` stands for the target path) and the target's file name.
struct Kind {
    args: Vec<String>,
    target: &'static str,
    complete: Complete,
}

impl Kind {
    fn new(args: &[&str], target: &'static str, complete: Complete) -> Self {
        Self {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            target,
            complete,
        }
    }

    fn command(&self, target: &Path) -> Command {
        let mut c = support::sylva();
        c.args(
            self.args
                .iter()
                .map(|a| if a == "{}" { target.to_str().unwrap() } else { a }),
        );
        c.stdout(Stdio::null()).stderr(Stdio::null());
        c
    }
}

/// Whether `dir` shows that a write of `target` has begun: another entry
/// (a temporary file), or a target that is no longer the old file.
fn writing_started(dir: &Path, target: &Path) -> bool {
    let others = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.path() != target);
    others || std::fs::metadata(target).map_or(true, |m| m.len() != OLD.len() as u64)
}

/// Kills `kind`'s command with SIGKILL at several points, over a complete old file each
/// time: some at random moments of the run, some just after the write began (where a
/// truncating writer leaves a part). Afterwards the target must be the old file or the
/// complete new one, and anything else in the directory a `.sylva-*.tmp` temporary.
fn killed_writes_leave_old_or_new(kind: &Kind, salt: u64) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(kind.target);
    let started = Instant::now();
    let status = kind.command(&target).status().unwrap();
    let full_run = started.elapsed();
    assert!(status.success(), "{:?} fails", kind.args);
    let new = std::fs::read(&target).unwrap();
    assert!(kind.complete.holds(&new, &new), "{:?} writes a whole file", kind.args);
    for attempt in 0..6u64 {
        let r = mix(salt * 100 + attempt);
        std::fs::write(&target, OLD).unwrap();
        let mut child = kind.command(&target).spawn().unwrap();
        if attempt % 2 == 0 {
            // At a random moment of the run.
            std::thread::sleep(full_run.mul_f64((r % 1000) as f64 / 1000.0));
        } else {
            // Just after the write began, a few microseconds in.
            let until = Instant::now() + full_run * 20 + Duration::from_secs(5);
            while !writing_started(dir.path(), &target) && child.try_wait().unwrap().is_none() {
                assert!(Instant::now() < until, "{:?} never writes", kind.args);
            }
            std::thread::sleep(Duration::from_micros(r % 300));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let now = std::fs::read(&target).unwrap();
        let whole = now == OLD || kind.complete.holds(&now, &new);
        assert!(
            whole,
            "{:?} killed (attempt {attempt}) left {} bytes, neither the old file ({}) nor the new one ({})",
            kind.args,
            now.len(),
            OLD.len(),
            new.len()
        );
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let entry = entry.unwrap();
            if entry.path() == target {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                name.starts_with(".sylva-") && name.ends_with(".tmp"),
                "{:?} left {name}",
                kind.args
            );
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
}

#[test]
fn killed_tree_exports_leave_the_old_or_the_new_file() {
    let tree = scene("thesis/fig6_1b.ron");
    killed_writes_leave_old_or_new(
        &Kind::new(&["tree", &tree, "--export", "{}"], "t.glb", Complete::Same),
        1,
    );
    killed_writes_leave_old_or_new(
        &Kind::new(&["tree", &tree, "--export", "{}"], "t.obj", Complete::Same),
        2,
    );
}

#[test]
fn killed_heightmaps_leave_the_old_or_the_new_file() {
    let terrain = scene("thesis/landscape1.ron");
    let args = ["terrain", &terrain, "--iterations", "3", "--heightmap", "{}"];
    killed_writes_leave_old_or_new(&Kind::new(&args, "h.png", Complete::Same), 3);
}

#[test]
fn killed_grass_bakes_snapshots_and_reports_leave_the_old_or_the_new_file() {
    let grass = scene("grass/blade2.ron");
    killed_writes_leave_old_or_new(
        &Kind::new(&["grass", &grass, "--bake", "{}"], "g.bin", Complete::Same),
        4,
    );
    let chains = scene("chains.ron");
    let save = ["run", &chains, "--frames", "5", "--save", "{}"];
    killed_writes_leave_old_or_new(&Kind::new(&save, "s.bin", Complete::Same), 5);
    let report = ["run", &chains, "--frames", "5", "--report", "{}"];
    killed_writes_leave_old_or_new(&Kind::new(&report, "r.json", Complete::Json), 6);
}

#[test]
fn killed_screenshots_leave_the_old_or_the_new_file() {
    let chains = scene("chains.ron");
    let args = [
        "run",
        &chains,
        "--frames",
        "2",
        "--width",
        "160",
        "--height",
        "90",
        "--screenshot",
        "{}",
    ];
    let probe = tempfile::tempdir().unwrap();
    let shot = probe.path().join("probe.png");
    let out = sylva(&args.map(|a| if a == "{}" { shot.to_str().unwrap() } else { a }));
    if !out.status.success() && stderr(&out).contains(sylva::vk::NO_DRIVER_HINT) {
        assert_ne!(
            std::env::var(sylva::vk::testing::REQUIRE_VULKAN).as_deref(),
            Ok("1"),
            "no Vulkan driver: {}",
            stderr(&out)
        );
        eprintln!("SKIPPED: killed screenshots: no Vulkan driver");
        return;
    }
    killed_writes_leave_old_or_new(&Kind::new(&args, "x.png", Complete::Png(160, 90)), 7);
}

#[test]
fn an_unknown_export_format_is_refused_and_the_file_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.stl", "x.fbx", "x"] {
        let path = dir.path().join(name);
        std::fs::write(&path, OLD).unwrap();
        let out = sylva(&["tree", &scene("thesis/fig6_1b.ron"), "--export", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains(&format!("--export {}: expected a .glb or .obj file", path.display())),
            "{}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "nothing was grown");
        assert_eq!(std::fs::read(&path).unwrap(), OLD);
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        3,
        "nothing else written"
    );
}

#[test]
fn a_bad_output_path_fails_before_the_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (save, report) = (dir.path().join("s.bin"), dir.path().join("r.json"));
    let missing = dir.path().join("missing-dir").join("x.png");
    let chains = scene("chains.ron");
    let out = sylva(&[
        "run",
        &chains,
        "--save",
        save.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--screenshot",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "--screenshot {}: directory {} does not exist",
            missing.display(),
            missing.parent().unwrap().display()
        )),
        "{}",
        stderr(&out)
    );
    // The scene's 600 frames never ran: no summary, no snapshot, no report.
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let jpg = dir.path().join("x.jpg");
    let out = sylva(&[
        "run",
        &chains,
        "--save",
        save.to_str().unwrap(),
        "--screenshot",
        jpg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("x.jpg: expected a .png file"), "{}", stderr(&out));
    let out = sylva(&[
        "terrain",
        &scene("thesis/landscape1.ron"),
        "--heightmap",
        jpg.to_str().unwrap(),
    ]);
    assert!(stderr(&out).contains(&format!("--heightmap {}: expected a .png file", jpg.display())));
    let out = sylva(&[
        "grass",
        &scene("grass/blade2.ron"),
        "--bake",
        dir.path().to_str().unwrap(),
    ]);
    assert!(
        stderr(&out).contains("names a directory, not a file"),
        "{}",
        stderr(&out)
    );
    let out = sylva(&[
        "bench",
        &chains,
        "--report",
        missing.with_extension("json").to_str().unwrap(),
    ]);
    assert!(stderr(&out).contains("--report"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn an_asked_for_screenshot_without_a_driver_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("x.png");
    // The Vulkan loader then finds no driver, whether the machine has one or not.
    let out = support::sylva()
        .args([
            "run",
            &scene("chains.ron"),
            "--frames",
            "2",
            "--screenshot",
            shot.to_str().unwrap(),
        ])
        .env("VK_ICD_FILENAMES", dir.path().join("none.json"))
        .env("VK_DRIVER_FILES", dir.path().join("none.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(sylva::vk::NO_DRIVER_HINT), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "it fails before the run");
    assert!(!shot.exists());
}

#[test]
fn a_saved_grass_bake_is_read_back_by_run_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let grass = scene("grass/blade2.ron");
    let bake = dir.path().join("g.bin");
    let out = sylva(&["grass", &grass, "--bake", bake.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = |extra: &[&str]| {
        let path = dir.path().join("r.json");
        let out = sylva(
            &[
                &["run", &grass, "--frames", "5", "--report", path.to_str().unwrap()],
                extra,
            ]
            .concat(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(&path).unwrap()).unwrap()
    };
    let baked = report(&[]);
    let read = report(&["--bake-in", bake.to_str().unwrap()]);
    assert_eq!(baked["grass"]["loaded_bakes"], 0);
    assert_eq!(read["grass"]["loaded_bakes"], 1);
    assert_eq!(read["grass"]["texture_bytes"], baked["grass"]["texture_bytes"]);
    assert_eq!(read["state_hash"], baked["state_hash"]);

    let refused = |args: &[&str]| {
        let out = sylva(&[&["run", &grass, "--frames", "1"], args].concat());
        assert_eq!(out.status.code(), Some(1));
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("state hash"),
            "it never ran"
        );
        stderr(&out)
    };
    let b = bake.to_str().unwrap();
    let e = refused(&["--seed", "3", "--bake-in", b]);
    assert!(e.contains(&format!("{b}: baked from other inputs")), "{e}");
    let short = dir.path().join("short.bin");
    std::fs::write(&short, &std::fs::read(&bake).unwrap()[..20]).unwrap();
    let e = refused(&["--bake-in", short.to_str().unwrap()]);
    assert!(
        e.contains(&format!("{}: too short (20 bytes) to be a grass bake", short.display())),
        "{e}"
    );
    let long = dir.path().join("long.bin");
    std::fs::write(&long, [std::fs::read(&bake).unwrap(), b"tail".to_vec()].concat()).unwrap();
    let e = refused(&["--bake-in", long.to_str().unwrap()]);
    assert!(e.contains("4 trailing bytes after the grass bake"), "{e}");
    let missing = dir.path().join("missing.bin");
    let e = refused(&["--bake-in", missing.to_str().unwrap()]);
    assert_eq!(e.matches(missing.to_str().unwrap()).count(), 1, "the path once: {e}");
}

#[test]
fn io_errors_name_the_path_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.bin");
    let out = sylva(&[
        "run",
        &scene("chains.ron"),
        "--frames",
        "1",
        "--resume",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).matches(missing.to_str().unwrap()).count(),
        1,
        "{}",
        stderr(&out)
    );
}

/// `sylva run` of the chains for one frame, its report at `report`, as a child process.
fn report_run(report: &str) -> Command {
    let mut c = support::sylva();
    c.args(["run", &scene("chains.ron"), "--frames", "1", "--report", report]);
    c
}

/// `child`'s output, or a failed test (the child killed) if it runs past `limit`.
fn within(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn report_dash_and_stdout_names_write_the_json_alone_to_stdout() {
    // `/dev/fd/1` is `/dev/stdout` by another name: the same file as standard output.
    for name in ["-", "/dev/fd/1"] {
        let child = report_run(name)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = within(child, Duration::from_secs(60), name);
        assert!(out.status.success(), "--report {name}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "--report {name}: stdout is not the report alone ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        assert_eq!(json["frames"].as_u64(), Some(1), "{json}");
        assert!(
            stderr(&out).contains("frame ms mean"),
            "the summary goes to stderr: {}",
            stderr(&out)
        );
    }
    assert!(!Path::new("-").exists(), "no file named -");
}

#[cfg(unix)]
#[test]
fn a_report_into_a_fifo_reaches_its_reader_and_the_fifo_stays() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let child = report_run(fifo.to_str().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = within(child, Duration::from_secs(60), "--report FIFO");
    assert!(out.status.success(), "{}", stderr(&out));
    // Checked before joining: the reader of a FIFO replaced by a file would wait forever.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
    let json: serde_json::Value = serde_json::from_slice(&reader.join().unwrap()).unwrap();
    assert_eq!(json["frames"].as_u64(), Some(1), "{json}");
}

#[cfg(unix)]
#[test]
fn a_report_through_a_link_replaces_the_file_it_leads_to() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("runs").join("1.json");
    std::fs::create_dir(target.parent().unwrap()).unwrap();
    std::fs::write(&target, OLD).unwrap();
    let link = dir.path().join("latest.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = report_run(link.to_str().unwrap()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
        "the link stays a link"
    );
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(json["frames"].as_u64(), Some(1), "{json}");
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("nowhere").join("x.json"), &dangling).unwrap();
    let out = report_run(dangling.to_str().unwrap()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("a symbolic link to nothing"), "{}", stderr(&out));
}

/// `sylva ARGS` run in `dir` (so a file named `-` would land there) to the end.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    support::sylva().args(args).current_dir(dir).output().unwrap()
}

#[test]
fn a_snapshot_to_dash_is_stdout_alone_and_a_second_output_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let chains = scene("chains.ron");
    let file = dir.path().join("s.bin");
    let out = sylva(&["run", &chains, "--frames", "3", "--save", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run_in(dir.path(), &["run", &chains, "--frames", "3", "--save", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stdout == std::fs::read(&file).unwrap(),
        "stdout is the snapshot alone ({} bytes)",
        out.stdout.len()
    );
    assert!(
        stderr(&out).contains("frame ms mean"),
        "the summary goes to stderr: {}",
        stderr(&out)
    );
    let out = run_in(
        dir.path(),
        &[
            "run",
            &chains,
            "--frames",
            "3",
            "--report",
            "-",
            "--save",
            "/dev/stdout",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--save /dev/stdout: standard output already carries --report"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no file named -");
}

#[test]
fn outputs_that_standard_output_cannot_carry_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            vec!["tree", "--export"],
            "thesis/fig6_1b.ron",
            "--export -: standard output is not taken here (the format is told by the extension, .glb or .obj)",
        ),
        (
            vec!["grass", "--bake"],
            "grass/blade2.ron",
            "--bake -: standard output is not taken here (species after the first are written beside it",
        ),
        (
            vec!["terrain", "--heightmap"],
            "thesis/landscape1.ron",
            "--heightmap -: standard output is not taken here (the terrain's pictures are written to files)",
        ),
    ];
    for (command, file, message) in cases {
        let path = scene(file);
        let out = run_in(dir.path(), &[command[0], &path, command[1], "-"]);
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        assert!(stderr(&out).contains(message), "{command:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{command:?}: nothing ran");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file named -");
}

#[test]
fn a_screenshot_to_dash_is_a_png_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        &scene("chains.ron"),
        "--frames",
        "2",
        "--width",
        "160",
        "--height",
        "90",
        "--screenshot",
        "-",
    ];
    let out = run_in(dir.path(), &args);
    if !out.status.success() && stderr(&out).contains(sylva::vk::NO_DRIVER_HINT) {
        assert_ne!(
            std::env::var(sylva::vk::testing::REQUIRE_VULKAN).as_deref(),
            Ok("1"),
            "no Vulkan driver: {}",
            stderr(&out)
        );
        eprintln!("SKIPPED: a screenshot to stdout: no Vulkan driver");
        return;
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("screenshot: -"), "{}", stderr(&out));
    assert!(
        Complete::Png(160, 90).holds(&out.stdout, &[]),
        "stdout is the PNG alone"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file named -");
}

/// The bytes `sylva ARGS` writes to the output `{}` stands for, as a regular file in `dir`
/// named `name`.
fn output_of(dir: &Path, args: &[&str], name: &str) -> Vec<u8> {
    let path = dir.join(name);
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "{}" { path.to_str().unwrap() } else { a })
        .collect();
    let out = sylva(&args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    std::fs::read(path).unwrap()
}

/// The outputs besides the report, each a command line (`{}` its path) and a file name
/// with the extension it needs; every one writes the same bytes each time.
fn outputs() -> Vec<(Vec<String>, &'static str)> {
    let line = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        (line(&["tree", &scene("thesis/fig6_1b.ron"), "--export", "{}"]), "t.obj"),
        (
            line(&["run", &scene("chains.ron"), "--frames", "3", "--save", "{}"]),
            "s.bin",
        ),
        (line(&["grass", &scene("grass/blade2.ron"), "--bake", "{}"]), "g.bin"),
        (
            line(&[
                "terrain",
                &scene("thesis/landscape1.ron"),
                "--iterations",
                "3",
                "--heightmap",
                "{}",
            ]),
            "h.png",
        ),
    ]
}

#[cfg(unix)]
#[test]
fn outputs_into_a_fifo_reach_its_reader_and_the_fifo_stays() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    for (args, name) in outputs() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let expected = output_of(dir.path(), &args, name);
        let fifo = dir.path().join(format!("fifo-{name}"));
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let line: Vec<&str> = args
            .iter()
            .map(|a| if *a == "{}" { fifo.to_str().unwrap() } else { a })
            .collect();
        let out = run_in(dir.path(), &line);
        assert!(out.status.success(), "{line:?}: {}", stderr(&out));
        // Checked before joining: the reader of a FIFO replaced by a file would wait forever.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{line:?} replaced the FIFO by {kind:?}");
        assert!(
            reader.join().unwrap() == expected,
            "{line:?}: the reader got the output"
        );
    }
}

#[cfg(unix)]
#[test]
fn outputs_through_a_link_replace_the_file_it_leads_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    for (args, name) in outputs() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let expected = output_of(dir.path(), &args, name);
        let target = dir.path().join("runs").join(name);
        std::fs::write(&target, OLD).unwrap();
        let link = dir.path().join(format!("latest-{name}"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let line: Vec<&str> = args
            .iter()
            .map(|a| if *a == "{}" { link.to_str().unwrap() } else { a })
            .collect();
        let out = sylva(&line);
        assert!(out.status.success(), "{line:?}: {}", stderr(&out));
        assert!(
            std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
            "{line:?}: the link stays a link"
        );
        assert!(
            std::fs::read(&target).unwrap() == expected,
            "{line:?}: the file it leads to is the output"
        );
    }
}
