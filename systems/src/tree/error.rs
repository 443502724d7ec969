//! The one error type of the tree operations.

use std::io;

use sylva_runtime::FieldError;

/// Why a tree operation refused its input.
///
/// Every operation checks its input first and changes nothing when it fails.
#[derive(Debug, thiserror::Error)]
pub enum TreeError {
    /// The graph's columns do not all have the same length.
    #[error("branch graph columns have different lengths (start has {expected}, {column} has {found})")]
    RaggedColumns {
        /// Name of the offending column.
        column: &'static str,
        /// Length of `start`.
        expected: usize,
        /// Length of the offending column.
        found: usize,
    },
    /// A segment names a parent that does not come before it.
    #[error("segment {segment} has parent {parent}, but a parent must precede its child")]
    ParentOrder {
        /// The child segment.
        segment: usize,
        /// The parent index it stores.
        parent: u32,
    },
    /// A position or radius is NaN, infinite or (for radii) negative.
    #[error("segment {segment}: {what} is {value}, but must be {rule}")]
    BadValue {
        /// The segment holding the value.
        segment: usize,
        /// Which column ("start", "end", "start_radius", "end_radius").
        what: &'static str,
        /// The value, formatted.
        value: String,
        /// What the value must be.
        rule: &'static str,
    },
    /// A parameter is out of range; the path is the field's name as written in a scene file.
    #[error("invalid parameter `{}`: {}", .0.dotted(), .0.message)]
    InvalidParam(#[from] FieldError),
    /// The graph has more segments or the mesh more vertices than 32-bit indices can address.
    #[error("{what} count {count} exceeds the 32-bit index limit")]
    TooLarge {
        /// What overflowed ("segment" or "vertex").
        what: &'static str,
        /// The count that did not fit.
        count: u64,
    },
    /// A mesh handed to an exporter is inconsistent.
    #[error("invalid mesh: {0}")]
    InvalidMesh(String),
    /// Writing an export failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}
