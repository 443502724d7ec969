//! Trees drawn from their models: a tree placed as an instance covers the pixels of the same
//! tree copied into world space; culling on the GPU never drops a tree in view or a shadow that
//! is seen; the frame's
//! draw calls and uploads do not grow with the tree count while the GPU's counts do; a
//! resident tree costs at most 64 device bytes beyond its model; shrubs are counted apart
//! from trees. Without a Vulkan driver these
//! tests print `SKIPPED` and pass, unless `SYLVA_REQUIRE_VULKAN=1`.

mod support;

use support::{geometry, model};
use sylva_runtime::extract::{Camera, Sun, TreeInstances, TreeModels};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FRAMES_IN_FLIGHT, FrameInput, FrameStats, Renderer};

const WIDTH: u32 = 320;
const HEIGHT: u32 = 240;

fn models() -> TreeModels {
    TreeModels {
        models: vec![model()],
        generation: 1,
        shrubs: Vec::new(),
    }
}

/// Trees on a grid of `side` × `side`, `spacing` metres apart, centred on the origin, each
/// turned and scaled a little by its place (yaws and scales exact in half floats).
fn grid(side: usize, spacing: f32) -> TreeInstances {
    let mut trees = TreeInstances::default();
    let half = (side as f32 - 1.0) * 0.5 * spacing;
    for i in 0..side * side {
        let (x, z) = ((i % side) as f32 * spacing - half, (i / side) as f32 * spacing - half);
        trees.push(
            0,
            Vec3::new(x, 0.0, z),
            (i % 8) as f32 * 0.75,
            0.75 + (i % 3) as f32 * 0.25,
        );
    }
    trees
}

/// Renders `frames` frames of `trees` drawn from their models under the default sun and
/// returns the last frame's pixels and statistics.
fn instanced(
    r: &mut Renderer,
    models: &TreeModels,
    trees: &mut TreeInstances,
    camera: Camera,
    frames: usize,
) -> (Vec<u8>, FrameStats) {
    lit_instanced(r, models, trees, (camera, Sun::default()), frames)
}

/// Renders as [`instanced`] does, under `sun`.
fn lit_instanced(
    r: &mut Renderer,
    models: &TreeModels,
    trees: &mut TreeInstances,
    (camera, sun): (Camera, Sun),
    frames: usize,
) -> (Vec<u8>, FrameStats) {
    let mut stats = FrameStats::default();
    for _ in 0..frames {
        stats = r
            .render(FrameInput {
                tree_models: Some(models),
                instanced: vec![&mut *trees],
                camera,
                sun,
                ..FrameInput::default()
            })
            .unwrap();
    }
    (r.read_pixels(), stats)
}

/// How many pixels of `a` and `b` differ by more than `tolerance` in some channel.
fn differing(a: &[u8], b: &[u8], tolerance: u8) -> usize {
    a.chunks(4)
        .zip(b.chunks(4))
        .filter(|(p, q)| p.iter().zip(*q).any(|(x, y)| x.abs_diff(*y) > tolerance))
        .count()
}

/// Pixels not the sky's (the frame's first pixel row is sky).
fn covered(pixels: &[u8]) -> usize {
    let sky = &pixels[..4];
    pixels
        .chunks(4)
        .filter(|p| p.iter().zip(sky).any(|(a, b)| a.abs_diff(*b) > 24))
        .count()
}

#[test]
fn an_instanced_tree_draws_the_pixels_of_its_world_space_copy() {
    // At twice the others' size every leaf is longer on screen than `LEAF_FULL_PIXELS`, so
    // both paths draw every leaf: thinned, each keeps its own ranks.
    let Some(mut r) = renderer_or_skip(2 * WIDTH, 2 * HEIGHT) else {
        return;
    };
    let models = models();
    let mut trees = TreeInstances::default();
    trees.push(0, Vec3::new(0.5, 0.0, -0.25), 0.75, 1.25);
    // Near enough that the tree is level 0 (every part, the finest ring).
    let camera = Camera {
        position: Vec3::new(9.0, 5.0, 11.0),
        target: Vec3::new(0.5, 5.0, -0.25),
        fov_y_degrees: 60.0,
        ..Camera::default()
    };
    let (mut c, mut l) = geometry(&models, &trees);
    let mut copy = Vec::new();
    for _ in 0..3 {
        r.render(FrameInput {
            cylinders: vec![&mut c],
            leaves: vec![&mut l],
            camera,
            sun: Sun::default(),
            ..FrameInput::default()
        })
        .unwrap();
        copy = r.read_pixels();
    }
    let (placed, stats) = instanced(&mut r, &models, &mut trees, camera, 3);
    let tree = covered(&copy);
    assert!(tree > 5_000, "the tree covers {tree} pixels");
    // The same cylinders and leaves, placed on the GPU instead of the CPU: the leaves' hashed
    // turns and tints agree up to rounding, thin twigs may have finer rings.
    let off = differing(&copy, &placed, 24);
    assert!(off * 100 < tree, "{off} of {tree} pixels differ");
    assert!(covered(&placed).abs_diff(tree) * 50 < tree);
    assert_eq!(stats.trees, 1, "counted on the GPU");
    assert_eq!(stats.leaves, 1280);
    assert_eq!(stats.cylinders, 9);
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn culling_never_drops_a_tree_in_view_or_a_shadow_that_is_seen() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let models = models();
    // Trees all around the camera: most behind it or beside the view.
    let mut trees = grid(24, 7.0);
    let camera = Camera {
        position: Vec3::new(3.0, 6.0, 2.0),
        target: Vec3::new(40.0, 3.0, 25.0),
        fov_y_degrees: 50.0,
        ..Camera::default()
    };
    // The sun ahead, then low behind the camera: the trees behind it and beside the view then
    // cast long shadows onto those in view, and only trees whose shadows are seen may be left
    // out of the shadow map.
    let behind = Sun {
        direction: Vec3::new(0.8, -0.35, 0.5),
        ..Sun::default()
    };
    let frames = FRAMES_IN_FLIGHT + 1;
    for sun in [Sun::default(), behind] {
        r.set_tree_culling(true);
        let (culled, with) = lit_instanced(&mut r, &models, &mut trees, (camera, sun), frames);
        r.set_tree_culling(false);
        let (all, without) = lit_instanced(&mut r, &models, &mut trees, (camera, sun), frames);
        assert!(covered(&all) > 10_000, "the trees cover {} pixels", covered(&all));
        let off = differing(&culled, &all, 0);
        assert!(
            off <= (WIDTH * HEIGHT / 2000) as usize,
            "{off} pixels differ under {sun:?}"
        );
        assert!(
            with.trees * 2 < without.trees,
            "{} of {} trees drawn",
            with.trees,
            without.trees
        );
        assert!(with.trees > 0);
        // The shadow map keeps some trees; under the sun ahead, whose light runs back past the
        // camera, it leaves out those behind it, whose shadows nobody sees.
        let cast = (with.shadow_trees, without.shadow_trees);
        assert!(
            0 < cast.0 && cast.0 <= cast.1,
            "{cast:?} trees in the shadow map under {sun:?}"
        );
        if sun == Sun::default() {
            assert!(cast.0 * 4 < cast.1 * 3, "{cast:?} trees in the shadow map");
        }
    }
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn the_frame_does_not_grow_with_the_tree_count() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let models = models();
    let camera = Camera {
        position: Vec3::new(0.0, 15.0, -150.0),
        target: Vec3::new(0.0, 0.0, 0.0),
        fov_y_degrees: 60.0,
        far: 5_000.0,
        ..Camera::default()
    };
    // 1 024 and 8 192 trees: powers of two, so every buffer holds them exactly.
    let mut few = trimmed(grid(32, 10.0), 1024);
    let mut many = trimmed(grid(91, 3.0), 8192);
    let frames = FRAMES_IN_FLIGHT + 2;
    let (_, a) = instanced(&mut r, &models, &mut few, camera, frames);
    let mut r2 = renderer_or_skip(WIDTH, HEIGHT).expect("a second renderer");
    let (_, b) = instanced(&mut r2, &models, &mut many, camera, frames);
    // The CPU's work: the same draw calls, nothing sent up once the trees hold still. A
    // device with multi-draw (lavapipe has it) records one draw per level and part, however
    // many models: 5 solid levels and the fading one of segments, 6 of leaves (and in the
    // view the cards' one).
    assert_eq!(a.draw_calls, b.draw_calls);
    assert_eq!(a.shadow_draw_calls, b.shadow_draw_calls);
    if r.multi_draw() {
        assert_eq!((a.draw_calls, a.shadow_draw_calls), (12 + 1, 12), "{a:?}");
    }
    assert_eq!((a.upload_bytes, b.upload_bytes), (0, 0));
    // The GPU's: more trees drawn.
    assert!(b.trees > 4 * a.trees, "{} and {} trees drawn", a.trees, b.trees);
    // Device bytes per tree beyond the model, what the larger forest holds more (its first
    // frame's larger upload room aside).
    let held = |s: &FrameStats| s.gpu_allocated_bytes - s.staging_bytes;
    let per_tree = (held(&b) - held(&a)) as f64 / (8192.0 - 1024.0);
    assert!(per_tree <= 64.0, "{per_tree} bytes a tree");
    for r in [r, r2] {
        assert_validation_clean(&r);
        assert_clean_shutdown(r);
    }
}

/// The first `n` trees of `trees`.
fn trimmed(mut trees: TreeInstances, n: usize) -> TreeInstances {
    trees.model.truncate(n);
    trees.position.truncate(n);
    trees.yaw.truncate(n);
    trees.scale.truncate(n);
    trees
}

#[test]
fn shrubs_are_counted_apart_from_trees() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let camera = Camera {
        position: Vec3::new(0.0, 15.0, -60.0),
        target: Vec3::new(0.0, 0.0, 0.0),
        fov_y_degrees: 60.0,
        far: 5_000.0,
        ..Camera::default()
    };
    let frames = FRAMES_IN_FLIGHT + 2;
    // The same trees, their second model first a tree, then a shrub.
    let mut trees = grid(8, 6.0);
    for (i, m) in trees.model.iter_mut().enumerate() {
        *m = (i % 2) as u32;
    }
    let mut two = TreeModels {
        models: vec![model(), model()],
        generation: 1,
        shrubs: Vec::new(),
    };
    let (_, all) = instanced(&mut r, &two, &mut trees, camera, frames);
    two.shrubs = vec![false, true];
    two.generation = 2;
    let (_, split) = instanced(&mut r, &two, &mut trees, camera, frames);
    assert_eq!(all.shrubs, 0);
    assert!(split.trees > 0 && split.shrubs > 0, "{split:?}");
    assert_eq!(split.trees + split.shrubs, all.trees, "{split:?} {all:?}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
