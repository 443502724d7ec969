//! Layered terrain (after Münch 2011): chunks of layered rock
//! columns, generators of the primordial landscape, and the processes that
//! age it — flowing water, standing water, thermal erosion and the rock cycle.
//!
//! ```
//! use sylva_runtime::{App, AppConfig};
//! use sylva_systems::terrain::{self, TerrainParams, TerrainReport};
//!
//! let mut app = App::new(AppConfig::default())?;
//! let params = TerrainParams { size: 32, ..TerrainParams::default() };
//! terrain::install(&mut app, &params)?;
//! app.advance(4);
//! let report = TerrainReport::of(&app).expect("a chunk was spawned");
//! assert_eq!((report.chunks, report.iterations), (1, 4));
//! // The books balance: the water held is what was there and came in, less what left.
//! assert!(report.water_balance_error.is_some_and(|e| e.abs() < 1e-3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`TerrainChunk`]: an ECS component holding a chunk's columns as
//!   structure-of-arrays planes (its docs give the memory per cell and the
//!   layer rules); [`Column`] reads one column.
//! - [`GeneratorParams`]: midpoint displacement, value and gradient noise,
//!   fBm, ridged multifractal, successive random additions, circles, and the
//!   multi-layer stacking; all sampled in world cells, so chunks agree at
//!   their borders.
//! - [`install`] spawns the chunks and adds [`WATER_SYSTEM`],
//!   [`THERMAL_SYSTEM`] and [`AGING_SYSTEM`], run on the thesis's schedule
//!   ([`ScheduleParams`]; aging runs inside the thermal or water pass
//!   before it where one is due); [`build`] adds the extraction too.
//! - [`Eroder`] runs the same iterations on a chunk outside an app.
//! - [`report`], [`erosion_score`] and [`encode_png`] measure and export.
//! - [`basin`]: the macro scale, basin-wide uplift against stream-power
//!   erosion (FastScape), its river network, and drainage measures of any
//!   heightfield; a world's basin domains and the [`Basin`] source use it.
//!
//! Each chunk of a terrain scene erodes as its own domain with the configured
//! [`Boundary`]; a world's chunks erode with an apron instead, so that water
//! runs across their borders as in one piece (`world::WorldGen::region`).

mod advect;
mod aging;
pub mod basin;
mod columns;
mod exchange;
mod export;
mod extraction;
mod generators;
mod grid;
mod hydraulic;
mod materials;
mod params;
mod pipes;
mod score;
mod stack_rows;
mod standing_water;
mod stats;
mod thermal;
mod top_rows;
mod transport;

use sylva_runtime::{Access, App, FieldError, System, Validate};

use crate::registers::Registers;

pub use columns::{ChunkDataError, Column, MAX_CHUNK_SIZE, MAX_LAYER_SLOTS, MIN_THICKNESS, TerrainChunk};
pub(crate) use export::encode_image;
pub use export::{ExportError, Heightfield, PngKind, encode_png, material_colour, thesis_grey, write_png};
pub use extraction::{BARE, EXTRACT_SYSTEM, install_extraction};
pub(crate) use generators::catmull_rom;
pub use generators::{
    Basin, Circles, Fbm, GeneratorParams, LayerSpec, MAX_BASIN_NODES, Midpoint, MidpointVariant, RandomAdditions,
    Ridged, Source, Thickness, ValueNoise,
};
pub use materials::{MATERIAL_COUNT, Material, MaterialProps, MaterialTable};
pub use params::{
    AgingParams, Boundary, HydraulicParams, MAX_TOTAL_CELLS, Rain, ScheduleParams, Spring, Standing,
    StandingWaterParams, TerrainParams, ThermalParams, Transport,
};
pub use score::{ScoreMode, erosion_score};
pub use stats::{CHANNEL_CELLS, KernelRates, MaterialBalance, TerrainBalance, TerrainReport, WaterBalance, report};

/// Name of the fixed-step system of flowing and standing water.
pub const WATER_SYSTEM: &str = "terrain.water";

/// Name of the fixed-step system of thermal erosion.
pub const THERMAL_SYSTEM: &str = "terrain.thermal";

/// Name of the fixed-step system of rock-cycle aging.
pub const AGING_SYSTEM: &str = "terrain.aging";

/// Whether a process with interval `every` runs in 1-based iteration `n`.
fn due(n: u64, every: u32) -> bool {
    every > 0 && n.is_multiple_of(u64::from(every))
}

/// The pass that ages an iteration's layers, where aging is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AgingIn {
    /// Its own pass: neither water nor thermal erosion is due.
    Own,
    /// The water pass, each band of rows after their exchange.
    Water,
    /// The thermal pass, each row after its move.
    Thermal,
}

/// Where iteration `n` ages, if it does: inside the last pass before aging
/// that is due (thermal erosion, else water), each row right after that pass
/// changed it, while the row's stacks are still in the caches. The bits are
/// those of aging after the whole pass: neither pass reads a row's layers
/// after changing them. On thesis landscape 1 at 512² from fresh, aging in
/// the water pass made the iterations that age 9–12 % faster.
fn aging_in(n: u64, s: &ScheduleParams) -> Option<AgingIn> {
    if !due(n, s.aging_every) {
        None
    } else if due(n, s.thermal_every) {
        Some(AgingIn::Thermal)
    } else if due(n, s.water_every) {
        Some(AgingIn::Water)
    } else {
        Some(AgingIn::Own)
    }
}

/// The aging passes of iterations `from + 1..=to` that run on their own
/// ([`AgingIn::Own`]).
fn lone_aging_passes(s: &ScheduleParams, from: u64, to: u64) -> u64 {
    // Iterations due for every one of `everies`: the multiples of their least
    // common multiple (none where one is never due).
    let multiples = |everies: &[u32]| {
        let mut m = 1u128;
        for &e in everies {
            if e == 0 {
                return 0;
            }
            let e = u128::from(e);
            m = m / gcd(m, e) * e;
        }
        let m = u64::try_from(m).unwrap_or(u64::MAX);
        to / m - from / m
    };
    // Inclusion and exclusion, added before subtracting: no partial sum
    // goes below zero.
    let (a, w, t) = (s.aging_every, s.water_every, s.thermal_every);
    multiples(&[a]) + multiples(&[a, w, t]) - multiples(&[a, t]) - multiples(&[a, w])
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Builds a scene's terrain (scene section `terrain`) into `app`: [`install`], and
/// [`install_extraction`] for cells of the terrain's `cell_length`.
pub fn build(app: &mut App, params: &TerrainParams) -> Result<(), FieldError> {
    install(app, params)?;
    install_extraction(app, params.cell_length);
    Ok(())
}

/// Spawns the terrain chunks of `params` (generated from the app's seed) and
/// adds the erosion systems, the [`TerrainParams`] and [`TerrainBalance`]
/// resources, and the snapshot registrations (`terrain.chunk`,
/// `terrain.balance`).
///
/// Parameters that fail [`TerrainParams::validate`] are its error, and nothing is
/// installed. Install the terrain once per app: the snapshot registry refuses a
/// second registration (panics).
pub fn install(app: &mut App, params: &TerrainParams) -> Result<(), FieldError> {
    params.validate()?;
    spawn_chunks(app, params);
    let (water, rock, suspended) = stats::totals(&app.world.entities);
    let initial_score = Heightfield::from_world(&app.world.entities)
        .and_then(|h| erosion_score(&h.ground, h.width, ScoreMode::Thesis))
        .unwrap_or(0.0);
    app.world.resources.insert(params.clone());
    app.world.resources.insert(TerrainBalance {
        initial_water: water,
        initial_material: rock + suspended,
        initial_score,
        ..TerrainBalance::default()
    });
    app.snapshot_registry_mut()
        .component::<TerrainChunk>("terrain.chunk")
        .resource::<TerrainBalance>("terrain.balance");
    app.add_system(water_system());
    app.add_system(thermal_system());
    app.add_system(aging_system());
    Ok(())
}

/// Spawns the chunks of `params`, generated from the app's seed.
fn spawn_chunks(app: &mut App, params: &TerrainParams) {
    let seed = app.time().seed;
    for cz in 0..params.chunks[1] {
        for cx in 0..params.chunks[0] {
            let coord = [cx as i32, cz as i32];
            if let Some(chunk) = app.in_pool(|| params.generator.generate(seed, coord, params.size, params.max_layers))
            {
                app.world.entities.spawn((chunk,));
            }
        }
    }
}

/// What every erosion system touches.
fn access() -> Access {
    Access::new()
        .write::<TerrainChunk>()
        .read_res::<TerrainParams>()
        .write_res::<TerrainBalance>()
}

/// [`WATER_SYSTEM`]: a water iteration on every chunk, where one is due.
fn water_system() -> System {
    let mut scratch = hydraulic::Scratch::default();
    System::new(WATER_SYSTEM, access(), move |ctx| {
        let p = ctx.res::<TerrainParams>();
        let mut books = ctx.res_mut::<TerrainBalance>();
        let t = ctx.time();
        let (n, s) = (t.tick + 1, &p.schedule);
        books.iterations = n;
        if !due(n, s.water_every) {
            return;
        }
        let ager = (aging_in(n, s) == Some(AgingIn::Water))
            .then(|| aging::Ager::new(&p.aging, s.aging_every, Registers::best()));
        let tick = hydraulic::Tick {
            seed: t.seed,
            iteration: t.tick,
        };
        for chunk in ctx.query::<&mut TerrainChunk>().iter() {
            hydraulic::step(
                chunk,
                &p,
                tick,
                &mut scratch,
                &mut books,
                Registers::best(),
                ager.as_ref(),
            );
        }
    })
}

/// [`THERMAL_SYSTEM`]: a thermal pass on every chunk, where one is due.
fn thermal_system() -> System {
    let mut scratch = thermal::ThermalScratch::default();
    System::new(THERMAL_SYSTEM, access(), move |ctx| {
        let p = ctx.res::<TerrainParams>();
        let (n, s) = (ctx.time().tick + 1, &p.schedule);
        if !due(n, s.thermal_every) {
            return;
        }
        let mut books = ctx.res_mut::<TerrainBalance>();
        let ager = (aging_in(n, s) == Some(AgingIn::Thermal))
            .then(|| aging::Ager::new(&p.aging, s.aging_every, Registers::best()));
        for chunk in ctx.query::<&mut TerrainChunk>().iter() {
            books.compacted += thermal::step(chunk, &p, &mut scratch, Registers::best(), ager.as_ref());
        }
    })
}

/// [`AGING_SYSTEM`]: an aging pass of its own on every chunk, where one is due.
fn aging_system() -> System {
    System::new(AGING_SYSTEM, access(), |ctx| {
        let p = ctx.res::<TerrainParams>();
        if aging_in(ctx.time().tick + 1, &p.schedule) != Some(AgingIn::Own) {
            return;
        }
        let mut books = ctx.res_mut::<TerrainBalance>();
        for chunk in ctx.query::<&mut TerrainChunk>().iter() {
            books.compacted += aging::step(chunk, &p.aging, p.schedule.aging_every, Registers::best());
        }
    })
}

/// Runs terrain iterations on chunks outside an app (tools, tests, offline
/// baking), keeping the scratch planes between calls.
#[derive(Default)]
pub struct Eroder {
    water: hydraulic::Scratch,
    thermal: thermal::ThermalScratch,
    /// The vector build the kernels run (the widest this CPU has; results are the same with any).
    registers: Registers,
}

impl Eroder {
    /// Runs 1-based iteration `iteration` on `chunk`: water, then thermal
    /// erosion and aging when the schedule says they are due, booking into
    /// `books`. Aging runs inside the pass before it where one is due, with
    /// the same results.
    pub fn step(
        &mut self,
        chunk: &mut TerrainChunk,
        params: &TerrainParams,
        seed: u64,
        iteration: u64,
        books: &mut TerrainBalance,
    ) {
        let s = &params.schedule;
        books.iterations = iteration;
        let ages_in = aging_in(iteration, s);
        let ager =
            |pass| (ages_in == Some(pass)).then(|| aging::Ager::new(&params.aging, s.aging_every, self.registers));
        if due(iteration, s.water_every) {
            let tick = hydraulic::Tick {
                seed,
                iteration: iteration.saturating_sub(1),
            };
            hydraulic::step(
                chunk,
                params,
                tick,
                &mut self.water,
                books,
                self.registers,
                ager(AgingIn::Water).as_ref(),
            );
        }
        if due(iteration, s.thermal_every) {
            let ager = ager(AgingIn::Thermal);
            books.compacted += thermal::step(chunk, params, &mut self.thermal, self.registers, ager.as_ref());
        }
        if ages_in == Some(AgingIn::Own) {
            books.compacted += aging::step(chunk, &params.aging, s.aging_every, self.registers);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Default parameters on `size`² cells of `max_layers` slots, with water,
    /// aging and thermal erosion every so many iterations.
    fn params(size: u32, max_layers: u8, [water_every, aging_every, thermal_every]: [u32; 3]) -> TerrainParams {
        TerrainParams {
            size,
            max_layers,
            schedule: ScheduleParams {
                water_every,
                aging_every,
                thermal_every,
            },
            ..TerrainParams::default()
        }
    }

    /// The ground plane every kernel reads stays bit-identical to the layer
    /// sums through water, thermal erosion and aging (with compaction).
    #[test]
    fn ground_plane_tracks_the_layers() {
        let mut p = params(32, 4, [1, 1, 3]);
        p.aging.compaction_halving = true;
        p.hydraulic.capacity = 2.0;
        p.hydraulic.rain = Rain::Random { drops: 40, amount: 2.0 };
        let mut chunk = p.generator.generate(3, [0, 0], p.size, p.max_layers).unwrap();
        let (mut eroder, mut books) = (Eroder::default(), TerrainBalance::default());
        let mut sums = Vec::new();
        for it in 1..=60 {
            eroder.step(&mut chunk, &p, 3, it, &mut books);
            chunk.ground_heights(&mut sums);
            assert!(
                sums.iter().zip(&chunk.ground).all(|(a, b)| a.to_bits() == b.to_bits()),
                "iteration {it}"
            );
        }
        assert!(books.compacted > 0.0);
    }

    /// Aging inside the pass before it leaves the bits that aging after
    /// the whole pass leaves: the chunk (every plane and dead slot) and the
    /// books, on every transport, over blocks of both full and short
    /// length, with compaction so that the books' loss is summed. The
    /// schedule ages on its own, inside water and inside thermal erosion.
    #[test]
    fn aging_inside_a_pass_changes_no_bits() {
        for transport in [Transport::SemiLagrangian, Transport::ThesisFlux, Transport::Flux] {
            let mut p = params(96, 4, [2, 1, 3]);
            p.hydraulic.transport = transport;
            p.hydraulic.capacity = 2.0;
            p.hydraulic.rain = Rain::Random {
                drops: 200,
                amount: 2.0,
            };
            p.aging.compaction_halving = true;
            p.aging.thresholds = [2, 2, 4, 4, 8, 8];
            let start = p.generator.generate(5, [0, 0], p.size, p.max_layers).unwrap();
            let registers = Registers::best();
            let (mut inside, mut apart) = (start.clone(), start);
            let (mut eroder, mut inside_books) = (Eroder::default(), TerrainBalance::default());
            let (mut water, mut thermal) = (hydraulic::Scratch::default(), thermal::ThermalScratch::default());
            let mut apart_books = TerrainBalance::default();
            let mut hosts = Vec::new();
            for it in 1..=40 {
                eroder.step(&mut inside, &p, 5, it, &mut inside_books);
                let s = &p.schedule;
                hosts.push(aging_in(it, s));
                if due(it, s.water_every) {
                    let tick = hydraulic::Tick {
                        seed: 5,
                        iteration: it - 1,
                    };
                    hydraulic::step(&mut apart, &p, tick, &mut water, &mut apart_books, registers, None);
                }
                if due(it, s.thermal_every) {
                    thermal::step(&mut apart, &p, &mut thermal, registers, None);
                }
                if due(it, s.aging_every) {
                    apart_books.compacted += aging::step(&mut apart, &p.aging, s.aging_every, registers);
                }
            }
            for host in [AgingIn::Own, AgingIn::Water, AgingIn::Thermal] {
                assert!(hosts.contains(&Some(host)), "{host:?}");
            }
            assert!(inside == apart, "{transport:?}: chunks differ");
            assert!(apart_books.compacted > 0.0, "{transport:?}: nothing compacted");
            assert_eq!(
                inside_books.compacted.to_bits(),
                apart_books.compacted.to_bits(),
                "{transport:?}"
            );
            assert_eq!(
                inside_books.water_evaporated.to_bits(),
                apart_books.water_evaporated.to_bits()
            );
        }
    }

    /// The aging passes that run on their own, counted in closed form, are
    /// those a walk over the iterations finds.
    #[test]
    fn lone_aging_passes_are_counted() {
        for (water_every, aging_every, thermal_every) in
            [(1, 2, 20), (1, 2, 0), (2, 3, 4), (0, 2, 3), (3, 2, 0), (1, 0, 5)]
        {
            let s = ScheduleParams {
                water_every,
                aging_every,
                thermal_every,
            };
            for (from, to) in [(0, 200), (37, 411), (5, 5)] {
                let walked = (from + 1..=to)
                    .filter(|&n| aging_in(n, &s) == Some(AgingIn::Own))
                    .count() as u64;
                assert_eq!(lone_aging_passes(&s, from, to), walked, "{s:?} {from}..={to}");
            }
        }
    }

    /// Every vector build this CPU runs erodes bit for bit as the baseline
    /// build does, with every transport (the CI machine runs at least the
    /// AVX2 one).
    #[test]
    fn vector_builds_agree() {
        for transport in [Transport::SemiLagrangian, Transport::ThesisFlux, Transport::Flux] {
            let mut p = params(48, 3, [1, 2, 2]);
            p.hydraulic.transport = transport;
            let run = |registers: Registers| {
                let mut chunk = p.generator.generate(5, [0, 0], p.size, p.max_layers).unwrap();
                let mut eroder = Eroder {
                    registers,
                    ..Eroder::default()
                };
                let mut books = TerrainBalance::default();
                for it in 1..=80 {
                    eroder.step(&mut chunk, &p, 5, it, &mut books);
                }
                chunk
            };
            let portable = run(Registers::Portable);
            assert_ne!(portable, p.generator.generate(5, [0, 0], p.size, p.max_layers).unwrap());
            for build in Registers::all_available().into_iter().skip(1) {
                assert!(run(build) == portable, "{transport:?}, {build:?}");
            }
        }
    }
}
