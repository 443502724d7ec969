//! Trees: the branch graph and the operations on it.

mod graph;

pub use graph::{BranchGraph, NO_PARENT};
