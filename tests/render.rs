//! Scenes rendered headless on Vulkan (lavapipe in CI) with the Khronos
//! validation layer on, compared against the small golden images in
//! `tests/golden/` with a tolerance.
//!
//! Without a Vulkan driver every test prints `SKIPPED: ... no Vulkan driver`
//! and passes, unless `SYLVA_REQUIRE_VULKAN=1` (CI sets it), which makes a
//! missing driver a failure. `SYLVA_BLESS=1` rewrites the golden images from
//! the current output (look at them before committing).
mod support;

use std::path::{Path, PathBuf};

use sylva::runtime::extract::Camera;
use sylva::runtime::glam::Vec3;
use sylva::vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva::vk::{FrameStats, Renderer, read_png, write_png};
use sylva::{Scene, build};

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;

/// Largest mean absolute channel difference (0–255) a matching image may have.
const MAX_MEAN_DIFF: f64 = 2.0;
/// A pixel differs when some channel is off by more than this.
const PIXEL_THRESHOLD: u8 = 24;
/// Largest fraction of differing pixels a matching image may have.
const MAX_DIFFERING: f64 = 0.01;

fn renderer() -> Option<Renderer> {
    renderer_or_skip(WIDTH, HEIGHT)
}

fn scene(path: &str, camera: Option<Camera>) -> Scene {
    let mut s = Scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    if let Some(c) = camera {
        s.camera = c;
    }
    s
}

/// Builds `scene`, runs `frames` frames (0: only the extraction, no simulation step) and renders the last one.
fn render_scene(scene: &Scene, frames: u32) -> Option<(Vec<u8>, FrameStats)> {
    let mut r = renderer()?;
    let mut app = build(scene, 1).unwrap();
    sylva::simulate(&mut app, frames, scene.simulation.steps_per_frame, |_| {});
    app.update(0.0);
    let stats = sylva::render(&mut r, &app, true).unwrap();
    assert_validation_clean(&r);
    let pixels = r.read_pixels();
    assert_clean_shutdown(r);
    Some((pixels, stats))
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.png"))
}

/// Ok when `actual` matches `expected` within the tolerances; the error says by how much it does not.
fn compare(actual: &[u8], expected: &[u8]) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!("sizes differ: {} vs {} bytes", actual.len(), expected.len()));
    }
    let total: u64 = actual
        .iter()
        .zip(expected)
        .map(|(a, b)| u64::from(a.abs_diff(*b)))
        .sum();
    let mean = total as f64 / actual.len() as f64;
    let differing = actual
        .chunks_exact(4)
        .zip(expected.chunks_exact(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > PIXEL_THRESHOLD))
        .count();
    let fraction = differing as f64 / (actual.len() / 4) as f64;
    if mean > MAX_MEAN_DIFF || fraction > MAX_DIFFERING {
        return Err(format!(
            "mean abs diff {mean:.3} (max {MAX_MEAN_DIFF}), differing pixels {:.2} % (max {:.2} %)",
            fraction * 100.0,
            MAX_DIFFERING * 100.0
        ));
    }
    Ok(())
}

fn check_golden(name: &str, pixels: &[u8]) {
    check_golden_sized(name, (WIDTH, HEIGHT), pixels);
}

fn check_golden_sized(name: &str, (width, height): (u32, u32), pixels: &[u8]) {
    let path = golden_path(name);
    if std::env::var("SYLVA_BLESS").as_deref() == Ok("1") {
        write_png(&path, width, height, pixels).unwrap();
        eprintln!("blessed {}", path.display());
        return;
    }
    let (w, h, expected) = read_png(&path).unwrap_or_else(|e| panic!("{e} (run with SYLVA_BLESS=1 to create it)"));
    assert_eq!((w, h), (width, height));
    if let Err(e) = compare(pixels, &expected) {
        let out = std::env::temp_dir().join(format!("sylva-render-{name}.png"));
        let _ = write_png(&out, width, height, pixels);
        panic!(
            "{name} differs from {}: {e}; this run's image: {}",
            path.display(),
            out.display()
        );
    }
}

fn tree_camera() -> Camera {
    Camera {
        position: Vec3::new(0.0, 8.0, 30.0),
        target: Vec3::new(0.0, 7.0, 0.0),
        ..Camera::default()
    }
}

fn valley_camera() -> Camera {
    Camera {
        position: Vec3::new(128.0, 110.0, -90.0),
        target: Vec3::new(128.0, 20.0, 140.0),
        ..Camera::default()
    }
}

#[test]
fn chains_render_like_their_golden_image() {
    let Some((pixels, stats)) = render_scene(&Scene::chains(), 10) else {
        return;
    };
    assert_eq!(stats.cylinders, 16384);
    assert_eq!(stats.draw_calls, 1);
    check_golden("showcase", &pixels);
}

#[test]
fn a_tree_renders_like_its_golden_image() {
    let Some((pixels, stats)) = render_scene(&scene("scenes/thesis/fig6_1b.ron", Some(tree_camera())), 1) else {
        return;
    };
    // At 160 × 120 most twigs are thinner than a tenth of a pixel and left out, and the
    // leaves (ten at each of 3^8 twig tips, 65,610) are a few pixels' worth: a share of them
    // is drawn, grown, no less than the smallest (a sixteenth). Cylinders take one indirect
    // draw per ring, the leaves one more.
    assert!((1_000..10_000).contains(&stats.cylinders), "{stats:?}");
    assert!((65_610 / 16..65_610 / 4).contains(&stats.leaves), "{stats:?}");
    assert!(stats.draw_calls <= 4, "{stats:?}");
    check_golden("fig6_1b", &pixels);
}

#[test]
fn a_terrain_renders_like_its_golden_image() {
    // The generated landscape, before erosion: the picture tests the renderer, not the erosion.
    let Some((pixels, stats)) = render_scene(&scene("scenes/valley.ron", Some(valley_camera())), 0) else {
        return;
    };
    assert_eq!((stats.chunks, stats.chunks_culled), (1, 0));
    check_golden("valley", &pixels);
}

#[test]
fn an_eroded_valley_renders_its_rivers_like_its_golden_image() {
    let camera = Camera {
        position: Vec3::new(128.0, 55.0, 10.0),
        target: Vec3::new(128.0, 10.0, 110.0),
        ..Camera::default()
    };
    let Some((pixels, stats)) = render_scene(&scene("scenes/valley.ron", Some(camera)), 120) else {
        return;
    };
    assert!(stats.chunks > 0, "{stats:?}");
    check_golden("valley_rivers", &pixels);
}

#[test]
fn the_meadow_renders_like_its_golden_image() {
    // Half a second in: the baked wind is playing and the walker has pushed some blades live.
    let Some((pixels, stats)) = render_scene(&scene("scenes/meadow.ron", None), 30) else {
        return;
    };
    assert_eq!(stats.grass, 128_000, "every blade of both species is in a drawn layer");
    check_golden("meadow", &pixels);
}

#[test]
fn the_comparison_fails_on_a_wrong_image() {
    let Ok((_, _, golden)) = read_png(&golden_path("showcase")) else {
        panic!("golden image missing (run with SYLVA_BLESS=1)");
    };
    assert!(compare(&golden, &golden).is_ok());
    // A few pixels a little off still match...
    let mut near = golden.clone();
    for p in near.chunks_exact_mut(4).step_by(500) {
        p[0] = p[0].saturating_add(40);
    }
    assert!(compare(&near, &golden).is_ok());
    // ...a darker image does not, nor one with a block painted over, nor another scene.
    let darker: Vec<u8> = golden.iter().map(|&c| c / 2).collect();
    assert!(compare(&darker, &golden).is_err());
    let mut block = golden.clone();
    for row in 40..70 {
        let start = (row * WIDTH as usize + 40) * 4;
        block[start..start + 40 * 4].fill(0);
    }
    assert!(compare(&block, &golden).is_err());
    let (_, _, tree) = read_png(&golden_path("fig6_1b")).unwrap();
    assert!(compare(&tree, &golden).is_err());
}

#[test]
fn a_camera_looking_away_draws_nothing_and_a_steady_frame_uploads_nothing() {
    let Some(mut r) = renderer() else { return };
    let mut s = scene("scenes/valley.ron", Some(valley_camera()));
    s.terrain.as_mut().unwrap().size = 64;
    s.tree = scene("scenes/thesis/fig6_1b.ron", None).tree;
    let mut app = build(&s, 1).unwrap();
    sylva::simulate(&mut app, 2, 1, |_| {});
    let first = sylva::render(&mut r, &app, true).unwrap();
    assert!(first.upload_bytes > 0 && first.allocations > 0);
    // No simulation step in between: nothing changed, nothing goes up.
    app.update(0.0);
    let steady = sylva::render(&mut r, &app, true).unwrap();
    assert_eq!((steady.upload_bytes, steady.allocations), (0, 0), "{steady:?}");
    assert_eq!(steady.draw_calls, first.draw_calls);

    app.world.resources.insert(Camera {
        position: Vec3::new(32.0, 30.0, -50.0),
        target: Vec3::new(32.0, 30.0, -200.0),
        ..Camera::default()
    });
    let away = sylva::render(&mut r, &app, true).unwrap();
    assert_eq!((away.instances(), away.chunks, away.draw_calls), (0, 0, 0), "{away:?}");
    assert_eq!(away.chunks_culled, 1);
    assert_validation_clean(&r);
}

#[test]
fn a_far_forest_is_its_cards_and_a_near_one_its_geometry() {
    let mut s = scene("scenes/forest.ron", None);
    let forest = s.forest.as_mut().unwrap();
    forest.placement.count = 60;
    for sp in &mut forest.species {
        sp.variants = 2;
    }
    let at = |position: Vec3| Camera {
        position,
        target: Vec3::new(0.0, 5.0, 0.0),
        ..Camera::default()
    };
    s.camera = at(Vec3::new(0.0, 40.0, 900.0));
    let Some((far, stats)) = render_scene(&s, 0) else {
        return;
    };
    // Every tree is under 4 px high: a card, and none of its cylinders or leaves is drawn.
    assert_eq!((stats.cards, stats.cylinders, stats.leaves), (60, 0, 0), "{stats:?}");
    let mut nothing = Scene::from_str("()", "sky.ron").unwrap();
    nothing.camera = s.camera;
    let sky = render_scene(&nothing, 0).unwrap().0;
    let inked = far
        .chunks_exact(4)
        .zip(sky.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    // Far trees overlap and some are under a pixel: 50 of 60 ink one now.
    assert!(inked >= 30, "the cards cover {inked} px");
    // Near, the trees are drawn from their variants' models, counted on the GPU and read back
    // when their frame slot comes round again.
    s.camera = at(Vec3::new(0.0, 8.0, 30.0));
    let mut r = renderer().unwrap();
    let mut app = build(&s, 1).unwrap();
    app.update(0.0);
    for _ in 0..sylva::vk::FRAMES_IN_FLIGHT {
        sylva::render(&mut r, &app, true).unwrap();
    }
    let near = sylva::render(&mut r, &app, true).unwrap();
    assert_validation_clean(&r);
    assert!(near.trees > 0 && near.cylinders > 100 && near.leaves > 100, "{near:?}");
}

/// Measurement, not a check (run with `--ignored --nocapture`): 50 copies of the
/// 50 Fig. 6.1b trees (cylinders and leaves) on a 1024² eroded terrain at 1280×720 —
/// first-load upload rate, steady frame time, draw calls and GPU memory.
#[test]
#[ignore]
fn measure_forest_on_terrain_at_720p() {
    use sylva::runtime::extract::{CylinderBatch, LeafBatch, Sun, TerrainBatch};
    use sylva::systems::tree::TreeBatch;
    let Ok(mut r) = Renderer::new_headless(1280, 720) else {
        eprintln!("SKIPPED: no Vulkan driver");
        return;
    };
    let mut s = scene("scenes/valley.ron", None);
    let t = s.terrain.as_mut().unwrap();
    t.chunks = [4, 4];
    t.hydraulic.springs.clear();
    s.tree = scene("scenes/thesis/fig6_1b.ron", None).tree;
    let mut app = build(&s, 0).unwrap();
    sylva::simulate(&mut app, 2, 1, |_| {});
    let (one, one_leaves) = {
        let batch = app.world.resources.get::<TreeBatch>().unwrap();
        (batch.cylinders.clone(), batch.leaves.clone())
    };
    let mut terrain = app.world.resources.get::<TerrainBatch>().unwrap().clone();
    let ground = |x: f32, z: f32| {
        let p = terrain
            .patches
            .iter()
            .find(|p| (p.origin.x..p.origin.x + 256.0).contains(&x) && (p.origin.z..p.origin.z + 256.0).contains(&z))
            .unwrap();
        let (i, j) = ((x - p.origin.x) as usize, (z - p.origin.z) as usize);
        p.height[j * p.resolution as usize + i]
    };
    let (mut forest, mut leaves) = (CylinderBatch::default(), LeafBatch::default());
    for k in 0..50 {
        let (x, z) = (300.0 + (k % 10) as f32 * 45.0, 300.0 + (k / 10) as f32 * 45.0);
        let offset = Vec3::new(x, ground(x, z) - 0.5, z);
        for i in 0..one.len() {
            let (a, b) = (one.start[i] + offset, one.end[i] + offset);
            forest.push(a, b, one.start_radius[i], one.end_radius[i], one.colour[i]);
        }
        for i in 0..one_leaves.len() {
            let l = &one_leaves;
            leaves.push(l.position[i] + offset, l.normal[i], l.size[i], l.colour[i]);
        }
    }
    let camera = Camera {
        position: Vec3::new(500.0, 150.0, 150.0),
        target: Vec3::new(500.0, 70.0, 400.0),
        ..Camera::default()
    };
    let mut frame = |r: &mut Renderer| {
        r.render(sylva::vk::FrameInput {
            cylinders: vec![&mut forest],
            leaves: vec![&mut leaves],
            terrain: Some(&mut terrain),
            camera,
            sun: Sun::default(),
            ..Default::default()
        })
        .unwrap()
    };
    let first = frame(&mut r);
    let steady = steady_frames(&mut r, &mut frame);
    report_steady("forest", &r, &first, &steady);
    r.atmosphere.shadow_strength = 0.0;
    let unshadowed = steady_frames(&mut r, &mut frame);
    report_steady("forest without shadows", &r, &first, &unshadowed);
    r.save_png(&std::env::temp_dir().join("sylva-forest.png")).unwrap();
    assert_validation_clean(&r);
}

/// Measurement, not a check (run with `--ignored --nocapture`): the three bundled world
/// cameras (the goldens') at 1280×720, each frame timed alone from its start to its pixels
/// (the frames before it finished first), with the sun's shadows and without; what each draws
/// per layer, its draw calls and the GPU memory.
#[test]
#[ignore]
fn measure_world_cameras_at_720p() {
    let Ok(mut r) = Renderer::new_headless(1280, 720) else {
        eprintln!("SKIPPED: no Vulkan driver");
        return;
    };
    let mut built = settled_world();
    let trees = tree_roots(&built.app);
    let cameras = [
        ("valley", valley_floor_camera(&built.app, &trees)),
        ("forest edge", forest_edge_camera(&built.app, &trees)),
        ("aerial", aerial_camera()),
    ];
    let shadows = r.atmosphere.shadow_strength;
    for (name, camera) in cameras {
        built.app.world.resources.insert(camera);
        let timed = |r: &mut Renderer, strength: f32| {
            r.atmosphere.shadow_strength = strength;
            // Until the GPU's counts are read back and nothing is left to upload.
            for _ in 0..=sylva::vk::FRAMES_IN_FLIGHT {
                sylva::render(r, &built.app, false).unwrap();
            }
            r.finish().unwrap();
            let started = std::time::Instant::now();
            let stats = sylva::render(r, &built.app, false).unwrap();
            r.finish().unwrap();
            (started.elapsed().as_secs_f64() * 1e3, stats)
        };
        let (unshadowed, _) = timed(&mut r, 0.0);
        let (ms, s) = timed(&mut r, shadows);
        eprintln!(
            "{name}: {ms:.0} ms a frame ({unshadowed:.0} ms without shadows); trees {}, shrubs {}, cards {}, \
             blades {} (segments {}, leaves {}; in the shadow map {} trees, {} parts); draw calls {} + {} shadow; \
             GPU memory {:.0} MB",
            s.trees,
            s.shrubs,
            s.cards,
            s.grass,
            s.cylinders,
            s.leaves,
            s.shadow_trees,
            s.shadow_parts,
            s.draw_calls,
            s.shadow_draw_calls,
            s.gpu_memory_bytes as f64 / 1e6
        );
    }
    assert_validation_clean(&r);
}

/// The default world on its valley floor at 1280×720, its grass drawn as the world draws
/// it (its meadows' full 32 blades per m²) and at a sixteenth of that (the old default of
/// 2), interleaved twice: steady frame time and blades drawn (the sward's counts lag two
/// frames; the steady frames cover them).
#[test]
#[ignore]
fn measure_grass_density_at_720p() {
    use sylva::runtime::extract::GrassBatch;
    let Ok(mut r) = Renderer::new_headless(1280, 720) else {
        eprintln!("SKIPPED: no Vulkan driver");
        return;
    };
    let mut built = settled_world();
    let trees = tree_roots(&built.app);
    let camera = valley_floor_camera(&built.app, &trees);
    built.app.world.resources.insert(camera);
    let dense = built.app.world.resources.get::<GrassBatch>().unwrap().layers[0]
        .cover
        .expect("the world's grass grows from its cover")
        .share;
    for round in 0..2 {
        for (name, share) in [("2 per m²", dense / 16.0), ("32 per m²", dense)] {
            if let Some(rule) = &mut built.app.world.resources.get_mut::<GrassBatch>().unwrap().layers[0].cover {
                rule.share = share;
            }
            let first = sylva::render(&mut r, &built.app, false).unwrap();
            let steady = steady_frames(&mut r, |r| sylva::render(r, &built.app, false).unwrap());
            report_steady(
                &format!("valley floor, grass at {name} (round {round})"),
                &r,
                &first,
                &steady,
            );
            let file = format!("sylva-grass-{}.png", if share < dense { "sparse" } else { "dense" });
            r.save_png(&std::env::temp_dir().join(file)).unwrap();
        }
    }
    assert_validation_clean(&r);
}

/// The forest scene (1,200 trees) from its own camera at 1280×720: steady frames with its far
/// trees drawn from their variants' models (then without shadows), then with every tree as
/// world-space geometry (its cards taken away).
#[test]
#[ignore]
fn measure_forest_scene_at_720p() {
    use sylva::systems::tree::TreeBatch;
    let Ok(mut r) = Renderer::new_headless(1280, 720) else {
        eprintln!("SKIPPED: no Vulkan driver");
        return;
    };
    let mut app = build(&scene("scenes/forest.ron", None), 0).unwrap();
    sylva::simulate(&mut app, 1, 1, |_| {});
    let first = sylva::render(&mut r, &app, false).unwrap();
    let steady = steady_frames(&mut r, |r| sylva::render(r, &app, false).unwrap());
    report_steady("forest scene", &r, &first, &steady);
    r.save_png(&std::env::temp_dir().join("sylva-forest-scene.png"))
        .unwrap();
    let shadows = r.atmosphere.shadow_strength;
    r.atmosphere.shadow_strength = 0.0;
    let unshadowed = steady_frames(&mut r, |r| sylva::render(r, &app, false).unwrap());
    report_steady("forest scene without shadows", &r, &first, &unshadowed);
    r.atmosphere.shadow_strength = shadows;
    app.world.resources.get_mut::<TreeBatch>().unwrap().cards = Default::default();
    let first = sylva::render(&mut r, &app, false).unwrap();
    let steady = steady_frames(&mut r, |r| sylva::render(r, &app, false).unwrap());
    report_steady("forest scene without cards", &r, &first, &steady);
    r.save_png(&std::env::temp_dir().join("sylva-forest-scene-geometry.png"))
        .unwrap();
    assert_validation_clean(&r);
}

/// Five frames after the first, and the wall time per frame until the last one's pixels
/// are back (frames are in flight, so that is the throughput).
fn steady_frames(r: &mut Renderer, mut frame: impl FnMut(&mut Renderer) -> FrameStats) -> (Vec<FrameStats>, f64) {
    let t0 = std::time::Instant::now();
    let steady: Vec<_> = (0..5).map(|_| frame(r)).collect();
    r.read_pixels();
    let wall = t0.elapsed().as_secs_f64() * 1e3 / steady.len() as f64;
    (steady, wall)
}

/// Prints a measurement: the first frame (uploads) and the steady ones after it.
fn report_steady(name: &str, r: &Renderer, first: &FrameStats, (steady, wall): &(Vec<FrameStats>, f64)) {
    let mut ms: Vec<f64> = steady.iter().map(|s| s.frame_ms).collect();
    ms.sort_by(f64::total_cmp);
    let last = steady.last().unwrap();
    eprintln!(
        "{name}: first frame {:.1} ms, {:.1} MB uploaded; steady: {wall:.1} ms a frame to its pixels, \
         render() median {:.1} ms (min {:.1}); {} cylinders, {} leaves, {} blades drawn; \
         {} draw calls + {} shadow; {} bytes uploaded; GPU memory {:.1} MiB; {}",
        first.frame_ms,
        first.upload_bytes as f64 / 1e6,
        ms[ms.len() / 2],
        ms[0],
        last.cylinders,
        last.leaves,
        last.grass,
        last.draw_calls,
        last.shadow_draw_calls,
        last.upload_bytes,
        last.gpu_memory_bytes as f64 / (1024.0 * 1024.0),
        r.device_name()
    );
}

/// Whether a command's `output` says it found no Vulkan driver: `test` then skips loudly,
/// unless `SYLVA_REQUIRE_VULKAN=1` makes a missing driver a failure.
fn no_driver(output: &str, test: &str) -> bool {
    if !output.contains(sylva::vk::NO_DRIVER_HINT) {
        return false;
    }
    assert_ne!(
        std::env::var("SYLVA_REQUIRE_VULKAN").as_deref(),
        Ok("1"),
        "no Vulkan driver: {output}"
    );
    eprintln!("SKIPPED: {test}: no Vulkan driver");
    true
}

#[test]
fn run_with_screenshot_writes_the_png_and_the_render_report() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let (png, json) = (dir.join("shot.png"), dir.join("report.json"));
    let out = support::sylva()
        .args([
            "run",
            concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/chains.ron"),
            "--frames",
            "2",
            "--width",
            "96",
            "--height",
            "64",
            "--screenshot",
        ])
        .arg(&png)
        .arg("--report")
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Without a driver an asked-for screenshot is an error (tests/outputs.rs), and this test skips.
    if !out.status.success() && no_driver(&stderr, "screenshot test") {
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("screenshot: "), "{stdout}");
    let (w, h, _) = read_png(&png).unwrap();
    assert_eq!((w, h), (96, 64));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let render = &report["render"];
    assert_eq!(render["frames"], 1);
    // One indirect draw per ring. At 96 × 64 most springs are in the sub-pixel cut's fade band
    // (a tenth of a pixel, ÷ 1.5): they go to the GPU, which keeps their dithered share.
    assert!(render["draw_calls_per_frame"].as_f64().unwrap() <= 3.0, "{render}");
    let drawn = render["instances"].as_u64().unwrap();
    assert!((4_000..=16_384).contains(&drawn), "{render}");
    assert_eq!(render["validation_errors"], 0);
    assert_eq!(render["validation_warnings"], 0);
    for key in ["device", "upload_bytes_per_frame", "gpu_memory_bytes", "frame_ms"] {
        assert!(render.get(key).is_some(), "missing render.{key}");
    }
}

#[test]
fn a_rendered_flight_times_its_first_frame_apart_from_the_flight() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fly.json");
    let out = support::sylva()
        .args(["fly", "--speed", "60", "--seconds", "0.3", "--hz", "10"])
        .args(["--width", "64", "--height", "36", "--report"])
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    // Without a driver the flight flies unrendered, and this test skips.
    if no_driver(&stdout, "rendered flight") {
        return;
    }
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (streaming, render) = (&report["streaming"], &report["render"]);
    // The first frame, which uploads the whole first ring, is rendered before the flight's
    // three and timed apart from them.
    assert_eq!(streaming["frames"], 3, "{streaming}");
    assert_eq!(render["frames"], 4, "{render}");
    let first = streaming["first_frame_ms"].as_f64().unwrap();
    assert!(first > 0.0, "{streaming}");
    assert!(stdout.contains("first frame (the ring uploaded)"), "{stdout}");
    assert!(stdout.contains("render CPU ms p50"), "{stdout}");
    // The renderer's own CPU work in a frame of the flight is part of that frame.
    let cpu = streaming["render_cpu_ms"]["max"].as_f64().unwrap();
    assert!(
        cpu > 0.0 && cpu <= streaming["frame_ms"]["max"].as_f64().unwrap(),
        "{streaming}"
    );
    // Where the OS tells a thread's times, the frame thread's time on a core and queued for
    // one are reported beside it, and its time on a core is some of every frame.
    if sylva::runtime::metrics::ThreadTimes::now().is_some() {
        assert!(
            streaming["render_on_cpu_ms"]["p50"].as_f64().unwrap() > 0.0,
            "{streaming}"
        );
        assert!(streaming["render_queued_ms"]["max"].is_f64(), "{streaming}");
        assert!(stdout.contains("of it on a core"), "{stdout}");
    }
    assert_eq!(render["validation_errors"], 0);
}

/// Size of the world's golden images: large enough to show trees and grass.
const WORLD_SIZE: (u32, u32) = (320, 180);

/// The default world seen from above, over many chunks.
fn aerial_camera() -> Camera {
    Camera {
        position: Vec3::new(-1100.0, 560.0, 1150.0),
        target: Vec3::new(-760.0, 140.0, 700.0),
        far: 3000.0,
        ..Camera::default()
    }
}

/// Where the close views of the default world look for grass and trees: a valley with both.
const CLOSE_VIEWS: Vec3 = Vec3::new(-250.0, 120.0, 500.0);

/// The default world settled around the aerial camera's target and the close views' spot,
/// ready to render.
fn settled_world() -> sylva::Built {
    let scene = Scene::world();
    let mut built = sylva::build_all(&scene, 2).unwrap();
    let a = aerial_camera();
    let viewers = [a.target, CLOSE_VIEWS].map(|at| sylva::runtime::stream::Viewer {
        position: at,
        forward: a.target - a.position,
    });
    let world = built.world.as_mut().unwrap();
    world.settle(&mut built.app, &viewers, |_| {});
    built.app.update(0.0);
    built
}

/// Trees within 300 m of [`CLOSE_VIEWS`], by root position.
fn tree_roots(app: &sylva::runtime::App) -> Vec<Vec3> {
    use sylva::systems::world::TreeInstance;
    let mut roots: Vec<Vec3> = app
        .world
        .entities
        .query::<&TreeInstance>()
        .iter()
        .map(|t| t.position)
        .filter(|p| p.distance(CLOSE_VIEWS) < 300.0)
        .collect();
    roots.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).unwrap());
    roots
}

/// A camera at eye height on grass, looking at the trees around it: a ground-cover sample
/// with grass (every 97th by position, for speed) within 300 m of [`CLOSE_VIEWS`], on dry
/// ground, with no tree within 10 m, with the most trees 15–60 m away. Patches lie in the
/// batch in the order their chunks were installed, which the generation threads' timing
/// decides, so the spots are sorted first.
fn valley_floor_camera(app: &sylva::runtime::App, trees: &[Vec3]) -> Camera {
    let terrain = app
        .world
        .resources
        .get::<sylva::runtime::extract::TerrainBatch>()
        .unwrap();
    let near = |g: Vec3| {
        trees
            .iter()
            .filter(|t| (15.0..60.0).contains(&t.distance(g)))
            .copied()
            .collect::<Vec<_>>()
    };
    let mut roots: Vec<Vec3> = Vec::new();
    for p in &terrain.patches {
        let Some(cover) = &p.cover else { continue };
        let r = p.resolution as usize;
        for (k, &sample) in cover.samples.iter().enumerate() {
            let (i, j) = (k % cover.side as usize, k / cover.side as usize);
            let (x, z) = (i * cover.spacing as usize, j * cover.spacing as usize);
            if sample & 0xffff == 0 || sample >> 16 & 0xff == 255 || x >= r || z >= r || p.water[z * r + x] > 0.0 {
                continue;
            }
            let at = p.origin
                + Vec3::new(x as f32, p.height[z * r + x], z as f32) * Vec3::new(p.cell_size, 1.0, p.cell_size);
            if at.distance(CLOSE_VIEWS) < 300.0 {
                roots.push(at);
            }
        }
    }
    roots.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).unwrap());
    drop(terrain);
    let centre_of = |g: Vec3| {
        let around = near(g);
        around.iter().sum::<Vec3>() / around.len().max(1) as f32
    };
    // The ground between the eye and the trees stays below the line of sight.
    let open = |g: Vec3| {
        let (eye, to) = (g + Vec3::Y * 1.7, centre_of(g).with_y(g.y + 4.0));
        (1..20).all(|k| {
            let p = eye.lerp(to, k as f32 / 20.0);
            ground_at(app, p) < p.y - 0.5
        })
    };
    let root = roots
        .into_iter()
        .step_by(97)
        .filter(|&g| trees.iter().all(|t| t.distance(g) > 10.0) && near(g).len() >= 8 && open(g))
        .max_by_key(|&g| near(g).len())
        .expect("grass in the resident chunks");
    let centre = centre_of(root);
    Camera {
        position: root + Vec3::new(0.0, 1.7, 0.0),
        target: Vec3::new(centre.x, root.y + 4.0, centre.z),
        far: 3000.0,
        ..Camera::default()
    }
}

/// A camera 30 m from a tree with many neighbours within 25 m, on the side away from them
/// and in the open (no tree or shrub within 15 m), looking at its crown: of such trees,
/// the one with the most neighbours.
fn forest_edge_camera(app: &sylva::runtime::App, trees: &[Vec3]) -> Camera {
    let neighbours = |t: Vec3| trees.iter().filter(|o| o.distance(t) < 25.0).count();
    let camera = |tree: Vec3| {
        let centre = trees.iter().filter(|o| o.distance(tree) < 25.0).sum::<Vec3>() / neighbours(tree) as f32;
        let away = (tree - centre).with_y(0.0).try_normalize().unwrap_or(Vec3::X);
        let at = tree + away * 30.0;
        Camera {
            // Above the crowns' height and at least 4 m above the ground the camera stands on.
            position: at.with_y((tree.y + 6.0).max(ground_at(app, at) + 4.0)),
            target: tree + Vec3::new(0.0, 6.0, 0.0),
            far: 3000.0,
            ..Camera::default()
        }
    };
    // Well inside the square the trees were listed from, so its trees all count.
    let in_the_open = |c: &Camera| {
        c.position.with_y(0.0).distance(CLOSE_VIEWS.with_y(0.0)) < 200.0
            && trees
                .iter()
                .all(|o| o.with_y(0.0).distance(c.position.with_y(0.0)) > 15.0)
    };
    let tree = trees
        .iter()
        .copied()
        .filter(|&t| in_the_open(&camera(t)))
        .max_by_key(|&t| neighbours(t))
        .expect("a forest edge in the resident chunks");
    camera(tree)
}

#[test]
fn the_world_renders_like_its_golden_images() {
    let Some(mut r) = renderer_or_skip(WORLD_SIZE.0, WORLD_SIZE.1) else {
        return;
    };
    let mut built = settled_world();
    let trees = tree_roots(&built.app);
    let cameras = [
        ("world_valley", valley_floor_camera(&built.app, &trees)),
        ("world_forest_edge", forest_edge_camera(&built.app, &trees)),
        ("world_aerial", aerial_camera()),
    ];
    for (name, camera) in cameras {
        built.app.world.resources.insert(camera);
        let stats = sylva::render(&mut r, &built.app, false).unwrap();
        // Trees small on screen are impostor cards alone (from above, at this size, all of them).
        assert!(
            stats.chunks > 0 && stats.cylinders + stats.cards > 0,
            "{name}: {stats:?}"
        );
        let culled = r.read_pixels();
        check_golden_sized(name, WORLD_SIZE, &culled);
        // Culling leaves out no tree in view and no shadow that falls on the ground in view:
        // every tree drawn, in view and into the shadow map, changes next to no pixel.
        let settled = |r: &mut Renderer, culling: bool| {
            r.set_tree_culling(culling);
            for _ in 0..=sylva::vk::FRAMES_IN_FLIGHT {
                sylva::render(r, &built.app, false).unwrap();
            }
            r.read_pixels()
        };
        let (culled, all) = (settled(&mut r, true), settled(&mut r, false));
        r.set_tree_culling(true);
        let off = culled.chunks(4).zip(all.chunks(4)).filter(|(a, b)| a != b).count();
        assert!(off <= 20, "{name}: {off} pixels differ with every tree drawn");
    }
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

/// The ground's height under `p` (its nearest sample in the resident chunks; 0 outside them).
fn ground_at(app: &sylva::runtime::App, p: Vec3) -> f32 {
    ground_within(app, p).unwrap_or(0.0)
}

/// The ground's height at `p`, where a patch of the world's terrain holds it.
fn ground_within(app: &sylva::runtime::App, p: Vec3) -> Option<f32> {
    let batch = app
        .world
        .resources
        .get::<sylva::runtime::extract::TerrainBatch>()
        .unwrap();
    batch.patches.iter().find_map(|patch| {
        let n = patch.resolution as usize;
        let (i, j) = (
            ((p.x - patch.origin.x) / patch.cell_size).round(),
            ((p.z - patch.origin.z) / patch.cell_size).round(),
        );
        let inside = (0.0..n as f32).contains(&i) && (0.0..n as f32).contains(&j);
        inside.then(|| patch.origin.y + patch.height[j as usize * n + i as usize])
    })
}

fn river_mouth(app: &sylva::runtime::App) -> Option<(Vec3, Vec3, Vec3)> {
    let sea = sea_level(app);
    let rivers = water_samples(app, &|water, level| water > 0.05 && level > sea + 1.0);
    let seas = water_samples(app, &|water, level| water > 1.0 && level < sea + 0.3);
    eprintln!("sea level {sea}: {} river and {} sea samples", rivers.len(), seas.len());
    let mut best: Option<(f32, Vec3, Vec3)> = None;
    for r in &rivers {
        for s in &seas {
            let d = (*s - *r).with_y(0.0).length();
            if best.is_none_or(|b| d < b.0) {
                best = Some((d, *r, *s));
            }
        }
    }
    let open = water_samples(app, &|water, _| water > 4.0);
    best.and_then(|(_, river, sea)| {
        let nearest = open.iter().min_by(|a, b| a.distance(sea).total_cmp(&b.distance(sea)))?;
        Some((river, sea, *nearest))
    })
}

/// Every other cell of the world's terrain where `wanted(water depth, water level)`, at its
/// water level.
fn water_samples(app: &sylva::runtime::App, wanted: &dyn Fn(f32, f32) -> bool) -> Vec<Vec3> {
    let batch = app
        .world
        .resources
        .get::<sylva::runtime::extract::TerrainBatch>()
        .unwrap();
    batch
        .patches
        .iter()
        .flat_map(|p| {
            let n = p.resolution as usize;
            (0..p.water.len()).step_by(2).filter_map(move |k| {
                let (i, j) = ((k % n) as f32, (k / n) as f32);
                let level = p.origin.y + p.height[k] + p.water[k];
                wanted(p.water[k], level)
                    .then(|| Vec3::new(p.origin.x + i * p.cell_size, level, p.origin.z + j * p.cell_size))
            })
        })
        .collect()
}

/// The sea's surface: the lowest level of deep water.
fn sea_level(app: &sylva::runtime::App) -> f32 {
    water_samples(app, &|water, _| water > 1.0)
        .iter()
        .fold(f32::INFINITY, |lo, p| lo.min(p.y))
}

/// At eye height on a river's bank, looking upstream along it to its water 45 m on: of the
/// river's samples with a clear channel around them (at least eight within 30 m), the one
/// whose bank on some side stands lowest over the water 5 m out (the world's rivers run in
/// the channels they cut), with the most channel around it and the fewest trees near.
fn river_bank_camera(app: &sylva::runtime::App, trees: &[Vec3]) -> Option<Camera> {
    let sea = sea_level(app);
    let mut rivers = water_samples(app, &|water, level| water > 0.05 && level > sea + 1.0);
    // Patches lie in their chunks' install order: sorted, ties go the same way every run.
    rivers.sort_by(|a, b| a.to_array().partial_cmp(&b.to_array()).unwrap());
    let flat = |p: Vec3| p.with_y(0.0);
    let mut best: Option<(f32, Vec3, Vec3)> = None;
    for &c in &rivers {
        let stretch: Vec<Vec3> = rivers
            .iter()
            .copied()
            .filter(|q| flat(*q).distance(flat(c)) < 30.0)
            .collect();
        if stretch.len() < 8 {
            continue;
        }
        let mean = stretch.iter().sum::<Vec3>() / stretch.len() as f32;
        // The channel's axis: the principal direction of its samples across the ground.
        let (mut xx, mut xz, mut zz) = (0.0, 0.0, 0.0);
        for q in &stretch {
            let d = *q - mean;
            (xx, xz, zz) = (xx + d.x * d.x, xz + d.x * d.z, zz + d.z * d.z);
        }
        let angle = 0.5 * f32::atan2(2.0 * xz, xx - zz);
        let mut axis = Vec3::new(angle.cos(), 0.0, angle.sin());
        // Upstream is where the water stands higher.
        if stretch
            .iter()
            .map(|q| (*q - mean).dot(axis) * (q.y - mean.y))
            .sum::<f32>()
            < 0.0
        {
            axis = -axis;
        }
        let across = Vec3::new(-axis.z, 0.0, axis.x);
        let half_width = stretch
            .iter()
            .map(|q| (*q - c).dot(across).abs())
            .fold(0.0, f32::max)
            .min(12.0);
        for side in [across, -across] {
            let bank = c + side * (half_width + 5.0);
            let rise = |p: Vec3| ground_within(app, p).map_or(f32::INFINITY, |h| h - c.y);
            let seen = rise(bank + side * 20.0) < 15.0 && rise(c + axis * 40.0).is_finite();
            let shaded = trees.iter().filter(|t| flat(**t).distance(flat(bank)) < 20.0).count();
            let score = stretch.len() as f32 - 4.0 * shaded as f32 - 10.0 * rise(bank);
            if seen && best.is_none_or(|b| score > b.0) {
                best = Some((score, bank - axis * 5.0, c + axis * 40.0));
            }
        }
    }
    let (_, bank, ahead) = best?;
    Some(Camera {
        position: bank.with_y(ground_at(app, bank) + 1.7),
        target: ahead,
        far: 3000.0,
        ..Camera::default()
    })
}

/// Pictures of the default world at 1280×720 for people to judge the look by, written
/// to `SYLVA_PICTURES` (a folder; the temporary folder by default): the valley floor and
/// the forest edge (`docs/pictures/`), the aerial view, the ground close up and a river
/// mouth. `SYLVA_MSAA=4` smooths their edges; `SYLVA_PICTURE=name` renders that one alone.
#[test]
#[ignore]
fn pictures_of_the_world_at_720p() {
    let Some(mut r) = renderer_or_skip(1280, 720) else {
        return;
    };
    let dir = std::env::var_os("SYLVA_PICTURES").map_or_else(std::env::temp_dir, PathBuf::from);
    let mut built = settled_world();
    let trees = tree_roots(&built.app);
    let valley = valley_floor_camera(&built.app, &trees);
    let ground = valley.position - Vec3::new(0.0, 1.7, 0.0);
    let ahead = (valley.target - valley.position).with_y(0.0).normalize();
    let mut cameras = vec![
        ("world-valley", valley),
        ("world-forest-edge", forest_edge_camera(&built.app, &trees)),
        ("world-aerial", aerial_camera()),
        (
            "ground-close",
            Camera {
                position: ground + Vec3::new(0.0, 4.0, 0.0),
                target: ground + ahead * 14.0 - Vec3::new(0.0, 1.0, 0.0),
                far: 3000.0,
                ..Camera::default()
            },
        ),
    ];
    let mouth = river_mouth(&built.app);
    eprintln!("river mouth (river, sea, open water): {mouth:?}");
    if let Some((river, sea, open)) = mouth {
        let down = (sea - river).with_y(0.0).normalize();
        let camera = |position, target| Camera {
            position,
            target,
            far: 3000.0,
            ..Camera::default()
        };
        cameras.push((
            "river",
            camera(river - down * 10.0 + Vec3::new(0.0, 35.0, 0.0), river + down * 5.0),
        ));
        cameras.push((
            "shore",
            camera(
                open + (open - sea).with_y(0.0).normalize_or_zero() * 40.0 + Vec3::new(0.0, 14.0, 0.0),
                sea,
            ),
        ));
    }
    if let Some(camera) = river_bank_camera(&built.app, &trees) {
        cameras.push(("world-river-meadow", camera));
    }
    // Inside a forest: at eye height among the trees around the one with the most neighbours.
    let neighbours = |t: Vec3| trees.iter().filter(|o| o.distance(t) < 25.0).count();
    if let Some(&core) = trees.iter().max_by_key(|&&t| neighbours(t)) {
        let near: Vec<Vec3> = trees.iter().copied().filter(|o| o.distance(core) < 25.0).collect();
        let centre = near.iter().sum::<Vec3>() / near.len() as f32;
        let gap = near
            .iter()
            .map(|t| (*t - centre).with_y(0.0))
            .max_by(|a, b| a.length().total_cmp(&b.length()))
            .and_then(|d| d.try_normalize())
            .unwrap_or(Vec3::X);
        let ahead = centre + gap * 30.0;
        cameras.push((
            "world-inside-forest",
            Camera {
                position: centre.with_y(ground_at(&built.app, centre) + 1.7),
                target: ahead.with_y(ground_at(&built.app, ahead) + 4.0),
                far: 3000.0,
                ..Camera::default()
            },
        ));
    }
    let low_sun = sylva::runtime::extract::Sun {
        direction: Vec3::new(0.75, -0.16, -0.64),
        ..sylva::runtime::extract::Sun::default()
    };
    cameras.push(("world-aerial-low-sun", aerial_camera()));
    let only = std::env::var("SYLVA_PICTURE").ok();
    for (name, camera) in cameras {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        built.app.world.resources.insert(camera);
        if name == "world-aerial-low-sun" {
            built.app.world.resources.insert(low_sun);
        }
        // Frames until the trees' counts are read back: the last draws with everything
        // uploaded, timed alone from its start to its pixels.
        for _ in 0..sylva::vk::FRAMES_IN_FLIGHT {
            sylva::render(&mut r, &built.app, false).unwrap();
        }
        r.finish().unwrap();
        let started = std::time::Instant::now();
        let stats = sylva::render(&mut r, &built.app, false).unwrap();
        r.finish().unwrap();
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let path = dir.join(format!("{name}.png"));
        r.save_png(&path).unwrap();
        eprintln!(
            "{}: {ms:.0} ms; trees {} (segments {}, leaves {}), cards {}, blades {}; draw calls {} (+{} shadow); GPU memory {:.0} MB",
            path.display(),
            stats.trees,
            stats.cylinders,
            stats.leaves,
            stats.cards,
            stats.grass,
            stats.draw_calls,
            stats.shadow_draw_calls,
            stats.gpu_allocated_bytes as f64 / 1e6
        );
    }
    assert_validation_clean(&r);
}
