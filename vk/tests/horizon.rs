//! The horizon: the far field meets the streamed chunks with no crack, stays under
//! them, and the sea runs to the horizon under a sky without a band. Synthetic
//! frames, probed by projecting world points with the camera. Without a Vulkan
//! driver these tests print `SKIPPED` and pass, unless `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, HorizonBatch, HorizonField, Sun, TerrainBatch, TerrainPatch};
use sylva_runtime::glam::{Vec2, Vec3, Vec4Swizzles};
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, Renderer};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

/// Material byte of sand (sylva-systems' `Material`): the chunks' colour, unlike the
/// far field's green.
const SAND: u8 = 5;

/// Samples per chunk side and metres between them: chunks of 256 m.
const CHUNK_SAMPLES: u32 = 65;
const CHUNK_CELL: f32 = 4.0;
const CHUNK: f32 = 256.0;

/// The far field's spacing and samples per side (8 km across).
const FIELD_SPACING: f32 = 64.0;
const FIELD_SAMPLES: u32 = 129;

/// The basin-scale ground both the chunks and the far field follow: rolling hills.
fn basin(x: f32, z: f32) -> f32 {
    60.0 + 35.0 * (x / 180.0).sin() * (z / 230.0).cos() + 15.0 * ((x + z) / 97.0).sin()
}

/// The chunks' own detail on top, which the far field does not have.
fn detail(x: f32, z: f32) -> f32 {
    4.0 * (x / 7.3).sin() * (z / 5.1).cos()
}

/// The chunks: 3 × 3 around the origin less the corner at +x, +z (a ring still loading
/// there), so the resident region is not convex.
fn chunks() -> TerrainBatch {
    let mut patches = Vec::new();
    for j in -1..=1 {
        for i in -1..=1 {
            if (i, j) == (1, 1) {
                continue;
            }
            let origin = Vec3::new(i as f32 * CHUNK - 0.5 * CHUNK, 0.0, j as f32 * CHUNK - 0.5 * CHUNK);
            let n = (CHUNK_SAMPLES * CHUNK_SAMPLES) as usize;
            let height = (0..n)
                .map(|k| {
                    let x = origin.x + (k as u32 % CHUNK_SAMPLES) as f32 * CHUNK_CELL;
                    let z = origin.z + (k as u32 / CHUNK_SAMPLES) as f32 * CHUNK_CELL;
                    basin(x, z) + detail(x, z)
                })
                .collect();
            patches.push(TerrainPatch {
                key: [i, j],
                origin,
                cell_size: CHUNK_CELL,
                resolution: CHUNK_SAMPLES,
                height,
                material: vec![SAND; n],
                water: vec![0.0; n],
                cover: None,
                dirty: true,
            });
        }
    }
    TerrainBatch {
        patches,
        evicted: Vec::new(),
    }
}

/// The far field around the origin from the basin heights alone; no sea.
fn field() -> HorizonField {
    let half = 0.5 * FIELD_SPACING * (FIELD_SAMPLES - 1) as f32;
    let origin = Vec2::splat(-half);
    let n = FIELD_SAMPLES as usize;
    HorizonField {
        origin,
        spacing: FIELD_SPACING,
        resolution: FIELD_SAMPLES,
        height: (0..n * n)
            .map(|k| {
                let p = origin + Vec2::new((k % n) as f32, (k / n) as f32) * FIELD_SPACING;
                basin(p.x, p.y)
            })
            .collect(),
        canopy: Vec::new(),
    }
}

/// A renderer whose sky is pure magenta and has no fog, so any pixel the surfaces leave
/// uncovered is unmistakable and no surface takes the sky's colour.
fn magenta_sky() -> Option<Renderer> {
    let mut r = renderer_or_skip(WIDTH, HEIGHT)?;
    let magenta = Vec3::new(1.0, 0.0, 1.0);
    r.atmosphere.zenith = magenta;
    r.atmosphere.horizon = magenta;
    r.atmosphere.ground_haze = magenta;
    r.atmosphere.fog_density = 0.0;
    Some(r)
}

/// An sRGB pixel as (r, g, b) in 0..1.
fn pixel(pixels: &[u8], x: u32, y: u32) -> [f32; 3] {
    let k = ((y * WIDTH + x) * 4) as usize;
    [0, 1, 2].map(|i| f32::from(pixels[k + i]) / 255.0)
}

fn is_sky([r, g, b]: [f32; 3]) -> bool {
    r > 0.6 && b > 0.6 && g < 0.35
}

/// Where `world` lands on the target, pixels, if in front of the camera and on it.
fn project(camera: &Camera, world: Vec3) -> Option<(i64, i64)> {
    let clip = camera.view_projection(WIDTH as f32 / HEIGHT as f32) * world.extend(1.0);
    if clip.w <= 0.0 {
        return None;
    }
    let ndc = clip.xy() / clip.w;
    let (x, y) = (
        ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as i64,
        ((ndc.y * 0.5 + 0.5) * HEIGHT as f32) as i64,
    );
    ((0..WIDTH as i64).contains(&x) && (0..HEIGHT as i64).contains(&y)).then_some((x, y))
}

/// Renders the chunks, and the far field when `with_field`, from `camera`.
fn render(r: &mut Renderer, camera: Camera, with_field: bool) -> Vec<u8> {
    let mut terrain = chunks();
    let mut horizon = HorizonBatch {
        sea_level: None,
        field: with_field.then(field),
        dirty: true,
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

/// Points along the outer border of the resident chunks (the seam), on the chunks' ground,
/// every 8 m, each with the unit vector pointing into the chunk it borders.
fn seam() -> Vec<(Vec3, Vec2)> {
    // The L-shaped border, corner by corner, counter-clockwise seen from above.
    let h = 0.5 * CHUNK;
    let corners = [
        Vec2::new(-3.0 * h, -3.0 * h),
        Vec2::new(3.0 * h, -3.0 * h),
        Vec2::new(3.0 * h, h),
        Vec2::new(h, h),
        Vec2::new(h, 3.0 * h),
        Vec2::new(-3.0 * h, 3.0 * h),
    ];
    let mut points = Vec::new();
    for k in 0..corners.len() {
        let (a, b) = (corners[k], corners[(k + 1) % corners.len()]);
        let along = (b - a).normalize();
        // Counter-clockwise in (x, z): the inside is to the left.
        let inward = Vec2::new(-along.y, along.x);
        let steps = (a.distance(b) / 8.0) as usize;
        for s in 1..steps {
            let p = a + along * (s as f32 * 8.0);
            points.push((Vec3::new(p.x, basin(p.x, p.y) + detail(p.x, p.y), p.y), inward));
        }
    }
    points
}

/// Cameras inside the chunks looking out across the seam: low and level, on a hill,
/// and from high up at the notch the missing chunk leaves.
fn cameras() -> Vec<Camera> {
    let at = |position: Vec3, target: Vec3| Camera {
        position,
        target,
        near: 0.5,
        far: 3000.0,
        ..Camera::default()
    };
    vec![
        at(Vec3::new(0.0, 110.0, 0.0), Vec3::new(-900.0, 40.0, 100.0)),
        at(Vec3::new(60.0, 160.0, -40.0), Vec3::new(700.0, 20.0, -500.0)),
        at(Vec3::new(-50.0, 500.0, -50.0), Vec3::new(500.0, 0.0, 500.0)),
        at(Vec3::new(-200.0, 260.0, 200.0), Vec3::new(-200.0, 0.0, 900.0)),
    ]
}

/// Sky pixels within a window around each seam point on screen, and how many points were
/// on screen.
fn sky_along_seam(pixels: &[u8], camera: &Camera) -> (usize, usize) {
    let (mut sky, mut seen) = (0, 0);
    for (p, _) in seam() {
        let Some((x, y)) = project(camera, p) else {
            continue;
        };
        seen += 1;
        for dy in -6..=6 {
            for dx in -3..=3 {
                let (px, py) = (x + dx, y + dy);
                if (0..WIDTH as i64).contains(&px)
                    && (0..HEIGHT as i64).contains(&py)
                    && is_sky(pixel(pixels, px as u32, py as u32))
                {
                    sky += 1;
                }
            }
        }
    }
    (sky, seen)
}

#[test]
fn the_horizon_ring_meets_the_chunks_with_no_crack() {
    let Some(mut r) = magenta_sky() else {
        return;
    };
    for camera in cameras() {
        // Without the far field the probe sees the sky beyond the chunks' edge: it can
        // tell a crack.
        let bare = render(&mut r, camera, false);
        let (sky, seen) = sky_along_seam(&bare, &camera);
        assert!(seen >= 20, "the seam is on screen from {camera:?}: {seen} points");
        assert!(
            sky > 0,
            "without a far field the sky shows along the seam from {camera:?}"
        );
        let pixels = render(&mut r, camera, true);
        let (sky, _) = sky_along_seam(&pixels, &camera);
        assert_eq!(sky, 0, "sky pixels along the seam seen from {camera:?}");
    }
    assert_clean_shutdown(r);
}

#[test]
fn the_far_field_stays_under_the_chunks() {
    let Some(mut r) = magenta_sky() else {
        return;
    };
    for camera in cameras() {
        // The far field casts no shadow and there is no fog, so wherever the chunks cover
        // a pixel whole they must look the same with the field as without it: a field
        // poking through them, or fighting them for depth, would change the pixel.
        let bare = render(&mut r, camera, false);
        let with = render(&mut r, camera, true);
        let (mut covered, mut changed) = (0, Vec::new());
        for y in 1..HEIGHT - 1 {
            for x in 1..WIDTH - 1 {
                // Pixels at the chunks' silhouette blend their samples with what lies
                // behind, which the field changes: only whole pixels count.
                let whole = (y - 1..=y + 1).all(|v| (x - 1..=x + 1).all(|u| !is_sky(pixel(&bare, u, v))));
                if !whole {
                    continue;
                }
                covered += 1;
                let (a, b) = (pixel(&bare, x, y), pixel(&with, x, y));
                if (0..3).any(|k| (a[k] - b[k]).abs() > 2.5 / 255.0) {
                    changed.push((x, y, a, b));
                }
            }
        }
        assert!(
            covered > (WIDTH * HEIGHT / 16) as usize,
            "chunks cover {covered} pixels from {camera:?}"
        );
        assert!(
            changed.is_empty(),
            "{} of {covered} chunk pixels changed by the far field from {camera:?}, e.g. {:?}",
            changed.len(),
            &changed[..changed.len().min(5)]
        );
    }
    assert_clean_shutdown(r);
}

/// Rows of a level view over the open sea (or the bare sky below the horizon when
/// `sea` is none): each row's colour at the middle column.
fn level_view(r: &mut Renderer, sea: Option<f32>) -> Vec<[f32; 3]> {
    let camera = Camera {
        position: Vec3::new(0.0, 40.0, 0.0),
        target: Vec3::new(0.0, 40.0, -100.0),
        far: 2000.0,
        ..Camera::default()
    };
    let mut horizon = HorizonBatch {
        sea_level: sea,
        field: None,
        dirty: false,
    };
    r.render(FrameInput {
        horizon: Some(&mut horizon),
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .unwrap();
    assert_validation_clean(r);
    let pixels = r.read_pixels();
    (0..HEIGHT).map(|y| pixel(&pixels, WIDTH / 2, y)).collect()
}

fn luma([r, g, b]: [f32; 3]) -> f32 {
    0.2126 * r + 0.7152 * g + 0.0722 * b
}

#[test]
fn the_sea_runs_to_the_horizon() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let sea = level_view(&mut r, Some(0.0));
    let haze = level_view(&mut r, None);
    let horizon = (HEIGHT / 2) as usize;
    let bottom = HEIGHT as usize - 1;
    // Below the horizon the sea, bluer than the haze the bare sky has there and darker
    // than the sky at the horizon; the sky above is the same with or without it.
    let blue = |[r, g, b]: [f32; 3]| b / (r + g + b).max(1e-6);
    assert!(
        blue(sea[bottom]) > blue(haze[bottom]) + 0.03,
        "sea {:?}, haze {:?}",
        sea[bottom],
        haze[bottom]
    );
    assert!(
        luma(sea[bottom]) < luma(sea[horizon - 1]) - 0.1,
        "sea {:?}",
        sea[bottom]
    );
    assert_eq!(sea[..horizon - 1], haze[..horizon - 1], "the sky above the sea");
    // The sea fades into the horizon's haze with no step at the horizon.
    for y in horizon - 4..horizon + 4 {
        let step = (luma(sea[y + 1]) - luma(sea[y])).abs();
        assert!(step < 0.03, "rows {y}, {}: {:?} → {:?}", y + 1, sea[y], sea[y + 1]);
    }
    assert_clean_shutdown(r);
}

#[test]
fn the_sky_has_no_band_at_the_horizon() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let sky = level_view(&mut r, None);
    let horizon = (HEIGHT / 2) as usize;
    // Rows above the horizon: brightness may change quickly, but it may not bend sharply
    // (a crease in the gradient, seen as a bright line), nor jump.
    let l: Vec<f32> = sky.iter().map(|&c| luma(c)).collect();
    for y in horizon - 20..horizon + 6 {
        let (step, bend) = ((l[y + 1] - l[y]).abs(), (l[y + 1] - 2.0 * l[y] + l[y - 1]).abs());
        assert!(step < 0.012, "rows {y}, {}: luma {} → {}", y + 1, l[y], l[y + 1]);
        assert!(bend < 0.006, "row {y}: luma {}, {}, {}", l[y - 1], l[y], l[y + 1]);
    }
    assert_clean_shutdown(r);
}
