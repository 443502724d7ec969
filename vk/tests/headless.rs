//! The headless renderer on synthetic batches (lavapipe with validation in CI).
//! Without a Vulkan driver these tests print `SKIPPED` and pass, unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, CylinderBatch, PointBatch, Sun, TerrainBatch, TerrainPatch};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, FrameStats, Renderer};

fn forest(n: usize) -> CylinderBatch {
    let mut b = CylinderBatch::default();
    for i in 0..n {
        let x = (i % 10) as f32 - 4.5;
        let z = (i / 10) as f32 - 4.5;
        b.push(Vec3::new(x, 0.0, z), Vec3::new(x, 2.0, z), 0.2, 0.1, [120, 80, 50, 255]);
    }
    b
}

fn hill(key: [i32; 2], res: u32) -> TerrainPatch {
    let n = (res * res) as usize;
    let mut p = TerrainPatch {
        key,
        origin: Vec3::new(key[0] as f32, 0.0, key[1] as f32) * (res - 1) as f32 - Vec3::new(8.0, 1.0, 8.0),
        cell_size: 1.0,
        resolution: res,
        height: vec![0.0; n],
        material: vec![5; n],
        water: vec![0.0; n],
        cover: None,
        dirty: true,
    };
    for j in 0..res {
        for i in 0..res {
            let k = (j * res + i) as usize;
            p.height[k] = ((i as f32 * 0.4).sin() + (j as f32 * 0.3).cos()) * 0.5;
            p.water[k] = if i < 3 { 0.3 } else { 0.0 };
        }
    }
    p
}

/// A frame of `batch` alone, seen by [`camera`].
fn draw(r: &mut Renderer, batch: &mut CylinderBatch) -> FrameStats {
    r.render(FrameInput {
        cylinders: vec![batch],
        camera: camera(),
        ..FrameInput::default()
    })
    .unwrap()
}

fn camera() -> Camera {
    Camera {
        position: Vec3::new(0.0, 6.0, 14.0),
        target: Vec3::new(0.0, 1.0, 0.0),
        ..Camera::default()
    }
}

#[test]
fn draws_uploads_only_changes_and_culls() {
    let Some(mut r) = renderer_or_skip(64, 48) else { return };
    let mut trees = forest(100);
    let mut points = PointBatch::default();
    points.push(Vec3::new(0.0, 3.0, 0.0), [255, 255, 255, 255]);
    let mut terrain = TerrainBatch {
        patches: vec![hill([0, 0], 17), hill([1, 0], 17)],
        evicted: Vec::new(),
    };
    let frame =
        |r: &mut Renderer, trees: &mut CylinderBatch, points: &mut PointBatch, terrain: &mut TerrainBatch, camera| {
            r.render(FrameInput {
                cylinders: vec![trees],
                leaves: Vec::new(),
                tree_models: None,
                trees: Vec::new(),
                instanced: Vec::new(),
                time: 0.0,
                points: Some(points),
                show_points: true,
                terrain: Some(terrain),
                grass: None,
                camera,
                sun: Sun::default(),
                horizon: None,
            })
            .unwrap()
        };
    let first = frame(&mut r, &mut trees, &mut points, &mut terrain, camera());
    assert_eq!(first.cylinders, 100);
    assert_eq!(first.points, 1);
    assert_eq!(first.chunks, 2);
    assert_eq!(first.draw_calls, 4);
    assert!(first.upload_bytes >= 100 * 44 + 2 * 17 * 17 * 9);
    assert!(first.allocations > 0);

    let steady = frame(&mut r, &mut trees, &mut points, &mut terrain, camera());
    assert_eq!((steady.upload_bytes, steady.allocations, steady.frees), (0, 0, 0));
    assert_eq!(steady.draw_calls, 4);

    // One changed instance uploads one instance's six arrays.
    trees.end[7].y = 3.0;
    trees.dirty.mark(7, 8);
    let one = frame(&mut r, &mut trees, &mut points, &mut terrain, camera());
    assert_eq!(one.upload_bytes, 12 + 12 + 4 + 4 + 4 + 8);

    let away = Camera {
        target: Vec3::new(0.0, 6.0, 40.0),
        ..camera()
    };
    let culled = frame(&mut r, &mut trees, &mut points, &mut terrain, away);
    assert_eq!((culled.instances(), culled.chunks, culled.draw_calls), (0, 0, 0));
    assert_eq!((culled.chunks_culled, culled.batches_culled), (2, 2));

    // An evicted chunk's textures are freed.
    terrain.patches.pop();
    terrain.evicted.push([1, 0]);
    let evicted = frame(&mut r, &mut trees, &mut points, &mut terrain, camera());
    assert_eq!(evicted.chunks, 1);
    assert_eq!(evicted.frees, 2);
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn growing_batches_reallocate_and_empty_frames_render_sky() {
    let Some(mut r) = renderer_or_skip(32, 32) else { return };
    let stats = r.render(FrameInput {
        camera: camera(),
        ..FrameInput::default()
    });
    assert_eq!(stats.unwrap().draw_calls, 0);
    let sky = r.read_pixels();
    assert_eq!(sky.len(), 32 * 32 * 4);
    // Sky and haze are bluish everywhere (tests/look.rs checks the gradient).
    assert!(
        sky.chunks_exact(4).all(|p| p[2] > p[0] && p[3] == 255),
        "an empty frame is all sky"
    );
    let s = draw(&mut r, &mut forest(10));
    assert_eq!(s.cylinders, 10);
    let s = draw(&mut r, &mut forest(100));
    assert_eq!((s.cylinders, s.allocations, s.frees), (100, 1, 1));
    assert_validation_clean(&r);
}

#[test]
fn a_giant_upload_leaves_no_giant_staging_behind() {
    let Some(mut r) = renderer_or_skip(32, 32) else { return };
    // 600,000 cylinders stage 26 MB: a 32 MiB ring of its own, far past a memory block.
    let first = draw(&mut r, &mut forest(600_000));
    assert!(first.upload_bytes > 25_000_000, "{first:?}");
    // Then small changes every frame, in both frame slots: their rings shrink.
    let mut last = first;
    for n in [100, 90, 80, 70] {
        last = draw(&mut r, &mut forest(n));
    }
    // The instance buffer keeps its room for 600,000; the ring's 32 MiB are given back.
    let freed = first.gpu_memory_bytes.saturating_sub(last.gpu_memory_bytes);
    assert!(
        freed >= 16 << 20,
        "reserved {} B after the giant frame, {} B after small ones",
        first.gpu_memory_bytes,
        last.gpu_memory_bytes
    );
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn inconsistent_terrain_is_an_error() {
    let Some(mut r) = renderer_or_skip(16, 16) else { return };
    let mut bad = TerrainBatch {
        patches: vec![TerrainPatch {
            resolution: 4,
            cell_size: 1.0,
            height: vec![0.0; 3],
            ..TerrainPatch::default()
        }],
        evicted: Vec::new(),
    };
    let e = r
        .render(FrameInput {
            terrain: Some(&mut bad),
            camera: camera(),
            ..FrameInput::default()
        })
        .unwrap_err();
    assert!(e.to_string().contains("terrain patch"), "{e}");
}
