//! The report's `tree` object, which a colonization scene extends with its run.

use serde::Serialize;
use sylva_runtime::App;

use super::{ColonizeStats, Colonizing, GROW_SYSTEM};
use crate::species::TreeStats;

/// The report's `tree` object: the tree's sizes and timings, plus the colonization run for
/// colonization scenes.
#[derive(Clone, Debug, Serialize)]
pub struct TreeReport {
    /// Sizes and timings.
    #[serde(flatten)]
    pub stats: TreeStats,
    /// The colonization run, for colonization scenes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colonize: Option<ColonizeStats>,
}

impl TreeReport {
    /// The tree object of `app`: a tree grown while building (L-system, or colonization grown at
    /// once), or one growing in the app by [`GROW_SYSTEM`], whose total time is then the
    /// colonization's `grow_ms`; `None` without either.
    pub fn of(app: &App) -> Option<Self> {
        let world = &app.world;
        if let Some(t) = world.resources.get::<TreeStats>() {
            return Some(Self {
                stats: *t,
                colonize: world.resources.get::<ColonizeStats>().map(|c| *c),
            });
        }
        let grow_ms = app.metrics().systems().get(GROW_SYSTEM).map_or(0.0, |s| s.total_ms);
        let mut growing = world.entities.query::<&Colonizing>();
        let c = growing.iter().next()?.colonizer();
        Some(Self {
            stats: TreeStats {
                segments: c.nodes(),
                ..TreeStats::default()
            },
            colonize: Some(c.stats(grow_ms)),
        })
    }
}
