//! Graphics pipelines for dynamic rendering into the colour + depth target.

use ash::vk;

use crate::error::RenderError;
use crate::shaders::{self, Shader};
use crate::target::{COLOUR_FORMAT, DEPTH_FORMAT};

/// What differs between the draw paths' pipelines.
pub(crate) struct PipelineDesc<'a> {
    pub vert: Shader,
    pub frag: Shader,
    pub bindings: &'a [vk::VertexInputBindingDescription],
    pub attributes: &'a [vk::VertexInputAttributeDescription],
    pub layout: vk::PipelineLayout,
}

/// A triangle-list pipeline with depth test and write, no culling (tubes are open),
/// dynamic viewport and scissor.
pub(crate) fn create(device: &ash::Device, desc: &PipelineDesc<'_>) -> Result<vk::Pipeline, RenderError> {
    let vert = shaders::module(device, desc.vert)?;
    let frag = match shaders::module(device, desc.frag) {
        Ok(f) => f,
        Err(e) => {
            // SAFETY: the module is unused.
            unsafe { device.destroy_shader_module(vert, None) };
            return Err(e);
        }
    };
    let stages = [
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::VERTEX)
            .module(vert)
            .name(c"main"),
        vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::FRAGMENT)
            .module(frag)
            .name(c"main"),
    ];
    let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(desc.bindings)
        .vertex_attribute_descriptions(desc.attributes);
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
    let viewport = vk::PipelineViewportStateCreateInfo::default()
        .viewport_count(1)
        .scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0);
    let multisample =
        vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let depth = vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(true)
        .depth_write_enable(true)
        .depth_compare_op(vk::CompareOp::LESS);
    let blend_attachments =
        [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)];
    let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
    let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
    let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
    let colour_formats = [COLOUR_FORMAT];
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .color_attachment_formats(&colour_formats)
        .depth_attachment_format(DEPTH_FORMAT);
    let info = vk::GraphicsPipelineCreateInfo::default()
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&assembly)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic)
        .layout(desc.layout)
        .push_next(&mut rendering);
    // SAFETY: every referenced state lives until the call returns.
    let result = unsafe { device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
    // SAFETY: modules are no longer needed once the pipeline exists (or failed).
    unsafe {
        device.destroy_shader_module(vert, None);
        device.destroy_shader_module(frag, None);
    }
    result
        .map(|p| p[0])
        .map_err(|(_, e)| RenderError::vk("vkCreateGraphicsPipelines", e))
}

/// A per-vertex or per-instance binding.
pub(crate) fn binding(index: u32, stride: u32, rate: vk::VertexInputRate) -> vk::VertexInputBindingDescription {
    vk::VertexInputBindingDescription {
        binding: index,
        stride,
        input_rate: rate,
    }
}

/// Attribute `location` read from the start of binding `binding`.
pub(crate) fn attribute(location: u32, binding: u32, format: vk::Format) -> vk::VertexInputAttributeDescription {
    vk::VertexInputAttributeDescription {
        location,
        binding,
        format,
        offset: 0,
    }
}

/// A descriptor set layout with these bindings.
pub(crate) fn set_layout(
    device: &ash::Device,
    bindings: &[vk::DescriptorSetLayoutBinding<'_>],
) -> Result<vk::DescriptorSetLayout, RenderError> {
    let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(bindings);
    // SAFETY: the create info and the bindings it points at live until the call returns.
    unsafe { device.create_descriptor_set_layout(&info, None) }
        .map_err(|e| RenderError::vk("vkCreateDescriptorSetLayout", e))
}

/// A pipeline layout over `sets` (in set-number order) with these push constants.
pub(crate) fn layout(
    device: &ash::Device,
    sets: &[vk::DescriptorSetLayout],
    push: &[vk::PushConstantRange],
) -> Result<vk::PipelineLayout, RenderError> {
    let info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(sets)
        .push_constant_ranges(push);
    // SAFETY: the create info and the arrays it points at live until the call returns.
    unsafe { device.create_pipeline_layout(&info, None) }.map_err(|e| RenderError::vk("vkCreatePipelineLayout", e))
}

/// A descriptor pool for up to `max_sets` sets that are freed one at a time, as the
/// per-chunk and per-layer sets are when their data leaves.
pub(crate) fn freeable_pool(
    device: &ash::Device,
    max_sets: u32,
    sizes: &[vk::DescriptorPoolSize],
) -> Result<vk::DescriptorPool, RenderError> {
    let info = vk::DescriptorPoolCreateInfo::default()
        .flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET)
        .max_sets(max_sets)
        .pool_sizes(sizes);
    // SAFETY: the create info and the sizes it points at live until the call returns.
    unsafe { device.create_descriptor_pool(&info, None) }.map_err(|e| RenderError::vk("vkCreateDescriptorPool", e))
}
