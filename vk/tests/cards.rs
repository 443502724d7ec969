//! Far trees as impostor cards: a tree small on screen drawn as a card covers about the
//! pixels its geometry covers, in about its colour; the geometry of carded trees is left out;
//! draw calls stay one per batch whatever the tree count; a new generation of models is baked
//! again while earlier frames may still read the old atlases; a carded tree still shadows the
//! ground. Without a Vulkan driver these tests
//! print `SKIPPED` and pass, unless `SYLVA_REQUIRE_VULKAN=1`.

mod support;

use support::{geometry, model};
use sylva_runtime::extract::{Camera, Sun, TerrainBatch, TerrainPatch, TreeAnchor, TreeInstances, TreeModels};
use sylva_runtime::glam::Vec3;
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{CARD_PIXELS, FrameInput, FrameStats, Renderer};

const WIDTH: u32 = 256;
const HEIGHT: u32 = 256;
/// A narrow view, so a tree below [`CARD_PIXELS`] is far and fills enough pixels to compare.
const FOV: f32 = 10.0;
/// About the tree's height, metres (its top leaves reach 8.2 m): the camera's distances are
/// reckoned with it, so the tree is a little smaller on screen than they say.
const TREE: f32 = 10.0;

/// A level camera looking at the middle of a tree at the origin from `distance`, at an angle
/// between two baked directions (the worst case for the card).
fn camera(distance: f32) -> Camera {
    camera_at(distance, 0.0)
}

/// [`camera`] raised to `elevation` degrees over the tree's middle.
fn camera_at(distance: f32, elevation: f32) -> Camera {
    let (a, e) = (20f32.to_radians(), elevation.to_radians());
    let target = Vec3::Y * (TREE * 0.5);
    Camera {
        position: target + Vec3::new(a.sin() * e.cos(), e.sin(), a.cos() * e.cos()) * distance,
        target,
        fov_y_degrees: FOV,
        far: 20_000.0,
        ..Camera::default()
    }
}

/// Pixels per metre at 1 m of the view.
fn pixel_scale() -> f32 {
    HEIGHT as f32 * 0.5 / (FOV * 0.5).to_radians().tan()
}

/// Renders the trees as geometry alone (`cards` false) or with their cards.
fn render(
    r: &mut Renderer,
    models: &TreeModels,
    trees: &mut TreeInstances,
    cards: bool,
    camera: Camera,
) -> (Vec<u8>, FrameStats) {
    let (mut c, mut l) = geometry(models, trees);
    let mut input = FrameInput {
        cylinders: vec![&mut c],
        leaves: vec![&mut l],
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    };
    if cards {
        input.tree_models = Some(models);
        input.trees = vec![trees];
    }
    let stats = r.render(input).unwrap();
    (r.read_pixels(), stats)
}

/// The pixels clearly covered (their channels differ from the sky's by over 96 summed), and
/// their mean colour (sRGB bytes).
fn coverage(pixels: &[u8], sky: &[u8]) -> (usize, [f64; 3]) {
    let mut n = 0;
    let mut sum = [0.0; 3];
    for (p, s) in pixels.chunks(4).zip(sky.chunks(4)) {
        let d: u32 = (0..3).map(|k| u32::from(p[k].abs_diff(s[k]))).sum();
        if d > 96 {
            n += 1;
            for k in 0..3 {
                sum[k] += f64::from(p[k]);
            }
        }
    }
    (n, sum.map(|s| s / n.max(1) as f64))
}

/// The pixels faintly tinted (their channels differ from the sky's by 13 to 96 summed): a
/// surface in 1 of a pixel's 4 samples, the sky in the rest.
fn faint(pixels: &[u8], sky: &[u8]) -> usize {
    pixels
        .chunks(4)
        .zip(sky.chunks(4))
        .filter(|(p, s)| (13..=96).contains(&(0..3).map(|k| u32::from(p[k].abs_diff(s[k]))).sum::<u32>()))
        .count()
}

/// Which pixels are clearly covered (as [`coverage`] counts them).
fn covered(pixels: &[u8], sky: &[u8]) -> Vec<bool> {
    pixels
        .chunks(4)
        .zip(sky.chunks(4))
        .map(|(p, s)| (0..3).map(|k| u32::from(p[k].abs_diff(s[k]))).sum::<u32>() > 96)
        .collect()
}

/// The share of the pixels covered in `a` that have a pixel covered in `b` within one pixel
/// (of the 3 × 3 around them).
fn near(a: &[bool], b: &[bool]) -> f64 {
    let (w, h) = (WIDTH as i32, HEIGHT as i32);
    let at = |x: i32, y: i32| (0..w).contains(&x) && (0..h).contains(&y) && b[(y * w + x) as usize];
    let (mut n, mut close) = (0, 0);
    for (i, _) in a.iter().enumerate().filter(|(_, c)| **c) {
        let (x, y) = (i as i32 % w, i as i32 / w);
        n += 1;
        close += usize::from((-1..=1).any(|dy| (-1..=1).any(|dx| at(x + dx, y + dy))));
    }
    close as f64 / n.max(1) as f64
}

/// Per channel, how much darker than the sky the picture is, summed over pixels.
fn ink(pixels: &[u8], sky: &[u8]) -> [f64; 3] {
    let mut sum = [0.0; 3];
    for (p, s) in pixels.chunks(4).zip(sky.chunks(4)) {
        for k in 0..3 {
            sum[k] += f64::from(s[k]) - f64::from(p[k]);
        }
    }
    sum
}

/// One model and one tree of it at the origin, turned a little.
fn one_tree() -> (TreeModels, TreeInstances) {
    let models = TreeModels {
        models: vec![model()],
        generation: 1,
        shrubs: Vec::new(),
    };
    let mut trees = TreeInstances::default();
    trees.push(0, Vec3::ZERO, 0.4, 1.0);
    (models, trees)
}

/// How far the test tree is 24 px high: a card alone (below CARD_PIXELS), its geometry left
/// out.
fn card_alone() -> f32 {
    TREE * pixel_scale() / (0.75 * CARD_PIXELS)
}

/// The sky and ground without trees, from `camera`.
fn sky_of(r: &mut Renderer, camera: Camera) -> Vec<u8> {
    let mut nothing = TreeInstances::default();
    render(r, &TreeModels::default(), &mut nothing, false, camera).0
}

#[test]
fn a_far_tree_as_a_card_covers_its_pixels_in_its_colour() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // Without fog, which would fade both toward the sky alike at this distance.
    r.atmosphere.fog_density = 0.0;
    let (models, mut trees) = one_tree();
    let d = card_alone();
    let sky = sky_of(&mut r, camera(d));
    let (full, geometry_stats) = render(&mut r, &models, &mut trees, false, camera(d));
    let (card, card_stats) = render(&mut r, &models, &mut trees, true, camera(d));
    assert!(geometry_stats.cylinders > 0 && geometry_stats.leaves > 0);
    assert_eq!(
        (card_stats.cylinders, card_stats.leaves, card_stats.cards),
        (0, 0, 1),
        "{card_stats:?}"
    );
    if let Some(dir) = std::env::var_os("SYLVA_CARDS_PNG") {
        let dir = std::path::PathBuf::from(dir);
        sylva_vk::write_png(&dir.join("tree_full.png"), WIDTH, HEIGHT, &full).unwrap();
        sylva_vk::write_png(&dir.join("tree_card.png"), WIDTH, HEIGHT, &card).unwrap();
    }
    let (n_full, c_full) = coverage(&full, &sky);
    let (n_card, c_card) = coverage(&card, &sky);
    let (ink_full, ink_card) = (ink(&full, &sky), ink(&card, &sky));
    let (faint_full, faint_card) = (faint(&full, &sky), faint(&card, &sky));
    eprintln!("full: {n_full} px ({faint_full} faint), mean {c_full:.0?}, ink {ink_full:.0?}");
    eprintln!("card: {n_card} px ({faint_card} faint), mean {c_card:.0?}, ink {ink_card:.0?}");
    assert!(n_full > 50, "the tree covers {n_full} px");
    // The card is the tree from the nearest baked direction (20° off here, 22.5° at worst),
    // orthographic, covering each pixel by its centre as the leaves do, where the geometry's
    // outlines are multisampled: outlines differ by a pixel here and there, a lot for a crown
    // 24 px high (measured: 74 and 83 px clearly covered, ink 30–37 % more: the geometry's
    // trunk, a pixel wide, is half sky). Without cards the picture is the sky: the geometry
    // of a tree this small is left out.
    let ratio = n_card as f64 / n_full as f64;
    assert!((0.67..1.5).contains(&ratio), "card {n_card} px against {n_full} px");
    // No frosted crown: a crown drawn by the share of each pixel it covers tinted 29 pixels
    // faintly around and between its leaves (measured), the geometry 6, the card now 8.
    assert!(
        faint_card <= 2 * faint_full + 4,
        "{faint_card} faint pixels against {faint_full}"
    );
    for k in 0..3 {
        let ratio = ink_card[k] / ink_full[k];
        assert!(
            (0.7..1.4).contains(&ratio),
            "ink of channel {k}: {ink_card:.0?} against {ink_full:.0?}"
        );
        // Lit from baked normals without the leaves' light shining through; whole pixels where
        // the geometry's outlines mix with the sky, so darker, never paler (measured: 18–34
        // darker).
        assert!(
            (-45.0..5.0).contains(&(c_card[k] - c_full[k])),
            "channel {k}: {c_card:.0?} against {c_full:.0?}"
        );
    }
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn a_card_turns_from_side_view_to_view_from_above_without_a_pop() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    r.atmosphere.fog_density = 0.0;
    let (models, mut trees) = one_tree();
    // Pixels covered at each elevation, one degree apart across ABOVE.
    let covers: Vec<Vec<bool>> = (30..=60)
        .map(|e| {
            let at = camera_at(card_alone(), e as f32);
            let sky = sky_of(&mut r, at);
            let (card, stats) = render(&mut r, &models, &mut trees, true, at);
            assert_eq!((stats.cylinders, stats.leaves, stats.cards), (0, 0, 1), "{stats:?}");
            covered(&card, &sky)
        })
        .collect();
    let counts: Vec<usize> = covers.iter().map(|c| c.iter().filter(|c| **c).count()).collect();
    let steps: Vec<f64> = covers
        .windows(2)
        .zip(counts.windows(2))
        .map(|(w, n)| {
            let changed = w[0].iter().zip(&w[1]).filter(|(a, b)| a != b).count();
            changed as f64 / n[0].max(n[1]).max(1) as f64
        })
        .collect();
    eprintln!("covered: {counts:?}\nchanged per degree: {steps:.2?}");
    // Measured: at most 0.21 of the pixels change per degree, as within either view alone;
    // a switch at ABOVE changed 1.16 (the crown's outline moves wholesale).
    assert!(steps.iter().all(|&s| s < 0.35), "{steps:.2?}");
    // Neither view thins while the other comes in: the crown covers at least what the
    // thinner view alone does.
    let least = counts[0].min(counts[counts.len() - 1]);
    assert!(counts.iter().all(|&n| n as f64 >= 0.9 * least as f64), "{counts:?}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn a_far_tree_seen_from_above_is_its_crown_from_above() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    r.atmosphere.fog_density = 0.0;
    let (models, mut trees) = one_tree();
    // Nearly straight down: above the elevation from which the card is the view from above.
    const ELEVATION: f32 = 85.0;
    const { assert!(ELEVATION > sylva_vk::ABOVE) };
    let above = camera_at(card_alone(), ELEVATION);
    let sky = sky_of(&mut r, above);
    let (full, _) = render(&mut r, &models, &mut trees, false, above);
    let (card, stats) = render(&mut r, &models, &mut trees, true, above);
    assert_eq!((stats.cylinders, stats.leaves, stats.cards), (0, 0, 1), "{stats:?}");
    if let Some(dir) = std::env::var_os("SYLVA_CARDS_PNG") {
        let dir = std::path::PathBuf::from(dir);
        sylva_vk::write_png(&dir.join("above_full.png"), WIDTH, HEIGHT, &full).unwrap();
        sylva_vk::write_png(&dir.join("above_card.png"), WIDTH, HEIGHT, &card).unwrap();
    }
    let ((n_full, _), (n_card, _)) = (coverage(&full, &sky), coverage(&card, &sky));
    let (c_full, c_card) = (covered(&full, &sky), covered(&card, &sky));
    let (card_near, full_near) = (near(&c_card, &c_full), near(&c_full, &c_card));
    eprintln!("from above: full {n_full} px, card {n_card} px; near the other: {card_near:.2}, {full_near:.2}");
    assert!(n_full > 50, "the crown covers {n_full} px");
    let ratio = n_card as f64 / n_full as f64;
    assert!((0.67..1.5).contains(&ratio), "card {n_card} px against {n_full} px");
    // The crown's outline from above lies on the geometry's (measured: 97 % of the card's
    // pixels within a pixel of the geometry's, 94 % the other way); a side view tilted toward
    // the camera, a trunk under a crown, does not (83 % and 62 %).
    assert!(
        card_near > 0.85 && full_near > 0.85,
        "card near geometry {card_near:.2}, geometry near card {full_near:.2}"
    );
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn a_forest_of_cards_is_one_draw_and_near_trees_keep_their_geometry() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let models = TreeModels {
        models: vec![model(), model()],
        generation: 1,
        shrubs: Vec::new(),
    };
    // 20 × 20 trees 12 m apart, none over 24 px high.
    let d = card_alone();
    let mut trees = TreeInstances::default();
    for i in 0..400u32 {
        let at = Vec3::new((i % 20) as f32 - 9.5, 0.0, -((i / 20) as f32)) * 12.0;
        trees.push(i % 2, at, i as f32 * 0.7, 0.8 + 0.02 * (i % 20) as f32);
    }
    let far = camera(d);
    let (_, stats) = render(&mut r, &models, &mut trees, true, far);
    assert_eq!((stats.cylinders, stats.leaves), (0, 0), "{stats:?}");
    assert_eq!((stats.cards, stats.draw_calls), (400, 1), "{stats:?}");
    // Nearer, the front rows keep their geometry and the back rows are cards alone: the batch's
    // cards are drawn (the shader drops the near ones), or the back rows would be missing.
    let (_, stats) = render(&mut r, &models, &mut trees, true, camera(d / 2.0));
    assert!(stats.cylinders > 0 && stats.leaves > 0, "{stats:?}");
    assert_eq!(stats.cards, 400, "{stats:?}");
    // A new generation of models is baked again, every frame for a few frames: the old
    // atlases and their set wait in the graveyard for the frames that may still read them.
    let mut models = models;
    for generation in 2..6 {
        models.generation = generation;
        models.models.swap(0, 1);
        let (pixels, stats) = render(&mut r, &models, &mut trees, true, far);
        assert_eq!(stats.cards, 400, "{stats:?}");
        assert!(pixels != sky_of(&mut r, far), "generation {generation}: no trees");
    }
    // Near, the trees in view keep their geometry.
    let (_, stats) = render(&mut r, &models, &mut trees, true, camera(30.0));
    assert!(stats.cylinders > 0 && stats.leaves > 0, "{stats:?}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

/// A tree left out of the view as geometry, its card drawn instead, within the shadow map's
/// reach still shadows the ground: its cylinders and leaves cast into the map whatever the
/// card cut (cylinders.rs and leaves.rs cull what casts by what the map covers alone), so
/// the card needs no shadow of its own.
#[test]
fn a_carded_tree_near_enough_still_shadows_the_ground() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    r.atmosphere.fog_density = 0.0;
    let (models, mut trees) = one_tree();
    // A wide view, so a tree 24 px high (a card alone) is about 90 m away: within the
    // shadow map's 160 m.
    const FOV: f32 = 60.0;
    let pixels_per_metre = HEIGHT as f32 * 0.5 / (FOV * 0.5).to_radians().tan();
    let camera = Camera {
        fov_y_degrees: FOV,
        ..camera_at(TREE * pixels_per_metre / (0.75 * CARD_PIXELS), 25.0)
    };
    // A flat 128 m square of regolith under the tree, and a sun low in the west: the crown's
    // shadow falls 6 to 14 m east (+x) of the trunk.
    let n = 129 * 129;
    let ground = TerrainPatch {
        key: [0, 0],
        origin: Vec3::new(-64.0, 0.0, -64.0),
        cell_size: 1.0,
        resolution: 129,
        height: vec![0.0; n],
        material: vec![6; n],
        water: vec![0.0; n],
        cover: None,
        dirty: true,
    };
    let sun = Sun {
        direction: Vec3::new(1.0, -0.6, 0.0).normalize(),
        colour: Vec3::ONE,
    };
    let frame = |r: &mut Renderer, trees: &mut TreeInstances| {
        let (mut c, mut l) = geometry(&models, trees);
        let mut terrain = TerrainBatch {
            patches: vec![ground.clone()],
            evicted: Vec::new(),
        };
        let stats = r
            .render(FrameInput {
                cylinders: vec![&mut c],
                leaves: vec![&mut l],
                tree_models: Some(&models),
                trees: vec![trees],
                terrain: Some(&mut terrain),
                camera,
                sun,
                ..FrameInput::default()
            })
            .unwrap();
        (r.read_pixels(), stats)
    };
    let (bare, _) = frame(&mut r, &mut TreeInstances::default());
    let (shaded, stats) = frame(&mut r, &mut trees);
    assert_eq!((stats.cylinders, stats.leaves, stats.cards), (0, 0, 1), "{stats:?}");
    assert!(stats.shadow_draw_calls >= 2, "the tree casts: {stats:?}");
    if let Some(dir) = std::env::var_os("SYLVA_CARDS_PNG") {
        let path = std::path::PathBuf::from(dir).join("shadow_card.png");
        sylva_vk::write_png(&path, WIDTH, HEIGHT, &shaded).unwrap();
    }
    // Ground points over the crown's shadow east of the tree in shade: their pixel's green
    // under 80 % of the bare ground's (measured: 12 of 63, the darkest at 67 %, where full
    // shadow is about 68 %; the crown is thinned leaves, so its shadow is dappled).
    let view_proj = camera.view_projection(WIDTH as f32 / HEIGHT as f32);
    let mut shade = 0;
    for x in 6..=14 {
        for z in -3..=3 {
            let clip = view_proj * Vec3::new(x as f32, 0.0, z as f32).extend(1.0);
            let (px, py) = (clip.x / clip.w * 0.5 + 0.5, clip.y / clip.w * 0.5 + 0.5);
            let i = 4 * ((py * HEIGHT as f32) as usize * WIDTH as usize + (px * WIDTH as f32) as usize);
            shade += usize::from(f32::from(shaded[i + 1]) < 0.8 * f32::from(bare[i + 1]));
        }
    }
    eprintln!("{shade} of 63 ground points east of the tree in its shadow");
    assert!(shade >= 6, "{shade} of 63 ground points in shade");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

/// The 4 × 4 ordered-dither threshold of pixel `i` of a `WIDTH`-wide picture (`dither.glsl`'s).
fn threshold(i: usize) -> f32 {
    const BAYER: [f32; 16] = [0., 8., 2., 10., 12., 4., 14., 6., 3., 11., 1., 9., 15., 7., 13., 5.];
    let (x, y) = (i % WIDTH as usize, i / WIDTH as usize);
    (BAYER[(y & 3) * 4 + (x & 3)] + 0.5) / 16.0
}

#[test]
fn in_the_fade_band_card_and_geometry_keep_complementary_pixels() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    r.atmosphere.fog_density = 0.0;
    r.atmosphere.shadow_strength = 0.0;
    let (models, mut trees) = one_tree();
    // The tree CARD_PIXELS × √CARD_FADE high: its card has faded in about halfway (a little
    // more, its bake margin making it a few per cent taller), so it keeps the thresholds below
    // about one half and the geometry those above.
    let m = &models.models[0];
    let height = TreeAnchor::of(Vec3::ZERO, (&m.cylinders, &m.leaves), (0, 0)).height;
    let d = height * pixel_scale() / (CARD_PIXELS * sylva_vk::CARD_FADE.sqrt());
    let view = camera(d);
    let sky = sky_of(&mut r, view);
    let (both, stats) = render(&mut r, &models, &mut trees, true, view);
    assert!(stats.cylinders > 0 && stats.leaves > 0 && stats.cards == 1, "{stats:?}");
    // The card alone: no geometry batches, the same tree instances.
    r.render(FrameInput {
        tree_models: Some(&models),
        trees: vec![&mut trees],
        camera: view,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .unwrap();
    let card = r.read_pixels();
    let (mut low, mut high, mut geometry_high) = (0, 0, 0);
    for (i, ((b, c), s)) in both.chunks(4).zip(card.chunks(4)).zip(sky.chunks(4)).enumerate() {
        let h = threshold(i);
        if h < 0.25 {
            // The card's pixels: the geometry gave them up, so they are the card's alone.
            assert_eq!(b, c, "pixel {i} (threshold {h}) is the card's");
            low += usize::from(c != s);
        } else if h > 0.75 {
            // The geometry's pixels: the card leaves them to the sky.
            assert_eq!(c, s, "pixel {i} (threshold {h}) is not the card's");
            high += usize::from(b != s);
            geometry_high += usize::from(b != c);
        }
    }
    assert!(low > 20, "the card covers {low} of its pixels");
    assert!(
        high > 20 && geometry_high == high,
        "the geometry covers {high} of its pixels"
    );
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
