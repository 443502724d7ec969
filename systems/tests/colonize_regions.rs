//! Attractor regions: containment, densities, union without doubling, point files.

use glam::Vec3;
use sylva_systems::colonize::{
    ColonizeError, MAX_COORDINATE, MAX_POINT_LINE, Region, Sampling, Shape, load_points, parse_points, sample_regions,
};

fn shapes() -> Vec<Shape> {
    vec![
        Shape::Sphere {
            centre: Vec3::new(1.0, 2.0, 3.0),
            radius: 5.0,
        },
        Shape::Cylinder {
            base: Vec3::new(-1.0, 0.0, 2.0),
            radius: 3.0,
            height: 8.0,
        },
        Shape::Box {
            min: Vec3::new(-2.0, -1.0, 0.0),
            max: Vec3::new(4.0, 1.0, 3.0),
        },
        Shape::Cone {
            base: Vec3::ZERO,
            radius: 4.0,
            height: 6.0,
        },
    ]
}

#[test]
fn every_shape_and_mode_samples_inside_deterministically() {
    for shape in shapes() {
        for sampling in [Sampling::Uniform, Sampling::CentreWeighted, Sampling::Surface] {
            let r = [Region { shape, sampling }];
            let a = sample_regions(&r, &[], 2000, 7).unwrap();
            assert_eq!(a.len(), 2000);
            assert_eq!(a, sample_regions(&r, &[], 2000, 7).unwrap());
            assert_ne!(a, sample_regions(&r, &[], 2000, 8).unwrap());
            for p in &a {
                assert!(shape.contains(*p, 1e-4), "{shape:?} {sampling:?}: {p}");
            }
            if sampling == Sampling::Surface {
                let shrunk = a.iter().filter(|p| shape.contains(**p, -1e-3)).count();
                assert_eq!(shrunk, 0, "{shape:?}: surface points lie on the boundary");
            }
        }
    }
}

fn fraction_within(points: &[Vec3], centre: Vec3, r: f32) -> f32 {
    points.iter().filter(|p| p.distance(centre) < r).count() as f32 / points.len() as f32
}

#[test]
fn sphere_uniform_versus_centre_weighted() {
    let shape = Shape::Sphere {
        centre: Vec3::ZERO,
        radius: 10.0,
    };
    let uniform = sample_regions(
        &[Region {
            shape,
            sampling: Sampling::Uniform,
        }],
        &[],
        20_000,
        1,
    )
    .unwrap();
    let weighted = sample_regions(
        &[Region {
            shape,
            sampling: Sampling::CentreWeighted,
        }],
        &[],
        20_000,
        1,
    )
    .unwrap();
    let u = fraction_within(&uniform, Vec3::ZERO, 5.0);
    let w = fraction_within(&weighted, Vec3::ZERO, 5.0);
    assert!(
        (u - 0.125).abs() < 0.01,
        "uniform: {u} within half the radius, want 1/8"
    );
    assert!(
        (w - 0.5).abs() < 0.02,
        "centre-weighted: {w} within half the radius, want 1/2"
    );
}

#[test]
fn cylinder_uniform_versus_axis_weighted() {
    let shape = Shape::Cylinder {
        base: Vec3::ZERO,
        radius: 10.0,
        height: 4.0,
    };
    let count = |sampling| {
        let a = sample_regions(&[Region { shape, sampling }], &[], 20_000, 2).unwrap();
        a.iter().filter(|p| p.truncate().length() < 5.0).count() as f32 / 20_000.0
    };
    assert!((count(Sampling::Uniform) - 0.25).abs() < 0.015);
    assert!((count(Sampling::CentreWeighted) - 0.5).abs() < 0.02);
}

#[test]
fn overlaps_are_not_sampled_twice() {
    let left = Shape::Sphere {
        centre: Vec3::new(-0.5, 0.0, 0.0),
        radius: 1.0,
    };
    let right = Shape::Sphere {
        centre: Vec3::new(0.5, 0.0, 0.0),
        radius: 1.0,
    };
    let regions = [
        Region {
            shape: left,
            sampling: Sampling::Uniform,
        },
        Region {
            shape: right,
            sampling: Sampling::Uniform,
        },
    ];
    let a = sample_regions(&regions, &[], 40_000, 3).unwrap();
    let in_cube = |c: Vec3| a.iter().filter(|p| (**p - c).abs().max_element() < 0.2).count() as f32;
    let overlap = in_cube(Vec3::ZERO);
    let left_only = in_cube(Vec3::new(-1.0, 0.0, 0.0));
    let right_only = in_cube(Vec3::new(1.0, 0.0, 0.0));
    // Expected about 362 each; a doubled overlap would hold about 724.
    for (name, n) in [("left", left_only), ("right", right_only)] {
        let ratio = overlap / n;
        assert!((0.8..1.25).contains(&ratio), "overlap {overlap} vs {name} {n}");
    }
}

#[test]
fn exclusions_stay_empty() {
    let region = Region {
        shape: Shape::Box {
            min: Vec3::ZERO,
            max: Vec3::splat(10.0),
        },
        sampling: Sampling::Uniform,
    };
    let hole = Shape::Sphere {
        centre: Vec3::splat(5.0),
        radius: 4.0,
    };
    let a = sample_regions(&[region], &[hole], 5000, 4).unwrap();
    assert_eq!(a.len(), 5000);
    assert!(a.iter().all(|p| !hole.contains(*p, 0.0)));
    let err = sample_regions(
        &[region],
        &[Shape::Box {
            min: Vec3::splat(-1.0),
            max: Vec3::splat(11.0),
        }],
        10,
        4,
    )
    .unwrap_err();
    assert!(
        matches!(err, ColonizeError::InvalidParam(ref e) if e.dotted() == "exclusions"),
        "{err}"
    );
    assert!(matches!(
        sample_regions(&[], &[], 10, 1),
        Err(ColonizeError::InvalidParam(_))
    ));
}

#[test]
fn point_files_parse_with_line_numbers() {
    assert_eq!(
        parse_points("# x y z\n1 2 3\n\n  -4.5\t5e1 6  \n", "t.xyz", 10).unwrap(),
        vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(-4.5, 50.0, 6.0)]
    );
    let line_of = |text: &str| match parse_points(text, "t.xyz", 10) {
        Err(e @ ColonizeError::PointFile { line, .. }) => (line, e.to_string()),
        other => panic!("{other:?}"),
    };
    assert_eq!(line_of("1 2 3\n\n4 x 6\n").0, 3);
    let (line, message) = line_of("1 2\n");
    assert_eq!(line, 1);
    assert!(
        message.starts_with("point file t.xyz:1: ") && message.contains("found 2"),
        "{message}"
    );
    assert_eq!(line_of("1 2 3\n1 2 3 4\n").0, 2);
    assert_eq!(line_of("nan 2 3\n").0, 1);
}

/// Points beyond the coordinate bound, past the attractor limit, or on endless lines stop the read
/// at their line (an attractor at 1e13 once reached the grid and panicked there;
/// docs/design/limits.md, "Point files").
#[test]
fn point_files_are_bounded_line_by_line() {
    let error = |r: Result<Vec<Vec3>, ColonizeError>| match r {
        Err(ColonizeError::PointFile { file, line, message }) => (file, line, message.to_string()),
        other => panic!("{other:?}"),
    };
    let (_, line, message) = error(parse_points("0 0 0\n1e13 0 0\n", "t.xyz", 10));
    assert_eq!(line, 2);
    assert!(message.contains(&format!("within ±{MAX_COORDINATE}")), "{message}");
    assert_eq!(parse_points("1e6 -1e6 0", "t.xyz", 10).unwrap().len(), 1);
    // The limit counts points, not comments or blank lines.
    let text = "# three\n1 1 1\n\n2 2 2\n# more\n3 3 3\n4 4 4\n";
    assert_eq!(parse_points(text, "t.xyz", 4).unwrap().len(), 4);
    let (_, line, message) = error(parse_points(text, "t.xyz", 3));
    assert_eq!(line, 7);
    assert!(message.contains("more than 3 points"), "{message}");

    let dir = std::env::temp_dir().join(format!("sylva-points-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cloud.xyz");
    // A file of one endless line is rejected after MAX_POINT_LINE bytes.
    std::fs::write(&path, format!("1 2 3\n{}", "7".repeat(10 * MAX_POINT_LINE))).unwrap();
    let (file, line, message) = error(load_points(&path, 10));
    assert_eq!((file, line), (path.display().to_string(), 2));
    assert!(message.contains("longer than"), "{message}");
    std::fs::write(&path, "1 2 3\r\n\r\n4 5 6").unwrap();
    assert_eq!(
        load_points(&path, 10).unwrap(),
        [Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)]
    );
    let (_, line, _) = error(load_points(&path, 1));
    assert_eq!(line, 3);
    std::fs::write(&path, b"1 2 3\n\xff\xfe 0 0\n").unwrap();
    assert_eq!(error(load_points(&path, 10)).1, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
