//! `sylva bake`: a rectangle of a world's chunks and basin domains made ahead
//! of time into a store, one shard at a time (a Kubernetes Indexed Job or a
//! Slurm array runs the shards; see deploy/README.md), and `--verify`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use serde::Serialize;
use sylva::systems::world::{
    BakePlan, BakeReport, Phase, Shard, VerifyReport, WorldGen, bake, create_store, leftovers, open_store, verify,
};

use crate::cli::Common;
use crate::cli::common::{count, parse_region, scene_or_default, write_json};
use crate::cli::output_paths;
use crate::cli::progress;

/// Environment variables that carry a shard's index, in the order they are read.
const SHARD_INDEX_VARS: [&str; 2] = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"];

/// Missing or corrupt files `--verify` prints one by one (the report lists all).
const LISTED: usize = 50;

/// The flags of `sylva bake`.
#[derive(Args)]
pub(crate) struct BakeArgs {
    /// Scene file with a `world` section (default: the built-in world).
    scene: Option<PathBuf>,
    /// Chunks `x0,z0,x1,z1` (inclusive) to bake or verify.
    #[arg(long, value_name = "X0,Z0,X1,Z1", value_parser = parse_region, allow_hyphen_values = true)]
    region: [i32; 4],
    /// Store directory to bake into (created if needed).
    #[arg(
        long,
        value_name = "STORE",
        required_unless_present = "verify",
        conflicts_with = "verify"
    )]
    out: Option<PathBuf>,
    /// Check the store instead of baking: list missing and corrupt files, exit 1 if there are any.
    #[arg(long, value_name = "STORE")]
    verify: Option<PathBuf>,
    /// Bake only shard I of N (I from 0): the I-th of N contiguous parts of the region in Hilbert order.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["shard_from_env", "verify"])]
    shard: Option<Shard>,
    /// Bake one of N shards, its index read from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm).
    #[arg(long, value_name = "N", conflicts_with = "verify", value_parser = clap::value_parser!(u32).range(1..))]
    shard_from_env: Option<u32>,
    /// What to bake: `all` (the domains the shard's chunks read, then the chunks), `domains`
    /// (the shard's part of the region's domains) or `chunks` (domains read from the store).
    #[arg(long, default_value = "all", value_parser = parse_phase, conflicts_with = "verify")]
    phase: Phase,
}

fn parse_phase(s: &str) -> Result<Phase, String> {
    match s {
        "all" => Ok(Phase::All),
        "domains" => Ok(Phase::Domains),
        "chunks" => Ok(Phase::Chunks),
        _ => Err(format!("expected all, domains or chunks, got `{s}`")),
    }
}

/// The report `bake` writes.
#[derive(Serialize)]
struct Report<'a> {
    scene: &'a str,
    seed: u64,
    threads: usize,
    wall_ms: f64,
    region: [i32; 4],
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bake: Option<&'a BakeReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify: Option<&'a VerifyReport>,
}

/// Runs `sylva bake`.
pub(crate) fn run(args: &BakeArgs, common: &Common) -> Result<(), String> {
    output_paths::check_all(common, &[])?;
    let scene = scene_or_default(args.scene.as_deref(), common)?;
    let Some(params) = scene.world.clone() else {
        return Err(format!("{}: the scene has no `world` section", scene.name));
    };
    let started = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(common.thread_count())
        .thread_name(|i| format!("sylva-bake-{i}"))
        .build()
        .map_err(|e| e.to_string())?;
    let world = WorldGen::new(params, scene.seed);
    let r = args.region;
    let (first, last) = ([r[0], r[1]], [r[2], r[3]]);
    let mut report = Report {
        scene: &scene.name,
        seed: scene.seed,
        threads: pool.current_num_threads(),
        wall_ms: 0.0,
        region: r,
        shard: None,
        phase: None,
        bake: None,
        verify: None,
    };
    let (baked, checked);
    match (&args.verify, &args.out) {
        (Some(store), _) => {
            checked = pool.install(|| verify_store(&world, store, first, last, &scene.name))?;
            report.verify = Some(&checked);
        }
        (None, Some(store)) => {
            let shard = shard(args)?;
            baked = pool.install(|| bake_shard(&world, store, first, last, shard, args.phase, &scene.name))?;
            report.bake = Some(&baked);
            report.shard = Some(shard.to_string());
            report.phase = Some(args.phase);
        }
        (None, None) => unreachable!("clap requires --out without --verify"),
    }
    report.wall_ms = started.elapsed().as_secs_f64() * 1e3;
    if let Some(out) = &common.report {
        write_json(out, &report)?;
    }
    match report.verify {
        Some(v) if !v.is_complete() => Err(format!(
            "{}: {} missing and {} corrupt of {} files",
            args.verify.as_deref().map_or(Path::new(""), |p| p).display(),
            v.missing.len(),
            v.corrupt.len(),
            v.checked
        )),
        _ => Ok(()),
    }
}

/// The shard of `--shard`, of `--shard-from-env`, or the whole bake.
fn shard(args: &BakeArgs) -> Result<Shard, String> {
    if let Some(s) = args.shard {
        return Ok(s);
    }
    let Some(count) = args.shard_from_env else {
        return Ok(Shard::WHOLE);
    };
    let Some((var, value)) = SHARD_INDEX_VARS
        .iter()
        .find_map(|v| std::env::var(v).ok().map(|value| (v, value)))
    else {
        return Err(format!(
            "--shard-from-env: neither {} is set (run by a Kubernetes Indexed Job or a Slurm job array, or use --shard I/N)",
            SHARD_INDEX_VARS.join(" nor ")
        ));
    };
    let index: u32 = value
        .trim()
        .parse()
        .map_err(|_| format!("--shard-from-env: {var}=`{value}` is not a shard index"))?;
    Shard::new(index, count).ok_or_else(|| {
        format!("--shard-from-env: {var}={index} is not below the shard count {count} (indices run from 0, e.g. --array=0-{})", count - 1)
    })
}

fn bake_shard(
    world: &WorldGen,
    store: &Path,
    first: [i32; 2],
    last: [i32; 2],
    shard: Shard,
    phase: Phase,
    scene: &str,
) -> Result<BakeReport, String> {
    let writer = format!("{phase:?}-{}-of-{}", shard.index(), shard.count()).to_lowercase();
    // The plan first: a region it refuses leaves no store behind.
    let plan = BakePlan::new(world, first, last, shard, phase).map_err(|e| e.to_string())?;
    let writing = create_store(store, world, &writer).map_err(|e| e.to_string())?;
    println!(
        "{scene}: shard {shard} of chunks ({}, {}) to ({}, {}): {}, {} into {}",
        first[0],
        first[1],
        last[0],
        last[1],
        count(plan.domains.len() as u64, "domain"),
        count(plan.chunks.len() as u64, "chunk"),
        store.display()
    );
    let bar = progress::bar(plan.len() as u64, scene, "files");
    let report = bake(world, &writing.cache, &plan, || bar.inc(1)).map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    writing.finish().map_err(|e| e.to_string())?;
    println!(
        "  wrote {} in {:.2} s and {} in {:.2} s ({:.2} chunks/s on {}), {:.1} MiB; {} skipped, {} redone",
        count(report.domains, "domain"),
        report.domains_ms / 1e3,
        count(report.chunks, "chunk"),
        report.chunks_ms / 1e3,
        report.chunks_per_s,
        count(rayon::current_num_threads() as u64, "thread"),
        report.bytes as f64 / f64::from(1 << 20),
        count(report.skipped, "valid file"),
        count(report.redone, "corrupt file")
    );
    Ok(report)
}

fn verify_store(
    world: &WorldGen,
    store: &Path,
    first: [i32; 2],
    last: [i32; 2],
    scene: &str,
) -> Result<VerifyReport, String> {
    let plan = BakePlan::new(world, first, last, Shard::WHOLE, Phase::All).map_err(|e| e.to_string())?;
    let cache = open_store(store, world).map_err(|e| e.to_string())?;
    let bar = progress::bar(plan.len() as u64, scene, "files");
    let mut report = verify(world, &cache, &plan, || bar.inc(1));
    bar.finish_and_clear();
    report.leftovers = leftovers(store).map_err(|e| e.to_string())?;
    let faults = report.missing.iter().map(|f| (f, "missing".to_owned()));
    let faults: Vec<_> = faults
        .chain(report.corrupt.iter().map(|(f, why)| (f, format!("corrupt: {why}"))))
        .collect();
    for (file, why) in faults.iter().take(LISTED) {
        println!("  {file}: {why}");
    }
    if faults.len() > LISTED {
        println!("  … and {} more (all in --report)", faults.len() - LISTED);
    }
    for path in report.leftovers.iter().take(LISTED) {
        println!(
            "  {}: left by a killed writer (safe to delete once no bake runs)",
            path.display()
        );
    }
    println!(
        "{}: {} files checked, {} missing, {} corrupt, {} left by killed writers",
        store.display(),
        report.checked,
        report.missing.len(),
        report.corrupt.len(),
        report.leftovers.len()
    );
    Ok(report)
}
