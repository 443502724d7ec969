//! Space colonization growth: determinism, stepping, the thesis invariants, termination,
//! bad input and forests.

use glam::Vec3;
use sylva_runtime::Validate;
use sylva_systems::colonize::{
    ColonizeError, ColonizeParams, Colonizer, Region, Sampling, Shape, Termination, WeightedGrowth, smooth_branching,
};
use sylva_systems::tree::{BranchGraph, NO_PARENT};

fn params() -> ColonizeParams {
    ColonizeParams {
        influence_radius: 80.0,
        kill_distance: 20.0,
        step: 10.0,
        tropism: Vec3::new(0.0, 0.0, 0.1),
        iterations: 300,
        max_degree: 3,
        max_depth: 5,
        max_no_growth: 5,
        weighted_growth: WeightedGrowth::Off,
        smooth_angles: false,
        curve_reduction: 1.0,
        count: 1500,
        regions: vec![Region {
            shape: Shape::Sphere {
                centre: Vec3::new(0.0, 0.0, 400.0),
                radius: 200.0,
            },
            sampling: Sampling::Uniform,
        }],
        exclusions: Vec::new(),
        points_file: None,
        roots: vec![Vec3::ZERO],
        crown_gap: 0.0,
        iterations_per_step: 0,
    }
}

fn grown(p: &ColonizeParams, seed: u64) -> Colonizer {
    let mut c = Colonizer::new(p, seed).unwrap();
    c.run();
    c
}

fn field(e: ColonizeError) -> String {
    match e {
        ColonizeError::InvalidParam(e) => e.dotted(),
        other => panic!("expected InvalidParam, got {other}"),
    }
}

#[test]
fn same_seed_same_tree_other_seed_other_tree() {
    let p = params();
    let a = grown(&p, 3);
    let b = grown(&p, 3);
    let c = grown(&p, 4);
    assert_eq!(a.graphs(), b.graphs());
    assert_ne!(a.graphs(), c.graphs());
    assert!(a.graphs()[0].len() > 100, "{} segments", a.graphs()[0].len());
}

#[test]
fn one_call_equals_many_steps() {
    let p = params();
    let whole = grown(&p, 9);
    assert!(whole.iterations() > 20);
    for chunk in [1, 7] {
        let mut c = Colonizer::new(&p, 9).unwrap();
        let mut calls = 0;
        let reason = loop {
            calls += 1;
            if let Some(t) = c.step(chunk) {
                break t;
            }
        };
        assert_eq!(
            calls,
            (whole.iterations() + 1).div_ceil(chunk),
            "the stop is found on the call after the last iteration"
        );
        assert_eq!(Some(reason), whole.termination());
        assert_eq!(c.iterations(), whole.iterations());
        assert_eq!(c.graphs(), whole.graphs());
        assert_eq!(c.step(5), Some(reason), "a finished run stays finished");
    }
}

#[test]
fn thread_count_does_not_change_the_tree() {
    let p = params();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| grown(&p, 5).graphs().to_vec())
    };
    assert_eq!(run(1), run(2));
}

fn check_invariants(p: &ColonizeParams, c: &Colonizer) {
    let g = &c.graphs()[0];
    g.validate().unwrap();
    let children = g.children();
    for i in 0..g.len() {
        let kids = children.of(i as u32);
        assert!(
            kids.len() as u32 <= p.max_degree,
            "segment {i} has {} children",
            kids.len()
        );
        assert!(g.depth[i] <= p.max_depth);
        for (k, &child) in kids.iter().enumerate() {
            let expected = g.depth[i] + u32::from(k > 0);
            assert_eq!(g.depth[child as usize], expected, "child {k} of {i}");
            let length = g.start[child as usize].distance(g.end[child as usize]);
            let z = g.depth[i] as f32;
            let want = match p.weighted_growth {
                WeightedGrowth::Off => p.step,
                WeightedGrowth::Thesis => {
                    if g.depth[i] == 0 {
                        2.0 * p.step
                    } else {
                        p.step
                    }
                }
                WeightedGrowth::Linear => p.step * (1.0 + (p.max_depth as f32 - z) / p.max_depth as f32),
            };
            assert!(
                (length - want).abs() < 1e-3 * want,
                "segment {child}: length {length}, want {want}"
            );
            assert_eq!(g.start[child as usize], g.end[i]);
        }
    }
    let dk2 = p.kill_distance * p.kill_distance;
    for (i, a) in c.attractors().iter().enumerate() {
        let near = g.end.iter().any(|e| e.distance_squared(*a) <= dk2);
        assert!(!(near && c.is_alive(i)), "attractor {i} alive within d_k of a node");
    }
}

#[test]
fn invariants_hold_for_every_growth_rule() {
    for weighted in [WeightedGrowth::Off, WeightedGrowth::Linear, WeightedGrowth::Thesis] {
        let p = ColonizeParams {
            weighted_growth: weighted,
            max_depth: 4,
            ..params()
        };
        let c = grown(&p, 11);
        check_invariants(&p, &c);
        let g = &c.graphs()[0];
        assert!(g.depth.contains(&4), "{weighted:?}: depth limit reached");
        assert!(g.children().of(0).len() > 1, "{weighted:?}: the trunk forks");
    }
}

#[test]
fn degree_one_grows_one_unforked_branch() {
    let p = ColonizeParams {
        max_degree: 1,
        ..params()
    };
    let c = grown(&p, 2);
    check_invariants(&p, &c);
    let g = &c.graphs()[0];
    assert!(g.len() > 20);
    assert!(g.depth.iter().all(|&z| z == 0));
    assert!((1..g.len()).all(|i| g.parent[i] == i as u32 - 1));
}

#[test]
fn termination_iteration_limit() {
    let p = ColonizeParams {
        iterations: 3,
        ..params()
    };
    let c = grown(&p, 1);
    assert_eq!(c.termination(), Some(Termination::IterationLimit));
    assert_eq!(c.iterations(), 3);
    assert!(c.attractors_left() > 0);
}

#[test]
fn termination_attractors_exhausted() {
    let p = ColonizeParams {
        influence_radius: 100.0,
        kill_distance: 30.0,
        ..params()
    };
    let mut c = Colonizer::with_attractors(&p, vec![Vec3::new(0.0, 0.0, 50.0)], &[]).unwrap();
    assert_eq!(c.run(), Termination::AttractorsExhausted);
    assert_eq!((c.iterations(), c.nodes(), c.attractors_left()), (0, 1, 0));
    assert_eq!(
        c.graphs()[0].end[0],
        Vec3::new(0.0, 0.0, 50.0),
        "the trunk reaches the cloud"
    );
}

#[test]
fn termination_no_influence() {
    let p = ColonizeParams {
        influence_radius: 50.0,
        kill_distance: 5.0,
        step: 10.0,
        tropism: Vec3::ZERO,
        ..params()
    };
    let points = vec![
        Vec3::new(0.0, 0.0, 100.0),
        Vec3::new(0.0, 0.0, 120.0),
        Vec3::new(0.0, 0.0, 140.0),
        Vec3::new(3000.0, 0.0, 0.0),
    ];
    let mut c = Colonizer::with_attractors(&p, points, &[(Vec3::new(0.0, 0.0, 100.0), 10.0)]).unwrap();
    assert_eq!(c.run(), Termination::NoInfluence);
    assert_eq!(c.attractors_left(), 1);
    assert!(c.is_alive(3));
    let g = &c.graphs()[0];
    assert_eq!(g.end[0], Vec3::new(0.0, 0.0, 90.0));
    assert_eq!(g.end.last().copied(), Some(Vec3::new(0.0, 0.0, 140.0)));
    assert_eq!(g.len(), 6);
}

#[test]
fn trunk_extends_toward_a_distant_region() {
    let p = ColonizeParams {
        roots: vec![Vec3::new(0.0, 0.0, -1000.0)],
        ..params()
    };
    let c = Colonizer::new(&p, 1).unwrap();
    let g = &c.graphs()[0];
    assert_eq!(g.len(), 1);
    assert_eq!(g.start[0], Vec3::new(0.0, 0.0, -1000.0));
    assert!(
        g.end[0].x == 0.0 && g.end[0].y == 0.0 && g.end[0].z >= 200.0 && g.end[0].z < 300.0,
        "{}",
        g.end[0]
    );
}

#[test]
fn attractors_lie_in_regions_and_outside_exclusions() {
    let hole = Shape::Box {
        min: Vec3::new(-50.0, -300.0, 300.0),
        max: Vec3::new(50.0, 300.0, 700.0),
    };
    let p = ColonizeParams {
        exclusions: vec![hole],
        ..params()
    };
    let c = Colonizer::new(&p, 8).unwrap();
    assert_eq!(c.attractors().len(), 1500);
    for a in c.attractors() {
        assert!(p.regions[0].shape.contains(*a, 1e-3));
        assert!(!hole.contains(*a, 0.0));
    }
}

#[test]
fn bad_input_names_the_field() {
    let cases: Vec<(ColonizeParams, &str)> = vec![
        (
            ColonizeParams {
                kill_distance: 80.0,
                ..params()
            },
            "kill_distance",
        ),
        (
            ColonizeParams {
                kill_distance: 100.0,
                ..params()
            },
            "kill_distance",
        ),
        (
            ColonizeParams {
                influence_radius: 0.0,
                ..params()
            },
            "influence_radius",
        ),
        (
            ColonizeParams {
                kill_distance: -1.0,
                ..params()
            },
            "kill_distance",
        ),
        (ColonizeParams { step: -2.0, ..params() }, "step"),
        (
            ColonizeParams {
                step: f32::NAN,
                ..params()
            },
            "step",
        ),
        (
            ColonizeParams {
                tropism: Vec3::new(0.0, f32::NAN, 0.0),
                ..params()
            },
            "tropism",
        ),
        (
            ColonizeParams {
                max_degree: 0,
                ..params()
            },
            "max_degree",
        ),
        (
            ColonizeParams {
                crown_gap: -1.0,
                ..params()
            },
            "crown_gap",
        ),
        (
            ColonizeParams {
                crown_gap: f32::NAN,
                ..params()
            },
            "crown_gap",
        ),
        (
            ColonizeParams {
                regions: Vec::new(),
                ..params()
            },
            "regions",
        ),
        (ColonizeParams { count: 0, ..params() }, "count"),
        (
            ColonizeParams {
                curve_reduction: 1.5,
                ..params()
            },
            "curve_reduction",
        ),
        (
            ColonizeParams {
                roots: Vec::new(),
                ..params()
            },
            "roots",
        ),
        (
            ColonizeParams {
                regions: vec![Region {
                    shape: Shape::Sphere {
                        centre: Vec3::ZERO,
                        radius: 0.0,
                    },
                    sampling: Sampling::Uniform,
                }],
                ..params()
            },
            "regions[0].shape.radius",
        ),
        (
            ColonizeParams {
                exclusions: vec![Shape::Cylinder {
                    base: Vec3::ZERO,
                    radius: 5.0,
                    height: -1.0,
                }],
                ..params()
            },
            "exclusions[0].height",
        ),
        (
            ColonizeParams {
                exclusions: vec![Shape::Sphere {
                    centre: Vec3::new(0.0, 0.0, 400.0),
                    radius: 500.0,
                }],
                ..params()
            },
            "exclusions",
        ),
    ];
    for (p, want) in cases {
        assert_eq!(field(Colonizer::new(&p, 1).err().unwrap()), want);
    }
    let err = Colonizer::with_attractors(&params(), Vec::new(), &[]).err().unwrap();
    assert_eq!(field(err), "regions");
    let err = Colonizer::with_attractors(&params(), vec![Vec3::new(1.0, f32::INFINITY, 0.0)], &[])
        .err()
        .unwrap();
    assert_eq!(field(err), "attractors[0]");
    let err = Colonizer::with_attractors(&params(), vec![Vec3::Z], &[(Vec3::NAN, 1.0)])
        .err()
        .unwrap();
    assert_eq!(field(err), "targets[0]");
    let no_region = ColonizeParams {
        regions: Vec::new(),
        ..params()
    };
    assert!(
        Colonizer::with_attractors(&no_region, vec![Vec3::Z], &[]).is_ok(),
        "explicit attractors need no region"
    );
    let e = ColonizeParams {
        kill_distance: 90.0,
        ..params()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.dotted(), "kill_distance");
    assert!(e.message.contains("influence_radius"), "{e}");
}

#[test]
fn smoothing_pulls_fork_ends_halfway_to_their_mean() {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::new(1.0, 0.0, 1.0), 0, 0);
    g.push(Vec3::Z, Vec3::new(-1.0, 0.0, 3.0), 0, 1);
    g.push(Vec3::new(-1.0, 0.0, 3.0), Vec3::new(-1.0, 0.0, 4.0), 2, 1);
    smooth_branching(&mut g);
    assert_eq!(g.end[0], Vec3::Z);
    assert_eq!(g.end[1], Vec3::new(0.5, 0.0, 1.5));
    assert_eq!(g.end[2], Vec3::new(-0.5, 0.0, 2.5));
    assert_eq!(g.start[3], Vec3::new(-0.5, 0.0, 2.5));
    assert_eq!(g.end[3], Vec3::new(-1.0, 0.0, 4.0), "a single child's end stays");
}

#[test]
fn finish_smooths_and_reduces() {
    let p = ColonizeParams {
        smooth_angles: true,
        curve_reduction: 0.9,
        ..params()
    };
    let c = grown(&p, 3);
    let raw = &c.graphs()[0];
    let done = &c.finish().unwrap()[0];
    done.validate().unwrap();
    assert!(done.len() < raw.len() * 3 / 4, "{} of {}", done.len(), raw.len());
    let none = ColonizeParams {
        smooth_angles: false,
        ..params()
    };
    let c = grown(&none, 3);
    assert_eq!(&c.finish().unwrap()[0], &c.graphs()[0]);
}

fn segment_distance(p1: Vec3, q1: Vec3, p2: Vec3, q2: Vec3) -> f32 {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    let c = d1.dot(r);
    let b = d1.dot(d2);
    let denom = a * e - b * b;
    let mut s = if denom > 1e-9 {
        ((b * f - c * e) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut t = (b * s + f) / e;
    if t < 0.0 {
        t = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if t > 1.0 {
        t = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (p1 + d1 * s).distance(p2 + d2 * t)
}

/// The two-tree forest of [`forest_crowns_avoid_each_other`].
fn two_tree_forest() -> ColonizeParams {
    ColonizeParams {
        influence_radius: 150.0,
        kill_distance: 40.0,
        step: 15.0,
        iterations: 400,
        max_degree: 4,
        max_depth: 20,
        count: 4000,
        regions: vec![Region {
            shape: Shape::Box {
                min: Vec3::new(-1200.0, -400.0, 300.0),
                max: Vec3::new(1200.0, 400.0, 1100.0),
            },
            sampling: Sampling::Uniform,
        }],
        roots: vec![Vec3::new(-600.0, 0.0, 0.0), Vec3::new(600.0, 0.0, 0.0)],
        ..params()
    }
}

/// Closest distance between a segment of `a` and one of `b`, trunks left out.
fn closest_segments(a: &BranchGraph, b: &BranchGraph) -> f32 {
    let mut closest = f32::INFINITY;
    for i in 1..a.len() {
        for j in 1..b.len() {
            closest = closest.min(segment_distance(a.start[i], a.end[i], b.start[j], b.end[j]));
        }
    }
    closest
}

#[test]
fn forest_crowns_avoid_each_other() {
    let p = two_tree_forest();
    let c = grown(&p, 4);
    let gs = c.graphs();
    assert_eq!(gs.len(), 2);
    assert!(
        gs[0].len() > 200 && gs[1].len() > 200,
        "{} and {}",
        gs[0].len(),
        gs[1].len()
    );
    let closest = closest_segments;
    let together = closest(&gs[0], &gs[1]);
    assert!(together >= p.kill_distance, "closest segments {together}");
    // Grown alone on the same cloud, the two crowns would interpenetrate.
    let alone = |root| {
        grown(
            &ColonizeParams {
                roots: vec![root],
                ..p.clone()
            },
            4,
        )
        .graphs()[0]
            .clone()
    };
    let apart = closest(&alone(p.roots[0]), &alone(p.roots[1]));
    assert!(apart < 0.25 * p.kill_distance, "solo crowns {apart} apart");
    assert!(
        gs[0].end.iter().any(|e| e.x > -100.0) && gs[1].end.iter().any(|e| e.x < 100.0),
        "crowns meet in the middle"
    );
}

/// Nothing in the algorithm repels one tree's nodes from another's: the crowns part because
/// each attractor feeds only its nearest node and dies within d_k of any node. So no gap of
/// several d_k is guaranteed; over seeds the closest segments of the two crowns lie between
/// about 0.9 and 2 d_k (seed 1: 0.94 d_k, seed 4: 1.51 d_k), and never closer than d_k − D.
/// Grown alone, each crown fills the whole cloud and the two interpenetrate.
#[test]
fn forest_crowns_stay_at_least_kill_distance_minus_step_apart() {
    let p = two_tree_forest();
    let mut gaps = Vec::new();
    for seed in 0..4 {
        let c = grown(&p, seed);
        let gs = c.graphs();
        gaps.push(closest_segments(&gs[0], &gs[1]) / p.kill_distance);
    }
    let floor = (p.kill_distance - p.step) / p.kill_distance;
    assert!(gaps.iter().all(|&g| g >= floor), "gaps in d_k: {gaps:?}, floor {floor}");
    let mean = gaps.iter().sum::<f32>() / gaps.len() as f32;
    assert!(mean > 1.2, "mean gap {mean} d_k: {gaps:?}");
}

/// With a crown gap of 3 d_k, no attractor between the crowns feeds either tree once both
/// have branches near it, so the crowns keep about the gap apart: over seeds 0..16 the closest
/// segments lie 2.62–3.09 d_k apart (about the gap less one step D), where without the gap
/// they come within about d_k. Not a proven bound: the test asks for 2.5 d_k.
#[test]
fn a_crown_gap_keeps_forest_crowns_several_kill_distances_apart() {
    let p = ColonizeParams {
        crown_gap: 3.0 * two_tree_forest().kill_distance,
        ..two_tree_forest()
    };
    let mut gaps = Vec::new();
    for seed in 0..4 {
        let c = grown(&p, seed);
        let gs = c.graphs();
        assert!(
            gs[0].len() > 150 && gs[1].len() > 150,
            "{} and {}",
            gs[0].len(),
            gs[1].len()
        );
        assert!(
            gs[0].end.iter().any(|e| e.x > -250.0) && gs[1].end.iter().any(|e| e.x < 250.0),
            "crowns still grow toward each other"
        );
        gaps.push(closest_segments(&gs[0], &gs[1]) / p.kill_distance);
    }
    assert!(gaps.iter().all(|&g| g >= 2.5), "gaps in d_k: {gaps:?}");
}

#[test]
fn a_point_file_feeds_the_tree() {
    let dir = std::env::temp_dir().join(format!("sylva-colonize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cloud.xyz");
    let text: String = (0..200)
        .map(|i| {
            format!(
                "{} {} {}\n",
                (i % 10) as f32 * 10.0,
                (i / 10 % 5) as f32 * 10.0,
                200.0 + (i / 50) as f32 * 10.0
            )
        })
        .collect();
    std::fs::write(&path, format!("# cloud\n{text}")).unwrap();
    let p = ColonizeParams {
        regions: Vec::new(),
        points_file: Some(path.display().to_string()),
        influence_radius: 60.0,
        kill_distance: 8.0,
        ..params()
    };
    let c = grown(&p, 1);
    assert_eq!(c.attractors().len(), 200);
    assert!(c.graphs()[0].len() > 10);
    let missing = ColonizeParams {
        points_file: Some(dir.join("none.xyz").display().to_string()),
        ..p
    };
    assert!(matches!(Colonizer::new(&missing, 1), Err(ColonizeError::Io { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}
