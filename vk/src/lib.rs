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
//! - Every Vulkan object is owned by a guard (`handles`, `gpu_memory`,
//!   `descriptors`, `commands`) that frees it on Drop and keeps the device
//!   alive until then.
//! - `gpu_memory`: gpu-allocator for every buffer and image, and the graveyard
//!   that keeps what a frame in flight may use until its fence (two frames
//!   are in flight: `renderer`).
//! - `upload`: a staging ring; only dirty ranges of the batches go up.
//! - `cylinders`, `leaves`, `terrain`, `points`, `grass`: the draw paths (instanced tubes,
//!   alpha-tested leaf cards,
//!   vertex-texture-fetch terrain, screen-space points, baked-motion grass
//!   blades), each culled by boxes, each a `pass::DrawPass` built on the
//!   shared `pipeline` recipe; `sky`, a full-screen triangle behind them
//!   whose colours the fog of every surface fades to; `overlay`, text over the
//!   frame (`Renderer::set_overlay`) in a bitmap `font` of Sylva's own;
//!   `impostors`, far trees as camera-facing cards from baked atlases; `horizon`, the far
//!   field beyond the streamed chunks (sunk under them) and the sea to the horizon.
//! - `target`: the headless colour + depth target with readback to PNG.
//! - [`shaders`]: the committed SPIR-V of `shaders/`.
//! - [`testing`]: the no-driver skip rule and the validation check render tests share.
//! - [`window`]: `sylva view`: a winit window, a swapchain the frame is blitted
//!   to, and a fly camera.
#![warn(missing_docs)]

mod clusters;
mod commands;
mod cull;
mod cylinders;
mod descriptors;
pub mod device;
mod error;
mod font;
mod frame;
mod globals;
mod gpu_memory;
mod grass;
mod grass_probe;
mod handles;
mod horizon;
mod impostors;
mod indirect;
mod instanced_trees;
mod instances;
mod leaves;
mod mesh;
mod overlay;
mod pass;
mod pipeline;
mod pod;
mod points;
mod renderer;
pub mod shaders;
mod shadow;
mod sky;
mod sward;
mod target;
mod terrain;
pub mod testing;
mod upload;
mod validation;
mod wind;
mod wind_probe;
pub mod window;

pub use commands::FRAMES_IN_FLIGHT;
pub use cull::{Aabb, Frustum};
pub use cylinders::SIDES;
pub use device::Msaa;
pub use error::{NO_DRIVER_HINT, RenderError};
pub use frame::{Atmosphere, FrameInput, FrameStats};
pub use gpu_memory::BLOCK_BYTES;
pub use grass::{LOD_CUT_METRES, LOD_FULL_METRES};
pub use impostors::{ABOVE, CARD_FADE, CARD_PIXELS, CELL_TEXELS, COLUMNS, DIRECTIONS, VIEW_FADE};
pub use instanced_trees::{LEVELS, TREE_BYTES};
pub use overlay::OverlayLine;
pub use renderer::{RenderStats, Renderer};
pub use sward::{MAX_BLADES, MAX_COVER_LAYERS, SwardBlade};
pub use target::{encode_png, read_png, write_png};
pub use validation::ValidationLog;
