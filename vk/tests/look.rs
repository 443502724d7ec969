//! What the sky, the terrain's materials and its water look like, on synthetic
//! frames: pixels are found by projecting world points with the camera, and
//! compared by brightness and hue rather than against exact colours. Without
//! a Vulkan driver these tests print `SKIPPED` and pass, unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use sylva_runtime::extract::{Camera, Sun, TerrainBatch, TerrainPatch};
use sylva_runtime::glam::{Vec3, Vec4Swizzles};
use sylva_vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva_vk::{FrameInput, Renderer};

const WIDTH: u32 = 96;
const HEIGHT: u32 = 72;

/// Material bytes of the terrain (sylva-systems' `Material`).
const SAND: u8 = 5;
const REGOLITH: u8 = 6;

/// A linear-ish view of an sRGB pixel: (r, g, b) in 0..1.
#[derive(Clone, Copy, Debug)]
struct Rgb(f32, f32, f32);

impl Rgb {
    fn luma(self) -> f32 {
        0.2126 * self.0 + 0.7152 * self.1 + 0.0722 * self.2
    }

    /// Blue's share of the sum.
    fn blueness(self) -> f32 {
        self.2 / (self.0 + self.1 + self.2).max(1e-6)
    }

    /// Spread of the channels relative to the largest: 0 for grey.
    fn saturation(self) -> f32 {
        let max = self.0.max(self.1).max(self.2);
        let min = self.0.min(self.1).min(self.2);
        (max - min) / max.max(1e-6)
    }
}

fn pixel(pixels: &[u8], x: u32, y: u32) -> Rgb {
    let k = ((y * WIDTH + x) * 4) as usize;
    let c = |i: usize| f32::from(pixels[k + i]) / 255.0;
    Rgb(c(0), c(1), c(2))
}

/// Where `world` lands on the target, pixels.
fn project(camera: &Camera, world: Vec3) -> (u32, u32) {
    let clip = camera.view_projection(WIDTH as f32 / HEIGHT as f32) * world.extend(1.0);
    let ndc = clip.xy() / clip.w;
    let x = ((ndc.x * 0.5 + 0.5) * WIDTH as f32) as u32;
    let y = ((ndc.y * 0.5 + 0.5) * HEIGHT as f32) as u32;
    assert!(x < WIDTH && y < HEIGHT, "{world} is off screen");
    (x, y)
}

/// A flat patch of `res²` one-metre cells of `material`, at height 0.
fn patch(res: u32, material: u8) -> TerrainPatch {
    let n = (res * res) as usize;
    TerrainPatch {
        key: [0, 0],
        origin: Vec3::ZERO,
        cell_size: 1.0,
        resolution: res,
        height: vec![0.0; n],
        material: vec![material; n],
        water: vec![0.0; n],
        cover: None,
        dirty: true,
    }
}

/// Renders `terrain` (or only the sky) from `camera` and returns the pixels.
fn render(r: &mut Renderer, terrain: Option<TerrainPatch>, camera: Camera) -> Vec<u8> {
    let mut batch = terrain.map(|p| TerrainBatch {
        patches: vec![p],
        evicted: Vec::new(),
    });
    r.render(FrameInput {
        terrain: batch.as_mut(),
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .unwrap();
    assert_validation_clean(r);
    r.read_pixels()
}

#[test]
fn the_sky_is_a_gradient_with_a_bright_horizon_and_darker_haze_below() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // Level, so the horizon is the middle row; the sun is high behind the camera.
    let camera = Camera {
        position: Vec3::new(0.0, 10.0, 0.0),
        target: Vec3::new(0.0, 10.0, -100.0),
        ..Camera::default()
    };
    let pixels = render(&mut r, None, camera);
    let x = WIDTH / 2;
    let top = pixel(&pixels, x, 0);
    let horizon = pixel(&pixels, x, HEIGHT / 2 - 1);
    let below = pixel(&pixels, x, HEIGHT - 1);
    assert!(
        top.blueness() > horizon.blueness() + 0.03,
        "top {top:?}, horizon {horizon:?}"
    );
    assert!(horizon.luma() > top.luma() + 0.05, "top {top:?}, horizon {horizon:?}");
    assert!(
        below.luma() < horizon.luma() - 0.05,
        "below {below:?}, horizon {horizon:?}"
    );
    assert!(
        below.blueness() < top.blueness() - 0.03,
        "below {below:?} is the zenith's blue {top:?}"
    );
    // Each row is one colour away from the sun: the gradient is vertical.
    let left = pixel(&pixels, 0, HEIGHT / 4);
    let right = pixel(&pixels, WIDTH - 1, HEIGHT / 4);
    assert!((left.luma() - right.luma()).abs() < 0.03, "{left:?} vs {right:?}");
    assert_clean_shutdown(r);
}

#[test]
fn steep_ground_shows_rock_and_flat_ground_grass() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // Soil everywhere: flat for x < 16, then a 60° slope up toward +x.
    let res = 33;
    let mut p = patch(res, REGOLITH);
    for j in 0..res {
        for i in 0..res {
            p.height[(j * res + i) as usize] = (i as f32 - 16.0).max(0.0) * 3f32.sqrt();
        }
    }
    let camera = Camera {
        position: Vec3::new(-4.0, 40.0, 16.0),
        target: Vec3::new(18.0, 8.0, 16.0),
        ..Camera::default()
    };
    let pixels = render(&mut r, Some(p), camera);
    let (fx, fy) = project(&camera, Vec3::new(8.0, 0.0, 16.0));
    let (sx, sy) = project(&camera, Vec3::new(22.0, 6.0 * 3f32.sqrt(), 16.0));
    let (flat, steep) = (pixel(&pixels, fx, fy), pixel(&pixels, sx, sy));
    assert!(
        flat.1 > flat.0 * 1.15 && flat.1 > flat.2 * 1.3,
        "flat ground is not green: {flat:?}"
    );
    assert!(steep.saturation() < 0.3, "steep ground is not rock grey: {steep:?}");
    assert!(steep.1 < steep.0 * 1.1, "steep ground is green: {steep:?}");
    assert_clean_shutdown(r);
}

#[test]
fn deep_water_is_darker_and_bluer_than_shallow_water() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // One water level 0.3 m up: over sand at 0 for x < 16, over a bed 8 m down beyond.
    let res = 33;
    let mut p = patch(res, SAND);
    for j in 0..res {
        for i in 0..res {
            let k = (j * res + i) as usize;
            p.height[k] = if i < 16 { 0.0 } else { -8.0 };
            p.water[k] = 0.3 - p.height[k];
        }
    }
    // From high above, where the water reflects little of the sky.
    let camera = Camera {
        position: Vec3::new(16.0, 60.0, 24.0),
        target: Vec3::new(16.0, 0.0, 16.0),
        ..Camera::default()
    };
    let pixels = render(&mut r, Some(p), camera);
    let (ax, ay) = project(&camera, Vec3::new(6.0, 0.3, 16.0));
    let (bx, by) = project(&camera, Vec3::new(26.0, 0.3, 16.0));
    let (shallow, deep) = (pixel(&pixels, ax, ay), pixel(&pixels, bx, by));
    assert!(
        deep.luma() < shallow.luma() * 0.75,
        "deep {deep:?}, shallow {shallow:?}"
    );
    assert!(
        deep.blueness() > shallow.blueness() + 0.05,
        "deep {deep:?}, shallow {shallow:?}"
    );
    assert_clean_shutdown(r);
}

/// A tree just outside the view still shadows the ground in view: the shadow map culls
/// what casts into it by what it covers, not by the camera's frustum.
#[test]
fn a_caster_outside_the_view_shadows_the_ground_in_it() {
    use sylva_runtime::extract::CylinderBatch;
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    let camera = Camera {
        position: Vec3::new(32.0, 30.0, 32.01),
        target: Vec3::new(32.0, 0.0, 32.0),
        ..Camera::default()
    };
    // A 20 m trunk at x = 5, left of the view; the sun's rays run toward +x and down, so
    // its shadow crosses the view's left half along z = 32.
    let sun = Sun {
        direction: Vec3::new(1.0, -0.8, 0.0).normalize(),
        colour: Vec3::ONE,
    };
    let mut trunk = CylinderBatch::default();
    trunk.push(
        Vec3::new(5.0, 0.0, 32.0),
        Vec3::new(5.0, 20.0, 32.0),
        2.0,
        2.0,
        [120, 90, 60, 255],
    );
    let mut terrain = TerrainBatch {
        patches: vec![patch(65, REGOLITH)],
        evicted: Vec::new(),
    };
    let stats = r
        .render(FrameInput {
            cylinders: vec![&mut trunk],
            terrain: Some(&mut terrain),
            camera,
            sun,
            ..FrameInput::default()
        })
        .unwrap();
    assert_eq!(stats.cylinders, 0, "the trunk is out of view: {stats:?}");
    assert!(stats.shadow_draw_calls >= 1, "but it casts: {stats:?}");
    let pixels = r.read_pixels();
    let (sx, sy) = project(&camera, Vec3::new(24.0, 0.0, 32.0));
    let (cx, cy) = project(&camera, Vec3::new(24.0, 0.0, 41.0));
    let (shade, open) = (pixel(&pixels, sx, sy), pixel(&pixels, cx, cy));
    assert!(
        shade.luma() < 0.8 * open.luma(),
        "shadow {shade:?}, open ground {open:?}"
    );
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

/// The mean of the 3 × 3 pixels around `(x, y)`: the ground's fine detail varies pixel
/// to pixel, light and shadow do not.
fn around(pixels: &[u8], (x, y): (u32, u32)) -> Rgb {
    let mut sum = Rgb(0.0, 0.0, 0.0);
    for dy in 0..3 {
        for dx in 0..3 {
            let p = pixel(pixels, (x + dx).saturating_sub(1), (y + dy).saturating_sub(1));
            sum = Rgb(sum.0 + p.0 / 9.0, sum.1 + p.1 / 9.0, sum.2 + p.2 / 9.0);
        }
    }
    sum
}

/// Hills shadow the ground behind them: a ridge under a low sun leaves a dark band on
/// the flat ground on its far side, while lit ground, flat or facing the sun, shows no
/// shadow of itself (acne): it is as bright as with shadows off.
#[test]
fn a_ridge_under_a_low_sun_shadows_the_ground_behind_it() {
    let Some(mut r) = renderer_or_skip(WIDTH, HEIGHT) else {
        return;
    };
    // Flat soil with a ridge 12 m high along z, its crest at x = 23, its faces at 76°.
    let res = 65;
    let mut p = patch(res, REGOLITH);
    for j in 0..res {
        for i in 0..res {
            p.height[(j * res + i) as usize] = (12.0 - 4.0 * (i as f32 - 23.0).abs()).max(0.0);
        }
    }
    // The sun 22° up, its rays toward +x: the ridge's shadow reaches about 30 m past it.
    let sun = Sun {
        direction: Vec3::new(1.0, -0.4, 0.0).normalize(),
        colour: Vec3::ONE,
    };
    let camera = Camera {
        position: Vec3::new(32.0, 50.0, 32.01),
        target: Vec3::new(32.0, 0.0, 32.0),
        ..Camera::default()
    };
    let frame = |r: &mut Renderer, strength: f32| {
        r.atmosphere.shadow_strength = strength;
        let mut terrain = TerrainBatch {
            patches: vec![p.clone()],
            evicted: Vec::new(),
        };
        let stats = r
            .render(FrameInput {
                terrain: Some(&mut terrain),
                camera,
                sun,
                ..FrameInput::default()
            })
            .unwrap();
        assert_validation_clean(r);
        (stats, r.read_pixels())
    };
    let (stats, shadowed) = frame(&mut r, 0.85);
    let (_, open) = frame(&mut r, 0.0);
    assert!(stats.shadow_draw_calls >= 1, "the terrain casts: {stats:?}");
    let front = project(&camera, Vec3::new(10.0, 0.0, 32.0));
    let behind = project(&camera, Vec3::new(38.0, 0.0, 32.0));
    let face = project(&camera, Vec3::new(21.5, 6.0, 32.0));
    // Brightness with shadows over brightness without, at `at`.
    let kept = |at| around(&shadowed, at).luma() / around(&open, at).luma();
    assert!(
        kept(behind) < 0.85,
        "behind the ridge keeps {} of its light, in front {}",
        kept(behind),
        kept(front)
    );
    for (name, at) in [("flat ground", front), ("the sunny face", face)] {
        assert!(
            kept(at) > 0.95,
            "{name} shadows itself: it keeps {} of its light",
            kept(at)
        );
    }
    assert_clean_shutdown(r);
}
