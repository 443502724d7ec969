//! From scene parameters to a finished L-system tree: derive, draw, reduce,
//! size and mesh, with each stage timed for reports.

use std::time::Instant;

use serde::Serialize;

use crate::lsystem::{LSystem, LSystemError, LSystemParams, interpret};
use crate::tree::{BranchGraph, MeshParams, RadiusParams, TreeError, TreeMesh, build_mesh, prepare_graph};

/// Why a tree could not be grown.
#[derive(Debug, thiserror::Error)]
pub enum GrowError {
    /// The grammar or its derivation failed.
    #[error("L-system: {0}")]
    LSystem(#[from] LSystemError),
    /// Radii or meshing failed.
    #[error("tree: {0}")]
    Tree(#[from] TreeError),
}

/// Sizes and timings of one grown tree (the report's `tree` object).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TreeStats {
    /// Modules in the derived word.
    pub modules: usize,
    /// Segments after curve reduction.
    pub segments: usize,
    /// Chains (runs of same-depth segments meshed as one tube).
    pub chains: usize,
    /// Mesh rings.
    pub rings: usize,
    /// Mesh vertices.
    pub vertices: usize,
    /// Mesh triangles.
    pub triangles: usize,
    /// Parsing and derivation, milliseconds.
    pub derive_ms: f64,
    /// Turtle interpretation, milliseconds.
    pub interpret_ms: f64,
    /// Curve reduction, radii and meshing, milliseconds.
    pub mesh_ms: f64,
}

/// A grown tree: its prepared branch graph (Z up, turtle units), mesh and stats.
#[derive(Clone, Debug)]
pub struct GrownTree {
    /// Segments with radii, after curve reduction.
    pub graph: BranchGraph,
    /// Generalized-cylinder mesh of `graph`.
    pub mesh: TreeMesh,
    /// Sizes and timings.
    pub stats: TreeStats,
}

/// Grows the tree an L-system describes. `seed` is the scene seed (the
/// L-system's `seed_offset` is added for its stochastic productions).
pub fn grow_lsystem_tree(
    lsystem: &LSystemParams,
    radii: &RadiusParams,
    mesh: &MeshParams,
    seed: u64,
) -> Result<GrownTree, GrowError> {
    lsystem
        .validate()
        .map_err(|(field, message)| LSystemError::InvalidParameter { field, message })?;
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let system = LSystem::parse(&lsystem.grammar)?;
    let word = system.derive(lsystem.iterations, &lsystem.derive_options(seed))?;
    let derive_ms = ms(t);

    let t = Instant::now();
    let drawn = interpret(&word, &lsystem.turtle_options())?;
    let interpret_ms = ms(t);

    let t = Instant::now();
    let graph = prepare_graph(&drawn.graph, radii, mesh)?;
    let tree_mesh = build_mesh(&graph, mesh)?;
    let mesh_ms = ms(t);

    let counts = crate::tree::mesh_counts(&graph, mesh)?;
    let stats = TreeStats {
        modules: word.len(),
        segments: graph.len(),
        chains: counts.chains,
        rings: counts.rings,
        vertices: tree_mesh.vertex_count(),
        triangles: tree_mesh.triangle_count(),
        derive_ms,
        interpret_ms,
        mesh_ms,
    };
    Ok(GrownTree {
        graph,
        mesh: tree_mesh,
        stats,
    })
}
