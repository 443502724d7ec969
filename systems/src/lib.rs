//! Sylva's domain systems.

pub mod lsystem;
pub mod tree;
