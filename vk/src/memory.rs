//! GPU memory through gpu-allocator: buffers and images, with counts of
//! allocations made and freed.

use ash::vk;
use gpu_allocator::MemoryLocation;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};

use crate::device::Device;
use crate::error::RenderError;

/// A buffer with its memory.
pub struct Buffer {
    /// The buffer.
    pub raw: vk::Buffer,
    /// Its memory (mapped for host-visible locations).
    pub allocation: Allocation,
    /// Size in bytes.
    pub size: u64,
}

/// A 2D or 3D image with a view and its memory.
pub struct Image {
    /// The image.
    pub raw: vk::Image,
    /// A view of the whole image.
    pub view: vk::ImageView,
    /// Its memory.
    pub allocation: Allocation,
}

/// The allocator plus counters the frame statistics read.
pub struct Memory {
    allocator: Allocator,
    /// Allocations made since the counter was last reset.
    pub allocations: u32,
    /// Allocations freed since the counter was last reset.
    pub frees: u32,
}

impl Memory {
    /// An allocator for `device`.
    pub fn new(device: &Device) -> Result<Memory, RenderError> {
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: device.instance.clone(),
            device: device.device.clone(),
            physical_device: device.physical,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        })
        .map_err(|e| RenderError::Memory(e.to_string()))?;
        Ok(Memory {
            allocator,
            allocations: 0,
            frees: 0,
        })
    }

    /// Device memory reserved by the allocator, bytes.
    pub fn reserved_bytes(&self) -> u64 {
        self.allocator.capacity()
    }

    /// Creates a buffer of `size` bytes in `location`.
    pub fn buffer(
        &mut self,
        device: &ash::Device,
        size: u64,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
        name: &str,
    ) -> Result<Buffer, RenderError> {
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.create_buffer(&info, None) }.map_err(|e| RenderError::vk("vkCreateBuffer", e))?;
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { device.get_buffer_memory_requirements(raw) };
        let allocation = match self.allocator.allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        }) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the buffer is unused.
                unsafe { device.destroy_buffer(raw, None) };
                return Err(RenderError::Memory(e.to_string()));
            }
        };
        // SAFETY: memory and offset come from the allocator for these requirements.
        if let Err(e) = unsafe { device.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) } {
            // SAFETY: the buffer is unused.
            unsafe { device.destroy_buffer(raw, None) };
            let _ = self.allocator.free(allocation);
            return Err(RenderError::vk("vkBindBufferMemory", e));
        }
        self.allocations += 1;
        Ok(Buffer { raw, allocation, size })
    }

    /// Creates a 2D image with one mip level and a colour or depth view.
    pub fn image(
        &mut self,
        device: &ash::Device,
        extent: vk::Extent2D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let info = image_info(vk::ImageType::TYPE_2D, extent.into(), format, usage);
        self.create_image(device, &info, vk::ImageViewType::TYPE_2D, aspect, name)
    }

    /// Creates a 3D colour image with one mip level and a view.
    pub fn image_3d(
        &mut self,
        device: &ash::Device,
        extent: vk::Extent3D,
        format: vk::Format,
        usage: vk::ImageUsageFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let info = image_info(vk::ImageType::TYPE_3D, extent, format, usage);
        self.create_image(
            device,
            &info,
            vk::ImageViewType::TYPE_3D,
            vk::ImageAspectFlags::COLOR,
            name,
        )
    }

    fn create_image(
        &mut self,
        device: &ash::Device,
        info: &vk::ImageCreateInfo<'_>,
        view_type: vk::ImageViewType,
        aspect: vk::ImageAspectFlags,
        name: &str,
    ) -> Result<Image, RenderError> {
        let format = info.format;
        // SAFETY: valid create info on a live device.
        let raw = unsafe { device.create_image(info, None) }.map_err(|e| RenderError::vk("vkCreateImage", e))?;
        // SAFETY: `raw` was just created on this device.
        let requirements = unsafe { device.get_image_memory_requirements(raw) };
        let allocation = match self.allocator.allocate(&AllocationCreateDesc {
            name,
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        }) {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: the image is unused.
                unsafe { device.destroy_image(raw, None) };
                return Err(RenderError::Memory(e.to_string()));
            }
        };
        let view_info = vk::ImageViewCreateInfo::default()
            .image(raw)
            .view_type(view_type)
            .format(format)
            .subresource_range(subresource(aspect));
        // SAFETY: memory and offset come from the allocator; the view matches the image.
        let bound = unsafe { device.bind_image_memory(raw, allocation.memory(), allocation.offset()) }
            .map_err(|e| RenderError::vk("vkBindImageMemory", e))
            .and_then(|()| {
                // SAFETY: as above.
                unsafe { device.create_image_view(&view_info, None) }
                    .map_err(|e| RenderError::vk("vkCreateImageView", e))
            });
        match bound {
            Ok(view) => {
                self.allocations += 1;
                Ok(Image { raw, view, allocation })
            }
            Err(e) => {
                // SAFETY: the image is unused.
                unsafe { device.destroy_image(raw, None) };
                let _ = self.allocator.free(allocation);
                Err(e)
            }
        }
    }

    /// Destroys a buffer and frees its memory. The GPU must be done with it.
    pub fn free_buffer(&mut self, device: &ash::Device, buffer: Buffer) {
        // SAFETY: the caller guarantees the buffer is no longer in use.
        unsafe { device.destroy_buffer(buffer.raw, None) };
        let _ = self.allocator.free(buffer.allocation);
        self.frees += 1;
    }

    /// Destroys an image and its view and frees its memory. The GPU must be done with it.
    pub fn free_image(&mut self, device: &ash::Device, image: Image) {
        // SAFETY: the caller guarantees the image is no longer in use.
        unsafe {
            device.destroy_image_view(image.view, None);
            device.destroy_image(image.raw, None);
        }
        let _ = self.allocator.free(image.allocation);
        self.frees += 1;
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
