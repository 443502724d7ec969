//! GPU memory through gpu-allocator: buffers and images that free themselves,
//! with counts of allocations made and freed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;

/// The allocator plus counters the frame statistics read. Shared (`Arc`) by
/// every buffer and image, so it outlives them; it frees its device memory
/// before the device goes (a later field).
pub(crate) struct Memory {
    allocator: Mutex<Allocator>,
    allocations: AtomicU32,
    frees: AtomicU32,
    device: Arc<Device>,
}

/// Device memory bound to one buffer or image; Drop gives it back.
struct Block {
    allocation: Allocation,
    memory: Arc<Memory>,
}

impl Drop for Block {
    fn drop(&mut self) {
        let allocation = std::mem::take(&mut self.allocation);
        // The allocator reports only a foreign or already freed allocation, which a
        // `Block` never holds.
        let _ = self.memory.allocator().free(allocation);
        self.memory.frees.fetch_add(1, Ordering::Relaxed);
    }
}

/// A buffer with its memory. Drop destroys the buffer, then frees the memory.
pub(crate) struct Buffer {
    raw: Owned<vk::Buffer>,
    block: Block,
    size: u64,
}

/// A 2D or 3D image with a view of all of it, and its memory. Drop destroys
/// the view and the image, then frees the memory.
pub(crate) struct Image {
    view: Owned<vk::ImageView>,
    raw: Owned<vk::Image>,
    _block: Block,
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
            allocation_sizes: Default::default(),
        })
        .map_err(|e| RenderError::Memory(e.to_string()))?;
        Ok(Arc::new(Memory {
            allocator: Mutex::new(allocator),
            allocations: AtomicU32::new(0),
            frees: AtomicU32::new(0),
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

    /// Allocations made and freed since the last call (a frame's counts).
    pub fn take_counts(&self) -> (u32, u32) {
        (
            self.allocations.swap(0, Ordering::Relaxed),
            self.frees.swap(0, Ordering::Relaxed),
        )
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
        let block = self.allocate(requirements, location, true, name)?;
        let a = &block.allocation;
        // SAFETY: memory and offset come from the allocator for this buffer's requirements,
        // and a new buffer is bound once.
        unsafe { d.bind_buffer_memory(raw.raw(), a.memory(), a.offset()) }
            .map_err(|e| RenderError::vk("vkBindBufferMemory", e))?;
        Ok(Buffer { raw, block, size })
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
        let block = self.allocate(requirements, MemoryLocation::GpuOnly, false, name)?;
        let a = &block.allocation;
        // SAFETY: memory and offset come from the allocator for this image's requirements,
        // and a new image is bound once.
        unsafe { d.bind_image_memory(raw.raw(), a.memory(), a.offset()) }
            .map_err(|e| RenderError::vk("vkBindImageMemory", e))?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw.raw())
            .view_type(view_type)
            .format(info.format)
            .subresource_range(subresource(aspect));
        // SAFETY: the view matches the bound image; the guard is the view's one owner.
        let view = unsafe { Owned::new(&self.device, "vkCreateImageView", d.create_image_view(&view_info, None)) }?;
        Ok(Image {
            view,
            raw,
            _block: block,
        })
    }

    fn allocate(
        self: &Arc<Self>,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        linear: bool,
        name: &str,
    ) -> Result<Block, RenderError> {
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
        Ok(Block {
            allocation,
            memory: Arc::clone(self),
        })
    }

    /// The allocator; a panic elsewhere while it was locked leaves it consistent (each
    /// call is one whole allocation or free), so a poisoned lock is used as it is.
    fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Buffer {
    /// The buffer, for recording and descriptors.
    pub fn raw(&self) -> vk::Buffer {
        self.raw.raw()
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The mapped bytes of a host-visible buffer (none for device-local ones).
    pub fn mapped(&self) -> Option<&[u8]> {
        self.block.allocation.mapped_slice()
    }

    /// Writes `data` at the start of a host-visible buffer; `what` names it in the error.
    pub fn write(&mut self, data: &[u8], what: &str) -> Result<(), RenderError> {
        let mapped = self
            .block
            .allocation
            .mapped_slice_mut()
            .ok_or_else(|| RenderError::Memory(format!("{what} is not host-visible")))?;
        mapped[..data.len()].copy_from_slice(data);
        Ok(())
    }
}

impl Image {
    /// The image, for recording.
    pub fn raw(&self) -> vk::Image {
        self.raw.raw()
    }

    /// The view of the whole image.
    pub fn view(&self) -> vk::ImageView {
        self.view.raw()
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
