//! `sylva export`: a rectangle of a world's chunks as one glTF binary that engines and DCC
//! tools open: each chunk's ground and water, and its trees and shrubs as instances of their
//! variants (the mesh kit's meshes; docs/design/embedding.md, "glTF"); each chunk's node says
//! its biome (the largest membership at its middle). The region's heightmap and other
//! pictures, its attribute masks and its instance table can be written beside it, as
//! `sylva terrain --region` writes them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use rayon::prelude::*;
use serde::Serialize;
use sylva::runtime::glam::Vec2;
use sylva::systems::mesh_kit::{GROUND_LEVELS, MeshKit, RegionCounts, TREE_LEVELS};
use sylva::systems::world::{ChunkPayload, WorldGen, ground_field, grow_content};

use crate::cli::Common;
use crate::cli::common::{count, parse_region, scene_or_default, write_json};
use crate::cli::output_paths::{self, GLTF};
use crate::cli::progress;
use crate::cli::region_files::{EcologyOutputs, Pictures};

/// The flags of `sylva export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    /// World scene (default: the built-in world, scenes/world.ron).
    scene: Option<PathBuf>,
    /// The chunks to export, X0,Z0,X1,Z1 (inclusive; chunk x covers metres
    /// [x, x + 1) × the chunk size).
    #[arg(long, value_name = "X0,Z0,X1,Z1", value_parser = parse_region, allow_hyphen_values = true)]
    region: [i32; 4],
    /// The glTF binary to write (`.glb`), or `-` for standard output.
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// The ground's level of detail: 0 every sample, 1 every other, up to 3.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..GROUND_LEVELS as i64))]
    ground_level: u8,
    /// The trees' level of detail: 0 every segment and leaf, up to 3 (trunks and crowns' silhouettes).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..TREE_LEVELS as i64))]
    tree_level: u8,
    #[command(flatten)]
    pictures: Pictures,
    #[command(flatten)]
    ecology: EcologyOutputs,
}

/// The report `export` writes.
#[derive(Serialize)]
struct Report<'a> {
    scene: &'a str,
    seed: u64,
    region: [i32; 4],
    chunks: usize,
    trees: u64,
    variants: usize,
    ground_triangles: u64,
    variant_triangles: u64,
    bytes: usize,
    generate_ms: f64,
    export_ms: f64,
}

/// Runs `sylva export`.
pub(crate) fn run(args: &ExportArgs, common: &Common) -> Result<(), String> {
    let outputs: Vec<_> = [("--out", Some(args.out.as_path()), GLTF)]
        .into_iter()
        .chain(args.pictures.outputs())
        .chain(args.ecology.outputs())
        .collect();
    output_paths::check_all(common, &outputs)?;
    let scene = scene_or_default(args.scene.as_deref(), common)?;
    let Some(params) = scene.world.clone() else {
        return Err(format!("{}: export needs a scene with a `world` section", scene.name));
    };
    let r = args.region;
    // Wide: spans across the i32 range multiply past i64.
    let chunks = (i128::from(r[2]) - i128::from(r[0]) + 1) * (i128::from(r[3]) - i128::from(r[1]) + 1);
    let chunks = u64::try_from(chunks).unwrap_or(u64::MAX);
    let estimate = sylva::memory::export_region(&params, chunks, usize::from(args.ground_level));
    common
        .memory_limit
        .check(&estimate)
        .map_err(|e| format!("{}: export of {}: {e}", scene.name, count(chunks, "chunk")))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(common.thread_count())
        .build()
        .map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let content = pool
        .install(|| grow_content(&params, scene.seed))
        .map_err(|e| format!("world.{e}"))?;
    let world = WorldGen::new(params.clone(), scene.seed);
    let coords: Vec<[i32; 2]> = (r[1]..=r[3]).flat_map(|z| (r[0]..=r[2]).map(move |x| [x, z])).collect();
    let bar = progress::bar(chunks, &scene.name, "chunks");
    let payloads: Vec<_> = pool.install(|| {
        coords
            .par_iter()
            .map(|&c| {
                let p = world.chunk(c);
                bar.inc(1);
                p
            })
            .collect()
    });
    bar.finish_and_clear();
    let generate_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t1 = Instant::now();
    let kit = MeshKit::new(&params, Arc::new(content));
    let spinner = progress::spinner("writing glTF");
    let levels = (usize::from(args.ground_level), usize::from(args.tree_level));
    let biome_of = |p: &ChunkPayload| biome_at_centre(&world, p);
    let (glb, counts) = pool
        .install(|| kit.region_glb(&payloads, levels, &biome_of))
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(glb.bin_bytes() + (1 << 20));
    glb.write(&mut bytes)
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    output_paths::write(&args.out, &bytes).map_err(|e| format!("{}: {e}", args.out.display()))?;
    spinner.finish_and_clear();
    let export_ms = t1.elapsed().as_secs_f64() * 1e3;
    print_counts(&scene.name, r, &counts, bytes.len(), generate_ms, export_ms);
    if !output_paths::is_stdout(&args.out) {
        println!("glTF: {}", args.out.display());
    }
    if args.pictures.any() {
        let n = params.chunk_cells as usize;
        args.pictures
            .write(&ground_field(&payloads, [r[0], r[1]], [r[2], r[3]], n))?;
    }
    args.ecology.write(&world, &payloads)?;
    if let Some(path) = &common.report {
        let report = Report {
            scene: &scene.name,
            seed: scene.seed,
            region: r,
            chunks: counts.chunks,
            trees: counts.trees,
            variants: counts.variants,
            ground_triangles: counts.ground_triangles,
            variant_triangles: counts.variant_triangles,
            bytes: bytes.len(),
            generate_ms,
            export_ms,
        };
        write_json(path, &report)?;
    }
    Ok(())
}

/// The biome with the largest membership at the middle of `payload`'s chunk.
fn biome_at_centre(world: &WorldGen, payload: &ChunkPayload) -> Option<String> {
    let p = world.params();
    let centre = (Vec2::new(payload.coord[0] as f32, payload.coord[1] as f32) + 0.5) * p.chunk_size();
    let mut m = vec![0.0f32; world.biomes().len()];
    if !world.memberships(&payload.attributes, centre.x, centre.y, &mut m) {
        return None;
    }
    let best = (0..m.len()).max_by(|&a, &b| m[a].total_cmp(&m[b]))?;
    p.ecology.biomes.get(best).map(|b| b.name.clone())
}

/// The lines an export ends with.
fn print_counts(scene: &str, r: [i32; 4], c: &RegionCounts, bytes: usize, generate_ms: f64, export_ms: f64) {
    println!(
        "{scene}: chunks ({}, {}) to ({}, {}): {}, {} as instances of {}; {} ground and water triangles, {} in the variants' meshes",
        r[0],
        r[1],
        r[2],
        r[3],
        count(c.chunks as u64, "chunk"),
        count(c.trees, "tree"),
        count(c.variants as u64, "variant"),
        c.ground_triangles,
        c.variant_triangles
    );
    println!(
        "  {:.1} MB; generated in {:.2} s, meshed and written in {:.2} s",
        bytes as f64 / 1e6,
        generate_ms / 1e3,
        export_ms / 1e3
    );
}

#[cfg(test)]
mod tests {
    use crate::cli::parse;

    #[test]
    fn levels_are_bounded_and_a_region_is_needed() {
        assert!(parse(&["export", "--region", "0,0,1,1", "--out", "a.glb"]).is_ok());
        assert!(parse(&["export", "--region=-2,-2,1,1", "--out", "a.glb", "--tree-level", "3"]).is_ok());
        assert!(parse(&["export", "--region", "0,0,1,1", "--out", "a.glb", "--tree-level", "4"]).is_err());
        assert!(parse(&["export", "--region", "0,0,1,1", "--out", "a.glb", "--ground-level", "4"]).is_err());
        assert!(parse(&["export", "--out", "a.glb"]).is_err());
        assert!(parse(&["export", "--region", "1,0,0,1", "--out", "a.glb"]).is_err());
    }
}
