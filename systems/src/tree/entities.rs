//! Trees as entities: one entity per tree and one per branch segment, so
//! users can query, pick and extend trees like anything else in the world.

use std::collections::HashMap;
use std::ops::Range;

use glam::Vec3;
use hecs::Entity;
use serde::{Deserialize, Serialize};
use sylva_runtime::extract::{CylinderBatch, LeafBatch, TreeAnchor, TreeExtent, TreeInstances, TreeModel, TreeModels};
use sylva_runtime::{Access, App, System};

use super::{BranchGraph, NO_PARENT, Placement, TreeError, TreeLook};

/// A tree; its segments point at it with [`TreeMember`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// Where it stands and how its graph was scaled into the world.
    pub position: Vec3,
    /// Metres per graph unit.
    pub scale: f32,
    /// Number of segments spawned for it.
    pub segments: u32,
}

/// One branch segment in world space (metres, Y up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// Start of the axis.
    pub start: Vec3,
    /// End of the axis.
    pub end: Vec3,
    /// Radius at `start`.
    pub start_radius: f32,
    /// Radius at `end`.
    pub end_radius: f32,
}

/// The segment this one grows from (absent on a tree's root segments).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SegmentParent(pub Entity);

/// Branch depth Z of a segment (0 for the trunk).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BranchDepth(pub u32);

/// The tree a segment belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeMember(pub Entity);

/// Spawns a tree entity and one entity per segment of `graph`, placed in the
/// world by `placement`. Returns the tree entity.
///
/// Fails, spawning nothing, when the graph is invalid.
pub fn spawn_tree(world: &mut hecs::World, graph: &BranchGraph, placement: Placement) -> Result<Entity, TreeError> {
    graph.validate()?;
    let tree = world.spawn((Tree {
        position: placement.position,
        scale: placement.scale,
        segments: graph.len() as u32,
    },));
    let mut entities: Vec<Entity> = Vec::with_capacity(graph.len());
    for i in 0..graph.len() {
        let segment = Segment {
            start: placement.point(graph.start[i]),
            end: placement.point(graph.end[i]),
            start_radius: placement.length(graph.start_radius[i]),
            end_radius: placement.length(graph.end_radius[i]),
        };
        let common = (segment, BranchDepth(graph.depth[i]), TreeMember(tree));
        let entity = match graph.parent[i] {
            NO_PARENT => world.spawn(common),
            // validate() guarantees parents precede children.
            p => world.spawn((common.0, common.1, common.2, SegmentParent(entities[p as usize]))),
        };
        entities.push(entity);
    }
    Ok(tree)
}

/// Room in `world` for `trees` more trees of `segments` segments in all, spawned one after
/// another ([`spawn_tree`]; a forest's): a forest's segments spawned into archetypes that grew
/// by doubling were copied and faulted in again at every step, half of building the forest.
/// Only room: entities and their order are those of spawning without it (and counts beyond
/// what hecs can hold reserve nothing).
pub(crate) fn reserve_trees(world: &mut hecs::World, trees: usize, segments: usize) {
    let (Ok(trees), Ok(segments)) = (u32::try_from(trees), u32::try_from(segments)) else {
        return;
    };
    world.reserve::<(Tree,)>(trees);
    world.reserve::<(Segment, BranchDepth, TreeMember)>(trees);
    world.reserve::<(Segment, BranchDepth, TreeMember, SegmentParent)>(segments);
}

/// Every tree segment as a cylinder: the extraction batch renderers read.
#[derive(Debug, Default)]
pub struct TreeBatch {
    /// One cylinder per segment, in its tree's bark colour ([`TreeBatch::set_bark`]).
    pub cylinders: CylinderBatch,
    /// The leaves of the trees a scene builds (its tree and forest), world space. They are
    /// render data, not entities: builders add them when they spawn the trees, and the
    /// extraction leaves them be.
    pub leaves: LeafBatch,
    /// Segments in the world when the batch was last filled. Trees are static
    /// until they grow, so the batch is refilled only when this changes.
    segments: usize,
    /// Bark colour per tree entity. It lives here, not in a component, because the look only
    /// shows: a component would be part of snapshots and state hashes. Snapshots restore
    /// entities at their own indices, so the keys stay valid across a load.
    barks: HashMap<Entity, [u8; 4]>,
    /// Which tree entity each run of `leaves` belongs to ([`TreeBatch::leaves_of`]).
    leaf_trees: Vec<(Entity, Range<usize>)>,
    /// The models far trees are drawn as cards of ([`TreeBatch::set_models`]).
    pub models: TreeModels,
    /// Every tree as an instance of its model in `models` ([`TreeBatch::card`]), in the
    /// extraction's order, while every tree of the batch has one; empty while any has none, so that a
    /// renderer draws the batch whole as geometry rather than cutting away a far tree that
    /// has no card to stand for it.
    pub cards: TreeInstances,
    /// The model of each tree given one.
    card_models: HashMap<Entity, u32>,
}

impl TreeBatch {
    /// Colours the segments of `tree` (an entity [`spawn_tree`] returned) `bark`, its species'
    /// [`TreeLook::bark`], from the next extraction on; trees never given one wear the default
    /// look's bark.
    ///
    /// ```
    /// use sylva_systems::tree::{BranchGraph, NO_PARENT, Placement, TreeBatch, install_extraction, spawn_tree};
    /// let mut app = sylva_runtime::App::new(Default::default()).unwrap();
    /// install_extraction(&mut app);
    /// let mut graph = BranchGraph::new();
    /// graph.push(glam::Vec3::ZERO, glam::Vec3::Z, NO_PARENT, 0);
    /// let at = Placement { position: glam::Vec3::ZERO, scale: 1.0 };
    /// let tree = spawn_tree(&mut app.world.entities, &graph, at).unwrap();
    /// app.world.resources.get_mut::<TreeBatch>().unwrap().set_bark(tree, [10, 20, 30, 255]);
    /// app.advance(1);
    /// assert_eq!(app.world.resources.get::<TreeBatch>().unwrap().cylinders.colour, [[10, 20, 30, 255]]);
    /// ```
    pub fn set_bark(&mut self, tree: Entity, bark: [u8; 4]) {
        self.barks.insert(tree, bark);
        // Force a refill: the segment count alone would not notice a new colour.
        self.segments = usize::MAX;
    }

    /// Says the leaves from `from` to the end of `leaves` are those of `tree` (an entity
    /// [`spawn_tree`] returned): from the next extraction on they carry its anchor, as its
    /// segments do, and lean with its wood in the wind.
    ///
    /// ```
    /// use glam::Vec3;
    /// use sylva_runtime::extract::LEAF_REACH;
    /// use sylva_systems::tree::{BranchGraph, NO_PARENT, Placement, TreeBatch, install_extraction, spawn_tree};
    /// let mut app = sylva_runtime::App::new(Default::default()).unwrap();
    /// install_extraction(&mut app);
    /// let mut graph = BranchGraph::new();
    /// graph.push(Vec3::ZERO, Vec3::Z * 2.0, NO_PARENT, 0);
    /// let at = Placement { position: Vec3::new(5.0, 1.0, 0.0), scale: 1.0 };
    /// let tree = spawn_tree(&mut app.world.entities, &graph, at).unwrap();
    /// {
    ///     let mut batch = app.world.resources.get_mut::<TreeBatch>().unwrap();
    ///     batch.leaves.push(Vec3::new(5.0, 3.0, 0.0), Vec3::Y, 0.1, [40, 160, 40, 255]);
    ///     batch.leaves_of(tree, 0);
    /// }
    /// app.advance(1);
    /// let batch = app.world.resources.get::<TreeBatch>().unwrap();
    /// let anchor = batch.cylinders.tree[0];
    /// // From the root to the top of the leaf's card.
    /// assert_eq!((anchor.root, anchor.height), (at.position, 2.0 + 0.1 * LEAF_REACH));
    /// assert_eq!(batch.leaves.tree[0], anchor);
    /// ```
    pub fn leaves_of(&mut self, tree: Entity, from: usize) {
        self.leaves_in(tree, from..self.leaves.len());
    }

    /// Says the leaves `run` of `leaves` are those of `tree`, as [`TreeBatch::leaves_of`] does
    /// for the last ones: for trees whose leaves were pushed at once.
    pub(crate) fn leaves_in(&mut self, tree: Entity, run: Range<usize>) {
        self.leaf_trees.push((tree, run));
        self.segments = usize::MAX;
    }

    /// Makes `models` the models [`TreeBatch::card`] indexes, as a new generation (so a
    /// renderer bakes them anew).
    pub fn set_models(&mut self, models: Vec<TreeModel>) {
        self.models = TreeModels {
            models,
            generation: self.models.generation + 1,
            shrubs: Vec::new(),
        };
    }

    /// Gives `tree` (an entity [`spawn_tree`] returned) a card: far off it may be drawn as model
    /// `model` of [`TreeBatch::models`], placed at its root, from the next extraction on. The
    /// model is the tree in its own frame ([`model`](super::model)), so it must be the graph,
    /// scale, bark and leaves the tree was spawned and dressed with.
    ///
    /// ```
    /// use sylva_systems::tree::{BranchGraph, Leaves, NO_PARENT, Placement, TreeBatch, install_extraction, model, spawn_tree};
    /// let mut app = sylva_runtime::App::new(Default::default()).unwrap();
    /// install_extraction(&mut app);
    /// let mut graph = BranchGraph::new();
    /// graph.push(glam::Vec3::ZERO, glam::Vec3::Z, NO_PARENT, 0);
    /// let at = Placement { position: glam::Vec3::new(5.0, 0.0, 2.0), scale: 1.0 };
    /// let tree = spawn_tree(&mut app.world.entities, &graph, at).unwrap();
    /// let mut batch = app.world.resources.get_mut::<TreeBatch>().unwrap();
    /// batch.set_models(vec![model(&graph, &Leaves::new(), 1.0, [90, 70, 50, 255], [40, 90, 30, 255])]);
    /// batch.card(tree, 0);
    /// drop(batch);
    /// app.advance(1);
    /// let batch = app.world.resources.get::<TreeBatch>().unwrap();
    /// assert_eq!((batch.cards.model.clone(), batch.cards.position.clone()), (vec![0], vec![at.position]));
    /// ```
    pub fn card(&mut self, tree: Entity, model: u32) {
        self.card_models.insert(tree, model);
        self.segments = usize::MAX;
    }
}

/// Every tree as an instance of its card's model; none when some tree has no card
/// ([`TreeBatch::cards`]).
fn cards(ctx: &sylva_runtime::SystemContext<'_>, models: &HashMap<Entity, u32>) -> TreeInstances {
    let mut query = ctx.query::<(Entity, &Tree)>();
    let placed: Option<Vec<(u32, Vec3)>> = query
        .iter()
        .map(|(entity, tree)| models.get(&entity).map(|&m| (m, tree.position)))
        .collect();
    let mut cards = TreeInstances::default();
    for (model, position) in placed.unwrap_or_default() {
        cards.push(model, position, 0.0, 1.0);
    }
    cards
}

/// Each tree's anchor: its root, and its height from the lowest to the highest point of its
/// segments' end spheres and its leaves' cards (`leaves`, whose runs `leaf_trees` names): its
/// [`TreeExtent`], as a renderer measures its card.
fn anchors(
    ctx: &sylva_runtime::SystemContext<'_>,
    leaves: &LeafBatch,
    leaf_trees: &[(Entity, Range<usize>)],
) -> HashMap<Entity, TreeAnchor> {
    let mut extent: HashMap<Entity, TreeExtent> = HashMap::new();
    for archetype in ctx.archetypes_with::<Segment>() {
        let segments = ctx.column::<Segment>(archetype).expect("archetype has Segment");
        let Some(members) = ctx.column::<TreeMember>(archetype) else {
            continue;
        };
        for (s, m) in segments.iter().zip(members.iter()) {
            let e = extent.entry(m.0).or_insert(TreeExtent::EMPTY);
            e.add_wood(s.start.y, s.start_radius);
            e.add_wood(s.end.y, s.end_radius);
        }
    }
    for (tree, parts) in leaf_trees {
        let e = extent.entry(*tree).or_insert(TreeExtent::EMPTY);
        for k in parts.start..parts.end.min(leaves.len()) {
            e.add_leaf(leaves.position[k].y, leaves.size[k]);
        }
    }
    let mut query = ctx.query::<(Entity, &Tree)>();
    query
        .iter()
        .filter_map(|(entity, tree)| {
            let height = extent.get(&entity).filter(|e| !e.is_empty())?.height();
            Some((
                entity,
                TreeAnchor {
                    root: tree.position,
                    height,
                },
            ))
        })
        .collect()
}

/// Name of the frame system [`install_extraction`] adds.
pub const EXTRACT_SYSTEM: &str = "tree.extract";

/// Registers the tree components for snapshots and adds [`EXTRACT_SYSTEM`], a
/// frame system that keeps [`TreeBatch`] in step with the segment entities.
pub fn install_extraction(app: &mut App) {
    app.world.resources.insert(TreeBatch::default());
    app.snapshot_registry_mut()
        .component::<Tree>("tree.tree")
        .component::<Segment>("tree.segment")
        .component::<SegmentParent>("tree.parent")
        .component::<BranchDepth>("tree.depth")
        .component::<TreeMember>("tree.member");
    app.add_frame_system(System::new(
        EXTRACT_SYSTEM,
        Access::new()
            .read::<Tree>()
            .read::<Segment>()
            .read::<TreeMember>()
            .write_res::<TreeBatch>(),
        |ctx| {
            let count: usize = ctx.archetypes_with::<Segment>().map(|a| a.len() as usize).sum();
            let mut batch = ctx.res_mut::<TreeBatch>();
            if count == batch.segments {
                return;
            }
            batch.segments = count;
            let TreeBatch {
                cylinders,
                leaves,
                barks,
                leaf_trees,
                cards: instances,
                card_models,
                ..
            } = &mut *batch;
            *instances = cards(ctx, card_models);
            let anchors = anchors(ctx, leaves, leaf_trees);
            cylinders.clear();
            let default = TreeLook::default().bark;
            for archetype in ctx.archetypes_with::<Segment>() {
                let segments = ctx.column::<Segment>(archetype).expect("archetype has Segment");
                let Some(members) = ctx.column::<TreeMember>(archetype) else {
                    continue;
                };
                for (s, m) in segments.iter().zip(members.iter()) {
                    let bark = barks.get(&m.0).copied().unwrap_or(default);
                    cylinders.push(s.start, s.end, s.start_radius, s.end_radius, bark);
                    if let Some(&anchor) = anchors.get(&m.0) {
                        cylinders.set_tree(cylinders.len() - 1..cylinders.len(), anchor);
                    }
                }
            }
            for (tree, parts) in leaf_trees.iter() {
                if let Some(&anchor) = anchors.get(tree) {
                    leaves.set_tree(parts.clone(), anchor);
                }
            }
        },
    ));
}
