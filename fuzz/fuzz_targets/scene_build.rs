//! Arbitrary RON → `sylva::Scene::from_str` → the whole build (every section, held to a small
//! memory limit) → two frames. Nothing may panic; a rejected scene's error must point into the
//! input. Worlds are left out: their generation pool outlives one input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sylva::memory::MemoryLimit;
use sylva::{BuildError, Scene};

/// What one input may plan to allocate.
const MEMORY: u64 = 256 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = text.lines().count() + 1;
    let mut scene = match Scene::from_str(text, "fuzz.ron") {
        Ok(scene) => scene,
        Err(e) => {
            assert!(e.line <= lines, "{e} lies outside the input");
            return;
        }
    };
    scene.world = None;
    match sylva::build_within(&scene, 1, MemoryLimit::bytes(MEMORY)) {
        Ok(built) => {
            let mut app = built.app;
            app.advance(2);
        }
        Err(BuildError::Scene(e)) => assert!(e.line <= lines, "{e} lies outside the input"),
        Err(_) => {}
    }
});
