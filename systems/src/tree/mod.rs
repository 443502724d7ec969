//! Trees: the branch graph and the operations on it.
//!
//! Both generators (L-system turtle and space colonization) produce a [`BranchGraph`]. The
//! thesis's order of operations before meshing (§4.4.3, as its code runs them) is:
//!
//! 1. [`reduce_curves`] with `max_K` ([`MeshParams::curve_reduction`]),
//! 2. [`compute_radii`] by the pipe model ([`RadiusParams`]),
//! 3. [`build_mesh`], which builds [`Chains`], ring normals and rotation angles itself;
//!
//! [`prepare_graph`] runs steps 1 and 2. The mesh goes to [`write_obj`] or [`write_glb`]; for
//! instanced rendering, [`push_cylinders`] takes the prepared graph instead.
//!
//! The thesis's Fig. 6.1b counts (13,121 segments, 9,841 chains, 206,658 vertices) need the
//! 10-unit vertical root stub that the thesis code's L-system actor puts below the first `F`.
//! That stub belongs to the turtle, not to these operations: they mesh whatever graph they get,
//! and with the stub present and [`MeshParams::thesis_fig_6_1b`] they reproduce the thesis exactly.
//!
//! ```
//! use glam::Vec3;
//! use sylva_systems::tree::{BranchGraph, MeshParams, NO_PARENT, RadiusParams, build_mesh, prepare_graph};
//!
//! // A trunk of two segments with one side branch.
//! let mut graph = BranchGraph::new();
//! let trunk = graph.push(Vec3::ZERO, Vec3::Z * 10.0, NO_PARENT, 0);
//! graph.push(Vec3::Z * 10.0, Vec3::Z * 20.0, trunk, 0);
//! graph.push(Vec3::Z * 10.0, Vec3::new(5.0, 0.0, 15.0), trunk, 1);
//! let prepared = prepare_graph(&graph, &RadiusParams::default(), &MeshParams::default())?;
//! // The pipe model: nothing is thicker than the root, which carries every branch.
//! let root = prepared.start_radius[0];
//! assert!(root > 0.0 && prepared.start_radius.iter().all(|&r| r <= root));
//! let mesh = build_mesh(&prepared, &MeshParams::default())?;
//! assert_eq!(mesh.indices.len() % 3, 0);
//! # Ok::<(), sylva_systems::tree::TreeError>(())
//! ```

mod angles;
mod chains;
mod cylinders;
mod entities;
mod error;
mod foliage;
mod glb;
mod graph;
mod leaves;
mod mesh;
mod model;
mod obj;
mod params;
mod radii;
mod reduce;

pub(crate) use angles::AngleCache;
pub use chains::Chains;
pub use cylinders::{Placement, push_cylinders};
pub(crate) use entities::reserve_trees;
pub use entities::{
    BranchDepth, EXTRACT_SYSTEM, Segment, SegmentParent, Tree, TreeBatch, TreeMember, install_extraction, spawn_tree,
};
pub use error::TreeError;
pub use foliage::{
    MAX_CLUSTER_LEAVES, MAX_LEAF_SIZE, MAX_LEAVES_PER_TIP, TreeLook, grow_leaves, push_tip_clusters, twig_tips,
};
pub use glb::{write_glb, write_tree_glb};
pub use graph::{BranchGraph, Children, NO_PARENT};
pub use leaves::{Leaves, push_leaves};
pub(crate) use leaves::{TreeLeaves, push_many_leaves};
pub use mesh::{MeshCounts, TreeMesh, UpAxis, build_mesh, build_mesh_into, mesh_counts, ring_rotation};
pub use model::model;
pub use obj::write_obj;
pub use params::{MeshParams, MeshStyle, RadiusParams, RadiusRule, RootNormal, SidesRule};
pub use radii::compute_radii;
pub use reduce::reduce_curves;
use sylva_runtime::Validate;

/// Curve reduction followed by radii: the graph operations the thesis runs before meshing.
///
/// Fails, changing nothing, when a parameter or the graph is invalid. [`prepare_graph_in_place`]
/// does the same without copying the graph.
pub fn prepare_graph(graph: &BranchGraph, radius: &RadiusParams, mesh: &MeshParams) -> Result<BranchGraph, TreeError> {
    radius.validate()?;
    mesh.validate()?;
    let mut reduced = reduce_curves(graph, mesh.curve_reduction)?;
    compute_radii(&mut reduced, radius)?;
    Ok(reduced)
}

/// [`prepare_graph`] in place: `graph` becomes the prepared graph, with `scratch` as the buffer
/// curve reduction writes into (then swapped in). With reduction off (`max_K` outside (0, 1))
/// nothing is copied at all, and reused buffers make repeated trees allocation-free.
///
/// Fails, changing nothing in `graph`, when a parameter or the graph is invalid.
pub fn prepare_graph_in_place(
    graph: &mut BranchGraph,
    radius: &RadiusParams,
    mesh: &MeshParams,
    scratch: &mut BranchGraph,
) -> Result<(), TreeError> {
    radius.validate()?;
    mesh.validate()?;
    graph.validate()?;
    if reduce::merges(mesh.curve_reduction) {
        reduce::reduce_valid(graph, mesh.curve_reduction, scratch);
        std::mem::swap(graph, scratch);
    }
    radii::radii_valid(graph, radius);
    Ok(())
}
