//! Poisson-disk placement: spacing, ground rules, determinism and how full it gets.

use glam::{Vec2, Vec3};
use sylva_systems::placement::{Ground, GroundSample, Plane, Rules, ScatterParams, TerrainGround, scatter};
use sylva_systems::terrain::{Heightfield, Material};

fn min_pair_distance(points: &[Vec3]) -> f32 {
    let mut best = f32::INFINITY;
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            best = best.min(Vec2::new(a.x - b.x, a.z - b.z).length());
        }
    }
    best
}

#[test]
fn points_keep_their_distance_and_stay_in_the_area() {
    let p = ScatterParams {
        count: 400,
        min_distance: 3.0,
        ..ScatterParams::default()
    };
    let pts = scatter(&p, &Plane { y: 2.0 }, 9).unwrap();
    assert_eq!(pts.len(), 400);
    assert!(min_pair_distance(&pts) > 3.0);
    for q in &pts {
        assert!((-50.0..=50.0).contains(&q.x) && (-50.0..=50.0).contains(&q.z), "{q}");
        assert_eq!(q.y, 2.0);
    }
}

#[test]
fn same_seed_same_points_other_seed_other_points() {
    let p = ScatterParams::default();
    let a = scatter(&p, &Plane { y: 0.0 }, 1).unwrap();
    assert_eq!(a, scatter(&p, &Plane { y: 0.0 }, 1).unwrap());
    assert_ne!(a, scatter(&p, &Plane { y: 0.0 }, 2).unwrap());
    let on_two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert_eq!(a, on_two.install(|| scatter(&p, &Plane { y: 0.0 }, 1).unwrap()));
}

#[test]
fn a_full_area_holds_a_jammed_packing() {
    // Random sequential adsorption of discs of diameter d jams at 54.7 % coverage, i.e. about
    // 0.547 · A / (π d² / 4) points; a finite number of darts stops somewhat below.
    let p = ScatterParams {
        count: 100_000,
        min_distance: 4.0,
        attempts_per_point: 1,
        ..ScatterParams::default()
    };
    let pts = scatter(&p, &Plane { y: 0.0 }, 3).unwrap();
    let jammed = 0.547 * 100.0 * 100.0 / (std::f32::consts::PI * 4.0);
    let n = pts.len() as f32;
    assert!(
        n > 0.8 * jammed && n <= 1.05 * jammed,
        "{n} points, jamming limit {jammed}"
    );
    assert!(min_pair_distance(&pts) > 4.0);
}

/// A 64 × 64 field: a ramp rising along x (slope grows with x), granite on the left half, sand
/// on the right.
fn ramp() -> Heightfield {
    let (w, d) = (64, 64);
    let mut ground = Vec::new();
    let mut top = Vec::new();
    for _z in 0..d {
        for x in 0..w {
            let xf = x as f32;
            ground.push(0.02 * xf * xf);
            top.push(Some(if x < 32 { Material::Granite } else { Material::Sand }));
        }
    }
    Heightfield {
        width: w,
        depth: d,
        ground,
        water: vec![0.0; w * d],
        top,
    }
}

#[test]
fn terrain_rules_are_respected() {
    let field = ramp();
    let ground = TerrainGround {
        field: &field,
        cell_length: 2.0,
    };
    let rules = Rules {
        slope: (5.0, 40.0),
        height: (1.0, 30.0),
        materials: vec![Material::Sand],
    };
    let p = ScatterParams {
        count: 200,
        min_distance: 3.0,
        min: Vec2::ZERO,
        max: Vec2::splat(128.0),
        rules: rules.clone(),
        ..ScatterParams::default()
    };
    let pts = scatter(&p, &ground, 5).unwrap();
    assert!(pts.len() > 50, "{} points", pts.len());
    for q in &pts {
        let g: GroundSample = ground.sample(q.x, q.z).unwrap();
        assert!(rules.allows(&g), "{q}: {g:?}");
        assert_eq!(g.material, Some(Material::Sand));
        assert_eq!(q.y, g.height);
        assert!(
            (5.0..=40.0).contains(&g.slope) && (1.0..=30.0).contains(&g.height),
            "{g:?}"
        );
    }
    assert!(min_pair_distance(&pts) > 3.0);
    // Granite only: the left half, and every point there.
    let granite = ScatterParams {
        rules: Rules {
            materials: vec![Material::Granite],
            ..Rules::default()
        },
        ..p
    };
    let pts = scatter(&granite, &ground, 5).unwrap();
    assert!(!pts.is_empty());
    assert!(pts.iter().all(|q| q.x < 64.0), "granite ends at x = 64 m");
}

#[test]
fn nothing_passes_impossible_rules() {
    let p = ScatterParams {
        rules: Rules {
            height: (10.0, 20.0),
            ..Rules::default()
        },
        ..ScatterParams::default()
    };
    assert!(scatter(&p, &Plane { y: 0.0 }, 1).unwrap().is_empty());
}

#[test]
fn bad_parameters_name_the_field() {
    let field = |p: ScatterParams| scatter(&p, &Plane { y: 0.0 }, 1).unwrap_err().dotted();
    let d = ScatterParams::default;
    assert_eq!(
        field(ScatterParams {
            min_distance: 0.0,
            ..d()
        }),
        "min_distance"
    );
    assert_eq!(
        field(ScatterParams {
            min_distance: f32::NAN,
            ..d()
        }),
        "min_distance"
    );
    assert_eq!(
        field(ScatterParams {
            max: Vec2::new(-60.0, 10.0),
            ..d()
        }),
        "max"
    );
    assert_eq!(
        field(ScatterParams {
            attempts_per_point: 0,
            ..d()
        }),
        "attempts_per_point"
    );
    assert_eq!(
        field(ScatterParams {
            rules: Rules {
                slope: (30.0, 10.0),
                ..Rules::default()
            },
            ..d()
        }),
        "rules.slope"
    );
    assert_eq!(
        field(ScatterParams {
            count: 2_000_000,
            ..d()
        }),
        "count"
    );
}

/// Dart throwing as the module docs define it, checked against every kept point.
fn darts_by_hand(p: &ScatterParams, seed: u64) -> Vec<Vec3> {
    use rand::RngExt;
    use sylva_runtime::rng::{StreamKey, stream};
    let mut kept: Vec<Vec3> = Vec::new();
    for i in 0..u64::from(p.count) * u64::from(p.attempts_per_point) {
        if kept.len() >= p.count as usize {
            break;
        }
        let mut rng = stream(seed, StreamKey::Index(i), "placement.candidate");
        let c = p.min + (p.max - p.min) * Vec2::new(rng.random::<f32>(), rng.random::<f32>());
        let near = |k: &Vec3| {
            let d = c - Vec2::new(k.x, k.z);
            d.x * d.x + d.y * d.y <= p.min_distance * p.min_distance
        };
        if !kept.iter().any(near) {
            kept.push(Vec3::new(c.x, 0.0, c.y));
        }
    }
    kept
}

#[test]
fn kept_points_are_the_darts_a_check_against_every_kept_point_keeps() {
    let cases = [
        // Cells as wide as the distance.
        (Vec2::splat(-50.0), Vec2::splat(50.0), 3.0, 400),
        // A long strip: the cells along it are capped.
        (Vec2::ZERO, Vec2::new(5000.0, 0.5), 0.3, 900),
        // A distance far below the spacing the count asks for: cells by count.
        (Vec2::ZERO, Vec2::splat(10.0), 0.001, 1500),
        // An area filled to jamming.
        (Vec2::ZERO, Vec2::splat(6.0), 0.5, 1000),
    ];
    for (min, max, min_distance, count) in cases {
        let p = ScatterParams {
            count,
            min_distance,
            min,
            max,
            attempts_per_point: 4,
            ..ScatterParams::default()
        };
        let got = scatter(&p, &Plane { y: 0.0 }, 5).unwrap();
        assert_eq!(got, darts_by_hand(&p, 5), "{min} {max} {min_distance} {count}");
    }
}
