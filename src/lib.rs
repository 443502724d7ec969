//! Sylva: procedural nature at game scale.
//!
//! This crate is the facade an application uses: load a [`Scene`], [`build`]
//! an [`App`](runtime::App) from it, step it with your own clock, read
//! the extraction batches, and write a [`Report`]. The `sylva` binary is a thin
//! command-line layer over the same calls.
//!
//! World scenes stream their chunks around viewers: [`build_all`] hands back a
//! [`WorldStreamer`] to call once per frame (`examples/stream.rs`).
//!
//! ```
//! let scene = sylva::Scene::from_str("(chains: (columns: 2, rows: 2, links: 3))", "tiny.ron").unwrap();
//! let mut app = sylva::build(&scene, 1).unwrap();
//! app.advance(scene.simulation.steps_per_frame);
//! let batch = app.world.resources.get::<sylva::systems::particles::SpringBatch>().unwrap();
//! assert_eq!(batch.cylinders.len(), 12);
//! ```
#![warn(missing_docs)]

use std::time::Instant;

mod flight;
mod report;
mod scene;

pub use flight::{Flight, FlightLog};
pub use report::{
    ChunkCounts, GrassReport, ParticleReport, Quantiles, RenderReport, Report, RssReport, StreamingReport, TreeReport,
};
pub use scene::{
    BladeSource, CHAINS, GRASS_PRESETS, GrassScene, GrassSpecies, Scene, SceneError, Simulation, TreeScene, WORLD,
};
pub use sylva_runtime as runtime;
pub use sylva_systems as systems;
pub use sylva_systems::world::WorldStreamer;
/// The Vulkan renderer (feature `render`, on by default).
#[cfg(feature = "render")]
pub use sylva_vk as vk;

use sylva_runtime::glam::Vec3;
use sylva_runtime::{App, AppConfig, AppError};
use sylva_systems::colonize::{self, ColonizeError, Colonizer};
use sylva_systems::grass::{self, GrassError, GrassSettings, SpeciesSettings};
use sylva_systems::particles::{self, spawn_chain_field};
use sylva_systems::placement::forest::{ForestError, grow_forest};
use sylva_systems::placement::{Plane, TerrainGround};
use sylva_systems::species::{GrowError, GrownTree, TreeStats, grow_lsystem_tree};
use sylva_systems::terrain;
use sylva_systems::tree::{self, MeshParams, Placement, RadiusParams, prepare_graph, spawn_tree};
use sylva_systems::world::WorldError;

/// Radius of the tubes springs are drawn as, metres.
const SPRING_RADIUS: f32 = 0.02;

/// Why a scene could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The app could not start.
    #[error(transparent)]
    App(#[from] AppError),
    /// The scene's tree could not be grown.
    #[error("tree: {0}")]
    Tree(#[from] GrowError),
    /// The scene's colonization trees could not be grown.
    #[error("colonize: {0}")]
    Colonize(#[from] ColonizeError),
    /// The scene's forest could not be grown.
    #[error("{0}")]
    Forest(#[from] ForestError),
    /// A grass species' blade could not be derived.
    #[error("grass species {0}: {1}")]
    GrassBlade(usize, String),
    /// The scene's grass could not be baked or planted.
    #[error(transparent)]
    Grass(#[from] GrassError),
    /// The scene's world could not start.
    #[error(transparent)]
    World(#[from] WorldError),
}

/// An app built from a scene, plus what was generated on the way.
pub struct Built {
    /// The ready-to-step app.
    pub app: App,
    /// The scene's tree with its mesh, if the scene has one.
    pub tree: Option<GrownTree>,
    /// The scene's world, if it has one: call [`WorldStreamer::update`] every
    /// frame with the viewers to stream it into `app`.
    pub world: Option<WorldStreamer>,
}

/// Builds a ready-to-step app for `scene` on `threads` worker threads (0: one per core).
///
/// Installs the domain systems the scene needs, spawns its content (chains,
/// tree segments, terrain chunks), and puts the scene's camera and sun into
/// the world as resources. A grown tree's [`TreeStats`](systems::species::TreeStats) become a resource too.
/// A world scene's chunks stream in through the [`WorldStreamer`] that [`build_all`] hands back.
pub fn build(scene: &Scene, threads: usize) -> Result<App, BuildError> {
    Ok(build_all(scene, threads)?.app)
}

/// [`build`], also handing back the tree's mesh (for export).
pub fn build_all(scene: &Scene, threads: usize) -> Result<Built, BuildError> {
    let mut app = App::new(AppConfig {
        seed: scene.seed,
        threads,
        step_seconds: scene.simulation.step_seconds,
        ..AppConfig::default()
    })?;
    particles::install(&mut app, scene.particles);
    particles::install_extraction(&mut app, SPRING_RADIUS);
    if let Some(chains) = &scene.chains {
        spawn_chain_field(&mut app.world.entities, chains, scene.seed);
    }
    tree::install_extraction(&mut app);
    let mut grown = None;
    if let Some(t) = &scene.tree {
        let g = app.in_pool(|| grow_lsystem_tree(&t.lsystem, &t.radii, &t.mesh, scene.seed))?;
        let placement = Placement {
            position: t.position,
            scale: t.scale,
        };
        spawn_tree(&mut app.world.entities, &g.graph, placement).map_err(GrowError::from)?;
        app.world.resources.insert(g.stats);
        grown = Some(g);
    }
    if let Some(c) = scene.colonize.as_ref().filter(|c| c.iterations_per_step > 0) {
        // Growth over time: sampling and trunks now, the rest in `colonize.grow`, step by step.
        let colonizer = app.in_pool(|| Colonizer::new(c, scene.seed))?;
        colonize::install(&mut app);
        let placement = Placement {
            position: Vec3::ZERO,
            scale: 0.01,
        };
        let radii = RadiusParams::default();
        colonize::spawn_colonizing(
            &mut app.world.entities,
            colonizer,
            placement,
            radii,
            c.iterations_per_step,
        );
    } else if let Some(c) = &scene.colonize {
        // Colonization graphs share the L-system trees' units (Z up, centimetres) and meshing defaults.
        let (graphs, stats) = app.in_pool(|| -> Result<_, ColonizeError> {
            let t = Instant::now();
            let mut colonizer = Colonizer::new(c, scene.seed)?;
            colonizer.run();
            let stats = colonizer.stats(t.elapsed().as_secs_f64() * 1e3);
            Ok((colonizer.finish()?, stats))
        })?;
        let (radii, mesh) = (RadiusParams::default(), MeshParams::default());
        let placement = Placement {
            position: Vec3::ZERO,
            scale: 0.01,
        };
        // Every root's tree, in one graph for meshing and export.
        let mut all = tree::BranchGraph::new();
        for graph in &graphs {
            let prepared = prepare_graph(graph, &radii, &mesh).map_err(GrowError::from)?;
            spawn_tree(&mut app.world.entities, &prepared, placement).map_err(GrowError::from)?;
            let offset = all.len() as u32;
            for i in 0..prepared.len() {
                let parent = match prepared.parent[i] {
                    tree::NO_PARENT => tree::NO_PARENT,
                    p => p + offset,
                };
                let s = all.push(prepared.start[i], prepared.end[i], parent, prepared.depth[i]);
                all.start_radius[s as usize] = prepared.start_radius[i];
                all.end_radius[s as usize] = prepared.end_radius[i];
            }
        }
        if grown.is_none() {
            let t = Instant::now();
            let mut meshed = tree::TreeMesh::default();
            let counts = tree::build_mesh_into(&all, &mesh, &mut meshed).map_err(GrowError::from)?;
            let tree_stats = TreeStats {
                modules: 0,
                segments: all.len(),
                chains: counts.chains,
                rings: counts.rings,
                vertices: counts.vertices,
                triangles: counts.triangles,
                derive_ms: 0.0,
                interpret_ms: 0.0,
                mesh_ms: t.elapsed().as_secs_f64() * 1e3,
            };
            app.world.resources.insert(tree_stats);
            grown = Some(GrownTree {
                graph: all,
                mesh: meshed,
                stats: tree_stats,
            });
        }
        app.world.resources.insert(stats);
    }
    if let Some(t) = &scene.terrain {
        terrain::install(&mut app, t);
        terrain::install_extraction(&mut app, t.cell_length);
    }
    // Forest and grass stand on the terrain where the scene has one (it is generated by now),
    // on the plane y = 0 otherwise.
    let field = scene
        .terrain
        .as_ref()
        .and_then(|t| terrain::Heightfield::from_world(&app.world.entities).map(|h| (h, t.cell_length)));
    let terrain_ground = field.as_ref().map(|(field, cell_length)| TerrainGround {
        field,
        cell_length: *cell_length,
    });
    if let Some(f) = &scene.forest {
        let forest = match &terrain_ground {
            Some(ground) => app.in_pool(|| grow_forest(f, ground, scene.seed))?,
            None => app.in_pool(|| grow_forest(f, &Plane { y: 0.0 }, scene.seed))?,
        };
        forest.spawn(&mut app.world.entities).map_err(GrowError::from)?;
        app.world.resources.insert(forest.stats);
    }
    if let Some(g) = &scene.grass {
        let settings = grass_settings(g)?;
        match &terrain_ground {
            Some(ground) => grass::install(&mut app, &settings, ground)?,
            None => grass::install(&mut app, &settings, &Plane { y: 0.0 })?,
        }
    }
    let world = match &scene.world {
        Some(w) => {
            let world = WorldStreamer::new(w, scene.seed, None)?;
            world.install(&mut app);
            Some(world)
        }
        None => None,
    };
    app.world.resources.insert(scene.camera);
    app.world.resources.insert(scene.sun);
    Ok(Built {
        app,
        tree: grown,
        world,
    })
}

/// The systems-level grass settings of a scene section: every species' blade derived.
fn grass_settings(g: &GrassScene) -> Result<GrassSettings, BuildError> {
    let species = g
        .species
        .iter()
        .enumerate()
        .map(|(k, sp)| {
            Ok(SpeciesSettings {
                shape: sp.blade.shape().map_err(|m| BuildError::GrassBlade(k, m))?,
                scatter: sp.scatter.clone(),
                scale: sp.scale,
                colour: sp.colour,
            })
        })
        .collect::<Result<Vec<_>, BuildError>>()?;
    Ok(GrassSettings {
        species,
        bake: g.bake,
        wind: g.wind.clone(),
        dynamics: g.dynamics,
        wind_power: g.wind_power,
        wave_speed: g.wave_speed,
        live: g.live,
        walkers: g.pushers.clone(),
    })
}

/// Runs `frames` frames of `steps_per_frame` fixed steps each, calling
/// `on_frame` after every frame (for progress bars).
pub fn simulate(app: &mut App, frames: u32, steps_per_frame: u32, mut on_frame: impl FnMut(u32)) {
    for frame in 0..frames {
        app.advance(steps_per_frame);
        on_frame(frame + 1);
    }
}

#[cfg(feature = "render")]
/// Draws the app's extraction batches — springs, trees, attractor points
/// (when `show_points`), terrain — with the scene's camera and sun.
pub fn render(renderer: &mut vk::Renderer, app: &App, show_points: bool) -> Result<vk::FrameStats, vk::RenderError> {
    use sylva_runtime::extract::{Camera, Sun, TerrainBatch};
    use sylva_systems::world::WorldBatch;
    let res = &app.world.resources;
    let mut springs = res.get_mut::<particles::SpringBatch>();
    let mut trees = res.get_mut::<tree::TreeBatch>();
    let mut world = res.get_mut::<WorldBatch>();
    let mut attractors = res.get_mut::<sylva_systems::colonize::AttractorBatch>();
    let mut terrain = res.get_mut::<TerrainBatch>();
    let mut grass = res.get_mut::<sylva_runtime::extract::GrassBatch>();
    let mut cylinders = Vec::new();
    if let Some(s) = springs.as_deref_mut() {
        cylinders.push(&mut s.cylinders);
    }
    if let Some(t) = trees.as_deref_mut() {
        cylinders.push(&mut t.cylinders);
    }
    if let Some(w) = world.as_deref_mut() {
        cylinders.extend(w.chunks.iter_mut());
    }
    renderer.render(vk::FrameInput {
        cylinders,
        points: attractors.as_deref_mut().map(|a| &mut a.points),
        show_points,
        terrain: terrain.as_deref_mut(),
        grass: grass.as_deref_mut(),
        camera: res.get::<Camera>().map(|c| *c).unwrap_or_default(),
        sun: res.get::<Sun>().map(|s| *s).unwrap_or_default(),
    })
}
