//! The sun's shadow map: a depth image rendered from the sun before the frame,
//! fitted to the part of the view frustum within [`SHADOW_METRES`] of the
//! camera, which every lit shader samples (`shaders/shadow.glsl`).
//!
//! The fit is a sphere around that slice of the frustum, so the map's size in
//! the world does not change as the camera turns, and its centre is snapped to
//! whole texels in the sun's frame, so shadow edges do not crawl as the camera
//! moves.

use std::sync::Arc;

use ash::vk;
use sylva_runtime::extract::Camera;
use sylva_runtime::glam::camera::rh::{proj::vulkan::orthographic, view::look_to_mat4};
use sylva_runtime::glam::{Mat4, Vec3, Vec4Swizzles};

use crate::device::Device;
use crate::error::RenderError;
use crate::gpu_memory::{Image, Memory, layout_barrier};
use crate::handles::Owned;
use crate::target::DEPTH_FORMAT;

/// The fewest and the most texels per side of the shadow map ([`texels_for`]).
const TEXELS: std::ops::RangeInclusive<u32> = 1024..=4096;
/// How far from the camera shadows reach, metres; beyond, fog takes over.
pub const SHADOW_METRES: f32 = 160.0;
/// How far toward the sun the map reaches past the fitted sphere, metres, so that a
/// mountain or a tall crown outside the view still casts into it.
const CASTER_REACH: f32 = 400.0;

/// Texels per side of the shadow map for a target `height` pixels high: its rows rounded
/// up to a power of two, within 1,024 and 4,096. A texel of the map then spans about what
/// a pixel does at the same distance at any resolution (`docs/design/rendering.md`,
/// "Shadows at the map's resolution"), and a small target does not pay for a map finer
/// than it can show.
pub(crate) fn texels_for(height: u32) -> u32 {
    height.next_power_of_two().clamp(*TEXELS.start(), *TEXELS.end())
}

/// The shadow map and the sampler that compares against it.
pub(crate) struct ShadowMap {
    image: Image,
    sampler: Owned<vk::Sampler>,
    texels: u32,
}

impl ShadowMap {
    /// A `texels`² depth image and a comparing, filtering sampler: each lookup is four
    /// comparisons blended, so shadow edges are soft by a texel.
    pub fn new(memory: &Arc<Memory>, texels: u32) -> Result<ShadowMap, RenderError> {
        let extent = vk::Extent2D {
            width: texels,
            height: texels,
        };
        let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::SAMPLED;
        let image = memory.image(extent, DEPTH_FORMAT, usage, vk::ImageAspectFlags::DEPTH, "shadow map")?;
        let sampler = comparing_sampler(memory.device())?;
        Ok(ShadowMap { image, sampler, texels })
    }

    /// Texels per side.
    pub fn texels(&self) -> u32 {
        self.texels
    }

    /// The map, for the globals' descriptor.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Its sampler.
    pub fn sampler(&self) -> vk::Sampler {
        self.sampler.raw()
    }

    /// Records: the map into a depth attachment (contents discarded), and depth-only
    /// rendering into it begins, cleared to the far plane.
    pub fn begin(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        let barrier = layout_barrier(
            self.image.raw(),
            vk::ImageAspectFlags::DEPTH,
            (vk::ImageLayout::UNDEFINED, vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
            (
                vk::AccessFlags::SHADER_READ,
                vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
            ),
        );
        let depth = vk::RenderingAttachmentInfo::default()
            .image_view(self.image.view())
            .image_layout(vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .clear_value(vk::ClearValue {
                depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 },
            });
        let area = vk::Rect2D {
            offset: vk::Offset2D::default(),
            extent: vk::Extent2D {
                width: self.texels,
                height: self.texels,
            },
        };
        let viewport = vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: self.texels as f32,
            height: self.texels as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        let info = vk::RenderingInfo::default()
            .render_area(area)
            .layer_count(1)
            .depth_attachment(&depth);
        // SAFETY: `cmd` is recording outside rendering; the image belongs to this device and
        // the barrier leaves it in the layout rendering names.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::FRAGMENT_SHADER,
                vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
            device.cmd_begin_rendering(cmd, &info);
            device.cmd_set_viewport(cmd, 0, &[viewport]);
            device.cmd_set_scissor(cmd, 0, &[area]);
        }
    }

    /// Records: rendering ends and the map becomes readable by fragment shaders.
    pub fn end(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        let barrier = layout_barrier(
            self.image.raw(),
            vk::ImageAspectFlags::DEPTH,
            (
                vk::ImageLayout::DEPTH_ATTACHMENT_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            ),
            (
                vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE,
                vk::AccessFlags::SHADER_READ,
            ),
        );
        // SAFETY: `cmd` is recording inside the rendering `begin` started.
        unsafe {
            device.cmd_end_rendering(cmd);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::LATE_FRAGMENT_TESTS,
                vk::PipelineStageFlags::FRAGMENT_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier],
            );
        }
    }
}

/// Linear filtering of `depth ≤ stored` comparisons, clamped at the edges.
fn comparing_sampler(device: &Arc<Device>) -> Result<Owned<vk::Sampler>, RenderError> {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(vk::Filter::LINEAR)
        .min_filter(vk::Filter::LINEAR)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .compare_enable(true)
        .compare_op(vk::CompareOp::LESS_OR_EQUAL);
    // SAFETY: valid create info on a live device; the guard is the sampler's one owner.
    unsafe { Owned::new(device, "vkCreateSampler", device.raw.create_sampler(&info, None)) }
}

/// Where the shadow map lies for a view.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShadowFit {
    /// The sun's view-projection (Vulkan depth 0..1).
    pub view_proj: Mat4,
    /// The side of one of the map's texels, metres: the finest detail it resolves.
    pub texel: f32,
    /// Texels per side of the map.
    pub texels: u32,
}

/// How far from `camera` shadows fall, metres: [`SHADOW_METRES`] within its far plane.
pub(crate) fn reach(camera: &Camera) -> f32 {
    SHADOW_METRES.min(camera.far)
}

/// The shadow map of `texels` per side covering `camera`'s view up to [`reach`], for a sun
/// travelling along `sun_direction`.
pub(crate) fn fit(camera: &Camera, aspect: f32, sun_direction: Vec3, texels: u32) -> ShadowFit {
    let (centre, radius) = slice_sphere(camera, aspect, reach(camera));
    let dir = sun_direction.try_normalize().unwrap_or(Vec3::NEG_Y);
    let up = if dir.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
    // Snap the centre to whole texels in the sun's frame (a rotation about the origin).
    let turn = look_to_mat4(Vec3::ZERO, dir, up);
    let texel = 2.0 * radius / texels as f32;
    let c = turn.transform_point3(centre);
    let snapped = Vec3::new((c.x / texel).round() * texel, (c.y / texel).round() * texel, c.z);
    let centre = turn.inverse().transform_point3(snapped);
    let eye = centre - dir * (radius + CASTER_REACH);
    let view = look_to_mat4(eye, dir, up);
    let depth = 2.0 * radius + CASTER_REACH;
    ShadowFit {
        view_proj: orthographic(-radius, radius, -radius, radius, 0.0, depth) * view,
        texel,
        texels,
    }
}

/// A sphere around the camera's view frustum between its near plane and `reach`.
fn slice_sphere(camera: &Camera, aspect: f32, reach: f32) -> (Vec3, f32) {
    let near_camera = Camera {
        far: reach.max(camera.near * 2.0),
        ..*camera
    };
    let inverse = near_camera.view_projection(aspect).inverse();
    let corners: Vec<Vec3> = (0..8)
        .map(|k| {
            let ndc = Vec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { 0.0 } else { 1.0 },
            );
            let p = inverse * ndc.extend(1.0);
            p.xyz() / p.w
        })
        .collect();
    let centre = corners.iter().sum::<Vec3>() / 8.0;
    let radius = corners.iter().map(|p| p.distance(centre)).fold(0.0, f32::max);
    (centre, radius.max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera(at: Vec3) -> Camera {
        Camera {
            position: at,
            target: at + Vec3::new(0.0, -0.3, 1.0),
            ..Camera::default()
        }
    }

    #[test]
    fn the_map_holds_what_the_camera_sees_nearby_and_casters_toward_the_sun() {
        let sun = Vec3::new(-0.4, -0.8, -0.3);
        let cam = camera(Vec3::new(10.0, 30.0, -5.0));
        let m = fit(&cam, 16.0 / 9.0, sun, texels_for(720)).view_proj;
        let inside = |p: Vec3| {
            let c = m * p.extend(1.0);
            let n = c.xyz() / c.w;
            n.x.abs() <= 1.0 && n.y.abs() <= 1.0 && (0.0..=1.0).contains(&n.z)
        };
        let ahead = cam.position + (cam.target - cam.position).normalize() * 100.0;
        assert!(inside(cam.position) && inside(ahead));
        assert!(inside(ahead - sun.normalize() * 300.0), "a caster toward the sun");
        assert!(
            !inside(cam.position + Vec3::new(0.0, 0.0, 2000.0)),
            "far beyond the reach"
        );
        let toward_sun = |p: Vec3| (m * p.extend(1.0)).z;
        assert!(
            toward_sun(ahead - sun * 10.0) < toward_sun(ahead),
            "nearer the sun, smaller depth"
        );
    }

    #[test]
    fn moving_less_than_a_texel_keeps_the_map_still() {
        let sun = Vec3::new(-0.4, -0.8, -0.3);
        let p = Vec3::new(20.0, 0.0, 50.0);
        // Ten steps of 1 cm (a texel of the 1080p map is about 10 cm): the map jumps at most
        // once, by a texel.
        let mut xs: Vec<i64> = (0..10)
            .map(|k| {
                let m = fit(
                    &camera(Vec3::new(10.0 + k as f32 * 0.01, 30.0, -5.0)),
                    1.5,
                    sun,
                    texels_for(1080),
                )
                .view_proj;
                ((m * p.extend(1.0)).x * 1e5).round() as i64
            })
            .collect();
        xs.dedup();
        assert!(xs.len() <= 2, "{xs:?}");
    }

    #[test]
    fn the_map_has_the_targets_rows_rounded_up_to_a_power_of_two_within_bounds() {
        let sizes: Vec<u32> = [180, 720, 1024, 1080, 1440, 2160, 100_000].map(texels_for).to_vec();
        assert_eq!(sizes, [1024, 1024, 1024, 2048, 2048, 4096, 4096]);
    }
}
