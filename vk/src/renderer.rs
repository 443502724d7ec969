//! The headless renderer: two frames in flight. Frame N + 1 is prepared and
//! recorded on the CPU while the GPU draws frame N; a frame slot (command
//! buffer, fence, staging ring, constants, indirect commands) is reused only
//! after its last frame's fence, and what a frame drops waits in the graveyard
//! (`gpu_memory.rs`) until the frames that may use it have finished. Reading the
//! pixels back waits for the last frame.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use ash::vk;
use sylva_runtime::extract::{GrassLayer, SwayWind};
use sylva_runtime::glam::Vec3;

use crate::commands::{Commands, FRAMES_IN_FLIGHT, per_frame};
use crate::cull::Frustum;
use crate::cylinders::Cylinders;
use crate::device::{Device, Msaa};
use crate::error::RenderError;
use crate::frame::{Atmosphere, FrameInput, FrameStats, View};
use crate::globals::Globals;
use crate::gpu_memory::Memory;
use crate::grass::Grass;
use crate::grass_probe::GrassProbe;
use crate::horizon::Horizon;
use crate::impostors::Impostors;
use crate::instanced_trees::InstancedTrees;
use crate::leaves::Leaves;
use crate::overlay::{Overlay, OverlayLine};
use crate::pass::{DrawPass, Prepare, Recording};
use crate::points::Points;
use crate::shadow::{self, ShadowMap};
use crate::sky::Sky;
use crate::sward::SwardBlade;
use crate::target::{Target, encode_png, write_png};
use crate::terrain::Terrain;
use crate::upload::{StagingRing, Uploads, record_uploads};
use crate::validation::ValidationLog;
use crate::wind::{WindBlock, WindGrid};
use crate::wind_probe::WindProbe;

/// Totals over the renderer's life, for reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderStats {
    /// The device's name.
    pub device: String,
    /// Frames rendered.
    pub frames: u64,
    /// Draw calls, summed over frames.
    pub draw_calls: u64,
    /// Bytes uploaded, summed over frames.
    pub upload_bytes: u64,
    /// Frame times, summed, ms.
    pub frame_ms: f64,
    /// Time spent waiting for a frame slot's last frame, summed, ms.
    pub gpu_wait_ms: f64,
    /// Bytes uploaded by the frame that uploaded most after the first (which uploads
    /// everything resident before rendering began, such as a world's first ring).
    pub max_upload_bytes: u64,
    /// Device memory reserved after the first frame, bytes.
    pub first_gpu_memory_bytes: u64,
    /// Most device memory reserved after any frame, bytes.
    pub peak_gpu_memory_bytes: u64,
    /// Device memory in live allocations after the first frame, bytes (reserved memory grows
    /// in the allocator's blocks; this shows what is held).
    pub first_gpu_allocated_bytes: u64,
    /// The last frame.
    pub last: FrameStats,
    /// Validation errors so far.
    pub validation_errors: u32,
    /// Validation warnings so far.
    pub validation_warnings: u32,
}

/// Sylva's renderer. Drop waits for the GPU, then every resource frees itself
/// (the device goes last: everything made on it holds it).
pub struct Renderer {
    /// Sky, ambient and fog used by every frame.
    pub atmosphere: Atmosphere,
    terrain: Terrain,
    grass: Grass,
    cylinders: Cylinders,
    leaves: Leaves,
    instanced: InstancedTrees,
    impostors: Impostors,
    points: Points,
    horizon: Horizon,
    sky: Sky,
    overlay: Overlay,
    probe: GrassProbe,
    wind_probe: WindProbe,
    /// The wind crowns sway in ([`Renderer::set_wind`]).
    wind: SwayWind,
    wind_grid: WindGrid,
    globals: Globals,
    shadow: ShadowMap,
    uploads: Uploads,
    frames: [FrameSlot; FRAMES_IN_FLIGHT],
    /// Frames submitted; frame `n` (from 1) uses slot `n % FRAMES_IN_FLIGHT`.
    submitted: u64,
    target: Target,
    stats: RenderStats,
    memory: Arc<Memory>,
    device: Arc<Device>,
}

/// What one frame in flight owns alone: its command buffer and fence, and the staging
/// ring its copies read.
struct FrameSlot {
    commands: Commands,
    staging: StagingRing,
    /// The frame last submitted in this slot (0: none yet).
    frame: u64,
}

impl Renderer {
    /// A renderer drawing into an offscreen `width × height` target ([`Msaa::Auto`]).
    pub fn new_headless(width: u32, height: u32) -> Result<Renderer, RenderError> {
        Renderer::with_extensions(width, height, &[], Msaa::Auto)
    }

    /// A renderer drawing into an offscreen `width × height` target, anti-aliased as `msaa` says.
    pub fn new_headless_msaa(width: u32, height: u32, msaa: Msaa) -> Result<Renderer, RenderError> {
        Renderer::with_extensions(width, height, &[], msaa)
    }

    /// A renderer whose instance has `surface_extensions` (for a window).
    pub(crate) fn with_extensions(
        width: u32,
        height: u32,
        surface_extensions: &[*const std::ffi::c_char],
        msaa: Msaa,
    ) -> Result<Renderer, RenderError> {
        let extent = checked_extent(width, height)?;
        let device = Arc::new(Device::new(surface_extensions, msaa)?);
        let memory = Memory::new(&device)?;
        let shadow = ShadowMap::new(&memory, shadow::texels_for(extent.height))?;
        let globals = Globals::new(&memory, &shadow)?;
        let mut uploads = Uploads::default();
        let terrain = Terrain::new(&memory, globals.layout())?;
        Ok(Renderer {
            atmosphere: Atmosphere::default(),
            grass: Grass::new(&memory, globals.layout(), terrain.cover_layout())?,
            terrain,
            cylinders: Cylinders::new(&memory, &mut uploads, globals.layout())?,
            leaves: Leaves::new(&device, globals.layout())?,
            instanced: InstancedTrees::new(&memory, &mut uploads, globals.layout())?,
            impostors: Impostors::new(&memory, &mut uploads, globals.layout())?,
            points: Points::new(&device, globals.layout())?,
            horizon: Horizon::new(&memory, globals.layout())?,
            sky: Sky::new(&device, globals.layout())?,
            overlay: Overlay::new(&device, globals.layout())?,
            probe: GrassProbe::new(&memory)?,
            wind_probe: WindProbe::new(&memory)?,
            wind: SwayWind::default(),
            wind_grid: WindGrid::new(&memory, globals.layout())?,
            globals,
            shadow,
            uploads,
            frames: per_frame(|| {
                Ok(FrameSlot {
                    commands: Commands::new(&device)?,
                    staging: StagingRing::new(&memory)?,
                    frame: 0,
                })
            })?,
            submitted: 0,
            target: Target::new(&memory, extent)?,
            stats: RenderStats {
                device: device.name.clone(),
                ..RenderStats::default()
            },
            memory,
            device,
        })
    }

    /// The device.
    pub(crate) fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The colour target (left in `TRANSFER_SRC_OPTIMAL` by every frame) and its size. A
    /// submission after the frame's on the device's queue may read it (the next frame's
    /// rendering waits for transfers before it); nothing else may.
    pub(crate) fn colour(&self) -> (vk::Image, vk::Extent2D) {
        (self.target.colour.raw(), self.target.extent)
    }

    /// Recreates the target at a new size (the window was resized), and the shadow map
    /// where its size follows ([`shadow::texels_for`]).
    pub(crate) fn resize(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        let extent = checked_extent(width, height)?;
        // SAFETY: waiting has no precondition on a live device; afterwards the old target
        // is unused (also by the window's copies of it) and may be dropped.
        unsafe { self.device.raw.device_wait_idle() }.map_err(|e| RenderError::vk("vkDeviceWaitIdle", e))?;
        self.memory.finished(self.submitted);
        self.target = Target::new(&self.memory, extent)?;
        let texels = shadow::texels_for(extent.height);
        if texels != self.shadow.texels() {
            self.shadow = ShadowMap::new(&self.memory, texels)?;
            self.globals.bind(&self.shadow);
        }
        Ok(())
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device.name
    }

    /// Whether the device draws many indirect commands in one call (`multiDrawIndirect`).
    pub fn multi_draw(&self) -> bool {
        self.device.multi_draw
    }

    /// The validation log; it stays readable after the renderer is dropped, so
    /// tests can check that shutdown reported nothing.
    pub fn validation(&self) -> Arc<ValidationLog> {
        self.device.validation()
    }

    /// True when the validation layer is on.
    pub fn validating(&self) -> bool {
        self.device.validating()
    }

    /// Target width and height, pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.target.extent.width, self.target.extent.height)
    }

    /// Totals so far.
    pub fn stats(&self) -> RenderStats {
        let log = self.device.validation();
        RenderStats {
            validation_errors: log.errors(),
            validation_warnings: log.warnings(),
            ..self.stats.clone()
        }
    }

    /// Text drawn over every following frame, top left on a dark box (none: no overlay). It
    /// is not counted in `FrameStats::draw_calls`.
    pub fn set_overlay(&mut self, lines: &[OverlayLine]) {
        self.overlay.set(lines);
    }

    /// Whether the trees drawn from their models are culled by the view (on by default).
    /// Off, every tree in range is drawn, in view or not: a frame must look the same, which
    /// tests check.
    pub fn set_tree_culling(&mut self, on: bool) {
        self.instanced.set_culling(on);
    }

    /// Whether the grass expanded from the chunks' ground cover is culled by the view and
    /// thinned with distance (on by default). Off, every cell of every chunk gives all its
    /// blades, as `expand_blades` of sylva-systems does: tests compare the two.
    pub fn set_grass_culling(&mut self, on: bool) {
        self.grass.set_sward_culling(on);
    }

    /// Every grass blade the last frame expanded from the chunks' ground cover, read back
    /// from the GPU (in no particular order).
    pub fn read_sward(&mut self) -> Result<Vec<SwardBlade>, RenderError> {
        self.finish()?;
        self.grass.read_sward(&self.memory)
    }

    /// The wind leaves sway in from the next frame on, evaluated at the frame's time on a
    /// grid around the camera (`sylva::render` sets a scene's). Default: still air, the
    /// leaves hold still.
    pub fn set_wind(&mut self, wind: &SwayWind) {
        self.wind.clone_from(wind);
    }

    /// Uploads what changed in `input`'s batches, records the frame and submits it,
    /// without waiting for it: the GPU draws it while the caller prepares the next one.
    /// [`Renderer::read_pixels`] waits for it.
    pub fn render(&mut self, input: FrameInput<'_>) -> Result<FrameStats, RenderError> {
        let t0 = Instant::now();
        let (width, height) = self.size();
        let mut camera = input.camera;
        if let Some(reach) = Horizon::reach(input.horizon.as_deref(), camera.position) {
            camera.far = camera.far.max(reach);
        }
        let view = View::new(camera, width, height);
        let mut stats = FrameStats::default();
        let slot = ((self.submitted + 1) % FRAMES_IN_FLIGHT as u64) as usize;
        stats.gpu_wait_ms = self.reuse(slot)?;
        self.memory.take_counts();
        self.prepare(slot, input, &view, &mut stats)?;
        self.draw(slot, &mut stats)?;
        self.uploads.clear();
        (stats.allocations, stats.frees) = self.memory.take_counts();
        stats.gpu_memory_bytes = self.memory.reserved_bytes();
        stats.gpu_allocated_bytes = self.memory.allocated_bytes();
        stats.staging_bytes = self.frames.iter().map(|f| f.staging.size()).sum();
        stats.gpu_memory_types = self.memory.memory_types();
        stats.frame_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.count(&stats);
        Ok(stats)
    }

    /// Waits for frame slot `slot`'s last frame, so the slot may be rewritten, and frees what
    /// only that frame and earlier ones could use; returns the milliseconds waited.
    fn reuse(&mut self, slot: usize) -> Result<f64, RenderError> {
        let frame = &mut self.frames[slot];
        let waited = frame.commands.finish()?;
        self.memory.finished(frame.frame);
        Ok(waited)
    }

    /// Adds a frame to the totals.
    fn count(&mut self, stats: &FrameStats) {
        self.stats.frames += 1;
        self.stats.draw_calls += u64::from(stats.draw_calls);
        self.stats.upload_bytes += stats.upload_bytes;
        self.stats.frame_ms += stats.frame_ms;
        self.stats.gpu_wait_ms += stats.gpu_wait_ms;
        if self.stats.frames == 1 {
            self.stats.first_gpu_memory_bytes = stats.gpu_memory_bytes;
            self.stats.first_gpu_allocated_bytes = stats.gpu_allocated_bytes;
        } else {
            self.stats.max_upload_bytes = self.stats.max_upload_bytes.max(stats.upload_bytes);
        }
        self.stats.peak_gpu_memory_bytes = self.stats.peak_gpu_memory_bytes.max(stats.gpu_memory_bytes);
        self.stats.last = *stats;
    }

    /// Every pass uploads what changed and picks what it draws; the uploads are
    /// staged and the frame's constants written, into frame slot `slot`.
    fn prepare(
        &mut self,
        slot: usize,
        input: FrameInput<'_>,
        view: &View,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        let FrameInput {
            cylinders,
            leaves,
            tree_models,
            trees,
            instanced,
            time,
            points,
            show_points,
            terrain,
            grass,
            sun,
            horizon,
            ..
        } = input;
        let aspect = view.width as f32 / view.height as f32;
        let shadow = shadow::fit(&view.camera, aspect, sun.direction, self.shadow.texels());
        let mut frame = Prepare {
            memory: &self.memory,
            uploads: &mut self.uploads,
            view,
            sun: &Frustum::new(shadow.view_proj),
            shadow_texel: shadow.texel,
            stats: &mut *stats,
            slot,
        };
        self.horizon.prepare(&mut frame, (horizon, terrain.as_deref()))?;
        self.terrain
            .prepare(&mut frame, (terrain, time, self.horizon.sea_level()))?;
        // Before the impostors, which take the batches' dirty ranges.
        self.instanced.prepare(&mut frame, (tree_models, &instanced, time))?;
        // Cards for both: the paired batches' first, whose bands the geometry passes read.
        let paired = trees.len();
        let mut cards = trees;
        cards.extend(instanced);
        self.impostors.prepare(&mut frame, (tree_models, cards))?;
        let bands = &self.impostors.bands()[..paired];
        self.cylinders.prepare(&mut frame, (cylinders, bands))?;
        self.leaves.prepare(&mut frame, (leaves, time, bands))?;
        self.grass.prepare(&mut frame, (grass, self.terrain.covers()))?;
        self.points.prepare(&mut frame, (points, show_points))?;
        self.overlay.prepare(&self.memory, slot, view.width, view.height)?;
        self.frames[slot].staging.stage(&self.memory, &self.uploads)?;
        stats.upload_bytes = self.uploads.bytes();
        let time = if time.is_finite() { time } else { 0.0 };
        let wind = WindBlock::at(&self.wind, time);
        let grid = self.wind_grid.prepare(view.camera.position, &self.wind, time);
        self.globals
            .write(slot, view, (&sun, &self.atmosphere), &shadow, (wind, grid))
    }

    /// Records uploads, the passes and the readback into frame slot `slot` and submits them.
    fn draw(&mut self, slot: usize, stats: &mut FrameStats) -> Result<(), RenderError> {
        let d = &self.device.raw;
        let cmd = self.frames[slot].commands.begin()?;
        record_uploads(d, cmd, self.frames[slot].staging.raw(), &self.uploads);
        // The wind before anything that sways in it (both passes' leaves).
        self.wind_grid.record(&Recording {
            device: d,
            cmd,
            globals: self.globals.set(slot),
        });
        // The trees drawn from their models are culled and given their levels before any
        // draw reads the lists and commands that makes.
        self.instanced.record_cull(&Recording {
            device: d,
            cmd,
            globals: self.globals.set(slot),
        });
        // The ground cover's blades, before the grass pass draws them.
        self.grass.record_expand(
            &Recording {
                device: d,
                cmd,
                globals: self.globals.set(slot),
            },
            slot,
        );
        // A new generation of tree models is baked before anything samples the atlases.
        self.impostors.record_bake(&Recording {
            device: d,
            cmd,
            globals: self.globals.set(slot),
        });
        // The shadows first (terrain and trees), drawn with the sun's constants; the
        // surfaces sample them.
        self.shadow.begin(d, cmd);
        let sun = Recording {
            device: d,
            cmd,
            globals: self.globals.sun_set(slot),
        };
        if self.atmosphere.shadow_strength > 0.0 {
            self.terrain.record_shadow(&sun, stats);
            self.cylinders.record_shadow(&sun, stats);
            self.leaves.record_shadow(&sun, stats);
            self.instanced.record_shadow(&sun, stats);
        }
        self.shadow.end(d, cmd);
        self.target
            .begin(d, cmd, self.atmosphere.horizon.extend(1.0).to_array());
        let rec = Recording {
            device: d,
            cmd,
            globals: self.globals.set(slot),
        };
        self.terrain.record(&rec, stats);
        self.grass.record(&rec, stats);
        self.cylinders.record(&rec, stats);
        self.leaves.record(&rec, stats);
        self.instanced.record(&rec, stats);
        self.impostors.record(&rec, stats);
        self.points.record(&rec, stats);
        self.horizon.record(&rec, stats);
        // At the far plane, after the surfaces: it shades only the pixels left uncovered.
        self.sky.record(&rec, self.horizon.sea_level());
        self.overlay.record(&rec);
        self.target.end(d, cmd);
        self.frames[slot].commands.submit(vk::SubmitInfo::default())?;
        self.submitted += 1;
        self.frames[slot].frame = self.submitted;
        self.memory.submitted(self.submitted);
        Ok(())
    }

    /// Waits until the last frame submitted has finished (and so every earlier one: one
    /// queue runs them in order), and frees what only they could use: after a loading
    /// screen's last frame, say, the next frame's time holds none of its work.
    pub fn finish(&self) -> Result<(), RenderError> {
        let slot = (self.submitted % FRAMES_IN_FLIGHT as u64) as usize;
        self.frames[slot].commands.wait()?;
        self.memory.finished(self.submitted);
        Ok(())
    }

    /// What the grass vertex shader adds to baked particles of `layer`: for each
    /// query `(link, x, z, time)`, the displacement of particle `link + 1` of a
    /// blade rooted at world `(x, z)` at playback `time` seconds under
    /// `wind_power` and `wave_speed` (the same fetch, run as a compute shader).
    /// Mirrors `BakedGrass::sample` of sylva-systems; tests compare the two.
    pub fn probe_grass(
        &mut self,
        layer: &GrassLayer,
        wind_power: f32,
        wave_speed: f32,
        queries: &[(u32, f32, f32, f32)],
    ) -> Result<Vec<Vec3>, RenderError> {
        // No frame in flight: the probe's temporaries are then freed as it drops them.
        self.finish()?;
        self.probe.run(&self.memory, layer, (wind_power, wave_speed), queries)
    }

    /// The wind `shaders/wind.glsl` evaluates for the crowns: for each query `(position, wind
    /// time)`, the velocity of `wind` there (m/s, before its `power`), every gust counted (at
    /// most `SWAY_GUSTS`). The same code as the frame's wind grid pass, run for the queries;
    /// mirrors `WindField::sample` of sylva-systems, and tests compare the two.
    pub fn probe_wind(&mut self, wind: &SwayWind, queries: &[(Vec3, f32)]) -> Result<Vec<Vec3>, RenderError> {
        // No frame in flight: the probe's temporaries are then freed as it drops them.
        self.finish()?;
        self.wind_probe.run(&self.memory, wind, queries)
    }

    /// The last frame, once the GPU has finished it: RGBA8 (sRGB), rows top to bottom.
    /// All zeros (black, transparent) when waiting for it failed (the device was lost);
    /// [`Renderer::save_png`] reports that error.
    pub fn read_pixels(&self) -> Vec<u8> {
        match self.finish() {
            Ok(()) => self.target.pixels(),
            Err(_) => {
                let (w, h) = self.size();
                vec![0; w as usize * h as usize * 4]
            }
        }
    }

    /// Writes the last frame as a PNG, once the GPU has finished it (see [`write_png`]).
    pub fn save_png(&self, path: &Path) -> Result<(), RenderError> {
        self.finish()?;
        let (w, h) = self.size();
        write_png(path, w, h, &self.target.pixels())
    }

    /// The last frame as the bytes of a PNG, once the GPU has finished it.
    pub fn png(&self) -> Result<Vec<u8>, RenderError> {
        self.finish()?;
        let (w, h) = self.size();
        encode_png(w, h, &self.target.pixels())
    }
}

impl Drop for Renderer {
    fn drop(&mut self) {
        // SAFETY: waiting has no precondition on a live device; afterwards no resource the
        // fields free is in use, so the graveyard may free everything.
        let _ = unsafe { self.device.raw.device_wait_idle() };
        self.memory.finished(self.submitted);
    }
}

/// The target size, when each side is 1 to 16384 pixels.
fn checked_extent(width: u32, height: u32) -> Result<vk::Extent2D, RenderError> {
    if !(1..=16384).contains(&width) || !(1..=16384).contains(&height) {
        return Err(RenderError::BadSize(width, height));
    }
    Ok(vk::Extent2D { width, height })
}
