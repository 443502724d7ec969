//! `sylva bake` as a cluster runs it: shards in separate processes, in any
//! order, one killed midway and rerun, give the same store bytes as one
//! process; a finished shard rerun writes nothing; `--verify` finds a corrupt
//! or missing file and a rerun redoes it; a flight over the baked region reads
//! every chunk from the store and sees the chunks a generating flight sees.
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use support::sylva;
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
    // A store of an older chunk format is refused by name, for baking and verifying alike,
    // and none of its files is read or replaced.
    let manifest = store.join("sylva-store.json");
    let current = std::fs::read_to_string(&manifest).unwrap();
    let version = format!("\"data_version\": {}", sylva::systems::world::DATA_VERSION);
    assert!(current.contains(&version), "{current}");
    std::fs::write(&manifest, current.replace(&version, "\"data_version\": 4")).unwrap();
    let before = files(&store);
    for mut run in [bake(&scene, "0,0,0,0", &store, &[]), verify(&scene, "0,0,0,0", &store)] {
        let out = run.output().unwrap();
        assert!(!out.status.success());
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let named = format!(
            "baked with chunk data version 4; this Sylva reads version {}",
            sylva::systems::world::DATA_VERSION
        );
        assert!(said.contains(&named), "{said}");
    }
    assert_eq!(files(&store), before, "the old store is left as it was");
    std::fs::write(&manifest, current).unwrap();
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

/// `c`'s output, or a failed test (the child killed) if it runs past a minute: a
/// reader that opens a FIFO would wait for a writer forever.
fn within_a_minute(c: &mut Command) -> Output {
    within(c, Duration::from_secs(60))
}

fn within(c: &mut Command, limit: Duration) -> Output {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{c:?}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A baked one-chunk region of the small world in `store`, and its chunk file.
fn one_chunk_store(dir: &Path, store: &Path) -> (PathBuf, PathBuf) {
    let scene = small_world(dir);
    ok(bake(&scene, "0,0,0,0", store, &[]));
    let chunk = store.join(format!("{:016x}.chunk", world_of(&scene).cache_key([0, 0])));
    assert!(chunk.is_file());
    (scene, chunk)
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_link_to_a_device_in_a_store_is_corrupt_never_read() {
    use std::os::unix::fs::FileTypeExt;
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (scene, chunk) = one_chunk_store(tmp.path(), &store);
    std::fs::remove_file(&chunk).unwrap();
    assert!(Command::new("mkfifo").arg(&chunk).status().unwrap().success());
    let out = within_a_minute(&mut verify(&scene, "0,0,0,0", &store));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("a FIFO, not a regular file"), "{}", text(&out));
    let out = within_a_minute(&mut bake(&scene, "0,0,0,0", &store, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("1 corrupt file redone"), "{}", text(&out));
    assert!(
        std::fs::symlink_metadata(&chunk).unwrap().is_file(),
        "made again beside it"
    );

    std::fs::remove_file(&chunk).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &chunk).unwrap();
    let out = within_a_minute(&mut verify(&scene, "0,0,0,0", &store));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("a symbolic link, not a regular file"),
        "{}",
        text(&out)
    );
    let out = within_a_minute(&mut bake(&scene, "0,0,0,0", &store, &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        std::fs::symlink_metadata(&chunk).unwrap().is_file(),
        "the link replaced, not followed"
    );
    assert!(std::fs::metadata("/dev/zero").unwrap().file_type().is_char_device());
    ok(verify(&scene, "0,0,0,0", &store));
}

#[cfg(unix)]
#[test]
fn a_damaged_manifest_is_refused_never_read_whole_nor_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (scene, _) = one_chunk_store(tmp.path(), &store);
    let manifest = store.join(MANIFEST);
    let good = std::fs::read(&manifest).unwrap();
    type Damage = fn(&Path, &[u8]);
    let damages: [(&str, Damage); 3] = [
        ("cut short", |m, good| {
            std::fs::write(m, &good[..good.len() / 2]).unwrap()
        }),
        // Sparse: 1.5 GB that take no disk, and that a reader must not load.
        ("1.5 GB", |m, _| {
            std::fs::File::create(m).unwrap().set_len(1_500_000_000).unwrap();
        }),
        ("a link to /dev/zero", |m, _| {
            std::os::unix::fs::symlink("/dev/zero", m).unwrap()
        }),
    ];
    for (what, damage) in damages {
        std::fs::remove_file(&manifest).unwrap();
        damage(&manifest, &good);
        let before = std::fs::symlink_metadata(&manifest).unwrap();
        let mut readers = [
            verify(&scene, "0,0,0,0", &store),
            bake(&scene, "0,0,0,0", &store, &["--seed", "99"]),
            bake(&scene, "0,0,0,0", &store, &[]),
        ];
        for c in &mut readers {
            let out = within_a_minute(c);
            assert_eq!(out.status.code(), Some(1), "{what}: {c:?}: {}", text(&out));
            assert!(text(&out).contains("damaged store manifest"), "{what}: {}", text(&out));
        }
        let after = std::fs::symlink_metadata(&manifest).unwrap();
        assert_eq!(
            (after.len(), after.file_type()),
            (before.len(), before.file_type()),
            "{what}: the manifest is left as it was"
        );
    }
}

#[test]
fn a_region_across_the_i32_range_is_a_clean_error_before_any_file() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let store = tmp.path().join("store");
    let corners = "-2147483648,-2147483648,2147483647,2147483647";
    let mut terrain = sylva();
    terrain.arg("terrain").arg(&scene).args(["--region", corners]);
    let runs = [
        (bake(&scene, corners, &store, &[]), "at most 16777216 per bake"),
        (verify(&scene, corners, &store), "at most 16777216 per bake"),
        (terrain, "over the limit of 67108864"),
    ];
    for (mut c, why) in runs {
        let out = within_a_minute(&mut c);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{c:?} ended by {:?}: {}",
            out.status,
            text(&out)
        );
        assert!(text(&out).contains(why), "{c:?}: {}", text(&out));
    }
    assert!(!store.exists(), "a refused region leaves no store behind");
}

#[cfg(unix)]
#[test]
fn a_symlinked_staging_folder_is_refused_and_what_it_leads_to_survives() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (scene, chunk) = one_chunk_store(tmp.path(), &store);
    let outside = tmp.path().join("outside");
    let precious = outside.join("all-0-of-1").join("precious");
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::remove_file(&chunk).unwrap();
    let staging = store.join(".staging");
    // The staging root a link, then the writer's own folder a link.
    for (link, to) in [
        (staging.clone(), outside.clone()),
        (staging.join("all-0-of-1"), outside.join("all-0-of-1")),
    ] {
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&to, &link).unwrap();
        let out = within_a_minute(&mut bake(&scene, "0,0,0,0", &store, &[]));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let named = format!("{}: a symbolic link, not a directory Sylva made", link.display());
        assert!(text(&out).contains(&named), "{}", text(&out));
        assert!(precious.is_dir(), "the folder outside the store survives");
        std::fs::remove_file(&link).unwrap();
    }
    ok(bake(&scene, "0,0,0,0", &store, &[]));
    assert!(chunk.is_file() && precious.is_dir());
}

#[cfg(unix)]
#[test]
fn cache_write_failures_are_heard_counted_and_fail_an_asked_for_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let cache = tmp.path().join("cache");
    let report_path = tmp.path().join("fly.json");
    // A file size limit of 8 KiB: every chunk file (near 10 KB and more in this world) and
    // domain file (hundreds of kilobytes) fails to be written, as on a full disk, and the
    // 6 KB report is written.
    let mut fly = Command::new("sh");
    fly.arg("-c")
        .arg("ulimit -f 16 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_sylva"))
        .arg("fly")
        .arg(&scene)
        .args(["--no-render", "--speed", "10", "--seconds", "1", "--cache"])
        .arg(&cache)
        .arg("--report")
        .arg(&report_path);
    let out = within_a_minute(&mut fly);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("could not be written (first: ") && text(&out).contains("File too large"),
        "{}",
        text(&out)
    );
    let r = report(&report_path);
    let chunks = &r["streaming"]["chunks"];
    assert!(chunks["cache_write_failed"].as_u64().unwrap() > 0, "{chunks}");
    assert_eq!(chunks["cache_write_failed"], chunks["generated"], "{chunks}");
    assert!(r["streaming"]["domains"]["write_failed"].as_u64().unwrap() > 0, "{r}");
    let left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "no temporary file is left: {left:?}");
}

/// `view --cache` hears failed cache writes as `fly --cache` does: said once at the end and a
/// failure. Needs Xvfb and a Vulkan driver that presents to X11 (lavapipe will do); without
/// them the test says so and passes.
#[test]
fn view_hears_cache_write_failures_and_fails_an_asked_for_cache() {
    if !support::installed("Xvfb") {
        eprintln!("SKIPPED view_hears_cache_write_failures_and_fails_an_asked_for_cache: needs Xvfb");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let scene = small_world(tmp.path());
    let cache = tmp.path().join("cache");
    let (mut xvfb, display) = support::start_xvfb();
    // The file size limit of the flight's test: no chunk or domain file fits.
    let mut view = Command::new("sh");
    view.arg("-c")
        .arg("ulimit -f 16 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_sylva"))
        .arg("view")
        .arg(&scene)
        .args(["--frames", "120", "--cache"])
        .arg(&cache)
        .env("DISPLAY", &display);
    let out = within(&mut view, Duration::from_secs(300));
    let _ = xvfb.kill();
    let _ = xvfb.wait();
    if text(&out).contains(sylva::vk::NO_DRIVER_HINT) {
        eprintln!(
            "SKIPPED view_hears_cache_write_failures_and_fails_an_asked_for_cache: no Vulkan driver presenting to X11"
        );
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("cache {}: ", cache.display()))
            && text(&out).contains("could not be written (first: ")
            && text(&out).contains("File too large"),
        "{}",
        text(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_complete_store_bakes_read_only_without_writing() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (scene, chunk) = one_chunk_store(tmp.path(), &store);
    let baked = files(&store);
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o555)).unwrap();
    let writable = tempfile::tempfile_in(&store).is_ok();
    if writable {
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!(
            "SKIPPED a_complete_store_bakes_read_only_without_writing: a directory with mode 555 is still writable here (running as root)"
        );
        return;
    }
    let out = within_a_minute(&mut bake(&scene, "0,0,0,0", &store, &[]));
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("wrote 0 domains"), "{}", text(&out));
    assert!(text(&out).contains("and 0 chunks"), "{}", text(&out));
    assert_eq!(files(&store), baked, "nothing written");
    assert!(chunk.is_file());
}

#[test]
fn verify_lists_what_killed_writers_left() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let (scene, _) = one_chunk_store(tmp.path(), &store);
    let beside = store.join(".sylva-AbC123.tmp");
    let staged = store.join(".staging").join("all-0-of-2").join(".sylva-XyZ789.tmp");
    std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
    std::fs::write(&beside, b"part").unwrap();
    std::fs::write(&staged, b"part").unwrap();
    let report_path = tmp.path().join("verify.json");
    let out = ok(verify(&scene, "0,0,0,0", &store).arg("--report").arg(&report_path));
    assert!(text(&out).contains("2 left by killed writers"), "{}", text(&out));
    let listed: Vec<String> = report(&report_path)["verify"]["leftovers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = [&staged, &beside].iter().map(|p| p.display().to_string()).collect();
    assert_eq!(listed, expected);
}

/// A second run of the same shard (a retried job whose first run still goes on) is refused
/// while the first holds the shard's lock, naming who holds it; other shards bake beside it,
/// and the shard bakes once the first run ends.
#[test]
fn a_second_writer_of_one_shard_is_refused_while_the_first_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (scene, store) = (small_world(tmp.path()), tmp.path().join("store"));
    let first = sylva::systems::world::create_store(&store, &world_of(&scene), "all-0-of-2").unwrap();
    let second = bake(&scene, "0,0,1,0", &store, &["--shard", "0/2"]).output().unwrap();
    assert!(!second.status.success(), "a second writer of shard 0/2 ran");
    let said = text(&second);
    let holder = format!("process {}", std::process::id());
    assert!(
        said.contains("another bake of this shard is writing the store") && said.contains(&holder),
        "{said}"
    );
    ok(bake(&scene, "0,0,1,0", &store, &["--shard", "1/2"]));
    first.finish().unwrap();
    ok(bake(&scene, "0,0,1,0", &store, &["--shard", "0/2"]));
    assert!(
        !store.join(".staging").exists(),
        "finished writers leave no staging folder"
    );
}

/// A shard killed and never rerun leaves its staging folder; the next bake of the store
/// removes it once it can take that writer's lock (nobody runs it), and leaves a running
/// writer's folder alone.
#[test]
fn staging_folders_of_ended_writers_are_swept_and_running_ones_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (scene, store) = (small_world(tmp.path()), tmp.path().join("store"));
    let world = world_of(&scene);
    let running = sylva::systems::world::create_store(&store, &world, "all-1-of-3").unwrap();
    let running_tmp = store.join(".staging/all-1-of-3/.sylva-Run123.tmp");
    std::fs::write(&running_tmp, b"part").unwrap();
    // A killed writer: its folder and lock file stay, its lock ends with its process.
    let killed = sylva::systems::world::create_store(&store, &world, "all-2-of-3").unwrap();
    let killed_tmp = store.join(".staging/all-2-of-3/.sylva-Dead45.tmp");
    std::fs::write(&killed_tmp, b"part").unwrap();
    drop(killed);
    ok(bake(&scene, "0,0,2,0", &store, &["--shard", "0/3"]));
    assert!(
        !killed_tmp.exists() && !store.join(".staging/all-2-of-3").exists(),
        "the ended writer's files stay"
    );
    assert!(running_tmp.exists(), "a running writer's file was removed");
    drop(running);
}
