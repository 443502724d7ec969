//! Forests: several species (L-system or space colonization) on Poisson-disk placements.
//!
//! Each species grows `variants` trees (variant v from seed `rng::stream_seed(seed, Index(v),
//! "forest.<species index>")`); every placed tree picks a species by weight and one of its
//! variants from its own random stream (`Index(tree)`, "forest.pick"), so a forest of thousands
//! of trees grows only a few dozen and stays deterministic. [`Forest::spawn`] makes each placed
//! tree an entity with its segments (`tree::spawn_tree`); [`build`] grows, spawns and records a
//! scene's forest in an app.

use std::time::Instant;

use glam::Vec3;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::LeafBatch;
use sylva_runtime::rng::{StreamKey, stream, stream_seed};
use sylva_runtime::{App, FieldError, Validate};

use super::{Ground, ScatterParams, scatter};
use crate::colonize::{ColonizeError, ColonizeParams, Colonizer};
use crate::lsystem::LSystemParams;
use crate::species::{GrowError, TreeBuilder};
use crate::tree::{
    BranchGraph, Leaves, MeshParams, Placement, RadiusParams, TreeBatch, TreeError, TreeLeaves, TreeLook, grow_leaves,
    model, prepare_graph, push_many_leaves, reserve_trees, spawn_tree,
};

/// Most variants one species may grow.
pub const MAX_VARIANTS: u32 = 256;

/// One species of a forest: how its trees grow and how many distinct ones to grow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SpeciesParams {
    /// Name, for reports. Default empty.
    pub name: String,
    /// Relative share of the placed trees. Default 1.
    pub weight: f32,
    /// Grow by L-system (exactly one of `lsystem` and `colonize`).
    pub lsystem: Option<LSystemParams>,
    /// Grow by space colonization; only the first root's tree is used.
    pub colonize: Option<ColonizeParams>,
    /// Pipe-model radii. Default: see [`RadiusParams`].
    pub radii: RadiusParams,
    /// Curve reduction (the mesh settings' `curve_reduction`). Default: see [`MeshParams`].
    pub mesh: MeshParams,
    /// Metres per graph unit. Default 0.01 (the thesis's centimetres).
    pub scale: f32,
    /// Distinct trees grown for this species. Default 4.
    pub variants: u32,
    /// Bark, leaf colour, leaf size and leaves per twig tip. Default: see [`TreeLook`].
    /// Not serialized: the look only shows, so it changes neither a scene's fingerprint nor
    /// a world's chunk keys.
    #[serde(skip_serializing)]
    pub look: TreeLook,
}

impl Default for SpeciesParams {
    fn default() -> Self {
        Self {
            name: String::new(),
            weight: 1.0,
            lsystem: None,
            colonize: None,
            radii: RadiusParams::default(),
            mesh: MeshParams::default(),
            scale: 0.01,
            variants: 4,
            look: TreeLook::default(),
        }
    }
}

/// A forest: species and where their trees go.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ForestParams {
    /// The species; at least one.
    pub species: Vec<SpeciesParams>,
    /// The Poisson-disk scatter of tree positions.
    pub placement: ScatterParams,
}

impl Validate for SpeciesParams {
    /// Checks every field, the grower's included.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.weight.is_finite() && self.weight > 0.0, "weight", || {
            format!("is {}, must be a finite number > 0", self.weight)
        })?;
        FieldError::check(self.scale.is_finite() && self.scale > 0.0, "scale", || {
            format!("is {}, must be a finite number > 0", self.scale)
        })?;
        FieldError::check((1..=MAX_VARIANTS).contains(&self.variants), "variants", || {
            format!("is {}, must be in 1..={MAX_VARIANTS}", self.variants)
        })?;
        match (&self.lsystem, &self.colonize) {
            (Some(l), None) => l.validate().map_err(|e| e.within("lsystem"))?,
            (None, Some(c)) => c.validate().map_err(|e| e.within("colonize"))?,
            _ => {
                return Err(FieldError::new(
                    "lsystem",
                    "give exactly one of `lsystem` and `colonize`",
                ));
            }
        }
        self.radii.validate().map_err(|e| e.within("radii"))?;
        self.mesh.validate().map_err(|e| e.within("mesh"))?;
        self.look.validate().map_err(|e| e.within("look"))
    }
}

impl Validate for ForestParams {
    /// Checks every field; the path of a species' field starts with its index, `species[1].weight`.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(!self.species.is_empty(), "species", || {
            "is empty, a forest needs at least one species".into()
        })?;
        for (i, s) in self.species.iter().enumerate() {
            s.validate().map_err(|e| e.within(format!("species[{i}]")))?;
        }
        self.placement.validate().map_err(|e| e.within("placement"))
    }
}

/// Why a forest could not be grown.
#[derive(Debug, thiserror::Error)]
pub enum ForestError {
    /// A parameter is out of range; the path is below `forest`.
    #[error("forest.{}: {}", .0.dotted(), .0.message)]
    InvalidParam(#[from] FieldError),
    /// An L-system species failed to grow.
    #[error("species {species}: {source}")]
    LSystem {
        /// The species index.
        species: usize,
        /// Why.
        source: GrowError,
    },
    /// A colonization species failed to grow.
    #[error("species {species}: {source}")]
    Colonize {
        /// The species index.
        species: usize,
        /// Why.
        source: ColonizeError,
    },
    /// A grown graph was invalid.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

/// One placed tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacedTree {
    /// Species index.
    pub species: u32,
    /// Variant index within the species.
    pub variant: u32,
    /// Where its root stands (world, metres, Y up).
    pub position: Vec3,
}

/// Sizes and timings of a grown forest.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ForestStats {
    /// Trees placed.
    pub trees: usize,
    /// Placed trees per species.
    pub per_species: Vec<usize>,
    /// Variants grown over all species.
    pub variants: usize,
    /// Segments over all placed trees.
    pub segments: usize,
    /// Leaves over all placed trees.
    pub leaves: usize,
    /// Growing the variants, milliseconds.
    pub grow_ms: f64,
    /// Scattering the positions, milliseconds.
    pub place_ms: f64,
}

impl ForestStats {
    /// The forest report of `app`: its [`ForestStats`] resource, when it has a forest.
    pub fn of(app: &App) -> Option<Self> {
        app.world.resources.get::<ForestStats>().map(|f| f.clone())
    }
}

/// A grown forest: the variants of each species and the placed trees.
#[derive(Clone, Debug, Default)]
pub struct Forest {
    /// Per species, its variants' prepared graphs (radii, Z up, graph units).
    pub variants: Vec<Vec<BranchGraph>>,
    /// Per species, its variants' leaves (the graphs' frame), indexed like `variants`.
    pub leaves: Vec<Vec<Leaves>>,
    /// Per species, its look.
    pub looks: Vec<TreeLook>,
    /// Metres per graph unit, per species.
    pub scales: Vec<f32>,
    /// The placed trees, in placement order.
    pub trees: Vec<PlacedTree>,
    /// Sizes and timings.
    pub stats: ForestStats,
}

/// Builds a scene's forest (scene section `forest`) into `app`: grows it on the app's pool
/// ([`grow_forest`]) and [`plant`]s it.
pub fn build(app: &mut App, params: &ForestParams, ground: &impl Ground, seed: u64) -> Result<(), ForestError> {
    let forest = app.in_pool(|| grow_forest(params, ground, seed))?;
    plant(app, forest)
}

/// Spawns a grown forest's trees into `app` ([`Forest::spawn`]) in their looks
/// ([`Forest::dress`]) and puts its [`ForestStats`] into the app. Apart from [`build`] so that
/// a host can weigh the grown forest (its segments and leaves) before it spends the memory.
pub fn plant(app: &mut App, forest: Forest) -> Result<(), ForestError> {
    let trees = forest.spawn(&mut app.world.entities)?;
    if let Some(mut batch) = app.world.resources.get_mut::<TreeBatch>() {
        forest.dress(&trees, &mut batch);
    }
    app.world.resources.insert(forest.stats);
    Ok(())
}

/// Grows the species of `params` and places them on `ground`. Growing the variants runs in
/// parallel (each is a pure function of its seed).
pub fn grow_forest(params: &ForestParams, ground: &impl Ground, seed: u64) -> Result<Forest, ForestError> {
    params.validate()?;
    let t = Instant::now();
    let jobs: Vec<(usize, u32)> = params
        .species
        .iter()
        .enumerate()
        .flat_map(|(s, sp)| (0..sp.variants).map(move |v| (s, v)))
        .collect();
    let grown: Vec<Result<Variant, ForestError>> = jobs
        .par_iter()
        .map(|&(s, v)| {
            grow_variant(
                &params.species[s],
                s,
                stream_seed(seed, StreamKey::Index(u64::from(v)), &format!("forest.{s}")),
            )
        })
        .collect();
    let mut variants: Vec<Vec<BranchGraph>> = vec![Vec::new(); params.species.len()];
    let mut leaves: Vec<Vec<Leaves>> = vec![Vec::new(); params.species.len()];
    for (&(s, _), g) in jobs.iter().zip(grown) {
        let g = g?;
        variants[s].push(g.graph);
        leaves[s].push(g.leaves);
    }
    let grow_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let points = scatter(&params.placement, ground, seed).map_err(|e| e.within("placement"))?;
    let place_ms = t.elapsed().as_secs_f64() * 1e3;
    let total: f32 = params.species.iter().map(|s| s.weight).sum();
    let mut per_species = vec![0; params.species.len()];
    let trees: Vec<PlacedTree> = points
        .iter()
        .enumerate()
        .map(|(i, &position)| {
            let mut rng = stream(seed, StreamKey::Index(i as u64), "forest.pick");
            let mut pick = rng.random::<f32>() * total;
            let mut species = params.species.len() - 1;
            for (s, sp) in params.species.iter().enumerate() {
                if pick < sp.weight {
                    species = s;
                    break;
                }
                pick -= sp.weight;
            }
            per_species[species] += 1;
            let variant = rng.random_range(0..params.species[species].variants);
            PlacedTree {
                species: species as u32,
                variant,
                position,
            }
        })
        .collect();
    let (mut segments, mut leaf_count) = (0, 0);
    for t in &trees {
        let (s, v) = (t.species as usize, t.variant as usize);
        segments += variants[s][v].len();
        leaf_count += leaves[s][v].len();
    }
    Ok(Forest {
        scales: params.species.iter().map(|s| s.scale).collect(),
        looks: params.species.iter().map(|s| s.look).collect(),
        stats: ForestStats {
            trees: trees.len(),
            per_species,
            variants: jobs.len(),
            segments,
            leaves: leaf_count,
            grow_ms,
            place_ms,
        },
        variants,
        leaves,
        trees,
    })
}

/// One grown variant of a species.
#[derive(Clone, Debug, Default)]
pub(crate) struct Variant {
    /// The prepared graph.
    pub graph: BranchGraph,
    /// Its leaves: the grammar's, then the species' tip clusters.
    pub leaves: Leaves,
}

/// One variant's prepared graph and leaves.
pub(crate) fn grow_variant(sp: &SpeciesParams, species: usize, seed: u64) -> Result<Variant, ForestError> {
    let (graph, drawn) = grow_graph(sp, species, seed)?;
    let leaves = grow_leaves(&graph, &drawn, &sp.look, sp.scale, seed);
    Ok(Variant { graph, leaves })
}

/// One variant's prepared graph and the leaves its grammar drew.
fn grow_graph(sp: &SpeciesParams, species: usize, seed: u64) -> Result<(BranchGraph, Leaves), ForestError> {
    if let Some(l) = &sp.lsystem {
        let mut builder = TreeBuilder::new();
        builder
            .grow(l, &sp.radii, &sp.mesh, seed)
            .map_err(|source| ForestError::LSystem { species, source })?;
        let tree = builder.into_tree();
        return Ok((tree.graph, tree.leaves));
    }
    let c = sp
        .colonize
        .as_ref()
        .expect("validated: exactly one of lsystem and colonize");
    let colonize = |source| ForestError::Colonize { species, source };
    let mut colonizer = Colonizer::new(c, seed).map_err(colonize)?;
    colonizer.run();
    let mut graphs = colonizer.finish().map_err(colonize)?;
    let graph = graphs.swap_remove(0);
    Ok((prepare_graph(&graph, &sp.radii, &sp.mesh)?, Leaves::new()))
}

impl Forest {
    /// Spawns every placed tree and its segments into `world`; returns the tree entities in
    /// placement order.
    pub fn spawn(&self, world: &mut hecs::World) -> Result<Vec<hecs::Entity>, TreeError> {
        // Only room: stale books (the fields are public) cost a regrowth, not a result.
        reserve_trees(world, self.trees.len(), self.stats.segments);
        self.trees
            .iter()
            .map(|t| {
                let graph = &self.variants[t.species as usize][t.variant as usize];
                spawn_tree(world, graph, self.placement(t))
            })
            .collect()
    }

    /// Where placed tree `t` stands, at its species' scale.
    fn placement(&self, t: &PlacedTree) -> Placement {
        Placement {
            position: t.position,
            scale: self.scales[t.species as usize],
        }
    }

    /// Gives `batch` what the forest looks like: each of the tree entities [`Forest::spawn`]
    /// returned (`trees`, in placement order) its species' bark, every tree's leaves, and a
    /// card of its variant (the variants as [`TreeBatch::models`], species by species).
    pub fn dress(&self, trees: &[hecs::Entity], batch: &mut TreeBatch) {
        let mut first = Vec::with_capacity(self.variants.len());
        let mut models = Vec::new();
        for (s, (graphs, leaves)) in self.variants.iter().zip(&self.leaves).enumerate() {
            first.push(models.len() as u32);
            let look = &self.looks[s];
            for (graph, leaves) in graphs.iter().zip(leaves) {
                models.push(model(graph, leaves, self.scales[s], look.bark, look.leaf_colour));
            }
        }
        batch.set_models(models);
        let runs = push_many_leaves(&mut batch.leaves, &self.tree_leaves(trees.len()));
        for ((entity, t), run) in trees.iter().zip(&self.trees).zip(runs) {
            batch.set_bark(*entity, self.looks[t.species as usize].bark);
            batch.leaves_in(*entity, run);
            batch.card(*entity, first[t.species as usize] + t.variant);
        }
    }

    /// Appends every placed tree's leaves to `batch`, in placement order, world space.
    pub fn push_leaves(&self, batch: &mut LeafBatch) {
        push_many_leaves(batch, &self.tree_leaves(self.trees.len()));
    }

    /// The leaves of the first `count` placed trees, as they stand.
    fn tree_leaves(&self, count: usize) -> Vec<TreeLeaves<'_>> {
        let of = |t: &PlacedTree| {
            let s = t.species as usize;
            TreeLeaves {
                leaves: &self.leaves[s][t.variant as usize],
                placement: self.placement(t),
                yaw: 0.0,
                colour: self.looks[s].leaf_colour,
            }
        };
        self.trees.iter().take(count).map(of).collect()
    }
}
