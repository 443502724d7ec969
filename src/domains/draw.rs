//! A frame's batches, gathered from the domains that draw.
//!
//! The renderer's [`FrameInput`] borrows each batch from the app's resources, so the guards
//! of those resources must outlive it and cannot be made and dropped inside one domain's
//! call. Gathering therefore takes two steps: each domain's [`gather`](super::Domain::gather)
//! has [`Gathered`] hold the guards of its batches, then [`Gathered::input`] lends every held
//! batch to one frame, in the order the domains held them.

use sylva_runtime::{App, ResMut, Resources};
pub(crate) use sylva_vk::FrameInput;

use super::Domain;

/// A render batch a domain extracts into a resource of its own type.
pub(crate) trait Draw: 'static {
    /// Puts the batch's parts into `input`, borrowed for the frame.
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>);
}

/// A held batch, whatever its type.
trait Held {
    /// Lends the batch under the guard.
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>);
}

impl<T: Draw> Held for ResMut<'_, T> {
    fn lend<'f>(&'f mut self, input: &mut FrameInput<'f>) {
        T::lend(self, input);
    }
}

/// The batches of one frame, held borrowed from an app's resources until the frame is drawn.
pub(crate) struct Gathered<'a> {
    resources: &'a Resources,
    held: Vec<Box<dyn Held + 'a>>,
}

impl<'a> Gathered<'a> {
    /// Holds the batches each of `domains` draws from `app`, in the order of `domains` (the
    /// facade's is [`DOMAINS`](super::DOMAINS)).
    pub fn of(app: &'a App, domains: &[&dyn Domain]) -> Self {
        let mut gathered = Self {
            resources: &app.world.resources,
            held: Vec::new(),
        };
        for domain in domains {
            domain.gather(&mut gathered);
        }
        gathered
    }

    /// Holds the app's batch `T` for the frame, when the app has one.
    ///
    /// # Panics
    /// When `T` is already held: each batch is gathered by one domain alone, however many fill it.
    pub fn draw<T: Draw>(&mut self) {
        if let Some(batch) = self.resources.get_mut::<T>() {
            self.held.push(Box::new(batch));
        }
    }

    /// The frame's batches, in the order they were held; its camera, sun and clock are the
    /// caller's to set.
    pub fn input(&mut self) -> FrameInput<'_> {
        let mut input = FrameInput::default();
        for batch in &mut self.held {
            batch.lend(&mut input);
        }
        input
    }
}
