//! Grass in an app: structures as entities, baked layers, scattered instances,
//! walkers pushing blades live, and the `GrassBatch` the frame system fills.

use glam::{Vec2, Vec3};
use sylva_runtime::extract::GrassBatch;
use sylva_runtime::{App, AppConfig};
use sylva_systems::grass::{
    BakeSettings, BladeLink, BladeParticle, BladeRoot, BladeShape, Dynamics, GrassBakeError, GrassError, GrassLayers,
    GrassSettings, GrassStats, LiveSettings, Segment, SpeciesSettings, Walk, Walker, Wind, WindField, install,
    species_file,
};
use sylva_systems::placement::{Plane, ScatterParams};

fn settings(walkers: Vec<Walker>) -> GrassSettings {
    let species = |shape: BladeShape, count: u32| SpeciesSettings {
        shape,
        scatter: ScatterParams {
            count,
            min_distance: 0.05,
            min: Vec2::splat(-2.0),
            max: Vec2::splat(2.0),
            ..ScatterParams::default()
        },
        scale: (0.8, 1.2),
        colour: [10, 200, 30, 255],
    };
    GrassSettings {
        species: vec![
            species(BladeShape::blade(2, 0.3, Segment::default()), 60),
            species(BladeShape::tuft(3, 0.25, 0.3, Segment::default()), 20),
        ],
        bake: BakeSettings {
            cells: 4,
            frames: 4,
            record_every: 4,
            max_warmup_seconds: 0.25,
            ..BakeSettings::default()
        },
        wind: WindField {
            winds: vec![Wind {
                seed: 3,
                power_offset: 1.0,
                power_amplitude: 2.0,
                frequency: 0.5,
                deviation: 1.0,
                ..Wind::default()
            }],
            gusts: Vec::new(),
        },
        dynamics: Dynamics::default(),
        wind_power: 1.5,
        wave_speed: 2.0,
        live: LiveSettings::default(),
        walkers,
        bake_file: None,
    }
}

fn walker() -> Walker {
    Walker {
        walk: Walk::Orbit {
            center: (0.0, 0.0),
            radius: 1.0,
        },
        ..Walker::default()
    }
}

fn app(threads: usize, settings: &GrassSettings) -> App {
    let mut app = App::new(AppConfig {
        seed: 11,
        threads,
        step_seconds: 1.0 / 240.0,
        ..AppConfig::default()
    })
    .unwrap();
    install(&mut app, settings, &Plane { y: 0.5 }).unwrap();
    app
}

#[test]
fn structures_are_entities_with_a_fixed_root() {
    let s = settings(Vec::new());
    let app = app(1, &s);
    let w = &app.world;
    // blade2: root + 2; tuft(3): root + 6.
    assert_eq!(w.count::<BladeParticle>(), 3 + 7);
    assert_eq!(w.count::<BladeRoot>(), 2);
    assert_eq!(w.count::<BladeLink>(), 2 + 6);
    for (link,) in w.entities.query::<(&BladeLink,)>().iter() {
        let parent = *w.entities.get::<&BladeParticle>(link.parent).unwrap();
        let child = *w.entities.get::<&BladeParticle>(link.child).unwrap();
        assert_eq!(parent.species, child.species);
        assert!(parent.index < child.index);
        assert!((child.rest.distance(parent.rest) - link.rest_length).abs() < 1e-6);
        assert!((link.rest_length - child.segment.length).abs() < 1e-6);
    }
    let stats = *w.resources.get::<GrassStats>().unwrap();
    assert_eq!(stats.blades, 80);
    assert_eq!(stats.particles, 60 * 3 + 20 * 7);
    assert_eq!(stats.springs, 60 * 2 + 20 * 6);
    assert_eq!(stats.baked_frames, 8);
    assert_eq!(stats.texture_bytes, 4 * 4 * 4 * 8 * (2 + 6));
}

#[test]
fn saved_bakes_are_read_back_for_their_own_species_only() {
    let s = settings(Vec::new());
    let baked = app(1, &s);
    let dir = std::env::temp_dir().join(format!("sylva-grass-ecs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lawn.bin");
    let layers = baked.world.resources.get::<GrassLayers>().unwrap();
    for (k, sp) in layers.species.iter().enumerate() {
        sp.baked.save(&species_file(&file, k)).unwrap();
    }
    let read = app(
        1,
        &GrassSettings {
            bake_file: Some(file.clone()),
            ..s.clone()
        },
    );
    let read_layers = read.world.resources.get::<GrassLayers>().unwrap();
    for (a, b) in layers.species.iter().zip(&read_layers.species) {
        assert_eq!(a.baked, b.baked);
    }
    let stats = *read.world.resources.get::<GrassStats>().unwrap();
    assert_eq!((stats.loaded_bakes, stats.bake_ms), (2, 0.0));
    assert_eq!(stats.baked_frames, 8);

    // Another wind bakes other motion: the saved bakes are not its own.
    let mut windier = s.clone();
    windier.wind.winds[0].power_offset = 2.0;
    windier.bake_file = Some(file.clone());
    // The seed of `app`, so that only what the test changes differs.
    let fresh = || {
        App::new(AppConfig {
            seed: 11,
            ..AppConfig::default()
        })
        .unwrap()
    };
    let e = install(&mut fresh(), &windier, &Plane { y: 0.5 }).unwrap_err();
    assert!(
        matches!(&e, GrassError::Bake { species: 0, error: GrassBakeError::Stale { path } } if *path == file),
        "{e}"
    );
    assert!(e.to_string().contains("bake it again"), "{e}");
    // Species 1's file missing: its path is named.
    std::fs::remove_file(species_file(&file, 1)).unwrap();
    let e = install(
        &mut fresh(),
        &GrassSettings {
            bake_file: Some(file.clone()),
            ..s
        },
        &Plane { y: 0.5 },
    )
    .unwrap_err();
    let missing = species_file(&file, 1);
    assert!(
        matches!(&e, GrassError::Bake { species: 1, error: GrassBakeError::Io { path, .. } } if *path == missing),
        "{e}"
    );
    assert!(e.to_string().contains("lawn-1.bin"), "{e}");
}

#[test]
fn the_batch_holds_every_instance_and_uploads_them_once() {
    let s = settings(Vec::new());
    let mut app = app(1, &s);
    app.advance(4);
    {
        let batch = app.world.resources.get::<GrassBatch>().unwrap();
        assert_eq!(batch.layers.len(), 2);
        assert_eq!((batch.wind_power, batch.wave_speed), (1.5, 2.0));
        assert!((batch.time - 4.0 / 240.0).abs() < 1e-6, "{}", batch.time);
        for (layer, want) in batch.layers.iter().zip([60, 20]) {
            assert!(layer.is_consistent());
            assert_eq!(layer.len(), want);
            assert_eq!((layer.dirty.start, layer.dirty.end), (0, want as u32));
            assert!(
                layer
                    .root
                    .iter()
                    .all(|r| r.y == 0.5 && r.x.abs() <= 2.0 && r.z.abs() <= 2.0)
            );
            assert!(layer.scale.iter().all(|s| (0.8..=1.2).contains(s)));
            assert!(layer.live_slot.iter().all(|&s| s == u32::MAX));
            assert!(layer.live_displacement.is_empty());
        }
        assert_eq!(batch.layers[1].shape.width.len(), 7);
    }
    for layer in &mut app.world.resources.get_mut::<GrassBatch>().unwrap().layers {
        layer.dirty.take();
    }
    app.advance(4);
    let batch = app.world.resources.get::<GrassBatch>().unwrap();
    assert!(
        batch.layers.iter().all(|l| l.dirty.is_clean()),
        "nothing changed, nothing is dirty"
    );
    assert!((batch.time - 8.0 / 240.0).abs() < 1e-6);
}

/// The live parts of the batch after `steps` steps.
fn live_state(threads: usize, steps: u32) -> (Vec<Vec<u32>>, Vec<Vec<Vec3>>, usize) {
    let s = settings(vec![walker()]);
    let mut app = app(threads, &s);
    app.advance(steps);
    let batch = app.world.resources.get::<GrassBatch>().unwrap();
    let live = app.world.resources.get::<GrassLayers>().unwrap().live_blades();
    (
        batch.layers.iter().map(|l| l.live_slot.clone()).collect(),
        batch.layers.iter().map(|l| l.live_displacement.clone()).collect(),
        live,
    )
}

#[test]
fn a_walker_pushes_blades_live_identically_on_any_thread_count() {
    let (slots, displacement, live) = live_state(1, 120);
    assert!(live > 0);
    let slotted: usize = slots.iter().map(|s| s.iter().filter(|&&x| x != u32::MAX).count()).sum();
    assert_eq!(slotted, live, "one slot per live blade");
    for (layer, (slots, disp)) in slots.iter().zip(&displacement).enumerate() {
        let links = [2, 6][layer];
        let n = slots.iter().filter(|&&x| x != u32::MAX).count();
        assert_eq!(disp.len(), n * links);
        // Slots are 0..n, each used once.
        let mut used: Vec<u32> = slots.iter().copied().filter(|&x| x != u32::MAX).collect();
        used.sort_unstable();
        assert_eq!(used, (0..n as u32).collect::<Vec<_>>());
        assert!(disp.iter().all(|d| d.is_finite()));
    }
    assert_eq!((slots, displacement, live), live_state(2, 120));
}

#[test]
fn blades_return_to_the_bake_after_the_walker_leaves() {
    let mut s = settings(vec![Walker {
        walk: Walk::Path {
            points: vec![(0.0, 0.0), (50.0, 0.0)],
        },
        speed: 20.0,
        ..Walker::default()
    }]);
    s.live = LiveSettings {
        hold_seconds: 0.1,
        blend_seconds: 0.1,
        ..LiveSettings::default()
    };
    let mut app = app(1, &s);
    app.advance(2);
    assert!(app.world.resources.get::<GrassLayers>().unwrap().live_blades() > 0);
    for layer in &mut app.world.resources.get_mut::<GrassBatch>().unwrap().layers {
        assert!(layer.live_slot.iter().any(|&x| x != u32::MAX));
        layer.dirty.take();
    }
    // 0.5 s later the walker is 10 m away and the hold and fade are over.
    app.advance(120);
    assert_eq!(app.world.resources.get::<GrassLayers>().unwrap().live_blades(), 0);
    let batch = app.world.resources.get::<GrassBatch>().unwrap();
    for layer in &batch.layers {
        assert!(layer.live_slot.iter().all(|&x| x == u32::MAX));
        assert!(layer.live_displacement.is_empty());
        assert!(!layer.dirty.is_clean(), "slots handed back are marked for upload");
    }
}

#[test]
fn live_blades_keep_their_own_clock_and_a_bad_live_step_is_refused() {
    // Fixed steps of 1/240 s, live steps of 1/120 s: after 121 fixed steps the live clock
    // has taken 61 steps (it runs up to half a live step ahead) and stays within that.
    let s = settings(vec![walker()]);
    let mut app = app(1, &s);
    app.advance(121);
    let layers = app.world.resources.get::<GrassLayers>().unwrap();
    let h = LiveSettings::default().step_seconds;
    for sp in &layers.species {
        assert_eq!(sp.live.step_seconds(), h);
        assert!((sp.live.time - 61.0 * h).abs() < 1e-5, "live clock at {}", sp.live.time);
    }
    drop(layers);
    let mut bad = settings(Vec::new());
    bad.live.step_seconds = 1.0 / 60.0;
    let mut app = App::new(AppConfig::default()).unwrap();
    let e = install(&mut app, &bad, &Plane { y: 0.0 }).unwrap_err();
    assert!(e.to_string().contains("step_seconds"), "{e}");
}
