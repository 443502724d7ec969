//! The `sylva` binary as a user runs it.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use support::{run as sylva, temp};

/// Writes the small test scene to a file of its own: tests run in parallel, and
/// one test rewriting a file another is reading makes the reader fail at random.
fn small_scene(name: &str) -> PathBuf {
    let path = temp(name);
    std::fs::write(
        &path,
        "(name: \"small\", seed: 5, simulation: (frames: 30), chains: (columns: 6, rows: 5, links: 8))",
    )
    .unwrap();
    path
}

fn report(args: &[&str], name: &str) -> serde_json::Value {
    let path = temp(name);
    let mut all = args.to_vec();
    all.extend(["--report", path.to_str().unwrap()]);
    let out = sylva(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn bench_state_hash_is_equal_for_one_and_two_threads() {
    let scene = small_scene("bench.ron");
    let s = scene.to_str().unwrap();
    let one = report(&["bench", s, "--frames", "40", "--threads", "1"], "one.json");
    let two = report(&["bench", s, "--frames", "40", "--threads", "2"], "two.json");
    assert_eq!(one["state_hash"], two["state_hash"]);
    assert_eq!(one["threads"], 1);
    assert_eq!(two["threads"], 2);
    let other_seed = report(&["bench", s, "--frames", "40", "--seed", "6"], "seed.json");
    assert_ne!(one["state_hash"], other_seed["state_hash"]);
    assert_eq!(other_seed["seed"], 6);
}

#[test]
fn report_has_the_contract_keys() {
    let scene = small_scene("keys.ron");
    let r = report(&["run", scene.to_str().unwrap()], "run.json");
    for key in [
        "scene",
        "seed",
        "threads",
        "frames",
        "entities",
        "systems",
        "frame_ms",
        "peak_rss_bytes",
        "state_hash",
    ] {
        assert!(r.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(r["scene"], "small");
    assert_eq!(r["frames"], 30);
    assert_eq!(r["steps"], 120);
    assert_eq!(r["entities"]["particles"], 30 * 9);
    assert_eq!(r["entities"]["springs"], 30 * 8);
    assert_eq!(r["entities"]["pinned"], 30);
    let step = &r["systems"]["particles.step"];
    assert_eq!(step["calls"], 120);
    for key in ["total_ms", "mean_ms", "p50_ms", "p99_ms"] {
        assert!(step[key].as_f64().unwrap() >= 0.0);
    }
    // A headless run extracts only its last frame; `bench` extracts every frame.
    assert_eq!(r["systems"]["particles.extract"]["calls"], 1);
    for key in ["mean", "p50", "p99", "max"] {
        assert!(r["frame_ms"][key].as_f64().unwrap() > 0.0);
    }
    assert_eq!(r["state_hash"].as_str().unwrap().len(), 16);
}

#[test]
fn run_without_a_scene_streams_the_world() {
    let out = sylva(&["--threads", "2", "run", "--frames", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("world: 3 frames"), "{stdout}");
    assert!(stdout.contains("terrain_chunks"), "{stdout}");
    assert!(stdout.contains("rendering: off"), "{stdout}");
}

/// A small world: 64-cell chunks, a short radius, one tree species and one grass species.
fn small_world(name: &str) -> PathBuf {
    let path = temp(name);
    std::fs::write(
        &path,
        r#"(name: "small world", seed: 3, world: (
            chunk_cells: 64, load_radius: 150.0, evict_radius: 220.0, threads: 1,
            terrain: (generator: (height: Some(Fbm((frequency: 0.01, amplitude: 20.0, octaves: 3, lacunarity: 2.0, gain: 0.5))),
                layers: [(material: Granite, thickness: Share(1.0))])),
            trees: [(species: (name: "stick", variants: 2, lsystem: (grammar: "axiom: F(100)[+F(50)][-F(50)]", iterations: 1)),
                placement: (min_distance: 5.0))],
            grass: (species: [(name: "g")], bake: (cells: 4, frames: 4, max_warmup_seconds: 0.0)),
            ecology: (biomes: [(name: "all", canopy: [(species: "stick", per_hectare: 40.0)], ground: [(grass: "g", per_m2: 0.2)])]),
        ), camera: (position: (0.0, 40.0, 0.0), target: (10.0, 30.0, 0.0)))"#,
    )
    .unwrap();
    path
}

#[test]
fn fly_streams_reports_and_reads_its_cache_back() {
    let scene = small_world("world.ron");
    let cache = temp("chunk-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let fly = |name| {
        report(
            &[
                "fly",
                scene.to_str().unwrap(),
                "--no-render",
                "--speed",
                "60",
                "--seconds",
                "2",
                "--hz",
                "30",
                "--cache",
                cache.to_str().unwrap(),
            ],
            name,
        )
    };
    let cold = fly("cold.json");
    let s = &cold["streaming"];
    for key in [
        "requested",
        "generated",
        "from_cache",
        "cache_rejected",
        "installed",
        "evicted",
        "cancelled",
    ] {
        assert!(s["chunks"][key].is_u64(), "{key}");
    }
    for key in ["ready_ms", "install_ms_per_frame", "frame_ms"] {
        assert!(s[key]["p99"].as_f64().unwrap() >= 0.0, "{key}");
    }
    assert!(s["chunks"]["installed"].as_u64().unwrap() >= 16);
    assert_eq!(s["chunks"]["from_cache"], 0);
    assert!(s["rss_bytes"]["max"].as_u64().unwrap() > 0);
    assert_eq!(s["frames"], 60);
    for key in [
        "first_frame_ms",
        "render_cpu_ms",
        "render_on_cpu_ms",
        "render_queued_ms",
    ] {
        assert!(s[key].is_null(), "an unrendered flight has no {key}");
    }
    // Streamed chunks erode on their own and keep no books, so no balance is claimed.
    let terrain = &cold["terrain"];
    assert!(terrain["cells"].as_u64().unwrap() > 0, "{terrain}");
    for key in ["water", "material", "water_balance_error", "material_balance_error"] {
        assert!(terrain[key].is_null(), "{key}: {}", terrain[key]);
    }
    let warm = fly("warm.json");
    let w = &warm["streaming"];
    assert!(w["chunks"]["from_cache"].as_u64().unwrap() >= 16, "{w}");
    assert_eq!(w["chunks"]["cache_rejected"], 0);
    // Chunks near the end of the flight may be cancelled in one run and not the other; every
    // chunk both runs installed has the same content.
    let (a, b) = (
        s["chunk_hashes"].as_object().unwrap(),
        w["chunk_hashes"].as_object().unwrap(),
    );
    let common: Vec<_> = a.keys().filter(|k| b.contains_key(*k)).collect();
    assert!(common.len() >= 16);
    for k in common {
        assert_eq!(a[k], b[k], "chunk {k}");
    }
}

#[test]
fn fly_refuses_a_scene_without_a_world() {
    let scene = small_scene("noworld.ron");
    let out = sylva(&["fly", scene.to_str().unwrap(), "--no-render"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `world` section"));
}

#[test]
fn bad_input_is_a_one_line_error_and_a_failure() {
    let bad = temp("bad.ron");
    std::fs::write(&bad, "(\n  seed: 1,\n  chains: (\n    stiffness: -3.0,\n  ),\n)\n").unwrap();
    let out = sylva(&["run", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("bad.ron:4:5: field `chains.stiffness`"), "{stderr}");

    let out = sylva(&["run", "/nonexistent/scene.ron"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/scene.ron: cannot read"));

    let out = sylva(&["run", "--threads", "0"]);
    assert!(!out.status.success());
}

/// Above 1024, `--threads` is a usage error before anything starts (65535 was once accepted, and
/// starting that many threads took time growing faster than linearly; docs/design/limits.md,
/// "Thread count").
#[test]
fn a_thread_count_past_the_bound_is_a_usage_error() {
    let out = sylva(&["run", "--threads", "65535"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("65535 is not in 1..=1024"), "{stderr}");
}

/// A reader that leaves ends the output quietly: `sylva tree … | head -1` still does its work and
/// exits 0 (it once panicked on the broken pipe, println! on EPIPE).
#[test]
fn a_closed_stdout_is_not_a_failure() {
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig2_6a.ron");
    let export = temp("closed.obj");
    let _ = std::fs::remove_file(&export);
    let run = |read_first_line: bool| {
        let mut child = support::sylva()
            .args(["tree", scene, "--export", export.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("binary runs");
        let stdout = child.stdout.take().unwrap();
        if read_first_line {
            let mut line = String::new();
            std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
            assert!(line.starts_with("fig2_6a: "), "{line}");
        } else {
            // Closed before the first line: every write meets the broken pipe.
            drop(stdout);
        }
        child.wait_with_output().expect("binary ends")
    };
    for read_first_line in [false, true] {
        let out = run(read_first_line);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{:?}: {stderr}", out.status);
        assert!(stderr.is_empty(), "{stderr}");
        assert!(
            std::fs::metadata(&export).unwrap().len() > 0,
            "the export was still written"
        );
        std::fs::remove_file(&export).unwrap();
    }
    // Output lost otherwise (a full disk) is said, and fails the run.
    #[cfg(target_os = "linux")]
    {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = support::sylva()
            .args(["tree", scene])
            .stdout(full)
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: cannot write to stdout: "), "{stderr}");
    }
}

/// The first tree of a process pays for its fresh memory; `--warm N` adds a line for
/// regrowths in used buffers, the figure `benches/trees.rs` measures. Colonization has none.
#[test]
fn tree_warm_adds_a_line_for_regrowths_in_used_buffers() {
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig2_6a.ron");
    let out = sylva(&["tree", scene, "--warm", "3"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[1].ends_with("(the first tree of this process, in fresh memory)"),
        "{stdout}"
    );
    assert!(
        lines[2].contains("total ") && lines[2].contains("(median of 3 warm regrowths; fastest "),
        "{stdout}"
    );

    let colonized = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig3_2.ron");
    let out = sylva(&["tree", colonized, "--warm", "3"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--warm needs an L-system `tree` section"));
}

#[test]
fn a_run_resumed_from_a_snapshot_ends_where_an_uninterrupted_run_does() {
    let scene = small_scene("resume.ron");
    let s = scene.to_str().unwrap();
    let snap = temp("half.snap");
    let snap_arg = snap.to_str().unwrap();
    let whole = report(&["run", s, "--frames", "20"], "whole.json");
    let first = sylva(&["run", s, "--frames", "12", "--save", snap_arg]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let resumed = report(&["run", s, "--frames", "8", "--resume", snap_arg], "resumed.json");
    assert_eq!(resumed["steps"], 8 * 4, "the steps run since the resume");
    assert_eq!(resumed["resumed_from_step"], 12 * 4);
    assert_eq!(resumed["state_hash"], whole["state_hash"]);

    // A corrupt snapshot is a one-line error, not a panic or a silent restart.
    let mut bytes = std::fs::read(&snap).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&snap, bytes).unwrap();
    let out = sylva(&["run", s, "--resume", snap_arg]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        format!("error: {snap_arg}: snapshot is corrupt: checksum mismatch")
    );
}

#[test]
fn a_tree_growing_over_time_resumes_where_it_was() {
    let scene = temp("growing.ron");
    std::fs::write(
        &scene,
        r#"(name: "sapling", seed: 4, simulation: (frames: 12),
            colonize: (
                regions: [(shape: Sphere(centre: (0.0, 0.0, 300.0), radius: 200.0))],
                count: 600, influence_radius: 120.0, kill_distance: 30.0, step: 15.0,
                iterations: 200, iterations_per_step: 1,
            ))"#,
    )
    .unwrap();
    let s = scene.to_str().unwrap();
    let snap = temp("growing.snap");
    let snap_arg = snap.to_str().unwrap();
    let whole = report(&["run", s, "--frames", "12"], "growing-whole.json");
    let first = report(&["run", s, "--frames", "5", "--save", snap_arg], "growing-first.json");
    let resumed = report(
        &["run", s, "--frames", "7", "--resume", snap_arg],
        "growing-resumed.json",
    );
    // Saved mid-growth: the resumed run must regrow the colonizer and go on growing.
    let segments = |r: &serde_json::Value| r["entities"]["segments"].as_u64().unwrap_or(0);
    assert!(
        segments(&first) < segments(&whole),
        "{} vs {}",
        first["entities"],
        whole["entities"]
    );
    assert_eq!(resumed["entities"], whole["entities"]);
    assert_eq!(resumed["state_hash"], whole["state_hash"]);
}

/// A small grass scene: 50 two-segment blades on a 4 m patch, a 4×4-cell bake of 4 frames,
/// and a walker circling through the patch.
fn grass_scene(name: &str) -> PathBuf {
    let path = temp(name);
    std::fs::write(
        &path,
        r#"(name: "lawn", seed: 2, simulation: (frames: 30),
            grass: (
                species: [(blade: Preset("blade2"), scatter: (count: 50, min_distance: 0.05, min: (-2.0, -2.0), max: (2.0, 2.0)))],
                bake: (cells: 4, frames: 4, record_every: 4, max_warmup_seconds: 0.5),
                wind: (winds: [(seed: 1, power_offset: 1.0, power_amplitude: 2.0, frequency: 0.5, deviation: 1.0)]),
                pushers: [(walk: Orbit(center: (0.0, 0.0), radius: 1.0), radius: 0.3)],
            ))"#,
    )
    .unwrap();
    path
}

#[test]
fn grass_bakes_saves_and_reports() {
    let scene = grass_scene("grass.ron");
    let bake = temp("lawn.bin");
    let r = report(
        &["grass", scene.to_str().unwrap(), "--bake", bake.to_str().unwrap()],
        "grass.json",
    );
    let g = &r["grass"];
    assert_eq!(g["blades"], 50);
    assert_eq!(g["particles"], 50 * 3);
    assert_eq!(g["springs"], 50 * 2);
    assert_eq!(g["baked_frames"], 4);
    assert_eq!(g["texture_bytes"], 4 * 4 * 2 * 4 * 8);
    assert!(g["bake_ms"].as_f64().unwrap() > 0.0);
    assert!(g["steps_per_s"].as_f64().unwrap() > 0.0);
    let baked = sylva::systems::grass::BakedGrass::load(&bake).expect("the saved bake loads");
    assert_eq!((baked.cells, baked.frames, baked.links), (4, 4, 2));

    let other = small_scene("no-grass.ron");
    let out = sylva(&["grass", other.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `grass` section"));
}

#[test]
fn bench_runs_grass_with_a_walker_identically_on_one_and_two_threads() {
    let scene = grass_scene("grass-bench.ron");
    let s = scene.to_str().unwrap();
    let one = report(&["bench", s, "--frames", "30", "--threads", "1"], "grass-one.json");
    let two = report(&["bench", s, "--frames", "30", "--threads", "2"], "grass-two.json");
    // Everything but the timings is equal.
    for key in [
        "blades",
        "particles",
        "springs",
        "baked_frames",
        "live_blades",
        "texture_bytes",
    ] {
        assert_eq!(one["grass"][key], two["grass"][key], "{key}");
    }
    // The live blades are simulation state: in the hash, equal on any thread count.
    assert_eq!(one["state_hash"], two["state_hash"]);
    assert_eq!(one["systems"]["grass.extract"]["calls"], 30);
    assert_eq!(one["systems"]["grass.live"]["calls"], 120);
    assert_eq!(one["systems"]["grass.walk"]["calls"], 120);
    assert!(one["grass"]["live_blades"].as_u64().unwrap() > 0, "{}", one["grass"]);
}

#[test]
fn a_grass_run_resumed_with_live_blades_ends_where_an_uninterrupted_run_does() {
    let scene = grass_scene("grass-resume.ron");
    let s = scene.to_str().unwrap();
    let snap = temp("grass-half.snap");
    let snap_arg = snap.to_str().unwrap();
    let whole = report(&["run", s, "--frames", "30"], "grass-whole.json");
    let first = report(&["run", s, "--frames", "18", "--save", snap_arg], "grass-first.json");
    assert!(
        first["grass"]["live_blades"].as_u64().unwrap() > 0,
        "blades are live at the save"
    );
    let resumed = report(
        &["run", s, "--frames", "12", "--resume", snap_arg],
        "grass-resumed.json",
    );
    assert_eq!(resumed["grass"]["live_blades"], whole["grass"]["live_blades"]);
    assert_eq!(resumed["state_hash"], whole["state_hash"]);

    // The same state does not fit a lawn of another size: its scene parameters differ.
    let other = temp("grass-other.ron");
    let text = std::fs::read_to_string(&scene)
        .unwrap()
        .replace("count: 50", "count: 20");
    std::fs::write(&other, text).unwrap();
    let out = sylva(&["run", other.to_str().unwrap(), "--frames", "1", "--resume", snap_arg]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not fit scene `lawn` (seed 2): the scene parameters differ"),
        "{stderr}"
    );
}

/// `view` ends like a closed window, status 0, when its window is destroyed from outside
/// (`xdotool windowclose`, an X11 `DestroyWindow`; it once panicked in winit), and quits on Esc.
/// Needs `Xvfb`, `xdotool` and a Vulkan driver that presents to X11 (lavapipe will do); without
/// them the test says so and passes.
#[test]
fn the_viewer_ends_cleanly_when_destroyed_from_outside_or_on_escape() {
    // One viewer at a time: two Xvfb servers starting at once may race for a display.
    let dir = tempfile::tempdir().unwrap();
    let scene = chains_in(dir.path());
    view_under_xvfb(&scene, &[], |x| x(&["windowclose", WINDOW]));
    // Esc quits the viewer. xdotool types into the focused window (a real
    // key event; one sent to a window is marked synthetic, which winit ignores).
    view_under_xvfb(&scene, &[], |x| {
        x(&["windowfocus", "--sync", WINDOW]);
        x(&["key", "Escape"]);
    });
}

/// The viewer draws its overlay (seen in an F12 screenshot: light text on a dark
/// box at the top left), quits on Q with status 0 and writes its `--report`.
#[test]
fn the_viewer_shows_its_overlay_quits_on_q_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let scene = chains_in(dir.path());
    let report = dir.path().join("view.json");
    let shot = dir.path().join("chains-1.png");
    let out = view_under_xvfb(&scene, &["--report", report.to_str().unwrap()], |x| {
        x(&["windowfocus", "--sync", WINDOW]);
        x(&["key", "F12"]);
        let started = std::time::Instant::now();
        while !shot.exists() && started.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        x(&["key", "q"]);
    });
    let Some(out) = out else { return };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("screenshot: "), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["scene"], "chains");
    assert!(report["frames"].as_u64().unwrap() > 0, "{report}");
    let (w, _, pixels) = sylva::vk::read_png(&shot).unwrap();
    if std::env::var_os("SYLVA_KEEP_SCREENSHOT").is_some() {
        std::fs::copy(&shot, "/tmp/viewer-overlay.png").unwrap();
    }
    let at = |x: u32, y: u32| {
        let k = ((y * w + x) * 4) as usize;
        [pixels[k], pixels[k + 1], pixels[k + 2]]
    };
    let sum = |p: [u8; 3]| p.iter().map(|&c| u32::from(c)).sum::<u32>();
    // The box's corner (its margin, no text) is darker than the sky beside the box.
    assert!(
        sum(at(8, 8)) * 2 < sum(at(w - 8, 8)),
        "{:?} against {:?}",
        at(8, 8),
        at(w - 8, 8)
    );
    let text = (12..60)
        .flat_map(|y| (12..400).map(move |x| (x, y)))
        .filter(|&(x, y)| at(x, y).iter().all(|&c| c > 200))
        .count();
    assert!(text > 200, "{text} light text pixels in the box");
}

/// The chains scene copied into `dir`, so the viewer's F12 screenshots land there.
fn chains_in(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("chains.ron");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/chains.ron"), &path).unwrap();
    path
}

/// Stands for the viewer's window id in an xdotool command.
const WINDOW: &str = "{window}";

/// The id of the viewer's window (titled `sylva: chains`) on `display`, once it shows; none
/// when the viewer exits first or a minute passes.
fn wait_for_window(view: &mut std::process::Child, display: &str) -> Option<String> {
    use std::time::{Duration, Instant};
    let started = Instant::now();
    loop {
        let search = Command::new("xdotool")
            .args(["search", "--name", "^sylva: chains$"])
            .env("DISPLAY", display)
            .output()
            .unwrap();
        let id = String::from_utf8_lossy(&search.stdout)
            .lines()
            .next()
            .map(str::to_owned);
        let exited = view.try_wait().unwrap().is_some();
        if id.is_some() || exited || started.elapsed() > Duration::from_secs(60) {
            return id;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Starts `view SCENE ARGS` (a scene named chains) under Xvfb, waits for its window, lets
/// `drive` run xdotool commands ([`WINDOW`] replaced by its id), and checks that the viewer
/// ends with status 0 and no panic; its output, or none when the test is skipped.
fn view_under_xvfb(scene: &std::path::Path, args: &[&str], drive: impl FnOnce(&dyn Fn(&[&str]))) -> Option<Output> {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    if !support::installed("Xvfb") || !support::installed("xdotool") {
        eprintln!("skipped: needs Xvfb and xdotool");
        return None;
    }
    let (mut xvfb, display) = support::start_xvfb();
    let mut view = support::sylva()
        .args(["view", scene.to_str().unwrap(), "--frames", "100000"])
        .args(args)
        .env("DISPLAY", &display)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let Some(window) = wait_for_window(&mut view, &display) else {
        let _ = view.kill();
        let out = view.wait_with_output().unwrap();
        let _ = xvfb.kill();
        let _ = xvfb.wait();
        eprintln!(
            "skipped: no window (no Vulkan driver presenting to X11?): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    };
    // Let it draw a few frames first.
    std::thread::sleep(Duration::from_secs(1));
    drive(&|command: &[&str]| {
        let args = command.iter().map(|a| if *a == WINDOW { window.as_str() } else { a });
        let done = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &display)
            .status()
            .unwrap();
        assert!(done.success(), "xdotool {command:?}");
    });
    let started = Instant::now();
    while view.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let running = view.try_wait().unwrap().is_none();
    if running {
        let _ = view.kill();
    }
    let out = view.wait_with_output().unwrap();
    let _ = xvfb.kill();
    let _ = xvfb.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!running, "view went on without its window: {stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    Some(out)
}

/// `fly --watch` follows the scene file: an edit saved mid-flight is rebuilt and
/// flown on in, a broken one is reported with its line while the flight goes on.
#[test]
fn fly_watch_reloads_an_edit_mid_flight() {
    use std::process::Stdio;
    let scene = small_world("watched.ron");
    let text = std::fs::read_to_string(&scene).unwrap();
    let s = scene.to_str().unwrap();
    let mut fly = support::sylva()
        .args([
            "fly",
            s,
            "--watch",
            "--no-render",
            "--speed",
            "20",
            "--seconds",
            "15",
            "--hz",
            "10",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stdout on a thread; edit once the flight is under way (after the first ring). The
    // flight lasts long enough for a rebuild on a loaded 2-core machine (it took over 5 s).
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = fly.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
            let line = line.unwrap();
            if line.contains("first ring") {
                tx.send(()).unwrap();
            }
            all += &line;
            all += "\n";
        }
        all
    });
    rx.recv_timeout(std::time::Duration::from_secs(120))
        .expect("the flight starts");
    std::fs::write(&scene, text.replace("per_hectare: 40.0", "per_hectare: \"many\"")).unwrap();
    std::thread::sleep(std::time::Duration::from_secs(1));
    std::fs::write(&scene, text.replace("per_hectare: 40.0", "per_hectare: 20.0")).unwrap();
    let out = fly.wait_with_output().unwrap();
    let stdout = reader.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("watching") && stdout.contains("small world: reloaded in"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("watched.ron:"), "{stderr}");
    assert!(
        sylva(&["fly", "--watch"]).status.code() == Some(2),
        "--watch needs a scene file"
    );
}

/// `sylva completions SHELL` and `sylva man` print shell completions and a man page.
#[test]
fn completions_and_the_man_page_are_printed() {
    let bash = sylva(&["completions", "bash"]);
    assert!(bash.status.success());
    let script = String::from_utf8_lossy(&bash.stdout);
    assert!(script.contains("_sylva()") && script.contains("view"), "{script}");
    let man = sylva(&["man"]);
    assert!(man.status.success());
    // roff escapes every minus sign.
    let page = String::from_utf8_lossy(&man.stdout).replace("\\-", "-");
    assert!(page.starts_with(".ie") || page.contains(".TH sylva 1"), "{page}");
    assert!(page.contains("--screenshot") && page.contains("sylva view"), "{page}");
    assert!(sylva(&["completions", "nosuchshell"]).status.code() == Some(2));
}

/// Without a display, `view` says what it needs in words, not winit's source path.
#[test]
fn view_without_a_display_says_what_it_needs() {
    let out = support::sylva()
        .args([
            "view",
            concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/chains.ron"),
            "--frames",
            "1",
        ])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no X11 display: DISPLAY is not set"), "{stderr}");
    assert!(stderr.contains("--screenshot"), "{stderr}");
    assert!(!stderr.contains(".rs:") && !stderr.contains("WAYLAND"), "{stderr}");
}

/// Extraction is work for frames someone sees. A headless `run` extracts only its
/// last frame, `bench` every frame (as a renderer runs them); the state is the same.
#[test]
fn a_headless_run_extracts_only_its_last_frame_and_ends_in_the_same_state() {
    let scene = small_scene("headless.ron");
    let s = scene.to_str().unwrap();
    let run = report(&["run", s, "--frames", "30"], "headless-run.json");
    let bench = report(&["bench", s, "--frames", "30"], "headless-bench.json");
    assert_eq!(run["state_hash"], bench["state_hash"]);
    assert_eq!(run["systems"]["particles.extract"]["calls"], 1);
    assert_eq!(bench["systems"]["particles.extract"]["calls"], 30);
    assert_eq!(run["systems"]["particles.step"]["calls"], 120);
}

/// `sylva scenes` lists every bundled scene with what it shows.
#[test]
fn scenes_lists_the_bundled_scenes_with_what_they_show() {
    let out = support::sylva().arg("scenes").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis"))
        .unwrap()
        .count();
    let listed = text.lines().filter(|l| l.starts_with("scenes/thesis/")).count();
    assert_eq!(listed, files, "{text}");
    let fig = text
        .lines()
        .find(|l| l.starts_with("scenes/thesis/fig6_1b.ron"))
        .unwrap();
    assert!(fig.contains("Fig. 6.1b: eq. 5.3"), "{fig}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("scenes/world.ron") && l.contains("archipelago"))
    );
}

/// A count of a few zeros too many costs a few steps, not months: the first steps are timed
/// and a run past twelve hours stops with its estimate unless forced.
#[test]
fn runs_estimated_past_the_ceiling_stop_with_their_estimate() {
    let landscape = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/landscape1.ron");
    let chains = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/chains.ron");
    for (line, unit) in [
        (
            ["terrain", landscape, "--iterations", "4000000000"],
            "4000000000 iterations would take about",
        ),
        (
            ["run", chains, "--frames", "4000000000"],
            "4000000000 frames would take about",
        ),
    ] {
        let out = sylva(&line);
        assert!(!out.status.success(), "{line:?} ran");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(unit) && stderr.contains("--force"), "{stderr}");
    }
}
