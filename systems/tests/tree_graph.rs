//! Branch graph invariants, children, chains and curve reduction.

mod tree_support;

use glam::Vec3;
use sylva_systems::tree::{BranchGraph, Chains, NO_PARENT, TreeError, reduce_curves};
use tree_support::{straight, ternary_counts, ternary_fig_6_1b};

/// ```text
///        4(d0)   3(d1)        5(d1)
///          \     /             |
///           1(d0)            2(d1)
///              \             /
///               0 (d0, root)
/// ```
/// Segment 1's first child (3) is deeper; its first child *with the same depth* is 4.
fn forked() -> BranchGraph {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::Z * 2.0, 0, 0);
    g.push(Vec3::Z, Vec3::new(1.0, 0.0, 2.0), 0, 1);
    g.push(Vec3::Z * 2.0, Vec3::new(0.0, 1.0, 3.0), 1, 1);
    g.push(Vec3::Z * 2.0, Vec3::Z * 3.0, 1, 0);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(2.0, 0.0, 3.0), 2, 1);
    g
}

#[test]
fn children_are_in_index_order() {
    let g = forked();
    let c = g.children();
    assert_eq!(c.of(0), &[1, 2]);
    assert_eq!(c.of(1), &[3, 4]);
    assert_eq!(c.of(2), &[5]);
    assert_eq!(c.of(3), &[] as &[u32]);
    assert_eq!(c.of(99), &[] as &[u32]);
}

#[test]
fn chains_follow_first_same_depth_child_in_pre_order() {
    let chains = Chains::build(&forked()).unwrap();
    let got: Vec<Vec<u32>> = chains.iter().map(<[u32]>::to_vec).collect();
    assert_eq!(got, vec![vec![0, 1, 4], vec![3], vec![2, 5]]);
    assert_eq!(chains.len(), 3);
    assert_eq!(chains.segment_count(), 6);
    assert_eq!(chains.get(2), &[2, 5]);
    assert_eq!(chains.get(3), &[] as &[u32]);
}

#[test]
fn chains_of_an_empty_graph() {
    let chains = Chains::build(&BranchGraph::new()).unwrap();
    assert!(chains.is_empty());
    assert_eq!(chains.iter().count(), 0);
}

#[test]
fn forest_roots_each_start_a_chain() {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::X, Vec3::X + Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::Z * 2.0, 0, 0);
    let got: Vec<Vec<u32>> = Chains::build(&g).unwrap().iter().map(<[u32]>::to_vec).collect();
    assert_eq!(got, vec![vec![0, 2], vec![1]]);
}

#[test]
fn ternary_generator_matches_the_thesis_counts() {
    for n in [1, 2, 6, 8] {
        let g = ternary_fig_6_1b(n);
        let (segments, chains) = ternary_counts(n);
        assert_eq!(g.len(), segments, "n = {n}");
        assert_eq!(Chains::build(&g).unwrap().len(), chains, "n = {n}");
    }
    let g = ternary_fig_6_1b(8);
    assert_eq!(g.len(), 13_121);
    assert_eq!(Chains::build(&g).unwrap().len(), 9_841);
    assert_eq!(g.validate().ok(), Some(()));
}

#[test]
fn validate_reports_broken_graphs() {
    let mut ragged = forked();
    ragged.depth.pop();
    assert!(matches!(
        ragged.validate(),
        Err(TreeError::RaggedColumns {
            column: "depth",
            expected: 6,
            found: 5
        })
    ));

    let mut cyclic = forked();
    cyclic.parent[2] = 4;
    assert!(matches!(
        cyclic.validate(),
        Err(TreeError::ParentOrder { segment: 2, parent: 4 })
    ));

    let mut nan = forked();
    nan.end[3].y = f32::NAN;
    assert!(matches!(
        nan.validate(),
        Err(TreeError::BadValue {
            segment: 3,
            what: "end",
            ..
        })
    ));

    let mut negative = forked();
    negative.start_radius[5] = -1.0;
    assert!(matches!(
        negative.validate(),
        Err(TreeError::BadValue {
            segment: 5,
            what: "start_radius",
            ..
        })
    ));

    assert!(matches!(Chains::build(&ragged), Err(TreeError::RaggedColumns { .. })));
    assert!(matches!(Chains::build(&cyclic), Err(TreeError::ParentOrder { .. })));
}

#[test]
fn collinear_runs_collapse_into_one_segment() {
    let g = straight(4, Vec3::Z, 2.0);
    let r = reduce_curves(&g, 0.95).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r.start[0], Vec3::ZERO);
    assert_eq!(r.end[0], Vec3::Z * 8.0);
    assert_eq!(r.parent[0], NO_PARENT);
}

#[test]
fn max_k_outside_the_open_unit_interval_changes_nothing() {
    let g = straight(4, Vec3::Z, 2.0);
    for max_k in [1.0, 0.0, 1.5, -0.5] {
        assert_eq!(reduce_curves(&g, max_k).unwrap(), g, "max_k = {max_k}");
    }
    assert!(matches!(
        reduce_curves(&g, f32::NAN),
        Err(TreeError::InvalidParam { .. })
    ));
}

#[test]
fn forks_stop_a_merge_and_children_are_reindexed() {
    // 0 → 1 → 2 straight up, then 2 forks into 3 and 4.
    let mut g = straight(3, Vec3::Z, 1.0);
    g.push(Vec3::Z * 3.0, Vec3::new(1.0, 0.0, 4.0), 2, 1);
    g.push(Vec3::Z * 3.0, Vec3::new(-1.0, 0.0, 4.0), 2, 1);
    g.end_radius[2] = 7.0;
    let r = reduce_curves(&g, 0.95).unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r.end[0], Vec3::Z * 3.0);
    assert_eq!(r.end_radius[0], 7.0);
    assert_eq!(r.parent, vec![NO_PARENT, 0, 0]);
    assert_eq!(r.depth, vec![0, 1, 1]);
    assert_eq!(r.end[2], Vec3::new(-1.0, 0.0, 4.0));
}

#[test]
fn merged_direction_is_recomputed_before_the_next_test() {
    // Bends of 16° (cos 0.961 > 0.95). After merging the first two, the merged segment points
    // 8° off Z, so the third segment (32° off Z) is 24° away (cos 0.914) and stays.
    let mut g = BranchGraph::new();
    let mut at = Vec3::ZERO;
    for (i, angle) in [0.0f32, 16.0, 32.0].into_iter().enumerate() {
        let a = angle.to_radians();
        let next = at + Vec3::new(a.sin(), 0.0, a.cos()) * 10.0;
        g.push(at, next, if i == 0 { NO_PARENT } else { i as u32 - 1 }, 0);
        at = next;
    }
    let r = reduce_curves(&g, 0.95).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r.end[0], g.end[1]);
    assert_eq!(r.start[1], g.start[2]);
    assert_eq!(r.parent, vec![NO_PARENT, 0]);
}

#[test]
fn right_angles_and_zero_length_segments_are_kept() {
    let mut g = BranchGraph::new();
    g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    g.push(Vec3::Z, Vec3::Z + Vec3::X, 0, 0);
    g.push(Vec3::Z + Vec3::X, Vec3::Z + Vec3::X, 1, 0);
    g.push(Vec3::Z + Vec3::X, Vec3::Z * 2.0 + Vec3::X, 2, 0);
    assert_eq!(reduce_curves(&g, 0.5).unwrap(), g);
}
