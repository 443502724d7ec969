//! `sylva bake` as a cluster runs it: shards in separate processes, in any
//! order, one killed midway and rerun, give the same store bytes as one
//! process; a finished shard rerun writes nothing; `--verify` finds a corrupt
//! or missing file and a rerun redoes it; a flight over the baked region reads
//! every chunk from the store and sees the chunks a generating flight sees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use sylva::Scene;
use sylva::systems::world::{BakePlan, MANIFEST, Phase, Shard, WorldGen};

/// The bundled world with chunks of 64 cells and a small load radius, so a
/// test bakes and flies over a few dozen chunks.
fn small_world(dir: &Path) -> PathBuf {
    let mut text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/world.ron")).unwrap();
    for (from, to) in [
        ("chunk_cells: 256", "chunk_cells: 64"),
        ("load_radius: 640.0", "load_radius: 160.0"),
        ("evict_radius: 780.0", "evict_radius: 224.0"),
        ("domain_chunks: 16", "domain_chunks: 64"),
    ] {
        assert!(text.contains(from), "scenes/world.ron has no `{from}`");
        text = text.replace(from, to);
    }
    let path = dir.join("small-world.ron");
    std::fs::write(&path, text).unwrap();
    path
}

fn sylva() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sylva"));
    c.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
    c
}

fn bake(scene: &Path, region: &str, store: &Path, extra: &[&str]) -> Command {
    let mut c = sylva();
    c.arg("bake")
        .arg(scene)
        .args(["--region", region, "--out"])
        .arg(store)
        .args(extra);
    c
}

fn verify(scene: &Path, region: &str, store: &Path) -> Command {
    let mut c = sylva();
    c.arg("bake")
        .arg(scene)
        .args(["--region", region, "--verify"])
        .arg(store);
    c
}

fn ok(mut c: impl std::borrow::BorrowMut<Command>) -> Output {
    let c = c.borrow_mut();
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed:\n{}{}",
        c,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn report(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Every file under `dir` (relative path → bytes); directories alone do not count.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_owned(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

fn modified(dir: &Path) -> BTreeMap<PathBuf, SystemTime> {
    files(dir)
        .into_keys()
        .map(|p| {
            let t = std::fs::metadata(dir.join(&p)).unwrap().modified().unwrap();
            (p, t)
        })
        .collect()
}

fn assert_same_store(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "the stores hold the same files and nothing else"
    );
    for (name, bytes) in &fa {
        assert!(fb[name] == *bytes, "{} differs", name.display());
    }
}

/// The world of the scene at `path`.
fn world_of(path: &Path) -> WorldGen {
    let scene = Scene::load(path).unwrap();
    WorldGen::new(scene.world.unwrap(), scene.seed)
}

/// Runs `shard` of the bake of `region` into `store` and kills it (SIGKILL)
/// once one of its chunks is in place, checking that some are still missing.
fn kill_midway(scene: &Path, region: &str, store: &Path, shard: Shard) {
    let world = world_of(scene);
    let r: Vec<i32> = region.split(',').map(|v| v.parse().unwrap()).collect();
    let plan = BakePlan::new(&world, [r[0], r[1]], [r[2], r[3]], shard, Phase::All).unwrap();
    let mine: Vec<PathBuf> = plan
        .chunks
        .iter()
        .map(|&c| store.join(format!("{:016x}.chunk", world.cache_key(c))))
        .collect();
    assert!(mine.len() >= 5);
    let mut child = bake(scene, region, store, &["--shard", &shard.to_string(), "--threads", "1"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !mine.iter().any(|p| p.exists()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "shard {shard} ended before writing a chunk"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "shard {shard} wrote no chunk"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let written = mine.iter().filter(|p| p.exists()).count();
    assert!(
        written < mine.len(),
        "shard {shard} was killed midway ({written} of {} chunks)",
        mine.len()
    );
}

#[test]
fn shards_in_any_order_killed_and_rerun_give_the_bytes_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let (whole, sharded) = (tmp.path().join("whole"), tmp.path().join("sharded"));
    let region = "0,0,3,3";
    ok(bake(&scene, region, &whole, &[]));
    let names: BTreeSet<PathBuf> = files(&whole).into_keys().collect();
    assert!(names.contains(Path::new(MANIFEST)));
    assert!(names.len() > 17, "16 chunks, the manifest and at least one domain");

    // Shard 2 alone, killed once one of its chunks is in place.
    kill_midway(&scene, region, &sharded, Shard::new(2, 3).unwrap());

    // Shards 0 and 1 at once, then shard 2 again.
    let others: Vec<_> = ["0/3", "1/3"]
        .iter()
        .map(|s| {
            bake(&scene, region, &sharded, &["--shard", s, "--threads", "1"])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in others {
        assert!(c.wait().unwrap().success());
    }
    ok(bake(&scene, region, &sharded, &["--shard", "2/3"]));
    assert_same_store(&whole, &sharded);

    // A finished shard run again writes nothing.
    let before = modified(&sharded);
    let r = tmp.path().join("rerun.json");
    ok(bake(
        &scene,
        region,
        &sharded,
        &["--shard", "1/3", "--report", r.to_str().unwrap()],
    ));
    let b = &report(&r)["bake"];
    assert_eq!(
        (b["chunks"].as_u64(), b["domains"].as_u64(), b["bytes"].as_u64()),
        (Some(0), Some(0), Some(0))
    );
    assert!(b["skipped"].as_u64().unwrap() >= 5);
    assert_eq!(modified(&sharded), before, "no file was touched");
}

#[test]
fn verify_finds_corrupt_and_missing_files_and_a_rerun_redoes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let store = tmp.path().join("store");
    let region = "-1,-1,1,1";
    ok(bake(&scene, region, &store, &[]));
    let good = files(&store);
    let out = ok(verify(&scene, region, &store));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 missing, 0 corrupt"));

    let world = world_of(&scene);
    let (flip, gone) = ([0, 0], [1, -1]);
    let path = |c: [i32; 2]| store.join(format!("{:016x}.chunk", world.cache_key(c)));
    let mut bytes = std::fs::read(path(flip)).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(path(flip), bytes).unwrap();
    std::fs::remove_file(path(gone)).unwrap();
    let out = verify(&scene, region, &store).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "verify fails on a damaged store:\n{text}");
    assert!(
        text.contains("chunk (0, 0): corrupt: ") && text.contains("checksum"),
        "{text}"
    );
    assert!(text.contains("chunk (1, -1): missing"), "{text}");

    let r = tmp.path().join("redo.json");
    ok(bake(&scene, region, &store, &["--report", r.to_str().unwrap()]));
    let b = &report(&r)["bake"];
    assert_eq!((b["chunks"].as_u64(), b["redone"].as_u64()), (Some(2), Some(1)));
    assert_eq!(files(&store), good, "the rerun restored the same bytes");
}

#[test]
fn a_baked_store_must_hold_the_scenes_world() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let store = tmp.path().join("store");
    ok(bake(&scene, "0,0,0,0", &store, &[]));
    let out = bake(&scene, "0,0,0,0", &store, &["--seed", "99"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds world"));
    let out = bake(&scene, "0,0,0,0", &store, &["--shard-from-env", "4"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("JOB_COMPLETION_INDEX"));
    let out = bake(&scene, "0,0,0,0", &store, &["--shard-from-env", "4"])
        .env("SLURM_ARRAY_TASK_ID", "4")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--array=0-3"));
    let out = ok(bake(&scene, "0,0,0,0", &store, &["--shard-from-env", "2"]).env("JOB_COMPLETION_INDEX", "1"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("shard 1/2"));
}

#[test]
fn a_flight_over_a_baked_region_reads_every_chunk_from_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let scene_path = small_world(tmp.path());
    let scene = Scene::load(&scene_path).unwrap();
    let world = scene.world.clone().unwrap();
    // Every chunk within the load radius of a 10 m flight from the camera.
    let reach = world.load_radius + 20.0;
    let cell = |v: f32| (v / world.chunk_size()).floor() as i32;
    let p = scene.camera.position;
    let region = format!(
        "{},{},{},{}",
        cell(p.x - reach),
        cell(p.z - reach),
        cell(p.x + reach),
        cell(p.z + reach)
    );
    let store = tmp.path().join("store");
    ok(bake(&scene_path, &region, &store, &[]));
    let baked = files(&store);
    let fly = |cache: Option<&Path>, report: &Path| {
        let mut c = sylva();
        c.arg("fly")
            .arg(&scene_path)
            .args(["--no-render", "--speed", "10", "--seconds", "1", "--report"]);
        c.arg(report);
        if let Some(dir) = cache {
            c.arg("--cache").arg(dir);
        }
        ok(c);
        report.to_owned()
    };
    let from_store = report(&fly(Some(&store), &tmp.path().join("store.json")));
    let generated = report(&fly(None, &tmp.path().join("gen.json")));
    let chunks = &from_store["streaming"]["chunks"];
    assert!(chunks["installed"].as_u64().unwrap() >= 25, "{chunks}");
    assert_eq!(chunks["from_cache"], chunks["installed"], "{chunks}");
    assert_eq!(chunks["generated"].as_u64(), Some(0), "{chunks}");
    let domains = &from_store["streaming"]["domains"];
    assert_eq!(domains["solved"].as_u64(), Some(0), "{domains}");
    let hashes = |r: &Value| r["streaming"]["chunk_hashes"].clone();
    assert_eq!(
        hashes(&from_store),
        hashes(&generated),
        "the same chunks, baked or generated"
    );
    assert_eq!(files(&store), baked, "a reader never writes into a baked store");
}

#[test]
fn the_domains_a_chunk_reads_are_the_ones_a_plan_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let world = world_of(&small_world(tmp.path()));
    // A chunk on a domain border reads several domains; one inland reads one.
    let coords = [[0, 0], [-40, 17], [31, 31], [5, -60]];
    let mut several = false;
    for c in coords {
        let fresh = WorldGen::new(world.params().clone(), 1);
        let listed = fresh.domains_under(c, c);
        fresh.chunk(c);
        let d = fresh.domains().unwrap().counts();
        assert_eq!(d.solved as usize, listed.len(), "chunk {c:?}: {listed:?}");
        several |= listed.len() > 1;
    }
    assert!(several, "one of the chunks lies on a domain border");
}
