//! Far trees as impostor cards. When the [`TreeModels`] change generation, each model is
//! baked from [`DIRECTIONS`] directions around the up axis and once from above into two
//! atlases (albedo with coverage, and normals in the model's frame), one row of
//! [`COLUMNS`] cells per model, each view orthographic and fitted to the model's bounds; the
//! old atlases go to the graveyard. Each [`TreeInstances`] batch (a world chunk's trees) gets
//! a device-local buffer and one instanced draw of two quads per tree: camera-facing, textured
//! from the baked direction nearest the camera's, and level, textured from the view from
//! above, the first drawn where the camera's elevation over the tree is below [`ABOVE`]
//! degrees and the second above (seen from high up, a side view is a tilted picture of a
//! trunk, not a crown), the two cross-fading by dither over [`VIEW_FADE`] degrees either
//! side; lit from the baked normals
//! like `lit.glsl`. A tree's card fades in by dither as its height on screen falls from
//! [`CARD_PIXELS`] × [`CARD_FADE`] to [`CARD_PIXELS`], while the same tree's cylinders and
//! leaves (which carry its anchor) keep the other pixels; the cylinder and leaf passes leave
//! out clusters of the same trees that lie wholly beyond the distance where the batch's
//! tallest card is whole (the end of its [`Impostors::bands`]), which is where the saving
//! comes from.

use std::ops::Range;
use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::{DirtyRange, LEAF_REACH, TreeExtent, TreeInstances, TreeModels};
use sylva_runtime::glam::{Mat4, Vec3, Vec4};

use crate::cull::Aabb;
use crate::descriptors::{Descriptor, DescriptorSet, SetPool};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::{Image, Memory, layout_barrier};
use crate::handles::Owned;
use crate::instances::Instances;
use crate::mesh::{self, Mesh};
use crate::pass::{DrawPass, Prepare, Recording};
use crate::pipeline::{Attribute, DrawPipeline, PipelineDesc};
use crate::pod::{Pod, slice_bytes};
use crate::shaders;
use crate::target::{ATLAS_FORMATS, DEPTH_FORMAT};
use crate::upload::Uploads;

/// Bake directions around the up axis (the shaders' `DIRECTIONS`): 45° apart, so a card
/// is never seen more than 22.5° from a baked view (`card.vert` takes the nearest).
pub const DIRECTIONS: u32 = 8;
/// Atlas columns: the [`DIRECTIONS`] side views, then the view from above.
pub const COLUMNS: u32 = DIRECTIONS + 1;
/// The camera's elevation over a tree, degrees, above which its card is the view from above
/// (`card.vert`'s `ABOVE`): halfway between a side view and a view straight down.
pub const ABOVE: f32 = 45.0;
/// Degrees either side of [`ABOVE`] over which a card's two views cross-fade by dither. Their
/// shares overlap (the view from above comes in while the side view is whole, then the side
/// view goes out): the two views' leaves lie apart, and complementary pixels of each would
/// halve the crown.
pub const VIEW_FADE: f32 = 10.0;
/// Texels per side of one atlas cell: a card is drawn below [`CARD_PIXELS`] × [`CARD_FADE`]
/// pixels high, so this is over twice what it ever shows.
pub const CELL_TEXELS: u32 = 128;
/// A tree's height on screen, pixels, below which it is a card alone: at 1280 × 720 and a
/// 60° field of view a 20 m tree is that small from about 390 m on.
pub const CARD_PIXELS: f32 = 32.0;
/// Over heights on screen from [`CARD_PIXELS`] to this factor above it the card fades in by
/// dither over the full geometry.
pub const CARD_FADE: f32 = 1.5;
/// How much larger than the model's bounds each bake view is, so filtering at a cell's
/// edge reads only clear texels.
const MARGIN: f32 = 1.04;

/// The card's fade as `shaders/tree.glsl` reads it for a tree's geometry, at `pixel_scale`
/// pixels per metre at 1 m: pixels per metre of tree height (a card is its tree's bounds and
/// the bake's margin high), [`CARD_PIXELS`], [`CARD_FADE`].
pub(crate) fn card_fade(pixel_scale: f32) -> [f32; 4] {
    [pixel_scale * MARGIN, CARD_PIXELS, CARD_FADE, 0.0]
}

/// Per vertex of the tube mesh the bake draws cylinders with (see `mesh::tube`).
const VERTEX: &[Attribute] = &[Attribute::VEC4];
/// Per model cylinder: start, end, start radius, end radius, colour (as `cylinders.rs`).
const CYLINDER: &[Attribute] = &[
    Attribute::VEC3,
    Attribute::VEC3,
    Attribute::FLOAT,
    Attribute::FLOAT,
    Attribute::RGBA8,
];
/// Per model leaf: position, normal, size, colour.
const LEAF: &[Attribute] = &[Attribute::VEC3, Attribute::VEC3, Attribute::FLOAT, Attribute::RGBA8];
/// Per card: root position, yaw, and (half width, bottom, top, atlas row), metres scaled.
const CARD: &[Attribute] = &[Attribute::VEC3, Attribute::FLOAT, Attribute::VEC4];
/// Device bytes per card.
pub(crate) const CARD_BYTES: u64 = 12 + 4 + 16;

/// The push constants of the bake pipelines (matches `bake_cylinder.vert`, `bake_leaf.vert`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct BakeConstants {
    /// The model's frame to the cell's clip space, column major.
    view_proj: [f32; 16],
    /// xyz: unit direction from the model toward the bake camera.
    toward: [f32; 4],
}

// SAFETY: repr(C) of 20 `f32`: no padding.
unsafe impl Pod for BakeConstants {}

/// The push constants of the card pipeline (matches `card.vert`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct CardConstants {
    /// x: pixels per metre at 1 m, y: [`CARD_PIXELS`], z: [`CARD_FADE`], w: atlas rows.
    lod: [f32; 4],
    /// x: [`ABOVE`], y: [`VIEW_FADE`], both in radians; z, w: unused.
    above: [f32; 4],
}

// SAFETY: repr(C) of eight `f32`: no padding.
unsafe impl Pod for CardConstants {}

/// What a model covers in its own frame: the largest distance from the up axis, and the
/// lowest and highest point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ModelBounds {
    /// Metres from the up axis.
    pub radius: f32,
    /// Lowest y, metres.
    pub bottom: f32,
    /// Highest y, metres.
    pub top: f32,
}

impl ModelBounds {
    /// The bounds of a model's cylinders (their end spheres) and leaves (their cards).
    pub fn of(model: &sylva_runtime::extract::TreeModel) -> ModelBounds {
        // Heights as the tree's anchor measures them (`card_share` fades both by them).
        let extent = TreeExtent::of((&model.cylinders, &model.leaves), (0, 0));
        let mut radius = 0.0f32;
        let mut reach = |p: Vec3, r: f32| radius = radius.max(Vec3::new(p.x, 0.0, p.z).length() + r);
        let c = &model.cylinders;
        for i in 0..c.len() {
            reach(c.start[i], c.start_radius[i]);
            reach(c.end[i], c.end_radius[i]);
        }
        let l = &model.leaves;
        for i in 0..l.len() {
            reach(l.position[i], l.size[i] * LEAF_REACH);
        }
        if extent.is_empty() {
            return ModelBounds {
                radius: 0.0,
                bottom: 0.0,
                top: 0.0,
            };
        }
        ModelBounds {
            radius,
            bottom: extent.bottom,
            top: extent.top,
        }
    }

    /// Half the bake view's width and height and its centre height: the bounds and a margin.
    fn view(&self) -> (f32, f32, f32) {
        let half_height = (0.5 * (self.top - self.bottom) * MARGIN).max(1e-3);
        (
            (self.radius * MARGIN).max(1e-3),
            half_height,
            0.5 * (self.top + self.bottom),
        )
    }

    /// The orthographic view of atlas column `k`, nearer the camera nearer depth 0, and its
    /// direction toward the camera. Below [`DIRECTIONS`], a side view (camera at angle
    /// `a = k · 360° / DIRECTIONS` about +Y, direction `(sin a, 0, cos a)` from the model):
    /// screen right is `(cos a, 0, −sin a)`, up is +Y. Column [`DIRECTIONS`] looks down from
    /// +Y: screen right is +X, down the image (Vulkan's +y) is +Z, over a square of the
    /// model's radius.
    pub fn bake_view(&self, k: u32) -> (Mat4, Vec3) {
        let (half_width, half_height, middle) = self.view();
        if k == DIRECTIONS {
            let rows = [
                Vec4::new(1.0 / half_width, 0.0, 0.0, 0.0),
                Vec4::new(0.0, 0.0, 1.0 / half_width, 0.0),
                Vec4::new(0.0, -0.5 / half_height, 0.0, 0.5 + 0.5 * middle / half_height),
                Vec4::W,
            ];
            return (Mat4::from_cols(rows[0], rows[1], rows[2], rows[3]).transpose(), Vec3::Y);
        }
        let a = k as f32 * std::f32::consts::TAU / DIRECTIONS as f32;
        let (right, toward) = (Vec3::new(a.cos(), 0.0, -a.sin()), Vec3::new(a.sin(), 0.0, a.cos()));
        let rows = [
            (right / half_width).extend(0.0),
            Vec4::new(0.0, -1.0 / half_height, 0.0, middle / half_height),
            (-toward / (2.0 * half_width)).extend(0.5),
            Vec4::W,
        ];
        (Mat4::from_cols(rows[0], rows[1], rows[2], rows[3]).transpose(), toward)
    }

    /// A card's half width, bottom and top at `scale`: what the bake view covers.
    pub fn card(&self, scale: f32) -> [f32; 3] {
        let (half_width, half_height, middle) = self.view();
        [
            half_width * scale,
            (middle - half_height) * scale,
            (middle + half_height) * scale,
        ]
    }
}

/// One model's bake inputs on the GPU.
struct Model {
    cylinders: Instances,
    leaves: Instances,
    bounds: ModelBounds,
}

/// The baked atlases of one model generation and the set the cards read them through.
struct Atlas {
    colour: Image,
    normal: Image,
    /// The bake's depth, dropped by the frame after the bake's (so the graveyard keeps it
    /// until the bake has run).
    depth: Option<Image>,
    set: DescriptorSet,
    rows: u32,
}

/// One [`TreeInstances`] batch's cards.
struct Slot {
    cards: Instances,
    /// What the cards may cover.
    bounds: Aabb,
    /// The tallest card, metres.
    tallest: f32,
    /// The shortest card, metres.
    shortest: f32,
    /// The widest card's half width, metres.
    widest: f32,
    /// The model generation the cards were sized with.
    generation: u64,
}

/// The impostor path: the bake and the cards.
pub(crate) struct Impostors {
    models: Vec<Model>,
    generation: u64,
    atlas: Option<Atlas>,
    /// The atlas is new and not yet drawn into.
    bake_pending: bool,
    slots: Vec<Slot>,
    /// The frame's slots with cards to draw.
    draws: Vec<usize>,
    /// Per slot, the distances over which the geometry of its trees may be fading into cards.
    bands: Vec<Range<f32>>,
    pixel_scale: f32,
    tube: Mesh,
    bake_cylinders: DrawPipeline,
    bake_leaves: DrawPipeline,
    cards: DrawPipeline,
    sets: SetPool,
    sampler: Owned<vk::Sampler>,
}

impl Impostors {
    /// The pipelines (globals at set 0; the cards' atlases at set 1) and the bake's tube
    /// mesh (queued for upload).
    pub fn new(
        memory: &Arc<Memory>,
        uploads: &mut Uploads,
        globals: vk::DescriptorSetLayout,
    ) -> Result<Impostors, RenderError> {
        let device = memory.device();
        let texture = vk::DescriptorType::COMBINED_IMAGE_SAMPLER;
        // Two sets at once: the atlas drawn and, in the graveyard, the one it replaced.
        let sets = SetPool::new(memory, vk::ShaderStageFlags::FRAGMENT, &[texture, texture], 4)?;
        let bake = size_of::<BakeConstants>() as u32;
        let bake_cylinders = DrawPipeline::bake(
            device,
            &PipelineDesc {
                vert: shaders::BAKE_CYLINDER_VERT,
                frag: shaders::BAKE_FRAG,
                vertices: VERTEX,
                instances: CYLINDER,
                sets: &[globals],
                push_bytes: bake,
            },
        )?;
        let bake_leaves = DrawPipeline::bake(
            device,
            &PipelineDesc {
                vert: shaders::BAKE_LEAF_VERT,
                frag: shaders::BAKE_FRAG,
                vertices: &[],
                instances: LEAF,
                sets: &[globals],
                push_bytes: bake,
            },
        )?;
        let cards = DrawPipeline::coverage(
            device,
            &PipelineDesc {
                vert: shaders::CARD_VERT,
                frag: shaders::CARD_FRAG,
                vertices: &[],
                instances: CARD,
                sets: &[globals, sets.layout()],
                push_bytes: size_of::<CardConstants>() as u32,
            },
        )?;
        let (v, i) = mesh::tube(16, 2);
        Ok(Impostors {
            models: Vec::new(),
            generation: 0,
            atlas: None,
            bake_pending: false,
            slots: Vec::new(),
            draws: Vec::new(),
            bands: Vec::new(),
            pixel_scale: 0.0,
            tube: Mesh::new(memory, uploads, &v, &i, "impostor bake tube")?,
            bake_cylinders,
            bake_leaves,
            cards,
            sets,
            sampler: linear_sampler(device)?,
        })
    }

    /// Uploads a new generation of models and makes its (empty) atlases; the frame bakes them.
    fn rebake(&mut self, frame: &mut Prepare<'_>, models: &TreeModels) -> Result<(), RenderError> {
        self.generation = models.generation;
        self.models.clear();
        self.atlas = None;
        self.bake_pending = false;
        for m in &models.models {
            let mut cylinders = Instances::new(CYLINDER, "impostor model cylinders");
            let c = &m.cylinders;
            let arrays = [
                slice_bytes(&c.start),
                slice_bytes(&c.end),
                slice_bytes(&c.start_radius),
                slice_bytes(&c.end_radius),
                slice_bytes(&c.colour),
            ];
            cylinders.update(frame.memory, frame.uploads, &arrays, c.len(), whole(c.len()))?;
            let mut leaves = Instances::new(LEAF, "impostor model leaves");
            let l = &m.leaves;
            let arrays = [
                slice_bytes(&l.position),
                slice_bytes(&l.normal),
                slice_bytes(&l.size),
                slice_bytes(&l.colour),
            ];
            leaves.update(frame.memory, frame.uploads, &arrays, l.len(), whole(l.len()))?;
            self.models.push(Model {
                cylinders,
                leaves,
                bounds: ModelBounds::of(m),
            });
        }
        let rows = self.models.len() as u32;
        if rows == 0 {
            return Ok(());
        }
        let extent = vk::Extent2D {
            width: COLUMNS * CELL_TEXELS,
            height: rows * CELL_TEXELS,
        };
        let sampled = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
        let colour_aspect = vk::ImageAspectFlags::COLOR;
        let colour = frame.memory.image(
            extent,
            ATLAS_FORMATS[0],
            sampled,
            colour_aspect,
            "impostor colour atlas",
        )?;
        let normal = frame.memory.image(
            extent,
            ATLAS_FORMATS[1],
            sampled,
            colour_aspect,
            "impostor normal atlas",
        )?;
        let depth = frame.memory.image(
            extent,
            DEPTH_FORMAT,
            vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            vk::ImageAspectFlags::DEPTH,
            "impostor bake depth",
        )?;
        let set = self.sets.allocate("vkAllocateDescriptorSets (impostor atlas)")?;
        set.write(&[
            Descriptor::Texture(&colour, self.sampler.raw()),
            Descriptor::Texture(&normal, self.sampler.raw()),
        ]);
        self.atlas = Some(Atlas {
            colour,
            normal,
            depth: Some(depth),
            set,
            rows,
        });
        self.bake_pending = true;
        Ok(())
    }

    /// Per slot, the distances (metres, from the camera to a cluster's box) over which the
    /// cylinder and leaf batches of its trees may hold a tree whose card is fading in, so
    /// they keep only their dithered share of the pixels; beyond the end they draw nothing
    /// in view: every tree there is a whole card. Both allow for branches reaching into the
    /// next cluster (by at most a card's half width across and its height up). Empty at
    /// infinity where there are no cards.
    pub fn bands(&self) -> &[Range<f32>] {
        &self.bands
    }

    /// Records the bake of a new generation's atlases (outside rendering, after the frame's
    /// uploads, before anything samples them); nothing when there is none to bake.
    pub fn record_bake(&mut self, rec: &Recording<'_>) {
        if !std::mem::take(&mut self.bake_pending) {
            return;
        }
        let Some((atlas, depth_image)) = self.atlas.as_ref().and_then(|a| Some((a, a.depth.as_ref()?))) else {
            return;
        };
        begin_bake(rec, atlas, depth_image);
        let (d, cmd) = (rec.device, rec.cmd);
        self.bake_cylinders.bind(rec);
        self.tube.bind(rec);
        self.each_cell(rec, &self.bake_cylinders, |m| {
            let n = m.cylinders.len();
            m.cylinders.bind(rec, 1);
            // SAFETY: `cmd` is recording inside rendering with the bake pipeline, the tube
            // and the model's instances bound.
            unsafe { d.cmd_draw_indexed(cmd, self.tube.index_count, n, 0, 0, 0) };
        });
        self.bake_leaves.bind(rec);
        self.each_cell(rec, &self.bake_leaves, |m| {
            let n = m.leaves.len();
            m.leaves.bind(rec, 0);
            // SAFETY: as above, with the leaf pipeline and the model's leaves bound.
            unsafe { d.cmd_draw(cmd, 6, n, 0, 0) };
        });
        end_bake(rec, atlas);
    }

    /// Records, for every model and atlas column, the cell's viewport, the view's push
    /// constants and `draw(model)`'s draws.
    fn each_cell(&self, rec: &Recording<'_>, pipeline: &DrawPipeline, draw: impl Fn(&Model)) {
        for (row, m) in (0u32..).zip(&self.models) {
            for k in 0..COLUMNS {
                let (view_proj, toward) = m.bounds.bake_view(k);
                let area = vk::Rect2D {
                    offset: vk::Offset2D {
                        x: (k * CELL_TEXELS) as i32,
                        y: (row * CELL_TEXELS) as i32,
                    },
                    extent: vk::Extent2D {
                        width: CELL_TEXELS,
                        height: CELL_TEXELS,
                    },
                };
                let viewport = vk::Viewport {
                    x: area.offset.x as f32,
                    y: area.offset.y as f32,
                    width: CELL_TEXELS as f32,
                    height: CELL_TEXELS as f32,
                    min_depth: 0.0,
                    max_depth: 1.0,
                };
                // SAFETY: `rec.cmd` is recording inside the bake's rendering.
                unsafe {
                    rec.device.cmd_set_viewport(rec.cmd, 0, &[viewport]);
                    rec.device.cmd_set_scissor(rec.cmd, 0, &[area]);
                }
                pipeline.push(
                    rec,
                    &BakeConstants {
                        view_proj: view_proj.to_cols_array(),
                        toward: toward.extend(0.0).to_array(),
                    },
                );
                draw(m);
            }
        }
    }
}

impl Slot {
    /// Re-uploads the cards whole: a chunk's trees change only when it is installed.
    fn update(
        &mut self,
        frame: &mut Prepare<'_>,
        trees: &TreeInstances,
        models: &[Model],
        generation: u64,
    ) -> Result<(), RenderError> {
        let mut card = Vec::with_capacity(trees.len());
        self.bounds = Aabb::EMPTY;
        self.tallest = 0.0;
        self.shortest = f32::INFINITY;
        self.widest = 0.0;
        for i in 0..trees.len() {
            let Some(m) = models.get(trees.model[i] as usize) else {
                card.push([0.0; 4]);
                continue;
            };
            let [half_width, bottom, top] = m.bounds.card(trees.scale[i]);
            card.push([half_width, bottom, top, trees.model[i] as f32]);
            let p = trees.position[i];
            let middle = p + Vec3::Y * (0.5 * (bottom + top));
            // A level card's corners reach √2 half widths from the axis.
            let reach = Vec3::new(half_width * std::f32::consts::SQRT_2, 0.5 * (top - bottom), 0.0);
            self.bounds.add_sphere(middle, reach.length());
            self.tallest = self.tallest.max(top - bottom);
            self.shortest = self.shortest.min(top - bottom);
            self.widest = self.widest.max(half_width);
        }
        let arrays = [
            slice_bytes(&trees.position),
            slice_bytes(&trees.yaw),
            slice_bytes(&card),
        ];
        self.cards
            .update(frame.memory, frame.uploads, &arrays, trees.len(), whole(trees.len()))?;
        self.generation = generation;
        Ok(())
    }
}

impl DrawPass for Impostors {
    /// The models, and one batch of trees per slot.
    type Batch<'b> = (Option<&'b TreeModels>, Vec<&'b mut TreeInstances>);

    fn prepare(&mut self, frame: &mut Prepare<'_>, (models, mut trees): Self::Batch<'_>) -> Result<(), RenderError> {
        self.pixel_scale = frame.view.pixels(1.0, 1.0);
        if let Some(atlas) = self.atlas.as_mut().filter(|_| !self.bake_pending) {
            atlas.depth = None;
        }
        match models {
            Some(m) if m.generation != self.generation => self.rebake(frame, m)?,
            Some(_) => {}
            None => {
                self.models.clear();
                self.atlas = None;
                self.generation = 0;
            }
        }
        self.slots.truncate(trees.len());
        self.slots.resize_with(trees.len(), || Slot {
            cards: Instances::new(CARD, "impostor cards"),
            bounds: Aabb::EMPTY,
            tallest: 0.0,
            shortest: 0.0,
            widest: 0.0,
            generation: 0,
        });
        for (slot, batch) in self.slots.iter_mut().zip(trees.iter_mut()) {
            let dirty = batch.dirty.take();
            if !dirty.is_clean() || slot.generation != self.generation || slot.cards.len() as usize != batch.len() {
                slot.update(frame, batch, &self.models, self.generation)?;
            }
        }
        self.draws.clear();
        self.bands.clear();
        self.bands.resize(self.slots.len(), f32::INFINITY..f32::INFINITY);
        if self.atlas.is_none() {
            return Ok(());
        }
        let eye = frame.view.camera.position;
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.cards.len() == 0 {
                continue;
            }
            // The card's height on screen is below CARD_PIXELS from here on (shader and View
            // agree on pixels per metre); a cluster's box may be a crown's reach nearer.
            let reach = slot.widest + slot.tallest;
            let fading = slot.shortest * self.pixel_scale / (CARD_PIXELS * CARD_FADE) - reach;
            self.bands[i] = fading..slot.tallest * self.pixel_scale / CARD_PIXELS + reach;
            // Some card may be fading in: the shortest tree at the batch's far corner.
            let small = frame.view.pixels(slot.shortest, slot.bounds.farthest(eye)) < CARD_PIXELS * CARD_FADE;
            if small && frame.view.frustum.intersects(&slot.bounds) {
                self.draws.push(i);
            }
        }
        Ok(())
    }

    fn record(&self, rec: &Recording<'_>, stats: &mut FrameStats) {
        let Some(atlas) = &self.atlas else {
            return;
        };
        if self.draws.is_empty() {
            return;
        }
        self.cards.bind(rec);
        self.cards.bind_set(rec, 1, atlas.set.raw());
        self.cards.push(
            rec,
            &CardConstants {
                lod: [self.pixel_scale, CARD_PIXELS, CARD_FADE, atlas.rows as f32],
                above: [ABOVE.to_radians(), VIEW_FADE.to_radians(), 0.0, 0.0],
            },
        );
        for &i in &self.draws {
            let slot = &self.slots[i];
            slot.cards.bind(rec, 0);
            // SAFETY: `rec.cmd` is recording inside the frame's rendering with the card
            // pipeline, its sets and the slot's cards bound. Two quads a card: its side view
            // and its view from above (card.vert).
            unsafe { rec.device.cmd_draw(rec.cmd, 12, slot.cards.len(), 0, 0) };
            stats.draw_calls += 1;
            stats.cards += u64::from(slot.cards.len());
        }
    }
}

/// All of a batch of `len` instances.
fn whole(len: usize) -> DirtyRange {
    DirtyRange {
        start: 0,
        end: len as u32,
    }
}

/// The atlases' sampler: bilinear within a cell (the bake leaves a clear margin), clamped.
fn linear_sampler(device: &Arc<crate::device::Device>) -> Result<Owned<vk::Sampler>, RenderError> {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(vk::Filter::LINEAR)
        .min_filter(vk::Filter::LINEAR)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
    // SAFETY: valid create info on a live device; the guard is the sampler's one owner.
    unsafe { Owned::new(device, "vkCreateSampler", device.raw.create_sampler(&info, None)) }
}

/// Starts rendering into `atlas`: its images made attachments and cleared.
fn begin_bake(rec: &Recording<'_>, atlas: &Atlas, depth_image: &Image) {
    let (d, cmd) = (rec.device, rec.cmd);
    let extent = vk::Extent2D {
        width: COLUMNS * CELL_TEXELS,
        height: atlas.rows * CELL_TEXELS,
    };
    let to_attachment = |image: &Image| {
        layout_barrier(
            image.raw(),
            vk::ImageAspectFlags::COLOR,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
            (vk::AccessFlags::empty(), vk::AccessFlags::COLOR_ATTACHMENT_WRITE),
        )
    };
    let before = [
        to_attachment(&atlas.colour),
        to_attachment(&atlas.normal),
        layout_barrier(
            depth_image.raw(),
            vk::ImageAspectFlags::DEPTH,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
            (
                vk::AccessFlags::empty(),
                vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
            ),
        ),
    ];
    let clear = |c: [f32; 4]| vk::ClearValue {
        color: vk::ClearColorValue { float32: c },
    };
    let attachment = |image: &Image, c: [f32; 4]| {
        vk::RenderingAttachmentInfo::default()
            .image_view(image.view())
            .image_layout(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(clear(c))
    };
    // Clear: transparent black, and a zero normal that is no leaf (0.5 packs 0): filtered
    // with the clear texels around, the outline's colour, normal and leaf flag are all
    // weighted by coverage, which the card shader divides out.
    let colours = [
        attachment(&atlas.colour, [0.0; 4]),
        attachment(&atlas.normal, [0.5, 0.5, 0.5, 0.0]),
    ];
    let depth = vk::RenderingAttachmentInfo::default()
        .image_view(depth_image.view())
        .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
        .load_op(vk::AttachmentLoadOp::CLEAR)
        .store_op(vk::AttachmentStoreOp::DONT_CARE)
        .clear_value(vk::ClearValue {
            depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 },
        });
    let info = vk::RenderingInfo::default()
        .render_area(vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent,
        })
        .layer_count(1)
        .color_attachments(&colours)
        .depth_attachment(&depth);
    // SAFETY: `cmd` is recording outside rendering; the images are this device's and the
    // barriers leave them in the layouts rendering names.
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::TOP_OF_PIPE,
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT
                | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS
                | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &before,
        );
        d.cmd_begin_rendering(cmd, &info);
    }
}

/// Ends rendering into `atlas`, its images then sampled by the card shader.
fn end_bake(rec: &Recording<'_>, atlas: &Atlas) {
    let (d, cmd) = (rec.device, rec.cmd);
    let to_sampled = |image: &Image| {
        layout_barrier(
            image.raw(),
            vk::ImageAspectFlags::COLOR,
            (
                vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            ),
            (vk::AccessFlags::COLOR_ATTACHMENT_WRITE, vk::AccessFlags::SHADER_READ),
        )
    };
    let after = [to_sampled(&atlas.colour), to_sampled(&atlas.normal)];
    // SAFETY: `cmd` is recording inside the rendering begun above.
    unsafe {
        d.cmd_end_rendering(cmd);
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            vk::PipelineStageFlags::FRAGMENT_SHADER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &after,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sylva_runtime::extract::{CylinderBatch, TreeAnchor, TreeModel};

    #[test]
    fn bake_views_fit_the_model_and_face_their_direction() {
        let mut cylinders = CylinderBatch::default();
        cylinders.push(Vec3::ZERO, Vec3::new(0.0, 10.0, 0.0), 0.5, 0.2, [0; 4]);
        cylinders.push(Vec3::new(0.0, 6.0, 0.0), Vec3::new(3.0, 8.0, 0.0), 0.1, 0.1, [0; 4]);
        let b = ModelBounds::of(&TreeModel {
            cylinders,
            ..TreeModel::default()
        });
        assert_eq!(b.radius, 3.1);
        assert_eq!((b.bottom, b.top), (-0.5, 10.2));
        for k in 0..COLUMNS {
            let (m, toward) = b.bake_view(k);
            for p in [
                Vec3::new(3.1, 10.2, 0.0),
                Vec3::new(-3.1, -0.5, 0.0),
                Vec3::new(0.0, 5.0, -3.1),
            ] {
                let c = m.project_point3(p);
                assert!(
                    c.x.abs() < 1.0 && c.y.abs() < 1.0 && (0.0..=1.0).contains(&c.z),
                    "{k}: {c}"
                );
            }
            // Nearer the camera is nearer; from the side, the top is up on screen (Vulkan: y
            // down).
            assert!(m.project_point3(toward).z < m.project_point3(-toward).z);
            if k < DIRECTIONS {
                assert!(m.project_point3(Vec3::Y * 10.0).y < m.project_point3(Vec3::ZERO).y);
            }
        }
        // From above, the camera is up, +X is right and +Z down the image.
        let (above, toward) = b.bake_view(DIRECTIONS);
        assert_eq!(toward, Vec3::Y);
        assert!(above.project_point3(Vec3::X).x > 0.0 && above.project_point3(Vec3::Z).y > 0.0);
        // From +Z (k = 0) screen right is +X; a quarter turn on (k = 2) it is −Z.
        assert!(b.bake_view(0).0.project_point3(Vec3::X).x > 0.0);
        assert!(b.bake_view(2).0.project_point3(-Vec3::Z).x > 0.0);
        let [half_width, bottom, top] = b.card(2.0);
        assert!((half_width - 2.0 * 3.1 * MARGIN).abs() < 1e-4 && bottom < -1.0 && top > 20.4);
    }

    #[test]
    fn a_card_is_as_tall_as_the_anchor_its_trees_geometry_fades_by() {
        // `card_share` in card.vert and in tree.glsl must measure the same tree, or some
        // dither thresholds are neither the card's nor the geometry's: holes in the fade band.
        let mut model = TreeModel::default();
        model
            .cylinders
            .push(Vec3::ZERO, Vec3::new(0.0, 6.0, 0.0), 0.4, 0.1, [0; 4]);
        model.leaves.push(Vec3::new(1.0, 6.5, 0.0), Vec3::Y, 0.3, [0; 4]);
        model.leaves.push(Vec3::new(0.0, -0.2, 0.0), Vec3::Y, 0.1, [0; 4]);
        let anchor = TreeAnchor::of(Vec3::ZERO, (&model.cylinders, &model.leaves), (0, 0));
        let [_, bottom, top] = ModelBounds::of(&model).card(1.0);
        assert!(
            ((top - bottom) - anchor.height * MARGIN).abs() < 1e-5,
            "{top} − {bottom}, {anchor:?}"
        );
    }
}
