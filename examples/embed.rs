//! Embedding Sylva in your own engine: no window, no Vulkan, your own loop.
//!
//! Builds one world from a scene file and one from code, adds a component and
//! a system of our own, steps the world from a hand-written clock, and reads
//! the render extraction batch as a renderer of our own would.
//!
//! Run: `cargo run --release --example embed [scene.ron]`

use std::time::{Duration, Instant};

use sylva::runtime::glam::Vec3;
use sylva::runtime::hecs;
use sylva::runtime::{Access, App, AppConfig, System};
use sylva::systems::particles::{self, InvMass, ParticleSettings, Pinned, Position, Spring, SpringBatch, Velocity};

/// Our own component: particles that remember the lowest height they reached.
struct LowWater(f32);

/// Our own resource, written by our own system.
#[derive(Default)]
struct Lowest(f32);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A world from a scene file (or the built-in hanging chains), on 2 threads.
    let scene = match std::env::args().nth(1) {
        Some(path) => sylva::Scene::load(path.as_ref())?,
        None => sylva::Scene::chains(),
    };
    let mut app = sylva::build(&scene, 2)?;
    println!("scene `{}`: {} entities", scene.name, app.world.entities.len());
    add_low_water(&mut app)?;
    run_for(&mut app, Duration::from_millis(500));
    println!(
        "lowest point reached: {:.3} m",
        app.world.resources.get::<Lowest>().unwrap().0
    );
    pendulum()
}

/// 2. Our own components and system. The system declares what it touches;
///    the schedule runs it after `particles.step`, which writes Position.
fn add_low_water(app: &mut App) -> Result<(), hecs::NoSuchEntity> {
    let tagged: Vec<_> = app
        .world
        .entities
        .query::<(hecs::Entity, &Position)>()
        .without::<&Pinned>()
        .iter()
        .map(|(e, _)| e)
        .collect();
    for e in tagged {
        app.world.entities.insert_one(e, LowWater(f32::INFINITY))?;
    }
    app.world.resources.insert(Lowest::default());
    app.add_system(System::new(
        "game.low_water",
        Access::new()
            .read::<Position>()
            .write::<LowWater>()
            .write_res::<Lowest>(),
        |ctx| {
            let mut lowest = f32::INFINITY;
            for (p, low) in ctx.query::<(&Position, &mut LowWater)>().iter() {
                low.0 = low.0.min(p.0.y);
                lowest = lowest.min(low.0);
            }
            ctx.res_mut::<Lowest>().0 = lowest;
        },
    ));
    Ok(())
}

/// 3. Our own main loop: variable frame times, fixed simulation steps inside.
fn run_for(app: &mut App, time: Duration) {
    let started = Instant::now();
    let mut last = started;
    let mut frames = 0;
    while started.elapsed() < time {
        // Stands in for waiting on the display's vertical sync.
        std::thread::sleep(Duration::from_millis(16));
        let now = Instant::now();
        let steps = app.update((now - last).as_secs_f64());
        last = now;
        frames += 1;

        // 4. Read the extraction batch, as our renderer would, and upload only
        //    what is dirty.
        let mut batch = app
            .world
            .resources
            .get_mut::<SpringBatch>()
            .expect("installed by sylva::build");
        let dirty = batch.cylinders.dirty.take();
        if frames % 20 == 0 {
            println!(
                "frame {frames:3}: {steps} steps, {} tubes to upload",
                dirty.end - dirty.start
            );
        }
    }
}

/// 5. A world built from code instead of a file: one pendulum.
fn pendulum() -> Result<(), Box<dyn std::error::Error>> {
    let mut custom = App::new(AppConfig {
        seed: 1,
        threads: 1,
        ..AppConfig::default()
    })?;
    particles::install(&mut custom, ParticleSettings::default());
    let w = &mut custom.world.entities;
    let root = w.spawn((Position(Vec3::ZERO), Velocity(Vec3::ZERO), InvMass(1.0), Pinned));
    let bob = w.spawn((Position(Vec3::new(1.0, 0.0, 0.0)), Velocity(Vec3::ZERO), InvMass(2.0)));
    w.spawn((Spring {
        a: root,
        b: bob,
        rest_length: 1.0,
        stiffness: 200.0,
        damping: 0.5,
    },));
    custom.advance(60);
    let p = custom.world.entities.get::<&Position>(bob)?.0;
    println!(
        "pendulum after one simulated second: ({:.3}, {:.3}, {:.3})",
        p.x, p.y, p.z
    );
    println!("state hash {:016x}", custom.state_hash()?);
    Ok(())
}
