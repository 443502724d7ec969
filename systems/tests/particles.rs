//! Particle and spring physics through the real schedule.

use glam::Vec3;
use sylva_runtime::{App, AppConfig, Validate};
use sylva_systems::particles::{
    self, ChainField, Integrator, InvMass, ParticleSettings, ParticleSolver, Pinned, Position, Spring, SpringBatch,
    Velocity, spawn_chain_field,
};

fn app(step: f64, threads: usize, settings: ParticleSettings) -> App {
    let mut app = App::new(AppConfig {
        step_seconds: step,
        threads,
        seed: 11,
        ..AppConfig::default()
    })
    .unwrap();
    particles::install(&mut app, settings);
    particles::install_extraction(&mut app, 0.01);
    app
}

/// A pinned root at the origin and one particle hanging from it by a spring.
fn pendulum(app: &mut App, start: Vec3, mass: f32, k: f32, c: f32, rest: f32) -> hecs::Entity {
    let w = &mut app.world.entities;
    let root = w.spawn((Position(Vec3::ZERO), Velocity(Vec3::ZERO), InvMass(1.0), Pinned));
    let bob = w.spawn((Position(start), Velocity(Vec3::ZERO), InvMass(1.0 / mass)));
    w.spawn((Spring {
        a: root,
        b: bob,
        rest_length: rest,
        stiffness: k,
        damping: c,
    },));
    bob
}

fn position(app: &App, e: hecs::Entity) -> Vec3 {
    app.world.entities.get::<&Position>(e).unwrap().0
}

#[test]
fn a_damped_spring_settles_at_its_static_extension() {
    for integrator in [Integrator::SemiImplicitEuler, Integrator::Rk4] {
        let mut app = app(
            1.0 / 240.0,
            2,
            ParticleSettings {
                integrator,
                ..Default::default()
            },
        );
        let (m, k, c, rest) = (0.5, 50.0, 2.0, 1.0);
        let bob = pendulum(&mut app, Vec3::new(0.0, -1.0, 0.0), m, k, c, rest);
        app.advance(240 * 20);
        let x = position(&app, bob);
        let v = app.world.entities.get::<&Velocity>(bob).unwrap().0;
        let expected = -(rest + m * 9.81 / k);
        assert!(
            (x.y - expected).abs() < 1e-4,
            "{integrator:?}: y = {}, expected {expected}",
            x.y
        );
        assert!(x.x.abs() < 1e-6 && x.z.abs() < 1e-6);
        assert!(v.length() < 1e-4, "{integrator:?}: still moving at {v}");
    }
}

/// Error at t = 2.25 s (2¼ periods, where the displacement changes fastest, so a
/// phase error shows fully) of an undamped oscillator against the analytic cosine.
fn oscillator_error(integrator: Integrator, dt: f64) -> f64 {
    let mut app = app(
        dt,
        1,
        ParticleSettings {
            gravity: Vec3::ZERO,
            integrator,
        },
    );
    let (m, k, rest, amplitude) = (1.0f32, 4.0 * std::f32::consts::PI.powi(2), 1.0, 0.5);
    let bob = pendulum(&mut app, Vec3::new(rest + amplitude, 0.0, 0.0), m, k, 0.0, rest);
    let steps = (2.25 / dt).round() as u32;
    app.advance(steps);
    let t = f64::from(steps) * dt;
    let omega = (f64::from(k) / f64::from(m)).sqrt();
    let exact = f64::from(rest) + f64::from(amplitude) * (omega * t).cos();
    (f64::from(position(&app, bob).x) - exact).abs()
}

#[test]
fn rk4_error_shrinks_sixteenfold_when_the_step_halves() {
    let coarse = oscillator_error(Integrator::Rk4, 0.075);
    let fine = oscillator_error(Integrator::Rk4, 0.0375);
    let ratio = coarse / fine;
    assert!(
        coarse > 1e-4,
        "coarse error {coarse} too small to measure against f32 noise"
    );
    assert!(
        (12.0..20.0).contains(&ratio),
        "RK4 error ratio {ratio} (coarse {coarse}, fine {fine})"
    );
}

#[test]
fn semi_implicit_euler_is_first_order() {
    let ratio =
        oscillator_error(Integrator::SemiImplicitEuler, 0.002) / oscillator_error(Integrator::SemiImplicitEuler, 0.001);
    assert!((1.6..2.5).contains(&ratio), "Euler error ratio {ratio}");
}

fn chain_app(threads: usize, integrator: Integrator) -> App {
    let mut app = app(
        1.0 / 240.0,
        threads,
        ParticleSettings {
            integrator,
            ..Default::default()
        },
    );
    let field = ChainField {
        columns: 9,
        rows: 7,
        links: 10,
        ..ChainField::default()
    };
    field.validate().unwrap();
    spawn_chain_field(&mut app.world.entities, &field, 11);
    app
}

#[test]
fn fixed_roots_never_move_and_free_particles_do() {
    let mut app = chain_app(2, Integrator::SemiImplicitEuler);
    let snapshot = |app: &App, pinned: bool| -> Vec<[u32; 3]> {
        let mut q = app.world.entities.query::<(&Position, Option<&Pinned>)>();
        q.iter()
            .filter(|(_, p)| p.is_some() == pinned)
            .map(|(x, _)| x.0.to_array().map(f32::to_bits))
            .collect()
    };
    let roots = snapshot(&app, true);
    let free = snapshot(&app, false);
    assert_eq!(roots.len(), 63);
    app.advance(300);
    assert_eq!(snapshot(&app, true), roots, "a pinned root moved");
    let moved = snapshot(&app, false).iter().zip(&free).filter(|(a, b)| a != b).count();
    assert_eq!(moved, free.len(), "every free particle should have moved");
}

#[test]
fn same_seed_gives_bit_identical_state_for_any_thread_count() {
    for integrator in [Integrator::SemiImplicitEuler, Integrator::Rk4] {
        let hashes: Vec<u64> = [1, 2, 4]
            .into_iter()
            .map(|threads| {
                let mut app = chain_app(threads, integrator);
                app.advance(200);
                app.state_hash().unwrap()
            })
            .collect();
        assert_eq!(hashes[0], hashes[1], "{integrator:?}: 1 vs 2 threads");
        assert_eq!(hashes[0], hashes[2], "{integrator:?}: 1 vs 4 threads");
        let mut other = chain_app(1, integrator);
        other.advance(199);
        assert_ne!(other.state_hash().unwrap(), hashes[0], "hash must see the state change");
    }
}

#[test]
fn topology_changes_are_picked_up() {
    let mut app = chain_app(2, Integrator::SemiImplicitEuler);
    app.advance(1);
    let solver_counts = |app: &App| {
        let s = app.world.resources.get::<ParticleSolver>().unwrap();
        (s.particle_count(), s.spring_count(), s.dangling_springs(), s.rebuilds())
    };
    assert_eq!(solver_counts(&app), (63 * 11, 63 * 10, 0, 1));
    app.advance(5);
    assert_eq!(solver_counts(&app).3, 1, "no rebuild without a change");

    // Despawn one free particle: its two springs dangle and stop acting.
    let victim = app
        .world
        .entities
        .query::<(hecs::Entity, &Position)>()
        .without::<&Pinned>()
        .iter()
        .map(|(e, _)| e)
        .nth(3)
        .unwrap();
    app.world.entities.despawn(victim).unwrap();
    app.advance(1);
    assert_eq!(solver_counts(&app), (63 * 11 - 1, 63 * 10, 2, 2));

    // A new chain spawned later joins the simulation.
    let extra = ChainField {
        columns: 1,
        rows: 1,
        links: 3,
        ..ChainField::default()
    };
    spawn_chain_field(&mut app.world.entities, &extra, 99);
    app.advance(1);
    assert_eq!(solver_counts(&app), (63 * 11 - 1 + 4, 63 * 10 + 3, 2, 3));
}

#[test]
fn extraction_draws_every_live_spring_between_its_particles() {
    let mut app = chain_app(2, Integrator::SemiImplicitEuler);
    app.advance(10);
    let batch = app.world.resources.get::<SpringBatch>().unwrap();
    assert_eq!(batch.cylinders.len(), 630);
    assert_eq!(batch.cylinders.dirty.start, 0);
    assert_eq!(batch.cylinders.dirty.end, 630);
    let mut q = app.world.entities.query::<&Spring>();
    let springs: Vec<Spring> = q.iter().copied().collect();
    for (i, s) in springs.iter().enumerate() {
        assert_eq!(
            batch.cylinders.start[i],
            app.world.entities.get::<&Position>(s.a).unwrap().0
        );
        assert_eq!(
            batch.cylinders.end[i],
            app.world.entities.get::<&Position>(s.b).unwrap().0
        );
    }
}

#[test]
fn frames_without_a_step_upload_nothing() {
    let mut app = chain_app(1, Integrator::SemiImplicitEuler);
    app.advance(1);
    let take = |app: &App| {
        app.world
            .resources
            .get_mut::<SpringBatch>()
            .unwrap()
            .cylinders
            .dirty
            .take()
    };
    assert_eq!(take(&app).end, 630);
    app.advance(0);
    assert!(take(&app).is_clean(), "a frame without simulation steps re-extracted");
    app.advance(1);
    assert_eq!(take(&app).end, 630);
}

#[test]
fn snapshot_restores_a_running_simulation() {
    let dir = std::env::temp_dir().join(format!("sylva-particles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chains.snap");
    let mut a = chain_app(2, Integrator::Rk4);
    a.advance(50);
    a.save_snapshot(&path).unwrap();
    a.advance(50);
    let mut b = chain_app(1, Integrator::Rk4);
    b.load_snapshot(&path).unwrap();
    assert_eq!(b.time().tick, 50);
    b.advance(50);
    assert_eq!(a.state_hash().unwrap(), b.state_hash().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn chain_field_validation_names_the_field() {
    let bad = ChainField {
        stiffness: -1.0,
        ..ChainField::default()
    };
    assert_eq!(bad.validate().unwrap_err().dotted(), "stiffness");
    let bad = ChainField {
        damping: f32::NAN,
        ..ChainField::default()
    };
    assert_eq!(bad.validate().unwrap_err().dotted(), "damping");
    let huge = ChainField {
        columns: 100_000,
        rows: 100_000,
        ..ChainField::default()
    };
    let e = huge.validate().unwrap_err();
    assert_eq!(e.dotted(), "links");
    assert!(e.message.contains("exceeds"));
}
