//! Leaves drawn by the headless renderer: cards cut to a leaf shape, uploaded once, culled.
//! Without a Vulkan driver these tests print `SKIPPED` and pass, unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, LeafBatch, Sun, SwayNoise, SwayWind};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, FrameStats, Renderer};

const SIZE: u32 = 96;
/// Side of the card, metres.
const LEAF: f32 = 2.0;
/// Camera distance to the leaf, metres.
const DISTANCE: f32 = 4.0;

fn camera() -> Camera {
    Camera {
        position: Vec3::new(0.0, 0.0, DISTANCE),
        target: Vec3::ZERO,
        ..Camera::default()
    }
}

fn frame(r: &mut Renderer, leaves: &mut LeafBatch, camera: Camera) -> FrameStats {
    r.render(FrameInput {
        leaves: vec![leaves],
        time: 0.0,
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .unwrap()
}

/// Pixels (x, y) clearly of the red leaf, not of the blue sky.
fn red_pixels(pixels: &[u8]) -> Vec<(f32, f32)> {
    pixels
        .chunks_exact(4)
        .enumerate()
        .filter(|(_, p)| i32::from(p[0]) > 2 * i32::from(p[1]) && i32::from(p[0]) > 2 * i32::from(p[2]))
        .map(|(i, _)| ((i as u32 % SIZE) as f32 + 0.5, (i as u32 / SIZE) as f32 + 0.5))
        .collect()
}

#[test]
fn a_leaf_is_a_cut_card_uploaded_once_and_culled_out_of_view() {
    let Some(mut r) = renderer_or_skip(SIZE, SIZE) else {
        return;
    };
    let mut leaves = LeafBatch::default();
    leaves.push(Vec3::ZERO, Vec3::Z, LEAF, [220, 20, 20, 255]);

    let first = frame(&mut r, &mut leaves, camera());
    assert_eq!((first.leaves, first.draw_calls), (1, 1));
    assert!(first.upload_bytes >= 12 + 12 + 4 + 4);
    let red = red_pixels(&r.read_pixels());

    // Pixels per metre at the leaf's distance (60° vertical field of view).
    let per_metre = SIZE as f32 * 0.5 / (30f32.to_radians().tan() * DISTANCE);
    let half = 0.5 * LEAF * per_metre;
    let card_area = (2.0 * half) * (2.0 * half);
    assert!(
        red.len() as f32 > 0.15 * card_area,
        "the leaf covers part of its card: {} of {card_area} pixels",
        red.len()
    );
    assert!(
        (red.len() as f32) < 0.5 * card_area,
        "the alpha test cuts the card: {} of {card_area} pixels",
        red.len()
    );
    // The leaf reaches half its length from the centre; the card's corners, at 1/√2 of it,
    // stay sky whichever way the card is turned about its normal.
    let centre = SIZE as f32 * 0.5;
    let farthest = red
        .iter()
        .map(|&(x, y)| (x - centre).hypot(y - centre))
        .fold(0.0, f32::max);
    assert!(
        farthest > 0.8 * half,
        "the leaf spans its card: {farthest} of {half} pixels"
    );
    assert!(
        farthest < 1.1 * half + 1.5,
        "no leaf pixel in the card's corners: {farthest} px from the centre, half the card is {half}"
    );

    let steady = frame(&mut r, &mut leaves, camera());
    assert_eq!((steady.upload_bytes, steady.allocations), (0, 0));
    // A changed leaf uploads one leaf's five arrays and its keep rank.
    leaves.colour[0] = [230, 30, 30, 255];
    leaves.dirty.mark(0, 1);
    let one = frame(&mut r, &mut leaves, camera());
    assert_eq!(one.upload_bytes, 12 + 12 + 4 + 4 + 4 + 8);

    let away = Camera {
        target: Vec3::new(0.0, 0.0, 2.0 * DISTANCE),
        ..camera()
    };
    let culled = frame(&mut r, &mut leaves, away);
    assert_eq!((culled.leaves, culled.draw_calls, culled.batches_culled), (0, 0, 1));
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn the_wind_moves_leaves_with_time_only() {
    let Some(mut r) = renderer_or_skip(SIZE, SIZE) else {
        return;
    };
    let mut leaves = LeafBatch::default();
    for i in 0..9 {
        let p = Vec3::new((i % 3) as f32 - 1.0, (i / 3) as f32 - 1.0, 0.0);
        leaves.push(p, Vec3::new(0.3, 0.2, 1.0).normalize(), 0.9, [220, 20, 20, 255]);
    }
    let mut at = |r: &mut Renderer, time: f32| {
        r.render(FrameInput {
            leaves: vec![&mut leaves],
            time,
            camera: camera(),
            ..FrameInput::default()
        })
        .unwrap();
        r.read_pixels()
    };
    let (a, later) = (at(&mut r, 1.0), at(&mut r, 2.0));
    assert_eq!(a, later, "in still air (the default) the leaves hold still");
    let breeze = SwayNoise {
        keys: [1, 2, 3],
        power: [2.0, 3.0],
        deflection: [0.2, 0.5],
        frequency: 0.5,
        deviation: 1.0,
        spacing: 4.0,
        direction: [1.0, 0.0],
        active: [0.0, f32::INFINITY],
    };
    r.set_wind(&SwayWind {
        winds: vec![breeze],
        gusts: Vec::new(),
        power: 1.0,
        time_scale: 1.0,
    });
    let (a, again, later) = (at(&mut r, 1.0), at(&mut r, 1.0), at(&mut r, 2.0));
    assert_eq!(a, again, "the same time draws the same frame");
    assert_ne!(a, later, "leaves sway in the wind as time passes");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
