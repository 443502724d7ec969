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
    let h = d.step_seconds;
    let baked_tip = |g: &LiveGrass, b: usize| g.position(&baked, b, 6).y;
    let rest_tip = shape.rest[6].y;
    // A sphere sinks onto the blades around `near` and stays for a second.
    let c = roots[near];
    let mut flattened = f32::MAX;
    for k in 0..480 {
        let y = (0.45 - k as f32 * 0.002).max(0.15);
        g.step(
            &baked,
            &wind,
            &[Pusher {
                center: Vec3::new(c.x, y, c.z),
                radius: 0.15,
            }],
            h,
        );
        flattened = flattened.min(g.position(&baked, near, 6).y);
    }
    assert!(g.live_blades() > 0);
    assert!(flattened < 0.6 * rest_tip, "tip at {flattened} of {rest_tip}");
    let far_tip = g.position(&baked, far, 6).y;
    assert!(far_tip > 0.9 * rest_tip, "a far blade moved: {far_tip}");
    // The pusher leaves; after hold + blend the blade is baked again and upright.
    for _ in 0..(240 * 3) {
        g.step(&baked, &wind, &[], h);
    }
    assert_eq!(g.live_blades(), 0);
    let tip = baked_tip(&g, near);
    assert!(tip > 0.9 * rest_tip, "not recovered: {tip}");
}
