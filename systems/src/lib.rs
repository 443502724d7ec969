//! Sylva's domain systems: everything that generates or simulates nature,
//! built on `sylva-runtime` and free of any renderer.
#![warn(missing_docs)]

pub mod colonize;
pub mod ecology;
pub mod grass;
pub mod lsystem;
pub mod mesh_kit;
mod pages;
pub mod particles;
pub mod placement;
mod registers;
pub mod species;
pub mod terrain;
pub mod tree;
pub mod world;
