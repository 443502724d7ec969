//! Grass in the world: [`install`] bakes each species (or reads its bake from
//! [`GrassSettings::bake_file`]), scatters its instances on
//! the ground, spawns its blade structure and the walkers as entities, and adds
//! the systems.
//!
//! - Each species' structure becomes entities: one [`BladeParticle`] per particle
//!   (the root also [`BladeRoot`]: fixed and massless) and one [`BladeLink`] per
//!   spring-damper link. They are not `particles` entities: the particle solver
//!   would pull them with plain springs under gravity, and a blade stands only by
//!   its angular stiffness, which lives in the grass kernel. They describe the
//!   structure every instance of the species shares.
//! - The baked motion and the instances of each species are one [`GrassSpecies`]
//!   in the [`GrassLayers`] resource, instances placed by [`placement::scatter`].
//! - Walkers are entities with a [`WalkPath`] and their current [`Pusher`].
//! - [`WALK_SYSTEM`] (fixed step) moves each pusher along its path; [`LIVE_SYSTEM`]
//!   (fixed step) steps each species' [`LiveGrass`] on its own clock (live steps of
//!   [`LiveSettings::step_seconds`], caught up with simulated time) and keeps the set
//!   of live blades; [`EXTRACT_SYSTEM`] (frame) fills the [`GrassBatch`]: instances are
//!   dirty on the first fill only, live blades get a slot and displacements every
//!   frame, and the playback time follows simulated time.
//! - Snapshots keep the structure and walker entities and, of [`GrassLayers`], only
//!   the live state ([`GrassState`]); bakes and instances come from the scene.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use glam::Vec3;
use hecs::Entity;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sylva_runtime::SpatialIndex;
use sylva_runtime::extract::{GrassBatch, GrassLayer, GrassShape};
use sylva_runtime::rng::{StreamKey, hash_words, stream};
use sylva_runtime::snapshot::StateMismatch;
use sylva_runtime::{Access, App, FieldError, StatePart, System, Validate};

use super::bake::{BakeSettings, BakedGrass, GrassBakeError, bake, bake_inputs, species_file, validate_inputs};
use super::blade::{BladeShape, Segment};
use super::dynamics::Dynamics;
use super::extraction::motion;
use super::interaction::{LiveGrass, LiveSettings, LiveState, Pusher, live_kernel, live_steps_due};
use super::walkers::{WalkPath, Walker};
use super::wind::WindField;
use crate::placement::{self, Ground, ScatterParams};

/// Name of the fixed-step system that moves the pushers.
pub const WALK_SYSTEM: &str = "grass.walk";

/// Name of the fixed-step system that simulates pushed blades live.
pub const LIVE_SYSTEM: &str = "grass.live";

/// Name of the frame system that fills the [`GrassBatch`].
pub const EXTRACT_SYSTEM: &str = "grass.extract";

/// One kind of grass to plant.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeciesSettings {
    /// The blade structure.
    pub shape: BladeShape,
    /// Where instances go (count, spacing, area, ground rules).
    pub scatter: ScatterParams,
    /// Range of the uniform random scale per instance.
    pub scale: (f32, f32),
    /// Linear RGBA colour of every instance.
    pub colour: [u8; 4],
}

/// Everything [`install`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GrassSettings {
    /// The species, one layer each.
    pub species: Vec<SpeciesSettings>,
    /// Bake settings shared by every species (each gets its own seed).
    pub bake: BakeSettings,
    /// The winds of the bake and of live blades.
    pub wind: WindField,
    /// Simulation constants.
    pub dynamics: Dynamics,
    /// Displacement multiplier of playback (the thesis's Wind Power).
    pub wind_power: f32,
    /// Time multiplier of playback (the thesis's Wave Speed).
    pub wave_speed: f32,
    /// Switching blades to live simulation and back.
    pub live: LiveSettings,
    /// Spheres walking through the grass.
    pub walkers: Vec<Walker>,
    /// Bakes to read instead of baking: species 0's from this file, species k's from
    /// [`species_file`]`(path, k)` (as `sylva grass --bake` writes them). Each must have
    /// been baked from its species' inputs ([`bake_inputs`]); any other is refused.
    pub bake_file: Option<PathBuf>,
}

/// A particle of a species' blade structure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BladeParticle {
    /// The species (layer index).
    pub species: u32,
    /// Index in the species' [`BladeShape`].
    pub index: u32,
    /// Rest position relative to the root, metres, Y up.
    pub rest: Vec3,
    /// The thesis's five parameters (unused for the root).
    pub segment: Segment,
}

/// Marks a structure's fixed, massless root particle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BladeRoot;

/// A spring-damper link from a particle to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BladeLink {
    /// The parent particle's entity.
    pub parent: Entity,
    /// The child particle's entity.
    pub child: Entity,
    /// Rest length, metres.
    pub rest_length: f32,
}

/// One species in the world: its bake, its instances and their live simulation.
pub struct GrassSpecies {
    /// The baked motion.
    pub baked: BakedGrass,
    /// The shape as drawn.
    pub shape: GrassShape,
    /// Root per instance, world metres.
    pub roots: Vec<Vec3>,
    /// Yaw per instance, radians.
    pub yaw: Vec<f32>,
    /// Scale per instance.
    pub scale: Vec<f32>,
    /// Colour of every instance.
    pub colour: [u8; 4],
    /// Instances switched to live simulation by walkers.
    pub live: LiveGrass,
    /// Roots by position, to find the blades a pusher reaches.
    index: SpatialIndex<u32>,
    /// Blades a pusher reached and the seconds since it left; mirrors `live`'s own set,
    /// which it does not expose.
    reached: BTreeMap<u32, f32>,
}

/// Every species, in layer order (a resource).
#[derive(Default)]
pub struct GrassLayers {
    /// The species.
    pub species: Vec<GrassSpecies>,
    /// Displacement multiplier of playback (the thesis's Wind Power).
    pub wind_power: f32,
    /// Time multiplier of playback.
    pub wave_speed: f32,
    live: LiveSettings,
    wind: WindField,
}

impl GrassLayers {
    /// Blades simulated live right now, over all species.
    pub fn live_blades(&self) -> usize {
        self.species.iter().map(|s| s.live.live_blades()).sum()
    }
}

/// What a snapshot keeps of the grass: per species, the live blades and the blades
/// pushers reached. Bakes and instances are rebuilt from the scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrassState {
    species: Vec<(LiveState, BTreeMap<u32, f32>)>,
}

impl StatePart for GrassLayers {
    type State = GrassState;

    fn save_state(&self) -> GrassState {
        GrassState {
            species: self
                .species
                .iter()
                .map(|sp| (sp.live.state(), sp.reached.clone()))
                .collect(),
        }
    }

    fn check_state(&self, state: &GrassState) -> Result<(), StateMismatch> {
        if state.species.len() != self.species.len() {
            return Err(StateMismatch::new(format!(
                "{} grass species saved, the scene has {}",
                state.species.len(),
                self.species.len()
            )));
        }
        for (k, (sp, (live, reached))) in self.species.iter().zip(&state.species).enumerate() {
            let species = || format!("species {k}");
            sp.live.check_state(live).map_err(|e| e.within(species()))?;
            if let Some(blade) = reached.keys().find(|b| **b as usize >= sp.roots.len()) {
                let why = format!("reached blade {blade} is not among {}", sp.roots.len());
                return Err(StateMismatch::new(why).within(species()));
            }
        }
        Ok(())
    }

    fn restore_state(&mut self, state: GrassState) {
        for (sp, (live, reached)) in self.species.iter_mut().zip(state.species) {
            sp.live.restore(live);
            sp.reached = reached;
        }
    }
}

/// What [`install`] built and how long the bakes took (a resource).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GrassStats {
    /// Blade instances over all species.
    pub blades: usize,
    /// Particles of all instances, roots included.
    pub particles: usize,
    /// Links of all instances.
    pub springs: usize,
    /// Frames baked, over all species.
    pub baked_frames: u64,
    /// Species whose bake was read from [`GrassSettings::bake_file`] rather than baked.
    pub loaded_bakes: usize,
    /// Wall time of all bakes, ms (reading a bake from a file not included).
    pub bake_ms: f64,
    /// Blade steps the bakes ran (warm-up and recording, every blade of the field).
    pub bake_blade_steps: u64,
    /// Bytes of baked textures over all species.
    pub texture_bytes: usize,
}

/// Why grass could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum GrassError {
    /// A species' bake failed.
    #[error("grass species {species}: {error}")]
    Bake {
        /// Index of the species.
        species: usize,
        /// The bake's error.
        error: GrassBakeError,
    },
    /// A species' scatter parameters are invalid.
    #[error("grass species {species}: scatter.{}: {}", .error.dotted(), .error.message)]
    Scatter {
        /// Index of the species.
        species: usize,
        /// The offending field, below `scatter`.
        error: FieldError,
    },
    /// The live settings are out of range.
    #[error("grass live.{}: {}", .0.dotted(), .0.message)]
    Live(FieldError),
    /// A species' instance scale range gives a scale that is not positive and finite.
    #[error("grass species {species}: scale: {message}")]
    Scale {
        /// Index of the species.
        species: usize,
        /// What is wrong.
        message: &'static str,
    },
}

/// Installs grass (see the module docs): bakes every species on the app's pool,
/// plants it on `ground`, spawns structures and walkers, inserts [`GrassLayers`],
/// [`GrassStats`] and an empty [`GrassBatch`], and adds [`WALK_SYSTEM`], [`LIVE_SYSTEM`]
/// and [`EXTRACT_SYSTEM`].
pub fn install(app: &mut App, settings: &GrassSettings, ground: &impl Ground) -> Result<(), GrassError> {
    settings.live.validate().map_err(GrassError::Live)?;
    let seed = app.time().seed;
    let mut stats = GrassStats::default();
    let mut species = Vec::with_capacity(settings.species.len());
    for (k, sp) in settings.species.iter().enumerate() {
        let baked = species_bake(app, settings, k, &mut stats)?;
        let roots = app
            .in_pool(|| placement::scatter(&sp.scatter, ground, hash_words(&[seed, k as u64, 0x67726173])))
            .map_err(|error| GrassError::Scatter { species: k, error })?;
        let (yaw, scale) = instances(seed, k, sp, roots.len());
        stats.blades += roots.len();
        stats.particles += roots.len() * sp.shape.len();
        stats.springs += roots.len() * sp.shape.links();
        spawn_structure(app, k as u32, &sp.shape);
        let kernel = live_kernel(&sp.shape, &settings.dynamics, &settings.live)
            .map_err(|e| GrassError::Live(FieldError::new("step_seconds", format!("species {k}'s {}", e.message))))?;
        species.push(GrassSpecies {
            shape: GrassShape {
                parent: sp.shape.parent.clone(),
                rest: sp.shape.rest.clone(),
                width: sp.shape.segment.iter().map(|s| s.width).collect(),
            },
            index: SpatialIndex::build(roots.iter().enumerate().map(|(i, r)| (*r, i as u32))),
            live: LiveGrass::new(kernel, roots.clone(), settings.live)
                .with_placement(yaw.clone(), scale.clone())
                .map_err(|message| GrassError::Scale { species: k, message })?,
            reached: BTreeMap::new(),
            baked,
            roots,
            yaw,
            scale,
            colour: sp.colour,
        });
    }
    for walker in &settings.walkers {
        let path = walker.resolve(ground);
        let pusher = path.pusher(0.0);
        app.world.entities.spawn((path, pusher));
    }
    app.world.resources.insert(GrassLayers {
        species,
        wind_power: settings.wind_power,
        wave_speed: settings.wave_speed,
        live: settings.live,
        wind: settings.wind.clone(),
    });
    app.world.resources.insert(stats);
    app.world.resources.insert(GrassBatch::default());
    app.snapshot_registry_mut()
        .component::<BladeParticle>("grass.particle")
        .component::<BladeRoot>("grass.root")
        .component::<BladeLink>("grass.link")
        .component::<WalkPath>("grass.walk_path")
        .component::<Pusher>("grass.pusher")
        .resource_state::<GrassLayers>("grass.live");
    add_systems(app);
    Ok(())
}

/// Species `k`'s bake: loaded from the settings' bake file, or baked on the app's pool;
/// counted in `stats`.
fn species_bake(
    app: &App,
    settings: &GrassSettings,
    k: usize,
    stats: &mut GrassStats,
) -> Result<BakedGrass, GrassError> {
    let (sp, seed) = (&settings.species[k], app.time().seed);
    let bake_settings = BakeSettings {
        seed: hash_words(&[seed, k as u64, settings.bake.seed]),
        ..settings.bake
    };
    let started = Instant::now();
    let baked = match &settings.bake_file {
        Some(path) => validate_inputs(&sp.shape, &settings.dynamics, &settings.wind, &bake_settings).and_then(|()| {
            let inputs = bake_inputs(&sp.shape, &settings.dynamics, &settings.wind, &bake_settings);
            BakedGrass::load_for(&species_file(path, k), inputs)
        }),
        None => app
            .in_pool(|| bake(&sp.shape, &settings.dynamics, &settings.wind, &bake_settings))
            .map(|(baked, _ms)| baked),
    }
    .map_err(|error| GrassError::Bake { species: k, error })?;
    if settings.bake_file.is_some() {
        stats.loaded_bakes += 1;
    } else {
        stats.bake_ms += started.elapsed().as_secs_f64() * 1e3;
        let field_blades = u64::from(bake_settings.cells).pow(2) * u64::from(bake_settings.instances);
        stats.bake_blade_steps += field_blades
            * (baked.warmup_steps + u64::from(bake_settings.frames) * u64::from(bake_settings.record_every));
    }
    stats.baked_frames += u64::from(baked.frames);
    stats.texture_bytes += baked.texture_bytes();
    Ok(baked)
}

/// Each of species `k`'s `count` blades' yaw and scale.
fn instances(seed: u64, k: usize, sp: &SpeciesSettings, count: usize) -> (Vec<f32>, Vec<f32>) {
    let (mut yaw, mut scale) = (Vec::with_capacity(count), Vec::with_capacity(count));
    let mut rng = stream(seed, StreamKey::Index(k as u64), "grass.instances");
    for _ in 0..count {
        yaw.push(rng.random::<f32>() * std::f32::consts::TAU);
        scale.push(sp.scale.0 + (sp.scale.1 - sp.scale.0) * rng.random::<f32>());
    }
    (yaw, scale)
}

/// The structure of species `species` as particle and link entities.
fn spawn_structure(app: &mut App, species: u32, shape: &BladeShape) {
    let entities: Vec<Entity> = (0..shape.len())
        .map(|i| {
            let particle = BladeParticle {
                species,
                index: i as u32,
                rest: shape.rest[i],
                segment: shape.segment[i],
            };
            if i == 0 {
                app.world.entities.spawn((particle, BladeRoot))
            } else {
                app.world.entities.spawn((particle,))
            }
        })
        .collect();
    for i in 1..shape.len() {
        let parent = shape.parent[i] as usize;
        app.world.entities.spawn((BladeLink {
            parent: entities[parent],
            child: entities[i],
            rest_length: shape.rest[i].distance(shape.rest[parent]),
        },));
    }
}

fn add_systems(app: &mut App) {
    app.add_system(System::new(
        WALK_SYSTEM,
        Access::new().read::<WalkPath>().write::<Pusher>(),
        |ctx| {
            // A pusher stands where its walker is at the end of this step.
            let t = ctx.time();
            let at = t.elapsed + f64::from(t.dt);
            for (path, pusher) in ctx.query::<(&WalkPath, &mut Pusher)>().iter() {
                *pusher = path.pusher(at);
            }
        },
    ));
    let mut pushers = Vec::new();
    app.add_system(System::new(
        LIVE_SYSTEM,
        Access::new().read::<Pusher>().write_res::<GrassLayers>(),
        move |ctx| {
            pushers.clear();
            pushers.extend(ctx.query::<&Pusher>().iter().copied());
            let mut layers = ctx.res_mut::<GrassLayers>();
            let t = ctx.time();
            let until = (t.elapsed + f64::from(t.dt)) as f32;
            let layers = &mut *layers;
            let settings = layers.live;
            let h = settings.step_seconds;
            for sp in &mut layers.species {
                // The live clock catches up with simulated time in whole live steps.
                for _ in 0..live_steps_due(sp.live.time, until, h, t.dt) {
                    sp.live.step(&sp.baked, &layers.wind, &pushers);
                    track_reached(sp, &pushers, &settings, h);
                }
            }
        },
    ));
    let mut filled = false;
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new().read_res::<GrassLayers>().write_res::<GrassBatch>(),
        move |ctx| {
            let layers = ctx.res::<GrassLayers>();
            let mut batch = ctx.res_mut::<GrassBatch>();
            fill_batch(&layers, &mut batch, !filled, ctx.time().elapsed as f32);
            filled = true;
        },
    ));
}

/// Keeps `reached` equal to the set `LiveGrass` simulates: blades within a pusher's
/// reach, held until `hold + blend` seconds after the last pusher left.
fn track_reached(sp: &mut GrassSpecies, pushers: &[Pusher], settings: &LiveSettings, h: f32) {
    for idle in sp.reached.values_mut() {
        *idle += h;
    }
    for p in pushers {
        for hit in sp.index.within(p.center, p.radius + settings.reach) {
            sp.reached.insert(*hit.payload, 0.0);
        }
    }
    let end = settings.hold_seconds + settings.blend_seconds;
    sp.reached.retain(|_, idle| *idle < end);
}

/// Fills `batch` from `layers`: shapes and motion when `first`, live slots every time.
fn fill_batch(layers: &GrassLayers, batch: &mut GrassBatch, first: bool, time: f32) {
    batch.wind_power = layers.wind_power;
    batch.wave_speed = layers.wave_speed;
    batch.time = time;
    if first {
        batch.layers = layers
            .species
            .iter()
            .enumerate()
            .map(|(k, sp)| {
                let n = sp.roots.len();
                GrassLayer {
                    shape: sp.shape.clone(),
                    motion: motion(&sp.baked),
                    generation: k as u64 + 1,
                    root: sp.roots.clone(),
                    yaw: sp.yaw.clone(),
                    scale: sp.scale.clone(),
                    colour: vec![sp.colour; n],
                    live_slot: vec![u32::MAX; n],
                    ..GrassLayer::default()
                }
            })
            .collect();
        for layer in &mut batch.layers {
            layer.dirty.mark(0, layer.len() as u32);
        }
    }
    for (sp, layer) in layers.species.iter().zip(&mut batch.layers) {
        let links = sp.shape.rest.len() - 1;
        // Slots of blades no longer live go back to the bake.
        for (i, slot) in layer.live_slot.iter_mut().enumerate() {
            if *slot != u32::MAX && !sp.reached.contains_key(&(i as u32)) {
                *slot = u32::MAX;
                layer.dirty.mark(i as u32, i as u32 + 1);
            }
        }
        layer.live_displacement.clear();
        for (s, &blade) in sp.reached.keys().enumerate() {
            let b = blade as usize;
            if layer.live_slot[b] != s as u32 {
                layer.live_slot[b] = s as u32;
                layer.dirty.mark(blade, blade + 1);
            }
            for i in 1..=links {
                layer.live_displacement.push(sp.live.displacement(&sp.baked, b, i));
            }
        }
    }
}
