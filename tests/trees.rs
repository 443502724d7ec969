//! Trees end to end: scene file → grammar → turtle → radii → mesh → entities → export.

mod support;

use sylva::Scene;
use sylva::systems::tree::{BranchDepth, Segment, SegmentParent, Tree, TreeBatch};

fn scene(name: &str) -> Scene {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes/thesis")
        .join(name);
    Scene::load(&path).unwrap()
}

#[test]
fn fig_6_1b_reproduces_the_thesis_counts() {
    let built = sylva::build_all(&scene("fig6_1b.ron"), 1).unwrap();
    let stats = built.tree.as_ref().unwrap().stats;
    assert_eq!(stats.segments, 13_121);
    assert_eq!(stats.chains, 9_841);
    assert_eq!(stats.vertices, 206_658);
    assert_eq!(
        stats.vertices,
        9 * (stats.segments + stats.chains),
        "(n + 1) × (segments + chains)"
    );
    assert_eq!(stats.triangles, 2 * 8 * stats.segments);
    let world = &built.app.world;
    assert_eq!(world.count::<Tree>(), 1);
    assert_eq!(world.count::<Segment>(), 13_121);
    assert_eq!(
        world.count::<SegmentParent>(),
        13_120,
        "only the root stub has no parent"
    );
}

#[test]
fn segment_entities_are_a_connected_tree_in_world_space() {
    let mut app = sylva::build(&scene("fig5_3a.ron"), 2).unwrap();
    let world = &app.world.entities;
    let mut q = world.query::<(&Segment, Option<&SegmentParent>, &BranchDepth)>();
    let mut roots = 0;
    for (s, parent, depth) in q.iter() {
        assert!(s.start.is_finite() && s.end.is_finite());
        assert!(s.start_radius > 0.0 && s.end_radius > 0.0);
        match parent {
            None => roots += 1,
            Some(p) => {
                let ps = world.get::<&Segment>(p.0).unwrap();
                assert!(ps.end.distance(s.start) < 1e-4, "a child starts where its parent ends");
                let pd = world.get::<&BranchDepth>(p.0).unwrap();
                assert!(depth.0 == pd.0 || depth.0 == pd.0 + 1);
            }
        }
    }
    assert_eq!(roots, 1);
    drop(q);
    // The trunk grows up (+Y) in the world.
    let highest = world
        .query::<&Segment>()
        .iter()
        .map(|s| s.end.y)
        .fold(f32::MIN, f32::max);
    assert!(highest > 1.0, "tree should stand metres tall, top at {highest}");
    // Extraction draws every segment once, and only when the trees change.
    let segments = app.world.count::<Segment>();
    assert_eq!(
        segments,
        app.world
            .resources
            .get::<sylva::systems::species::TreeStats>()
            .unwrap()
            .segments
    );
    app.advance(1);
    let mut batch = app.world.resources.get_mut::<TreeBatch>().unwrap();
    assert_eq!(batch.cylinders.len(), segments);
    assert_eq!(batch.cylinders.dirty.take().end as usize, segments);
    drop(batch);
    app.advance(1);
    assert!(
        app.world
            .resources
            .get::<TreeBatch>()
            .unwrap()
            .cylinders
            .dirty
            .is_clean()
    );
}

#[test]
fn tree_command_exports_glb_and_obj_and_reports() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig5_3a.ron");
    let glb = dir.join("tree.glb");
    let obj = dir.join("tree.obj");
    let report = dir.join("tree.json");
    let run = |export: &std::path::Path| {
        support::sylva()
            .args([
                "tree",
                scene,
                "--export",
                export.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
            ])
            .output()
            .unwrap()
    };
    assert!(run(&glb).status.success());
    let bytes = std::fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
        bytes.len()
    );
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let tree = &r["tree"];
    let stats = sylva::build_all(&Scene::load(scene.as_ref()).unwrap(), 1)
        .unwrap()
        .tree
        .unwrap()
        .stats;
    let counts = [
        ("modules", stats.modules),
        ("segments", stats.segments),
        ("chains", stats.chains),
        ("rings", stats.rings),
        ("vertices", stats.vertices),
        ("triangles", stats.triangles),
    ];
    for (key, expected) in counts {
        assert_eq!(tree[key].as_u64(), Some(expected as u64), "report tree.{key}");
    }
    for key in ["derive_ms", "interpret_ms", "mesh_ms"] {
        let ms = tree[key].as_f64().unwrap_or(-1.0);
        assert!(ms >= 0.0 && ms.is_finite(), "report tree.{key} = {}", tree[key]);
    }
    let vertices = tree["vertices"].as_u64().unwrap() as usize;
    assert!(run(&obj).status.success());
    let text = std::fs::read_to_string(&obj).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with("v ")).count(), vertices);

    let bad = support::sylva()
        .args(["tree", scene, "--export", dir.join("tree.fbx").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected a .glb or .obj file"));
    let no_tree = support::sylva()
        .args(["tree", concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/chains.ron")])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&no_tree.stderr).contains("has no `tree` section"));
}

#[test]
fn colonization_scenes_grow_the_same_trees_on_any_thread_count() {
    let scene = scene("fig5_11a.ron");
    let one = sylva::build(&scene, 1).unwrap();
    let two = sylva::build(&scene, 2).unwrap();
    assert!(one.world.count::<Segment>() > 1000);
    assert_eq!(one.world.count::<Tree>(), 1);
    assert_eq!(one.state_hash().unwrap(), two.state_hash().unwrap());
    let mut q = one.world.entities.query::<&Segment>();
    for s in q.iter() {
        assert!(s.start.is_finite() && s.end.is_finite() && s.end_radius > 0.0);
    }
}

#[test]
fn a_scene_tree_wears_its_species_bark() {
    let mut s = scene("fig6_1b.ron");
    let bark = [120, 40, 200, 255];
    s.tree.as_mut().unwrap().look.bark = bark;
    let mut app = sylva::build(&s, 1).unwrap();
    let before = app.state_hash().unwrap();
    app.advance(1);
    let batch = app.world.resources.get::<TreeBatch>().unwrap();
    assert_eq!(batch.cylinders.len(), 13_121);
    assert!(batch.cylinders.colour.iter().all(|&c| c == bark));
    drop(batch);
    // The look only shows: it is in no state the hash sees.
    let mut plain = sylva::build(&scene("fig6_1b.ron"), 1).unwrap();
    assert_eq!(plain.state_hash().unwrap(), before);
    plain.advance(1);
    let default = sylva::systems::tree::TreeLook::default().bark;
    let batch = plain.world.resources.get::<TreeBatch>().unwrap();
    assert!(batch.cylinders.colour.iter().all(|&c| c == default));
}
