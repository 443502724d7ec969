//! Typed singletons stored beside the entity world.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

type Slot = RwLock<Box<dyn Any + Send + Sync>>;

/// A map from type to one value of that type (time, wind, spatial indices, ...).
///
/// Each resource sits behind its own lock so that systems of one stage can
/// hold different resources at once. The schedule guarantees that declared
/// accesses never contend; a contended lock therefore means a bug and panics
/// with both the resource name and the cause instead of dead-locking.
#[derive(Default)]
pub struct Resources {
    map: HashMap<TypeId, Slot>,
}

/// Shared borrow of a resource.
pub struct Res<'a, T: 'static> {
    guard: RwLockReadGuard<'a, Box<dyn Any + Send + Sync>>,
    _marker: std::marker::PhantomData<&'a T>,
}

/// Exclusive borrow of a resource.
pub struct ResMut<'a, T: 'static> {
    guard: RwLockWriteGuard<'a, Box<dyn Any + Send + Sync>>,
    _marker: std::marker::PhantomData<&'a mut T>,
}

impl Resources {
    /// Inserts or replaces the resource of type `T`.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), RwLock::new(Box::new(value)));
    }

    /// Removes and returns the resource of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let slot = self.map.remove(&TypeId::of::<T>())?;
        let boxed = slot.into_inner().unwrap_or_else(|poison| poison.into_inner());
        boxed.downcast::<T>().ok().map(|b| *b)
    }

    /// True when a resource of type `T` exists.
    pub fn contains<T: 'static>(&self) -> bool {
        self.map.contains_key(&TypeId::of::<T>())
    }

    /// Borrows resource `T` shared; `None` when absent.
    ///
    /// # Panics
    /// When the resource is currently borrowed exclusively (an access bug).
    pub fn get<T: 'static>(&self) -> Option<Res<'_, T>> {
        let slot = self.map.get(&TypeId::of::<T>())?;
        let guard = match slot.try_read() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => contended::<T>(),
        };
        Some(Res {
            guard,
            _marker: std::marker::PhantomData,
        })
    }

    /// Borrows resource `T` exclusively; `None` when absent.
    ///
    /// # Panics
    /// When the resource is currently borrowed (an access bug).
    pub fn get_mut<T: 'static>(&self) -> Option<ResMut<'_, T>> {
        let slot = self.map.get(&TypeId::of::<T>())?;
        let guard = match slot.try_write() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => contended::<T>(),
        };
        Some(ResMut {
            guard,
            _marker: std::marker::PhantomData,
        })
    }
}

fn contended<T>() -> ! {
    panic!(
        "resource {} is borrowed elsewhere at the same time: a system uses it without declaring it",
        type_name::<T>()
    )
}

impl<T: 'static> Deref for Res<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard
            .downcast_ref::<T>()
            .expect("resource slot holds its own type")
    }
}

impl<T: 'static> Deref for ResMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard
            .downcast_ref::<T>()
            .expect("resource slot holds its own type")
    }
}

impl<T: 'static> DerefMut for ResMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard
            .downcast_mut::<T>()
            .expect("resource slot holds its own type")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_mutate_remove() {
        let mut r = Resources::default();
        r.insert(5u32);
        r.insert(String::from("a"));
        *r.get_mut::<u32>().unwrap() += 1;
        assert_eq!(*r.get::<u32>().unwrap(), 6);
        assert_eq!(r.get::<String>().unwrap().as_str(), "a");
        assert!(r.get::<i64>().is_none());
        assert_eq!(r.remove::<u32>(), Some(6));
        assert!(!r.contains::<u32>());
    }

    #[test]
    fn shared_borrows_coexist() {
        let mut r = Resources::default();
        r.insert(1u8);
        let a = r.get::<u8>().unwrap();
        let b = r.get::<u8>().unwrap();
        assert_eq!(*a + *b, 2);
    }

    #[test]
    #[should_panic(expected = "borrowed elsewhere")]
    fn undeclared_overlap_panics_instead_of_deadlocking() {
        let mut r = Resources::default();
        r.insert(1u8);
        let _a = r.get::<u8>().unwrap();
        let _b = r.get_mut::<u8>().unwrap();
    }
}
