//! Headless renderers for the commands that write pictures, and the PNG of a frame.

use std::path::Path;

use sylva::RenderReport;
use sylva::vk::Renderer;

use crate::cli::output_paths;

/// A headless renderer for the picture `path` that `flag` asks for: without a
/// Vulkan driver, an error naming the flag and how to get one.
pub(crate) fn renderer_for(flag: &str, path: &Path, width: u32, height: u32) -> Result<Renderer, String> {
    match Renderer::new_headless(width, height) {
        Ok(r) => Ok(r),
        Err(e) if e.is_no_driver() => Err(format!("{flag} {}: {}", path.display(), sylva::vk::NO_DRIVER_HINT)),
        Err(e) => Err(format!("renderer: {e}")),
    }
}

/// A headless renderer; none, after saying how to get a driver, when there is no Vulkan driver.
pub(crate) fn headless(width: u32, height: u32) -> Result<Option<Renderer>, String> {
    match Renderer::new_headless(width, height) {
        Ok(r) => Ok(Some(r)),
        Err(e) if e.is_no_driver() => {
            println!("{}", sylva::vk::NO_DRIVER_HINT);
            Ok(None)
        }
        Err(e) => Err(format!("renderer: {e}")),
    }
}

/// Renders the app's current frame to the PNG `path`, says so, and reports the renderer's totals.
pub(crate) fn render_png(
    renderer: &mut Renderer,
    app: &sylva::runtime::App,
    path: &Path,
    show_points: bool,
) -> Result<RenderReport, String> {
    let frame = sylva::render(renderer, app, show_points).map_err(|e| format!("renderer: {e}"))?;
    write_png(renderer, path)?;
    let (width, height) = renderer.size();
    println!(
        "screenshot: {} ({}x{}, {} on {}, {} draw calls, {:.1} ms)",
        path.display(),
        width,
        height,
        crate::cli::common::count(frame.instances(), "instance"),
        renderer.device_name(),
        frame.draw_calls,
        frame.frame_ms
    );
    Ok(RenderReport::new(&renderer.stats()))
}

/// Writes the renderer's last frame as a PNG to `path` (standard output for `-`; see
/// [`output_paths::write`]).
pub(crate) fn write_png(renderer: &Renderer, path: &Path) -> Result<(), String> {
    let png = renderer.png().map_err(|e| format!("renderer: {e}"))?;
    output_paths::write(path, &png).map_err(|e| format!("{}: {e}", path.display()))
}
