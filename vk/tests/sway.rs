//! Trees in the wind: a tree's wood leans more the higher up it is, so its root stays put
//! and its top goes with the wind; wood of no tree holds still. Without a Vulkan driver these
//! tests print `SKIPPED` and pass, unless `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, CylinderBatch, LeafBatch, SwayNoise, SwayWind, TreeAnchor};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, Renderer};

const SIZE: u32 = 128;

/// A steady wind along +x of 6 to 9 m/s, varying little in space.
fn gale() -> SwayWind {
    SwayWind {
        winds: vec![SwayNoise {
            keys: [1, 2, 3],
            power: [2.0, 1.0],
            deflection: [0.0, 0.0],
            frequency: 0.5,
            deviation: 1.0,
            spacing: 8.0,
            direction: [1.0, 0.0],
            active: [0.0, f32::INFINITY],
        }],
        gusts: Vec::new(),
        power: 3.0,
        time_scale: 1.0,
    }
}

/// Per picture row, the mean x of its red pixels (the trunk's), where it has some.
fn red_rows(pixels: &[u8]) -> Vec<Option<f32>> {
    pixels
        .chunks_exact(4 * SIZE as usize)
        .map(|row| {
            let xs: Vec<f32> = row
                .chunks_exact(4)
                .enumerate()
                .filter(|(_, p)| i32::from(p[0]) > 2 * i32::from(p[1]) && i32::from(p[0]) > 2 * i32::from(p[2]))
                .map(|(x, _)| x as f32)
                .collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f32>() / xs.len() as f32)
        })
        .collect()
}

/// Per row, how far (pixels, +x) the gale moves a thin 1 m trunk standing at the origin, a
/// tree's (`anchored`) or not.
fn lean(r: &mut Renderer, anchored: bool) -> Vec<f32> {
    let mut wood = CylinderBatch::default();
    wood.push(Vec3::ZERO, Vec3::Y, 0.03, 0.03, [220, 20, 20, 255]);
    if anchored {
        let anchor = TreeAnchor::of(Vec3::ZERO, (&wood, &LeafBatch::default()), (0, 0));
        wood.set_tree(0..1, anchor);
    }
    let camera = Camera {
        position: Vec3::new(0.0, 0.5, 2.0),
        target: Vec3::new(0.0, 0.5, 0.0),
        ..Camera::default()
    };
    let mut rows = |r: &mut Renderer| {
        r.render(FrameInput {
            cylinders: vec![&mut wood],
            time: 1.0,
            camera,
            ..FrameInput::default()
        })
        .unwrap();
        red_rows(&r.read_pixels())
    };
    r.set_wind(&SwayWind::default());
    let still = rows(r);
    r.set_wind(&gale());
    let blown = rows(r);
    still
        .iter()
        .zip(&blown)
        .filter_map(|(a, b)| Some(b.as_ref()? - a.as_ref()?))
        .collect()
}

#[test]
fn a_trees_wood_leans_from_its_root_up_and_other_wood_stands() {
    let Some(mut r) = renderer_or_skip(SIZE, SIZE) else {
        return;
    };
    let tree = lean(&mut r, true);
    assert!(tree.len() > 40, "the trunk fills {} rows", tree.len());
    // Rows top down: the top leans about 0.2 m · 7 / 11 ≈ 0.13 m (some 9 px here), the root
    // not at all, and every row between a little less than the one above it.
    let (top, root) = (tree[0], tree[tree.len() - 1]);
    assert!(top > 4.0, "the top leans downwind by {top} px");
    assert!(root.abs() < 0.5, "the root stays: {root} px");
    assert!(tree.windows(2).all(|w| w[1] <= w[0] + 0.75), "bends smoothly: {tree:?}");
    let loose = lean(&mut r, false);
    assert!(loose.iter().all(|d| *d == 0.0), "wood of no tree stands: {loose:?}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
