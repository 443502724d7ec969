//! How much memory a scene will take, estimated before it is spent, and the
//! limit a build is held to.
//!
//! A scene's sizes are inside their per-field limits one by one, yet together
//! they can exceed the machine (a terrain of 8192² cells in 2 × 2 chunks with 32
//! layer slots is valid and needs about 160 GiB). [`build_all`](crate::build_all)
//! therefore adds up what each section will allocate as soon as its counts are
//! known — the terrain, chains, attractors, grass (its blades derived) and the
//! world's ground from the scene alone, a forest once its variants are grown and before its
//! segments are spawned, a world's trees once its variants are grown and before a chunk streams
//! in — and refuses a scene over its [`MemoryLimit`] with an error at the
//! field that costs the most. An L-system's module limit is held to the limit by itself
//! ([`MemoryLimit::check_derivation`]): its words at that limit must fit before it derives.
//!
//! The bytes per unit are measured (peak RSS over two sizes of each scene kind on
//! Linux), rounded up; they estimate, they do not bound.
//!
//! ```
//! use sylva::memory::{MemoryLimit, estimate};
//!
//! let mut scene = sylva::Scene::from_str("(terrain: (size: 1024, max_layers: 8))", "t.ron").unwrap();
//! let small = estimate(&scene).total();
//! assert!(small > 200 << 20 && small < 400 << 20);
//! scene.terrain.as_mut().unwrap().size = 8192;
//! scene.terrain.as_mut().unwrap().chunks = [2, 2];
//! scene.terrain.as_mut().unwrap().max_layers = 32;
//! let err = MemoryLimit::bytes(16 << 30).check(&estimate(&scene)).unwrap_err();
//! assert!(err.to_string().contains("terrain.size"));
//! ```

use std::fmt;

use sylva_systems::ecology::Layer;
use sylva_systems::lsystem::{LSystem, LSystemParams};
use sylva_systems::placement::forest::Forest;
use sylva_systems::tree::{BranchGraph, Leaves};
use sylva_systems::world::{WorldContent, WorldParams};

use crate::Scene;
use crate::domains::DOMAINS;

/// Bytes per terrain cell besides its layer slots (heights, water, sediment,
/// flux, velocity, erosion scratch, render extraction).
pub(crate) const TERRAIN_CELL: u64 = 120;
/// Bytes per terrain layer slot of a cell (material, thickness, age, and the
/// erosion pass's copies).
pub(crate) const TERRAIN_SLOT: u64 = 16;
/// Bytes per tree segment in the ECS and its render batch.
pub const SEGMENT: u64 = 276;
/// Bytes per leaf (its variant's copy shared, the world-space render batch).
pub const LEAF: u64 = 40;
/// Bytes per grass blade instance (root, yaw, scale, render batch).
pub(crate) const BLADE: u64 = 140;
/// Bytes per particle of the chains (state, solver arrays, render batch).
pub(crate) const PARTICLE: u64 = 160;
/// Bytes per attractor point (position, grid, nearest-node bookkeeping).
pub(crate) const ATTRACTOR: u64 = 64;
/// Bytes per cell of a resident world chunk (payload columns, surface, render patch).
pub(crate) const WORLD_CELL: u64 = 48;
/// Bytes per layer slot of a world chunk's cell.
pub(crate) const WORLD_SLOT: u64 = 7;
/// Bytes per attribute sample of a resident world chunk: eight attributes as f32, and the
/// ground cover's density and kind.
pub(crate) const WORLD_SAMPLE: u64 = 8 * 4 + 3;
/// Bytes per tree or shrub instance of a resident world chunk (the payload's and the ECS's).
pub const WORLD_INSTANCE: u64 = 2 * 28 + 16;
/// Bytes per ground-cover sample of a resident world chunk's render patch (density and kind
/// in one word): the renderer expands blades from it on the GPU, so no blade is held on
/// the host (docs/design/grass.md, "Blades from the field on the GPU").
pub(crate) const WORLD_COVER_SAMPLE: u64 = 4;
/// Bytes per blade the world's live grass holds near pushers: root, yaw, scale, cell and
/// index, its place in the tile's spatial index, and, when live, positions and velocities of
/// up to 8 particles (docs/design/grass.md, "Live grass in the world").
pub(crate) const WORLD_LIVE_BLADE: u64 = 48 + 2 * 12 * 8;
/// Bytes per branch segment of a tree model (a world's variant, a forest's variant, a forest's
/// placed tree): its cylinder (start, end, two radii, colour, tree anchor). The renderer's copy
/// is device memory, not the host's, on a GPU.
pub const WORLD_SEGMENT: u64 = 52;
/// Bytes per leaf of a tree model: position, normal, size, colour, tree anchor. The renderer's
/// copy (the same and its rank) is device memory on a GPU.
pub const WORLD_LEAF: u64 = 48;
/// Host bytes per drawn tree of a resident world chunk: its instance of its variant's model
/// (model, position, yaw, scale), what a renderer draws it from. Its placement (the payload's
/// and the ECS's) is [`WORLD_INSTANCE`]'s.
pub const WORLD_TREE: u64 = 4 + 12 + 4 + 4;

/// Bytes per module of an L-system word being derived, besides its parameters: its symbol
/// and parameter offset in the word a step reads, the word it writes and, on a parallel
/// step, the parts joined into that word, each with room to grow (measured at the module
/// limit: 18 bytes on two threads, 22 on eight).
pub const WORD_MODULE: u64 = 24;
/// Bytes per parameter of a module of a word being derived, in each of those copies
/// (measured: 12).
pub const WORD_PARAM: u64 = 12;

/// What one part of a scene will take.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// The scene field that sizes it (a dotted path, e.g. `terrain.size`).
    pub field: String,
    /// What the size comes from, for the error message.
    pub what: String,
    /// Estimated bytes.
    pub bytes: u64,
}

/// The parts of a scene's memory, largest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Every part that costs something.
    pub parts: Vec<Part>,
}

impl Estimate {
    /// All parts together, bytes.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).fold(0, u64::saturating_add)
    }

    /// Adds the part of `field`.
    pub fn add(&mut self, field: &str, what: String, bytes: u64) {
        self.push(Part {
            field: field.to_owned(),
            what,
            bytes,
        });
    }

    /// Adds `part`, keeping the largest first.
    pub fn push(&mut self, part: Part) {
        self.parts.push(part);
        self.parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    }
}

/// The most memory a build may plan to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    bytes: Option<u64>,
    of_machine: bool,
}

impl MemoryLimit {
    /// No limit.
    pub const NONE: MemoryLimit = MemoryLimit {
        bytes: None,
        of_machine: false,
    };

    /// A limit of `bytes`.
    pub fn bytes(bytes: u64) -> Self {
        Self {
            bytes: Some(bytes),
            of_machine: false,
        }
    }

    /// Three quarters of this machine's physical memory (none where it cannot be read).
    pub fn of_machine() -> Self {
        Self {
            bytes: physical_memory().map(|b| b / 4 * 3),
            of_machine: true,
        }
    }

    /// The limit in bytes, if any.
    pub fn get(&self) -> Option<u64> {
        self.bytes
    }

    /// `Ok` when `derivation`'s words at its module limit fit the limit by themselves.
    ///
    /// The module limit is a ceiling a grammar seldom reaches, not what it takes, so it is not
    /// added to the scene's [`Estimate`] (that would refuse scenes that fit); but a ceiling
    /// beyond the whole limit bounds nothing, since a derivation that runs away would exhaust
    /// the memory before the module limit stopped it.
    pub fn check_derivation(&self, derivation: &Derivation) -> Result<(), WordsOverLimit> {
        match self.bytes {
            Some(limit) if derivation.bytes() > limit => Err(WordsOverLimit {
                derivation: derivation.clone(),
                limit,
                of_machine: self.of_machine,
            }),
            _ => Ok(()),
        }
    }

    /// `Ok` when `estimate` fits, otherwise the error at its largest part.
    pub fn check(&self, estimate: &Estimate) -> Result<(), OverLimit> {
        match self.bytes {
            Some(limit) if estimate.total() > limit => Err(OverLimit {
                estimate: estimate.clone(),
                limit,
                of_machine: self.of_machine,
            }),
            _ => Ok(()),
        }
    }
}

impl Default for MemoryLimit {
    fn default() -> Self {
        Self::of_machine()
    }
}

/// An L-system's derivation at its module limit: the most memory its words may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derivation {
    /// The scene field of the limit (a dotted path ending in `module_limit`).
    pub field: String,
    /// The module limit.
    pub modules: usize,
    /// The most parameters a module of its words has
    /// ([`LSystem::max_params`](sylva_systems::lsystem::LSystem::max_params)).
    pub params: usize,
}

impl Derivation {
    /// Bytes of the derivation's words at the module limit.
    pub fn bytes(&self) -> u64 {
        self.per_module().saturating_mul(self.modules as u64)
    }

    /// Bytes per module of its words.
    fn per_module(&self) -> u64 {
        WORD_MODULE.saturating_add(WORD_PARAM.saturating_mul(self.params as u64))
    }
}

/// A module limit whose words would not fit the memory limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordsOverLimit {
    /// The derivation refused.
    pub derivation: Derivation,
    /// The limit, bytes.
    pub limit: u64,
    /// Whether the limit is the default share of the machine's memory.
    pub of_machine: bool,
}

impl fmt::Display for WordsOverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.derivation;
        write!(
            f,
            "a module limit of {} lets the derivation's words take about {} ({} bytes per module of up to {} parameter{}), over the memory limit of {}{}; a module limit of at most {} fits",
            d.modules,
            gib(d.bytes()),
            d.per_module(),
            d.params,
            if d.params == 1 { "" } else { "s" },
            gib(self.limit),
            whose(self.of_machine),
            self.limit / d.per_module()
        )
    }
}

impl std::error::Error for WordsOverLimit {}

/// A scene that would need more memory than its limit.
#[derive(Clone, Debug, PartialEq)]
pub struct OverLimit {
    /// What it would take.
    pub estimate: Estimate,
    /// The limit, bytes.
    pub limit: u64,
    /// Whether the limit is the default share of the machine's memory.
    pub of_machine: bool,
}

impl OverLimit {
    /// The field of the largest part.
    pub fn field(&self) -> &str {
        self.estimate.parts.first().map_or("", |p| p.field.as_str())
    }
}

impl fmt::Display for OverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the scene needs about {}, over the memory limit of {}{}:",
            gib(self.estimate.total()),
            gib(self.limit),
            whose(self.of_machine)
        )?;
        for p in &self.estimate.parts {
            write!(f, " {} ({}) {};", p.field, p.what, gib(p.bytes))?;
        }
        Ok(())
    }
}

impl std::error::Error for OverLimit {}

/// What a limit is, when it is the default share of the machine's memory.
fn whose(of_machine: bool) -> &'static str {
    if of_machine {
        " (3/4 of this machine's memory; --memory-limit changes it)"
    } else {
        ""
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1 << 30))
}

/// Why text is not a size.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a number with an optional unit.
    #[error("`{0}`: expected a size such as 512M or 8G")]
    Syntax(String),
    /// A number that is no count of bytes (below one byte, or past 2^64).
    #[error("`{0}`: not a size in bytes")]
    Range(String),
}

/// Parses a size: bytes, or a number with K, M, G or T (powers of 1024), e.g. `8G`, `512M`.
///
/// ```
/// use sylva::memory::{SizeError, parse_size};
///
/// assert_eq!(parse_size("1.5k"), Ok(1536));
/// assert_eq!(parse_size("8X"), Err(SizeError::Syntax("8X".into())));
/// ```
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((at, _)) => (&t[..at], t[at..].to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let shift = match unit.trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(SizeError::Syntax(s.to_owned())),
    };
    let value: f64 = number.trim().parse().map_err(|_| SizeError::Syntax(s.to_owned()))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(SizeError::Range(s.to_owned()));
    }
    Ok(bytes as u64)
}

/// What `scene`'s sections will take, from the scene alone (a forest's segments
/// are known only once its variants are grown: see [`forest`]), each domain's parts in turn.
pub fn estimate(scene: &Scene) -> Estimate {
    let mut e = Estimate::default();
    for domain in DOMAINS {
        domain.estimate(scene, &mut e);
    }
    e
}

/// Every L-system derivation of `scene` (its tree's, and its forest's and world's species'),
/// at its module limit. A grammar that does not parse is left out: building refuses it anyway.
pub fn derivations(scene: &Scene) -> Vec<Derivation> {
    let mut out = Vec::new();
    let mut add = |at: String, l: &LSystemParams| {
        if let Ok(grammar) = LSystem::parse(&l.grammar) {
            out.push(Derivation {
                field: format!("{at}.module_limit"),
                modules: l.module_limit,
                params: grammar.max_params(),
            });
        }
    };
    if let Some(t) = &scene.tree {
        add("tree.lsystem".into(), &t.lsystem);
    }
    let forest = scene.forest.iter().flat_map(|f| f.species.iter().enumerate());
    for (k, l) in forest.filter_map(|(k, s)| Some((k, s.lsystem.as_ref()?))) {
        add(format!("forest.species[{k}].lsystem"), l);
    }
    let world = scene.world.iter().flat_map(|w| w.trees.iter().enumerate());
    for (k, l) in world.filter_map(|(k, t)| Some((k, t.species.lsystem.as_ref()?))) {
        add(format!("world.trees[{k}].species.lsystem"), l);
    }
    out
}

/// The most chunks resident around one viewer: the streamer's budget, the most its load
/// radius ever holds (`StreamSettings::ring_chunks`).
pub fn resident_chunks(w: &WorldParams) -> u64 {
    w.stream_settings(1).ring_chunks() as u64
}

/// What `sylva export` holds to write `chunks` chunks of `w` with the ground at `ground_level`:
/// each chunk's payload (its columns and its trees and shrubs at their densest), and its ground
/// and water meshes twice (the kit's, and their copy in the document's buffer), the water taken
/// as wide as the ground.
pub fn export_region(w: &WorldParams, chunks: u64, ground_level: usize) -> Estimate {
    let mut e = Estimate::default();
    let cells = u64::from(w.chunk_cells).pow(2);
    let per_cell = WORLD_CELL + WORLD_SLOT * u64::from(w.terrain.max_layers);
    let instances = instances_per_chunk(w);
    let payload = cells * per_cell + (instances * WORLD_INSTANCE as f64) as u64;
    let what = format!(
        "{chunks} chunks of {}² cells with at most {instances:.0} trees and shrubs each",
        w.chunk_cells
    );
    e.add("--region", what, chunks.saturating_mul(payload));
    let side = u64::from(w.chunk_cells >> ground_level.min(31)) + 1;
    // Vertices (position, normal, uv, colour) and indices of the grid and its four skirts.
    let vertices = side * side + 4 * side;
    let triangles = 2 * (side - 1) * (side - 1) + 8 * (side - 1);
    let mesh = vertices * (12 + 12 + 8 + 4) + triangles * 12;
    let what = format!("{chunks} chunks' ground and water meshes of {side}² vertices, twice");
    e.add("--ground-level", what, chunks.saturating_mul(4 * mesh));
    e
}

/// Trees one chunk of `w` draws, at most, per species: the most any
/// biome asks for of it over a chunk's area, times the share `draw.trees_per_hectare` keeps
/// of its layer (the placement survives its spacing at the asked density, docs/design/ecology.md,
/// "Density that survives its spacing"). Every candidate is taken to pass the slope and material
/// rules, which depend on ground not generated yet.
pub fn trees_per_chunk(w: &WorldParams) -> Vec<f64> {
    let area = f64::from(w.chunk_size()).powi(2);
    let Ok(biomes) = w.biomes(0) else {
        return vec![0.0; w.trees.len()];
    };
    (w.draw_shares(&biomes).iter().enumerate())
        .map(|(s, &share)| f64::from(biomes.peak_stems(s)) * area * f64::from(share))
        .collect()
}

/// Trees and shrubs one chunk of `w` holds at most (every layer at its densest biome).
pub fn instances_per_chunk(w: &WorldParams) -> f64 {
    let area = f64::from(w.chunk_size()).powi(2);
    let Ok(biomes) = w.biomes(0) else {
        return 0.0;
    };
    let spacing: Vec<f32> = w.trees.iter().map(|t| t.placement.min_distance).collect();
    Layer::ALL
        .iter()
        .map(|&l| f64::from(biomes.layer_peak(l, &spacing).0) * area)
        .sum()
}

/// The part of a world's drawn trees, once its variants are grown (`content`): per resident
/// chunk ([`estimate`]'s count), each species' expected drawn trees ([`trees_per_chunk`]) as
/// instances ([`WORLD_TREE`] each), and once the variants' models, every tree's geometry
/// (docs/design/rendering.md, "Trees as instances").
pub fn world_trees(w: &WorldParams, content: &WorldContent) -> Part {
    let trees: f64 = trees_per_chunk(w).iter().sum();
    let models: u64 = (content.trees.iter())
        .flat_map(|kind| kind.variants.iter().zip(&kind.leaves))
        .map(|(g, l)| g.len() as u64 * WORLD_SEGMENT + l.len() as u64 * WORLD_LEAF)
        .sum();
    let resident = resident_chunks(w);
    let instances = (trees * WORLD_TREE as f64 * resident as f64) as u64;
    Part {
        field: "world.trees".into(),
        what: format!(
            "up to {resident} resident chunks × about {trees:.0} trees drawn ({WORLD_TREE} bytes each), and {:.1} MB of their variants' models",
            models as f64 / 1e6
        ),
        bytes: instances.saturating_add(models),
    }
}

/// The part of `forest`'s placed trees (segments and leaves in all), and of its variants as the
/// models its far trees are cards of (a copy of each variant's cylinders and leaves).
pub fn forest(forest: &Forest) -> Part {
    let s = &forest.stats;
    let (segments, leaves) = (s.segments as u64, s.leaves as u64);
    let variants = |n: fn(&BranchGraph, &Leaves) -> usize| -> u64 {
        (forest.variants.iter().zip(&forest.leaves))
            .flat_map(|(graphs, leaves)| graphs.iter().zip(leaves))
            .map(|(g, l)| n(g, l) as u64)
            .sum()
    };
    let models = variants(|g, _| g.len())
        .saturating_mul(WORLD_SEGMENT)
        .saturating_add(variants(|_, l| l.len()).saturating_mul(WORLD_LEAF));
    Part {
        field: "forest.placement.count".into(),
        what: format!("{} trees with {segments} segments and {leaves} leaves", s.trees),
        bytes: segments
            .saturating_mul(SEGMENT)
            .saturating_add(leaves.saturating_mul(LEAF))
            .saturating_add(models),
    }
}

/// This machine's physical memory (Linux: `MemTotal` in /proc/meminfo).
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("8X").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn the_largest_part_names_the_error() {
        let mut e = Estimate::default();
        e.add("a", "small".into(), 10);
        e.add("b", "large".into(), 100);
        let over = MemoryLimit::bytes(50).check(&e).unwrap_err();
        assert_eq!(over.field(), "b");
        assert!(over.to_string().contains("b (large)"));
        assert!(MemoryLimit::bytes(110).check(&e).is_ok());
        assert!(MemoryLimit::NONE.check(&e).is_ok());
    }
}
