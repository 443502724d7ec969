//! What render tests share, here and in embedding crates: one rule for "no driver" and one
//! for "validation stayed silent".

use std::sync::Arc;

use crate::device::Msaa;
use crate::renderer::Renderer;

/// The environment variable that turns a missing Vulkan driver from a skip into a failure
/// (CI sets it, since CI installs lavapipe).
pub const REQUIRE_VULKAN: &str = "SYLVA_REQUIRE_VULKAN";

/// A headless renderer for a test, with the Khronos validation layer on and 4× multisampling
/// (as on a GPU, whatever the driver: golden images show the anti-aliased look).
///
/// Returns `None` after printing a loud `SKIPPED` line when the machine has no Vulkan driver,
/// unless [`REQUIRE_VULKAN`] is `1`. Panics when the driver exists but the validation layer
/// does not (a test without validation would pass on errors it cannot see) and on any other
/// renderer error.
pub fn renderer_or_skip(width: u32, height: u32) -> Option<Renderer> {
    match Renderer::new_headless_msaa(width, height, Msaa::On) {
        Ok(r) => {
            assert!(
                r.validating(),
                "render tests need the Khronos validation layer (Debian: apt-get install vulkan-validationlayers)"
            );
            Some(r)
        }
        Err(e) if e.is_no_driver() && std::env::var(REQUIRE_VULKAN).as_deref() != Ok("1") => {
            eprintln!("SKIPPED: render test: no Vulkan driver ({e}); set {REQUIRE_VULKAN}=1 to fail instead");
            None
        }
        Err(e) => panic!("renderer: {e}"),
    }
}

/// Destroys `r` and panics when the validation layer reported anything by then (objects leaked
/// at device or instance destruction are reported only during the drop), or when something
/// kept the device, and so the instance, alive past the renderer.
pub fn assert_clean_shutdown(r: Renderer) {
    let log = r.validation();
    drop(r);
    assert_eq!(
        Arc::strong_count(&log),
        1,
        "the instance outlived the renderer (it holds the other reference to the log)"
    );
    assert_eq!(
        (log.errors(), log.warnings()),
        (0, 0),
        "at shutdown: {:#?}",
        log.messages()
    );
}

/// Panics with every message when the validation layer reported any error or warning.
pub fn assert_validation_clean(r: &Renderer) {
    let log = r.validation();
    assert_eq!(
        (log.errors(), log.warnings()),
        (0, 0),
        "validation messages: {:#?}",
        log.messages()
    );
}
