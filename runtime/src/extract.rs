//! The render extraction contract: plain structure-of-arrays batches that any
//! renderer (Sylva's Vulkan one, or an embedding engine's own) can draw.
//!
//! Systems fill batches as resources; a renderer reads them after a frame and
//! uploads only the [dirty ranges](DirtyRange). No Vulkan type appears here.
//!
//! A frame system extracting fence posts into a [`CylinderBatch`], and a renderer's side of
//! it: after the frame it takes the dirty range to upload, and a frame that changed nothing
//! leaves nothing to upload.
//!
//! ```
//! use sylva_runtime::extract::{CylinderBatch, DirtyRange};
//! use sylva_runtime::glam::Vec3;
//! use sylva_runtime::{Access, App, AppConfig, System};
//!
//! /// A fence post, a component of the simulation.
//! struct Post {
//!     base: Vec3,
//!     height: f32,
//! }
//!
//! let mut app = App::new(AppConfig { threads: 1, ..AppConfig::default() })?;
//! for x in 0..3 {
//!     let base = Vec3::new(x as f32, 0.0, 0.0);
//!     app.world.entities.spawn((Post { base, height: 1.2 },));
//! }
//! app.world.resources.insert(CylinderBatch::default());
//! let access = Access::new().read::<Post>().write_res::<CylinderBatch>();
//! app.add_frame_system(System::new("posts.extract", access, |ctx| {
//!     let mut batch = ctx.res_mut::<CylinderBatch>();
//!     // Posts never move: extracted once, and left alone (clean) after that.
//!     if batch.is_empty() {
//!         for post in ctx.query::<&Post>().iter() {
//!             let top = post.base + Vec3::Y * post.height;
//!             batch.push(post.base, top, 0.06, 0.05, [120, 90, 60, 255]);
//!         }
//!     }
//! }));
//!
//! app.update(1.0 / 60.0);
//! let mut batch = app.world.resources.get_mut::<CylinderBatch>().unwrap();
//! assert_eq!(batch.len(), 3);
//! assert_eq!(batch.dirty.take(), DirtyRange { start: 0, end: 3 }, "the renderer uploads all three");
//! drop(batch);
//! app.update(1.0 / 60.0);
//! let batch = app.world.resources.get::<CylinderBatch>().unwrap();
//! assert!(batch.dirty.is_clean(), "nothing changed, nothing to upload");
//! # Ok::<(), sylva_runtime::AppError>(())
//! ```

use std::ops::Range;

use glam::{Mat4, Vec3};
use serde::{Deserialize, Serialize};

/// A half-open range of instances that changed since the renderer last looked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirtyRange {
    /// First changed instance.
    pub start: u32,
    /// One past the last changed instance; `start == end` means clean.
    pub end: u32,
}

impl DirtyRange {
    /// True when nothing changed.
    pub fn is_clean(&self) -> bool {
        self.start >= self.end
    }

    /// Grows the range to cover `start..end`.
    pub fn mark(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        if self.is_clean() {
            *self = DirtyRange { start, end };
        } else {
            self.start = self.start.min(start);
            self.end = self.end.max(end);
        }
    }

    /// Returns the range and marks the batch clean (called by the renderer after upload).
    pub fn take(&mut self) -> DirtyRange {
        std::mem::take(self)
    }
}

/// Which tree a cylinder or leaf is part of: where it stands and how tall it is. A renderer
/// sways a tree's parts more the higher up they are (its root stays put) and fades them out
/// where the same tree's impostor card fades in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeAnchor {
    /// The root, world space (a [`TreeInstances`] position).
    pub root: Vec3,
    /// Height from the lowest to the highest point of the tree (its card's), metres; 0: the
    /// part is of no tree.
    pub height: f32,
}

/// How far a leaf card reaches from its centre, in leaf sizes: half its diagonal.
pub const LEAF_REACH: f32 = std::f32::consts::FRAC_1_SQRT_2;

impl TreeAnchor {
    /// Part of no tree: never replaced by a card, and wood that holds still in the wind.
    pub const NONE: TreeAnchor = TreeAnchor {
        root: Vec3::ZERO,
        height: 0.0,
    };

    /// The anchor of a tree rooted at `root` whose parts are the `cylinders` from `from.0` on
    /// and the `leaves` from `from.1` on: its height is theirs ([`TreeExtent`]).
    ///
    /// ```
    /// use sylva_runtime::extract::{CylinderBatch, LeafBatch, TreeAnchor};
    /// use sylva_runtime::glam::Vec3;
    ///
    /// let mut wood = CylinderBatch::default();
    /// wood.push(Vec3::ZERO, Vec3::new(0.0, 4.0, 0.0), 0.5, 0.25, [90, 60, 40, 255]);
    /// let anchor = TreeAnchor::of(Vec3::ZERO, (&wood, &LeafBatch::default()), (0, 0));
    /// assert_eq!(anchor.height, 4.75);
    /// ```
    pub fn of(root: Vec3, parts: (&CylinderBatch, &LeafBatch), from: (usize, usize)) -> TreeAnchor {
        TreeAnchor {
            root,
            height: TreeExtent::of(parts, from).height(),
        }
    }
}

/// The lowest and highest point of a tree's parts: its segments' end spheres and its leaves'
/// cards. A tree's anchor and its impostor card are measured so, and must be: the geometry
/// and the card fade by the same height on screen.
///
/// ```
/// use sylva_runtime::extract::{LEAF_REACH, TreeExtent};
///
/// let mut extent = TreeExtent::EMPTY;
/// extent.add_wood(0.0, 0.5);
/// extent.add_leaf(4.0, 1.0);
/// assert_eq!((extent.bottom, extent.top), (-0.5, 4.0 + LEAF_REACH));
/// assert_eq!(TreeExtent::EMPTY.height(), 0.0);
/// assert!(TreeExtent::EMPTY.is_empty() && !extent.is_empty());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeExtent {
    /// Lowest y, metres.
    pub bottom: f32,
    /// Highest y, metres.
    pub top: f32,
}

impl TreeExtent {
    /// No parts yet: bottom above top.
    pub const EMPTY: TreeExtent = TreeExtent {
        bottom: f32::INFINITY,
        top: f32::NEG_INFINITY,
    };

    /// The extent of the `cylinders` from `from.0` on and the `leaves` from `from.1` on.
    pub fn of((cylinders, leaves): (&CylinderBatch, &LeafBatch), from: (usize, usize)) -> TreeExtent {
        let mut extent = TreeExtent::EMPTY;
        for i in from.0..cylinders.len() {
            extent.add_wood(cylinders.start[i].y, cylinders.start_radius[i]);
            extent.add_wood(cylinders.end[i].y, cylinders.end_radius[i]);
        }
        for i in from.1..leaves.len() {
            extent.add_leaf(leaves.position[i].y, leaves.size[i]);
        }
        extent
    }

    /// Whether no part was added.
    pub fn is_empty(&self) -> bool {
        self.bottom > self.top
    }

    /// Adds a segment's end sphere at height `y` of `radius`.
    pub fn add_wood(&mut self, y: f32, radius: f32) {
        self.bottom = self.bottom.min(y - radius);
        self.top = self.top.max(y + radius);
    }

    /// Adds a leaf card at height `y` of `size` (it reaches [`LEAF_REACH`] sizes).
    pub fn add_leaf(&mut self, y: f32, size: f32) {
        self.add_wood(y, size * LEAF_REACH);
    }

    /// Top minus bottom; 0 with no parts.
    pub fn height(&self) -> f32 {
        (self.top - self.bottom).max(0.0)
    }
}

/// Sets `tree[parts]` (clamped to its length) to `anchor` and marks it dirty.
fn set_tree(tree: &mut [TreeAnchor], dirty: &mut DirtyRange, parts: Range<usize>, anchor: TreeAnchor) {
    let parts = parts.start.min(tree.len())..parts.end.min(tree.len());
    tree[parts.clone()].fill(anchor);
    dirty.mark(parts.start as u32, parts.end as u32);
}

/// Instanced cylinders: branch segments, springs, anything drawn as a tapered tube.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CylinderBatch {
    /// Axis start points.
    pub start: Vec<Vec3>,
    /// Axis end points.
    pub end: Vec<Vec3>,
    /// Radius at `start`.
    pub start_radius: Vec<f32>,
    /// Radius at `end`.
    pub end_radius: Vec<f32>,
    /// Linear RGBA colour, 8 bits per channel.
    pub colour: Vec<[u8; 4]>,
    /// The tree each instance belongs to ([`TreeAnchor`]); [`TreeAnchor::NONE`] for parts of
    /// no tree.
    pub tree: Vec<TreeAnchor>,
    /// Instances changed since the last upload.
    pub dirty: DirtyRange,
}

impl CylinderBatch {
    /// Number of instances.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Appends one instance and marks it dirty.
    pub fn push(&mut self, start: Vec3, end: Vec3, start_radius: f32, end_radius: f32, colour: [u8; 4]) {
        let i = self.len() as u32;
        self.start.push(start);
        self.end.push(end);
        self.start_radius.push(start_radius);
        self.end_radius.push(end_radius);
        self.colour.push(colour);
        self.tree.push(TreeAnchor::NONE);
        self.dirty.mark(i, i + 1);
    }

    /// Marks the instances in `parts` as parts of the tree `anchor`.
    pub fn set_tree(&mut self, parts: Range<usize>, anchor: TreeAnchor) {
        set_tree(&mut self.tree, &mut self.dirty, parts, anchor);
    }

    /// Removes every instance; the renderer frees or recycles their buffer space.
    pub fn clear(&mut self) {
        self.start.clear();
        self.end.clear();
        self.start_radius.clear();
        self.end_radius.clear();
        self.colour.clear();
        self.tree.clear();
        self.dirty = DirtyRange::default();
    }
}

/// Instanced leaves: one alpha-tested card per leaf, facing along its normal.
///
/// World space, Y up, metres, like [`CylinderBatch`]. A renderer draws each
/// leaf as a square card of side `size` centred on `position`, cut to a leaf
/// shape; the card's in-plane rotation is its own business (Sylva's renderer
/// hashes it from the position), so only the normal is part of the contract.
///
/// ```
/// use sylva_runtime::glam::Vec3;
/// use sylva_runtime::extract::LeafBatch;
///
/// let mut leaves = LeafBatch::default();
/// leaves.push(Vec3::new(0.0, 3.0, 0.0), Vec3::Y, 0.2, [70, 120, 45, 255]);
/// assert_eq!(leaves.len(), 1);
/// assert_eq!((leaves.dirty.start, leaves.dirty.end), (0, 1));
/// leaves.clear();
/// assert!(leaves.is_empty() && leaves.dirty.is_clean());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LeafBatch {
    /// Card centres.
    pub position: Vec<Vec3>,
    /// Unit normals of the leaf planes (either side may face the viewer).
    pub normal: Vec<Vec3>,
    /// Leaf length, tip to stalk: the side of the card.
    pub size: Vec<f32>,
    /// Linear RGBA colour, 8 bits per channel.
    pub colour: Vec<[u8; 4]>,
    /// The tree each leaf belongs to ([`TreeAnchor`]); [`TreeAnchor::NONE`] for loose leaves.
    pub tree: Vec<TreeAnchor>,
    /// Instances changed since the last upload.
    pub dirty: DirtyRange,
}

impl LeafBatch {
    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// True when the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Makes room for at least `additional` more leaves, as [`Vec::reserve`] does for each array.
    ///
    /// ```
    /// # use sylva_runtime::extract::LeafBatch;
    /// let mut batch = LeafBatch::default();
    /// batch.reserve(100);
    /// assert!(batch.position.capacity() >= 100 && batch.tree.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.position.reserve(additional);
        self.normal.reserve(additional);
        self.size.reserve(additional);
        self.colour.reserve(additional);
        self.tree.reserve(additional);
    }

    /// Appends one leaf and marks it dirty.
    pub fn push(&mut self, position: Vec3, normal: Vec3, size: f32, colour: [u8; 4]) {
        let i = self.len() as u32;
        self.position.push(position);
        self.normal.push(normal);
        self.size.push(size);
        self.colour.push(colour);
        self.tree.push(TreeAnchor::NONE);
        self.dirty.mark(i, i + 1);
    }

    /// Marks the leaves in `parts` as leaves of the tree `anchor`.
    pub fn set_tree(&mut self, parts: Range<usize>, anchor: TreeAnchor) {
        set_tree(&mut self.tree, &mut self.dirty, parts, anchor);
    }

    /// Removes every leaf; the renderer frees or recycles their buffer space.
    pub fn clear(&mut self) {
        self.position.clear();
        self.normal.clear();
        self.size.clear();
        self.colour.clear();
        self.tree.clear();
        self.dirty = DirtyRange::default();
    }
}

/// One tree as a renderer may bake it into impostor cards: its cylinders and leaves in the
/// tree's own frame (root at the origin, Y up, metres at scale 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeModel {
    /// Branch segments.
    pub cylinders: CylinderBatch,
    /// Leaves.
    pub leaves: LeafBatch,
}

/// The tree models [`TreeInstances`] refer to by index. A renderer that draws far trees as
/// cards bakes them once per `generation`, so whoever changes `models` bumps it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeModels {
    /// The models, indexed by [`TreeInstances::model`].
    pub models: Vec<TreeModel>,
    /// Bumped whenever `models` change. 0 means no models yet: a renderer bakes nothing for
    /// it, so the first set of models is generation 1.
    pub generation: u64,
    /// Per model, whether it is a shrub (an understory species), which a renderer counts
    /// apart from the trees; missing entries are trees.
    pub shrubs: Vec<bool>,
}

/// Trees as placed copies of [`TreeModels`]: a tree at `position`, turned by `yaw` about +Y and
/// scaled by `scale`, is its model's cylinders and leaves moved so. The same trees' geometry
/// may be in cylinder and leaf batches too; a renderer picks per distance which it draws.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeInstances {
    /// Index into [`TreeModels::models`] per tree.
    pub model: Vec<u32>,
    /// Root position per tree, world metres.
    pub position: Vec<Vec3>,
    /// Rotation about +Y per tree, radians.
    pub yaw: Vec<f32>,
    /// Uniform scale per tree.
    pub scale: Vec<f32>,
    /// Trees changed since the last upload.
    pub dirty: DirtyRange,
}

impl TreeInstances {
    /// Number of trees.
    pub fn len(&self) -> usize {
        self.model.len()
    }

    /// True when there are no trees.
    pub fn is_empty(&self) -> bool {
        self.model.is_empty()
    }

    /// Appends one tree and marks it dirty.
    pub fn push(&mut self, model: u32, position: Vec3, yaw: f32, scale: f32) {
        let i = self.len() as u32;
        self.model.push(model);
        self.position.push(position);
        self.yaw.push(yaw);
        self.scale.push(scale);
        self.dirty.mark(i, i + 1);
    }
}

/// Points drawn as small screen-space dots: attractor clouds, debug markers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointBatch {
    /// Positions, world space.
    pub position: Vec<Vec3>,
    /// Linear RGBA colour, 8 bits per channel.
    pub colour: Vec<[u8; 4]>,
    /// Points changed since the last upload.
    pub dirty: DirtyRange,
}

impl PointBatch {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.position.len()
    }

    /// True when the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Appends one point and marks it dirty.
    pub fn push(&mut self, position: Vec3, colour: [u8; 4]) {
        let i = self.len() as u32;
        self.position.push(position);
        self.colour.push(colour);
        self.dirty.mark(i, i + 1);
    }

    /// Removes every point; the renderer frees or recycles their buffer space.
    pub fn clear(&mut self) {
        self.position.clear();
        self.colour.clear();
        self.dirty = DirtyRange::default();
    }
}

/// One terrain chunk as a renderer draws it: square planes of samples, sample
/// `(i, j)` at `origin + (i·cell_size, height, j·cell_size)`, index `j·resolution + i`.
/// The last row and column repeat the neighbouring chunk's first ones so that
/// chunks meet without gaps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TerrainPatch {
    /// The chunk's identity (its grid coordinate); stable while the chunk lives.
    pub key: [i32; 2],
    /// World position of sample (0, 0) at height 0.
    pub origin: Vec3,
    /// Distance between neighbouring samples, metres.
    pub cell_size: f32,
    /// Samples per side.
    pub resolution: u32,
    /// Ground (rock) height per sample, metres above `origin.y`.
    pub height: Vec<f32>,
    /// Top material per sample (the terrain's material byte; 255: bare).
    pub material: Vec<u8>,
    /// Standing or flowing water depth per sample, metres.
    pub water: Vec<f32>,
    /// The chunk's ground cover, which a renderer expands into the blades of the
    /// [`GrassLayer`]s with a [`CoverRule`] (none: no blades grow here).
    pub cover: Option<GroundCover>,
    /// The planes changed since the renderer last uploaded them.
    pub dirty: bool,
}

/// A chunk's ground cover as a renderer expands it: sylva-systems' `CoverField`
/// packed for the GPU. Blade `b` of world cell `c` is the same wherever it is
/// expanded: by the library on the CPU or by a renderer's compute pass
/// (docs/design/grass.md, "Blades from the field on the GPU").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroundCover {
    /// Seed of the blade hash.
    pub seed: u32,
    /// World cell of the patch's cell (0, 0).
    pub origin_cell: [i32; 2],
    /// Cells between samples, 1 to [`MAX_COVER_SPACING`].
    pub spacing: u32,
    /// Samples along a side.
    pub side: u32,
    /// Per sample, row by row: blades per cell in 1/256 (bits 0..16) and the kind (bits
    /// 16..24; 255: none).
    pub samples: Vec<u32>,
}

/// The widest sample spacing of a [`GroundCover`]: a cell's blended density then fits
/// 32 bits, which a shader's integers hold.
pub const MAX_COVER_SPACING: u32 = 64;

impl GroundCover {
    /// True when there are `side²` samples, `side ≥ 2`, and the spacing is within
    /// 1..=[`MAX_COVER_SPACING`].
    pub fn is_consistent(&self) -> bool {
        self.side >= 2
            && (1..=MAX_COVER_SPACING).contains(&self.spacing)
            && self.samples.len() == self.side as usize * self.side as usize
    }
}

/// Where the blades of a [`GrassLayer`] grow out of the ground cover: the cells
/// whose kind is `kind`, where the ground passes the rules, `share` of each
/// cell's blades. A cell's ground is its four corners' heights and its own
/// corner's material, as [`CoverRule::allows`] reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoverRule {
    /// The cover kind this layer's blades are.
    pub kind: u8,
    /// Share of each cell's blades drawn, 0 to 1 (the nearest; distance thins further).
    pub share: f32,
    /// Allowed gradient, inclusive, as the squared sum `dx² + dz²` of the cell's corner
    /// differences (`dx = h₁ − h₀ + h₃ − h₂`, `dz = h₂ − h₀ + h₃ − h₁`): the slope in
    /// degrees θ is `(2 · cell_size · tan θ)²` here, so no side needs an arctangent.
    pub gradient: [f32; 2],
    /// Allowed ground height (the mean of the corners), metres, inclusive.
    pub height: [f32; 2],
    /// Bit `m`: material byte `m` allowed (0 to 30); bit 31: any other byte (no material).
    pub materials: u32,
    /// The blades' scale range.
    pub scale: [f32; 2],
    /// Linear RGBA colour of every blade.
    pub colour: [u8; 4],
}

impl CoverRule {
    /// The gradient bound of a slope of `degrees` on cells of `cell_size` metres (infinite
    /// from 90°).
    pub fn gradient_of(degrees: f32, cell_size: f32) -> f32 {
        if degrees >= 90.0 {
            return f32::INFINITY;
        }
        let g = 2.0 * cell_size * degrees.max(0.0).to_radians().tan();
        g * g
    }

    /// Whether a cell of corner heights `h` (row by row: (0,0), (1,0), (0,1), (1,1)) and
    /// material byte `material` passes the rule. The shader does this arithmetic step by
    /// step in the same order, so both agree bit for bit.
    pub fn allows(&self, h: [f32; 4], material: u8) -> bool {
        let dx = h[1] - h[0] + h[3] - h[2];
        let dz = h[2] - h[0] + h[3] - h[1];
        let gradient = dx * dx + dz * dz;
        let height = 0.25 * (h[0] + h[1] + h[2] + h[3]);
        let bit = if material < 31 { material } else { 31 };
        (self.gradient[0]..=self.gradient[1]).contains(&gradient)
            && (self.height[0]..=self.height[1]).contains(&height)
            && self.materials >> bit & 1 == 1
    }
}

impl TerrainPatch {
    /// True when every plane has `resolution²` samples (≥ 2 per side) and the cell size is positive.
    pub fn is_consistent(&self) -> bool {
        let n = self.resolution as usize * self.resolution as usize;
        self.resolution >= 2
            && self.cell_size > 0.0
            && self.height.len() == n
            && self.material.len() == n
            && self.water.len() == n
    }
}

/// The terrain as patches, plus the keys of chunks that went away since the
/// renderer last looked (it frees their textures).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TerrainBatch {
    /// Live chunks.
    pub patches: Vec<TerrainPatch>,
    /// Keys of removed chunks, drained by the renderer.
    pub evicted: Vec<[i32; 2]>,
}

/// The far field: coarse ground heights around a centre, drawn beyond the
/// streamed chunks out to the horizon (a renderer lowers it under the chunks,
/// which replace it). Sample `(i, j)` lies at world `(origin.x + i·spacing,
/// origin.y + j·spacing)` in x and z, index `j·resolution + i`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HorizonField {
    /// World x and z of sample (0, 0), metres.
    pub origin: glam::Vec2,
    /// Distance between neighbouring samples, metres.
    pub spacing: f32,
    /// Samples per side.
    pub resolution: u32,
    /// Ground height per sample, metres (below the sea level where the sea lies).
    pub height: Vec<f32>,
    /// Share of the ground under tree crowns per sample, 0 to 1 (empty: none known).
    pub canopy: Vec<f32>,
}

impl HorizonField {
    /// True when the heights fill `resolution²` samples (≥ 2 per side), all finite, the
    /// spacing is positive, and the canopy is empty or one share in 0..=1 per sample.
    pub fn is_consistent(&self) -> bool {
        let n = self.resolution as usize * self.resolution as usize;
        self.resolution >= 2
            && self.spacing > 0.0
            && self.spacing.is_finite()
            && self.height.len() == n
            && self.height.iter().all(|h| h.is_finite())
            && (self.canopy.is_empty() || self.canopy.len() == n)
            && self.canopy.iter().all(|c| (0.0..=1.0).contains(c))
    }

    /// The world x and z at the field's centre, metres.
    pub fn centre(&self) -> glam::Vec2 {
        self.origin + glam::Vec2::splat(0.5 * self.spacing * (self.resolution.max(1) - 1) as f32)
    }
}

/// What lies beyond the streamed world: a sea to the horizon at one level, and
/// the far field of ground around the viewer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HorizonBatch {
    /// The sea's level, metres (none: no sea, the sky goes down to its haze).
    pub sea_level: Option<f32>,
    /// The far field, once computed (none: only the sea beyond the chunks).
    pub field: Option<HorizonField>,
    /// The field changed since the renderer last uploaded it.
    pub dirty: bool,
}

impl HorizonBatch {
    /// Replaces the far field and marks it for upload.
    pub fn set_field(&mut self, field: HorizonField) {
        self.field = Some(field);
        self.dirty = true;
    }
}

/// How a [`GrassMotion`] stores one displacement texel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum GrassTexel {
    /// Four little-endian IEEE half floats (x, y, z, unused), metres.
    #[default]
    Rgba16F,
    /// The thesis's layout: three bytes, value `(byte − 128) · scale` metres.
    Rgb8 {
        /// Metres per step of a byte.
        scale: f32,
    },
}

impl GrassTexel {
    /// Bytes per texel.
    pub fn bytes(self) -> usize {
        match self {
            GrassTexel::Rgba16F => 8,
            GrassTexel::Rgb8 { .. } => 3,
        }
    }
}

/// Baked, looping grass motion: per link (particle above the root) a 3D texture
/// over field cell (x, z) × frame, holding the particle's displacement from its
/// rest position. A blade whose root is at world `(x, z)` reads cell
/// `(⌊x / cell_size⌋ mod cells, ⌊z / cell_size⌋ mod cells)` (nearest texel), frames are
/// interpolated linearly at `time · wave_speed / frame_seconds` and wrap from the
/// last to the first, and the result is multiplied by `wind_power`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassMotion {
    /// Field cells per side.
    pub cells: u32,
    /// Side of one cell, metres.
    pub cell_size: f32,
    /// Frames in the loop.
    pub frames: u32,
    /// Simulated seconds between frames.
    pub frame_seconds: f32,
    /// Links (textures) per blade: particles minus the root.
    pub links: u32,
    /// Texel encoding.
    pub texel: GrassTexel,
    /// Texels ordered `[link][frame][z][x]`, `texel.bytes()` each.
    pub texels: Vec<u8>,
}

/// A blade shape as drawn: particle 0 is the fixed root, every other particle a
/// row of the blade, joined to its parent by one quad of the row's width.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassShape {
    /// Parent per particle (the root's entry is 0 and unused); parents come first.
    pub parent: Vec<u32>,
    /// Rest position per particle relative to the root, metres, Y up.
    pub rest: Vec<Vec3>,
    /// Blade width at each particle, metres.
    pub width: Vec<f32>,
}

/// One kind of grass on the ground: a shape, its baked motion and its instances.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassLayer {
    /// The blade shape every instance shares.
    pub shape: GrassShape,
    /// The shape's baked motion (`motion.links == shape.rest.len() − 1`).
    pub motion: GrassMotion,
    /// Bumped whenever `shape` or `motion` change; the renderer re-uploads them then.
    pub generation: u64,
    /// Root position per instance, world metres.
    pub root: Vec<Vec3>,
    /// Rotation of the rest pose about +Y per instance, radians (the displacement is not turned).
    pub yaw: Vec<f32>,
    /// Uniform scale of the rest pose per instance.
    pub scale: Vec<f32>,
    /// Linear RGBA colour per instance.
    pub colour: Vec<[u8; 4]>,
    /// Instances changed since the last upload.
    pub dirty: DirtyRange,
    /// Per instance: `u32::MAX` draws the baked motion, any other value `s` draws
    /// `live_displacement[s·links .. (s+1)·links]` instead (a blade being pushed).
    pub live_slot: Vec<u32>,
    /// Displacements of live blades from their rest positions, world metres,
    /// `[slot][link]`; small, uploaded whole every frame.
    pub live_displacement: Vec<Vec3>,
    /// Blades this layer grows out of the terrain patches' ground cover, expanded by
    /// the renderer (none: only the instances above).
    pub cover: Option<CoverRule>,
}

impl GrassLayer {
    /// Number of instances.
    pub fn len(&self) -> usize {
        self.root.len()
    }

    /// True when the layer has no instances.
    pub fn is_empty(&self) -> bool {
        self.root.is_empty()
    }

    /// True when every per-instance array has one entry per instance, the shape's
    /// arrays agree, and the motion holds `links · frames · cells²` texels.
    pub fn is_consistent(&self) -> bool {
        let n = self.len();
        let particles = self.shape.rest.len();
        let m = &self.motion;
        let texels = m.links as usize * m.frames as usize * m.cells as usize * m.cells as usize;
        particles >= 2
            && self.shape.parent.len() == particles
            && self.shape.width.len() == particles
            && m.links as usize == particles - 1
            && m.texels.len() == texels * m.texel.bytes()
            && m.frames >= 1
            && m.cell_size > 0.0
            && [
                self.yaw.len(),
                self.scale.len(),
                self.colour.len(),
                self.live_slot.len(),
            ]
            .iter()
            .all(|&l| l == n)
            && self.live_displacement.len().is_multiple_of(particles - 1)
    }
}

/// All grass of a scene and the shared playback controls (the thesis's Wind
/// Power and Wave Speed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrassBatch {
    /// One layer per blade shape.
    pub layers: Vec<GrassLayer>,
    /// Scales every baked displacement (0 freezes the grass in its rest pose).
    pub wind_power: f32,
    /// Scales playback time.
    pub wave_speed: f32,
    /// Playback time, seconds.
    pub time: f32,
    /// The ground cover's blades simulated live (pushed), by cell: a renderer that
    /// expands the cover gives them their live slots.
    pub live: LiveCells,
}

/// Blades of the ground cover drawn live instead of from the bake: for a cell in
/// `cells`, its blade `b < blades` draws the live displacement in slot
/// `slots[first + b]` of the layer its kind grows (`u32::MAX`: the bake, as for a
/// [`GrassLayer`]'s `live_slot`). A blade is known by its world cell and its index
/// among the cell's blades, wherever it is expanded (docs/design/grass.md, "Live
/// grass in the world").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveCells {
    /// Cells with live blades, sorted by (z, x).
    pub cells: Vec<LiveCell>,
    /// Per cell's blade, from its `first`: a live slot or `u32::MAX`.
    pub slots: Vec<u32>,
}

/// A cell with live blades (see [`LiveCells`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveCell {
    /// The world cell (x, z).
    pub cell: [i32; 2],
    /// Where its blades' slots start in [`LiveCells::slots`].
    pub first: u32,
    /// Its blades with an entry there (the first ones).
    pub blades: u32,
}

impl LiveCells {
    /// The live slot of blade `index` of world cell `cell`, if it has one.
    pub fn slot(&self, cell: [i32; 2], index: u32) -> Option<u32> {
        let k = self
            .cells
            .binary_search_by_key(&(cell[1], cell[0]), |c| (c.cell[1], c.cell[0]))
            .ok()?;
        let c = self.cells[k];
        (index < c.blades)
            .then(|| self.slots.get((c.first + index) as usize).copied())
            .flatten()
            .filter(|&s| s != u32::MAX)
    }

    /// True when the cells are sorted without repeats and every cell's slots are within
    /// `slots`.
    pub fn is_consistent(&self) -> bool {
        self.cells
            .windows(2)
            .all(|w| (w[0].cell[1], w[0].cell[0]) < (w[1].cell[1], w[1].cell[0]))
            && self
                .cells
                .iter()
                .all(|c| u64::from(c.first) + u64::from(c.blades) <= self.slots.len() as u64)
    }
}

/// Most winds a [`SwayWind`] hands the renderer (the grass's `MAX_WINDS`).
pub const SWAY_WINDS: usize = 4;
/// Most gusts the renderer sways leaves with in one frame: those active at its time, in
/// order.
pub const SWAY_GUSTS: usize = 4;

/// One wind of a [`SwayWind`]: three lattice value noises over ground × time (strength, polar
/// and azimuth deflection), as sylva-systems' `grass::wind::Wind` evaluates them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SwayNoise {
    /// Per noise, the node hash's state after the wind's seed and the noise's index (the
    /// first two of the five words `rng::hash_words` folds), so a shader hashes only the
    /// lattice point.
    pub keys: [u64; 3],
    /// Smallest strength and its modulation, m/s.
    pub power: [f32; 2],
    /// Largest polar and azimuth deflection, radians.
    pub deflection: [f32; 2],
    /// Lattice nodes per second along time.
    pub frequency: f32,
    /// Standard deviation of the node values.
    pub deviation: f32,
    /// Metres between lattice nodes on the ground.
    pub spacing: f32,
    /// The unit main direction on the ground, (x, z).
    pub direction: [f32; 2],
    /// Seconds at which it switches on and off.
    pub active: [f32; 2],
}

/// A local, time-limited push of a [`SwayWind`] (sylva-systems' `grass::wind::Gust`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SwayGust {
    /// Centre on the ground (y ignored).
    pub center: Vec3,
    /// Reach, metres.
    pub radius: f32,
    /// Start, seconds.
    pub start: f32,
    /// Duration, seconds.
    pub duration: f32,
    /// Peak wind velocity, m/s.
    pub velocity: Vec3,
}

/// The wind crowns sway in: the scene's grass wind (or a breeze where there is no grass), as
/// the renderer evaluates it per leaf at time `frame time × time_scale`. Default: still air.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwayWind {
    /// The winds, summed; at most [`SWAY_WINDS`] reach the renderer.
    pub winds: Vec<SwayNoise>,
    /// The gusts, added; the renderer takes the first [`SWAY_GUSTS`] active at its time.
    pub gusts: Vec<SwayGust>,
    /// Wind velocity factor (the grass's `wind_power`).
    pub power: f32,
    /// Wind seconds per frame second (the grass's `wave_speed`).
    pub time_scale: f32,
}

impl SwayWind {
    /// Whether any wind blows at some time.
    ///
    /// ```
    /// assert!(!sylva_runtime::extract::SwayWind::default().blows());
    /// ```
    pub fn blows(&self) -> bool {
        self.power > 0.0 && !(self.winds.is_empty() && self.gusts.is_empty())
    }
}

/// A perspective camera.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Camera {
    /// Eye position, world space.
    pub position: Vec3,
    /// Point looked at.
    pub target: Vec3,
    /// Vertical field of view, degrees.
    pub fov_y_degrees: f32,
    /// Near clip distance.
    pub near: f32,
    /// Far clip distance.
    pub far: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            position: Vec3::new(0.0, 5.0, 20.0),
            target: Vec3::ZERO,
            fov_y_degrees: 60.0,
            near: 0.1,
            far: 2000.0,
        }
    }
}

impl Camera {
    /// View-projection matrix for an aspect ratio: right-handed world with Y up,
    /// Vulkan clip space (Y down, depth 0..1).
    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        use glam::camera::rh::{proj::vulkan::perspective, view::look_at_mat4};
        let view = look_at_mat4(self.position, self.target, Vec3::Y);
        let proj = perspective(self.fov_y_degrees.to_radians(), aspect, self.near, self.far);
        proj * view
    }
}

/// The sun: a directional light.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Sun {
    /// Direction the light travels (from the sun toward the ground).
    pub direction: Vec3,
    /// Linear RGB intensity.
    pub colour: Vec3,
}

impl Default for Sun {
    fn default() -> Self {
        Self {
            direction: Vec3::new(-0.4, -1.0, -0.3).normalize(),
            colour: Vec3::splat(1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_ranges_grow_and_clear() {
        let mut d = DirtyRange::default();
        assert!(d.is_clean());
        d.mark(5, 7);
        d.mark(2, 3);
        d.mark(4, 4);
        assert_eq!(d, DirtyRange { start: 2, end: 7 });
        assert_eq!(d.take(), DirtyRange { start: 2, end: 7 });
        assert!(d.is_clean());
    }

    #[test]
    fn cylinder_push_marks_dirty() {
        let mut b = CylinderBatch::default();
        b.push(Vec3::ZERO, Vec3::Y, 1.0, 0.5, [255; 4]);
        b.push(Vec3::Y, Vec3::Y * 2.0, 0.5, 0.2, [255; 4]);
        assert_eq!(b.len(), 2);
        assert_eq!(b.dirty, DirtyRange { start: 0, end: 2 });
        b.clear();
        assert!(b.is_empty() && b.dirty.is_clean());
    }

    #[test]
    fn grass_layer_consistency_counts_texels() {
        let mut l = GrassLayer {
            shape: GrassShape {
                parent: vec![0, 0],
                rest: vec![Vec3::ZERO, Vec3::Y],
                width: vec![0.01, 0.005],
            },
            motion: GrassMotion {
                cells: 2,
                cell_size: 0.5,
                frames: 3,
                frame_seconds: 0.1,
                links: 1,
                texel: GrassTexel::Rgb8 { scale: 0.01 },
                texels: vec![128; 2 * 2 * 3 * 3],
            },
            ..GrassLayer::default()
        };
        assert!(l.is_consistent());
        l.root.push(Vec3::ZERO);
        assert!(!l.is_consistent(), "per-instance arrays must grow together");
        l.yaw.push(0.0);
        l.scale.push(1.0);
        l.colour.push([0, 255, 0, 255]);
        l.live_slot.push(u32::MAX);
        assert!(l.is_consistent());
        l.motion.texel = GrassTexel::Rgba16F;
        assert!(!l.is_consistent(), "RGBA16F needs 8 bytes per texel");
    }

    /// A rule's slope bounds are the slope in degrees, read without an arctangent.
    #[test]
    fn a_cover_rule_reads_slope_height_and_material() {
        let rule = CoverRule {
            kind: 0,
            share: 1.0,
            gradient: [0.0, CoverRule::gradient_of(30.0, 0.5)],
            height: [0.0, 10.0],
            materials: 1 << 4,
            scale: [1.0, 1.0],
            colour: [0; 4],
        };
        // 0.5 m cells rising 0.25 m along x: 26.6°; 0.35 m: 35°.
        assert!(rule.allows([1.0, 1.25, 1.0, 1.25], 4));
        assert!(!rule.allows([1.0, 1.35, 1.0, 1.35], 4));
        assert!(!rule.allows([1.0, 1.25, 1.0, 1.25], 3), "another material");
        assert!(!rule.allows([11.0, 11.0, 11.0, 11.0], 4), "above the height range");
        let anywhere = CoverRule {
            gradient: [0.0, CoverRule::gradient_of(90.0, 0.5)],
            materials: u32::MAX,
            ..rule
        };
        assert!(anywhere.allows([1.0, 9.0, 1.0, 9.0], 255), "a cliff without material");
    }

    #[test]
    fn camera_projects_target_to_centre() {
        let c = Camera::default();
        let clip = c.view_projection(16.0 / 9.0) * c.target.extend(1.0);
        let ndc = clip.truncate() / clip.w;
        assert!(ndc.x.abs() < 1e-5 && ndc.y.abs() < 1e-5);
        assert!((0.0..1.0).contains(&ndc.z));
    }
}
