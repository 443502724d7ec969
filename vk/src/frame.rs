//! What a frame draws and what drawing it cost.

use sylva_runtime::extract::{
    Camera, CylinderBatch, GrassBatch, HorizonBatch, LeafBatch, PointBatch, Sun, TerrainBatch, TreeInstances,
    TreeModels,
};
use sylva_runtime::glam::{Mat4, Vec3};

use crate::cull::Frustum;

/// The batches and lights of one frame. The renderer consumes the batches'
/// dirty ranges (and terrain eviction lists), so it borrows them mutably.
#[derive(Default)]
pub struct FrameInput<'a> {
    /// Cylinder batches; the renderer keeps one GPU buffer per position in this list.
    pub cylinders: Vec<&'a mut CylinderBatch>,
    /// Leaf batches; the renderer keeps one GPU buffer per position in this list.
    pub leaves: Vec<&'a mut LeafBatch>,
    /// The tree models `trees` instance, baked into impostor atlases whenever their
    /// generation changes.
    pub tree_models: Option<&'a TreeModels>,
    /// Trees drawn as impostor cards where small on screen; the renderer keeps one GPU
    /// buffer per position in this list. They are the trees of the last `trees.len()`
    /// cylinder and leaf batches, in order, whose clusters that are cards alone are left out.
    pub trees: Vec<&'a mut TreeInstances>,
    /// Trees drawn wholly from `tree_models`: each model's cylinders and leaves placed per
    /// tree where it is large on screen, its impostor card where small, culled and given its
    /// level of detail on the GPU. Each batch is a run of one table of resident trees, sent
    /// again only when its dirty range says it changed.
    pub instanced: Vec<&'a mut TreeInstances>,
    /// Seconds of simulated time, for the wind that sways the leaves.
    pub time: f32,
    /// Points (attractors).
    pub points: Option<&'a mut PointBatch>,
    /// Whether the points are drawn (the viewer's V key); hidden points stay uploaded.
    pub show_points: bool,
    /// Terrain patches.
    pub terrain: Option<&'a mut TerrainBatch>,
    /// Grass layers and their playback controls.
    pub grass: Option<&'a mut GrassBatch>,
    /// The camera.
    pub camera: Camera,
    /// The sun.
    pub sun: Sun,
    /// The sea and the far field beyond the terrain's chunks (the camera's far plane is
    /// pushed out to see all of the field).
    pub horizon: Option<&'a mut HorizonBatch>,
}

/// Sky, ambient light and fog. The sky pass and the fog of every surface share
/// one sky: from the `horizon` it rises to the `zenith` and sinks into the
/// `ground_haze` below the horizon, with a glow and a disc around the sun
/// (`shaders/atmosphere.glsl`). Fog fades a surface toward the sky behind it,
/// so distant ground melts into the horizon haze.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Atmosphere {
    /// Linear colour of the sky straight up.
    pub zenith: Vec3,
    /// Linear colour of the haze at the horizon, brighter than the zenith; the
    /// clear colour of the target (the sky pass covers it).
    pub horizon: Vec3,
    /// Linear colour of the haze below the horizon, darker than the horizon
    /// (never the zenith's blue).
    pub ground_haze: Vec3,
    /// Linear sky light every surface receives.
    pub ambient: Vec3,
    /// Fog density per metre at height 0. Along a ray the fog is
    /// 1 − e^(−optical depth), the density integrated over the ray.
    pub fog_density: f32,
    /// How fast the fog thins with height, per metre: the density at height `h`
    /// is `fog_density · e^(−fog_falloff · h)` (0: the same everywhere).
    pub fog_falloff: f32,
    /// Size of a point, pixels (half the side of its square).
    pub point_size: f32,
    /// The share of the sun's light a shadow takes away (0: no shadows, 1: black ones but for
    /// the sky's ambient light).
    pub shadow_strength: f32,
}

impl Default for Atmosphere {
    fn default() -> Self {
        Self {
            zenith: Vec3::new(0.12, 0.28, 0.62),
            horizon: Vec3::new(0.60, 0.70, 0.82),
            ground_haze: Vec3::new(0.34, 0.37, 0.40),
            ambient: Vec3::new(0.25, 0.28, 0.33),
            fog_density: 0.0012,
            fog_falloff: 0.004,
            point_size: 1.5,
            shadow_strength: 0.85,
        }
    }
}

/// What one frame cost.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameStats {
    /// Draw calls recorded for the frame's batches (the sky's one full-screen
    /// triangle is not counted, nor the shadow map's draws).
    pub draw_calls: u32,
    /// Draw calls recorded into the shadow map (terrain chunks, the trees' cylinders and leaves).
    pub shadow_draw_calls: u32,
    /// Cylinder instances drawn (for trees drawn from their models, as counted on the GPU
    /// [`crate::FRAMES_IN_FLIGHT`] frames before).
    pub cylinders: u64,
    /// Leaves drawn (as `cylinders` counts them).
    pub leaves: u64,
    /// Trees drawn from their models' geometry (not as cards alone), in view, as counted on
    /// the GPU [`crate::FRAMES_IN_FLIGHT`] frames before; shrubs are counted apart.
    pub trees: u64,
    /// Shrubs (models `TreeModels::shrubs` marks) drawn from their models' geometry, as
    /// `trees` counts them.
    pub shrubs: u64,
    /// Trees and shrubs drawn from their models into the sun's shadow map, as `trees` counts
    /// them.
    pub shadow_trees: u64,
    /// Their segments and leaves drawn into the shadow map.
    pub shadow_parts: u64,
    /// Trees in the batches whose impostor cards were drawn (each card may still be dropped
    /// by the shader where its tree is near).
    pub cards: u64,
    /// Points drawn.
    pub points: u64,
    /// Grass blades: instances of the drawn listed layers, before distance thinning, and the
    /// blades expanded from the ground cover, after it (counted on the GPU; they lag
    /// `FRAMES_IN_FLIGHT` frames).
    pub grass: u64,
    /// Terrain chunks drawn.
    pub chunks: u32,
    /// Terrain chunks culled by the frustum.
    pub chunks_culled: u32,
    /// Cylinder, leaf, point and grass batches (layers) culled by the frustum.
    pub batches_culled: u32,
    /// Bytes copied from the staging ring to the GPU (batch data and meshes; the
    /// few hundred bytes of per-frame constants are not counted).
    pub upload_bytes: u64,
    /// GPU allocations made this frame.
    pub allocations: u32,
    /// GPU allocations released this frame (dropped; their memory returns once the frames
    /// that may still use them have finished).
    pub frees: u32,
    /// Device memory reserved by the allocator after the frame, bytes.
    pub gpu_memory_bytes: u64,
    /// Bytes of device memory in live allocations after the frame, those the frames in
    /// flight may still use included (less than `gpu_memory_bytes`, which grows in blocks).
    pub gpu_allocated_bytes: u64,
    /// Bytes of the frame slots' staging rings (host-visible room for uploads, as large as
    /// the largest recent frame's), within `gpu_allocated_bytes`.
    pub staging_bytes: u64,
    /// At most how many memory types the reserved memory lies in: each type's blocks
    /// ([`crate::BLOCK_BYTES`] each, or one per larger allocation) leave about a block
    /// unused at most, so `gpu_memory_bytes` stays within about this many blocks of
    /// `gpu_allocated_bytes`.
    pub gpu_memory_types: u32,
    /// Wall time of `Renderer::render` on the CPU, ms: preparing, recording and submitting
    /// the frame, including `gpu_wait_ms` but not the GPU's work on this frame, which goes
    /// on while the next one is prepared.
    pub frame_ms: f64,
    /// Time `render` waited for the GPU to finish the frame two before (whose slot this
    /// frame reuses), ms: near zero while the GPU keeps up with the CPU.
    pub gpu_wait_ms: f64,
}

impl FrameStats {
    /// Cylinder instances, leaves, points and grass blades drawn.
    pub fn instances(&self) -> u64 {
        self.cylinders + self.leaves + self.points + self.grass
    }
}

/// The camera as the draw paths use it.
pub(crate) struct View {
    /// The camera.
    pub camera: Camera,
    /// World to clip space (Vulkan depth 0..1).
    pub view_proj: Mat4,
    /// What is in view, for culling.
    pub frustum: Frustum,
    /// Target width, pixels.
    pub width: u32,
    /// Target height, pixels.
    pub height: u32,
    /// Pixels per world unit at distance 1.
    pixel_scale: f32,
}

impl View {
    /// The view of `camera` on a `width × height` target.
    pub fn new(camera: Camera, width: u32, height: u32) -> View {
        let view_proj = camera.view_projection(width as f32 / height as f32);
        View {
            camera,
            view_proj,
            frustum: Frustum::new(view_proj),
            width,
            height,
            pixel_scale: height as f32 * 0.5 / (camera.fov_y_degrees.to_radians() * 0.5).tan(),
        }
    }

    /// Size on screen, pixels, of `length` at `distance`.
    pub fn pixels(&self, length: f32, distance: f32) -> f32 {
        length * self.pixel_scale / distance.max(self.camera.near)
    }
}
