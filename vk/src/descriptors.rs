//! Descriptor sets: a set layout with its own pool, sets that go back to the
//! pool when dropped (as the per-chunk and per-layer sets do when their data
//! leaves; through the graveyard, since a frame in flight may still bind them),
//! and the one sampler every texture is read with.

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::gpu_memory::{Buffer, Deferred, Image, Memory};
use crate::handles::Owned;

/// What one binding of a set points at.
pub(crate) enum Descriptor<'a> {
    /// A texture read through a sampler.
    Texture(&'a Image, vk::Sampler),
    /// A uniform buffer, whole.
    Uniform(&'a Buffer),
    /// A storage buffer, whole.
    Storage(&'a Buffer),
}

impl Descriptor<'_> {
    fn kind(&self) -> vk::DescriptorType {
        match self {
            Descriptor::Texture(..) => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            Descriptor::Uniform(_) => vk::DescriptorType::UNIFORM_BUFFER,
            Descriptor::Storage(_) => vk::DescriptorType::STORAGE_BUFFER,
        }
    }
}

/// A set layout whose binding `k` holds one descriptor of `kinds[k]`, and a pool
/// for up to `max_sets` sets of it.
pub(crate) struct SetPool {
    layout: Owned<vk::DescriptorSetLayout>,
    pool: Arc<Owned<vk::DescriptorPool>>,
    /// Where dropped sets wait for the frames that may bind them.
    memory: Arc<Memory>,
}

impl SetPool {
    /// The layout (visible to `stages`) and its pool.
    pub fn new(
        memory: &Arc<Memory>,
        stages: vk::ShaderStageFlags,
        kinds: &[vk::DescriptorType],
        max_sets: u32,
    ) -> Result<SetPool, RenderError> {
        let bindings: Vec<_> = (0..)
            .zip(kinds)
            .map(|(binding, &kind)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(kind)
                    .descriptor_count(1)
                    .stage_flags(stages)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        let device = memory.device();
        let d = &device.raw;
        // SAFETY: the create info and the bindings it points at live until the call returns;
        // the guard is the layout's one owner.
        let layout = unsafe {
            Owned::new(
                device,
                "vkCreateDescriptorSetLayout",
                d.create_descriptor_set_layout(&info, None),
            )
        }?;
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for &kind in kinds {
            match sizes.iter_mut().find(|s| s.ty == kind) {
                Some(size) => size.descriptor_count += max_sets,
                None => sizes.push(vk::DescriptorPoolSize {
                    ty: kind,
                    descriptor_count: max_sets,
                }),
            }
        }
        let info = vk::DescriptorPoolCreateInfo::default()
            .flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)
            .max_sets(max_sets)
            .pool_sizes(&sizes);
        // SAFETY: the create info and the sizes it points at live until the call returns; the
        // guard is the pool's one owner.
        let pool = unsafe { Owned::new(device, "vkCreateDescriptorPool", d.create_descriptor_pool(&info, None)) }?;
        Ok(SetPool {
            layout,
            pool: Arc::new(pool),
            memory: Arc::clone(memory),
        })
    }

    /// The set layout, for pipeline layouts.
    pub fn layout(&self) -> vk::DescriptorSetLayout {
        self.layout.raw()
    }

    /// A new set; `call` names the failure (e.g. with a hint at what ran out).
    pub fn allocate(&self, call: &'static str) -> Result<DescriptorSet, RenderError> {
        let layouts = [self.layout.raw()];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(self.pool.raw())
            .set_layouts(&layouts);
        // SAFETY: pool and layout are live.
        let sets =
            unsafe { self.pool.device().raw.allocate_descriptor_sets(&info) }.map_err(|e| RenderError::vk(call, e))?;
        let set = PooledSet {
            raw: sets[0],
            pool: Arc::clone(&self.pool),
        };
        Ok(DescriptorSet {
            set: Deferred::new(&self.memory, set),
        })
    }
}

/// A set and the pool it goes back to; Drop gives it back. The pool lives as long as
/// any of its sets.
struct PooledSet {
    raw: vk::DescriptorSet,
    pool: Arc<Owned<vk::DescriptorPool>>,
}

/// A set allocated from a [`SetPool`]; Drop gives it back once no frame in flight can
/// bind it.
pub(crate) struct DescriptorSet {
    set: Deferred<PooledSet>,
}

impl DescriptorSet {
    /// The set, for binding.
    pub fn raw(&self) -> vk::DescriptorSet {
        self.set.get().raw
    }

    /// Points binding `k` at `descriptors[k]`. The GPU must not be using the set: sets
    /// are written once, before a frame binds them (a set whose contents change is
    /// replaced by a new one).
    pub fn write(&self, descriptors: &[Descriptor<'_>]) {
        let images: Vec<[vk::DescriptorImageInfo; 1]> = descriptors
            .iter()
            .map(|d| match d {
                Descriptor::Texture(image, sampler) => [vk::DescriptorImageInfo {
                    sampler: *sampler,
                    image_view: image.view(),
                    image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                }],
                _ => [vk::DescriptorImageInfo::default()],
            })
            .collect();
        let buffers: Vec<[vk::DescriptorBufferInfo; 1]> = descriptors
            .iter()
            .map(|d| match d {
                Descriptor::Uniform(b) | Descriptor::Storage(b) => [vk::DescriptorBufferInfo {
                    buffer: b.raw(),
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }],
                Descriptor::Texture(..) => [vk::DescriptorBufferInfo::default()],
            })
            .collect();
        let writes: Vec<_> = (0..)
            .zip(descriptors)
            .map(|(k, d)| {
                let write = vk::WriteDescriptorSet::default()
                    .dst_set(self.raw())
                    .dst_binding(k)
                    .descriptor_type(d.kind());
                match d {
                    Descriptor::Texture(..) => write.image_info(&images[k as usize]),
                    _ => write.buffer_info(&buffers[k as usize]),
                }
            })
            .collect();
        // SAFETY: the set, views, samplers and buffers are live, and no submitted work
        // uses the set (see above).
        unsafe { self.set.get().pool.device().raw.update_descriptor_sets(&writes, &[]) };
    }
}

impl Drop for PooledSet {
    fn drop(&mut self) {
        // SAFETY: the set came from this pool (created with FREE_DESCRIPTOR_SET), which
        // `self.pool` keeps alive; the graveyard drops it once no frame in flight binds it.
        let _ = unsafe {
            self.pool
                .device()
                .raw
                .free_descriptor_sets(self.pool.raw(), &[self.raw])
        };
    }
}

/// The sampler textures are read with: nearest texel, clamped at the edges (the
/// shaders fetch exact texels).
pub(crate) fn nearest_sampler(device: &Arc<Device>) -> Result<Owned<vk::Sampler>, RenderError> {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(vk::Filter::NEAREST)
        .min_filter(vk::Filter::NEAREST)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
    // SAFETY: valid create info on a live device; the guard is the sampler's one owner.
    unsafe { Owned::new(device, "vkCreateSampler", device.raw.create_sampler(&info, None)) }
}
