//! What every command shares: the global flags ([`Common`]), loading and building a scene
//! with them, writing the JSON report, and what a world's cache could not take, said at the
//! end of `fly` and `view` ([`cache_failures`]).

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use sylva::systems::world::Domains;
use sylva::{MemoryLimit, Report, Scene, WorldStreamer};

use crate::cli::output_paths;

/// Flags every command takes.
#[derive(Args, Clone)]
pub(crate) struct Common {
    /// Worker threads, at most 1024 (default: one per core).
    #[arg(long, global = true, value_parser = clap::value_parser!(u16).range(1..=sylva::runtime::MAX_THREADS as i64))]
    pub(crate) threads: Option<u16>,
    /// World seed, overriding the scene's.
    #[arg(long, global = true)]
    pub(crate) seed: Option<u64>,
    /// Write a JSON report of the run to this file.
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) report: Option<PathBuf>,
    /// Refuse a scene whose memory estimate is larger, e.g. 8G or 512M, or `none`
    /// (default: 3/4 of this machine's memory).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_memory_limit, default_value = "machine", hide_default_value = true)]
    pub(crate) memory_limit: MemoryLimit,
    /// Run frames or iterations that would take longer than 12 hours at the pace of the
    /// first few (without it, such a run stops there with its estimate).
    #[arg(long, global = true)]
    pub(crate) force: bool,
}

impl Common {
    /// The worker threads asked for, 0 for one per core.
    pub(crate) fn thread_count(&self) -> usize {
        self.threads.map_or(0, usize::from)
    }
}

fn parse_memory_limit(s: &str) -> Result<MemoryLimit, String> {
    match s {
        "none" => Ok(MemoryLimit::NONE),
        "machine" => Ok(MemoryLimit::of_machine()),
        _ => sylva::memory::parse_size(s)
            .map(MemoryLimit::bytes)
            .map_err(|e| e.to_string()),
    }
}

/// A flag's value that must be a positive, finite number.
pub(crate) fn positive_f32(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number")),
    }
}

/// Builds `scene` with the common flags' threads and memory limit.
pub(crate) fn build(scene: &Scene, common: &Common) -> Result<sylva::Built, String> {
    sylva::build_within(scene, common.thread_count(), common.memory_limit).map_err(|e| e.to_string())
}

/// What a followed scene file gets on every read: `--seed`, and `--cache` for its world.
pub(crate) fn adjust_scene(seed: Option<u64>, cache: Option<PathBuf>) -> impl Fn(&mut Scene) + Send + Sync + 'static {
    move |scene: &mut Scene| {
        if let Some(s) = seed {
            scene.seed = s;
        }
        if let (Some(dir), Some(world)) = (&cache, &mut scene.world) {
            world.cache = Some(dir.clone());
        }
    }
}

/// The scene at `path`, or the built-in world; the common flags applied.
pub(crate) fn scene_or_default(path: Option<&Path>, common: &Common) -> Result<Scene, String> {
    match path {
        Some(p) => load(p, common),
        None => {
            let mut scene = Scene::world();
            if let Some(seed) = common.seed {
                scene.seed = seed;
            }
            Ok(scene)
        }
    }
}

/// Loads a scene and applies the common flags.
pub(crate) fn load(path: &Path, common: &Common) -> Result<Scene, String> {
    let mut scene = Scene::load(path).map_err(|e| e.to_string())?;
    if let Some(seed) = common.seed {
        scene.seed = seed;
    }
    Ok(scene)
}

/// Writes `report` where `--report` says, if it says.
pub(crate) fn write_report(report: &Report, common: &Common) -> Result<(), String> {
    if let Some(path) = &common.report {
        let json = report
            .json()
            .map_err(|e| format!("{}: cannot write report: {e}", path.display()))?;
        write_json_bytes(path, &json)?;
    }
    Ok(())
}

/// Writes `value` as pretty JSON to `path` (see [`write_json_bytes`]).
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<(), String> {
    let mut json = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    json.push(b'\n');
    write_json_bytes(path, &json)
}

/// Writes a report's `json` to `path` (standard output for `-`; see
/// [`output_paths::write`]), and says where unless that is standard output.
fn write_json_bytes(path: &Path, json: &[u8]) -> Result<(), String> {
    output_paths::write(path, json).map_err(|e| format!("{}: cannot write report: {e}", path.display()))?;
    if !output_paths::is_stdout(path) {
        println!("report: {}", path.display());
    }
    Ok(())
}

/// Says once, at the end of a flight or a view, how many files the world's cache could not
/// take and why the first could not; a failure when `--cache` asked for the cache, a warning
/// when the scene named it (docs/design/limits.md, "Files Sylva reads and writes").
pub(crate) fn cache_failures(world: &WorldStreamer, asked: bool) -> Result<(), String> {
    let Some(cache) = world.cache() else {
        return Ok(());
    };
    let chunks = world.stats().cache_write_failed;
    let domains = world.domains().map_or(0, |d| d.counts().write_failed);
    if chunks + domains == 0 {
        return Ok(());
    }
    let first = world
        .stats()
        .cache_write_error
        .clone()
        .or_else(|| world.domains().and_then(Domains::write_error))
        .unwrap_or_default();
    let message = format!(
        "cache {}: {} and {} could not be written (first: {first}); they are generated again next time",
        cache.dir().display(),
        count(chunks, "chunk file"),
        count(domains, "domain file"),
    );
    if asked {
        Err(message)
    } else {
        eprintln!("warning: {message}");
        Ok(())
    }
}

/// Parses `x0,z0,x1,z1`.
pub(crate) fn parse_region(s: &str) -> Result<[i32; 4], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let numbers: Result<Vec<i32>, _> = parts.iter().map(|p| p.parse::<i32>()).collect();
    match numbers {
        Ok(v) if v.len() == 4 && v[0] <= v[2] && v[1] <= v[3] => Ok([v[0], v[1], v[2], v[3]]),
        Ok(v) if v.len() == 4 => Err(format!("the last chunk ({}, {}) lies before the first", v[2], v[3])),
        _ => Err(format!("expected four chunk coordinates X0,Z0,X1,Z1, got `{s}`")),
    }
}

/// `n` and `noun`, plural unless `n` is 1 ("1 frame", "2 frames").
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_plural_unless_one() {
        assert_eq!(count(0u32, "frame"), "0 frames");
        assert_eq!(count(1u32, "frame"), "1 frame");
        assert_eq!(count(2u64, "chunk"), "2 chunks");
    }

    #[test]
    fn positive_numbers_only() {
        assert_eq!(positive_f32("2.5"), Ok(2.5));
        for bad in ["0", "-1", "inf", "NaN", "x"] {
            assert!(positive_f32(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn regions_are_four_ordered_chunk_coordinates() {
        assert_eq!(parse_region("-2, 0,3,4"), Ok([-2, 0, 3, 4]));
        assert_eq!(
            parse_region("3,0,2,4"),
            Err("the last chunk (2, 4) lies before the first".to_owned())
        );
        assert!(parse_region("1,2,3").is_err());
    }

    #[test]
    fn memory_limits_read_sizes_and_words() {
        assert_eq!(parse_memory_limit("none"), Ok(MemoryLimit::NONE));
        assert!(parse_memory_limit("512M").is_ok());
        assert!(parse_memory_limit("lots").is_err());
    }
}
