//! From scene parameters to a finished L-system tree: derive, draw, reduce,
//! size and mesh, with each stage timed for reports.
//!
//! ```
//! use sylva_systems::lsystem::LSystemParams;
//! use sylva_systems::species::TreeBuilder;
//! use sylva_systems::tree::{MeshParams, RadiusParams};
//!
//! let lsystem = LSystemParams {
//!     grammar: "axiom: F(10)[+F(5)][-F(5)]F(10)".into(),
//!     iterations: 0,
//!     ..LSystemParams::default()
//! };
//! let mut builder = TreeBuilder::new();
//! let grown = builder.grow(&lsystem, &RadiusParams::default(), &MeshParams::default(), 1)?;
//! assert_eq!(grown.graph.len(), grown.stats.segments);
//! assert!(grown.stats.triangles > 0 && grown.stats.vertices > 0);
//! # Ok::<(), sylva_systems::species::GrowError>(())
//! ```

use std::time::Instant;

use serde::Serialize;
use sylva_runtime::{App, Validate};

use crate::lsystem::{LSystem, LSystemError, LSystemParams, ModuleBuffer, TurtleOutput, interpret_into};
use crate::tree::{
    BranchGraph, Leaves, MeshParams, Placement, RadiusParams, TreeBatch, TreeError, TreeLook, TreeMesh,
    build_mesh_into, grow_leaves, prepare_graph_in_place, push_leaves, spawn_tree,
};

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

impl TreeStats {
    /// The whole pipeline, grammar to mesh, milliseconds.
    pub fn total_ms(&self) -> f64 {
        self.derive_ms + self.interpret_ms + self.mesh_ms
    }
}

/// A grown tree: its prepared branch graph (Z up, turtle units), leaves, mesh and stats.
#[derive(Clone, Debug, Default)]
pub struct GrownTree {
    /// Segments with radii, after curve reduction.
    pub graph: BranchGraph,
    /// The leaves the grammar draws, in the graph's frame; [`build`] adds the tip clusters
    /// of its [`TreeLook`].
    pub leaves: Leaves,
    /// Generalized-cylinder mesh of `graph`.
    pub mesh: TreeMesh,
    /// Sizes and timings.
    pub stats: TreeStats,
}

/// How a scene's single tree grows and looks (the `tree` section's parts [`build`] takes).
#[derive(Clone, Copy, Debug)]
pub struct TreeRecipe<'a> {
    /// The grammar and turtle.
    pub lsystem: &'a LSystemParams,
    /// Pipe-model radii.
    pub radii: &'a RadiusParams,
    /// Curve reduction and meshing.
    pub mesh: &'a MeshParams,
    /// Leaves and colours.
    pub look: &'a TreeLook,
}

/// Builds a scene's L-system tree (scene section `tree`) into `app`: grows it on the app's pool,
/// spawns it at `placement` in its look's bark, adds its leaves (the grammar's and the tip clusters of its look) to
/// the [`TreeBatch`], puts its [`TreeStats`] into the app, and returns it (for export), its
/// leaves included.
pub fn build(app: &mut App, recipe: TreeRecipe<'_>, placement: Placement, seed: u64) -> Result<GrownTree, GrowError> {
    let TreeRecipe {
        lsystem,
        radii,
        mesh,
        look,
    } = recipe;
    let leaf_seed = seed.wrapping_add(lsystem.seed_offset);
    let grown = app.in_pool(|| {
        let mut grown = grow_lsystem_tree(lsystem, radii, mesh, seed)?;
        grown.leaves = grow_leaves(&grown.graph, &grown.leaves, look, placement.scale, leaf_seed);
        Ok::<_, GrowError>(grown)
    })?;
    let tree = spawn_tree(&mut app.world.entities, &grown.graph, placement)?;
    if let Some(mut batch) = app.world.resources.get_mut::<TreeBatch>() {
        batch.set_bark(tree, look.bark);
        let from = batch.leaves.len();
        push_leaves(&mut batch.leaves, &grown.leaves, placement, 0.0, look.leaf_colour);
        batch.leaves_of(tree, from);
    }
    app.world.resources.insert(grown.stats);
    Ok(grown)
}

/// Grows the tree an L-system describes. `seed` is the scene seed (the
/// L-system's `seed_offset` is added for its stochastic productions).
///
/// Growing many trees, [`TreeBuilder::grow`] reuses one set of buffers instead.
pub fn grow_lsystem_tree(
    lsystem: &LSystemParams,
    radii: &RadiusParams,
    mesh: &MeshParams,
    seed: u64,
) -> Result<GrownTree, GrowError> {
    let mut builder = TreeBuilder::new();
    builder.grow(lsystem, radii, mesh, seed)?;
    Ok(builder.into_tree())
}

/// Grows trees one after another in the same buffers: the two derivation words, the turtle's
/// drawing, the reduction scratch, and the graph and mesh of the last tree.
///
/// A forest grows thousands of trees; after the largest one, growing another allocates nothing,
/// so the kernel no longer faults in fresh pages for every word and mesh (for thesis Fig. 6.1b
/// that was over half of the meshing time). Results are identical to [`grow_lsystem_tree`].
#[derive(Debug, Default)]
pub struct TreeBuilder {
    word: ModuleBuffer,
    spare: ModuleBuffer,
    drawn: TurtleOutput,
    scratch: BranchGraph,
    tree: GrownTree,
}

impl TreeBuilder {
    /// A builder with empty buffers; they grow to fit the first trees.
    pub fn new() -> Self {
        Self::default()
    }

    /// Grows the tree [`grow_lsystem_tree`] would, replacing the previous one, and returns it.
    ///
    /// On failure [`Self::tree`] holds unspecified contents; the builder stays usable.
    pub fn grow(
        &mut self,
        lsystem: &LSystemParams,
        radii: &RadiusParams,
        mesh: &MeshParams,
        seed: u64,
    ) -> Result<&GrownTree, GrowError> {
        lsystem.validate().map_err(LSystemError::from)?;
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;

        let t = Instant::now();
        let system = LSystem::parse(&lsystem.grammar)?;
        let turtle = lsystem.turtle_options_for(&system);
        system.derive_into(
            lsystem.iterations,
            &lsystem.derive_options(seed),
            &mut self.word,
            &mut self.spare,
        )?;
        let derive_ms = ms(t);

        let t = Instant::now();
        // The turtle draws straight into the tree's graph and leaf buffers, which preparation
        // then works on in place.
        std::mem::swap(&mut self.drawn.graph, &mut self.tree.graph);
        std::mem::swap(&mut self.drawn.leaves, &mut self.tree.leaves);
        let drawn = interpret_into(&self.word, &turtle, &mut self.drawn);
        std::mem::swap(&mut self.drawn.graph, &mut self.tree.graph);
        std::mem::swap(&mut self.drawn.leaves, &mut self.tree.leaves);
        drawn?;
        let interpret_ms = ms(t);

        let t = Instant::now();
        let tree = &mut self.tree;
        prepare_graph_in_place(&mut tree.graph, radii, mesh, &mut self.scratch)?;
        let counts = build_mesh_into(&tree.graph, mesh, &mut tree.mesh)?;
        let mesh_ms = ms(t);

        tree.stats = TreeStats {
            modules: self.word.len(),
            segments: tree.graph.len(),
            chains: counts.chains,
            rings: counts.rings,
            vertices: tree.mesh.vertex_count(),
            triangles: tree.mesh.triangle_count(),
            derive_ms,
            interpret_ms,
            mesh_ms,
        };
        Ok(tree)
    }

    /// The last tree grown.
    pub fn tree(&self) -> &GrownTree {
        &self.tree
    }

    /// The last tree grown, keeping none of the buffers.
    pub fn into_tree(self) -> GrownTree {
        self.tree
    }
}
