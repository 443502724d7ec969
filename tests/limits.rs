//! Nothing trusted (docs/design/limits.md): scene values that once panicked, aborted or stalled a
//! run are errors naming the file, line and field, with the bound in the message, found before any
//! work.

use std::time::Instant;

use sylva::systems::colonize::ColonizeStats;
use sylva::{BuildError, Scene, SceneError};

fn read_error(text: &str) -> SceneError {
    let started = Instant::now();
    let e = Scene::from_str(text, "limits.ron").expect_err("the scene is rejected");
    assert!(
        started.elapsed().as_secs_f32() < 2.0,
        "{e} took {:?}",
        started.elapsed()
    );
    e
}

#[test]
fn a_colonization_region_of_radius_1e12_is_a_field_error() {
    // Panicked at colonize/grid.rs:73 (a zero-cell grid axis).
    let e = read_error("(colonize: (regions: [\n  (shape: Sphere(centre: (0.0, 0.0, 0.0), radius: 1e12))]))");
    assert_eq!(
        e.to_string(),
        "limits.ron:2:43: field `colonize.regions[0].shape.radius`: is 1000000000000, must be a number > 0 and at most 1000000"
    );
    let e = read_error("(colonize: (exclusions: [Box(min: (0.0, 0.0, 0.0), max: (1.0, 1.0, 2e6))]))");
    assert_eq!(e.field.as_deref(), Some("colonize.exclusions[0].max"), "{e}");
    let e = read_error("(colonize: (roots: [(0.0, 0.0, 0.0), (-3e6, 0.0, 0.0)]))");
    assert_eq!(e.field.as_deref(), Some("colonize.roots[1]"), "{e}");
    let e = read_error("(colonize: (iterations: 4294967295))");
    assert_eq!(e.message, "is 4294967295, must be at most 10000", "{e}");
}

#[test]
fn a_huge_grass_bake_is_a_field_error() {
    // Aborted: the texture size was an unchecked multiply.
    let e = read_error("(grass: (\n  bake: (frames: 4294967295)))");
    assert_eq!(
        e.to_string(),
        "limits.ron:2:10: field `grass.bake.frames`: must be within 2..=4096, got 4294967295"
    );
    let e = read_error("(grass: (bake: (cells: 1024, frames: 64)))");
    assert_eq!(e.field.as_deref(), Some("grass.bake.frames"), "{e}");
    let e = read_error("(world: (grass: (bake: (instances: 100000))))");
    assert_eq!(e.field.as_deref(), Some("world.grass.bake.instances"), "{e}");
}

#[test]
fn a_worlds_walkers_and_live_step_are_checked_with_their_field() {
    let e = read_error("(world: (grass: (walkers: [(speed: 1.0), (\n  radius: -1.0)])))");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (2, Some("world.grass.walkers[1].radius")),
        "{e}"
    );
    let e = read_error("(world: (grass: (walkers: [(walk: Path(points: [(0.0, 0.0)]))])))");
    assert_eq!(e.field.as_deref(), Some("world.grass.walkers[0].walk"), "{e}");
    let e = read_error("(world: (grass: (live: (step_seconds: 1.0))))");
    assert_eq!(e.field.as_deref(), Some("world.grass.live.step_seconds"), "{e}");
    let walkers = vec!["()"; 65].join(", ");
    let e = read_error(&format!("(world: (grass: (walkers: [{walkers}])))"));
    assert_eq!(e.field.as_deref(), Some("world.grass.walkers"), "{e}");
}

#[test]
fn blade_iterations_are_bounded_before_deriving() {
    // Stalled about 18 minutes deriving a word that had stopped growing.
    let e = read_error(
        "(grass: (species: [(blade: Grammar(\n  grammar: \"axiom: S(0.1) A\\nA -> A\",\n  iterations: 4294967295))]))",
    );
    assert_eq!(
        (e.line, e.field.as_deref(), e.message.as_str()),
        (
            3,
            Some("grass.species[0].blade.iterations"),
            "must be at most 1000, got 4294967295"
        ),
        "{e}"
    );
    let e = read_error("(world: (grass: (species: [(grammar: \"axiom: S(0.1) A\", iterations: 4294967295)])))");
    assert_eq!(e.field.as_deref(), Some("world.grass.species[0].iterations"), "{e}");
}

/// A scene file `scene.ron` with `colonize.points_file: "cloud.xyz"` and that cloud, in a fresh
/// folder (not the working directory).
fn scene_with_cloud(cloud: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cloud.xyz"), cloud).unwrap();
    let scene = "(colonize: (\n  regions: [],\n  points_file: \"cloud.xyz\",\n  influence_radius: 60.0,\n  kill_distance: 8.0,\n  iterations: 5,\n))";
    let path = dir.path().join("scene.ron");
    std::fs::write(&path, scene).unwrap();
    (dir, path)
}

fn cloud(points: usize) -> String {
    (0..points)
        .map(|i| format!("{} {} {}\n", (i % 10) * 10, (i / 10 % 5) * 10, 200 + i / 50 * 10))
        .collect()
}

#[test]
fn a_points_file_is_read_from_the_scene_folder() {
    let (_dir, path) = scene_with_cloud(&cloud(200));
    let scene = Scene::load(&path).unwrap();
    let app = sylva::build(&scene, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(app.world.resources.get::<ColonizeStats>().unwrap().attractors, 200);
    // Text that came from elsewhere keeps the working directory, where there is no cloud.xyz.
    let text = std::fs::read_to_string(&path).unwrap();
    let scene = Scene::from_str(&text, "inline.ron").unwrap();
    match sylva::build(&scene, 1) {
        Err(BuildError::Scene(e)) => {
            assert_eq!((e.line, e.field.as_deref()), (3, Some("colonize.points_file")), "{e}");
            assert!(e.message.starts_with("cannot read point file cloud.xyz"), "{e}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("cloud.xyz was found in the working directory"),
    }
}

#[test]
fn a_point_file_attractor_at_1e13_is_an_error_at_its_line() {
    // Panicked at colonize/grid.rs:73, as the 1e12 region did.
    let (dir, path) = scene_with_cloud(&format!("{}1e13 0 0\n", cloud(3)));
    let scene = Scene::load(&path).unwrap();
    let Err(BuildError::Scene(e)) = sylva::build(&scene, 1) else {
        panic!("the scene builds")
    };
    let cloud = dir.path().join("cloud.xyz");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3:3: field `colonize.points_file`: point file {}:4: `1e13` must be finite and within ±1000000",
            path.display(),
            cloud.display()
        )
    );
}

#[test]
fn a_blade_too_stiff_for_live_steps_is_refused_at_the_live_step() {
    // Its segments weigh 1e-30 kg: billions of RK4 substeps per live step.
    let text = "(grass: (\n  species: [(blade: Grammar(grammar: \"axiom: S(0.1, 0.01, 1e-30) S\", iterations: 0),\n    scatter: (count: 4, min_distance: 0.1))],\n  bake: (cells: 2, frames: 2, max_warmup_seconds: 0.0),\n  live: (\n    step_seconds: 0.005),\n))";
    let scene = Scene::from_str(text, "limits.ron").unwrap();
    let started = Instant::now();
    let Err(BuildError::Scene(e)) = sylva::build(&scene, 1) else {
        panic!("the scene builds")
    };
    assert!(started.elapsed().as_secs_f32() < 5.0);
    assert_eq!(
        (e.line, e.field.as_deref()),
        (6, Some("grass.live.step_seconds")),
        "{e}"
    );
    assert!(e.message.contains("species 0's blade needs"), "{e}");
    assert!(e.message.contains("at most 256"), "{e}");
}

/// Finite but physically absurd grass values (a scene fuzzer found a pusher of radius 9e18 m
/// and a wind power of 4e9 running for 37 s) are range errors with their bound.
#[test]
fn absurd_pushers_and_playback_are_range_errors_with_their_bound() {
    let pusher = "(grass: (pushers: [(walk: Orbit(center: (0.0, 0.0), radius: 5.0), speed: 1.0,\n  radius: 9e18)]))";
    let e = read_error(pusher);
    assert_eq!(e.field.as_deref(), Some("grass.pushers[0].radius"), "{e}");
    assert_eq!(e.line, 2, "{e}");
    assert!(
        e.to_string().contains("must be in (0, 100] m, got 9000000000000000000"),
        "{e}"
    );
    let e = read_error("(grass: (wind_power: 4e9))");
    assert_eq!(e.field.as_deref(), Some("grass.wind_power"), "{e}");
    assert!(e.to_string().contains("must be in [0, 100], got 4000000000"), "{e}");
    let e = read_error("(grass: (wave_speed: -1e7))");
    assert_eq!(e.field.as_deref(), Some("grass.wave_speed"), "{e}");
}
