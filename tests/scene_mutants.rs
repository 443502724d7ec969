//! The scene-mutation fuzzer as a property test (docs/design/limits.md, "Nothing trusted"): every
//! bundled scene with some of its numbers replaced by extreme values reads as a scene or as an
//! error with a line, never a panic or a stall, and whatever reads passes the limits that keep
//! building bounded (checked here rather than by building: a mutant may legitimately ask for
//! minutes of work within them).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use sylva::systems::colonize::{self, ColonizeParams, Shape};
use sylva::systems::grass::{self, BakeSettings};
use sylva::systems::lsystem;
use sylva::{BladeSource, Scene};

/// What a mutated number becomes: the fuzzer's extremes (no NaN, which RON reads as a float
/// that validation already refuses everywhere).
const EXTREMES: [&str; 12] = [
    "0",
    "-1",
    "2",
    "0.5",
    "1e-30",
    "65535",
    "4294967295",
    "18446744073709551615",
    "1e12",
    "-1e12",
    "3e38",
    "-3e38",
];

/// Reading one mutant may take at most this long (derivations of blade grammars included).
const READ_BUDGET: Duration = Duration::from_secs(2);

/// A bundled scene: its path and text, and where its numbers are (byte ranges).
struct SceneText {
    path: PathBuf,
    text: String,
    numbers: Vec<(usize, usize)>,
}

fn scene_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scene_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ron") {
            out.push(path);
        }
    }
}

fn scenes() -> &'static [SceneText] {
    static SCENES: OnceLock<Vec<SceneText>> = OnceLock::new();
    SCENES.get_or_init(|| {
        let mut files = Vec::new();
        scene_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes"), &mut files);
        files.sort();
        files
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).unwrap();
                let numbers = numbers(&text);
                SceneText { path, text, numbers }
            })
            .filter(|s| !s.numbers.is_empty())
            .collect()
    })
}

/// The byte ranges of the numeric literals of `text` (in grammars too), outside `//` comments
/// and not inside names (`fig5_1a`, `blade2`).
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            i += b[i..].iter().position(|&c| c == b'\n').unwrap_or(b.len() - i);
            continue;
        }
        let name_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'.'));
        let digit_at = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
        let start = i;
        let mut k = i + usize::from(b[i] == b'-');
        if name_before || !digit_at(k) {
            i += 1;
            continue;
        }
        while digit_at(k) || b.get(k) == Some(&b'.') {
            k += 1;
        }
        if matches!(b.get(k), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(b.get(k + 1), Some(b'+' | b'-')));
            if digit_at(k + 1 + sign) {
                k += 1 + sign;
                while digit_at(k) {
                    k += 1;
                }
            }
        }
        out.push((start, k));
        i = k;
    }
    out
}

/// `text` with the numbers at `picks` (indices into `numbers`) replaced by `values`.
fn mutate(scene: &SceneText, picks: &[(usize, &str)]) -> String {
    let mut spans: Vec<((usize, usize), &str)> = picks
        .iter()
        .map(|&(pick, value)| (scene.numbers[pick % scene.numbers.len()], value))
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0.0));
    spans.dedup_by_key(|s| s.0);
    let mut text = scene.text.clone();
    for ((start, end), value) in spans {
        text.replace_range(start..end, value);
    }
    text
}

fn shape_within(shape: &Shape) -> bool {
    let m = colonize::MAX_COORDINATE;
    let point = |p: sylva::runtime::glam::Vec3| p.is_finite() && p.abs().max_element() <= m;
    let length = |v: f32| v > 0.0 && v <= m;
    match *shape {
        Shape::Sphere { centre, radius } => point(centre) && length(radius),
        Shape::Cylinder { base, radius, height } | Shape::Cone { base, radius, height } => {
            point(base) && length(radius) && length(height)
        }
        Shape::Box { min, max } => point(min) && point(max),
    }
}

fn colonize_bounded(c: &ColonizeParams) -> Result<(), String> {
    let shapes = c.regions.iter().map(|r| &r.shape).chain(&c.exclusions);
    for s in shapes {
        if !shape_within(s) {
            return Err(format!("shape {s:?} past ±{}", colonize::MAX_COORDINATE));
        }
    }
    let lengths = [c.influence_radius, c.kill_distance, c.step, c.crown_gap];
    if lengths.iter().any(|&v| v.is_nan() || v > colonize::MAX_COORDINATE) || c.iterations > colonize::MAX_ITERATIONS {
        return Err(format!("colonize lengths {lengths:?}, iterations {}", c.iterations));
    }
    match c
        .roots
        .iter()
        .find(|r| !r.is_finite() || r.abs().max_element() > colonize::MAX_COORDINATE)
    {
        Some(r) => Err(format!("root {r}")),
        None => Ok(()),
    }
}

fn bake_bounded(b: &BakeSettings) -> Result<(), String> {
    let cells = u64::from(b.cells).pow(2);
    let ok = b.frames <= grass::MAX_BAKE_FRAMES
        && b.record_every <= grass::MAX_RECORD_EVERY
        && cells * u64::from(b.frames) <= grass::MAX_BAKE_TEXELS
        && cells * u64::from(b.instances) <= grass::MAX_BAKE_BLADES
        && b.max_warmup_seconds <= grass::MAX_WARMUP_SECONDS;
    if ok { Ok(()) } else { Err(format!("bake {b:?}")) }
}

/// The limits (docs/design/limits.md) that a scene which reads must keep.
fn bounded(scene: &Scene) -> Result<(), String> {
    if let Some(t) = &scene.tree
        && t.lsystem.iterations > lsystem::MAX_ITERATIONS
    {
        return Err(format!("tree iterations {}", t.lsystem.iterations));
    }
    let forest = scene.forest.iter().flat_map(|f| &f.species);
    let world_trees = scene.world.iter().flat_map(|w| &w.trees).map(|t| &t.species);
    let species = forest.chain(world_trees).filter_map(|s| s.colonize.as_ref());
    for c in scene.colonize.iter().chain(species) {
        colonize_bounded(c)?;
    }
    if let Some(g) = &scene.grass {
        bake_bounded(&g.bake)?;
        for sp in &g.species {
            if let BladeSource::Grammar { iterations, .. } = sp.blade
                && iterations > grass::MAX_BLADE_ITERATIONS
            {
                return Err(format!("blade iterations {iterations}"));
            }
        }
    }
    if let Some(w) = &scene.world {
        bake_bounded(&w.grass.bake)?;
        if let Some(sp) = w
            .grass
            .species
            .iter()
            .find(|s| s.iterations > grass::MAX_BLADE_ITERATIONS)
        {
            return Err(format!("world blade iterations {}", sp.iterations));
        }
        if w.threads as usize > sylva::runtime::MAX_THREADS {
            return Err(format!("world threads {}", w.threads));
        }
    }
    Ok(())
}

#[test]
fn the_scanner_finds_the_numbers_of_a_scene() {
    let text = "(\n  name: \"fig5_1a\", // 12 in a comment\n  seed: 7, x: -1.5e-3, y: (0.0, 10), g: r#\"F(50)\"#)";
    let found: Vec<&str> = numbers(text).into_iter().map(|(a, b)| &text[a..b]).collect();
    assert_eq!(found, ["7", "-1.5e-3", "0.0", "10", "50"]);
    assert!(scenes().len() > 20, "{} scenes with numbers", scenes().len());
}

proptest! {
    // Fixed: CI pins the seed (PROPTEST_RNG_SEED), so every run reads the same mutants.
    #![proptest_config(ProptestConfig { cases: 4000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_scenes_read_or_fail_at_a_line_within_the_limits(
        scene in any::<prop::sample::Index>(),
        picks in prop::collection::vec((any::<usize>(), prop::sample::select(&EXTREMES[..])), 1..4),
    ) {
        let scene = &scenes()[scene.index(scenes().len())];
        let text = mutate(scene, &picks);
        let label = scene.path.display().to_string();
        let started = Instant::now();
        let read = Scene::from_str(&text, &label);
        prop_assert!(started.elapsed() < READ_BUDGET, "{label}: read in {:?}\n{text}", started.elapsed());
        match read {
            Err(e) => prop_assert!(e.line > 0 && e.column > 0, "{e}\n{text}"),
            Ok(s) => {
                let limits = bounded(&s);
                prop_assert!(limits.is_ok(), "{label}: {:?}\n{text}", limits);
            }
        }
    }
}

/// Every number of every bundled scene, once, set to every extreme: 18,000 mutants read in well
/// under a second, so the single mutations are checked exhaustively and the property above
/// samples combinations.
#[test]
fn every_single_mutant_reads_or_fails_at_a_line_within_the_limits() {
    let mut mutants = 0;
    for scene in scenes() {
        let label = scene.path.display().to_string();
        for pick in 0..scene.numbers.len() {
            for value in EXTREMES {
                let text = mutate(scene, &[(pick, value)]);
                let started = Instant::now();
                let read = Scene::from_str(&text, &label);
                assert!(
                    started.elapsed() < READ_BUDGET,
                    "{label}: number {pick} = {value}: {:?}",
                    started.elapsed()
                );
                match read {
                    Err(e) => assert!(e.line > 0 && e.column > 0, "{e}"),
                    Ok(s) => {
                        if let Err(m) = bounded(&s) {
                            panic!("{label}: number {pick} = {value} reads past a limit: {m}");
                        }
                    }
                }
                mutants += 1;
            }
        }
    }
    assert!(mutants > 10_000, "{mutants}");
}
