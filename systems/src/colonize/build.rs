//! A colonize scene section in an app: grown over time by [`GROW_SYSTEM`](super::GROW_SYSTEM),
//! or all at once while the app is built.

use std::time::Instant;

use glam::Vec3;
use sylva_runtime::App;

use super::{ColonizeError, ColonizeParams, Colonizer, install, spawn_colonizing};
use crate::species::{GrownTree, TreeStats};
use crate::tree::{self, BranchGraph, MeshParams, Placement, RadiusParams, prepare_graph, spawn_tree};

/// Metres per colonization graph unit: colonization graphs share the L-system trees' units
/// (Z up, centimetres, the thesis's Unreal units), so they mesh and export alike.
pub const GRAPH_SCALE: f32 = 0.01;

/// Builds the colonization `params` describe (scene section `colonize`) into `app`, from `seed`,
/// standing at the origin, [`GRAPH_SCALE`] metres per unit, with default radii and meshing.
///
/// With `iterations_per_step` > 0 the trees grow over time: sampling and trunks now, the rest in
/// [`GROW_SYSTEM`](super::GROW_SYSTEM), step by step; nothing is returned. Otherwise they grow to
/// the end on the app's pool, every root's tree is prepared and spawned, and the
/// [`ColonizeStats`](super::ColonizeStats) go into the app. With `mesh` (false where the scene's
/// L-system tree is its tree) they are also meshed as one tree ([`BranchGraph::merge`]), whose
/// [`TreeStats`] go into the app, and which is returned (for export).
pub fn build(
    app: &mut App,
    params: &ColonizeParams,
    seed: u64,
    mesh: bool,
) -> Result<Option<GrownTree>, ColonizeError> {
    let placement = Placement {
        position: Vec3::ZERO,
        scale: GRAPH_SCALE,
    };
    if params.iterations_per_step > 0 {
        let colonizer = app.in_pool(|| Colonizer::new(params, seed))?;
        install(app);
        spawn_colonizing(
            &mut app.world.entities,
            colonizer,
            placement,
            RadiusParams::default(),
            params.iterations_per_step,
        );
        return Ok(None);
    }
    let (graphs, stats) = app.in_pool(|| -> Result<_, ColonizeError> {
        let t = Instant::now();
        let mut colonizer = Colonizer::new(params, seed)?;
        colonizer.run();
        let stats = colonizer.stats(t.elapsed().as_secs_f64() * 1e3);
        Ok((colonizer.finish()?, stats))
    })?;
    let (radii, mesh_params) = (RadiusParams::default(), MeshParams::default());
    let prepared = graphs
        .iter()
        .map(|graph| {
            let prepared = prepare_graph(graph, &radii, &mesh_params)?;
            spawn_tree(&mut app.world.entities, &prepared, placement)?;
            Ok(prepared)
        })
        .collect::<Result<Vec<_>, ColonizeError>>()?;
    let grown = if mesh {
        let grown = mesh_all(BranchGraph::merge(&prepared), &mesh_params)?;
        app.world.resources.insert(grown.stats);
        Some(grown)
    } else {
        None
    };
    app.world.resources.insert(stats);
    Ok(grown)
}

/// `graph` meshed as a tree of its own, timed.
fn mesh_all(graph: BranchGraph, params: &MeshParams) -> Result<GrownTree, ColonizeError> {
    let t = Instant::now();
    let mut mesh = tree::TreeMesh::default();
    let counts = tree::build_mesh_into(&graph, params, &mut mesh)?;
    let stats = TreeStats {
        modules: 0,
        segments: graph.len(),
        chains: counts.chains,
        rings: counts.rings,
        vertices: counts.vertices,
        triangles: counts.triangles,
        derive_ms: 0.0,
        interpret_ms: 0.0,
        mesh_ms: t.elapsed().as_secs_f64() * 1e3,
    };
    Ok(GrownTree {
        graph,
        mesh,
        stats,
        ..GrownTree::default()
    })
}
