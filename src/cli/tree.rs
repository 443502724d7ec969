//! `sylva tree`: a scene's tree grown once, its statistics printed, its mesh exported as
//! glTF or OBJ; `--warm N` regrows it in used buffers and prints the median.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use sylva::Report;
use sylva::runtime::extract::LeafBatch;
use sylva::runtime::glam::Vec3;
use sylva::systems::colonize::GRAPH_SCALE;
use sylva::systems::mesh_kit::leaf_mesh;
use sylva::systems::species::{TreeBuilder, TreeStats};
use sylva::systems::tree::{Placement, TreeLook, UpAxis, push_leaves, write_obj, write_tree_glb};

use crate::cli::Common;
use crate::cli::common::{build, load, write_report};
use crate::cli::output_paths::{self, MESH};

/// The flags of `sylva tree`.
#[derive(Args)]
pub(crate) struct TreeArgs {
    /// Scene file with a `tree` section.
    scene: PathBuf,
    /// Write the mesh (metres, Y up): `.glb` (glTF binary: bark in its colour and the
    /// leaves) or `.obj` (the bark's mesh alone).
    #[arg(long, value_name = "PATH")]
    export: Option<PathBuf>,
    /// Then grow the L-system tree N more times in buffers it has already used and print
    /// the median: a tree's cost once its memory is in use, as in a forest or `benches/trees.rs`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    warm: Option<u32>,
}

/// Runs `sylva tree`.
pub(crate) fn run(args: &TreeArgs, common: &Common) -> Result<(), String> {
    let path = &args.scene;
    output_paths::check_all(common, &[("--export", args.export.as_deref(), MESH)])?;
    let mut scene = load(path, common)?;
    if args.warm.is_some() && scene.tree.is_none() {
        return Err(format!("{}: --warm needs an L-system `tree` section", path.display()));
    }
    // `tree` shows the finished tree: grow it completely even where the scene grows it over time.
    if let Some(c) = &mut scene.colonize {
        c.iterations_per_step = 0;
    }
    let Some(scale) = scene
        .tree
        .as_ref()
        .map(|t| t.scale)
        .or(scene.colonize.as_ref().map(|_| GRAPH_SCALE))
    else {
        return Err(format!(
            "{}: the scene has no `tree` section (nor a `colonize` one)",
            path.display()
        ));
    };
    let t0 = Instant::now();
    let built = build(&scene, common)?;
    let wall = t0.elapsed();
    let grown = built.tree.ok_or("the scene's tree did not grow")?;
    let s = &grown.stats;
    println!(
        "{}: {} modules, {} segments, {} chains, {} rings, {} vertices, {} triangles",
        scene.name, s.modules, s.segments, s.chains, s.rings, s.vertices, s.triangles
    );
    println!("  {} (the first tree of this process, in fresh memory)", stages(s));
    if let (Some(runs), Some(t)) = (args.warm, &scene.tree) {
        let (median, fastest) = grow_warm(&built.app, t, scene.seed, runs)?;
        println!(
            "  {} (median of {runs} warm regrowths; fastest {:.3} ms)",
            stages(&median),
            fastest.total_ms()
        );
    }
    if let Some(out) = &args.export {
        let mut mesh = grown.mesh;
        // Graphs are in turtle units; exported files are in metres.
        for p in &mut mesh.positions {
            *p *= scale;
        }
        // Encoded in memory, then written whole: a killed export leaves the old file.
        let mut bytes = Vec::new();
        let glb = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb"));
        let encoded = if glb {
            // The bark in its colour and the leaves as the renderer draws them.
            let look = scene.tree.as_ref().map_or_else(TreeLook::default, |t| t.look);
            let mut batch = LeafBatch::default();
            let at = Placement {
                position: Vec3::ZERO,
                scale,
            };
            push_leaves(&mut batch, &grown.leaves, at, 0.0, look.leaf_colour);
            write_tree_glb(&mesh, UpAxis::Z, look.bark, &leaf_mesh(&batch), &mut bytes)
        } else {
            write_obj(&mesh, UpAxis::Z, &mut bytes)
        };
        encoded.map_err(|e| format!("{}: {e}", out.display()))?;
        output_paths::write(out, &bytes).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("mesh: {}", out.display());
    }
    let report = Report::gather(&built.app, &scene.name, wall).map_err(|e| e.to_string())?;
    if let Some(c) = report.tree.as_ref().and_then(|t| t.colonize) {
        println!(
            "  colonize: {} attractors ({} left), {} iterations, {} nodes, {}, grow {:.3} ms",
            c.attractors,
            c.attractors_left,
            c.iterations,
            c.nodes,
            c.termination.map_or("still growing".to_owned(), |t| format!("{t:?}")),
            c.grow_ms
        );
    }
    write_report(&report, common)
}

/// A tree's stage times and their total.
fn stages(s: &TreeStats) -> String {
    format!(
        "derive {:.3} ms, interpret {:.3} ms, mesh {:.3} ms, total {:.3} ms",
        s.derive_ms,
        s.interpret_ms,
        s.mesh_ms,
        s.total_ms()
    )
}

/// Grows `t` `runs` times on `app`'s pool in one [`TreeBuilder`], after one growth that
/// allocates its buffers, and returns the stats of the runs with the median and the least total.
fn grow_warm(
    app: &sylva::runtime::App,
    t: &sylva::TreeScene,
    seed: u64,
    runs: u32,
) -> Result<(TreeStats, TreeStats), String> {
    let mut builder = TreeBuilder::new();
    let mut grow = || builder.grow(&t.lsystem, &t.radii, &t.mesh, seed).map(|g| g.stats);
    let mut stats: Vec<TreeStats> = app
        .in_pool(|| (0..=runs).map(|_| grow()).collect::<Result<_, _>>())
        .map_err(|e| e.to_string())?;
    stats.remove(0);
    stats.sort_by(|a, b| a.total_ms().total_cmp(&b.total_ms()));
    Ok((stats[stats.len() / 2], stats[0]))
}

#[cfg(test)]
mod tests {
    use crate::cli::parse;

    #[test]
    fn warm_regrowths_are_bounded() {
        assert!(parse(&["tree", "t.ron", "--warm", "0"]).is_err());
        assert!(parse(&["tree", "t.ron", "--warm", "10001"]).is_err());
        assert!(parse(&["tree", "t.ron", "--warm", "10000"]).is_ok());
    }
}
