//! Colonization in the world: attractor entities, growth a few iterations per fixed step,
//! the same tree however it is stepped and on any thread count.

use glam::Vec3;
use sylva_runtime::{App, AppConfig};
use sylva_systems::colonize::{
    Attractor, AttractorBatch, ColonizeParams, Colonizer, Colonizing, GrownSegment, Region, Sampling, Shape,
    WeightedGrowth, install, spawn_colonizing,
};
use sylva_systems::tree::{BranchDepth, NO_PARENT, Placement, RadiusParams, Segment, Tree, TreeMember, compute_radii};

fn params() -> ColonizeParams {
    ColonizeParams {
        influence_radius: 80.0,
        kill_distance: 20.0,
        step: 10.0,
        tropism: Vec3::new(0.0, 0.0, 0.1),
        iterations: 200,
        max_degree: 3,
        max_depth: 5,
        max_no_growth: 5,
        weighted_growth: WeightedGrowth::Off,
        count: 1200,
        regions: vec![Region {
            shape: Shape::Sphere {
                centre: Vec3::new(0.0, 0.0, 300.0),
                radius: 150.0,
            },
            sampling: Sampling::Uniform,
        }],
        roots: vec![Vec3::new(-60.0, 0.0, 0.0), Vec3::new(60.0, 0.0, 0.0)],
        ..ColonizeParams::default()
    }
}

const PLACEMENT: Placement = Placement {
    position: Vec3::new(1.0, 0.0, -2.0),
    scale: 0.01,
};

/// Grows `params()` in an app on `threads` threads, `per_step` iterations per fixed step, until
/// it stops; returns the app and the colonizer's entity.
fn grow_in_app(threads: usize, per_step: u32) -> (App, hecs::Entity) {
    let mut app = App::new(AppConfig {
        seed: 5,
        threads,
        ..AppConfig::default()
    })
    .unwrap();
    install(&mut app);
    let colonizer = Colonizer::new(&params(), 5).unwrap();
    let holder = spawn_colonizing(
        &mut app.world.entities,
        colonizer,
        PLACEMENT,
        RadiusParams::default(),
        per_step,
    );
    for _ in 0..1000 {
        let done = app
            .world
            .entities
            .get::<&Colonizing>(holder)
            .unwrap()
            .colonizer()
            .termination()
            .is_some();
        if done {
            break;
        }
        app.advance(1);
    }
    app.advance(1);
    (app, holder)
}

/// Every grown segment, ordered by (graph, index), with its depth.
fn segments(app: &App) -> Vec<(u32, u32, u32, Segment, u32)> {
    let mut q = app
        .world
        .entities
        .query::<(&Segment, &GrownSegment, &BranchDepth, &TreeMember)>();
    let mut out: Vec<_> = q
        .iter()
        .map(|(s, g, d, _)| (g.graph, g.index, g.parent, *s, d.0))
        .collect();
    out.sort_by_key(|e| (e.0, e.1));
    out
}

#[test]
fn stepped_growth_equals_one_run_on_any_thread_count() {
    let (a, _) = grow_in_app(1, 1);
    let (b, _) = grow_in_app(2, 7);
    let (c, _) = grow_in_app(2, 1000);
    let sa = segments(&a);
    assert!(sa.len() > 200, "{} segments", sa.len());
    assert_eq!(sa, segments(&b));
    assert_eq!(sa, segments(&c));
    // And equal to the colonizer run directly, with pipe-model radii of the final graph.
    let mut direct = Colonizer::new(&params(), 5).unwrap();
    direct.run();
    let mut expected = Vec::new();
    for (g, graph) in direct.graphs().iter().enumerate() {
        let mut sized = graph.clone();
        compute_radii(&mut sized, &RadiusParams::default()).unwrap();
        for i in 0..graph.len() {
            let seg = Segment {
                start: PLACEMENT.point(sized.start[i]),
                end: PLACEMENT.point(sized.end[i]),
                start_radius: PLACEMENT.length(sized.start_radius[i]),
                end_radius: PLACEMENT.length(sized.end_radius[i]),
            };
            expected.push((g as u32, i as u32, graph.parent[i], seg, graph.depth[i]));
        }
    }
    assert_eq!(sa, expected);
    assert_eq!(sa.iter().filter(|s| s.2 == NO_PARENT).count(), 2, "one trunk per root");
}

#[test]
fn attractor_entities_mirror_the_live_attractors() {
    let (app, holder) = grow_in_app(2, 3);
    let world = &app.world.entities;
    let col = world.get::<&Colonizing>(holder).unwrap();
    let c = col.colonizer();
    let mut q = world.query::<&Attractor>();
    let live: Vec<&Attractor> = q.iter().collect();
    assert_eq!(live.len(), c.attractors_left());
    assert!(c.attractors_left() < c.attractors().len(), "growth killed some");
    for a in &live {
        assert!(c.is_alive(a.index as usize));
        assert_eq!(a.colonizer, holder);
        assert_eq!(a.position, PLACEMENT.point(c.attractors()[a.index as usize]));
    }
    let batch = app.world.resources.get::<AttractorBatch>().unwrap();
    assert_eq!(batch.points.len(), c.attractors_left());
    // The tree entities count their segments.
    let mut trees = world.query::<&Tree>();
    let total: u32 = trees.iter().map(|t| t.segments).sum();
    assert_eq!(total as usize, c.nodes());
}

#[test]
fn zero_iterations_per_step_pauses_growth() {
    let (app, holder) = grow_in_app(1, 0);
    let world = &app.world.entities;
    let col = world.get::<&Colonizing>(holder).unwrap();
    assert_eq!(col.colonizer().iterations(), 0);
    assert_eq!(segments(&app).len(), 2, "only the trunks");
}
