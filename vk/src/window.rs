//! `sylva view`: a winit window with a swapchain. Each frame renders into the
//! offscreen target as headless does and is blitted to the swapchain image.
//! Keys follow the thesis demo: W/S/A/D move, E/Q up/down, Shift faster,
//! V toggles attractor points, Esc pauses the simulation, F11 fullscreen;
//! dragging with the left mouse button looks around.

use std::collections::HashSet;
use std::time::Instant;

use ash::vk;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use sylva_runtime::extract::Camera;
use sylva_runtime::glam::Vec3;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{KeyCode, PhysicalKey};
use winit::window::{Fullscreen, Window, WindowId};

use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::memory::layout_barrier;
use crate::renderer::Renderer;

/// What the viewer's keys control, handed to the frame callback.
#[derive(Clone, Copy, Debug)]
pub struct Controls {
    /// The fly camera.
    pub camera: Camera,
    /// V: draw attractor points.
    pub show_points: bool,
    /// Esc: the simulation is paused.
    pub paused: bool,
}

/// Opens a window titled `title` and calls `frame(renderer, controls, seconds since
/// the last frame)` for every frame until the window closes (or after `max_frames`).
/// The callback steps the simulation (unless paused) and renders.
pub fn run<F>(title: &str, camera: Camera, max_frames: Option<u64>, frame: F) -> Result<(), RenderError>
where
    F: FnMut(&mut Renderer, &Controls, f64) -> Result<FrameStats, RenderError>,
{
    let event_loop = EventLoop::new().map_err(|e| RenderError::Window(e.to_string()))?;
    let forward = (camera.target - camera.position).normalize_or(Vec3::NEG_Z);
    let mut viewer = Viewer {
        title: title.to_owned(),
        frame,
        active: None,
        controls: Controls {
            camera,
            show_points: true,
            paused: false,
        },
        yaw: forward.x.atan2(-forward.z),
        pitch: forward.y.clamp(-1.0, 1.0).asin(),
        speed: (camera.target - camera.position).length().max(4.0) / 4.0,
        held: HashSet::new(),
        dragging: false,
        cursor: None,
        last: Instant::now(),
        error: None,
        frames: 0,
        max_frames,
    };
    event_loop
        .run_app(&mut viewer)
        .map_err(|e| RenderError::Window(e.to_string()))?;
    match viewer.error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct Viewer<F> {
    title: String,
    frame: F,
    active: Option<Active>,
    controls: Controls,
    yaw: f32,
    pitch: f32,
    /// Metres per second without Shift.
    speed: f32,
    held: HashSet<KeyCode>,
    dragging: bool,
    cursor: Option<(f64, f64)>,
    last: Instant,
    error: Option<RenderError>,
    frames: u64,
    max_frames: Option<u64>,
}

/// The window and what draws into it. The swapchain goes before the renderer's device.
struct Active {
    swapchain: Swapchain,
    renderer: Renderer,
    window: Window,
}

impl Drop for Active {
    fn drop(&mut self) {
        self.swapchain.destroy(&self.renderer);
        let log = self.renderer.validation();
        if log.errors() + log.warnings() > 0 {
            eprintln!(
                "view: {} validation errors, {} warnings; first: {:#?}",
                log.errors(),
                log.warnings(),
                log.messages()
            );
        }
    }
}

impl<F> Viewer<F>
where
    F: FnMut(&mut Renderer, &Controls, f64) -> Result<FrameStats, RenderError>,
{
    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<Active, RenderError> {
        let err = |e: &dyn std::fmt::Display| RenderError::Window(e.to_string());
        let attributes = Window::default_attributes()
            .with_title(self.title.clone())
            .with_inner_size(winit::dpi::LogicalSize::new(1280.0, 720.0));
        let window = event_loop.create_window(attributes).map_err(|e| err(&e))?;
        let display = window.display_handle().map_err(|e| err(&e))?.as_raw();
        let handle = window.window_handle().map_err(|e| err(&e))?.as_raw();
        let extensions = ash_window::enumerate_required_extensions(display)
            .map_err(|e| RenderError::vk("vkEnumerateInstanceExtensionProperties (surface)", e))?;
        let size = window.inner_size();
        let mut renderer = Renderer::with_extensions(size.width.max(1), size.height.max(1), extensions)?;
        renderer.atmosphere.point_size = 2.0;
        let swapchain = Swapchain::new(&renderer, display, handle)?;
        Ok(Active {
            swapchain,
            renderer,
            window,
        })
    }

    fn fly(&mut self, dt: f32) {
        let key = |k| self.held.contains(&k);
        let forward = Vec3::new(
            self.yaw.sin() * self.pitch.cos(),
            self.pitch.sin(),
            -self.yaw.cos() * self.pitch.cos(),
        );
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let axis = |plus, minus| f32::from(u8::from(key(plus))) - f32::from(u8::from(key(minus)));
        let shift = key(KeyCode::ShiftLeft) || key(KeyCode::ShiftRight);
        let speed = self.speed * if shift { 5.0 } else { 1.0 };
        let c = &mut self.controls.camera;
        c.position += (forward * axis(KeyCode::KeyW, KeyCode::KeyS)
            + right * axis(KeyCode::KeyD, KeyCode::KeyA)
            + Vec3::Y * axis(KeyCode::KeyE, KeyCode::KeyQ))
            * speed
            * dt;
        c.target = c.position + forward;
    }

    fn redraw(&mut self) -> Result<(), RenderError> {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64().min(0.25);
        self.last = now;
        self.fly(dt as f32);
        let Some(active) = self.active.as_mut() else {
            return Ok(());
        };
        let size = active.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(());
        }
        if active.renderer.size() != (size.width, size.height) {
            active.renderer.resize(size.width, size.height)?;
            active.swapchain.recreate(&active.renderer)?;
        }
        (self.frame)(&mut active.renderer, &self.controls, dt)?;
        if !active.swapchain.present(&active.renderer)? {
            active.swapchain.recreate(&active.renderer)?;
        }
        active.window.request_redraw();
        Ok(())
    }

    fn key(&mut self, code: KeyCode, pressed: bool, repeat: bool) {
        if pressed {
            self.held.insert(code);
        } else {
            self.held.remove(&code);
        }
        if !pressed || repeat {
            return;
        }
        match code {
            KeyCode::KeyV => self.controls.show_points = !self.controls.show_points,
            KeyCode::Escape => self.controls.paused = !self.controls.paused,
            KeyCode::F11 => {
                if let Some(a) = &self.active {
                    let full = a.window.fullscreen().is_some();
                    a.window.set_fullscreen((!full).then_some(Fullscreen::Borderless(None)));
                }
            }
            _ => {}
        }
    }
}

impl<F> ApplicationHandler for Viewer<F>
where
    F: FnMut(&mut Renderer, &Controls, f64) -> Result<FrameStats, RenderError>,
{
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.active.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(a) => {
                a.window.request_redraw();
                self.active = Some(a);
                self.last = Instant::now();
            }
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => {
                self.active = None;
                event_loop.exit();
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw() {
                    self.error = Some(e);
                    self.active = None;
                    event_loop.exit();
                }
                self.frames += 1;
                if self.max_frames.is_some_and(|m| self.frames >= m) {
                    self.active = None;
                    event_loop.exit();
                }
            }
            WindowEvent::KeyboardInput { event, .. } => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    self.key(code, event.state == ElementState::Pressed, event.repeat);
                }
            }
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => {
                self.dragging = state == ElementState::Pressed;
            }
            WindowEvent::CursorMoved { position, .. } => {
                if let (true, Some((x, y))) = (self.dragging, self.cursor) {
                    self.yaw += ((position.x - x) * 0.004) as f32;
                    self.pitch = (self.pitch - ((position.y - y) * 0.004) as f32).clamp(-1.5, 1.5);
                }
                self.cursor = Some((position.x, position.y));
            }
            _ => {}
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        self.active = None;
    }
}

/// The surface, its swapchain, and the command buffer that blits into it.
struct Swapchain {
    surface_loader: ash::khr::surface::Instance,
    loader: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    swapchain: vk::SwapchainKHR,
    images: Vec<vk::Image>,
    extent: vk::Extent2D,
    acquired: vk::Semaphore,
    /// One per image: a semaphore is reused only once its image comes back.
    rendered: Vec<vk::Semaphore>,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
}

impl Swapchain {
    fn new(
        renderer: &Renderer,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Swapchain, RenderError> {
        let dev = renderer.device();
        let d = &dev.device;
        let surface_loader = ash::khr::surface::Instance::new(&dev.entry, &dev.instance);
        let mut s = Swapchain {
            loader: ash::khr::swapchain::Device::new(&dev.instance, d),
            surface_loader,
            surface: vk::SurfaceKHR::null(),
            swapchain: vk::SwapchainKHR::null(),
            images: Vec::new(),
            extent: vk::Extent2D::default(),
            acquired: vk::Semaphore::null(),
            rendered: Vec::new(),
            pool: vk::CommandPool::null(),
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
        };
        // SAFETY: the handles come from a live window; every object is destroyed in `destroy`.
        let made = unsafe {
            (|| {
                s.surface = ash_window::create_surface(&dev.entry, &dev.instance, display, window, None)
                    .map_err(|e| RenderError::vk("vkCreateSurfaceKHR", e))?;
                let supported = s
                    .surface_loader
                    .get_physical_device_surface_support(dev.physical, dev.queue_family, s.surface)
                    .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceSupportKHR", e))?;
                if !supported {
                    return Err(RenderError::Window(
                        "the graphics queue cannot present to this window".into(),
                    ));
                }
                s.pool = d
                    .create_command_pool(
                        &vk::CommandPoolCreateInfo::default()
                            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
                            .queue_family_index(dev.queue_family),
                        None,
                    )
                    .map_err(|e| RenderError::vk("vkCreateCommandPool", e))?;
                s.cmd = d
                    .allocate_command_buffers(
                        &vk::CommandBufferAllocateInfo::default()
                            .command_pool(s.pool)
                            .level(vk::CommandBufferLevel::PRIMARY)
                            .command_buffer_count(1),
                    )
                    .map_err(|e| RenderError::vk("vkAllocateCommandBuffers", e))?[0];
                s.fence = d
                    .create_fence(&vk::FenceCreateInfo::default(), None)
                    .map_err(|e| RenderError::vk("vkCreateFence", e))?;
                s.acquired = d
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .map_err(|e| RenderError::vk("vkCreateSemaphore", e))?;
                Ok(())
            })()
        };
        match made.and_then(|()| s.recreate(renderer)) {
            Ok(()) => Ok(s),
            Err(e) => {
                s.destroy(renderer);
                Err(e)
            }
        }
    }

    /// (Re)creates the swapchain at the renderer's size.
    fn recreate(&mut self, renderer: &Renderer) -> Result<(), RenderError> {
        let dev = renderer.device();
        let d = &dev.device;
        let (width, height) = renderer.size();
        // SAFETY: after the wait no image or semaphore of the old swapchain is in use.
        unsafe {
            d.device_wait_idle()
                .map_err(|e| RenderError::vk("vkDeviceWaitIdle", e))?;
            let caps = self
                .surface_loader
                .get_physical_device_surface_capabilities(dev.physical, self.surface)
                .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", e))?;
            let formats = self
                .surface_loader
                .get_physical_device_surface_formats(dev.physical, self.surface)
                .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceFormatsKHR", e))?;
            let format = formats
                .iter()
                .find(|f| f.format == vk::Format::B8G8R8A8_SRGB || f.format == vk::Format::R8G8B8A8_SRGB)
                .or(formats.first())
                .copied()
                .ok_or_else(|| RenderError::Window("the surface has no formats".into()))?;
            self.extent = if caps.current_extent.width != u32::MAX {
                caps.current_extent
            } else {
                vk::Extent2D {
                    width: width.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                    height: height.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
                }
            };
            let mut count = caps.min_image_count + 1;
            if caps.max_image_count > 0 {
                count = count.min(caps.max_image_count);
            }
            let old = self.swapchain;
            let info = vk::SwapchainCreateInfoKHR::default()
                .surface(self.surface)
                .min_image_count(count)
                .image_format(format.format)
                .image_color_space(format.color_space)
                .image_extent(self.extent)
                .image_array_layers(1)
                .image_usage(vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::COLOR_ATTACHMENT)
                .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
                .pre_transform(caps.current_transform)
                .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
                .present_mode(vk::PresentModeKHR::FIFO)
                .clipped(true)
                .old_swapchain(old);
            self.swapchain = self
                .loader
                .create_swapchain(&info, None)
                .map_err(|e| RenderError::vk("vkCreateSwapchainKHR", e))?;
            self.loader.destroy_swapchain(old, None);
            self.images = self
                .loader
                .get_swapchain_images(self.swapchain)
                .map_err(|e| RenderError::vk("vkGetSwapchainImagesKHR", e))?;
            while self.rendered.len() < self.images.len() {
                let s = d
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
                    .map_err(|e| RenderError::vk("vkCreateSemaphore", e))?;
                self.rendered.push(s);
            }
        }
        Ok(())
    }

    /// Blits the renderer's last frame to the next image and presents it.
    /// False when the swapchain is out of date (recreate it).
    fn present(&mut self, renderer: &Renderer) -> Result<bool, RenderError> {
        let dev = renderer.device();
        let d = &dev.device;
        let Some((colour, extent)) = renderer.colour() else {
            return Ok(true);
        };
        // SAFETY: the renderer's frame finished (it waits on its fence); our own
        // previous blit finished (we wait on our fence); all handles are live.
        unsafe {
            let index = match self
                .loader
                .acquire_next_image(self.swapchain, u64::MAX, self.acquired, vk::Fence::null())
            {
                Ok((i, _)) => i,
                Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => return Ok(false),
                Err(e) => return Err(RenderError::vk("vkAcquireNextImageKHR", e)),
            };
            let image = self.images[index as usize];
            let barrier =
                |old, new, src, dst| layout_barrier(image, vk::ImageAspectFlags::COLOR, (old, new), (src, dst));
            let cmd = self.cmd;
            let vk_err = |what| move |e| RenderError::vk(what, e);
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())
                .map_err(vk_err("vkResetCommandBuffer"))?;
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .map_err(vk_err("vkBeginCommandBuffer"))?;
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier(
                    vk::ImageLayout::UNDEFINED,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    vk::AccessFlags::empty(),
                    vk::AccessFlags::TRANSFER_WRITE,
                )],
            );
            let layers = vk::ImageSubresourceLayers::default()
                .aspect_mask(vk::ImageAspectFlags::COLOR)
                .layer_count(1);
            let corner = |e: vk::Extent2D| vk::Offset3D {
                x: e.width as i32,
                y: e.height as i32,
                z: 1,
            };
            let blit = vk::ImageBlit::default()
                .src_subresource(layers)
                .src_offsets([vk::Offset3D::default(), corner(extent)])
                .dst_subresource(layers)
                .dst_offsets([vk::Offset3D::default(), corner(self.extent)]);
            d.cmd_blit_image(
                cmd,
                colour,
                vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                image,
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                &[blit],
                vk::Filter::NEAREST,
            );
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[barrier(
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    vk::ImageLayout::PRESENT_SRC_KHR,
                    vk::AccessFlags::TRANSFER_WRITE,
                    vk::AccessFlags::empty(),
                )],
            );
            d.end_command_buffer(cmd).map_err(vk_err("vkEndCommandBuffer"))?;
            let waits = [self.acquired];
            let stages = [vk::PipelineStageFlags::TRANSFER];
            let cmds = [cmd];
            let signals = [self.rendered[index as usize]];
            d.queue_submit(
                dev.queue,
                &[vk::SubmitInfo::default()
                    .wait_semaphores(&waits)
                    .wait_dst_stage_mask(&stages)
                    .command_buffers(&cmds)
                    .signal_semaphores(&signals)],
                self.fence,
            )
            .map_err(vk_err("vkQueueSubmit"))?;
            d.wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(vk_err("vkWaitForFences"))?;
            d.reset_fences(&[self.fence]).map_err(vk_err("vkResetFences"))?;
            let swapchains = [self.swapchain];
            let indices = [index];
            match self.loader.queue_present(
                dev.queue,
                &vk::PresentInfoKHR::default()
                    .wait_semaphores(&signals)
                    .swapchains(&swapchains)
                    .image_indices(&indices),
            ) {
                Ok(false) => Ok(true),
                Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(false),
                Err(e) => Err(RenderError::vk("vkQueuePresentKHR", e)),
            }
        }
    }

    fn destroy(&mut self, renderer: &Renderer) {
        let d = &renderer.device().device;
        // SAFETY: after the wait nothing is in use; null handles are ignored.
        unsafe {
            let _ = d.device_wait_idle();
            for s in self.rendered.drain(..) {
                d.destroy_semaphore(s, None);
            }
            d.destroy_semaphore(self.acquired, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
            self.loader.destroy_swapchain(self.swapchain, None);
            self.surface_loader.destroy_surface(self.surface, None);
        }
        self.swapchain = vk::SwapchainKHR::null();
        self.surface = vk::SurfaceKHR::null();
    }
}
