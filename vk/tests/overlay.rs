//! The overlay's text over a headless frame: light glyphs on a dark translucent box over
//! the scene, not counted as the scene's draw calls, validation silent. Without a Vulkan
//! driver these tests print `SKIPPED` and pass, unless `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, CylinderBatch};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, FrameStats, OverlayLine, Renderer};

const W: u32 = 320;
const H: u32 = 240;

fn frame(r: &mut Renderer, trees: &mut CylinderBatch) -> (FrameStats, Vec<u8>) {
    let stats = r
        .render(FrameInput {
            cylinders: vec![trees],
            camera: Camera {
                position: Vec3::new(0.0, 2.0, 12.0),
                target: Vec3::new(0.0, 2.0, 0.0),
                ..Camera::default()
            },
            ..FrameInput::default()
        })
        .unwrap();
    (stats, r.read_pixels())
}

/// Brightness of pixel (x, y): the sum of its colour bytes.
fn light(pixels: &[u8], x: u32, y: u32) -> u32 {
    let k = ((y * W + x) * 4) as usize;
    pixels[k..k + 3].iter().map(|&b| u32::from(b)).sum()
}

#[test]
fn overlay_text_is_light_on_a_dark_box_over_the_scene() {
    let Some(mut r) = renderer_or_skip(W, H) else { return };
    let mut trees = CylinderBatch::default();
    trees.push(Vec3::ZERO, Vec3::new(0.0, 4.0, 0.0), 0.5, 0.3, [120, 80, 50, 255]);
    let (plain_stats, plain) = frame(&mut r, &mut trees);
    r.set_overlay(&[
        OverlayLine::text("fps 60.0  16.7 ms"),
        OverlayLine::text("1 instance, 2 draw calls"),
        OverlayLine::error("scene.ron:3:7: expected a number"),
    ]);
    let (stats, shown) = frame(&mut r, &mut trees);
    assert_eq!(
        stats.draw_calls, plain_stats.draw_calls,
        "the overlay is not the scene's draw"
    );
    // The box starts 3 pixels in; its first text row 3 pixels further, lines 10 pixels apart.
    let (box_, text) = ((3..6).flat_map(|y| (3..150).map(move |x| (x, y))), 6..40);
    let darker = box_.clone().all(|(x, y)| light(&shown, x, y) < light(&plain, x, y));
    assert!(darker, "the box darkens the sky behind it");
    let dark = box_.map(|(x, y)| light(&shown, x, y)).max().unwrap();
    let lit = text
        .flat_map(|y| (6..150).map(move |x| (x, y)))
        .filter(|&(x, y)| light(&shown, x, y) > dark + 300)
        .count();
    assert!(lit > 100, "{lit} text pixels brighter than the box ({dark})");
    // The error line is red.
    let red = (26..34).flat_map(|y| (6..150).map(move |x| (x, y))).any(|(x, y)| {
        let k = ((y * W + x) * 4) as usize;
        shown[k] > 200 && shown[k + 1] < 150
    });
    assert!(red, "the error line is red");
    // Far from the box the frame is untouched.
    assert_eq!(
        &shown[(H as usize - 1) * W as usize * 4..],
        &plain[(H as usize - 1) * W as usize * 4..]
    );
    // No lines: no overlay.
    r.set_overlay(&[]);
    let (_, cleared) = frame(&mut r, &mut trees);
    assert_eq!(cleared, plain);
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
