//! Space colonization (Runions et al. 2007, with the thesis's extensions).
//!
//! ```
//! use sylva_systems::colonize::{ColonizeParams, Colonizer};
//!
//! let mut colonizer = Colonizer::new(&ColonizeParams::default(), 7)?;
//! colonizer.run();
//! let trees = colonizer.finish()?;
//! assert_eq!(trees.len(), 1); // one graph per root
//! assert!(trees[0].len() > 10);
//! # Ok::<(), sylva_systems::colonize::ColonizeError>(())
//! ```
//!
//! [`Colonizer`] samples attractors from [`Region`]s (or a point file), grows one trunk per root
//! toward the nearest region, then iterates: every live attractor steers its nearest node within
//! d_i, each growing node with attractors gains a successor D away (unless a rule refuses it),
//! attractors within d_k of a node die. The output is one [`crate::tree::BranchGraph`] per root.
//! [`Colonizer::step`] grows a few iterations at a time; [`spawn_colonizing`] and [`install`] put
//! a colonizer into an app, with attractors as [`Attractor`] entities and a [`GROW_SYSTEM`]
//! that grows it a few iterations per fixed step. [`build`] puts a scene's colonization into an
//! app, grown over time or all at once; [`TreeReport`] reports it.
//!
//! Deviations from the thesis, with their reasons in docs/design/trees.md ("Space colonization"):
//! - Direction: the thesis code's `normalize(normalize(Σ unit vectors) + T)`, not eq. 3.2/3.3's
//!   un-normalized sum, so T weighs the same however many attractors pull. T is not clamped.
//! - An attractor's nearest node is searched among all nodes (Runions and thesis step 1), not only
//!   growing ones; a retired node keeps its attractors. Kills use all nodes and happen right
//!   after each growth step, so with d_k < d_i (required) nothing depends on the code's order.
//! - Sampling is uniform in volume by default; the code's centre-weighted sampling is
//!   [`Sampling::CentreWeighted`] with a continuous radius, not UE's integer `RandRange`.
//! - Weighted growth is linear by default ([`WeightedGrowth::Linear`], the text);
//!   [`WeightedGrowth::Thesis`] is the code's integer division. Both use the growing node's Z.
//! - Angle smoothing is eq. 3.5 corrected (ends move halfway to their mean), as in the code.
//! - The trunk follows the code: toward the nearest region's centre (for a point file alone, the
//!   cloud's centroid), ending at the region's reach, then extended by D until an attractor is
//!   within d_i; those extensions do not count toward N_I.
//! - Overlapping regions share one count and are sampled as their union (the thesis's future
//!   work), so `count` is the total, not per region.
//! - The "growing set is empty" stop of the code is [`Termination::NoInfluence`]: no growing
//!   node has an attractor.
//! - Forests may set a crown gap (not in the thesis): an attractor within
//!   [`ColonizeParams::crown_gap`] of nodes of two trees dies, so crowns keep that far apart
//!   instead of about d_k. Off by default.

mod build;
mod entities;
mod grid;
mod grow;
mod limits;
#[doc(hidden)]
pub mod oracle;
mod params;
mod regions;
mod replay;
mod report;
mod smooth;

pub use build::{GRAPH_SCALE, build};
pub use entities::{
    Attractor, AttractorBatch, Colonizing, EXTRACT_SYSTEM, GROW_SYSTEM, GrownSegment, install, spawn_colonizing,
};
pub use grow::Colonizer;
pub use limits::{MAX_ATTRACTORS, MAX_COORDINATE};
pub use params::{ColonizeParams, MAX_ITERATIONS, WeightedGrowth};
pub use regions::{MAX_POINT_LINE, PointLineError, Region, Sampling, Shape, load_points, parse_points, sample_regions};
pub use report::TreeReport;
pub use smooth::smooth_branching;
use sylva_runtime::FieldError;

/// Why growth stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Termination {
    /// Every attractor was killed.
    AttractorsExhausted,
    /// No growing node has an attractor within d_i.
    NoInfluence,
    /// N_I iterations ran.
    IterationLimit,
}

/// Sizes and timing of a colonization run (the report's `tree.colonize` object).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ColonizeStats {
    /// Attractors sampled (and loaded).
    pub attractors: usize,
    /// Attractors still alive.
    pub attractors_left: usize,
    /// Growth iterations run.
    pub iterations: u32,
    /// Nodes over all trees (one per segment, trunks included).
    pub nodes: usize,
    /// Why growth stopped; `None` while it can go on.
    pub termination: Option<Termination>,
    /// Wall time of sampling and growth, milliseconds.
    pub grow_ms: f64,
}

/// Errors from parameters, point files and post-processing.
#[derive(Debug, thiserror::Error)]
pub enum ColonizeError {
    /// A parameter is out of range; the path is below `colonize`, e.g. `kill_distance` or
    /// `regions[1].shape.radius`.
    #[error("colonize.{}: {}", .0.dotted(), .0.message)]
    InvalidParam(#[from] FieldError),
    /// A point file line does not hold three numbers within bounds, or breaks a size limit.
    #[error("point file {file}:{line}: {message}")]
    PointFile {
        /// The file (or the label the text was given).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: PointLineError,
    },
    /// A point file cannot be read.
    #[error("cannot read point file {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// Curve reduction rejected the graph or its parameter.
    #[error(transparent)]
    Tree(#[from] crate::tree::TreeError),
}
