//! What a world grows once and every chunk instances: a few variants per tree
//! species, and one bake per grass species.

use std::time::Instant;

use rayon::prelude::*;
use sylva_runtime::FieldError;
use sylva_runtime::extract::{GrassMotion, GrassShape, TreeModels};
use sylva_runtime::rng::{StreamKey, hash_words, stream_seed};

use super::params::WorldParams;
use crate::grass::extraction::motion;
use crate::grass::{BakeSettings, BakedGrass, BladeKernel, GrassBakeError, bake, blade_from_grammar, live_kernel};
use crate::lsystem::LSystemError;
use crate::placement::forest::{ForestError, Variant, grow_variant};
use crate::tree::{BranchGraph, Leaves, model};

/// One tree species' grown variants.
#[derive(Clone, Debug)]
pub struct TreeKind {
    /// Prepared graphs (radii, Z up, graph units), one per variant.
    pub variants: Vec<BranchGraph>,
    /// Leaves (the graphs' frame), one set per variant, grown once and placed per instance.
    pub leaves: Vec<Leaves>,
    /// Metres per graph unit.
    pub scale: f32,
    /// Bark colour.
    pub colour: [u8; 4],
    /// Leaf colour.
    pub leaf_colour: [u8; 4],
    /// Whether it is a shrub: the biomes plant it in their understory and never in their
    /// canopy.
    pub shrub: bool,
}

/// One grass species' shape and baked motion.
#[derive(Clone, Debug)]
pub struct GrassKind {
    /// The blade as drawn.
    pub shape: GrassShape,
    /// The baked motion as a renderer plays it.
    pub motion: GrassMotion,
    /// The bake itself, which live blades start from and fade back to.
    pub baked: BakedGrass,
    /// The blade compiled for live steps (`grass.live`).
    pub kernel: BladeKernel,
    /// Colour of every blade.
    pub colour: [u8; 4],
}

/// Everything grown for a world before its chunks are installed.
#[derive(Clone, Debug, Default)]
pub struct WorldContent {
    /// Tree species in the world's order.
    pub trees: Vec<TreeKind>,
    /// Grass species in the world's order.
    pub grass: Vec<GrassKind>,
    /// Growing the tree variants, milliseconds.
    pub grow_ms: f64,
    /// Baking the grass, milliseconds.
    pub bake_ms: f64,
}

impl WorldContent {
    /// Every species' variants as render models, species by species, in the tree's own frame
    /// (metres: the species' scale applied); [`WorldContent::model_id`] indexes them.
    pub fn tree_models(&self) -> TreeModels {
        let models = self
            .trees
            .iter()
            .flat_map(|kind| {
                (kind.variants.iter().zip(&kind.leaves))
                    .map(|(graph, leaves)| model(graph, leaves, kind.scale, kind.colour, kind.leaf_colour))
            })
            .collect();
        let shrubs = self
            .trees
            .iter()
            .flat_map(|kind| std::iter::repeat_n(kind.shrub, kind.variants.len()))
            .collect();
        TreeModels {
            models,
            generation: 1,
            shrubs,
        }
    }

    /// The index in [`WorldContent::tree_models`] of variant `variant` of species `species`;
    /// `None` when there is no such variant.
    pub fn model_id(&self, species: usize, variant: usize) -> Option<u32> {
        let kind = self.trees.get(species)?;
        let before: usize = self.trees[..species].iter().map(|k| k.variants.len()).sum();
        (variant < kind.variants.len()).then_some((before + variant) as u32)
    }
}

/// Why a world's content could not be grown.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// A tree species failed to grow.
    #[error("trees[{species}]: {source}")]
    Tree {
        /// Species index.
        species: usize,
        /// Why.
        source: ForestError,
    },
    /// A grass species' grammar failed.
    #[error("grass.species[{species}].grammar: {source}")]
    Blade {
        /// Species index.
        species: usize,
        /// Why.
        source: LSystemError,
    },
    /// A grass species could not be baked.
    #[error("grass.species[{species}]: bake: {source}")]
    Bake {
        /// Species index.
        species: usize,
        /// Why.
        source: GrassBakeError,
    },
    /// A grass species' blade cannot step live at the world's live step.
    #[error("grass.species[{species}]: {source}")]
    Live {
        /// Species index.
        species: usize,
        /// Why, at `live.step_seconds`.
        source: FieldError,
    },
}

/// The species of `params` with their variants, `grown[k]` being variant `jobs[k]`.
fn tree_kinds(
    params: &WorldParams,
    jobs: &[(usize, u32)],
    grown: Vec<Result<Variant, ContentError>>,
) -> Result<Vec<TreeKind>, ContentError> {
    let mut trees: Vec<TreeKind> = params
        .trees
        .iter()
        .map(|t| TreeKind {
            variants: Vec::new(),
            leaves: Vec::new(),
            scale: t.species.scale,
            colour: t.colour.unwrap_or(t.species.look.bark),
            leaf_colour: t.species.look.leaf_colour,
            shrub: {
                let named = |stands: &[crate::ecology::Stand]| stands.iter().any(|s| s.species == t.species.name);
                let biomes = &params.ecology.biomes;
                biomes.iter().any(|b| named(&b.understory)) && !biomes.iter().any(|b| named(&b.canopy))
            },
        })
        .collect();
    for (&(s, _), grown) in jobs.iter().zip(grown) {
        let Variant { graph, leaves } = grown?;
        trees[s].variants.push(graph);
        trees[s].leaves.push(leaves);
    }
    Ok(trees)
}

/// Grows every tree variant and bakes every grass species of `params`, in
/// parallel on the current rayon pool. Variant `v` of species `s` grows from
/// `stream_seed(seed, Index(v), "world.tree.<s>")`.
pub fn grow_content(params: &WorldParams, seed: u64) -> Result<WorldContent, ContentError> {
    let started = Instant::now();
    let jobs: Vec<(usize, u32)> = params
        .trees
        .iter()
        .enumerate()
        .flat_map(|(s, t)| (0..t.species.variants.max(1)).map(move |v| (s, v)))
        .collect();
    let grown: Vec<Result<Variant, ContentError>> = jobs
        .par_iter()
        .map(|&(s, v)| {
            let seed = stream_seed(seed, StreamKey::Index(u64::from(v)), &format!("world.tree.{s}"));
            grow_variant(&params.trees[s].species, s, seed).map_err(|source| ContentError::Tree { species: s, source })
        })
        .collect();
    let trees = tree_kinds(params, &jobs, grown)?;
    let grow_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let g = &params.grass;
    let grass = g
        .species
        .par_iter()
        .enumerate()
        .map(|(k, sp)| {
            let shape = blade_from_grammar(&sp.grammar, sp.iterations)
                .map_err(|source| ContentError::Blade { species: k, source })?;
            let settings = BakeSettings {
                seed: hash_words(&[seed, k as u64, g.bake.seed]),
                ..g.bake
            };
            let kernel = live_kernel(&shape, &g.dynamics, &g.live)
                .map_err(|source| ContentError::Live { species: k, source })?;
            let (baked, _) = bake(&shape, &g.dynamics, &g.wind, &settings)
                .map_err(|source| ContentError::Bake { species: k, source })?;
            Ok(GrassKind {
                shape: GrassShape {
                    parent: shape.parent.clone(),
                    rest: shape.rest.clone(),
                    width: shape.segment.iter().map(|s| s.width).collect(),
                },
                motion: motion(&baked),
                baked,
                kernel,
                colour: sp.colour,
            })
        })
        .collect::<Result<Vec<_>, ContentError>>()?;
    Ok(WorldContent {
        trees,
        grass,
        grow_ms,
        bake_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}
