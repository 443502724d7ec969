//! Live interaction: a pusher flattens blades near it; they recover and return to the bake.

use glam::Vec3;
use sylva_systems::grass::{
    BakeSettings, BladeKernel, BladeShape, Dynamics, LiveGrass, LiveSettings, Pusher, Segment, Wind, WindField, bake,
};

#[test]
fn a_pusher_flattens_nearby_blades_and_they_recover_after_it_leaves() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let d = Dynamics::default();
    let wind = WindField {
        winds: vec![Wind {
            seed: 1,
            power_offset: 0.5,
            power_amplitude: 0.5,
            frequency: 0.5,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    };
    let s = BakeSettings {
        cells: 8,
        frames: 16,
        max_warmup_seconds: 4.0,
        ..BakeSettings::default()
    };
    let (baked, _) = bake(&shape, &d, &wind, &s).unwrap();
    let roots: Vec<Vec3> = (0..20)
        .flat_map(|i| (0..20).map(move |j| Vec3::new(i as f32 * 0.1, 0.0, j as f32 * 0.1)))
        .collect();
    let near = 10 * 20 + 10;
    let far = 0;
    let mut g = LiveGrass::new(BladeKernel::new(&shape, &d), roots.clone(), LiveSettings::default());
    let per_second = (1.0 / LiveSettings::default().step_seconds).round() as usize;
    let baked_tip = |g: &LiveGrass, b: usize| g.position(&baked, b, 6).y;
    let rest_tip = shape.rest[6].y;
    // A sphere sinks onto the blades around `near` and stays for a second.
    let c = roots[near];
    let mut flattened = f32::MAX;
    for k in 0..2 * per_second {
        let y = (0.45 - k as f32 * 0.48 / per_second as f32).max(0.15);
        g.step(
            &baked,
            &wind,
            &[Pusher {
                center: Vec3::new(c.x, y, c.z),
                radius: 0.15,
            }],
        );
        flattened = flattened.min(g.position(&baked, near, 6).y);
    }
    assert!(g.live_blades() > 0);
    assert!(flattened < 0.6 * rest_tip, "tip at {flattened} of {rest_tip}");
    let far_tip = g.position(&baked, far, 6).y;
    assert!(far_tip > 0.9 * rest_tip, "a far blade moved: {far_tip}");
    // The pusher leaves; after hold + blend the blade is baked again and upright.
    for _ in 0..3 * per_second {
        g.step(&baked, &wind, &[]);
    }
    assert_eq!(g.live_blades(), 0);
    let tip = baked_tip(&g, near);
    assert!(tip > 0.9 * rest_tip, "not recovered: {tip}");
}

/// A blade placed with a yaw and a scale is simulated where it is drawn: it goes live in
/// its turned, scaled baked pose and bends away from a pusher coming from +x in world space.
#[test]
fn a_turned_scaled_blade_bends_away_from_the_pusher_in_world_space() {
    // One stem leaning towards local +x; a quarter turn about +Y leans it towards world −z.
    let shape = BladeShape::tuft(1, 0.3, 0.4, Segment::default());
    let d = Dynamics::default();
    let s = BakeSettings {
        cells: 4,
        frames: 8,
        max_warmup_seconds: 1.0,
        ..BakeSettings::default()
    };
    let (baked, _) = bake(&shape, &d, &WindField::default(), &s).unwrap();
    let (yaw, scale) = (std::f32::consts::FRAC_PI_2, 1.5);
    let mut g = LiveGrass::new(BladeKernel::new(&shape, &d), vec![Vec3::ZERO], LiveSettings::default())
        .with_placement(vec![yaw], vec![scale])
        .unwrap();
    let tip = shape.len() - 1;
    let drawn_rest = glam::Quat::from_rotation_y(yaw) * (shape.rest[tip] * scale);
    assert!(drawn_rest.z < -0.15 && drawn_rest.x.abs() < 1e-6);
    let before = g.position(&baked, 0, tip);
    assert!(
        (before - drawn_rest).length() < 0.02,
        "baked tip {before} vs drawn rest {drawn_rest}"
    );
    let per_second = (1.0 / LiveSettings::default().step_seconds).round() as usize;
    let pusher = |k: usize| Pusher {
        center: Vec3::new(
            (0.4 - k as f32 * 0.48 / per_second as f32).max(0.1),
            0.2,
            0.5 * drawn_rest.z,
        ),
        radius: 0.15,
    };
    g.step(&baked, &WindField::default(), &[pusher(0)]);
    assert_eq!(g.live_blades(), 1);
    let live = g.position(&baked, 0, tip);
    assert!(
        (live - before).length() < 0.01,
        "the switch to live jumped from {before} to {live}"
    );
    let steps = 3 * per_second / 2;
    for k in 1..steps {
        g.step(&baked, &WindField::default(), &[pusher(k)]);
    }
    let (mid, pushed) = (g.position(&baked, 0, 1), g.position(&baked, 0, tip));
    assert!(
        mid.x < -0.03 && pushed.x < -0.03,
        "stem at {mid}, {pushed}: not pushed towards −x"
    );
    assert!(
        mid.distance(pusher(steps - 1).center) >= 0.15 * (1.0 - 1e-4),
        "stem inside the pusher"
    );
    assert!(
        LiveGrass::new(BladeKernel::new(&shape, &d), vec![Vec3::ZERO], LiveSettings::default())
            .with_placement(vec![0.0], vec![0.0])
            .is_err()
    );
}
