//! GPU memory through gpu-allocator: buffers and images that free themselves,
//! with counts of allocations made and released, and the graveyard: what is
//! dropped while a submitted frame may still use it waits there until that
//! frame's fence has signalled.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};
use gpu_allocator::{AllocationSizes, MemoryLocation};

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;

/// Bytes of each block of device memory the allocator sub-allocates from (its defaults are
/// 256 MiB device-local and 64 MiB host-visible). Reserved memory is the sum of the blocks,
/// so it follows what is held only to within a block per memory type: with 64 MiB blocks (all
/// of lavapipe's memory is host-visible) a flight of 32 chunks that ended holding 15 MiB more
/// than it started with reserved 640 MiB against 576 (+11 %). A block is given back when it
/// empties, which a small one does sooner as chunks are evicted; an allocation larger than
/// a block gets a block of its own, given back when it is freed. A world's first ring takes
/// about 35 blocks, far below any driver's limit on allocations.
pub const BLOCK_BYTES: u64 = 16 << 20;

/// The allocator, the graveyard, and counters the frame statistics read. Shared
/// (`Arc`) by every buffer, image and descriptor set, so it outlives them; it
/// frees the graveyard and its device memory before the device goes (a later
/// field).
pub(crate) struct Memory {
    allocator: Mutex<Allocator>,
    graves: Mutex<Vec<Grave>>,
    /// The newest frame submitted (frames count from 1).
    submitted: AtomicU64,
    /// The newest frame known to have finished on the GPU.
    finished: AtomicU64,
    allocations: AtomicU32,
    frees: AtomicU32,
    /// Bytes in live allocations, the graveyard's included.
    allocated: AtomicU64,
    /// The memory types allocations have come from so far, each as the types its resource
    /// allowed and the properties of the one the allocator picked: those it picks by, so one
    /// type may show under several keys but two types never under one. The allocator keeps a
    /// type's last block when it empties.
    types: Mutex<Vec<(u32, vk::MemoryPropertyFlags)>>,
    device: Arc<Device>,
}

/// Objects dropped while frame `frame` may still use them, and their device memory.
struct Grave {
    frame: u64,
    objects: Box<dyn Send>,
    allocation: Option<Allocation>,
}

/// Objects the GPU may be using (a buffer or an image with the device memory bound to
/// it, a descriptor set). Drop hands them to the graveyard, which destroys them (and
/// frees the memory) once every frame submitted before the drop has finished.
pub(crate) struct Deferred<T: Send + 'static> {
    objects: ManuallyDrop<T>,
    allocation: Option<Allocation>,
    memory: Arc<Memory>,
}

impl<T: Send + 'static> Deferred<T> {
    /// `objects` without device memory, dropped through `memory`'s graveyard.
    pub fn new(memory: &Arc<Memory>, objects: T) -> Deferred<T> {
        Deferred {
            objects: ManuallyDrop::new(objects),
            allocation: None,
            memory: Arc::clone(memory),
        }
    }

    /// The objects.
    pub fn get(&self) -> &T {
        &self.objects
    }

    /// The objects, their memory and the graveyard they would go to, handed back
    /// without a drop (to be guarded again).
    fn into_parts(self) -> (T, Option<Allocation>, Arc<Memory>) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so each field is moved out exactly once.
        unsafe {
            (
                ManuallyDrop::take(&mut this.objects),
                this.allocation.take(),
                std::ptr::read(&this.memory),
            )
        }
    }
}

impl<T: Send + 'static> Drop for Deferred<T> {
    fn drop(&mut self) {
        // SAFETY: `objects` is taken once, here, and never touched again.
        let objects = unsafe { ManuallyDrop::take(&mut self.objects) };
        self.memory.bury(Box::new(objects), self.allocation.take());
    }
}

/// A buffer with its memory. Drop destroys the buffer, then frees the memory, once no
/// frame in flight can use it.
pub(crate) struct Buffer {
    bound: Deferred<Owned<vk::Buffer>>,
    size: u64,
}

/// A 2D or 3D image with a view of all of it, and its memory. Drop destroys the view
/// and the image, then frees the memory, once no frame in flight can use them.
pub(crate) struct Image {
    bound: Deferred<(Owned<vk::ImageView>, Owned<vk::Image>)>,
}

impl Memory {
    /// An allocator for `device`.
    pub fn new(device: &Arc<Device>) -> Result<Arc<Memory>, RenderError> {
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: device.instance.raw.clone(),
            device: device.raw.clone(),
            physical_device: device.physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: AllocationSizes::new(BLOCK_BYTES, BLOCK_BYTES),
        })
        .map_err(|e| RenderError::Memory(e.to_string()))?;
        Ok(Arc::new(Memory {
            allocator: Mutex::new(allocator),
            graves: Mutex::new(Vec::new()),
            submitted: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            allocations: AtomicU32::new(0),
            frees: AtomicU32::new(0),
            allocated: AtomicU64::new(0),
            types: Mutex::new(Vec::new()),
            device: Arc::clone(device),
        }))
    }

    /// The device the memory belongs to.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Device memory reserved by the allocator, bytes.
    pub fn reserved_bytes(&self) -> u64 {
        self.allocator().capacity()
    }

    /// Bytes in live allocations (the graveyard's included): what a leak grows, long
    /// before it needs another block of reserved memory.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocated.load(Ordering::Relaxed)
    }

    /// At most how many memory types hold blocks. A GPU splits its memory into more types
    /// than lavapipe (device-local, upload, read-back), and each type's blocks may leave up to
    /// about a block unused.
    pub fn memory_types(&self) -> u32 {
        self.types.lock().unwrap_or_else(PoisonError::into_inner).len() as u32
    }

    /// Allocations made and released (dropped, perhaps still in the graveyard) since the
    /// last call (a frame's counts).
    pub fn take_counts(&self) -> (u32, u32) {
        (
            self.allocations.swap(0, Ordering::Relaxed),
            self.frees.swap(0, Ordering::Relaxed),
        )
    }

    /// Frame `frame` was submitted: what is dropped from now on may be in use until it has
    /// finished.
    pub fn submitted(&self, frame: u64) {
        self.submitted.fetch_max(frame, Ordering::Relaxed);
    }

    /// Every frame up to `frame` has finished (their fences signalled; one queue runs
    /// submissions in order): frees what only they could use.
    pub fn finished(&self, frame: u64) {
        self.finished.fetch_max(frame, Ordering::Relaxed);
        let done: Vec<Grave> = {
            let mut graves = self.graves();
            let (done, waiting) = std::mem::take(&mut *graves).into_iter().partition(|g| g.frame <= frame);
            *graves = waiting;
            done
        };
        done.into_iter().for_each(|g| self.free(g));
    }

    /// Takes `objects` and `allocation` out of use: freed now when every submitted frame has
    /// finished, else once they have.
    fn bury(&self, objects: Box<dyn Send>, allocation: Option<Allocation>) {
        if allocation.is_some() {
            self.frees.fetch_add(1, Ordering::Relaxed);
        }
        let grave = Grave {
            frame: self.submitted.load(Ordering::Relaxed),
            objects,
            allocation,
        };
        if grave.frame <= self.finished.load(Ordering::Relaxed) {
            self.free(grave);
        } else {
            self.graves().push(grave);
        }
    }

    /// Destroys a grave's objects, then gives its memory back.
    fn free(&self, grave: Grave) {
        drop(grave.objects);
        if let Some(allocation) = grave.allocation {
            self.allocated.fetch_sub(allocation.size(), Ordering::Relaxed);
            // The allocator reports only a foreign or already freed allocation, which a
            // grave never holds.
            let _ = self.allocator().free(allocation);
        }
    }

    /// Creates a buffer of `size` bytes in `location`.
    pub fn buffer(
        self: &Arc<Self>,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        name: &str,
    ) -> Result<Buffer, RenderError> {
        let d = &self.device.raw;
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device; the guard is the buffer's one owner.
        let raw = unsafe { Owned::new(&self.device, "vkCreateBuffer", d.create_buffer(&info, None)) }?;
        // SAFETY: `raw` is a live buffer of this device.
        let requirements = unsafe { d.get_buffer_memory_requirements(raw.raw()) };
        let bound = self.allocate(requirements, location, true, name, raw)?;
        let a = bound.allocation.as_ref().expect("allocated");
        // SAFETY: memory and offset come from the allocator for this buffer's requirements,
        // and a new buffer is bound once.
        unsafe { d.bind_buffer_memory(bound.get().raw(), a.memory(), a.offset()) }
            .map_err(|e| RenderError::vk("vkBindBufferMemory", e))?;
        Ok(Buffer { bound, size })
    }

    /// Creates a 2D image with one mip level and a colour or depth view.
    pub fn image(
        self: &Arc<Self>,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        self.multisampled(extent, format, usage, aspect, vk::SampleCountFlags::TYPE_1, name)
    }

    /// Creates a 2D image with `samples` per pixel (a render target), one mip level and a
    /// colour or depth view.
    pub fn multisampled(
        self: &Arc<Self>,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        samples: vk::SampleCountFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let info = image_info(vk::ImageType::TYPE_2D, extent.into(), format, usage).samples(samples);
        self.create_image(&info, vk::ImageViewType::TYPE_2D, aspect, name)
    }

    /// Creates a 3D colour image with one mip level and a view.
    pub fn image_3d(
        self: &Arc<Self>,
        extent: vk::Extent3D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let info = image_info(vk::ImageType::TYPE_3D, extent, format, usage);
        self.create_image(&info, vk::ImageViewType::TYPE_3D, vk::ImageAspectFlags::COLOR, name)
    }

    fn create_image(
        self: &Arc<Self>,
        info: &vk::ImageCreateInfo<'_>,
        view_type: vk::ImageViewType,
        aspect: vk::ImageAspectFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let d = &self.device.raw;
        // SAFETY: valid create info on a live device; the guard is the image's one owner.
        let raw = unsafe { Owned::new(&self.device, "vkCreateImage", d.create_image(info, None)) }?;
        // SAFETY: `raw` is a live image of this device.
        let requirements = unsafe { d.get_image_memory_requirements(raw.raw()) };
        let image = raw.raw();
        let block = self.allocate(requirements, MemoryLocation::GpuOnly, false, name, raw)?;
        let a = block.allocation.as_ref().expect("allocated");
        // SAFETY: memory and offset come from the allocator for this image's requirements,
        // and a new image is bound once.
        unsafe { d.bind_image_memory(image, a.memory(), a.offset()) }
            .map_err(|e| RenderError::vk("vkBindImageMemory", e))?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(view_type)
            .format(info.format)
            .subresource_range(subresource(aspect));
        // SAFETY: the view matches the bound image; the guard is the view's one owner.
        let view = unsafe { Owned::new(&self.device, "vkCreateImageView", d.create_image_view(&view_info, None)) }?;
        let (raw, allocation, memory) = block.into_parts();
        Ok(Image {
            bound: Deferred {
                objects: ManuallyDrop::new((view, raw)),
                allocation,
                memory,
            },
        })
    }

    /// Device memory for `objects` (not yet bound), released with them.
    fn allocate<T: Send + 'static>(
        self: &Arc<Self>,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        linear: bool,
        name: &str,
        objects: T,
    ) -> Result<Deferred<T>, RenderError> {
        let allocation = self
            .allocator()
            .allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            })
            .map_err(|e| RenderError::Memory(e.to_string()))?;
        self.allocations.fetch_add(1, Ordering::Relaxed);
        self.allocated.fetch_add(allocation.size(), Ordering::Relaxed);
        let kind = (requirements.memory_type_bits, allocation.memory_properties());
        let mut types = self.types.lock().unwrap_or_else(PoisonError::into_inner);
        if !types.contains(&kind) {
            types.push(kind);
        }
        drop(types);
        Ok(Deferred {
            objects: ManuallyDrop::new(objects),
            allocation: Some(allocation),
            memory: Arc::clone(self),
        })
    }

    fn graves(&self) -> MutexGuard<'_, Vec<Grave>> {
        self.graves.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The allocator; a panic elsewhere while it was locked leaves it consistent (each
    /// call is one whole allocation or free), so a poisoned lock is used as it is.
    fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // The last buffer, image and set are gone, and the renderer waited for the device
        // before dropping them, so the graveyard is free; it goes before the allocator.
        let graves = std::mem::take(self.graves.get_mut().unwrap_or_else(PoisonError::into_inner));
        graves.into_iter().for_each(|g| self.free(g));
    }
}

impl Buffer {
    /// The buffer, for recording and descriptors.
    pub fn raw(&self) -> vk::Buffer {
        self.bound.get().raw()
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The mapped bytes of a host-visible buffer (none for device-local ones).
    pub fn mapped(&self) -> Option<&[u8]> {
        self.bound.allocation.as_ref().and_then(Allocation::mapped_slice)
    }

    /// Writes `data` at the start of a host-visible buffer; `what` names it in the error.
    pub fn write(&mut self, data: &[u8], what: &str) -> Result<(), RenderError> {
        self.write_at(0, data, what)
    }

    /// Writes `data` at byte `offset` of a host-visible buffer; `what` names it in the error.
    pub fn write_at(&mut self, offset: u64, data: &[u8], what: &str) -> Result<(), RenderError> {
        let mapped = self
            .bound
            .allocation
            .as_mut()
            .and_then(Allocation::mapped_slice_mut)
            .ok_or_else(|| RenderError::Memory(format!("{what} is not host-visible")))?;
        let start = offset as usize;
        mapped[start..start + data.len()].copy_from_slice(data);
        Ok(())
    }
}

impl Image {
    /// The image, for recording.
    pub fn raw(&self) -> vk::Image {
        self.bound.get().1.raw()
    }

    /// The view of the whole image.
    pub fn view(&self) -> vk::ImageView {
        self.bound.get().0.raw()
    }
}

/// A one-level, one-layer, optimally tiled image of `kind`.
fn image_info(
    kind: vk::ImageType,
    extent: vk::Extent3D,
    format: vk::Format,
    usage: vk::ImageUsageFlags,
) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(kind)
        .format(format)
        .extent(extent)
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(usage)
        .initial_layout(vk::ImageLayout::UNDEFINED)
}

/// The whole of a one-level, one-layer image.
pub fn subresource(aspect: vk::ImageAspectFlags) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange::default()
        .aspect_mask(aspect)
        .level_count(1)
        .layer_count(1)
}

/// A layout transition of a whole one-level, one-layer image on one queue, ordering the `src`
/// accesses before it against the `dst` accesses after it.
pub fn layout_barrier(
    image: vk::Image,
    aspect: vk::ImageAspectFlags,
    (old, new): (vk::ImageLayout, vk::ImageLayout),
    (src, dst): (vk::AccessFlags, vk::AccessFlags),
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .src_access_mask(src)
        .dst_access_mask(dst)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(subresource(aspect))
}
