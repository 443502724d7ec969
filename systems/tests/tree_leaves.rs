//! Leaves: ABOP polygons and the leaf symbol in the turtle, clusters at twig tips, a species'
//! look, and leaves placed into the render contract.

use glam::{Vec2, Vec3};
use sylva_runtime::Validate;
use sylva_runtime::extract::LeafBatch;
use sylva_systems::colonize::{ColonizeParams, Region, Shape};
use sylva_systems::lsystem::{LSystemParams, generate};
use sylva_systems::placement::forest::{ForestParams, SpeciesParams, grow_forest};
use sylva_systems::placement::{Plane, ScatterParams};
use sylva_systems::tree::{
    BranchGraph, Leaves, MAX_LEAVES_PER_TIP, NO_PARENT, Placement, TreeLook, push_leaves, push_tip_clusters, twig_tips,
};

fn lsystem(grammar: &str, leaf_symbol: Option<&str>) -> LSystemParams {
    LSystemParams {
        grammar: grammar.into(),
        iterations: 2,
        leaf_symbol: leaf_symbol.map(str::to_string),
        ..LSystemParams::default()
    }
}

/// Each `A` becomes a stem with two polygon leaves and a leaf symbol; the polygons draw with
/// `F` inside, as ABOP writes them.
const LEAFY: &str = "axiom: A
    A -> F[+A][-A]F[{.-F.+F.}][{.+F.-F.}]L";

#[test]
fn every_polygon_and_leaf_symbol_is_one_leaf_and_leaves_do_not_change_the_graph() {
    let with = generate(&lsystem(LEAFY, Some("L")), 0).unwrap();
    // Iteration 2: 1 + 2 stems of the rule, each with 2 polygons and an `L`.
    assert_eq!(with.leaves.len(), 3 * 3);
    let without = generate(&lsystem(LEAFY, None), 0).unwrap();
    assert_eq!(without.leaves.len(), 3 * 2, "polygons are leaves without a leaf symbol");
    assert_eq!(with.graph, without.graph);
    let bare = generate(&lsystem(&LEAFY.replace(['{', '}', '.'], ""), None), 0).unwrap();
    assert_eq!(with.graph, bare.graph, "polygon symbols draw nothing themselves");
    assert!(with.leaves.size.iter().all(|&s| s > 0.0 && s.is_finite()));
    assert!(with.leaves.normal.iter().all(|n| (n.length() - 1.0).abs() < 1e-5));
}

#[test]
fn a_polygon_leaf_is_its_centroid_plane_normal_and_extent() {
    // A square of side 10 in the turtle's H–L plane (Y–Z), traced by `f` moves: the vertices
    // are (0,0,0), (0,0,10), (0,-10,10), (0,-10,0), the `.`s repeating them once.
    let out = generate(&lsystem("axiom: {.f(10).+(90)f(10).+(90)f(10).}", None), 0).unwrap();
    assert!(out.graph.is_empty());
    assert_eq!(out.leaves.len(), 1);
    assert!(out.leaves.position[0].abs_diff_eq(Vec3::new(0.0, -5.0, 5.0), 1e-4));
    assert!(
        out.leaves.normal[0].cross(Vec3::X).length() < 1e-5,
        "normal along U = +X"
    );
    assert!((out.leaves.size[0] - 2.0 * 50f32.sqrt()).abs() < 1e-3);
}

#[test]
fn g_moves_only_inside_a_polygon() {
    let inside = generate(&lsystem("axiom: {.G(4).}F", None), 0).unwrap();
    let outside = generate(&lsystem("axiom: G(4)F", None), 0).unwrap();
    assert_eq!(inside.graph.start[0], Vec3::new(0.0, 0.0, 4.0));
    assert_eq!(
        outside.graph.start[0],
        Vec3::ZERO,
        "`G` outside a polygon is a plain letter"
    );
    assert!(inside.leaves.position[0].abs_diff_eq(Vec3::new(0.0, 0.0, 2.0), 1e-5));
}

#[test]
fn the_leaf_symbol_hangs_a_leaf_from_the_turtle() {
    let out = generate(&lsystem("axiom: F(10)L(4)K", Some("L")), 0).unwrap();
    assert_eq!(out.leaves.len(), 1);
    assert!(out.leaves.position[0].abs_diff_eq(Vec3::new(0.0, 0.0, 12.0), 1e-5));
    assert_eq!((out.leaves.normal[0], out.leaves.size[0]), (Vec3::X, 4.0));
    let bare = generate(&lsystem("axiom: F(10)L", Some("L")), 0).unwrap();
    assert_eq!(bare.leaves.size[0], 10.0, "a bare leaf symbol is one step long");
    let bad = lsystem("axiom: F", Some("LL"));
    assert_eq!(bad.validate().unwrap_err().dotted(), "leaf_symbol");
}

/// A trunk forking twice: segments 2, 3 and 4 are tips.
fn forked() -> BranchGraph {
    let mut g = BranchGraph::new();
    let trunk = g.push(Vec3::ZERO, Vec3::Z, NO_PARENT, 0);
    let a = g.push(Vec3::Z, Vec3::new(1.0, 0.0, 2.0), trunk, 1);
    g.push(Vec3::Z, Vec3::new(-1.0, 0.0, 2.0), trunk, 1);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(2.0, 0.0, 3.0), a, 2);
    g.push(Vec3::new(1.0, 0.0, 2.0), Vec3::new(1.0, 1.0, 3.0), a, 2);
    g
}

#[test]
fn clusters_put_density_leaves_at_every_tip_near_it_from_the_seed_alone() {
    let g = forked();
    assert_eq!(twig_tips(&g), vec![2, 3, 4]);
    let mut leaves = Leaves::new();
    push_tip_clusters(&g, 7, 0.2, 42, &mut leaves);
    assert_eq!(leaves.len(), 3 * 7);
    for (k, &tip) in [2usize, 3, 4].iter().enumerate() {
        for i in k * 7..(k + 1) * 7 {
            assert!(leaves.position[i].distance(g.end[tip]) <= 1.5 * 0.2 + 1e-5);
            assert!(leaves.normal[i].z > 0.0, "leaves face up-ish");
            assert!((0.16..=0.24).contains(&leaves.size[i]));
        }
    }
    let mut again = Leaves::new();
    push_tip_clusters(&g, 7, 0.2, 42, &mut again);
    assert_eq!(leaves, again);
    let mut other = Leaves::new();
    push_tip_clusters(&g, 7, 0.2, 43, &mut other);
    assert_ne!(leaves.position, other.position);
    let mut capped = Leaves::new();
    push_tip_clusters(&g, u32::MAX, 0.2, 42, &mut capped);
    assert_eq!(capped.len(), 3 * MAX_LEAVES_PER_TIP as usize);
}

#[test]
fn clusters_are_the_same_on_any_thread_count_and_after_other_leaves() {
    let g = forked();
    let on = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut leaves = Leaves::new();
        pool.install(|| push_tip_clusters(&g, 9, 0.2, 42, &mut leaves));
        leaves
    };
    let one = on(1);
    assert_eq!(one, on(3));
    let mut after = Leaves::new();
    after.push(Vec3::ONE, Vec3::Z, 0.5);
    push_tip_clusters(&g, 9, 0.2, 42, &mut after);
    assert_eq!(after.len(), 1 + one.len());
    assert_eq!(after.position[1..], one.position[..]);
    assert_eq!(after.normal[1..], one.normal[..]);
    assert_eq!(after.size[1..], one.size[..]);
}

#[test]
fn a_look_is_validated_below_its_species() {
    let species = SpeciesParams {
        lsystem: Some(LSystemParams::default()),
        look: TreeLook {
            leaf_density: MAX_LEAVES_PER_TIP + 1,
            ..TreeLook::default()
        },
        ..SpeciesParams::default()
    };
    assert_eq!(species.validate().unwrap_err().dotted(), "look.leaf_density");
    let tiny = TreeLook {
        leaf_size: 0.0,
        ..TreeLook::default()
    };
    assert_eq!(tiny.validate().unwrap_err().dotted(), "leaf_size");
    assert!(TreeLook::default().validate().is_ok());
}

fn crown() -> ColonizeParams {
    ColonizeParams {
        regions: vec![Region {
            shape: Shape::Sphere {
                centre: Vec3::new(0.0, 0.0, 300.0),
                radius: 150.0,
            },
            ..Region::default()
        }],
        count: 300,
        influence_radius: 100.0,
        kill_distance: 25.0,
        step: 15.0,
        iterations: 40,
        ..ColonizeParams::default()
    }
}

#[test]
fn a_colonized_forest_has_density_leaves_per_tip_placed_like_its_cylinders() {
    let density = 5;
    let params = ForestParams {
        species: vec![SpeciesParams {
            colonize: Some(crown()),
            variants: 2,
            look: TreeLook {
                leaf_density: density,
                ..TreeLook::default()
            },
            ..SpeciesParams::default()
        }],
        placement: ScatterParams {
            count: 6,
            min_distance: 5.0,
            min: Vec2::splat(-20.0),
            max: Vec2::splat(20.0),
            ..ScatterParams::default()
        },
    };
    let forest = grow_forest(&params, &Plane { y: 0.0 }, 5).unwrap();
    for (graph, leaves) in forest.variants[0].iter().zip(&forest.leaves[0]) {
        assert!(!twig_tips(graph).is_empty());
        assert_eq!(leaves.len(), twig_tips(graph).len() * density as usize);
    }
    let mut batch = LeafBatch::default();
    forest.push_leaves(&mut batch);
    assert_eq!(batch.len(), forest.stats.leaves);
    assert_eq!((batch.dirty.start, batch.dirty.end), (0, batch.len() as u32));
    // Placed all at once on the pool, as pushed tree by tree: after a leaf already there.
    let mut at_once = LeafBatch::default();
    at_once.push(Vec3::ONE, Vec3::Y, 1.0, [9; 4]);
    forest.push_leaves(&mut at_once);
    let mut by_tree = LeafBatch::default();
    by_tree.push(Vec3::ONE, Vec3::Y, 1.0, [9; 4]);
    for t in &forest.trees {
        let (s, v) = (t.species as usize, t.variant as usize);
        let placement = Placement {
            position: t.position,
            scale: forest.scales[s],
        };
        push_leaves(
            &mut by_tree,
            &forest.leaves[s][v],
            placement,
            0.0,
            forest.looks[s].leaf_colour,
        );
    }
    assert_eq!(at_once, by_tree);
    let again = grow_forest(&params, &Plane { y: 0.0 }, 5).unwrap();
    assert_eq!(forest.leaves, again.leaves, "leaves are a function of the seed");
}

#[test]
fn placed_leaves_go_through_the_one_change_of_frame() {
    let mut leaves = Leaves::new();
    leaves.push(Vec3::new(1.0, 2.0, 3.0), Vec3::Z, 10.0);
    let mut batch = LeafBatch::default();
    let placement = Placement {
        position: Vec3::new(100.0, 5.0, 0.0),
        scale: 0.01,
    };
    push_leaves(&mut batch, &leaves, placement, 0.0, [1, 2, 3, 4]);
    assert!(batch.position[0].abs_diff_eq(placement.point(leaves.position[0]), 1e-6));
    assert!(batch.normal[0].abs_diff_eq(Vec3::Y, 1e-6), "Z up becomes Y up");
    assert_eq!((batch.size[0], batch.colour[0]), (placement.length(10.0), [1, 2, 3, 4]));
    let mut turned = LeafBatch::default();
    push_leaves(
        &mut turned,
        &leaves,
        placement,
        std::f32::consts::FRAC_PI_2,
        [1, 2, 3, 4],
    );
    let offset = turned.position[0] - placement.position;
    assert!(offset.abs_diff_eq(Vec3::new(-0.02, 0.03, -0.01), 1e-5), "{offset}");
}
