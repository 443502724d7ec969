//! The JSON report written by `--report`: the contract benchmarks and CI read.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use sylva_runtime::metrics::{FrameReport, SystemReport, peak_rss_bytes};
use sylva_runtime::{App, SnapshotError};
use sylva_systems::colonize::TreeReport;
use sylva_systems::grass::GrassReport;
use sylva_systems::particles::ParticleReport;
use sylva_systems::placement::forest::ForestStats;
use sylva_systems::terrain::TerrainReport;
use sylva_systems::world::StreamingReport;

use crate::domains::DOMAINS;

/// Everything measured in one run. Later domains add their own sections.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Scene name.
    pub scene: String,
    /// World seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Frames run in this process.
    pub frames: u64,
    /// Fixed simulation steps run in this process.
    pub steps: u64,
    /// Seconds simulated in this process.
    pub sim_seconds: f64,
    /// Frames the state had run before this process resumed it from a snapshot (0 without `--resume`).
    pub resumed_from_frame: u64,
    /// Fixed steps the state had run before this process resumed it (0 without `--resume`).
    pub resumed_from_step: u64,
    /// Wall-clock time of the whole run, milliseconds.
    pub wall_ms: f64,
    /// Entity counts per kind.
    pub entities: BTreeMap<String, usize>,
    /// Per-system calls and timings, keyed by system name.
    pub systems: BTreeMap<String, SystemReport>,
    /// Frame-time percentiles, milliseconds.
    pub frame_ms: FrameReport,
    /// Peak resident memory of the process, bytes (null where the OS does not say):
    /// read last, when the report is written, so it includes the state hash and any render.
    pub peak_rss_bytes: Option<u64>,
    /// Hash of the final simulation state as 16 hex digits; equal for any thread count.
    pub state_hash: String,
    /// Particle solver throughput.
    pub particles: ParticleReport,
    /// The scene's tree, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeReport>,
    /// The scene's forest, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forest: Option<ForestStats>,
    /// The scene's terrain, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terrain: Option<TerrainReport>,
    /// The scene's grass, when it has some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grass: Option<GrassReport>,
    /// Chunk streaming, for world scenes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingReport>,
    /// The renderer, when the run rendered (`--screenshot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub render: Option<RenderReport>,
}

/// The report's `render` object.
#[derive(Clone, Debug, Serialize)]
pub struct RenderReport {
    /// The Vulkan device's name.
    pub device: String,
    /// Frames rendered.
    pub frames: u64,
    /// Draw calls per frame, mean.
    pub draw_calls_per_frame: f64,
    /// Cylinders, leaves, points and grass blades drawn in the last frame (those of trees drawn
    /// from their models as counted on the GPU a frame slot before).
    pub instances: u64,
    /// The last frame's instances per layer.
    pub instances_by_layer: InstancesByLayer,
    /// Bytes uploaded per frame, mean.
    pub upload_bytes_per_frame: f64,
    /// Device memory reserved by the allocator after the last frame, bytes.
    pub gpu_memory_bytes: u64,
    /// Device memory reserved after the first frame, bytes: a long flight that frees what it
    /// evicts ends near it.
    pub gpu_memory_first_bytes: u64,
    /// Most device memory reserved after any frame, bytes.
    pub gpu_memory_peak_bytes: u64,
    /// Device memory in live allocations after the first frame and after the last, bytes:
    /// what is held, where reserved memory grows in the allocator's blocks.
    pub gpu_allocated_first_bytes: u64,
    /// See `gpu_allocated_first_bytes`.
    pub gpu_allocated_bytes: u64,
    /// Most bytes uploaded in one frame after the first (which uploads everything resident
    /// before rendering began, such as a world's first ring).
    pub upload_bytes_max: u64,
    /// Draw calls in the last frame.
    pub draw_calls_last: u32,
    /// Validation-layer errors (0 when the layer is not installed).
    pub validation_errors: u32,
    /// Validation-layer warnings.
    pub validation_warnings: u32,
    /// Render time per frame on the CPU, mean, ms: preparing, recording and submitting a
    /// frame, including `gpu_wait_ms` (two frames are in flight, so the GPU's work on a frame
    /// overlaps the next frame's preparation).
    pub frame_ms: f64,
    /// Time per frame spent waiting for the GPU to finish the frame two before, mean, ms.
    pub gpu_wait_ms: f64,
}

/// The report's `render.instances_by_layer` object: what the last frame drew, per layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct InstancesByLayer {
    /// Trees drawn from their models' geometry (not as cards alone).
    pub trees: u64,
    /// Shrubs (understory species) drawn from their models' geometry.
    pub shrubs: u64,
    /// Branch segments drawn, of trees and of cylinder batches.
    pub cylinders: u64,
    /// Leaves drawn.
    pub leaves: u64,
    /// Trees in the batches whose impostor cards were drawn (a near tree's card is dropped
    /// by its shader).
    pub cards: u64,
    /// Grass blades: those of the drawn listed layers before distance thinning, and those
    /// expanded from the ground cover (thinned and culled on the GPU, counted a frame slot
    /// late).
    pub grass_blades: u64,
    /// Points drawn.
    pub points: u64,
}

impl RenderReport {
    /// The report of a renderer's totals.
    #[cfg(feature = "render")]
    pub fn new(s: &sylva_vk::RenderStats) -> RenderReport {
        let per_frame = |x: f64| if s.frames == 0 { 0.0 } else { x / s.frames as f64 };
        RenderReport {
            device: s.device.clone(),
            frames: s.frames,
            draw_calls_per_frame: per_frame(s.draw_calls as f64),
            instances: s.last.instances(),
            instances_by_layer: InstancesByLayer {
                trees: s.last.trees,
                shrubs: s.last.shrubs,
                cylinders: s.last.cylinders,
                leaves: s.last.leaves,
                cards: s.last.cards,
                grass_blades: s.last.grass,
                points: s.last.points,
            },
            upload_bytes_per_frame: per_frame(s.upload_bytes as f64),
            gpu_memory_bytes: s.last.gpu_memory_bytes,
            gpu_memory_first_bytes: s.first_gpu_memory_bytes,
            gpu_memory_peak_bytes: s.peak_gpu_memory_bytes,
            gpu_allocated_first_bytes: s.first_gpu_allocated_bytes,
            gpu_allocated_bytes: s.last.gpu_allocated_bytes,
            upload_bytes_max: s.max_upload_bytes,
            draw_calls_last: s.last.draw_calls,
            validation_errors: s.validation_errors,
            validation_warnings: s.validation_warnings,
            frame_ms: per_frame(s.frame_ms),
            gpu_wait_ms: per_frame(s.gpu_wait_ms),
        }
    }
}

impl Report {
    /// Gathers the report of `app` after a run of `wall` wall-clock time: the run's own
    /// measures, then each domain's part.
    pub fn gather(app: &App, scene: &str, wall: Duration) -> Result<Self, SnapshotError> {
        let entities = BTreeMap::from([("total".to_owned(), app.world.entities.len() as usize)]);
        let (time, origin) = (app.time(), app.origin());
        let mut report = Self {
            scene: scene.to_owned(),
            seed: time.seed,
            threads: app.threads(),
            frames: app.metrics().frame_count(),
            steps: time.tick - origin.steps,
            sim_seconds: time.elapsed - origin.seconds,
            resumed_from_frame: origin.frames,
            resumed_from_step: origin.steps,
            wall_ms: wall.as_secs_f64() * 1e3,
            entities,
            systems: app.metrics().systems(),
            frame_ms: app.metrics().frames(),
            peak_rss_bytes: None,
            state_hash: format!("{:016x}", app.state_hash()?),
            particles: ParticleReport::default(),
            tree: None,
            forest: None,
            terrain: None,
            grass: None,
            streaming: None,
            render: None,
        };
        for domain in DOMAINS {
            domain.report(app, &mut report);
        }
        // After the state hash and the domain reports, which allocate as they measure.
        report.peak_rss_bytes = peak_rss_bytes();
        Ok(report)
    }

    /// Writes the report's [`json`](Self::json) to `path` (atomically, or through a
    /// FIFO or device; see [`write_output`](sylva_runtime::framed::write_output)).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        sylva_runtime::framed::write_output(path, &self.json()?)
    }

    /// The report as pretty JSON and a newline, with the peak memory read now:
    /// everything the run does (a render after [`gather`](Self::gather), say) is
    /// done by the time its report is written.
    pub fn json(&self) -> std::io::Result<Vec<u8>> {
        let last = Report {
            peak_rss_bytes: peak_rss_bytes().or(self.peak_rss_bytes),
            ..self.clone()
        };
        let mut json = serde_json::to_vec_pretty(&last).map_err(std::io::Error::other)?;
        json.push(b'\n');
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scene;

    #[test]
    fn peak_memory_is_read_when_the_report_is_written() {
        let scene = Scene::from_str("(chains: (columns: 2, rows: 2))", "t.ron").unwrap();
        let app = crate::build(&scene, 1).unwrap();
        let report = Report::gather(&app, "t", Duration::ZERO).unwrap();
        let Some(gathered) = report.peak_rss_bytes else {
            return; // the OS does not say
        };
        // What a run does after gathering (a render) raises the peak above anything so far.
        let more = gathered as usize + (64 << 20);
        drop(std::hint::black_box(vec![1u8; more]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        report.write(&path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let written = json["peak_rss_bytes"].as_u64().unwrap();
        assert!(
            written >= more as u64,
            "{written} bytes written, {more} held after gathering"
        );
    }
}
