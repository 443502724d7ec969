//! Pipe-model radii (thesis eq. 3.6) in both published rules.

mod tree_support;

use glam::Vec3;
use proptest::prelude::*;
use sylva_systems::tree::{BranchGraph, NO_PARENT, RadiusParams, RadiusRule, TreeError, compute_radii};
use tree_support::{graph_from_genes, graph_genes};

/// A root (0) forking into a leaf (1) and a segment (2) that forks into two leaves (3, 4).
fn two_forks() -> BranchGraph {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::Z * 2.0, 0, 0);
    g.push(Vec3::Z, Vec3::new(1.0, 0.0, 2.0), 0, 1);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(1.0, 0.0, 3.0), 2, 1);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(2.0, 0.0, 3.0), 2, 2);
    g
}

fn params(rule: RadiusRule) -> RadiusParams {
    RadiusParams {
        leaf_radius: 2.0,
        exponent: 2.0,
        trunk_multiplier: 1.5,
        enabled: true,
        rule,
    }
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "radius {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

#[test]
fn code_rule_exact_radii() {
    let mut g = two_forks();
    compute_radii(&mut g, &params(RadiusRule::Code)).unwrap();
    let (s2, s3) = (2f32.sqrt(), 3f32.sqrt());
    // Leaves r₀ = 2 at both ends; segment 2: start 2·√2, end max child start = 2;
    // root: start 1.5 · 2·√3 (three leaves below), end max child start = 2·√2.
    assert_close(&g.start_radius, &[1.5 * 2.0 * s3, 2.0, 2.0 * s2, 2.0, 2.0]);
    assert_close(&g.end_radius, &[2.0 * s2, 2.0, 2.0, 2.0, 2.0]);
}

#[test]
fn thesis_rule_exact_radii() {
    let mut g = two_forks();
    compute_radii(&mut g, &params(RadiusRule::Thesis)).unwrap();
    let (s2, s3) = (2f32.sqrt(), 3f32.sqrt());
    // End radii by eq. 3.6; each start is the parent's end; the root starts at 1.5 × its end.
    assert_close(&g.end_radius, &[2.0 * s3, 2.0, 2.0 * s2, 2.0, 2.0]);
    assert_close(
        &g.start_radius,
        &[1.5 * 2.0 * s3, 2.0 * s3, 2.0 * s3, 2.0 * s2, 2.0 * s2],
    );
}

#[test]
fn radius_calculations_off_gives_r0_everywhere() {
    let mut g = two_forks();
    compute_radii(
        &mut g,
        &RadiusParams {
            enabled: false,
            ..params(RadiusRule::Code)
        },
    )
    .unwrap();
    assert_eq!(g.start_radius, vec![2.0; 5]);
    assert_eq!(g.end_radius, vec![2.0; 5]);
}

#[test]
fn invalid_input_changes_nothing() {
    let mut g = two_forks();
    let before = g.clone();
    let bad = RadiusParams {
        exponent: 0.0,
        ..RadiusParams::default()
    };
    match compute_radii(&mut g, &bad) {
        Err(TreeError::InvalidParam(e)) => assert_eq!(e.dotted(), "exponent"),
        other => panic!("expected InvalidParam, got {other:?}"),
    }
    assert_eq!(g, before);

    g.parent[1] = 3;
    let before = g.clone();
    assert!(matches!(
        compute_radii(&mut g, &RadiusParams::default()),
        Err(TreeError::ParentOrder { .. })
    ));
    assert_eq!(g, before);
}

#[test]
fn huge_exponent_and_radius_stay_finite() {
    let mut g = tree_support::ternary_fig_6_1b(6);
    let p = RadiusParams {
        leaf_radius: 1.0e6,
        exponent: 16.0,
        ..RadiusParams::default()
    };
    compute_radii(&mut g, &p).unwrap();
    assert!(
        g.start_radius
            .iter()
            .chain(&g.end_radius)
            .all(|r| r.is_finite() && *r >= 1.0e6)
    );
}

/// `(Σ r_i^g)^(1/g)` in f64.
fn pipe(radii: impl Iterator<Item = f32>, g: f32) -> f64 {
    let g = f64::from(g);
    radii.map(|r| f64::from(r).powf(g)).sum::<f64>().powf(1.0 / g)
}

fn close(a: f32, b: f64) -> bool {
    (f64::from(a) - b).abs() <= 1e-5 * b.abs()
}

proptest! {
    #[test]
    fn pipe_rule_holds_at_every_fork(
        genes in graph_genes(120),
        leaf in 0.05f32..50.0,
        exponent in 0.5f32..16.0,
        trunk in 0.1f32..10.0,
        thesis in any::<bool>(),
    ) {
        let mut g = graph_from_genes(&genes);
        let rule = if thesis { RadiusRule::Thesis } else { RadiusRule::Code };
        let p = RadiusParams { leaf_radius: leaf, exponent, trunk_multiplier: trunk, enabled: true, rule };
        compute_radii(&mut g, &p).unwrap();
        let children = g.children();
        for s in 0..g.len() {
            let kids = children.of(s as u32);
            let is_root = g.parent[s] == NO_PARENT;
            let trunk_factor = if is_root { trunk } else { 1.0 };
            match rule {
                RadiusRule::Thesis => {
                    // end^g = Σ child end^g; a child starts at its parent's end.
                    let want = if kids.is_empty() { f64::from(leaf) } else { pipe(kids.iter().map(|&c| g.end_radius[c as usize]), exponent) };
                    prop_assert!(close(g.end_radius[s], want), "end of {s}: {} vs {want}", g.end_radius[s]);
                    for &c in kids {
                        prop_assert_eq!(g.start_radius[c as usize], g.end_radius[s]);
                    }
                    if is_root {
                        prop_assert_eq!(g.start_radius[s], trunk * g.end_radius[s]);
                    }
                }
                RadiusRule::Code => {
                    // start^g = Σ child start^g (× trunk at the root); end = largest child start.
                    let want = if kids.is_empty() { f64::from(leaf) } else { pipe(kids.iter().map(|&c| g.start_radius[c as usize]), exponent) };
                    prop_assert!(close(g.start_radius[s], want * f64::from(trunk_factor)), "start of {s}");
                    let largest_child = kids.iter().map(|&c| g.start_radius[c as usize]).reduce(f32::max);
                    let end = largest_child.unwrap_or(leaf);
                    prop_assert_eq!(g.end_radius[s], end);
                }
            }
        }
    }
}
