//! The `world` scene section: chunk grid, streaming radii and budgets, and the
//! content every chunk is generated from.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sylva_runtime::stream::StreamSettings;
use sylva_runtime::{FieldError, Validate};

use crate::ecology::{Biomes, EcologyParams, Layer, MAX_BLADES_PER_CELL, MAX_COVER, thrown_for};
use crate::grass::{BakeSettings, Dynamics, LiveSettings, Walker, WindField};
use crate::placement::Rules;
use crate::placement::forest::SpeciesParams;
use crate::terrain::basin::BasinParams;
use crate::terrain::{
    AgingParams, GeneratorParams, HydraulicParams, MAX_LAYER_SLOTS, MaterialTable, Rain, ScheduleParams, Source,
    StandingWaterParams, TerrainParams, ThermalParams, ValueNoise,
};

/// Most candidates one species may throw per chunk (density × chunk area).
pub const MAX_CANDIDATES_PER_CHUNK: f64 = 1_000_000.0;

/// Most cells along a chunk side: a chunk with its apron and 32 layer slots stays
/// under about 300 MB while it is generated.
pub const MAX_CHUNK_CELLS: u32 = 1024;

/// Most cells a min distance may span (it sets the apron each chunk generates around itself).
pub const MAX_REACH_CELLS: f32 = 128.0;

/// Most walkers a world's grass may have.
pub const MAX_WALKERS: usize = 64;

/// Most tree or grass species a world may have.
pub const MAX_SPECIES: usize = 64;

/// An endless world streamed chunk by chunk (scene section `world`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldParams {
    /// Cells along a chunk's side. Default 256.
    pub chunk_cells: u32,
    /// Side of a cell, metres. Default 1.
    pub cell_size: f32,
    /// Chunks within this distance of a viewer are loaded, metres. Default 640.
    pub load_radius: f32,
    /// Chunks beyond this distance of every viewer are evicted, metres; at least
    /// `load_radius`. Default 900. Between the two radii chunks stay only while the
    /// streamer holds no more than the load radius can need (`Streamer::ring_chunks` per
    /// viewer), farthest evicted first: a viewer going back and forth keeps them, and a
    /// flight does not trail them.
    pub evict_radius: f32,
    /// A chunk this near a viewer that is not installed is a hole, metres.
    /// Default: half the load radius.
    pub near_radius: Option<f32>,
    /// Generation threads; 0 (default) is one less than the cores, at least 1.
    pub threads: u32,
    /// What one frame may spend installing chunks.
    pub budget: BudgetParams,
    /// Directory of the chunk cache. Default: none (no cache).
    pub cache: Option<PathBuf>,
    /// The ground.
    pub terrain: WorldTerrain,
    /// Tree species and where they grow. Default: none.
    pub trees: Vec<WorldTrees>,
    /// Grass species and where they grow, with their shared bake. Default: no grass.
    pub grass: WorldGrass,
    /// Terrain attributes and the biomes they make, which place the trees, shrubs
    /// and ground cover. Default: no biomes (no vegetation).
    pub ecology: EcologyParams,
    /// How much of the vegetation the CPU-side render data copies. Default: see [`DrawParams`].
    pub draw: DrawParams,
    /// The path `sylva fly` and the default run follow. Default: none (a straight line).
    pub flight: FlightParams,
}

/// A camera path through the world.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlightParams {
    /// Positions flown through in order, world metres. Default: none.
    pub waypoints: Vec<glam::Vec3>,
    /// Speed along the path, metres per second. Default 30.
    pub speed: f32,
    /// How far below the horizon the camera looks, degrees. Default 12.
    pub pitch_degrees: f32,
}

impl Default for FlightParams {
    fn default() -> Self {
        Self {
            waypoints: Vec::new(),
            speed: 30.0,
            pitch_degrees: 12.0,
        }
    }
}

impl Default for WorldParams {
    fn default() -> Self {
        Self {
            chunk_cells: 256,
            cell_size: 1.0,
            load_radius: 640.0,
            evict_radius: 900.0,
            near_radius: None,
            threads: 0,
            budget: BudgetParams::default(),
            cache: None,
            terrain: WorldTerrain::default(),
            trees: Vec::new(),
            grass: WorldGrass::default(),
            ecology: EcologyParams::default(),
            draw: DrawParams::default(),
            flight: FlightParams::default(),
        }
    }
}

/// The share of the vegetation a chunk's render data holds (docs/design/ecology.md,
/// "Drawing a dense world"): every tree and blade is generated and instanced, but what a
/// renderer draws may be capped, each tree or blade kept by its own hash, so the cap thins
/// evenly and is the same in every chunk.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrawParams {
    /// Most trees and shrubs per hectare of a layer drawn where it is densest. Default 1000:
    /// every tree of the bundled biomes (trees are drawn from their variants' models, a few
    /// dozen bytes each).
    pub trees_per_hectare: f32,
    /// Most grass blades per m² drawn. Default 2.
    pub blades_per_m2: f32,
}

impl Default for DrawParams {
    fn default() -> Self {
        Self {
            trees_per_hectare: 1000.0,
            blades_per_m2: 2.0,
        }
    }
}

/// Per-frame install budget.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetParams {
    /// Most chunks installed per frame. Default 2.
    pub installs: u32,
    /// Most main-thread milliseconds spent installing per frame. Default 2.
    pub millis: f32,
    /// Most bytes uploaded to the renderer per frame. Default 32 MiB.
    pub upload_bytes: u64,
}

impl Default for BudgetParams {
    fn default() -> Self {
        Self {
            installs: 2,
            millis: 2.0,
            upload_bytes: 32 << 20,
        }
    }
}

/// The ground of a world: a generator sampled in world cells, so chunks meet exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldTerrain {
    /// Height and layers. Default: see [`GeneratorParams`].
    pub generator: GeneratorParams,
    /// Layer slots per column. Default 4.
    pub max_layers: u8,
    /// The basin scale: heights and rivers solved per basin domain, under the
    /// generator's detail. Default: none (the generator alone, no rivers).
    pub basins: Option<WorldBasins>,
    /// Erosion of every chunk with an apron, exact to a monolithic run.
    /// Default: none.
    pub erosion: Option<ChunkErosion>,
}

impl Default for WorldTerrain {
    fn default() -> Self {
        Self {
            generator: GeneratorParams::default(),
            max_layers: 4,
            basins: None,
            erosion: None,
        }
    }
}

/// The basin scale of a world (docs/design/architecture.md, "Basin domains"):
/// the plane is cut into basin domains around jittered sites, each an island ringed by sea whose
/// coast is its outlet, solved once on a coarse lattice by stream-power erosion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldBasins {
    /// Spacing of the domain sites, chunks. Default 16.
    pub domain_chunks: u32,
    /// Spacing of the coarse lattice, metres; a chunk's side must be a multiple
    /// of it. Default 16.
    pub node_spacing: f32,
    /// The stream-power model each domain is solved with.
    pub solver: BasinParams,
    /// Multiplier of the uplift per lattice node (its frequencies count
    /// nodes). Default: value noise around 1.
    pub uplift: Source,
    /// Height of the sea surface, metres; deep enough over the sea floor that
    /// the generator's detail stays under water. Default 20.
    pub sea_level: f32,
    /// Height of the sea floor, the domains' fixed base level, metres; at
    /// least 0, where layered columns stand. Default 2.
    pub sea_floor: f32,
    /// Width of the sea along a domain's border, metres. Default 300.
    pub coast: f32,
    /// How far the coastline wanders, metres; less than `coast`, so a strait
    /// of at least twice the difference parts every two domains. Default 200.
    pub coast_noise: f32,
    /// Least drainage area of a drawn river, km². Default 0.3.
    pub river_area: f32,
    /// River width in metres as `(c, e)`: c · (area in km²)^e. Default (5, 0.5).
    pub river_width: (f32, f32),
    /// River depth in metres as `(c, e)`: c · (area in km²)^e. Default (1, 0.3).
    pub river_depth: (f32, f32),
    /// Width of the banks that blend a channel into the ground, in channel
    /// widths. Default 2.
    pub banks: f32,
}

impl Default for WorldBasins {
    fn default() -> Self {
        Self {
            domain_chunks: 16,
            node_spacing: 16.0,
            solver: BasinParams::default(),
            uplift: Source::Sum(vec![
                Source::ValueNoise(ValueNoise {
                    frequency: 0.02,
                    amplitude: 0.6,
                    persistence: 0.5,
                    octaves: 3,
                    scale: 1.0,
                }),
                Source::Constant(0.5),
            ]),
            sea_level: 20.0,
            sea_floor: 2.0,
            coast: 300.0,
            coast_noise: 200.0,
            river_area: 0.3,
            river_width: (5.0, 0.5),
            river_depth: (1.0, 0.3),
            banks: 2.0,
        }
    }
}

/// Erosion of each chunk on its region: the chunk plus an apron of
/// `iterations × reach` cells, so its interior equals a monolithic run bit for bit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChunkErosion {
    /// Iterations every chunk runs from its fresh state. Default 12.
    pub iterations: u32,
    /// Rock types. Default: thesis Table 3.1.
    pub materials: MaterialTable,
    /// Flowing water; rain must be uniform or none (random drops depend on the
    /// region). Default: the terrain default with a uniform rain of 0.02.
    pub hydraulic: HydraulicParams,
    /// Standing-water erosion. Default: the terrain default.
    pub standing_water: StandingWaterParams,
    /// Thermal erosion. Default: the terrain default.
    pub thermal: ThermalParams,
    /// Rock-cycle aging. Default: the terrain default.
    pub aging: AgingParams,
    /// How often each process runs. Default: water every iteration, thermal and aging every 2nd.
    pub schedule: ScheduleParams,
}

impl Default for ChunkErosion {
    fn default() -> Self {
        Self {
            iterations: 12,
            materials: MaterialTable::default(),
            hydraulic: HydraulicParams {
                rain: Rain::Uniform { amount: 0.02 },
                ..HydraulicParams::default()
            },
            standing_water: StandingWaterParams::default(),
            thermal: ThermalParams::default(),
            aging: AgingParams::default(),
            schedule: ScheduleParams {
                water_every: 1,
                thermal_every: 2,
                aging_every: 2,
            },
        }
    }
}

/// Most iterations a chunk may erode (each widens its apron).
pub const MAX_CHUNK_EROSION_ITERATIONS: u32 = 64;

impl ChunkErosion {
    /// The terrain parameters the kernels read, for cells of `cell_length`.
    pub fn terrain(&self, cell_length: f32, max_layers: u8) -> TerrainParams {
        TerrainParams {
            max_layers,
            cell_length,
            materials: self.materials,
            hydraulic: self.hydraulic.clone(),
            standing_water: self.standing_water,
            thermal: self.thermal,
            aging: self.aging,
            schedule: self.schedule,
            ..TerrainParams::default()
        }
    }
}

/// Where instances of one tree species may stand and how they vary. How many stand is
/// the biomes' part (`world.ecology.biomes`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlacementParams {
    /// Refused: densities come from the biomes' layers (an error says what to write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<f32>,
    /// No two instances (of any species of the same layer) closer than the larger of their
    /// min distances, metres; at most one chunk side. Default 6.
    pub min_distance: f32,
    /// Slope, height and material rules. Default: anywhere.
    pub rules: Rules,
    /// Range of the random scale per instance. Default (0.8, 1.2).
    pub scale: (f32, f32),
}

impl Default for PlacementParams {
    fn default() -> Self {
        Self {
            density: None,
            min_distance: 6.0,
            rules: Rules::default(),
            scale: (0.8, 1.2),
        }
    }
}

/// A tree species of a world and where it grows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldTrees {
    /// How the species grows (L-system or colonization) and how many variants. Its
    /// `weight` is unused: each species has its own density.
    pub species: SpeciesParams,
    /// Where it stands.
    pub placement: PlacementParams,
    /// Bark colour, linear RGBA, instead of the species' `look.bark`. Default: none (the
    /// species' bark).
    pub colour: Option<[u8; 4]>,
}

/// Grass of a world: species placed per chunk, each baked once under one wind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldGrass {
    /// The species. Default: none.
    pub species: Vec<WorldGrassSpecies>,
    /// The bake every species shares the settings of. Default: 16 cells, 32 frames,
    /// at most 3 s of warm-up.
    pub bake: BakeSettings,
    /// The wind of the bakes. Default: still air.
    pub wind: WindField,
    /// Step, gravity, spring, damper, drag. Default: see [`Dynamics`].
    pub dynamics: Dynamics,
    /// Displacement multiplier of playback. Default 1.
    pub wind_power: f32,
    /// Time multiplier of playback. Default 1.
    pub wave_speed: f32,
    /// Switching blades near pushers to live simulation and back. Default: see
    /// [`LiveSettings`].
    pub live: LiveSettings,
    /// Spheres walking through the world's grass, their loops in world metres on the
    /// ground. Default: none (a host may add its own [`crate::grass::Pusher`]s).
    pub walkers: Vec<Walker>,
}

impl Default for WorldGrass {
    fn default() -> Self {
        Self {
            species: Vec::new(),
            bake: BakeSettings {
                frames: 32,
                max_warmup_seconds: 3.0,
                ..BakeSettings::default()
            },
            wind: WindField::default(),
            dynamics: Dynamics::default(),
            wind_power: 1.0,
            wave_speed: 1.0,
            live: LiveSettings::default(),
            walkers: Vec::new(),
        }
    }
}

/// A grass species of a world: its blade, where blades may stand, and their sizes. How
/// many stand is the biomes' ground layers' part; blades are a field, not a list
/// (docs/design/ecology.md, "Ground cover is a field").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorldGrassSpecies {
    /// Its name, as biomes' `ground` layers refer to it. Default "grass".
    pub name: String,
    /// The blade grammar (see `grass::grammar` for its symbols).
    pub grammar: String,
    /// Derivation steps of the grammar. Default 0.
    pub iterations: u32,
    /// Slope, height and material rules a blade's cell must pass. Default: anywhere.
    pub rules: Rules,
    /// Range of the random scale per blade. Default (0.8, 1.2).
    pub scale: (f32, f32),
    /// Refused: grass is a field now (an error says what to write).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementParams>,
    /// Linear RGBA colour. Default meadow green (70, 140, 40, 255).
    pub colour: [u8; 4],
}

impl Default for WorldGrassSpecies {
    fn default() -> Self {
        Self {
            name: "grass".into(),
            grammar: "axiom: S(0.1, 0.01) S S S".into(),
            iterations: 0,
            rules: Rules::default(),
            scale: (0.8, 1.2),
            placement: None,
            colour: [70, 140, 40, 255],
        }
    }
}

impl WorldParams {
    /// Side of a chunk, metres.
    pub fn chunk_size(&self) -> f32 {
        self.chunk_cells as f32 * self.cell_size
    }

    /// The near radius, defaulted.
    pub fn near(&self) -> f32 {
        self.near_radius.unwrap_or(self.load_radius * 0.5)
    }

    /// How a streamer streams this world with `max_in_flight` generation jobs at once.
    pub fn stream_settings(&self, max_in_flight: usize) -> StreamSettings {
        StreamSettings {
            chunk_size: self.chunk_size(),
            load_radius: self.load_radius,
            evict_radius: self.evict_radius,
            near_radius: self.near(),
            max_in_flight,
        }
    }

    /// Generation threads: the setting, or one less than the cores (at least 1).
    pub fn generation_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1)),
            n => n as usize,
        }
    }
}

fn positive(v: f32) -> bool {
    v.is_finite() && v > 0.0
}

impl Validate for WorldParams {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check((8..=MAX_CHUNK_CELLS).contains(&self.chunk_cells), "chunk_cells", || {
            format!("must be within 8..={MAX_CHUNK_CELLS}, got {}", self.chunk_cells)
        })?;
        FieldError::check(positive(self.cell_size) && self.cell_size <= 100.0, "cell_size", || {
            format!("must be within (0, 100] metres, got {}", self.cell_size)
        })?;
        let size = self.chunk_size();
        FieldError::check(
            positive(self.load_radius) && self.load_radius <= 64.0 * size,
            "load_radius",
            || {
                format!(
                    "must be positive and at most 64 chunks ({} m), got {}",
                    64.0 * size,
                    self.load_radius
                )
            },
        )?;
        FieldError::check(
            self.evict_radius.is_finite() && self.evict_radius >= self.load_radius && self.evict_radius <= 96.0 * size,
            "evict_radius",
            || {
                format!(
                    "must be at least the load radius ({}) and at most 96 chunks, got {}",
                    self.load_radius, self.evict_radius
                )
            },
        )?;
        FieldError::check(
            positive(self.near()) && self.near() <= self.load_radius,
            "near_radius",
            || format!("must be positive and at most the load radius, got {}", self.near()),
        )?;
        FieldError::check(self.threads <= 256, "threads", || {
            format!("must be at most 256 (0: one less than the cores), got {}", self.threads)
        })?;
        self.budget.validate().map_err(|e| e.within("budget"))?;
        self.terrain.validate().map_err(|e| e.within("terrain"))?;
        if let Some(b) = &self.terrain.basins {
            b.validate_in(self).map_err(|e| e.within("basins").within("terrain"))?;
        }
        FieldError::check(self.trees.len() <= MAX_SPECIES, "trees", || {
            format!("at most {MAX_SPECIES} species, got {}", self.trees.len())
        })?;
        for (k, t) in self.trees.iter().enumerate() {
            t.validate_in(self).map_err(|e| e.within(format!("trees[{k}]")))?;
        }
        self.grass.validate_in(self).map_err(|e| e.within("grass"))?;
        self.validate_ecology()?;
        self.draw.validate().map_err(|e| e.within("draw"))?;
        self.flight.validate().map_err(|e| e.within("flight"))
    }
}

impl WorldParams {
    /// The biome table with its species resolved, for `seed`.
    pub fn biomes(&self, seed: u64) -> Result<Biomes, FieldError> {
        let trees: Vec<&str> = self.trees.iter().map(|t| t.species.name.as_str()).collect();
        let grass: Vec<&str> = self.grass.species.iter().map(|g| g.name.as_str()).collect();
        Biomes::new(&self.ecology, &trees, &grass, seed).map_err(|e| e.within("ecology"))
    }

    /// The share of each tree species' instances a renderer's copies hold under `biomes`:
    /// `draw.trees_per_hectare` over the peak density of the species' layer, at most 1 (0
    /// for a species no biome lists).
    pub fn draw_shares(&self, biomes: &Biomes) -> Vec<f32> {
        let spacing: Vec<f32> = self.trees.iter().map(|t| t.placement.min_distance).collect();
        (0..self.trees.len())
            .map(|s| match biomes.layer_of(s).map(|l| biomes.layer_peak(l, &spacing).0) {
                None => 0.0,
                Some(peak) if peak <= 0.0 => 1.0,
                Some(peak) => (self.draw.trees_per_hectare / 1e4 / peak).min(1.0),
            })
            .collect()
    }

    /// The ecology's own ranges, its species against the world's, and its densities
    /// against the per-chunk limits.
    fn validate_ecology(&self) -> Result<(), FieldError> {
        let e = &self.ecology;
        e.validate().map_err(|e| e.within("ecology"))?;
        FieldError::check(
            self.chunk_cells.is_multiple_of(e.sample_cells),
            "ecology.sample_cells",
            || format!("must divide chunk_cells ({}), got {}", self.chunk_cells, e.sample_cells),
        )?;
        let biomes = self.biomes(0)?;
        for (k, t) in self.trees.iter().enumerate() {
            FieldError::check(biomes.layer_of(k).is_some(), &format!("trees[{k}]"), || {
                format!(
                    "no biome lists {:?}: name it in a biome's canopy or understory, e.g. \
                     `canopy: [(species: {:?}, per_hectare: 200.0)]`",
                    t.species.name, t.species.name
                )
            })?;
        }
        let spacing: Vec<f32> = self.trees.iter().map(|t| t.placement.min_distance).collect();
        let area = f64::from(self.chunk_size()).powi(2);
        for layer in Layer::ALL {
            let (most, cover) = biomes.layer_peak(layer, &spacing);
            FieldError::check(cover <= MAX_COVER, "ecology.biomes", || {
                format!(
                    "the {} of some biome asks for {:.0} stems per hectare, more than their min distances \
                     leave room for (their spacing discs would cover {:.0} % of the ground, at most {:.0} %)",
                    layer.name(),
                    most * 1e4,
                    cover * 100.0,
                    MAX_COVER * 100.0
                )
            })?;
            let thrown = f64::from(thrown_for(most, cover)) * area;
            FieldError::check(thrown <= MAX_CANDIDATES_PER_CHUNK, "ecology.biomes", || {
                format!(
                    "the {} of some biome needs {thrown:.0} candidates per chunk, at most {MAX_CANDIDATES_PER_CHUNK}",
                    layer.name()
                )
            })?;
        }
        let per_cell = biomes.peak_blades() * self.cell_size * self.cell_size;
        FieldError::check(per_cell <= MAX_BLADES_PER_CELL as f32, "ecology.biomes", || {
            format!(
                "some biome's ground asks for {per_cell} blades per cell ({} m²), at most {MAX_BLADES_PER_CELL}",
                self.cell_size * self.cell_size
            )
        })
    }
}

impl Validate for DrawParams {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(
            (0.0..=1e5).contains(&self.trees_per_hectare),
            "trees_per_hectare",
            || format!("must be within 0..=100000, got {}", self.trees_per_hectare),
        )?;
        FieldError::check((0.0..=1e3).contains(&self.blades_per_m2), "blades_per_m2", || {
            format!("must be within 0..=1000, got {}", self.blades_per_m2)
        })
    }
}

impl Validate for FlightParams {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.waypoints.len() <= 10_000, "waypoints", || {
            format!("at most 10000 waypoints, got {}", self.waypoints.len())
        })?;
        FieldError::check(self.waypoints.iter().all(|w| w.is_finite()), "waypoints", || {
            "every waypoint must be finite".into()
        })?;
        FieldError::check(positive(self.speed), "speed", || {
            format!("must be a positive number, got {}", self.speed)
        })?;
        FieldError::check((-89.0..=89.0).contains(&self.pitch_degrees), "pitch_degrees", || {
            format!("must be within -89..=89, got {}", self.pitch_degrees)
        })
    }
}

impl Validate for BudgetParams {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.installs >= 1, "installs", || "must be at least 1".into())?;
        FieldError::check(positive(self.millis), "millis", || {
            format!("must be a positive number, got {}", self.millis)
        })?;
        FieldError::check(self.upload_bytes >= 1, "upload_bytes", || "must be at least 1".into())
    }
}

impl Validate for WorldTerrain {
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check((1..=MAX_LAYER_SLOTS).contains(&self.max_layers), "max_layers", || {
            format!("must be within 1..={MAX_LAYER_SLOTS}, got {}", self.max_layers)
        })?;
        self.generator.validate().map_err(|e| e.within("generator"))?;
        if let Some(e) = &self.erosion {
            e.validate_in(self.max_layers).map_err(|e| e.within("erosion"))?;
        }
        Ok(())
    }
}

impl WorldBasins {
    /// Lattice nodes along a chunk's side, when the chunk is a whole number of them.
    pub fn nodes_per_chunk(&self, chunk_size: f32) -> Option<u32> {
        let n = chunk_size / self.node_spacing;
        (n >= 1.0 && n.fract() == 0.0 && n <= 1024.0).then_some(n as u32)
    }

    fn validate_in(&self, world: &WorldParams) -> Result<(), FieldError> {
        let size = world.chunk_size();
        FieldError::check(
            positive(self.node_spacing) && self.nodes_per_chunk(size).is_some(),
            "node_spacing",
            || {
                format!(
                    "must divide the chunk side ({size} m) into 1 to 1024 nodes, got {}",
                    self.node_spacing
                )
            },
        )?;
        let nodes = self.nodes_per_chunk(size).unwrap_or(1) as u64 * u64::from(self.domain_chunks);
        FieldError::check(
            (1..=64).contains(&self.domain_chunks) && nodes <= 1024,
            "domain_chunks",
            || {
                format!(
                    "must be in 1..=64 and give at most 1024 lattice nodes per domain side, got {} ({nodes} nodes)",
                    self.domain_chunks
                )
            },
        )?;
        self.solver.validate().map_err(|e| e.within("solver"))?;
        self.uplift.validate().map_err(|e| e.within("uplift"))?;
        self.validate_sea()?;
        let domain = self.domain_chunks as f32 * size;
        FieldError::check(
            self.coast.is_finite() && self.coast > 0.0 && self.coast <= domain / 4.0,
            "coast",
            || {
                format!(
                    "must be in (0, {}] m (a quarter of a domain), got {}",
                    domain / 4.0,
                    self.coast
                )
            },
        )?;
        FieldError::check(
            self.coast_noise.is_finite() && self.coast_noise >= 0.0 && self.coast_noise < self.coast,
            "coast_noise",
            || {
                format!(
                    "must be at least 0 and less than the coast ({}), got {}",
                    self.coast, self.coast_noise
                )
            },
        )?;
        FieldError::check(positive(self.river_area), "river_area", || {
            format!("must be a positive number of km², got {}", self.river_area)
        })?;
        for (field, (c, e)) in [("river_width", self.river_width), ("river_depth", self.river_depth)] {
            FieldError::check((0.0..=1e3).contains(&c) && (0.0..=1.0).contains(&e), field, || {
                format!("needs 0 <= c <= 1000 and 0 <= e <= 1, got ({c}, {e})")
            })?;
        }
        FieldError::check(
            self.banks.is_finite() && (0.0..=16.0).contains(&self.banks),
            "banks",
            || format!("must be in 0..=16 channel widths, got {}", self.banks),
        )
    }

    /// The sea's level and floor.
    fn validate_sea(&self) -> Result<(), FieldError> {
        let finite = |field: &'static str, v: f32| {
            FieldError::check(v.is_finite() && v.abs() <= 1e5, field, || {
                format!("must be a finite number of at most 1e5 in size, got {v}")
            })
        };
        finite("sea_level", self.sea_level)?;
        finite("sea_floor", self.sea_floor)?;
        FieldError::check(
            self.sea_floor >= 0.0 && self.sea_floor < self.sea_level,
            "sea_floor",
            || {
                format!(
                    "must be at least 0 and below the sea level {}, got {}",
                    self.sea_level, self.sea_floor
                )
            },
        )
    }
}

impl ChunkErosion {
    fn validate_in(&self, max_layers: u8) -> Result<(), FieldError> {
        FieldError::check(self.iterations <= MAX_CHUNK_EROSION_ITERATIONS, "iterations", || {
            format!("at most {MAX_CHUNK_EROSION_ITERATIONS}, got {}", self.iterations)
        })?;
        FieldError::check(
            !matches!(self.hydraulic.rain, Rain::Random { .. }),
            "hydraulic.rain",
            || "random drops depend on the region a chunk is eroded on; use Uniform or None".into(),
        )?;
        self.terrain(1.0, max_layers).validate()
    }
}

impl PlacementParams {
    fn validate_in(&self, world: &WorldParams, name: &str) -> Result<(), FieldError> {
        FieldError::check(self.density.is_none(), "density", || {
            format!(
                "densities come from biomes now: remove `density` here and list {name:?} in a biome of \
                 `world.ecology.biomes`, e.g. `canopy: [(species: {name:?}, per_hectare: {:.0})]` (stems that \
                 stand, not candidates thrown)",
                self.density.unwrap_or_default()
            )
        })?;
        let most = world.chunk_size().min(MAX_REACH_CELLS * world.cell_size);
        FieldError::check(
            positive(self.min_distance) && self.min_distance <= most,
            "min_distance",
            || {
                format!(
                    "must be positive and at most {most} m (a chunk side, and {MAX_REACH_CELLS} cells), got {}",
                    self.min_distance
                )
            },
        )?;
        self.rules.validate().map_err(|e| e.within("rules"))?;
        let (lo, hi) = self.scale;
        FieldError::check(positive(lo) && hi.is_finite() && lo <= hi, "scale", || {
            format!("need 0 < min <= max, got ({lo}, {hi})")
        })
    }
}

impl WorldTrees {
    fn validate_in(&self, world: &WorldParams) -> Result<(), FieldError> {
        let forest = crate::placement::forest::ForestParams {
            species: vec![self.species.clone()],
            ..Default::default()
        };
        forest.validate().map_err(|mut e| {
            // The forest names its one species `species[0]`; here it is `species`.
            e.path[0] = "species".into();
            e
        })?;
        (self.placement.validate_in(world, &self.species.name)).map_err(|e| e.within("placement"))
    }
}

impl WorldGrassSpecies {
    fn validate_in(&self, world: &WorldParams) -> Result<(), FieldError> {
        FieldError::check(self.placement.is_none(), "placement", || {
            let p = self.placement.clone().unwrap_or_default();
            format!(
                "grass is a field now, not a list of placed blades: write `rules` and `scale` here and its \
                 density in a biome's ground layer, e.g. `ground: [(grass: {:?}, per_m2: {:.1})]` (blades per m²)",
                self.name,
                p.density.unwrap_or_default() / 1e4
            )
        })?;
        FieldError::check(!self.name.is_empty() && self.name.len() <= 64, "name", || {
            "must be 1 to 64 characters".into()
        })?;
        FieldError::check(
            world.grass.species.iter().filter(|g| g.name == self.name).count() == 1,
            "name",
            || format!("{:?} names two grass species", self.name),
        )?;
        self.rules.validate().map_err(|e| e.within("rules"))?;
        let (lo, hi) = self.scale;
        FieldError::check(
            positive(lo) && hi.is_finite() && lo <= hi && hi <= 100.0,
            "scale",
            || format!("need 0 < min <= max <= 100, got ({lo}, {hi})"),
        )?;
        crate::grass::validate_blade_iterations(self.iterations)
    }
}

impl WorldGrass {
    fn validate_in(&self, world: &WorldParams) -> Result<(), FieldError> {
        FieldError::check(self.species.len() <= MAX_SPECIES, "species", || {
            format!("at most {MAX_SPECIES} species, got {}", self.species.len())
        })?;
        for (k, sp) in self.species.iter().enumerate() {
            sp.validate_in(world).map_err(|e| e.within(format!("species[{k}]")))?;
        }
        let b = &self.bake;
        b.validate().map_err(|e| e.within("bake"))?;
        // Tighter than a grass scene's bake: every species of a world is baked before the
        // first chunk, so its size caps start-up time and memory.
        FieldError::check(b.cells <= 256 && b.frames <= 1024 && b.instances <= 64, "bake", || {
            format!(
                "a world bakes at most 256 cells, 1024 frames and 64 instances, got {}, {} and {}",
                b.cells, b.frames, b.instances
            )
        })?;
        FieldError::check(b.max_warmup_seconds <= 60.0, "bake.max_warmup_seconds", || {
            format!("must be at most 60, got {}", b.max_warmup_seconds)
        })?;
        self.live.validate().map_err(|e| e.within("live"))?;
        FieldError::check(self.walkers.len() <= MAX_WALKERS, "walkers", || {
            format!("at most {MAX_WALKERS} walkers, got {}", self.walkers.len())
        })?;
        for (k, w) in self.walkers.iter().enumerate() {
            w.validate().map_err(|e| e.within(format!("walkers[{k}]")))?;
        }
        crate::grass::validate_motion(&self.wind, &self.dynamics, self.wind_power, self.wave_speed)
    }
}
