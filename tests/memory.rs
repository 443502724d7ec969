//! A scene's memory is estimated before it is spent: one over the limit is
//! refused with an error at the field that costs the most, in its file, with
//! the estimate of every part; a forest is checked once its variants are grown,
//! before its segments are spawned.
mod support;

use sylva::memory::{self, MemoryLimit, estimate};
use sylva::{BuildError, Scene, SceneError};

fn refused(scene: &Scene, limit: MemoryLimit) -> SceneError {
    match sylva::build_within(scene, 1, limit) {
        Err(BuildError::Scene(e)) => e,
        Err(e) => panic!("not a scene error: {e}"),
        Ok(_) => panic!("the scene builds"),
    }
}

#[test]
fn a_terrain_too_large_for_the_limit_is_refused_at_its_size() {
    // Valid field by field (the reproduction), about 158 GiB in all.
    let text = "(\n  terrain: (\n    size: 8192,\n    chunks: (2, 2),\n    max_layers: 32,\n  ),\n)";
    let scene = Scene::from_str(text, "big.ron").unwrap();
    let total = estimate(&scene).total();
    assert!(total > 100 << 30, "{total}");
    let e = refused(&scene, MemoryLimit::bytes(8 << 30));
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_deref()),
        ("big.ron", 3, Some("terrain.size")),
        "{e}"
    );
    assert!(e.message.contains("over the memory limit of 8.0 GiB"), "{e}");
    assert!(e.message.contains("8192² cells × 2 × 2 chunks × 32 layer slots"), "{e}");
}

/// `scene` with every species' module limit at 20,000: its grammars derive a few thousand
/// modules, and the words of the default limit would not fit the tight limits of a test
/// aimed at another part (see `a_module_limit_whose_words_would_not_fit_is_refused_before_deriving`).
fn small_module_limits(mut scene: Scene) -> Scene {
    let forest = scene.forest.iter_mut().flat_map(|f| &mut f.species);
    let world = scene
        .world
        .iter_mut()
        .flat_map(|w| w.trees.iter_mut().map(|t| &mut t.species));
    for l in forest.chain(world).filter_map(|s| s.lsystem.as_mut()) {
        l.module_limit = 20_000;
    }
    scene
}

#[test]
fn a_forest_is_refused_after_growing_and_before_spawning() {
    let scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/forest.ron").as_ref()).unwrap();
    let scene = small_module_limits(scene);
    let before = estimate(&scene).total();
    // Room for the terrain and the grown variants, not for 1,200 trees' segments.
    let e = refused(&scene, MemoryLimit::bytes(before + (1 << 20)));
    assert_eq!(e.field.as_deref(), Some("forest.placement.count"), "{e}");
    assert!(e.message.contains("1200 trees with"), "{e}");
    assert!(e.line > 0);
    assert!(sylva::build_within(&scene, 1, MemoryLimit::bytes(before + (1 << 30))).is_ok());
}

#[test]
fn grass_counts_its_blades_and_its_bakes() {
    let scene = Scene::load(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/meadow.ron").as_ref()).unwrap();
    let e = estimate(&scene);
    let part = |f: &str| e.parts.iter().find(|p| p.field == f).map(|p| p.bytes);
    assert_eq!(part("grass.species[0].scatter.count"), Some(120_000 * 140));
    assert!(part("grass.species[0].bake").is_some_and(|b| b > 0));
    let mut many = scene.clone();
    let g = many.grass.as_mut().unwrap();
    let species = g.species[0].clone();
    g.species = vec![species; 100];
    for s in &mut g.species {
        s.scatter.count = 1_000_000;
    }
    let e = refused(&many, MemoryLimit::bytes(4 << 30));
    assert!(
        e.field.as_deref().is_some_and(|f| f.starts_with("grass.species[")),
        "{e}"
    );
}

#[test]
fn the_bundled_scenes_fit_a_small_machine() {
    for name in ["world.ron", "forest.ron", "meadow.ron", "valley.ron", "chains.ron"] {
        let path = format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR"));
        let scene = Scene::load(path.as_ref()).unwrap();
        let total = estimate(&scene).total();
        assert!(total < 2 << 30, "{name}: {total} bytes");
        for d in memory::derivations(&scene) {
            assert!(d.bytes() < 1 << 30, "{name}: {} {} bytes", d.field, d.bytes());
        }
    }
}

#[test]
fn the_cli_takes_a_limit_and_refuses_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("t.ron");
    std::fs::write(&scene, "(\n  terrain: (size: 1024, max_layers: 8),\n)").unwrap();
    let run = |limit: &str| {
        support::sylva()
            .args(["run", scene.to_str().unwrap(), "--frames", "1", "--memory-limit", limit])
            .output()
            .unwrap()
    };
    let out = run("64M");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("t.ron:2:") && err.contains("terrain.size") && err.contains("0.1 GiB"),
        "{err}"
    );
    assert!(run("1G").status.success());
    assert!(run("none").status.success());
    let out = run("lots");
    assert!(String::from_utf8_lossy(&out.stderr).contains("512M or 8G"));
}

/// Bytes of drawn trees per resident chunk of the bundled world in chunks of 64 m (so it
/// streams quickly: the estimate is per area), settled around each of its flight's waypoints
/// in turn, `rules` or not; and the estimate per resident chunk.
fn world_trees_measured(rules: bool) -> (Vec<u64>, u64) {
    use sylva::memory::WORLD_TREE;
    use sylva::runtime::glam::Vec3;
    use sylva::runtime::stream::Viewer;
    use sylva::systems::ecology::Biome;
    use sylva::systems::placement::Rules;
    use sylva::systems::world::{WorldBatch, WorldState};
    let mut scene = Scene::world();
    let w = scene.world.as_mut().unwrap();
    w.chunk_cells = 64;
    w.load_radius = 5.0 * w.chunk_size();
    w.evict_radius = 5.5 * w.chunk_size();
    w.near_radius = None;
    if let Some(b) = &mut w.terrain.basins {
        b.domain_chunks = 64;
    }
    if !rules {
        for t in &mut w.trees {
            t.placement.rules = Rules::default();
        }
        // One biome everywhere, the densest canopy's, without clearings: every chunk holds
        // what the estimate counts for its densest biome.
        let densest = (w.ecology.biomes.iter())
            .max_by(|a, b| {
                let sum = |b: &Biome| b.canopy.iter().map(|s| s.per_hectare).sum::<f32>();
                sum(a).total_cmp(&sum(b))
            })
            .unwrap()
            .clone();
        let names: Vec<String> = densest
            .canopy
            .iter()
            .chain(&densest.understory)
            .map(|s| s.species.clone())
            .collect();
        w.trees.retain(|t| names.contains(&t.species.name));
        w.ecology.biomes = vec![Biome {
            name: "everywhere".into(),
            rules: Vec::new(),
            clearings: None,
            ..densest
        }];
    }
    let w = w.clone();
    let mut built = sylva::build_within(&scene, 1, MemoryLimit::NONE).unwrap();
    let streamer = built.world.as_mut().unwrap();
    let part = memory::world_trees(&w, streamer.content());
    let mut measured = Vec::new();
    for &at in &w.flight.waypoints {
        let viewer = [Viewer {
            position: at,
            forward: Vec3::X,
        }];
        streamer.settle(&mut built.app, &viewer, |_| {});
        let res = &built.app.world.resources;
        let resident = res.get::<WorldState>().unwrap().resident() as u64;
        let batch = res.get::<WorldBatch>().unwrap();
        let trees: usize = batch.trees.iter().map(|t| t.len()).sum();
        measured.push(trees as u64 * WORLD_TREE / resident);
    }
    let estimated = (memory::trees_per_chunk(&w).iter().sum::<f64>() * WORLD_TREE as f64) as u64;
    eprintln!(
        "rules {rules}: {measured:?} bytes per chunk measured, {estimated} estimated; {}",
        part.what
    );
    (measured, estimated)
}

#[test]
fn a_world_counts_its_trees_per_resident_chunk() {
    // Without rules every candidate may stand: the estimate is the count, up to the spacing's
    // thinning (Matérn II in the estimate, hashed priorities over 3 × 3 chunks in the world),
    // the variants picked (their mean in the estimate), and ground that stands none (the
    // flight's last waypoint is mostly not land).
    let (measured, estimated) = world_trees_measured(false);
    let densest = *measured.iter().max().unwrap();
    let ratio = estimated as f64 / densest as f64;
    assert!(
        (0.85..1.25).contains(&ratio),
        "estimated {estimated}, measured {measured:?}"
    );
    assert!(
        measured.iter().filter(|&&m| m * 5 > estimated * 4).count() >= 3,
        "{measured:?}"
    );
    // With the bundled biomes and rules (regolith only, slope limits) trees stand densest in
    // forest cores, fewer elsewhere: the estimate, which cannot know the ground before it is
    // generated, counts every chunk at its densest biome, so it bounds what a chunk holds.
    let (measured, estimated) = world_trees_measured(true);
    let densest = *measured.iter().max().unwrap();
    assert!(densest > 0);
    assert!(estimated >= densest, "{estimated} < {densest}");
    // Forests cover a share of a mixed chunk, so the ceiling stands several times above it.
    assert!(estimated <= 12 * densest, "{estimated} > 12 × {densest}");
}

#[test]
fn a_world_is_refused_at_its_trees_once_they_are_grown() {
    let scene = small_module_limits(Scene::world());
    let before = estimate(&scene).total();
    // Room for the ground, not for the trees of every resident chunk and their models (a few
    // MB: the trees are drawn from their variants' models, 24 bytes a tree on the host). The
    // error names the largest part, which the ground is now.
    let e = refused(&scene, MemoryLimit::bytes(before + (1 << 20)));
    assert!(
        e.message.contains("world.trees (up to 32 resident chunks × about"),
        "{e}"
    );
    assert!(e.message.contains("trees drawn (24 bytes each)"), "{e}");
    assert!(sylva::build_within(&scene, 1, MemoryLimit::bytes(before + (64 << 20))).is_ok());
}

/// A tree whose grammar doubles its word every step (a line of segments), up to
/// `module_limit` modules.
fn doubling_tree(module_limit: u64, iterations: u32) -> String {
    format!(
        "(\n  tree: (\n    lsystem: (\n      grammar: \"axiom: A(1)\\nA(x) -> F(x)A(x)A(x)\",\n      iterations: {iterations},\n      module_limit: {module_limit},\n    ),\n  ),\n)"
    )
}

#[test]
fn a_module_limit_whose_words_would_not_fit_is_refused_before_deriving() {
    // 2²⁸ modules of one parameter: several GiB of words, derived for minutes before the
    // module limit would stop them.
    let scene = Scene::from_str(&doubling_tree(1 << 28, 40), "t.ron").unwrap();
    let started = std::time::Instant::now();
    let e = refused(&scene, MemoryLimit::bytes(1 << 30));
    assert!(started.elapsed().as_secs() < 5, "refused before deriving");
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_deref()),
        ("t.ron", 6, Some("tree.lsystem.module_limit")),
        "{e}"
    );
    let per_module = memory::WORD_MODULE + memory::WORD_PARAM;
    for part in [
        "a module limit of 268435456 lets the derivation's words take about".to_owned(),
        format!("({per_module} bytes per module of up to 1 parameter)"),
        "over the memory limit of 1.0 GiB".to_owned(),
        format!("a module limit of at most {} fits", (1u64 << 30) / per_module),
    ] {
        assert!(e.message.contains(&part), "{part}: {e}");
    }
    // Within the limit it derives (and stops at its module limit, a grammar error).
    let fits = Scene::from_str(&doubling_tree(1 << 20, 10), "t.ron").unwrap();
    assert!(sylva::build_within(&fits, 1, MemoryLimit::bytes(1 << 30)).is_ok());

    // A forest's and a world's species are held to it too, at their own module limit.
    let load = |name: &str| Scene::load(format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR")).as_ref()).unwrap();
    let mut forest = load("forest.ron");
    forest.forest.as_mut().unwrap().species[1]
        .lsystem
        .as_mut()
        .unwrap()
        .module_limit = 1 << 28;
    let e = refused(&forest, MemoryLimit::bytes(4 << 30));
    assert_eq!(
        e.field.as_deref(),
        Some("forest.species[1].lsystem.module_limit"),
        "{e}"
    );
    let mut world = Scene::world();
    world.world.as_mut().unwrap().trees[0]
        .species
        .lsystem
        .as_mut()
        .unwrap()
        .module_limit = 1 << 28;
    let e = refused(&world, MemoryLimit::bytes(4 << 30));
    assert_eq!(
        e.field.as_deref(),
        Some("world.trees[0].species.lsystem.module_limit"),
        "{e}"
    );
}

#[test]
fn the_cli_refuses_a_module_limit_over_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("t.ron");
    std::fs::write(&scene, doubling_tree(20_000_000, 5)).unwrap();
    let tree = |limit: &str| {
        support::sylva()
            .args(["tree", scene.to_str().unwrap(), "--memory-limit", limit])
            .output()
            .unwrap()
    };
    let out = tree("256M");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("t.ron:6:")
            && err.contains("tree.lsystem.module_limit")
            && err.contains("a module limit of 20000000"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing derived");
    let out = tree("2G");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
