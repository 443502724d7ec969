//! Books and the report: water and material balance, score, timings.

use serde::{Deserialize, Serialize};
use sylva_runtime::App;
use sylva_runtime::metrics::Histogram;

use super::basin::{Drainage, drainage};
use super::columns::TerrainChunk;
use super::export::Heightfield;
use super::params::ScheduleParams;
use super::score::{ScoreMode, erosion_score};
use super::{AGING_SYSTEM, THERMAL_SYSTEM, WATER_SYSTEM, lone_aging_passes};

/// What the erosion systems added and removed so far: a resource, part of
/// the snapshot state. Volumes are heights summed over cells.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TerrainBalance {
    /// Terrain iterations run.
    pub iterations: u64,
    /// Water present when the terrain was installed.
    pub initial_water: f64,
    /// Rock plus suspended sediment when the terrain was installed.
    pub initial_material: f64,
    /// Thesis-mode erosion score when the terrain was installed.
    pub initial_score: f32,
    /// Water added by rain and springs.
    pub water_added: f64,
    /// Water evaporated.
    pub water_evaporated: f64,
    /// Water drained over chunk edges.
    pub water_drained: f64,
    /// Water used up by standing-water erosion.
    pub water_absorbed: f64,
    /// Suspended sediment carried over chunk edges.
    pub sediment_drained: f64,
    /// Thickness removed by compaction halving.
    pub compacted: f64,
}

/// Water balance: `stored − (initial + added − evaporated − drained − absorbed)` is `error`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaterBalance {
    /// Water at the start.
    pub initial: f64,
    /// Added by rain and springs.
    pub added: f64,
    /// Evaporated.
    pub evaporated: f64,
    /// Drained over edges.
    pub drained: f64,
    /// Used by standing-water erosion.
    pub absorbed: f64,
    /// Water now.
    pub stored: f64,
    /// Unaccounted difference (f32 rounding).
    pub error: f64,
}

/// Material balance: `rock + suspended + drained + compacted − initial` is `error`
/// (zero up to f32 rounding for every transport and boundary).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MaterialBalance {
    /// Rock plus suspended sediment at the start.
    pub initial: f64,
    /// Rock now.
    pub rock: f64,
    /// Suspended sediment now.
    pub suspended: f64,
    /// Sediment carried over edges.
    pub drained: f64,
    /// Lost to compaction.
    pub compacted: f64,
    /// Unaccounted difference.
    pub error: f64,
}

/// The terrain section of a run report (`terrain` in the JSON).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TerrainReport {
    /// Chunk entities.
    pub chunks: usize,
    /// Columns in all chunks.
    pub cells: u64,
    /// Layers in all columns.
    pub layers: u64,
    /// Terrain iterations run.
    pub iterations: u64,
    /// Thesis-mode erosion score at install time.
    pub score_before: f32,
    /// Thesis-mode erosion score now.
    pub score_after: f32,
    /// Corrected-mode erosion score now.
    pub score_corrected: f32,
    /// Unaccounted water (`water.error`); null where the terrain keeps no
    /// books (see `water`).
    pub water_balance_error: Option<f64>,
    /// Unaccounted material (`material.error`); null where the terrain keeps
    /// no books.
    pub material_balance_error: Option<f64>,
    /// Mean milliseconds of one hydraulic pass (iterations it ran in only),
    /// with the aging that runs inside it: where aging is due with water and
    /// thermal erosion is not, the water pass ages the rows it has just
    /// eroded.
    pub hydraulic_ms_per_iter: f64,
    /// Mean milliseconds of one thermal pass, with the aging that runs
    /// inside it (where both are due).
    pub thermal_ms_per_iter: f64,
    /// Mean milliseconds of one aging pass of its own (not inside a water
    /// or thermal pass).
    pub aging_ms_per_iter: f64,
    /// Median milliseconds of one pass of each kernel.
    pub p50_ms_per_pass: KernelRates,
    /// 99th percentile milliseconds of one pass of each kernel.
    pub p99_ms_per_pass: KernelRates,
    /// Throughput of each kernel: cells × passes per second, in millions
    /// (0 for a kernel that did not run).
    pub mcell_iterations_per_s: KernelRates,
    /// Water balance in detail; null where the terrain keeps no books: a
    /// streamed world erodes each chunk on its own with an apron of cells
    /// that it then crops away, so no account of the whole holds.
    pub water: Option<WaterBalance>,
    /// Material balance in detail; null where the terrain keeps no books.
    pub material: Option<MaterialBalance>,
    /// River measures of the ground; channels drain at least
    /// [`CHANNEL_CELLS`] cells. Null without terrain or for one too large.
    pub drainage: Option<Drainage>,
}

/// Cells a channel drains at least, in the report's drainage measures.
pub const CHANNEL_CELLS: f32 = 1000.0;

/// One number per terrain kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KernelRates {
    /// Flowing and standing water.
    pub hydraulic: f64,
    /// Thermal erosion.
    pub thermal: f64,
    /// Rock-cycle aging.
    pub aging: f64,
}

/// Sums over every chunk of `app`: (water, rock, suspended sediment).
pub(crate) fn totals(world: &hecs::World) -> (f64, f64, f64) {
    let mut q = world.query::<&TerrainChunk>();
    q.iter().fold((0.0, 0.0, 0.0), |(w, r, s), c| {
        (w + c.total_water(), r + c.total_rock(), s + c.total_sediment())
    })
}

impl TerrainReport {
    /// The terrain report of `app`, when it has terrain chunks.
    pub fn of(app: &App) -> Option<Self> {
        (app.world.count::<TerrainChunk>() > 0).then(|| report(app))
    }
}

/// The terrain report of `app` (zeros when the terrain is not installed).
pub fn report(app: &App) -> TerrainReport {
    let entities = &app.world.entities;
    let kept = app.world.resources.get::<TerrainBalance>().map(|b| b.clone());
    let books = kept.clone().unwrap_or_default();
    let Extent { chunks, cells, layers } = Extent::of(entities);
    let hf = Heightfield::from_world(entities);
    let score = |mode| {
        hf.as_ref()
            .and_then(|h| erosion_score(&h.ground, h.width, mode))
            .unwrap_or(0.0)
    };
    let (schedule, cell_length) = app
        .world
        .resources
        .get::<super::params::TerrainParams>()
        .map_or((Default::default(), 1.0), |p| (p.schedule, p.cell_length));
    let (water, material) = kept.as_ref().map(|books| balances(books, entities)).unzip();
    let [hydraulic, thermal, aging] = kernel_times(app, &books, &schedule);
    let each = |f: fn(&PassTimes) -> f64| KernelRates {
        hydraulic: f(&hydraulic),
        thermal: f(&thermal),
        aging: f(&aging),
    };
    // Cells per millisecond, over a thousand, is millions per second.
    let rate = |ms: f64| if ms > 0.0 { cells as f64 / ms / 1e3 } else { 0.0 };
    TerrainReport {
        chunks,
        cells,
        layers,
        iterations: books.iterations,
        score_before: books.initial_score,
        score_after: score(ScoreMode::Thesis),
        score_corrected: score(ScoreMode::Corrected),
        water_balance_error: water.as_ref().map(|w| w.error),
        material_balance_error: material.as_ref().map(|m| m.error),
        hydraulic_ms_per_iter: hydraulic.mean,
        thermal_ms_per_iter: thermal.mean,
        aging_ms_per_iter: aging.mean,
        p50_ms_per_pass: each(|t| t.p50),
        p99_ms_per_pass: each(|t| t.p99),
        mcell_iterations_per_s: KernelRates {
            hydraulic: rate(hydraulic.mean),
            thermal: rate(thermal.mean),
            aging: rate(aging.mean),
        },
        water,
        material,
        drainage: hf.as_ref().and_then(|h| {
            drainage(
                &h.ground,
                h.width,
                h.depth,
                cell_length,
                CHANNEL_CELLS * cell_length * cell_length,
            )
        }),
    }
}

/// How much terrain there is: chunks, their cells and their layers.
struct Extent {
    chunks: usize,
    cells: u64,
    layers: u64,
}

impl Extent {
    fn of(entities: &hecs::World) -> Extent {
        let mut extent = Extent {
            chunks: 0,
            cells: 0,
            layers: 0,
        };
        for c in entities.query::<&TerrainChunk>().iter() {
            extent.chunks += 1;
            extent.cells += u64::from(c.size()).pow(2);
            extent.layers += c.layer_count();
        }
        extent
    }
}

/// The water and material books of `books` checked against what the chunks
/// of `entities` hold now.
fn balances(books: &TerrainBalance, entities: &hecs::World) -> (WaterBalance, MaterialBalance) {
    let (water, rock, suspended) = totals(entities);
    let expected_water =
        books.initial_water + books.water_added - books.water_evaporated - books.water_drained - books.water_absorbed;
    let water = WaterBalance {
        initial: books.initial_water,
        added: books.water_added,
        evaporated: books.water_evaporated,
        drained: books.water_drained,
        absorbed: books.water_absorbed,
        stored: water,
        error: water - expected_water,
    };
    let material = MaterialBalance {
        initial: books.initial_material,
        rock,
        suspended,
        drained: books.sediment_drained,
        compacted: books.compacted,
        error: rock + suspended + books.sediment_drained + books.compacted - books.initial_material,
    };
    (water, material)
}

/// The pass times of the water, thermal and aging kernels in this process.
fn kernel_times(app: &App, books: &TerrainBalance, schedule: &ScheduleParams) -> [PassTimes; 3] {
    // A system is called every tick but works only in the iterations it is due. The
    // timings are this process's: after a resume, the passes the snapshot ran do not count.
    let resumed = app.origin().steps;
    let passes = |every: u32| {
        if every == 0 {
            0
        } else {
            (books.iterations / u64::from(every)).saturating_sub(resumed / u64::from(every))
        }
    };
    let timings = |name: &str, passes: u64| {
        app.metrics()
            .system(name)
            .filter(|_| passes > 0)
            .map_or(PassTimes::default(), |h| PassTimes::of(h, passes))
    };
    [
        timings(WATER_SYSTEM, passes(schedule.water_every)),
        timings(THERMAL_SYSTEM, passes(schedule.thermal_every)),
        timings(
            AGING_SYSTEM,
            lone_aging_passes(schedule, resumed, books.iterations.max(resumed)),
        ),
    ]
}

/// One kernel's passes: mean, median and 99th percentile, in milliseconds.
#[derive(Default)]
struct PassTimes {
    mean: f64,
    p50: f64,
    p99: f64,
}

impl PassTimes {
    /// The last `passes` of the calls in `h`, a system called every
    /// iteration but working only in those it is due: its idle calls are
    /// the quickest, so its passes are the slowest `passes` calls, and their
    /// quantile q is the histogram's at rank `idle + q·passes`.
    fn of(h: &Histogram, passes: u64) -> Self {
        let calls = h.count().max(passes) as f64;
        let idle = calls - passes as f64;
        let quantile = |q: f64| h.quantile_ms((idle + q * passes as f64) / calls);
        PassTimes {
            mean: h.total_ms() / passes as f64,
            p50: quantile(0.5),
            p99: quantile(0.99),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A kernel due every 4th call: the three idle calls around each pass
    /// do not drag its median and p99 down to their microseconds.
    #[test]
    fn pass_quantiles_skip_the_idle_calls() {
        let mut h = Histogram::default();
        for pass in 1..=100u64 {
            for _ in 0..3 {
                h.record(Duration::from_micros(1));
            }
            h.record(Duration::from_millis(pass));
        }
        let t = PassTimes::of(&h, 100);
        assert!((t.mean - 50.5).abs() < 0.01, "{}", t.mean);
        assert!((t.p50 / 50.0 - 1.0).abs() <= 0.011, "{}", t.p50);
        assert!((t.p99 / 99.0 - 1.0).abs() <= 0.011, "{}", t.p99);
        assert!(h.quantile_ms(0.5) < 0.01, "over all calls the median is an idle call");
    }
}
