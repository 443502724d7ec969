//! Forest scenes: many species placed by Poisson-disk scattering, deterministic, on terrain by
//! the rules, with clear errors.

mod support;

use std::path::Path;

use sylva::Scene;
use sylva::runtime::extract::TreeAnchor;
use sylva::runtime::glam::Vec3;
use sylva::systems::placement::forest::ForestStats;
use sylva::systems::tree::{Segment, Tree, TreeBatch, TreeMember};

fn tree_positions(app: &sylva::runtime::App) -> Vec<[f32; 3]> {
    let mut q = app.world.entities.query::<&Tree>();
    let mut out: Vec<[f32; 3]> = q.iter().map(|t| t.position.to_array()).collect();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

#[test]
fn the_forest_scene_places_over_a_thousand_mixed_trees() {
    let scene = Scene::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/forest.ron"))).unwrap();
    let forest = scene.forest.as_ref().unwrap();
    assert!(forest.placement.count >= 1000);
    assert!(forest.species.iter().any(|s| s.lsystem.is_some()));
    assert!(forest.species.iter().any(|s| s.colonize.is_some()));
    let app = sylva::build(&scene, 2).unwrap();
    let stats = app.world.resources.get::<ForestStats>().unwrap().clone();
    assert!(stats.trees >= 1000, "{} trees", stats.trees);
    assert_eq!(stats.per_species.iter().sum::<usize>(), stats.trees);
    assert!(stats.per_species.iter().all(|&n| n > 100), "{:?}", stats.per_species);
    assert_eq!(app.world.entities.query::<&Tree>().iter().count(), stats.trees);
    assert_eq!(app.world.entities.query::<&Segment>().iter().count(), stats.segments);
    // Poisson-disk spacing between the roots.
    let roots = tree_positions(&app);
    let d = forest.placement.min_distance;
    for (i, a) in roots.iter().enumerate() {
        for b in &roots[i + 1..] {
            let dist = ((a[0] - b[0]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            assert!(dist > d, "{a:?} and {b:?} are {dist} m apart");
        }
    }
    // Same forest on one thread.
    let one = sylva::build(&scene, 1).unwrap();
    assert_eq!(tree_positions(&one), roots);
    assert_eq!(one.state_hash().unwrap(), app.state_hash().unwrap());
}

/// A small forest on eroded-free terrain: a ramp of granite under sand.
const ON_TERRAIN: &str = r#"(
    seed: 4,
    terrain: (
        size: 64,
        generator: (
            height: Plane(base: 0.0, slope: (0.5, 0.0)),
            layers: [(material: Granite, thickness: Share(0.7)), (material: Sand, thickness: Share(0.3))],
        ),
    ),
    forest: (
        species: [
            (colonize: (count: 200, iterations: 10, regions: [(shape: Sphere(centre: (0.0, 0.0, 600.0), radius: 200.0))])),
        ],
        placement: (
            count: 500,
            min_distance: 2.0,
            min: (0.0, 0.0),
            max: (64.0, 64.0),
            rules: (height: (5.0, 20.0)),
        ),
    ),
)"#;

#[test]
fn trees_on_terrain_follow_the_height_rule() {
    let scene = Scene::from_str(ON_TERRAIN, "terrain_forest.ron").unwrap();
    let app = sylva::build(&scene, 2).unwrap();
    let roots = tree_positions(&app);
    assert!(roots.len() > 20, "{} trees", roots.len());
    for r in &roots {
        assert!((5.0..=20.0).contains(&r[1]), "root {r:?} outside the height range");
        assert!(
            r[0] >= 9.0 && r[0] <= 41.0,
            "root {r:?}: the ramp is 5–20 m high only there"
        );
    }
}

#[test]
fn forest_errors_name_the_field_and_line() {
    let both = "(\n  forest: (\n    species: [\n      (lsystem: (), colonize: ()),\n    ],\n  ),\n)";
    let e = Scene::from_str(both, "both.ron").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("forest.species[0].lsystem"));
    assert_eq!(e.line, 4);
    let unknown = "(\n  forest: (\n    species: [(colonize: (), leaves: 3)],\n  ),\n)";
    let e = Scene::from_str(unknown, "unknown.ron").unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.to_string().contains("leaves"), "{e}");
    let empty = "(forest: (species: []))";
    let e = Scene::from_str(empty, "empty.ron").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("forest.species"));
    let bad_distance = "(forest: (species: [(colonize: ())], placement: (min_distance: -1.0)))";
    let e = Scene::from_str(bad_distance, "bad.ron").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("forest.placement.min_distance"));
}

#[test]
fn single_tree_scenes_still_load_and_have_no_forest() {
    for name in [
        "scenes/thesis/fig2_6a.ron",
        "scenes/thesis/fig5_11a.ron",
        "scenes/chains.ron",
    ] {
        let scene = Scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap();
        assert!(scene.forest.is_none(), "{name}");
    }
}

#[test]
fn tree_command_grows_colonization_scenes_and_reports_the_run() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let report = dir.join("report.json");
    let glb = dir.join("tree.glb");
    let out = support::sylva()
        .args([
            "tree",
            concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig5_11a.ron"),
            "--export",
            glb.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&glb).unwrap().len() > 1000);
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let c = &r["tree"]["colonize"];
    assert_eq!(c["attractors"], 5000);
    let left = c["attractors_left"].as_u64().unwrap();
    assert!(left < 5000);
    assert!(c["iterations"].as_u64().unwrap() > 10);
    assert!(c["nodes"].as_u64().unwrap() > 1000);
    assert!(c["termination"].is_string());
    assert!(c["grow_ms"].as_f64().unwrap() > 0.0);
    assert!(r["tree"]["segments"].as_u64().unwrap() > 100);
    assert_eq!(r["tree"]["modules"], 0);
}

const GROWING: &str = r#"(
    seed: 6,
    colonize: (
        regions: [(shape: Sphere(centre: (0.0, 0.0, 500.0), radius: 250.0))],
        count: 800,
        influence_radius: 120.0,
        kill_distance: 30.0,
        step: 15.0,
        iterations: 200,
        iterations_per_step: ITERATIONS,
    ),
)"#;

#[test]
fn a_colonize_scene_can_grow_while_the_app_runs() {
    let scene = |n: u32| Scene::from_str(&GROWING.replace("ITERATIONS", &n.to_string()), "growing.ron").unwrap();
    let at_once = sylva::build(&scene(0), 1).unwrap();
    let wall = std::time::Duration::ZERO;
    let expected = sylva::Report::gather(&at_once, "at once", wall)
        .unwrap()
        .tree
        .unwrap()
        .colonize
        .unwrap();
    assert!(expected.termination.is_some());
    let mut app = sylva::build(&scene(3), 2).unwrap();
    let first = sylva::Report::gather(&app, "growing", wall)
        .unwrap()
        .tree
        .unwrap()
        .colonize
        .unwrap();
    assert_eq!(first.iterations, 0);
    assert_eq!(first.termination, None);
    let mut steps = 0;
    loop {
        app.advance(1);
        steps += 1;
        let now = sylva::Report::gather(&app, "growing", wall).unwrap();
        let c = now.tree.unwrap().colonize.unwrap();
        assert!(c.iterations <= 3 * steps);
        if c.termination.is_some() {
            assert_eq!(
                (c.attractors, c.attractors_left, c.iterations, c.nodes, c.termination),
                (
                    expected.attractors,
                    expected.attractors_left,
                    expected.iterations,
                    expected.nodes,
                    expected.termination
                )
            );
            assert_eq!(now.entities["attractors"], c.attractors_left);
            assert_eq!(now.entities["segments"], c.nodes);
            break;
        }
        assert!(steps < 200, "growth never stopped");
    }
    assert!(steps > 3, "grown over {steps} steps");
    let batch = app
        .world
        .resources
        .get::<sylva::systems::colonize::AttractorBatch>()
        .unwrap();
    assert_eq!(batch.points.len(), expected.attractors_left);
}

#[test]
fn forest_trees_wear_their_species_bark() {
    let mut scene = Scene::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/forest.ron"))).unwrap();
    let forest = scene.forest.as_mut().unwrap();
    forest.placement.count = 60;
    for s in &mut forest.species {
        s.variants = 1;
    }
    let barks: Vec<[u8; 4]> = forest.species.iter().map(|s| s.look.bark).collect();
    let mut app = sylva::build(&scene, 2).unwrap();
    app.advance(1);
    // Every segment in some species' bark, and every species' bark on some segment.
    let stats = app.world.resources.get::<ForestStats>().unwrap().clone();
    assert!(stats.per_species.iter().all(|&n| n > 0), "{:?}", stats.per_species);
    let batch = app.world.resources.get::<sylva::systems::tree::TreeBatch>().unwrap();
    let mut per_bark = vec![0; barks.len()];
    for c in &batch.cylinders.colour {
        let s = barks.iter().position(|b| b == c);
        per_bark[s.unwrap_or_else(|| panic!("{c:?} is no species' bark"))] += 1;
    }
    assert!(per_bark.iter().all(|&n| n > 0), "{per_bark:?}");
    assert_eq!(per_bark.iter().sum::<usize>(), stats.segments);
}

/// A forest of 60 trees, two variants per species.
fn small_forest() -> Scene {
    let mut scene = Scene::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/forest.ron"))).unwrap();
    let forest = scene.forest.as_mut().unwrap();
    forest.placement.count = 60;
    for s in &mut forest.species {
        s.variants = 2;
    }
    scene
}

/// Bit patterns of a cylinder, to compare sets of them exactly.
fn cylinder_bits(start: Vec3, end: Vec3, r0: f32, r1: f32, colour: [u8; 4]) -> [u32; 9] {
    let [a, b, c] = start.to_array().map(f32::to_bits);
    let [d, e, f] = end.to_array().map(f32::to_bits);
    [a, b, c, d, e, f, r0.to_bits(), r1.to_bits(), u32::from_le_bytes(colour)]
}

#[test]
fn every_forest_tree_is_a_card_of_its_variant_and_the_card_is_the_tree() {
    let mut app = sylva::build(&small_forest(), 2).unwrap();
    app.advance(1);
    let stats = app.world.resources.get::<ForestStats>().unwrap().clone();
    let batch = app.world.resources.get::<TreeBatch>().unwrap();
    let (models, cards) = (&batch.models, &batch.cards);
    assert_eq!(
        (models.models.len(), models.generation),
        (8, 1),
        "4 species × 2 variants, once"
    );
    assert_eq!(cards.len(), stats.trees);
    let mut trees = app.world.entities.query::<(sylva::runtime::hecs::Entity, &Tree)>();
    let mut segments = app.world.entities.query::<(&Segment, &TreeMember)>();
    let segments: Vec<(Segment, sylva::runtime::hecs::Entity)> = segments.iter().map(|(s, m)| (*s, m.0)).collect();
    let mut used = vec![false; models.models.len()];
    for (i, (entity, tree)) in trees.iter().enumerate() {
        assert_eq!(
            (cards.position[i], cards.yaw[i], cards.scale[i]),
            (tree.position, 0.0, 1.0)
        );
        let m = &models.models[cards.model[i] as usize];
        used[cards.model[i] as usize] = true;
        // The model moved to the root is the tree's segments, bit for bit, in its bark.
        let c = &m.cylinders;
        let mut placed: Vec<[u32; 9]> = (0..c.len())
            .map(|k| {
                let (a, b) = (c.start[k] + tree.position, c.end[k] + tree.position);
                cylinder_bits(a, b, c.start_radius[k], c.end_radius[k], c.colour[k])
            })
            .collect();
        let bark = batch.cylinders.colour[0..batch.cylinders.len()]
            .iter()
            .zip(&batch.cylinders.tree)
            .find(|(_, anchor)| anchor.root == tree.position)
            .map(|(colour, _)| *colour)
            .unwrap();
        let mut own: Vec<[u32; 9]> = (segments.iter().filter(|(_, t)| *t == entity))
            .map(|(s, _)| cylinder_bits(s.start, s.end, s.start_radius, s.end_radius, bark))
            .collect();
        placed.sort_unstable();
        own.sort_unstable();
        assert_eq!(placed, own, "tree {i}");
        // Its leaves, in order, are the model's moved to the root.
        let leaves = &batch.leaves;
        let own: Vec<Vec3> = (0..leaves.len())
            .filter(|&k| leaves.tree[k].root == tree.position)
            .map(|k| leaves.position[k])
            .collect();
        let placed: Vec<Vec3> = m.leaves.position.iter().map(|&p| p + tree.position).collect();
        assert_eq!(placed, own, "tree {i}");
        // Its parts' anchor measures the tree as its card does: wood and leaves.
        let anchor = TreeAnchor::of(Vec3::ZERO, (&m.cylinders, &m.leaves), (0, 0));
        let own = leaves.tree[leaves.tree.iter().position(|a| a.root == tree.position).unwrap()];
        assert!(
            (own.height - anchor.height).abs() < 1e-4,
            "tree {i}: {own:?}, {anchor:?}"
        );
        assert!(m.leaves.colour.iter().all(|&c| c == m.leaves.colour[0]));
    }
    assert!(used.iter().all(|&u| u), "every variant is some tree's card: {used:?}");
}

#[test]
fn a_scene_whose_other_trees_have_no_card_draws_its_forest_as_geometry() {
    let mut scene = small_forest();
    let one = Scene::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenes/thesis/fig2_6a.ron"
    )))
    .unwrap();
    scene.tree = one.tree;
    let mut app = sylva::build(&scene, 2).unwrap();
    app.advance(1);
    let batch = app.world.resources.get::<TreeBatch>().unwrap();
    assert_eq!(batch.models.models.len(), 8);
    assert!(
        batch.cards.is_empty(),
        "the single tree has no card, so no tree may be cut away"
    );
}
