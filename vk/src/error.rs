//! Why rendering failed, and what to tell a user who has no driver.

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
    /// The failure of the Vulkan call named `call`.
    pub(crate) fn vk(call: &'static str, result: vk::Result) -> RenderError {
        RenderError::Vulkan { call, result }
    }

    /// True when the machine has no usable Vulkan driver (print [`NO_DRIVER_HINT`]).
    pub fn is_no_driver(&self) -> bool {
        matches!(self, RenderError::NoDriver(_))
    }
}
