//! Particle-solver throughput at a million elements.
//!
//! `euler_1m_particles`: free particles under gravity, semi-implicit Euler over
//! the ECS columns (target ≥ 150 M particle updates/s on 2 cores).
//! `springs_1m`: a million springs in 1,000 chains, one full step
//! (gather, spring forces, per-particle sums, integration; target ≥ 50 M springs/s).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use sylva::runtime::{App, AppConfig};
use sylva::systems::particles::{self, ChainField, Integrator, InvMass, ParticleSettings, Position, Velocity};

fn app(integrator: Integrator) -> App {
    let mut app = App::new(AppConfig {
        step_seconds: 1.0 / 240.0,
        threads: 2,
        ..AppConfig::default()
    })
    .expect("thread pool starts");
    particles::install(
        &mut app,
        ParticleSettings {
            integrator,
            ..ParticleSettings::default()
        },
    );
    app
}

fn free_particles(c: &mut Criterion) {
    const N: usize = 1_000_000;
    let mut app = app(Integrator::SemiImplicitEuler);
    app.world.entities.spawn_batch((0..N).map(|i| {
        (
            Position(Vec3::new(i as f32, 0.0, 0.0)),
            Velocity(Vec3::ZERO),
            InvMass(1.0),
        )
    }));
    app.advance(1);
    let mut group = c.benchmark_group("particles");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("euler_1m_particles", |b| b.iter(|| app.advance(1)));
    group.finish();
}

fn springs(c: &mut Criterion) {
    let field = ChainField {
        columns: 1000,
        rows: 1,
        links: 1000,
        link_length: 0.01,
        ..ChainField::default()
    };
    let mut group = c.benchmark_group("particles");
    group.throughput(Throughput::Elements(field.spring_count()));
    for (name, integrator) in [
        ("springs_1m_euler", Integrator::SemiImplicitEuler),
        ("springs_1m_rk4", Integrator::Rk4),
    ] {
        let mut app = app(integrator);
        particles::spawn_chain_field(&mut app.world.entities, &field, 1);
        app.advance(1);
        group.bench_function(name, |b| b.iter(|| app.advance(1)));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = free_particles, springs
}
criterion_main!(benches);
