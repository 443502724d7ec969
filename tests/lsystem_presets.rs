//! Every `scenes/thesis` L-system preset loads, validates and draws the
//! segment count its grammar gives in closed form (F segments, plus the root stub).

use std::path::PathBuf;

use sylva::Scene;
use sylva::runtime::Validate;
use sylva::systems::lsystem::{LSystemError, LSystemOutput, LSystemParams, generate};
use sylva::systems::tree::NO_PARENT;

fn scene_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenes/thesis")
}

fn load(name: &str) -> LSystemParams {
    let scene = Scene::load(&scene_dir().join(name)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.seed, 1, "{name}");
    scene.tree.unwrap_or_else(|| panic!("{name} has a tree")).lsystem
}

fn run(name: &str) -> LSystemOutput {
    let params = load(name);
    params.validate().unwrap_or_else(|e| panic!("{name}: {e:?}"));
    generate(&params, 1).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// (file, F segments, root stub drawn)
const PRESETS: [(&str, usize, bool); 23] = [
    ("koch_island.ron", 256, false),
    ("koch_island_n3.ron", 2048, false),
    ("fig2_5a.ron", 4096, false),
    ("fig2_5b.ron", 3125, false),
    ("fig2_6a.ron", 13_120, true),
    ("fig2_6b.ron", 13_120, true),
    ("fig2_7.ron", 13_120, true),
    ("fig5_1a.ron", 2048, true),
    ("fig5_1b.ron", 2048, true),
    ("fig5_1c.ron", 2048, true),
    ("fig5_1d.ron", 2048, true),
    ("fig5_2a.ron", 1024, true),
    ("fig5_2b.ron", 1024, true),
    ("fig5_2c.ron", 1024, true),
    ("fig5_2d.ron", 1024, true),
    ("fig5_3a.ron", 1456, true),
    ("fig5_3b.ron", 13_120, true),
    ("fig5_3c.ron", 13_120, true),
    ("fig5_3d.ron", 13_120, true),
    ("fig5_4a.ron", 13_120, true),
    ("fig5_4a_abop.ron", 13_120, true),
    ("fig5_4b.ron", 13_120, true),
    ("fig6_1b.ron", 13_120, true),
];

/// Every thesis scene with a `tree` section is in [`PRESETS`]; scenes of
/// other domains (terrain) share the folder and are tested elsewhere.
#[test]
fn every_preset_file_is_listed() {
    let mut on_disk: Vec<String> = std::fs::read_dir(scene_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("tree:"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = PRESETS.iter().map(|p| p.0.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn presets_draw_the_expected_segment_counts() {
    for (name, f_segments, stub) in PRESETS {
        let out = run(name);
        let f_count = out.modules.symbols().iter().filter(|&&s| s == 0).count();
        assert_eq!(f_count, f_segments, "{name}: F modules");
        assert_eq!(out.graph.len(), f_segments + usize::from(stub), "{name}: segments");
        assert_eq!(out.widths.len(), out.graph.len(), "{name}");
        let roots = out.graph.parent.iter().filter(|&&p| p == NO_PARENT).count();
        assert_eq!(roots, 1, "{name}: one root");
        for (i, &p) in out.graph.parent.iter().enumerate().skip(1) {
            assert!((p as usize) < i, "{name}: parent before child");
            assert_eq!(
                out.graph.start[i], out.graph.end[p as usize],
                "{name}: segment {i} starts at its parent's end"
            );
        }
    }
}

#[test]
fn fig_6_1b_has_13121_segments_in_thesis_mode() {
    let out = run("fig6_1b.ron");
    assert_eq!(out.graph.len(), 13_121);
    assert_eq!(out.graph.start[0], glam::Vec3::ZERO);
    assert_eq!(out.graph.end[0], glam::Vec3::new(0.0, 0.0, 10.0));
    assert_eq!(out.graph.depth[0], 0);
    // Without the stub (the library default) the same tree has 13,120.
    let mut params = load("fig6_1b.ron");
    params.root_stub = 0.0;
    assert_eq!(generate(&params, 1).unwrap().graph.len(), 13_120);
}

#[test]
fn ternary_depths_are_bracket_depths() {
    // Eq. 5.3: the trunk F of each A is at the A's bracket depth; the F
    // inside each bracket one deeper. At n = 6 the deepest F is at depth 6.
    let out = run("fig5_3a.ron");
    let max_depth = out.graph.depth.iter().copied().max().unwrap();
    assert_eq!(max_depth, 6);
    let trunk = out.graph.depth.iter().filter(|&&d| d == 0).count();
    assert_eq!(trunk, 2, "root stub plus the first F(ls)");
}

#[test]
fn koch_island_is_a_closed_planar_curve() {
    let out = run("koch_island.ron");
    let first = out.graph.start[0];
    let last = *out.graph.end.last().unwrap();
    assert!((first - last).length() < 1e-2, "{first} vs {last}");
    // + and - turn about U = +X, so the island lies in the Y-Z plane.
    assert!(out.graph.end.iter().all(|p| p.x.abs() < 1e-3));
    // Each segment is 25 long.
    for (s, e) in out.graph.start.iter().zip(&out.graph.end) {
        assert!(((*e - *s).length() - 25.0).abs() < 1e-3);
    }
}

#[test]
fn preset_round_trips_through_ron() {
    let params = load("fig6_1b.ron");
    let text = ron::to_string(&params).unwrap();
    let back: LSystemParams = ron::from_str(&text).unwrap();
    assert_eq!(back, params);
}

#[test]
fn unknown_preset_fields_are_rejected() {
    let err = ron::from_str::<LSystemParams>("(iterations: 3, angel: 20.0)").unwrap_err();
    assert!(err.to_string().contains("angel"), "{err}");
}

#[test]
fn default_parameters_draw_the_ternary_tree_at_n_5() {
    let out = generate(&LSystemParams::default(), 0).unwrap();
    assert_eq!(out.graph.len(), 2 * (3usize.pow(5) - 1));
}

#[test]
fn out_of_range_parameters_are_rejected_with_the_field_name() {
    let base = LSystemParams::default();
    let cases: [(LSystemParams, &str); 7] = [
        (
            LSystemParams {
                angle: f32::NAN,
                ..base.clone()
            },
            "angle",
        ),
        (
            LSystemParams {
                step: 0.0,
                ..base.clone()
            },
            "step",
        ),
        (
            LSystemParams {
                module_limit: 0,
                ..base.clone()
            },
            "module_limit",
        ),
        (
            LSystemParams {
                iterations: 1001,
                ..base.clone()
            },
            "iterations",
        ),
        (
            LSystemParams {
                tropism: glam::Vec3::new(0.0, f32::INFINITY, 0.0),
                ..base.clone()
            },
            "tropism",
        ),
        (
            LSystemParams {
                root_stub: -1.0,
                ..base.clone()
            },
            "root_stub",
        ),
        (
            LSystemParams {
                grammar: " \n".into(),
                ..base.clone()
            },
            "grammar",
        ),
    ];
    for (params, field) in cases {
        assert_eq!(params.validate().unwrap_err().dotted(), field);
        match generate(&params, 0) {
            Err(LSystemError::InvalidParameter(e)) => assert_eq!(e.dotted(), field),
            other => panic!("{field}: {other:?}"),
        }
    }
    assert_eq!(base.validate(), Ok(()));
}
