//! A system (a function plus its declared access) and the context it runs in.

use std::any::{TypeId, type_name};
use std::sync::{Mutex, MutexGuard};

use hecs::{Archetype, ArchetypeColumn, ArchetypeColumnMut, CommandBuffer, Component, Fetch, Query, QueryBorrow};

use crate::access::Access;
use crate::resources::{Res, ResMut, Resources};

/// Simulation time of the step being run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Time {
    /// Number of fixed steps completed before this one.
    pub tick: u64,
    /// Length of one fixed step, seconds.
    pub dt: f32,
    /// Simulated seconds before this step (`tick × dt`, accumulated in f64).
    pub elapsed: f64,
    /// The world seed every random stream derives from.
    pub seed: u64,
}

/// The body of a system.
pub type SystemFn = dyn FnMut(&SystemContext) + Send;

/// A named function with declared access, run by a [`Schedule`](crate::Schedule).
pub struct System {
    pub(crate) name: String,
    pub(crate) access: Access,
    pub(crate) run: Box<SystemFn>,
}

impl System {
    /// A system called `name` that touches exactly what `access` declares.
    ///
    /// ```
    /// use sylva_runtime::{Access, System};
    /// #[derive(Clone, Copy)] struct Age(u32);
    /// let grow = System::new("grow", Access::new().write::<Age>(), |ctx| {
    ///     for age in ctx.query::<&mut Age>().iter() {
    ///         age.0 += 1;
    ///     }
    /// });
    /// assert_eq!(grow.name(), "grow");
    /// ```
    pub fn new(name: impl Into<String>, access: Access, run: impl FnMut(&SystemContext) + Send + 'static) -> Self {
        Self {
            name: name.into(),
            access,
            run: Box::new(run),
        }
    }

    /// The system's name, as it appears in reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the system declared it touches.
    pub fn access(&self) -> &Access {
        &self.access
    }
}

/// What a running system may see: the parts of the world it declared, a
/// command buffer for structural changes, and the step's [`Time`].
///
/// Every accessor checks the request against the system's [`Access`] and
/// panics on an undeclared one, naming the system and the type: that is a
/// programming error, and catching it at the first call keeps the schedule's
/// no-conflict guarantee honest.
pub struct SystemContext<'w> {
    entities: &'w hecs::World,
    resources: &'w Resources,
    access: &'w Access,
    name: &'w str,
    commands: Mutex<CommandBuffer>,
    time: Time,
}

impl<'w> SystemContext<'w> {
    pub(crate) fn new(
        entities: &'w hecs::World,
        resources: &'w Resources,
        name: &'w str,
        access: &'w Access,
        commands: CommandBuffer,
        time: Time,
    ) -> Self {
        Self {
            entities,
            resources,
            access,
            name,
            commands: Mutex::new(commands),
            time,
        }
    }

    pub(crate) fn into_commands(self) -> CommandBuffer {
        self.commands.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    /// Time of the current step.
    pub fn time(&self) -> Time {
        self.time
    }

    /// A hecs query, after checking every component it borrows was declared.
    pub fn query<Q: Query>(&self) -> QueryBorrow<'w, Q> {
        Q::Fetch::for_each_borrow(|id, unique| self.check_component(id, unique, type_name::<Q>()));
        self.entities.query::<Q>()
    }

    /// The archetypes holding component `T`, for column-slice parallelism.
    ///
    /// Archetypes come in the world's own order, which is deterministic for a
    /// deterministic sequence of spawns.
    pub fn archetypes_with<T: Component>(&self) -> impl Iterator<Item = &'w Archetype> + 'w {
        self.entities.archetypes().filter(|a| a.has::<T>() && !a.is_empty())
    }

    /// Column `T` of `archetype` as a shared slice (declared read or write).
    pub fn column<T: Component>(&self, archetype: &'w Archetype) -> Option<ArchetypeColumn<'w, T>> {
        self.check_component(TypeId::of::<T>(), false, type_name::<T>());
        archetype.get::<&T>()
    }

    /// Column `T` of `archetype` as a mutable slice (declared write).
    pub fn column_mut<T: Component>(&self, archetype: &'w Archetype) -> Option<ArchetypeColumnMut<'w, T>> {
        self.check_component(TypeId::of::<T>(), true, type_name::<T>());
        archetype.get::<&mut T>()
    }

    /// Shared borrow of resource `T`.
    ///
    /// # Panics
    /// When `T` was not declared, or is missing from the world.
    pub fn res<T: Send + Sync + 'static>(&self) -> Res<'w, T> {
        self.check_resource::<T>(false);
        self.resources.get::<T>().unwrap_or_else(|| self.missing::<T>())
    }

    /// Exclusive borrow of resource `T`.
    ///
    /// # Panics
    /// When `T` was not declared for writing, or is missing from the world.
    pub fn res_mut<T: Send + Sync + 'static>(&self) -> ResMut<'w, T> {
        self.check_resource::<T>(true);
        self.resources.get_mut::<T>().unwrap_or_else(|| self.missing::<T>())
    }

    /// The system's command buffer. Spawns, despawns and inserts queued here
    /// are applied after the current stage, in system order.
    pub fn commands(&self) -> MutexGuard<'_, CommandBuffer> {
        self.commands.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check_component(&self, id: TypeId, write: bool, what: &str) {
        if !self.access.allows_component(id, write) {
            panic!(
                "system `{}` {} `{what}` without declaring it (declared: {})",
                self.name,
                if write { "writes" } else { "reads" },
                self.access.describe()
            );
        }
    }

    fn check_resource<T: 'static>(&self, write: bool) {
        if !self.access.allows_resource(TypeId::of::<T>(), write) {
            panic!(
                "system `{}` {} resource `{}` without declaring it (declared: {})",
                self.name,
                if write { "writes" } else { "reads" },
                type_name::<T>(),
                self.access.describe()
            );
        }
    }

    fn missing<T>(&self) -> ! {
        panic!(
            "system `{}` needs resource `{}`, which the world does not have",
            self.name,
            type_name::<T>()
        )
    }
}
