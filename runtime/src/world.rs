//! The world: hecs entities plus typed resources.

use crate::resources::Resources;

/// Entities (a [`hecs::World`]) and resources, the whole simulation state.
///
/// Systems see the world through a [`SystemContext`](crate::SystemContext),
/// which checks every access against what the system declared. Code outside a
/// schedule (set-up, tests, an embedding engine between frames) uses the
/// fields directly.
#[derive(Default)]
pub struct World {
    /// The entities and their components.
    pub entities: hecs::World,
    /// Typed singletons: time, wind, spatial indices, streaming state.
    pub resources: Resources,
}

impl World {
    /// An empty world.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts entities that have component `T`.
    pub fn count<T: hecs::Component>(&self) -> usize {
        self.entities
            .archetypes()
            .filter(|a| a.has::<T>())
            .map(|a| a.len() as usize)
            .sum()
    }
}
