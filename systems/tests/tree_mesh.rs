//! Generalized-cylinder meshes: exact counts, geometry conventions and robustness.

mod tree_support;

use glam::{Quat, Vec3};
use proptest::prelude::*;
use sylva_systems::tree::{
    BranchGraph, MeshCounts, MeshParams, MeshStyle, NO_PARENT, RadiusParams, RootNormal, SidesRule, TreeError,
    TreeMesh, build_mesh, compute_radii, mesh_counts, prepare_graph, ring_rotation,
};
use tree_support::{graph_from_genes, graph_genes, straight, ternary_fig_6_1b};

fn sides(n: u32) -> MeshParams {
    MeshParams {
        sides_min: n,
        sides_max: n,
        curve_reduction: 1.0,
        ..MeshParams::default()
    }
}

/// The forked graph of tree_graph.rs: chains [0, 1, 4], [3], [2, 5]; radii 1.
fn forked() -> BranchGraph {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::Z * 2.0, 0, 0);
    g.push(Vec3::Z, Vec3::new(1.0, 0.0, 2.0), 0, 1);
    g.push(Vec3::Z * 2.0, Vec3::new(0.0, 1.0, 3.0), 1, 1);
    g.push(Vec3::Z * 2.0, Vec3::Z * 3.0, 1, 0);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(2.0, 0.0, 3.0), 2, 1);
    g.start_radius.fill(1.0);
    g.end_radius.fill(1.0);
    g
}

#[test]
fn hand_built_counts() {
    let g = forked();
    // 3 chains over 6 segments: 9 rings of 5 vertices; 2 × 4 triangles per segment.
    let want = MeshCounts {
        chains: 3,
        rings: 9,
        vertices: 45,
        triangles: 48,
    };
    assert_eq!(mesh_counts(&g, &sides(4)).unwrap(), want);
    let mesh = build_mesh(&g, &sides(4)).unwrap();
    assert_eq!(mesh.vertex_count(), 45);
    assert_eq!(mesh.triangle_count(), 48);
    assert_eq!((mesh.normals.len(), mesh.uvs.len()), (45, 45));

    let single = straight(1, Vec3::Z, 1.0);
    let want = MeshCounts {
        chains: 1,
        rings: 2,
        vertices: 8,
        triangles: 6,
    };
    assert_eq!(mesh_counts(&single, &sides(3)).unwrap(), want);
    assert_eq!(
        mesh_counts(&BranchGraph::new(), &sides(3)).unwrap(),
        MeshCounts::default()
    );
    assert!(build_mesh(&BranchGraph::new(), &sides(3)).unwrap().is_empty());
}

#[test]
fn thesis_fig_6_1b_vertex_count() {
    let graph = ternary_fig_6_1b(8);
    let prepared = prepare_graph(&graph, &RadiusParams::thesis_fig_6_1b(), &MeshParams::thesis_fig_6_1b()).unwrap();
    assert_eq!(prepared.len(), 13_121, "max_K = 1.0 removes nothing");
    let want = MeshCounts {
        chains: 9_841,
        rings: 22_962,
        vertices: 206_658,
        triangles: 2 * 8 * 13_121,
    };
    assert_eq!(mesh_counts(&prepared, &MeshParams::thesis_fig_6_1b()).unwrap(), want);
    let mesh = build_mesh(&prepared, &MeshParams::thesis_fig_6_1b()).unwrap();
    assert_eq!(mesh.vertex_count(), 206_658);
    assert_eq!(mesh.triangle_count(), 209_936);
    // The thesis number is (n + 1) × (segments + chains).
    assert_eq!(mesh.vertex_count(), 9 * (13_121 + 9_841));
    assert_eq!(mesh.validate().ok(), Some(()));
}

#[test]
fn default_curve_reduction_on_a_ternary_tree() {
    // With max_K = 0.95 the collinear pairs merge: the stub with the first trunk F, and each
    // bracketed F with the trunk F of the A it carries (every expansion but the first: 363 at
    // n = 6). Chains keep their number, so only rings disappear.
    let graph = ternary_fig_6_1b(6);
    assert_eq!(graph.len(), 1_457);
    let reduced = prepare_graph(&graph, &RadiusParams::default(), &MeshParams::default()).unwrap();
    assert_eq!(reduced.len(), 1_457 - 1 - 363);
    let params = sides(8);
    assert_eq!(
        mesh_counts(&reduced, &params).unwrap().chains,
        mesh_counts(&graph, &params).unwrap().chains
    );
}

#[test]
fn seam_vertex_is_duplicated_with_u_0_and_1() {
    let g = forked();
    for n in [3, 4, 7] {
        let mesh = build_mesh(&g, &sides(n)).unwrap();
        let ring = n as usize + 1;
        assert_eq!(mesh.vertex_count() % ring, 0);
        for (r, chunk) in mesh.positions.chunks(ring).enumerate() {
            assert_eq!(chunk[0], chunk[n as usize], "ring {r} seam position");
            let uv = &mesh.uvs[r * ring..(r + 1) * ring];
            assert_eq!((uv[0].x, uv[n as usize].x), (0.0, 1.0));
            assert_eq!(uv[0].y, uv[n as usize].y);
            for (i, t) in uv.iter().enumerate() {
                assert_eq!(t.x, i as f32 / n as f32);
            }
        }
    }
}

#[test]
fn v_runs_along_each_chain() {
    let mesh = build_mesh(&forked(), &sides(4)).unwrap();
    let v: Vec<f32> = mesh.uvs.chunks(5).map(|ring| ring[0].y).collect();
    // Chains [0, 1, 4] (4 rings), [3] (2 rings), [2, 5] (3 rings).
    assert_eq!(v, vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0, 0.0, 1.0, 0.0, 0.5, 1.0]);
}

fn assert_unit_normals(mesh: &TreeMesh) {
    for (i, n) in mesh.normals.iter().enumerate() {
        assert!((n.length() - 1.0).abs() < 1e-5, "normal {i} = {n}");
    }
}

#[test]
fn normals_are_unit_and_radial() {
    let mut g = ternary_fig_6_1b(3);
    compute_radii(&mut g, &RadiusParams::default()).unwrap();
    let mesh = build_mesh(&g, &MeshParams::default()).unwrap();
    assert_unit_normals(&mesh);
}

#[test]
fn straight_cylinder_geometry_and_outward_winding() {
    let mut g = straight(2, Vec3::Z, 3.0);
    g.start_radius.fill(2.0);
    g.end_radius.fill(2.0);
    let mesh = build_mesh(&g, &sides(6)).unwrap();
    for (i, p) in mesh.positions.iter().enumerate() {
        let ring = i / 7;
        assert!((p.z - 3.0 * ring as f32).abs() < 1e-6);
        assert!((p.truncate().length() - 2.0).abs() < 1e-5);
        assert!((mesh.normals[i] - p.with_z(0.0) / 2.0).length() < 1e-5);
    }
    // Eq. 4.2 with rot_z = 0: vertex i sits at angle i · 60°.
    let p1 = mesh.positions[1];
    assert!((p1 - Vec3::new(60f32.to_radians().cos() * 2.0, 60f32.to_radians().sin() * 2.0, 0.0)).length() < 1e-5);
    for t in mesh.indices.chunks(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| mesh.positions[i as usize]);
        let normal = (b - a).cross(c - a);
        let centroid = (a + b + c) / 3.0;
        assert!(normal.dot(centroid.with_z(0.0)) > 0.0, "triangle {t:?} faces inward");
    }
}

#[test]
fn rotation_angle_grows_per_child_index() {
    // A vertical root with three children: with ring normal +Z everywhere at the fork, child k's
    // base ring starts at angle rot_z + k · 120°.
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    for k in 0..3 {
        let a = (k as f32 * 100.0).to_radians();
        g.push(Vec3::Z, Vec3::new(a.cos(), a.sin(), 2.0), 0, 1);
    }
    g.start_radius.fill(1.0);
    g.end_radius.fill(1.0);
    let params = MeshParams {
        start_rotation_deg: 10.0,
        ..sides(4)
    };
    let mesh = build_mesh(&g, &params).unwrap();
    // Chain 0 is the root alone (children are deeper); chains 1..3 are the children.
    for k in 0..3usize {
        let first = mesh.positions[(2 + 2 * k) * 5];
        let angle = (10.0 + 120.0 * k as f32).to_radians();
        let want = Vec3::Z + Vec3::new(angle.cos(), angle.sin(), 0.0);
        assert!((first - want).length() < 1e-5, "child {k}: {first} vs {want}");
    }
}

#[test]
fn ring_normals_follow_eq_4_1() {
    // Root along X: with RootNormal::Up, n_e = normalize((4, 0, 0) + Z); with Direction, X.
    let g = {
        let mut g = straight(1, Vec3::X, 4.0);
        g.start_radius[0] = 1.0;
        g.end_radius[0] = 1.0;
        g
    };
    for (rule, start, end) in [
        (RootNormal::Up, Vec3::Z, Vec3::new(4.0, 0.0, 1.0).normalize()),
        (RootNormal::Direction, Vec3::X, Vec3::X),
    ] {
        let mesh = build_mesh(
            &g,
            &MeshParams {
                root_normal: rule,
                ..sides(8)
            },
        )
        .unwrap();
        for (ring, want) in [(0usize, start), (1, end)] {
            for n in &mesh.normals[ring * 9..ring * 9 + 9] {
                assert!(
                    n.dot(want).abs() < 1e-5,
                    "{rule:?} ring {ring}: {n} not orthogonal to {want}"
                );
            }
        }
    }
}

#[test]
fn ring_rotation_maps_z_onto_any_normal() {
    let cases = [
        Vec3::Z,
        Vec3::NEG_Z,
        Vec3::new(1e-4, 0.0, -1.0).normalize(),
        Vec3::new(-3e-3, 2e-3, -1.0).normalize(),
        Vec3::new(0.0, 1e-7, -1.0).normalize(),
        Vec3::X,
        Vec3::new(1.0, -2.0, 0.5).normalize(),
    ];
    for n in cases {
        let q = ring_rotation(n);
        assert!((q.length() - 1.0).abs() < 1e-6);
        assert!((q * Vec3::Z - n).length() < 1e-6, "{n}: got {}", q * Vec3::Z);
    }
    assert_eq!(ring_rotation(Vec3::ZERO), Quat::IDENTITY);
    assert_eq!(ring_rotation(Vec3::NAN), Quat::IDENTITY);
}

#[test]
fn downward_segment_gets_a_flat_ring() {
    for root_normal in [RootNormal::Up, RootNormal::Direction] {
        let mut g = straight(1, Vec3::NEG_Z, 5.0);
        g.start_radius[0] = 1.5;
        g.end_radius[0] = 1.5;
        let mesh = build_mesh(
            &g,
            &MeshParams {
                root_normal,
                ..sides(5)
            },
        )
        .unwrap();
        for p in &mesh.positions[6..] {
            assert!(
                (p.z + 5.0).abs() < 1e-5 && (p.truncate().length() - 1.5).abs() < 1e-5,
                "{p}"
            );
        }
        assert_unit_normals(&mesh);
    }
}

#[test]
fn side_count_rules() {
    // Root (start radius 4) with chains starting at radius 2 and 1, at depths 1 and 2.
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::new(1.0, 0.0, 2.0), 0, 1);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(2.0, 0.0, 3.0), 1, 2);
    g.start_radius.copy_from_slice(&[4.0, 2.0, 1.0]);
    g.end_radius.copy_from_slice(&[2.0, 1.0, 1.0]);
    let base = MeshParams {
        sides_min: 3,
        sides_max: 9,
        curve_reduction: 1.0,
        ..MeshParams::default()
    };
    // Radius: trunc(ratio · 6.5 + 3) → 9 (ratio 1), 6 (ratio ½: 6.25), 4 (ratio ¼: 4.625).
    let radius = mesh_counts(
        &g,
        &MeshParams {
            sides_rule: SidesRule::Radius,
            ..base.clone()
        },
    )
    .unwrap();
    assert_eq!(radius.vertices, 2 * (10 + 7 + 5));
    assert_eq!(radius.triangles, 2 * (9 + 6 + 4));
    // Depth: 9 at depth 0, 3 + round(6 · ½) = 6 at depth 1, 3 at the deepest depth 2.
    let depth = mesh_counts(
        &g,
        &MeshParams {
            sides_rule: SidesRule::Depth,
            ..base
        },
    )
    .unwrap();
    assert_eq!(depth.vertices, 2 * (10 + 7 + 4));
    assert_eq!(depth.triangles, 2 * (9 + 6 + 3));
}

#[test]
fn fractal_mesh_gives_every_segment_its_own_cylinder() {
    let g = forked();
    let all = MeshParams {
        style: MeshStyle::Fractal { drop_root: false },
        ..sides(4)
    };
    assert_eq!(
        mesh_counts(&g, &all).unwrap(),
        MeshCounts {
            chains: 6,
            rings: 12,
            vertices: 60,
            triangles: 48
        }
    );
    let thesis = MeshParams {
        style: MeshStyle::Fractal { drop_root: true },
        ..sides(4)
    };
    assert_eq!(
        mesh_counts(&g, &thesis).unwrap(),
        MeshCounts {
            chains: 5,
            rings: 10,
            vertices: 50,
            triangles: 40
        }
    );

    // Segment 2 runs from (0,0,1) to (1,0,2) with radius 1: its rings are pushed out by one radius
    // along its direction and lie orthogonal to it.
    let mesh = build_mesh(&g, &all).unwrap();
    let axis = Vec3::new(1.0, 0.0, 1.0).normalize();
    let centre = |ring: usize| mesh.positions[ring * 5..ring * 5 + 4].iter().sum::<Vec3>() / 4.0;
    assert!((centre(4) - (Vec3::Z - axis)).length() < 1e-5);
    assert!((centre(5) - (Vec3::new(1.0, 0.0, 2.0) + axis)).length() < 1e-5);
    for n in &mesh.normals[20..30] {
        assert!(n.dot(axis).abs() < 1e-5);
    }
}

#[test]
fn degenerate_segments_give_no_nan() {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::ZERO, NO_PARENT, 0); // zero length
    g.push(Vec3::ZERO, Vec3::NEG_Z, 0, 0); // exactly reverses the +Z start normal: sum is zero
    g.push(Vec3::NEG_Z, Vec3::NEG_Z, 1, 1); // zero length again, new chain
    g.push(Vec3::NEG_Z, Vec3::Z * 3.0, 2, 1); // turns back up
    // Radii stay 0 (never computed): every ring collapses to its centre.
    for style in [MeshStyle::Chains, MeshStyle::Fractal { drop_root: false }] {
        for root_normal in [RootNormal::Up, RootNormal::Direction] {
            let params = MeshParams {
                style,
                root_normal,
                ..sides(3)
            };
            let mesh = build_mesh(&g, &params).unwrap();
            assert_eq!(mesh.validate().ok(), Some(()), "{style:?} {root_normal:?}");
            assert_unit_normals(&mesh);
        }
    }
}

#[test]
fn invalid_params_and_graphs_are_refused() {
    let g = forked();
    let bad = MeshParams {
        sides_min: 5,
        sides_max: 4,
        ..MeshParams::default()
    };
    match build_mesh(&g, &bad) {
        Err(TreeError::InvalidParam(e)) => assert_eq!(e.dotted(), "sides_max"),
        other => panic!("expected InvalidParam, got {other:?}"),
    }
    let mut broken = g.clone();
    broken.start_radius[1] = f32::INFINITY;
    assert!(matches!(
        build_mesh(&broken, &sides(3)),
        Err(TreeError::BadValue { segment: 1, .. })
    ));
    assert!(matches!(
        mesh_counts(&broken, &sides(3)),
        Err(TreeError::BadValue { .. })
    ));
}

fn triangle_area(mesh: &TreeMesh, t: &[u32]) -> f32 {
    let [a, b, c] = [t[0], t[1], t[2]].map(|i| mesh.positions[i as usize]);
    0.5 * (b - a).cross(c - a).length()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_trees_mesh_cleanly(
        genes in graph_genes(80),
        n_min in 3u32..8,
        extra in 0u32..6,
        depth_rule in any::<bool>(),
        direction_root in any::<bool>(),
        fractal in any::<bool>(),
        rotation in -720.0f32..720.0,
    ) {
        let graph = graph_from_genes(&genes);
        let radius = RadiusParams { leaf_radius: 0.2, ..RadiusParams::default() };
        let params = MeshParams {
            sides_min: n_min,
            sides_max: n_min + extra,
            sides_rule: if depth_rule { SidesRule::Depth } else { SidesRule::Radius },
            root_normal: if direction_root { RootNormal::Direction } else { RootNormal::Up },
            style: if fractal { MeshStyle::Fractal { drop_root: false } } else { MeshStyle::Chains },
            rotation_per_branch_deg: rotation,
            curve_reduction: 1.0,
            ..MeshParams::default()
        };
        let prepared = prepare_graph(&graph, &radius, &params).unwrap();
        let mesh = build_mesh(&prepared, &params).unwrap();
        let counts = mesh_counts(&prepared, &params).unwrap();
        prop_assert_eq!(mesh.vertex_count(), counts.vertices);
        prop_assert_eq!(mesh.triangle_count(), counts.triangles);
        prop_assert!(mesh.validate().is_ok());
        for t in mesh.indices.chunks(3) {
            prop_assert!(t.iter().all(|&i| (i as usize) < mesh.vertex_count()));
            prop_assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2]);
            let area = triangle_area(&mesh, t);
            prop_assert!(area > 1e-6, "triangle {:?} has area {}", t, area);
        }
        for n in &mesh.normals {
            prop_assert!((n.length() - 1.0).abs() < 1e-5);
        }
    }
}
