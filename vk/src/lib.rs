//! Sylva's Vulkan renderer (ash). It draws the runtime's extraction batches
//! (`sylva_runtime::extract`) and depends on nothing else of Sylva's.
//!
//! The renderer itself is issue #6; until it lands this crate is empty so the
//! workspace already has its final shape.
#![warn(missing_docs)]
