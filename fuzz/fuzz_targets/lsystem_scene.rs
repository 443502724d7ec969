//! Arbitrary RON → `sylva::Scene::from_str` (parsing, validation, grammar check) → the
//! scene tree's L-system: derive and turtle. Nothing may panic, a rejected scene's error must
//! point into the input, and a scene the loader accepts must not fail validation later.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sylva::Scene;
use sylva::systems::lsystem::{LSystemError, generate};

/// Caps that keep one input cheap; the limits themselves are fuzzed by `lsystem_parse`.
const MODULE_LIMIT: usize = 2_000;
const ITERATIONS: u32 = 8;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let scene = match Scene::from_str(text, "fuzz.ron") {
        Ok(scene) => scene,
        Err(e) => {
            assert!(!e.message.is_empty(), "an error without a reason: {e}");
            assert!(e.line <= text.lines().count() + 1, "{e} lies outside the input");
            return;
        }
    };
    let Some(tree) = scene.tree else { return };
    let mut params = tree.lsystem;
    params.module_limit = params.module_limit.clamp(1, MODULE_LIMIT);
    params.iterations = params.iterations.min(ITERATIONS);
    match generate(&params, scene.seed) {
        Ok(out) => {
            assert_eq!(out.widths.len(), out.graph.len());
            assert!(out.graph.start.iter().chain(&out.graph.end).all(|p| p.is_finite()));
        }
        Err(LSystemError::InvalidParameter(e)) => panic!("the loader accepted {params:?}, but {e}"),
        // Valid but huge steps or lengths may carry the turtle past the f32 range.
        Err(LSystemError::Turtle { .. }) => {}
        Err(e) => assert!(e.position().is_some(), "grammar error without a position: {e}"),
    }
});
