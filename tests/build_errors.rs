//! Errors found while building a scene (not while reading it) name the scene file, the line in
//! the file and the field, like the errors of reading.

use sylva::{BuildError, Scene, SceneError};

fn build_error(text: &str) -> SceneError {
    let scene = Scene::from_str(text, "build.ron").unwrap_or_else(|e| panic!("the scene reads: {e}"));
    match sylva::build(&scene, 1) {
        Err(BuildError::Scene(e)) => e,
        Err(e) => panic!("not a scene error: {e}"),
        Ok(_) => panic!("the scene builds"),
    }
}

#[test]
fn a_grammar_result_that_is_not_finite_names_its_line_in_the_file() {
    let text = "(\n  tree: (\n    lsystem: (\n      grammar: r#\"axiom: A(1)\n        A(x) -> A(x*1e30)F(x)\"#,\n      iterations: 6,\n    ),\n  ),\n)";
    let e = build_error(text);
    assert_eq!(
        (e.file.as_str(), e.line, e.column, e.field.as_deref()),
        ("build.ron", 5, 20, Some("tree.lsystem.grammar")),
        "{e}"
    );
    assert!(e.message.contains("not finite"), "{e}");
}

#[test]
fn the_module_limit_names_the_grammar_in_the_file() {
    let text = "(\n  tree: (lsystem: (\n    grammar: \"axiom: F\\nF -> FF\",\n    iterations: 30,\n    module_limit: 1000,\n  )),\n)";
    let e = build_error(text);
    assert_eq!((e.line, e.field.as_deref()), (3, Some("tree.lsystem.grammar")), "{e}");
    assert!(e.message.contains("module limit of 1000"), "{e}");
    assert!(e.to_string().starts_with("build.ron:3:"), "{e}");
}

#[test]
fn colonization_lengths_past_f32_comfort_are_read_errors_not_build_errors() {
    // Once this scene grew segments past f32 and failed while building; the coordinate bound
    // (docs/design/limits.md, "Coordinates and lengths") now rejects it where it is written.
    let text = "(\n  seed: 1,\n  colonize: (\n    influence_radius: 3e38,\n    kill_distance: 1e37,\n    step: 3e38,\n    iterations: 5,\n    roots: [(0.0, 0.0, 2e38)],\n    regions: [(shape: Sphere(centre: (0.0, 0.0, 3e38), radius: 1e37))],\n  ),\n)";
    let e = Scene::from_str(text, "build.ron").unwrap_err();
    assert_eq!(
        e.to_string(),
        "build.ron:4:5: field `colonize.influence_radius`: is 300000000000000000000000000000000000000, must be a number > 0 and at most 1000000"
    );
}

#[test]
fn a_forest_species_grammar_error_names_that_species() {
    let text = "(forest: (\n  placement: (count: 3, min_distance: 1.0),\n  species: [\n    (lsystem: ()),\n    (lsystem: (grammar: r#\"axiom: A(1)\n      A(x) -> A(x*1e30)F(x)\"#, iterations: 6)),\n  ],\n))";
    let e = build_error(text);
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (6, 18, Some("forest.species[1].lsystem.grammar")),
        "{e}"
    );
}

#[test]
fn a_scene_made_in_code_names_the_field_without_a_file() {
    let mut scene = Scene::from_str("(tree: ())", "tree.ron").unwrap();
    scene.source = None;
    let tree = scene.tree.as_mut().unwrap();
    tree.lsystem.grammar = "axiom: A(1)\nA(x) -> A(x*1e30)F(x)".into();
    tree.lsystem.iterations = 6;
    let e = sylva::build(&scene, 1).err().expect("fails");
    assert!(
        e.to_string()
            .starts_with("field `tree.lsystem.grammar`: grammar line 2"),
        "{e}"
    );
}

#[test]
fn a_world_refuses_a_forest_beside_it() {
    let text = "(\n  forest: (placement: (count: 3, min_distance: 1.0), species: [(lsystem: ())]),\n  world: (),\n)";
    let e = Scene::from_str(text, "build.ron").unwrap_err();
    assert_eq!((e.line, e.field.as_deref()), (2, Some("forest")), "{e}");
    assert!(e.message.contains("world.trees"), "{e}");
}
