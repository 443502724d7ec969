//! `sylva run --save` and `--resume` as a user runs them: a snapshot resumes only the
//! scene and seed it was saved from, and a resumed run reports what it ran itself.

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{run as sylva, temp};

fn scene(name: &str, text: &str) -> String {
    let path = temp(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Two thesis trees grown from L-systems at build time: the same component types, so
/// the schema alone could not tell their snapshots apart.
fn thesis(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes/thesis")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

fn ok(args: &[&str]) -> Output {
    let out = sylva(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn report(args: &[&str], name: &str) -> Value {
    let path = temp(name);
    let mut all = args.to_vec();
    all.extend(["--report", path.to_str().unwrap()]);
    ok(&all);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The one line a refused resume prints.
fn refusal(args: &[&str]) -> String {
    let out = sylva(args);
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// Reproduction: a snapshot of one tree scene resumed into another (same component
/// types) ran on and exited 0, reporting the other scene with the first one's trees.
#[test]
fn another_scenes_snapshot_is_refused_naming_both() {
    let (a, b) = (thesis("fig5_1a.ron"), thesis("fig5_1b.ron"));
    let snap = temp("fig5_1a.snap");
    let snap = snap.to_str().unwrap();
    ok(&["run", &a, "--frames", "2", "--save", snap]);
    assert_eq!(
        refusal(&["run", &b, "--frames", "1", "--resume", snap]),
        format!(
            "error: {snap}: snapshot of scene `fig5_1a` (seed 1) does not fit scene `fig5_1b` (seed 1): \
             the scene parameters differ"
        )
    );
    // The same scene in a file of another name resumes: the name is not the state.
    let text = std::fs::read_to_string(&a).unwrap();
    let copy = scene("copy.ron", &text);
    let resumed = report(&["run", &copy, "--frames", "1", "--resume", snap], "copy.json");
    assert_eq!(resumed["scene"], "copy");
    // So does the scene with a run length, camera and sun of its own.
    let text = text.replacen(
        "\n(\n",
        "\n(\n    simulation: (frames: 3), camera: (position: (5.0, 5.0, 5.0)), sun: (direction: (0.0, -1.0, 0.0)),\n",
        1,
    );
    let recut = scene("recut.ron", &text);
    let resumed = report(&["run", &recut, "--resume", snap], "recut.json");
    assert_eq!(resumed["frames"], 3);
}

/// Reproduction: `--seed` was silently ignored with `--resume`.
#[test]
fn a_seed_other_than_the_snapshots_is_refused_not_ignored() {
    let s = scene(
        "seeded.ron",
        "(name: \"seeded\", seed: 5, simulation: (frames: 4), chains: (columns: 2, rows: 2, links: 3))",
    );
    let snap = temp("seeded.snap");
    let snap = snap.to_str().unwrap();
    ok(&["run", &s, "--save", snap]);
    assert_eq!(
        refusal(&["run", &s, "--resume", snap, "--seed", "6"]),
        format!(
            "error: {snap}: snapshot of scene `seeded` (seed 5) does not fit scene `seeded` (seed 6): the seeds differ"
        )
    );
    let same = report(&["run", &s, "--resume", snap, "--seed", "5"], "seed-same.json");
    assert_eq!(same["seed"], 5);

    // Saved under `--seed 9`: resuming needs that seed, not the scene's.
    ok(&["run", &s, "--seed", "9", "--save", snap]);
    assert!(
        refusal(&["run", &s, "--resume", snap])
            .ends_with("(seed 9) does not fit scene `seeded` (seed 5): the seeds differ")
    );
    let nine = report(&["run", &s, "--resume", snap, "--seed", "9"], "seed-nine.json");
    assert_eq!(nine["seed"], 9);
}

/// Reproduction: after a resume the rates divided the steps since the original start by
/// this process's time. Now frames, steps, simulated time and every rate are this
/// process's, and the report says where the snapshot had got to.
#[test]
fn a_resumed_run_reports_only_what_it_ran() {
    let s = scene(
        "rates.ron",
        "(name: \"rates\", seed: 5, simulation: (frames: 30), chains: (columns: 6, rows: 5, links: 8))",
    );
    let snap = temp("rates.snap");
    let snap = snap.to_str().unwrap();
    let whole = report(&["run", &s, "--frames", "20"], "rates-whole.json");
    assert_eq!(
        (
            whole["resumed_from_frame"].as_u64(),
            whole["resumed_from_step"].as_u64()
        ),
        (Some(0), Some(0))
    );
    ok(&["run", &s, "--frames", "12", "--save", snap]);
    let resumed = report(&["run", &s, "--frames", "8", "--resume", snap], "rates-resumed.json");
    assert_eq!(resumed["state_hash"], whole["state_hash"]);
    assert_eq!(resumed["frames"], 8);
    assert_eq!(resumed["steps"], 8 * 4);
    assert_eq!(resumed["resumed_from_frame"], 12);
    assert_eq!(resumed["resumed_from_step"], 12 * 4);
    assert!((resumed["sim_seconds"].as_f64().unwrap() - 32.0 / 240.0).abs() < 1e-12);
    let step = &resumed["systems"]["particles.step"];
    assert_eq!(step["calls"], 32);
    let moving = resumed["entities"]["particles"].as_u64().unwrap() - resumed["entities"]["pinned"].as_u64().unwrap();
    let expected = moving as f64 * 32.0 / (step["total_ms"].as_f64().unwrap() / 1e3);
    let rate = resumed["particles"]["updates_per_s"].as_f64().unwrap();
    assert!(
        (rate / expected - 1.0).abs() < 1e-9,
        "{rate} updates/s, {expected} from 32 steps"
    );

    // Saved again and resumed again: the frames add up over every run.
    ok(&["run", &s, "--frames", "8", "--resume", snap, "--save", snap]);
    let again = report(&["run", &s, "--frames", "1", "--resume", snap], "rates-again.json");
    assert_eq!(again["resumed_from_frame"], 20);
    assert_eq!(again["resumed_from_step"], 80);
}

/// Terrain timings per pass divide this process's time by this process's passes.
#[test]
fn a_resumed_terrain_times_its_own_passes() {
    let s = scene(
        "plot.ron",
        "(name: \"plot\", seed: 3, simulation: (frames: 4, steps_per_frame: 2), terrain: (size: 32))",
    );
    let snap = temp("plot.snap");
    let snap = snap.to_str().unwrap();
    ok(&["run", &s, "--save", snap]);
    let r = report(&["run", &s, "--resume", snap], "plot.json");
    assert_eq!(r["terrain"]["iterations"], 16, "the books count every iteration");
    assert_eq!(r["steps"], 8);
    let water = r["systems"]["terrain.water"]["total_ms"].as_f64().unwrap();
    let per_pass = r["terrain"]["hydraulic_ms_per_iter"].as_f64().unwrap();
    assert!(
        (per_pass * 8.0 / water - 1.0).abs() < 1e-9,
        "{per_pass} ms per pass, {water} ms for 8"
    );
}

/// A snapshot written by the previous format is refused with the version error.
#[test]
fn an_old_format_snapshot_is_refused_with_the_version() {
    let s = scene(
        "old.ron",
        "(name: \"old\", seed: 5, simulation: (frames: 2), chains: (columns: 2, rows: 2, links: 3))",
    );
    let snap = temp("old.snap");
    let snap = snap.to_str().unwrap();
    ok(&["run", &s, "--save", snap]);
    let mut bytes = std::fs::read(snap).unwrap();
    // The version follows the 8 magic bytes; the checksum covers only the payload.
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    std::fs::write(snap, bytes).unwrap();
    assert_eq!(
        refusal(&["run", &s, "--resume", snap]),
        format!("error: {snap}: snapshot format version 1 is not supported (this build reads version 2)")
    );
}

/// Bincode varints of huge values: u16, u32 and u64 markers followed by all-ones bytes.
const HUGE: [&[u8]; 3] = [
    &[251, 0xFF, 0xFF],
    &[252, 0xFF, 0xFF, 0xFF, 0x7F],
    &[253, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
];

/// Reproduction: of 300 checksum-valid snapshots with a crafted count, 6 aborted the
/// resume allocating 25 to 51 GB. Here a huge count is written at a hundred places in
/// the snapshot of each kind of scene (particles, a growing colonization, terrain,
/// grass with live blades), resealed, and loaded: each loads or is refused, and none
/// panics or aborts. (What a load may allocate is measured in
/// runtime/tests/snapshot_memory.rs.)
#[test]
fn crafted_snapshots_of_real_scenes_load_or_are_refused() {
    use sylva::runtime::framed::{Frame, HEADER_LEN};
    let frame = Frame {
        magic: *b"SYLVASNP",
        version: sylva::runtime::snapshot::FORMAT_VERSION,
    };
    let scenes = [
        ("(name: \"rates\", seed: 5, chains: (columns: 3, rows: 2, links: 4))", 3),
        (
            r#"(name: "sapling", seed: 4,
            colonize: (
                regions: [(shape: Sphere(centre: (0.0, 0.0, 300.0), radius: 200.0))],
                count: 60, influence_radius: 120.0, kill_distance: 30.0, step: 15.0,
                iterations: 200, iterations_per_step: 1,
            ))"#,
            3,
        ),
        ("(name: \"plot\", seed: 3, terrain: (size: 8))", 3),
        (
            r#"(name: "lawn", seed: 2,
            grass: (
                species: [(blade: Preset("blade2"), scatter: (count: 5, min_distance: 0.05, min: (-2.0, -2.0), max: (2.0, 2.0)))],
                bake: (cells: 4, frames: 4, record_every: 4, max_warmup_seconds: 0.5),
                wind: (winds: [(seed: 1, power_offset: 1.0, power_amplitude: 2.0, frequency: 0.5, deviation: 1.0)]),
                pushers: [(walk: Orbit(center: (0.0, 0.0), radius: 1.0), radius: 0.3)],
            ))"#,
            20,
        ),
    ];
    for (k, (text, frames)) in scenes.into_iter().enumerate() {
        let scene = sylva::Scene::from_str(text, "crafted.ron").unwrap();
        let mut app = sylva::build(&scene, 1).unwrap();
        sylva::simulate(&mut app, frames, 4, |_| {});
        let path = temp(&format!("real-{k}.snap"));
        app.save_snapshot(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let schema = u64::from_le_bytes(good[12..20].try_into().unwrap());
        let payload = &good[HEADER_LEN..];
        let stride = (payload.len() / 100).max(1);
        let (mut loaded, mut refused) = (0, 0);
        for i in (0..payload.len()).step_by(stride) {
            for huge in HUGE {
                let mut crafted = payload[..i].to_vec();
                crafted.extend_from_slice(huge);
                crafted.extend_from_slice(payload.get(i + huge.len()..).unwrap_or_default());
                let crafted_path = temp(&format!("real-{k}-crafted.snap"));
                std::fs::write(&crafted_path, frame.seal(schema, &crafted)).unwrap();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| app.load_snapshot(&crafted_path)));
                match r {
                    Ok(Ok(())) => loaded += 1,
                    Ok(Err(_)) => refused += 1,
                    Err(_) => panic!("scene {k}: load panicked with a huge count at payload byte {i}"),
                }
            }
        }
        assert!(
            loaded > 0 && refused > 0,
            "scene {k}: {loaded} loaded, {refused} refused"
        );
    }
}
