//! Arbitrary RON → the `lsystem` section of a scene's tree
//! ([`LSystemParams`]) → validation → parse, derive and turtle. Nothing may
//! panic. The whole scene loader lives in the root crate, which links the
//! Vulkan renderer, so this target covers the tree section it hands on.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sylva_systems::lsystem::{LSystemError, LSystemParams, generate};

/// Caps that keep one input cheap; the limits themselves are fuzzed by `lsystem_parse`.
const MODULE_LIMIT: usize = 2_000;
const ITERATIONS: u32 = 8;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut params) = ron::from_str::<LSystemParams>(text) else {
        return;
    };
    params.module_limit = params.module_limit.clamp(1, MODULE_LIMIT);
    params.iterations = params.iterations.min(ITERATIONS);
    match generate(&params, 1) {
        Ok(out) => {
            assert_eq!(out.widths.len(), out.graph.len());
            assert!(out.graph.start.iter().chain(&out.graph.end).all(|p| p.is_finite()));
        }
        Err(LSystemError::InvalidParameter { field, message }) => {
            assert!(!field.is_empty() && !message.is_empty());
            assert!(
                params.validate().is_err(),
                "{field}: {message} but validate() accepts {params:?}"
            );
        }
        // Valid but huge steps or lengths may carry the turtle past the f32 range.
        Err(LSystemError::Turtle { .. }) => {}
        Err(e) => assert!(e.position().is_some(), "grammar error without a position: {e}"),
    }
});
