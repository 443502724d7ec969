//! The ground close up, on a synthetic coast: a beach running into the sea, a
//! river in a gravel bed, cliffs of sandstone and granite, and a mountain tall
//! enough for snow. Pixels are found by projecting world points with the
//! camera and judged by brightness and contrast, not exact colours. Without a
//! Vulkan driver these tests print `SKIPPED` and pass, unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use std::path::PathBuf;

use sylva_runtime::extract::{Camera, HorizonBatch, Sun, TerrainBatch, TerrainPatch};
use sylva_runtime::glam::{Vec3, Vec4Swizzles};
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, Renderer};

/// Material bytes of the terrain (sylva-systems' `Material`).
const GRANITE: u8 = 0;
const SANDSTONE: u8 = 4;
const REGOLITH: u8 = 6;

/// Samples per side of a patch, one metre apart.
const RES: u32 = 129;
/// The sea's level, metres.
const SEA: f32 = 0.0;
/// Where the cliffs rise, and how high.
const CLIFF_FOOT: f32 = 85.0;
const CLIFF_HEIGHT: f32 = 45.0;
/// The river's axis (x) and half its width, metres.
const RIVER: f32 = 40.0;
const RIVER_HALF: f32 = 4.0;

/// Ground falling from 3 m at z = 60 to the sea floor 4 m down, beaches where it crosses the sea.
fn coast(z: f32) -> f32 {
    (3.0 - (z - 60.0) * 0.12).clamp(-4.0, 3.0)
}

/// The ground at (x, z): the coast, a river channel cut into it, cliffs at 75° to the east
/// and beyond them a mountain's wall, 300 m high, under a plateau that rises gently east.
fn ground(x: f32, z: f32) -> f32 {
    let across = ((x - RIVER).abs() / RIVER_HALF).min(1.0);
    let channel = 1.5 * (1.0 - across * across);
    let cliff = ((x - CLIFF_FOOT) * 3.7).clamp(0.0, CLIFF_HEIGHT);
    let wall = ((x - 150.0) * 6.0).clamp(0.0, 300.0);
    let plateau = (x - 200.0).max(0.0) * 0.2 + (z * 0.11).sin() * (x - 200.0).clamp(0.0, 8.0);
    coast(z) - channel + cliff.max(wall + plateau)
}

/// The river's surface over (x, z), where it runs above the sea.
fn river_level(z: f32) -> f32 {
    coast(z) - 0.7
}

/// The coast as two patches: the beach, river and cliffs, then the mountain.
fn coast_batch() -> TerrainBatch {
    let patch = |key: [i32; 2]| {
        let origin = Vec3::new(key[0] as f32 * (RES - 1) as f32, 0.0, 0.0);
        let n = (RES * RES) as usize;
        let (mut height, mut water, mut material) = (vec![0.0; n], vec![0.0; n], vec![REGOLITH; n]);
        for j in 0..RES {
            for i in 0..RES {
                let k = (j * RES + i) as usize;
                let (x, z) = (origin.x + i as f32, j as f32);
                let h = ground(x, z);
                let in_river = (x - RIVER).abs() < RIVER_HALF;
                let level = if in_river { river_level(z).max(SEA) } else { SEA };
                height[k] = h;
                water[k] = (level - h).max(0.0);
                if x > CLIFF_FOOT - 1.0 {
                    material[k] = if z < 64.0 { SANDSTONE } else { GRANITE };
                }
            }
        }
        TerrainPatch {
            key,
            origin,
            cell_size: 1.0,
            resolution: RES,
            height,
            material,
            water,
            cover: None,
            dirty: true,
        }
    };
    TerrainBatch {
        patches: vec![patch([0, 0]), patch([1, 0])],
        evicted: Vec::new(),
    }
}

/// Renders the coast from `camera`, with its sea; returns the pixels.
fn render(r: &mut Renderer, camera: Camera) -> Vec<u8> {
    let mut terrain = coast_batch();
    let mut horizon = HorizonBatch {
        sea_level: Some(SEA),
        field: None,
        dirty: false,
    };
    r.render(FrameInput {
        terrain: Some(&mut terrain),
        horizon: Some(&mut horizon),
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .unwrap();
    assert_validation_clean(r);
    r.read_pixels()
}

fn camera(position: Vec3, target: Vec3) -> Camera {
    Camera {
        position,
        target,
        far: 3000.0,
        ..Camera::default()
    }
}

/// Close views of the coast: the sandstone cliff, the granite cliff, the beach, the river,
/// and the snow on the mountain.
fn views() -> [(&'static str, Camera); 5] {
    [
        (
            "cliff-sandstone",
            camera(Vec3::new(62.0, 9.0, 44.0), Vec3::new(86.0, 14.0, 36.0)),
        ),
        (
            "cliff-granite",
            camera(Vec3::new(66.0, 6.0, 96.0), Vec3::new(86.0, 12.0, 78.0)),
        ),
        ("shore", camera(Vec3::new(18.0, 2.4, 76.0), Vec3::new(30.0, 0.0, 86.0))),
        ("river", camera(Vec3::new(35.0, 5.0, 52.0), Vec3::new(RIVER, 1.0, 60.0))),
        (
            "snow",
            camera(Vec3::new(135.0, 325.0, 40.0), Vec3::new(200.0, 296.0, 64.0)),
        ),
    ]
}

/// Pictures of the coast at 1280×720 for people to judge the ground by, written to
/// `SYLVA_PICTURES` (a folder; the temporary folder by default) as `ground-<view>.png`,
/// with each frame's time.
#[test]
#[ignore]
fn pictures_of_the_ground_at_720p() {
    let Some(mut r) = renderer_or_skip(1280, 720) else {
        return;
    };
    let dir = std::env::var_os("SYLVA_PICTURES").map_or_else(std::env::temp_dir, PathBuf::from);
    for (name, camera) in views() {
        render(&mut r, camera);
        // The fastest of three: other work on the machine only slows a frame down.
        let ms = (0..3)
            .map(|_| {
                let started = std::time::Instant::now();
                render(&mut r, camera);
                r.finish().unwrap();
                started.elapsed().as_secs_f64() * 1e3
            })
            .fold(f64::INFINITY, f64::min);
        let path = dir.join(format!("ground-{name}.png"));
        r.save_png(&path).unwrap();
        eprintln!("{}: {ms:.0} ms", path.display());
    }
    assert_clean_shutdown(r);
}

const WIDTH: u32 = 160;
const HEIGHT: u32 = 120;

/// Where `world` lands on the target, pixels.
fn project(camera: &Camera, world: Vec3) -> (u32, u32) {
    let clip = camera.view_projection(WIDTH as f32 / HEIGHT as f32) * world.extend(1.0);
    let ndc = clip.xy() / clip.w;
    let x = ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as u32;
    let y = ((ndc.y * 0.5 + 0.5) * HEIGHT as f32) as u32;
    assert!(x < WIDTH && y < HEIGHT, "{world} is off screen");
    (x, y)
}

fn luma(pixels: &[u8], (x, y): (u32, u32)) -> f32 {
    let k = ((y * WIDTH + x) * 4) as usize;
    let c = |i: usize| f32::from(pixels[k + i]) / 255.0;
    0.2126 * c(0) + 0.7152 * c(1) + 0.0722 * c(2)
}

/// The mean luma of the `(2k + 1)²` pixels around `at`.
fn mean_luma(pixels: &[u8], (x, y): (u32, u32), k: u32) -> f32 {
    let window = window(pixels, (x, y), k);
    window.iter().sum::<f32>() / window.len() as f32
}

/// The lumas of the `(2k + 1)²` pixels around `at`, row by row.
fn window(pixels: &[u8], (x, y): (u32, u32), k: u32) -> Vec<f32> {
    let mut out = Vec::new();
    for py in y - k..=y + k {
        for px in x - k..=x + k {
            out.push(luma(pixels, (px, py)));
        }
    }
    out
}

/// How much the luma varies pixel to pixel around `at`: the mean step (down the
/// columns, along the rows) over the `(2k + 1)²` pixels.
fn steps(pixels: &[u8], (x, y): (u32, u32), k: u32) -> (f32, f32) {
    let (mut down, mut along) = (0.0, 0.0);
    for py in y - k..y + k {
        for px in x - k..x + k {
            let here = luma(pixels, (px, py));
            down += (luma(pixels, (px, py + 1)) - here).abs();
            along += (luma(pixels, (px + 1, py)) - here).abs();
        }
    }
    let n = (4 * k * k) as f32;
    (down / n, along / n)
}

/// A cliff shows its rock in level beds, not smeared noise: seen square on, its
/// brightness changes far more from row to row than along a row.
#[test]
fn a_cliff_shows_level_beds_of_rock() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // Square on to the sandstone face, from 14 m.
    let face = Vec3::new(CLIFF_FOOT + 5.0, 18.5, 30.0);
    let camera = camera(face - Vec3::new(14.0, 0.0, 0.0), face);
    let pixels = render(&mut r, camera);
    let (down, along) = steps(&pixels, project(&camera, face), 24);
    assert!(down > 1.6 * along, "row to row {down}, along a row {along}");
    assert_clean_shutdown(r);
}

/// A plane of sandstone rising along x at `degrees`, well above any sea.
fn slope_batch(degrees: f32) -> TerrainBatch {
    let rise = degrees.to_radians().tan();
    let n = (RES * RES) as usize;
    let height = (0..n).map(|k| 20.0 + (k as u32 % RES) as f32 * rise).collect();
    TerrainBatch {
        patches: vec![TerrainPatch {
            key: [0, 0],
            origin: Vec3::ZERO,
            cell_size: 1.0,
            resolution: RES,
            height,
            material: vec![SANDSTONE; n],
            water: vec![0.0; n],
            cover: None,
            dirty: true,
        }],
        evicted: Vec::new(),
    }
}

/// Gentle bare rock is weathered, not bedded: seen square on, a 20° slope of the most
/// strongly banded rock changes as much along a row as from row to row, where level beds
/// would draw contour lines across it; at 60° the same rock shows its beds.
#[test]
fn gentle_rock_shows_no_contour_lines_and_a_steep_face_its_beds() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let mut ratio = |degrees: f32| {
        let rise = degrees.to_radians().tan();
        let at = Vec3::new(64.0, 20.0 + 64.0 * rise, 64.0);
        let normal = Vec3::new(-rise, 1.0, 0.0).normalize();
        let camera = camera(at + normal * 12.0, at);
        r.render(FrameInput {
            terrain: Some(&mut slope_batch(degrees)),
            camera,
            sun: Sun::default(),
            ..FrameInput::default()
        })
        .unwrap();
        let pixels = r.read_pixels();
        let (down, along) = steps(&pixels, project(&camera, at), 24);
        assert!(along > 0.002, "{degrees}°: the rock is not flat colour ({along})");
        down / along
    };
    let (gentle, steep) = (ratio(20.0), ratio(60.0));
    assert!(gentle < 1.3, "20°: row to row {gentle}× along a row");
    assert!(steep > 1.6, "60°: row to row {steep}× along a row");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

/// Sand the sea has just left is darker than the dry beach above it.
#[test]
fn wet_sand_at_the_waterline_is_darker_than_dry_sand_above() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // From above the beach, away from the river; 0.25 m and 1.2 m above the sea.
    let wet = Vec3::new(18.0, 0.25, 60.0 + (3.0 - 0.25) / 0.12);
    let dry = Vec3::new(18.0, 1.2, 60.0 + (3.0 - 1.2) / 0.12);
    let camera = camera(Vec3::new(18.0, 14.0, 70.0), (wet + dry) / 2.0);
    let pixels = render(&mut r, camera);
    let (wet, dry) = (
        mean_luma(&pixels, project(&camera, wet), 2),
        mean_luma(&pixels, project(&camera, dry), 2),
    );
    assert!(wet < 0.8 * dry, "wet sand {wet}, dry sand {dry}");
    assert_clean_shutdown(r);
}

/// A river runs over gravel: seen close through the water, its bed is pebbled (its
/// brightness varies from pixel to pixel), where the sea's sandy floor at the same
/// depth is smooth.
#[test]
fn a_river_bed_is_gravel_and_the_sea_floor_sand() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let spread = |r: &mut Renderer, floor: Vec3| {
        let camera = camera(floor + Vec3::new(0.0, 2.5, 1.0), floor);
        let pixels = render(r, camera);
        let (down, along) = steps(&pixels, project(&camera, floor), 10);
        down + along
    };
    // Both 0.8 m under water.
    let river = spread(&mut r, Vec3::new(RIVER, ground(RIVER, 40.0), 40.0));
    let sea = spread(&mut r, Vec3::new(20.0, -0.8, 60.0 + 3.8 / 0.12));
    assert!(river > 2.0 * sea, "river bed {river}, sea floor {sea}");
    assert_clean_shutdown(r);
}
