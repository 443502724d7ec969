//! Arbitrary UTF-8 → L-system parser → a few bounded derivation steps →
//! turtle. Nothing may panic, and every error must point into the input
//! (the property `systems/tests/lsystem_fuzz.rs` also checks on stable).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../systems/tests/lsystem_fuzz/check.rs"]
mod check;

fuzz_target!(|data: &[u8]| {
    // The last byte picks the step count, so the fuzzer can reach deep words.
    let Some((&last, text)) = data.split_last() else { return };
    let Ok(text) = std::str::from_utf8(text) else { return };
    if let Err(message) = check::check_pipeline(text, u32::from(last % 8)) {
        panic!("{message}\ninput: {text:?}");
    }
});
