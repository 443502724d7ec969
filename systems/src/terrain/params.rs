//! Scene parameters of the terrain domain, with documented defaults and validation.

use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

use super::columns::{MAX_CHUNK_SIZE, MAX_LAYER_SLOTS};
use super::generators::GeneratorParams;
use super::materials::MaterialTable;

/// Most cells all chunks together may have (4096² · 16).
pub const MAX_TOTAL_CELLS: u64 = 1 << 28;

/// Everything a scene says about terrain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TerrainParams {
    /// Chunk side length in cells. Default: 512 (the thesis's test size).
    pub size: u32,
    /// Number of chunks along x and z. Default: (1, 1).
    pub chunks: [u32; 2],
    /// Layer slots per column (see `TerrainChunk` for the rule when full). Default: 8.
    pub max_layers: u8,
    /// Cell length l in height units; the thesis fixes it to 1. Default: 1.
    pub cell_length: f32,
    /// Rock types. Default: thesis Table 3.1.
    pub materials: MaterialTable,
    /// The primordial landscape. Default: value noise split 60/20/15/5 into
    /// granite, marble, limestone and sandstone.
    pub generator: GeneratorParams,
    /// Flowing water. Default: thesis Test 1 (§5.3.1).
    pub hydraulic: HydraulicParams,
    /// Standing-water erosion. Default: enabled, threshold 0.1 on both fluxes.
    pub standing_water: StandingWaterParams,
    /// Thermal erosion. Default: rate 0.5 with layer sliding.
    pub thermal: ThermalParams,
    /// Rock-cycle aging. Default: thresholds 4, 16, 64, 256, 1024, 4096, no compaction.
    pub aging: AgingParams,
    /// How often each process runs. Default: water every iteration, aging every
    /// 2nd, thermal every 20th (thesis §4.2).
    pub schedule: ScheduleParams,
}

impl Default for TerrainParams {
    fn default() -> Self {
        Self {
            size: 512,
            chunks: [1, 1],
            max_layers: 8,
            cell_length: 1.0,
            materials: MaterialTable::default(),
            generator: GeneratorParams::default(),
            hydraulic: HydraulicParams::default(),
            standing_water: StandingWaterParams::default(),
            thermal: ThermalParams::default(),
            aging: AgingParams::default(),
            schedule: ScheduleParams::default(),
        }
    }
}

/// Where random rain falls.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Rain {
    /// No rain.
    None,
    /// `drops` random cells per chunk and iteration get `amount` each (the
    /// thesis's StrengthRain and QuantityOfRain).
    Random {
        /// Cells per chunk and iteration.
        drops: u32,
        /// Water added at each, height units.
        amount: f32,
    },
    /// Every cell gets `amount` per iteration.
    Uniform {
        /// Water height per cell and iteration.
        amount: f32,
    },
}

/// A spring: a fixed world cell that gets water every iteration (eq. 2.14).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spring {
    /// World cell (x, z).
    pub cell: [i64; 2],
    /// Water added per iteration, height units.
    pub amount: f32,
}

/// What lies beyond the edge of a chunk for water and sediment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Boundary {
    /// Outside is height 0 with no water, so water drains off the edge
    /// (the thesis's choice, Fig. 2.28); drained water and sediment are booked.
    #[default]
    Drain,
    /// A wall: nothing crosses the edge.
    Closed,
    /// The chunk is a torus.
    Wrap,
}

/// How suspended sediment moves with the water.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transport {
    /// Semi-Lagrangian back-tracing with bilinear weights (eq. 2.30), traces
    /// cut to one cell, made mass-conserving: each source shares its
    /// sediment among the cells that sample it, by their weights, and one
    /// nobody samples keeps it. Traces off a draining edge sample nothing
    /// and cells just outside take the edge's sediment (booked as drained),
    /// not the thesis's N4 average (eq. 2.31). See `terrain/advect.rs`.
    SemiLagrangian,
    /// The thesis's flux-proportional transport (eq. 3.7–3.8), accumulated into
    /// a fresh buffer: a cell with any outflow sends all its sediment away.
    ThesisFlux,
    /// Flux-proportional and mass-conserving, limited to what the water carries:
    /// each pipe takes the share of the sediment that it takes of the water.
    #[default]
    Flux,
}

/// Flowing-water erosion: the virtual-pipe model (Mei et al. 2007).
///
/// With the defaults (A = 1, Δt = 1, g = 0.9, l = 1, K_s for both directions)
/// the update is the thesis's simplified eq. 3.1–3.6, with its errata fixed:
/// the z velocity points along +z, fluxes are accumulated, and divisions by
/// zero water or flux are guarded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HydraulicParams {
    /// Gravity g. Default: 0.9 (thesis tests).
    pub gravity: f32,
    /// Pipe cross-section A. Default: 1 (eq. 3.1 drops it).
    pub pipe_area: f32,
    /// Time step Δt. Default: 1.
    pub time_step: f32,
    /// Sediment capacity constant K_c. Default: 0.5.
    pub capacity: f32,
    /// Lower bound of sin(tilt) in the capacity, so flat water still carries
    /// sediment (Mei et al.). Default: 0.05.
    pub min_tilt: f32,
    /// Mean water depth below which a cell has no velocity; avoids dividing a
    /// tiny flux by a tiny depth. Default: 0.01.
    pub min_depth: f32,
    /// Deposit with the surface's K_s, as the thesis does (eq. 2.29); false
    /// uses the material table's `deposit` rate instead. Default: true.
    pub thesis_deposit: bool,
    /// Evaporation K_V per time step (eq. 3.6). Default: 0.01.
    pub evaporation: f32,
    /// Rain. Default: 10 random drops of 20 per chunk and iteration (Test 1).
    pub rain: Rain,
    /// Springs. Default: none.
    pub springs: Vec<Spring>,
    /// Edge handling. Default: drain.
    pub boundary: Boundary,
    /// Sediment transport. Default: mass-conserving flux transport.
    pub transport: Transport,
    /// Use eq. 2.24b as printed, whose z velocity points along −z
    /// (docs/design/terrain.md, "Velocity sign"). Default: false.
    pub thesis_velocity_sign: bool,
}

impl Default for HydraulicParams {
    fn default() -> Self {
        Self {
            gravity: 0.9,
            pipe_area: 1.0,
            time_step: 1.0,
            capacity: 0.5,
            min_tilt: 0.05,
            min_depth: 0.01,
            thesis_deposit: true,
            evaporation: 0.01,
            rain: Rain::Random {
                drops: 10,
                amount: 20.0,
            },
            springs: Vec::new(),
            boundary: Boundary::Drain,
            transport: Transport::Flux,
            thesis_velocity_sign: false,
        }
    }
}

/// When water counts as standing (thesis §3.1.4; docs/design/terrain.md, "Standing criterion").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Standing {
    /// Inflow and outflow both below the threshold.
    #[default]
    BothBelow,
    /// |inflow − outflow| below the threshold.
    Balanced,
}

/// Standing-water erosion: water that does not flow grinds the rock beneath
/// into regolith, at most K_s deep (eq. 2.33 read as min(w, K_s); docs/design/terrain.md,
/// "Standing water target depth").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StandingWaterParams {
    /// Run it (inside the water step, which has the fluxes). Default: true.
    pub enabled: bool,
    /// Which flux test makes water standing. Default: both below.
    pub criterion: Standing,
    /// Flux threshold. Default: 0.1.
    pub threshold: f32,
    /// Water shallower than this is a film, not a pond, and never counts as
    /// standing: under the flux criterion alone every thin film on a slope
    /// qualifies (its fluxes are limited by its depth), and grinding soaks
    /// it up before it can run off. Not in the thesis. Default: 0.5.
    pub min_depth: f32,
}

impl Default for StandingWaterParams {
    fn default() -> Self {
        Self {
            enabled: true,
            criterion: Standing::BothBelow,
            threshold: 0.1,
            min_depth: 0.5,
        }
    }
}

/// Thermal erosion: Musgrave's talus rule with Olsen's split over the N4
/// neighbours lower than the talus threshold, plus layer sliding.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThermalParams {
    /// K_Δt: the fraction of the excess over the talus threshold moved per pass
    /// (not given in the thesis; Musgrave uses 0.5). Default: 0.5.
    pub rate: f32,
    /// Let consolidated layers resting on loose sediment slide (thesis §3.1.5,
    /// eq. 3.9–3.12). Default: true.
    pub layer_sliding: bool,
    /// Slid material lands as regolith (thesis §3.1.2: erosion makes
    /// regolith); false keeps the material it was. Default: true.
    pub debris_to_regolith: bool,
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self {
            rate: 0.5,
            layer_sliding: true,
            debris_to_regolith: true,
        }
    }
}

/// The rock cycle: a layer unchanged for long enough turns into the next,
/// harder rock (regolith → sand → sandstone → limestone → slate → marble → granite).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgingParams {
    /// Unchanged iterations after which regolith, sand, sandstone, limestone,
    /// slate and marble turn into the next type. Default: 4¹ … 4⁶
    /// (4, 16, 64, 256, 1024, 4096), so sandstone becomes limestone after 64.
    pub thresholds: [u16; 6],
    /// Halve a layer's thickness at each transition (thesis §3.1.2; off by
    /// default because the thesis's results show aging changing no heights).
    pub compaction_halving: bool,
}

impl Default for AgingParams {
    fn default() -> Self {
        Self {
            thresholds: [4, 16, 64, 256, 1024, 4096],
            compaction_halving: false,
        }
    }
}

/// Every how many iterations each process runs; 0 disables it. The n-th
/// iteration (1-based) runs a process when n is a multiple of its interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScheduleParams {
    /// Default: 1.
    pub water_every: u32,
    /// Default: 2.
    pub aging_every: u32,
    /// Default: 20.
    pub thermal_every: u32,
}

impl Default for ScheduleParams {
    fn default() -> Self {
        Self {
            water_every: 1,
            aging_every: 2,
            thermal_every: 20,
        }
    }
}

fn finite_in(field: &str, v: f32, lo: f32, hi: f32) -> Result<(), FieldError> {
    FieldError::check(v.is_finite() && v >= lo && v <= hi, field, || {
        format!("must be a number in [{lo}, {hi}], got {v}")
    })
}

fn positive(field: &str, v: f32) -> Result<(), FieldError> {
    FieldError::check(v.is_finite() && v > 0.0, field, || {
        format!("must be a positive number, got {v}")
    })
}

impl Validate for TerrainParams {
    /// Checks every range.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.size > 0 && self.size <= MAX_CHUNK_SIZE, "size", || {
            format!("must be in 1..={MAX_CHUNK_SIZE}, got {}", self.size)
        })?;
        FieldError::check(!self.chunks.contains(&0), "chunks", || {
            "needs at least one chunk along each axis".into()
        })?;
        let cells = u64::from(self.size).pow(2) * u64::from(self.chunks[0]) * u64::from(self.chunks[1]);
        FieldError::check(cells <= MAX_TOTAL_CELLS, "chunks", || {
            format!("{cells} cells in all chunks is over the limit of {MAX_TOTAL_CELLS}")
        })?;
        FieldError::check(
            self.max_layers > 0 && self.max_layers <= MAX_LAYER_SLOTS,
            "max_layers",
            || format!("must be in 1..={MAX_LAYER_SLOTS}, got {}", self.max_layers),
        )?;
        finite_in("cell_length", self.cell_length, 1e-3, 1e3)?;
        self.materials.validate().map_err(|e| e.within("materials"))?;
        self.generator.validate().map_err(|e| e.within("generator"))?;
        let h = &self.hydraulic;
        positive("hydraulic.gravity", h.gravity)?;
        positive("hydraulic.pipe_area", h.pipe_area)?;
        positive("hydraulic.time_step", h.time_step)?;
        finite_in("hydraulic.capacity", h.capacity, 0.0, 1e3)?;
        finite_in("hydraulic.min_tilt", h.min_tilt, 0.0, 1.0)?;
        finite_in("hydraulic.min_depth", h.min_depth, 1e-6, 1e3)?;
        finite_in("hydraulic.evaporation", h.evaporation * h.time_step, 0.0, 1.0)
            .map_err(|e| FieldError::new("hydraulic.evaporation", format!("times time_step {}", e.message)))?;
        match h.rain {
            Rain::None => {}
            Rain::Random { drops, amount } => {
                FieldError::check(
                    u64::from(drops) <= u64::from(self.size).pow(2),
                    "hydraulic.rain.drops",
                    || "more drops than cells".into(),
                )?;
                finite_in("hydraulic.rain.amount", amount, 0.0, 1e6)?;
            }
            Rain::Uniform { amount } => finite_in("hydraulic.rain.amount", amount, 0.0, 1e6)?,
        }
        for (i, s) in h.springs.iter().enumerate() {
            finite_in(&format!("hydraulic.springs[{i}].amount"), s.amount, 0.0, 1e6)?;
        }
        finite_in("standing_water.threshold", self.standing_water.threshold, 0.0, 1e6)?;
        finite_in("standing_water.min_depth", self.standing_water.min_depth, 0.0, 1e6)?;
        finite_in("thermal.rate", self.thermal.rate, 0.0, 1.0)?;
        FieldError::check(!self.aging.thresholds.contains(&0), "aging.thresholds", || {
            "every threshold must be at least 1".into()
        })
    }
}
