//! Declared data access of a system, and the conflict rule the schedule packs by.

use std::any::{TypeId, type_name};
use std::collections::BTreeMap;

/// What a system touches: components and resources, each read or written.
///
/// Two systems conflict when one writes something the other reads or writes.
/// The schedule never runs conflicting systems at the same time, and the
/// [`SystemContext`](crate::SystemContext) refuses access that was not declared,
/// so the declaration is the single source of truth.
///
/// ```
/// use sylva_runtime::Access;
/// struct Pos; struct Vel; struct Gravity;
/// let integrate = Access::new().write::<Pos>().read::<Vel>().read_res::<Gravity>();
/// let render = Access::new().read::<Pos>();
/// assert!(integrate.conflicts_with(&render));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    components: BTreeMap<TypeId, Use>,
    resources: BTreeMap<TypeId, Use>,
}

/// One declared use of a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Use {
    name: &'static str,
    write: bool,
}

impl Access {
    /// No access at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares that the system reads component `T`.
    pub fn read<T: 'static>(mut self) -> Self {
        declare::<T>(&mut self.components, false);
        self
    }

    /// Declares that the system writes component `T` (writing includes reading).
    pub fn write<T: 'static>(mut self) -> Self {
        declare::<T>(&mut self.components, true);
        self
    }

    /// Declares that the system reads resource `T`.
    pub fn read_res<T: 'static>(mut self) -> Self {
        declare::<T>(&mut self.resources, false);
        self
    }

    /// Declares that the system writes resource `T` (writing includes reading).
    pub fn write_res<T: 'static>(mut self) -> Self {
        declare::<T>(&mut self.resources, true);
        self
    }

    /// True when running both systems at once could race.
    pub fn conflicts_with(&self, other: &Access) -> bool {
        clash(&self.components, &other.components) || clash(&self.resources, &other.resources)
    }

    /// Whether component `id` may be read (`write == false`) or written.
    pub(crate) fn allows_component(&self, id: TypeId, write: bool) -> bool {
        allows(&self.components, id, write)
    }

    /// Whether resource `id` may be read (`write == false`) or written.
    pub(crate) fn allows_resource(&self, id: TypeId, write: bool) -> bool {
        allows(&self.resources, id, write)
    }

    /// Human-readable list, for error messages and reports.
    pub fn describe(&self) -> String {
        let part = |map: &BTreeMap<TypeId, Use>, kind: &str| {
            map.values()
                .map(|u| format!("{} {kind} {}", if u.write { "write" } else { "read" }, u.name))
                .collect::<Vec<_>>()
        };
        let mut all = part(&self.components, "component");
        all.extend(part(&self.resources, "resource"));
        all.join(", ")
    }
}

fn declare<T: 'static>(map: &mut BTreeMap<TypeId, Use>, write: bool) {
    let entry = map.entry(TypeId::of::<T>()).or_insert(Use {
        name: type_name::<T>(),
        write: false,
    });
    entry.write |= write;
}

fn clash(a: &BTreeMap<TypeId, Use>, b: &BTreeMap<TypeId, Use>) -> bool {
    a.iter()
        .any(|(id, ua)| b.get(id).is_some_and(|ub| ua.write || ub.write))
}

fn allows(map: &BTreeMap<TypeId, Use>, id: TypeId, write: bool) -> bool {
    map.get(&id).is_some_and(|u| u.write || !write)
}

#[cfg(test)]
mod tests {
    use super::*;
    struct A;
    struct B;

    #[test]
    fn readers_share_writers_exclude() {
        let ra = Access::new().read::<A>();
        let wa = Access::new().write::<A>();
        let rb = Access::new().read::<B>();
        assert!(!ra.conflicts_with(&ra));
        assert!(ra.conflicts_with(&wa));
        assert!(wa.conflicts_with(&ra));
        assert!(wa.conflicts_with(&wa));
        assert!(!wa.conflicts_with(&rb));
    }

    #[test]
    fn components_and_resources_are_separate() {
        let comp = Access::new().write::<A>();
        let res = Access::new().write_res::<A>();
        assert!(!comp.conflicts_with(&res));
        assert!(res.conflicts_with(&Access::new().read_res::<A>()));
    }

    #[test]
    fn write_implies_read_and_upgrades() {
        let a = Access::new().read::<A>().write::<A>();
        assert!(a.allows_component(TypeId::of::<A>(), true));
        assert!(a.allows_component(TypeId::of::<A>(), false));
        let r = Access::new().read::<A>();
        assert!(!r.allows_component(TypeId::of::<A>(), true));
        assert!(!r.allows_component(TypeId::of::<B>(), false));
        assert!(a.describe().contains("write component"));
    }
}
