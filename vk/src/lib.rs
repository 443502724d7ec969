//! Sylva's Vulkan renderer (ash). It draws the runtime's extraction batches
//! (`sylva_runtime::extract`) and depends on nothing else of Sylva's.
//!
//! ```no_run
//! use sylva_vk::{FrameInput, Renderer};
//! let mut renderer = Renderer::new_headless(320, 240)?;
//! let stats = renderer.render(FrameInput::default())?;
//! renderer.save_png(std::path::Path::new("frame.png"))?;
//! # Ok::<(), sylva_vk::RenderError>(())
//! ```
//!
//! - [`device`]: the loader is opened at run time (`ash::Entry::load`); no
//!   driver is [`RenderError::NoDriver`], which callers report and carry on.
//!   Discrete GPUs win over integrated ones, which win over CPU drivers
//!   (lavapipe). The Khronos validation layer is on whenever it is installed;
//!   [`ValidationLog`] counts its messages.
//! - `memory`: gpu-allocator for every buffer and image.
//! - `upload`: a staging ring; only dirty ranges of the batches go up.
//! - `cylinders`, `terrain`, `points`, `grass`: the draw paths (instanced tubes,
//!   vertex-texture-fetch terrain, screen-space points, baked-motion grass
//!   blades), each culled by boxes.
//! - `target`: the headless colour + depth target with readback to PNG.
//! - [`shaders`]: the committed SPIR-V of `shaders/`.
//! - [`testing`]: the no-driver skip rule and the validation check render tests share.
//! - [`window`]: `sylva view`: a winit window, a swapchain the frame is blitted
//!   to, and a fly camera.
#![warn(missing_docs)]

mod cull;
mod cylinders;
pub mod device;
mod frame;
mod grass;
mod memory;
mod mesh;
mod pipeline;
mod pod;
mod points;
mod renderer;
pub mod shaders;
mod target;
mod terrain;
pub mod testing;
mod upload;
mod validation;
pub mod window;

pub use cull::{Aabb, Frustum};
pub use cylinders::SIDES;
pub use frame::{Atmosphere, FrameInput, FrameStats};
pub use grass::{LOD_CUT_METRES, LOD_FULL_METRES};
pub use renderer::{RenderStats, Renderer};
pub use target::{read_png, write_png};
pub use validation::ValidationLog;

use ash::vk;

/// What to print when there is no Vulkan driver.
pub const NO_DRIVER_HINT: &str =
    "rendering is off: no Vulkan driver found; install one (Debian: apt-get install mesa-vulkan-drivers libvulkan1)";

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No Vulkan loader, no driver, or no device that can render.
    #[error("no Vulkan driver found ({0})")]
    NoDriver(String),
    /// A Vulkan call failed.
    #[error("{call} failed: {result}")]
    Vulkan {
        /// The call.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
    /// GPU memory could not be allocated.
    #[error("GPU memory: {0}")]
    Memory(String),
    /// A shader could not be loaded.
    #[error("shader {0}")]
    Shader(String),
    /// An extraction batch is inconsistent.
    #[error("bad batch: {0}")]
    BadBatch(String),
    /// Width or height is zero or too large.
    #[error("bad target size {0}×{1} (1 to 16384 pixels per side)")]
    BadSize(u32, u32),
    /// Reading or writing an image file failed.
    #[error("{0}")]
    Io(String),
    /// The window could not be opened or driven.
    #[error("window: {0}")]
    Window(String),
}

impl RenderError {
    pub(crate) fn vk(call: &'static str, result: vk::Result) -> RenderError {
        RenderError::Vulkan { call, result }
    }

    /// True when the machine has no usable Vulkan driver (print [`NO_DRIVER_HINT`]).
    pub fn is_no_driver(&self) -> bool {
        matches!(self, RenderError::NoDriver(_))
    }
}
