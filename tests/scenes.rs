//! Every scene file in the repository loads and validates as a `Scene`.

use std::path::{Path, PathBuf};

use sylva::BladeSource;
use sylva::systems::grass::{BladeShape, Segment};

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

#[test]
fn every_scene_file_loads() {
    let mut files = Vec::new();
    scene_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes"), &mut files);
    assert!(files.len() > 20, "found only {} scene files", files.len());
    for path in &files {
        let scene = sylva::Scene::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!scene.name.is_empty(), "{}", path.display());
    }
}

fn assert_same_shape(name: &str, got: &BladeShape, want: &BladeShape) {
    assert_eq!(got.parent, want.parent, "{name}: parents");
    assert_eq!(got.len(), want.len(), "{name}: particles");
    for i in 1..want.len() {
        let (g, w) = (got.segment[i], want.segment[i]);
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(
            close(g.length, w.length),
            "{name} particle {i}: length {} vs {}",
            g.length,
            w.length
        );
        assert!(
            close(g.width, w.width) && close(g.mass, w.mass),
            "{name} particle {i}: {g:?} vs {w:?}"
        );
        assert!(
            close(g.stiffness, w.stiffness) && close(g.angular_stiffness, w.angular_stiffness),
            "{name} particle {i}: {g:?} vs {w:?}"
        );
        assert!(
            got.rest[i].distance(want.rest[i]) < 1e-5,
            "{name} particle {i}: rest {} vs {}",
            got.rest[i],
            want.rest[i]
        );
    }
}

#[test]
fn grass_presets_are_the_documented_shapes() {
    let d = Segment::default();
    let want = [
        ("blade1", BladeShape::blade(1, 0.3, d)),
        ("blade2", BladeShape::blade(2, 0.3, d)),
        ("blade6", BladeShape::blade(6, 0.3, d)),
        ("tuft", BladeShape::tuft(5, 0.25, 0.3, d)),
        ("shrub", BladeShape::shrub(4, 0.4, d)),
    ];
    assert_eq!(sylva::GRASS_PRESETS.len(), want.len());
    for (name, shape) in &want {
        let got = BladeSource::Preset((*name).into())
            .shape()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_same_shape(name, &got, shape);
        // The preset file itself is a scene whose grass is that species.
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenes/grass/{name}.ron"));
        let scene = sylva::Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let species = &scene.grass.expect("a grass section").species[0];
        assert_same_shape(name, &species.blade.shape().unwrap(), shape);
    }
    let e = BladeSource::Preset("lawn".into()).shape().unwrap_err().to_string();
    assert!(e.contains("unknown preset `lawn`") && e.contains("tuft"), "{e}");
}

#[test]
fn meadow_has_terrain_grass_and_a_walker() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/meadow.ron");
    let scene = sylva::Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let grass = scene.grass.expect("a grass section");
    assert!(scene.terrain.is_some());
    assert_eq!(grass.species.len(), 2);
    assert_eq!(grass.pushers.len(), 1);
    assert!(
        grass.bake.cells <= 16 && grass.bake.frames <= 32,
        "keep the meadow's bake small"
    );
}

#[test]
fn bad_grass_sections_name_file_line_and_field() {
    let text = "(\n  grass: (\n    species: [(\n      scale: (2.0, 1.0),\n    )],\n  ),\n)";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("grass.species[0].scale"));
    assert_eq!((e.file.as_str(), e.line), ("bad.ron", 4), "{e}");

    let text = "(\n  grass: (\n    bake: (\n      cells: 0)))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("grass.bake.cells"), 4), "{e}");

    let text = "(grass: (\n pushers: [(speed: -1.0)]))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("grass.pushers[0].speed"), 2), "{e}");

    let text = "(grass: (species: [(\n blade: Preset(\"lawn\"))]))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("grass.species[0].blade"), 2), "{e}");

    // A grammar error points into the grammar string, at the line of the scene file it is on.
    let text =
        "(grass: (species: [(blade: Grammar(\n  grammar: r#\"axiom: S(0.1)\n    A -> S(1]\"#,\n  iterations: 1))]))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!(
        (e.field.as_deref(), e.line),
        (Some("grass.species[0].blade.grammar"), 3),
        "{e}"
    );
    assert!(e.message.starts_with("grammar line 2"), "{}", e.message);

    let text = "(grass: (species: [(blade: Grammar(grammar: \"axiom: S(-0.1)\", iterations: 0))]))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert!(e.message.contains("module 0") && e.message.contains("length"), "{e}");

    let text = "(grass: (\n  wiind: ()))";
    let e = sylva::Scene::from_str(text, "bad.ron").unwrap_err();
    assert_eq!((e.field.as_deref(), e.line), (Some("wiind"), 2), "{e}");
}
