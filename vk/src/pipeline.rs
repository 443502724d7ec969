//! The one pipeline recipe every draw path shares (dynamic rendering into the
//! colour + depth target, depth test and write unless a pass asks for another
//! [`Depth`], no culling as tubes are open, dynamic viewport and scissor) and
//! the compute pipeline of the grass probe. The overlay's pipeline is the one
//! variant that blends (`DrawPipeline::overlay`); the impostor bake's draws into two
//! single-sampled atlases (`DrawPipeline::bake`).

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;
use crate::pass::Recording;
use crate::pod::{Pod, bytes_of};
use crate::shaders::{self, Shader};
use crate::target::{ATLAS_FORMATS, COLOUR_FORMAT, DEPTH_FORMAT};

/// A vertex attribute read tightly packed from a binding of its own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attribute {
    /// Bytes per element.
    pub stride: u32,
    /// What the shader reads.
    pub format: vk::Format,
}

impl Attribute {
    /// Four `f32`.
    pub const VEC4: Attribute = Attribute::new(16, vk::Format::R32G32B32A32_SFLOAT);
    /// Three `f32` (a `Vec3`).
    pub const VEC3: Attribute = Attribute::new(12, vk::Format::R32G32B32_SFLOAT);
    /// One `f32`.
    pub const FLOAT: Attribute = Attribute::new(4, vk::Format::R32_SFLOAT);
    /// Two `u32`.
    pub const UVEC2: Attribute = Attribute::new(8, vk::Format::R32G32_UINT);
    /// One `u32`.
    pub const UINT: Attribute = Attribute::new(4, vk::Format::R32_UINT);
    /// Four half floats, read as a `vec4`.
    pub const HALF4: Attribute = Attribute::new(8, vk::Format::R16G16B16A16_SFLOAT);
    /// An RGBA8 colour, read normalised.
    pub const RGBA8: Attribute = Attribute::new(4, vk::Format::R8G8B8A8_UNORM);

    const fn new(stride: u32, format: vk::Format) -> Attribute {
        Attribute { stride, format }
    }
}

/// What differs between the draw paths' pipelines.
pub(crate) struct PipelineDesc<'a> {
    /// The vertex shader.
    pub vert: Shader,
    /// The fragment shader.
    pub frag: Shader,
    /// Per-vertex attributes, then `instances`: the `k`-th of them all is location and
    /// binding `k`.
    pub vertices: &'a [Attribute],
    /// Per-instance attributes.
    pub instances: &'a [Attribute],
    /// Set layouts from set 0 (the globals).
    pub sets: &'a [vk::DescriptorSetLayout],
    /// Bytes of vertex-stage push constants (0 for none).
    pub push_bytes: u32,
}

/// How a pipeline tests and writes depth.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Depth {
    /// The comparison a fragment must pass against the stored depth.
    pub compare: vk::CompareOp,
    /// Whether a passing fragment writes its depth.
    pub write: bool,
}

impl Depth {
    /// Surfaces: nearer fragments win and hide what is behind them.
    pub const OPAQUE: Depth = Depth {
        compare: vk::CompareOp::LESS,
        write: true,
    };
    /// The background at the far plane (depth 1): it fills only pixels nothing
    /// was drawn on, and writes no depth.
    pub const BACKGROUND: Depth = Depth {
        compare: vk::CompareOp::LESS_OR_EQUAL,
        write: false,
    };
    /// Over everything: every fragment passes, none writes depth.
    const IGNORED: Depth = Depth {
        compare: vk::CompareOp::ALWAYS,
        write: false,
    };
}

/// What a pipeline draws into.
#[derive(Clone, Copy)]
enum Pass {
    /// The colour and depth target, multisampled like it, with this depth rule.
    Colour(Depth),
    /// As `Colour(Depth::OPAQUE)`, the fragment's alpha covering that share of the samples.
    Coverage,
    /// The shadow map: depth only, one sample, biased.
    Shadow,
    /// Over the finished colour target, multisampled like it: depth ignored, alpha blended.
    Overlay,
    /// The impostor atlases (colour and normal), one sample, opaque depth.
    Bake,
}

impl Pass {
    /// Rasterisation, samples per pixel, depth rule and colour formats of the pass.
    fn states(
        self,
        device: &Device,
    ) -> (
        vk::PipelineRasterizationStateCreateInfo<'static>,
        vk::SampleCountFlags,
        Depth,
        &'static [vk::Format],
    ) {
        match self {
            Pass::Colour(depth) => (raster_state(), device.samples, depth, &[COLOUR_FORMAT]),
            Pass::Coverage => (raster_state(), device.samples, Depth::OPAQUE, &[COLOUR_FORMAT]),
            Pass::Overlay => (raster_state(), device.samples, Depth::IGNORED, &[COLOUR_FORMAT]),
            Pass::Bake => (
                raster_state(),
                vk::SampleCountFlags::TYPE_1,
                Depth::OPAQUE,
                &ATLAS_FORMATS,
            ),
            Pass::Shadow => (
                raster_state()
                    .depth_bias_enable(true)
                    .depth_bias_constant_factor(SHADOW_BIAS.0)
                    .depth_bias_slope_factor(SHADOW_BIAS.1),
                vk::SampleCountFlags::TYPE_1,
                Depth::OPAQUE,
                &[],
            ),
        }
    }
}

/// Depth bias of the shadow map (constant, slope), in depth units: enough that a lit surface
/// does not shadow itself, small enough that a trunk's shadow still meets its foot.
const SHADOW_BIAS: (f32, f32) = (2.0, 2.5);

/// A graphics pipeline and its layout.
pub(crate) struct DrawPipeline {
    pipeline: Owned<vk::Pipeline>,
    layout: Layout,
}

/// A pipeline layout and the bytes of push constants it has room for.
struct Layout {
    raw: Owned<vk::PipelineLayout>,
    push_bytes: u32,
    stage: vk::ShaderStageFlags,
}

impl DrawPipeline {
    /// The shared recipe with `desc`'s shaders, vertex input and layout, drawing
    /// opaque surfaces ([`Depth::OPAQUE`]).
    pub fn new(device: &Arc<Device>, desc: &PipelineDesc<'_>) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::with_depth(device, desc, Depth::OPAQUE)
    }

    /// The shared recipe with `desc`'s shaders, vertex input and layout, and `depth`.
    pub fn with_depth(
        device: &Arc<Device>,
        desc: &PipelineDesc<'_>,
        depth: Depth,
    ) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::build(device, desc, Some(desc.frag), Pass::Colour(depth))
    }

    /// `desc`'s vertex input and layout drawing only depth into the shadow map, with
    /// `frag` where the depth needs one (leaves cut to shape) and a bias against acne.
    pub fn shadow(
        device: &Arc<Device>,
        desc: &PipelineDesc<'_>,
        frag: Option<Shader>,
    ) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::build(device, desc, frag, Pass::Shadow)
    }

    /// `desc`'s shaders, vertex input and layout drawn over everything already in the target:
    /// no depth test or write, colour blended by its alpha (the overlay's text and box).
    pub fn overlay(device: &Arc<Device>, desc: &PipelineDesc<'_>) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::build(device, desc, Some(desc.frag), Pass::Overlay)
    }

    /// `desc`'s shaders, vertex input and layout drawing opaque surfaces whose alpha is the
    /// share of a pixel's samples they cover (alpha to coverage: impostor cards).
    pub fn coverage(device: &Arc<Device>, desc: &PipelineDesc<'_>) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::build(device, desc, Some(desc.frag), Pass::Coverage)
    }

    /// `desc`'s shaders, vertex input and layout drawing into the impostor atlases
    /// ([`ATLAS_FORMATS`], one sample).
    pub fn bake(device: &Arc<Device>, desc: &PipelineDesc<'_>) -> Result<DrawPipeline, RenderError> {
        DrawPipeline::build(device, desc, Some(desc.frag), Pass::Bake)
    }

    fn build(
        device: &Arc<Device>,
        desc: &PipelineDesc<'_>,
        frag: Option<Shader>,
        pass: Pass,
    ) -> Result<DrawPipeline, RenderError> {
        let layout = Layout::new(device, desc.sets, vk::ShaderStageFlags::VERTEX, desc.push_bytes)?;
        let vert = shaders::module(device, desc.vert)?;
        let frag = frag.map(|f| shaders::module(device, f)).transpose()?;
        let mut stages = vec![stage(vk::ShaderStageFlags::VERTEX, &vert)];
        stages.extend(frag.as_ref().map(|f| stage(vk::ShaderStageFlags::FRAGMENT, f)));
        let (bindings, attributes) = vertex_input(desc.vertices, desc.instances);
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&bindings)
            .vertex_attribute_descriptions(&attributes);
        let assembly =
            vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let (raster, samples, depth, colour_formats) = pass.states(device);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(samples)
            .alpha_to_coverage_enable(matches!(pass, Pass::Coverage));
        let depth = depth_state(depth);
        let blend_attachments = [blend_state(matches!(pass, Pass::Overlay)); ATLAS_FORMATS.len()];
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments[..colour_formats.len()]);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(colour_formats)
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
            .layout(layout.raw.raw())
            .push_next(&mut rendering);
        // SAFETY: every state `info` points at lives until the call returns (the modules may
        // go once the pipeline exists).
        let made = unsafe {
            device
                .raw
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        };
        let pipeline = own(device, "vkCreateGraphicsPipelines", made)?;
        Ok(DrawPipeline { pipeline, layout })
    }

    /// Records: binds the pipeline, and the globals at set 0.
    pub fn bind(&self, rec: &Recording<'_>) {
        // SAFETY: `rec.cmd` is recording; pipeline and set live until the frame is done.
        unsafe {
            rec.device
                .cmd_bind_pipeline(rec.cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline.raw());
        }
        self.bind_set(rec, 0, rec.globals);
    }

    /// Records: binds `set` at set number `index`.
    pub fn bind_set(&self, rec: &Recording<'_>, index: u32, set: vk::DescriptorSet) {
        // SAFETY: `rec.cmd` is recording; the set matches the layout's set `index` and lives
        // until the frame is done.
        unsafe {
            rec.device.cmd_bind_descriptor_sets(
                rec.cmd,
                vk::PipelineBindPoint::GRAPHICS,
                self.layout.raw.raw(),
                index,
                &[set],
                &[],
            );
        }
    }

    /// Records: sets the vertex-stage push constants.
    pub fn push<T: Pod>(&self, rec: &Recording<'_>, constants: &T) {
        self.layout.push(rec.device, rec.cmd, constants);
    }
}

/// A compute pipeline and its layout.
pub(crate) struct ComputePipeline {
    pipeline: Owned<vk::Pipeline>,
    layout: Layout,
}

impl ComputePipeline {
    /// `shader` over `sets`, with `push_bytes` of push constants.
    pub fn new(
        device: &Arc<Device>,
        shader: Shader,
        sets: &[vk::DescriptorSetLayout],
        push_bytes: u32,
    ) -> Result<ComputePipeline, RenderError> {
        let layout = Layout::new(device, sets, vk::ShaderStageFlags::COMPUTE, push_bytes)?;
        let module = shaders::module(device, shader)?;
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage(vk::ShaderStageFlags::COMPUTE, &module))
            .layout(layout.raw.raw());
        // SAFETY: `info` and the module live until the call returns.
        let made = unsafe {
            device
                .raw
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        };
        let pipeline = own(device, "vkCreateComputePipelines", made)?;
        Ok(ComputePipeline { pipeline, layout })
    }

    /// Records: binds the pipeline, `sets` from set 0 on and the push constants.
    pub fn bind<T: Pod>(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        sets: &[vk::DescriptorSet],
        constants: &T,
    ) {
        let (bind, layout) = (vk::PipelineBindPoint::COMPUTE, self.layout.raw.raw());
        // SAFETY: `cmd` is recording; pipeline and sets live until its submission is done.
        unsafe {
            device.cmd_bind_pipeline(cmd, bind, self.pipeline.raw());
            device.cmd_bind_descriptor_sets(cmd, bind, layout, 0, sets, &[]);
        }
        self.layout.push(device, cmd, constants);
    }

    /// Records: `set` bound at set `index` of the bound pipeline.
    pub fn bind_set(&self, device: &ash::Device, cmd: vk::CommandBuffer, index: u32, set: vk::DescriptorSet) {
        let (bind, layout) = (vk::PipelineBindPoint::COMPUTE, self.layout.raw.raw());
        // SAFETY: `cmd` is recording; the set lives until its submission is done.
        unsafe { device.cmd_bind_descriptor_sets(cmd, bind, layout, index, &[set], &[]) };
    }

    /// Records: new push constants for the next dispatch of the bound pipeline.
    pub fn push<T: Pod>(&self, device: &ash::Device, cmd: vk::CommandBuffer, constants: &T) {
        self.layout.push(device, cmd, constants);
    }
}

impl Layout {
    /// A pipeline layout over `sets` with `push_bytes` of push constants for `stage`.
    fn new(
        device: &Arc<Device>,
        sets: &[vk::DescriptorSetLayout],
        stage: vk::ShaderStageFlags,
        push_bytes: u32,
    ) -> Result<Layout, RenderError> {
        let push = [vk::PushConstantRange {
            stage_flags: stage,
            offset: 0,
            size: push_bytes,
        }];
        let info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(sets)
            .push_constant_ranges(if push_bytes > 0 { &push } else { &[] });
        // SAFETY: the create info and the arrays it points at live until the call returns; the
        // guard is the layout's one owner.
        let raw = unsafe {
            Owned::new(
                device,
                "vkCreatePipelineLayout",
                device.raw.create_pipeline_layout(&info, None),
            )
        }?;
        Ok(Layout { raw, push_bytes, stage })
    }

    /// Records: sets the push constants. Panics when they do not fit the layout's range.
    fn push<T: Pod>(&self, device: &ash::Device, cmd: vk::CommandBuffer, constants: &T) {
        let bytes = bytes_of(constants);
        assert!(
            bytes.len() <= self.push_bytes as usize,
            "push constants overflow the layout"
        );
        // SAFETY: `cmd` is recording; the bytes fit the layout's push range for `stage`
        // (checked above).
        unsafe { device.cmd_push_constants(cmd, self.raw.raw(), self.stage, 0, bytes) };
    }
}

/// Filled triangles, both faces (tubes are open, skirts and blades are seen from both sides).
fn raster_state() -> vk::PipelineRasterizationStateCreateInfo<'static> {
    vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(vk::CullModeFlags::NONE)
        .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
        .line_width(1.0)
}

/// Colour written whole, or blended over what is there by the fragment's alpha.
fn blend_state(blend: bool) -> vk::PipelineColorBlendAttachmentState {
    let state = vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA);
    if !blend {
        return state;
    }
    state
        .blend_enable(true)
        .src_color_blend_factor(vk::BlendFactor::SRC_ALPHA)
        .dst_color_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
        .color_blend_op(vk::BlendOp::ADD)
        .src_alpha_blend_factor(vk::BlendFactor::ONE)
        .dst_alpha_blend_factor(vk::BlendFactor::ONE_MINUS_SRC_ALPHA)
        .alpha_blend_op(vk::BlendOp::ADD)
}

/// Depth tested always, compared and written as `depth` says.
fn depth_state(depth: Depth) -> vk::PipelineDepthStencilStateCreateInfo<'static> {
    vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(true)
        .depth_write_enable(depth.write)
        .depth_compare_op(depth.compare)
}

fn stage(stage: vk::ShaderStageFlags, module: &Owned<vk::ShaderModule>) -> vk::PipelineShaderStageCreateInfo<'static> {
    vk::PipelineShaderStageCreateInfo::default()
        .stage(stage)
        .module(module.raw())
        .name(c"main")
}

/// One binding and one attribute per input, vertex ones first.
fn vertex_input(
    vertices: &[Attribute],
    instances: &[Attribute],
) -> (
    Vec<vk::VertexInputBindingDescription>,
    Vec<vk::VertexInputAttributeDescription>,
) {
    let rates = vertices
        .iter()
        .map(|a| (a, vk::VertexInputRate::VERTEX))
        .chain(instances.iter().map(|a| (a, vk::VertexInputRate::INSTANCE)));
    (0..)
        .zip(rates)
        .map(|(k, (a, rate))| {
            (
                vk::VertexInputBindingDescription {
                    binding: k,
                    stride: a.stride,
                    input_rate: rate,
                },
                vk::VertexInputAttributeDescription {
                    location: k,
                    binding: k,
                    format: a.format,
                    offset: 0,
                },
            )
        })
        .unzip()
}

/// Owns the one pipeline a create call for one made (a failed call made none).
fn own(
    device: &Arc<Device>,
    call: &'static str,
    made: Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)>,
) -> Result<Owned<vk::Pipeline>, RenderError> {
    let made = made.map(|p| p[0]).map_err(|(_, e)| e);
    // SAFETY: the pipeline was just created on `device` and has no other owner.
    unsafe { Owned::new(device, call, made) }
}
