//! Sylva's runtime.

pub mod rng;
