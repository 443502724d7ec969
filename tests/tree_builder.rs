//! A reused `TreeBuilder` grows exactly what `grow_lsystem_tree` grows with fresh buffers,
//! whatever it grew before, and the `_into` stages match their allocating forms.

use std::path::Path;

use sylva::systems::lsystem::{LSystem, ModuleBuffer, TurtleOutput, interpret, interpret_into};
use sylva::systems::species::{GrownTree, TreeBuilder, grow_lsystem_tree};
use sylva::systems::tree::{
    BranchGraph, MeshParams, TreeMesh, build_mesh, build_mesh_into, mesh_counts, prepare_graph, prepare_graph_in_place,
};
use sylva::{Scene, TreeScene};

fn load(name: &str) -> TreeScene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/thesis").join(name);
    let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
    scene.tree.unwrap_or_else(|| panic!("{name} has a tree"))
}

/// Fig. 6.1b as the thesis meshes it, the same with curve reduction on, and a small ABOP tree.
fn trees() -> Vec<TreeScene> {
    let fig = load("fig6_1b.ron");
    let reduced = TreeScene {
        mesh: MeshParams::default(),
        ..fig.clone()
    };
    vec![fig, load("fig5_4a_abop.ron"), reduced]
}

fn assert_same(grown: &GrownTree, fresh: &GrownTree, what: &str) {
    assert_eq!(grown.graph, fresh.graph, "{what}: graph");
    assert_eq!(grown.mesh, fresh.mesh, "{what}: mesh");
    let counts = |t: &GrownTree| {
        let s = t.stats;
        (s.modules, s.segments, s.chains, s.rings, s.vertices, s.triangles)
    };
    assert_eq!(counts(grown), counts(fresh), "{what}: stats");
}

#[test]
fn a_reused_builder_grows_what_fresh_buffers_grow() {
    let trees = trees();
    let fresh: Vec<GrownTree> = trees
        .iter()
        .map(|t| grow_lsystem_tree(&t.lsystem, &t.radii, &t.mesh, 1).expect("grows"))
        .collect();
    let mut builder = TreeBuilder::new();
    // Large, small, large again: buffers shrink in use and grow back without stale contents.
    for round in 0..2 {
        for (t, expected) in trees.iter().zip(&fresh) {
            let grown = builder.grow(&t.lsystem, &t.radii, &t.mesh, 1).expect("grows");
            assert_same(grown, expected, &format!("round {round}"));
        }
    }
    assert_same(builder.tree(), &fresh[fresh.len() - 1], "tree()");
}

#[test]
fn fig_6_1b_counts_come_from_the_one_mesh_build() {
    let t = load("fig6_1b.ron");
    let grown = grow_lsystem_tree(&t.lsystem, &t.radii, &t.mesh, 1).expect("grows");
    let s = grown.stats;
    assert_eq!((s.segments, s.chains, s.vertices), (13_121, 9_841, 206_658));
    let counts = mesh_counts(&grown.graph, &t.mesh).expect("counts");
    assert_eq!((counts.chains, counts.rings), (s.chains, s.rings));
}

#[test]
fn into_stages_match_the_allocating_stages() {
    let mut word = ModuleBuffer::new();
    let mut spare = ModuleBuffer::new();
    let mut drawn = TurtleOutput::default();
    let mut scratch = BranchGraph::new();
    let mut mesh = TreeMesh::default();
    for _ in 0..2 {
        for t in trees() {
            let system = LSystem::parse(&t.lsystem.grammar).expect("parses");
            let options = t.lsystem.derive_options(1);
            let expected_word = system.derive(t.lsystem.iterations, &options).expect("derives");
            system
                .derive_into(t.lsystem.iterations, &options, &mut word, &mut spare)
                .expect("derives");
            assert_eq!(word, expected_word);

            let turtle = t.lsystem.turtle_options();
            let expected_drawn = interpret(&word, &turtle).expect("draws");
            interpret_into(&word, &turtle, &mut drawn).expect("draws");
            assert_eq!(drawn, expected_drawn);

            let expected_graph = prepare_graph(&drawn.graph, &t.radii, &t.mesh).expect("prepares");
            let mut graph = drawn.graph.clone();
            prepare_graph_in_place(&mut graph, &t.radii, &t.mesh, &mut scratch).expect("prepares");
            assert_eq!(graph, expected_graph);

            let counts = build_mesh_into(&graph, &t.mesh, &mut mesh).expect("meshes");
            assert_eq!(mesh, build_mesh(&graph, &t.mesh).expect("meshes"));
            assert_eq!(counts, mesh_counts(&graph, &t.mesh).expect("counts"));
        }
    }
}
