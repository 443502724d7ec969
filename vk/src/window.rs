//! `sylva view`: a winit window with a swapchain. Each frame renders into the
//! offscreen target as headless does and is blitted to the swapchain image.
//! Keys follow the thesis demo: W/S/A/D move, E/C (or Ctrl) up/down, Shift faster,
//! V toggles attractor points, P pauses the simulation (the title says so), H
//! toggles the key help, PageUp/PageDown ask for the previous/next scene, F12
//! asks for a screenshot, Esc or Q quits, F11 fullscreen;
//! dragging with the left mouse button looks around. The frame callback draws
//! the overlay (`Renderer::set_overlay`); [`KEYS`] is its key help.

use std::collections::HashSet;
use std::sync::Arc;
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

use crate::commands::{Commands, FRAMES_IN_FLIGHT, per_frame, semaphore};
use crate::device::{Device, Msaa};
use crate::error::RenderError;
use crate::frame::FrameStats;
use crate::gpu_memory::layout_barrier;
use crate::handles::Owned;
use crate::renderer::Renderer;

/// The viewer's keys, one line each, for the overlay's help (H).
pub const KEYS: [&str; 8] = [
    "W/S/A/D  move      E/C (Ctrl)  up/down",
    "Shift    faster    drag        look around",
    "P        pause     V           attractor points",
    "H        this help",
    "PgUp/PgDn  previous/next scene in the folder",
    "F12      screenshot next to the scene",
    "F11      fullscreen",
    "Esc, Q   quit",
];

/// What the viewer's keys control, handed to the frame callback, which may change the
/// camera (a new scene framed on its content) and the title (a new scene's name).
#[derive(Clone, Debug)]
pub struct Controls {
    /// The window's title (the viewer adds the paused state).
    pub title: String,
    /// The fly camera.
    pub camera: Camera,
    /// V: draw attractor points.
    pub show_points: bool,
    /// P: the simulation is paused.
    pub paused: bool,
    /// F12: this frame is to be written as a screenshot (set for one frame).
    pub screenshot: bool,
    /// H: show the key help.
    pub help: bool,
    /// PageUp (−1) or PageDown (+1): go to the previous or next scene (set for one frame).
    pub step: i32,
}

/// Opens a window titled `title` and calls `frame(renderer, controls, seconds since
/// the last frame)` for every frame until the window closes (or after `max_frames`).
/// The callback steps the simulation (unless paused) and renders; a camera it puts into
/// `controls` is flown from.
///
/// A window closed or destroyed from outside (its close button, `xdotool windowclose`) ends
/// the loop like a close: `Ok`. Nothing here asks the windowing system about a window that
/// may be gone (winit panics on a destroyed X11 window's `inner_size`): the size comes from
/// resize events, and a lost surface means the window went away. A client whose display
/// connection is killed (`xkill`) is ended by Xlib itself, with status 1.
pub fn run<F>(title: &str, camera: Camera, max_frames: Option<u64>, frame: F) -> Result<(), RenderError>
where
    F: FnMut(&mut Renderer, &mut Controls, f64) -> Result<FrameStats, RenderError>,
{
    let event_loop = EventLoop::new().map_err(|e| RenderError::Window(no_display(&e)))?;
    let mut viewer = Viewer {
        title: title.to_owned(),
        frame,
        active: None,
        controls: Controls {
            title: title.to_owned(),
            camera,
            show_points: true,
            paused: false,
            screenshot: false,
            help: false,
            step: 0,
        },
        yaw: 0.0,
        pitch: 0.0,
        speed: 1.0,
        held: HashSet::new(),
        dragging: false,
        cursor: None,
        last: Instant::now(),
        error: None,
        frames: 0,
        max_frames,
        quit: false,
    };
    viewer.aim();
    event_loop
        .run_app(&mut viewer)
        .map_err(|e| RenderError::Window(e.to_string()))?;
    match viewer.error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct Viewer<F> {
    /// The title the window shows.
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
    /// Esc or Q was pressed: close after this event.
    quit: bool,
}

/// The window and what draws into it. The swapchain (with its surface) goes
/// before the window it presents to.
struct Active {
    swapchain: Swapchain,
    renderer: Renderer,
    window: Window,
    /// The window's inner size, pixels, as its resize events last said.
    size: (u32, u32),
}

impl Drop for Active {
    fn drop(&mut self) {
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
    F: FnMut(&mut Renderer, &mut Controls, f64) -> Result<FrameStats, RenderError>,
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
        // The window was just created, so asking for its size cannot meet a destroyed one.
        let size = window.inner_size();
        let mut renderer = Renderer::with_extensions(size.width.max(1), size.height.max(1), extensions, Msaa::Auto)?;
        renderer.atmosphere.point_size = 2.0;
        let swapchain = Swapchain::new(&renderer, display, handle)?;
        Ok(Active {
            swapchain,
            renderer,
            window,
            size: (size.width, size.height),
        })
    }

    /// Yaw, pitch and speed from the controls' camera (at the start, or one the callback set).
    fn aim(&mut self) {
        let c = self.controls.camera;
        let forward = (c.target - c.position).normalize_or(Vec3::NEG_Z);
        self.yaw = forward.x.atan2(-forward.z);
        self.pitch = forward.y.clamp(-1.0, 1.0).asin();
        self.speed = (c.target - c.position).length().max(4.0) / 4.0;
    }

    /// The title with the paused state, set on the window when it changed.
    fn retitle(&mut self) {
        let state = if self.controls.paused {
            " (paused: P to go on)"
        } else {
            ""
        };
        let title = format!("{}{state}", self.controls.title);
        if let Some(a) = self.active.as_ref().filter(|_| title != self.title) {
            a.window.set_title(&title);
            self.title = title;
        }
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
        let down = key(KeyCode::KeyC) || key(KeyCode::ControlLeft) || key(KeyCode::ControlRight);
        let speed = self.speed * if shift { 5.0 } else { 1.0 };
        let c = &mut self.controls.camera;
        c.position += (forward * axis(KeyCode::KeyW, KeyCode::KeyS)
            + right * axis(KeyCode::KeyD, KeyCode::KeyA)
            + Vec3::Y * (f32::from(u8::from(key(KeyCode::KeyE))) - f32::from(u8::from(down))))
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
        let (width, height) = active.size;
        if width == 0 || height == 0 {
            return Ok(());
        }
        if active.renderer.size() != (width, height) {
            active.renderer.resize(width, height)?;
            active.swapchain.recreate(&active.renderer)?;
        }
        let camera = self.controls.camera;
        (self.frame)(&mut active.renderer, &mut self.controls, dt)?;
        self.controls.screenshot = false;
        self.controls.step = 0;
        if !active.swapchain.present(&active.renderer)? {
            active.swapchain.recreate(&active.renderer)?;
        }
        active.window.request_redraw();
        if self.controls.camera != camera {
            self.aim();
        }
        self.retitle();
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
            KeyCode::KeyP => {
                self.controls.paused = !self.controls.paused;
                // The overlay says so too; the title also shows in a task bar.
                self.retitle();
            }
            KeyCode::KeyH => self.controls.help = !self.controls.help,
            KeyCode::PageUp => self.controls.step = -1,
            KeyCode::PageDown => self.controls.step = 1,
            KeyCode::Escape | KeyCode::KeyQ => self.quit = true,
            KeyCode::F12 => self.controls.screenshot = true,
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
    F: FnMut(&mut Renderer, &mut Controls, f64) -> Result<FrameStats, RenderError>,
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
            WindowEvent::CloseRequested | WindowEvent::Destroyed => {
                self.active = None;
                event_loop.exit();
            }
            WindowEvent::Resized(size) => {
                if let Some(a) = &mut self.active {
                    a.size = (size.width, size.height);
                    // A window restored from zero size asked for no frame while it had none.
                    a.window.request_redraw();
                }
            }
            WindowEvent::RedrawRequested => {
                match self.redraw() {
                    Ok(()) => {}
                    // Destroyed from outside, its Destroyed event perhaps still on the way.
                    Err(e) if surface_lost(&e) => {
                        self.active = None;
                        event_loop.exit();
                    }
                    Err(e) => {
                        self.error = Some(e);
                        self.active = None;
                        event_loop.exit();
                    }
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
                if self.quit {
                    self.active = None;
                    event_loop.exit();
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

/// Whether `e` says the window's surface is gone: the window was destroyed under us.
fn surface_lost(e: &RenderError) -> bool {
    matches!(
        e,
        RenderError::Vulkan {
            result: vk::Result::ERROR_SURFACE_LOST_KHR,
            ..
        }
    )
}

/// The surface, its swapchain, and the command buffers that blit into it. Drop
/// waits for the GPU, then the fields free themselves (swapchain before surface).
struct Swapchain {
    /// Per blit in flight (as many as the renderer's frames): its command buffer and the
    /// semaphore its acquire signals, reused once that blit's fence has signalled.
    blits: [(Commands, Owned<vk::Semaphore>); FRAMES_IN_FLIGHT],
    /// The blit slot the next present uses.
    next: usize,
    /// One per image: a semaphore is reused only once its image comes back.
    rendered: Vec<Owned<vk::Semaphore>>,
    chain: Chain,
    surface: Surface,
}

/// A window surface; Drop destroys it.
struct Surface {
    raw: vk::SurfaceKHR,
    loader: ash::khr::surface::Instance,
    device: Arc<Device>,
}

/// A swapchain with its images; Drop destroys it.
struct Chain {
    raw: vk::SwapchainKHR,
    loader: ash::khr::swapchain::Device,
    images: Vec<vk::Image>,
    extent: vk::Extent2D,
    // Keeps the device alive until the swapchain is destroyed.
    _device: Arc<Device>,
}

impl Swapchain {
    fn new(
        renderer: &Renderer,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Swapchain, RenderError> {
        let device = renderer.device();
        let surface = Surface::new(device, display, window)?;
        let chain = Chain::new(&surface, renderer.size(), vk::SwapchainKHR::null())?;
        let rendered = chain
            .images
            .iter()
            .map(|_| semaphore(device))
            .collect::<Result<_, _>>()?;
        Ok(Swapchain {
            blits: per_frame(|| Ok((Commands::new(device)?, semaphore(device)?)))?,
            next: 0,
            rendered,
            chain,
            surface,
        })
    }

    /// Recreates the swapchain at the renderer's size.
    fn recreate(&mut self, renderer: &Renderer) -> Result<(), RenderError> {
        let device = renderer.device();
        // SAFETY: waiting has no precondition on a live device; afterwards no image or
        // semaphore of the old swapchain is in use.
        unsafe { device.raw.device_wait_idle() }.map_err(|e| RenderError::vk("vkDeviceWaitIdle", e))?;
        self.chain = Chain::new(&self.surface, renderer.size(), self.chain.raw)?;
        while self.rendered.len() < self.chain.images.len() {
            self.rendered.push(semaphore(device)?);
        }
        Ok(())
    }

    /// Blits the renderer's last frame to the next image and presents it, without
    /// waiting for the GPU. False when the swapchain is out of date (recreate it).
    fn present(&mut self, renderer: &Renderer) -> Result<bool, RenderError> {
        let chain = &self.chain;
        let (commands, acquired) = &mut self.blits[self.next];
        commands.finish()?;
        // SAFETY: `acquired` is unsignalled with no wait pending: the blit that waited on its
        // last signal has finished (its fence, waited on above).
        let acquired = unsafe {
            chain
                .loader
                .acquire_next_image(chain.raw, u64::MAX, acquired.raw(), vk::Fence::null())
        };
        let index = match acquired {
            Ok((i, _)) => i as usize,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => return Ok(false),
            Err(e) => return Err(RenderError::vk("vkAcquireNextImageKHR", e)),
        };
        let (commands, acquired) = &mut self.blits[self.next];
        self.next = (self.next + 1) % FRAMES_IN_FLIGHT;
        let cmd = commands.begin()?;
        let (colour, extent) = renderer.colour();
        record_blit(
            &renderer.device().raw,
            cmd,
            (colour, extent),
            (chain.images[index], chain.extent),
        );
        let waits = [acquired.raw()];
        let stages = [vk::PipelineStageFlags::TRANSFER];
        let signals = [self.rendered[index].raw()];
        commands.submit(
            vk::SubmitInfo::default()
                .wait_semaphores(&waits)
                .wait_dst_stage_mask(&stages)
                .signal_semaphores(&signals),
        )?;
        let swapchains = [chain.raw];
        let indices = [index as u32];
        let info = vk::PresentInfoKHR::default()
            .wait_semaphores(&signals)
            .swapchains(&swapchains)
            .image_indices(&indices);
        // SAFETY: the image was acquired above and its blit signals the semaphore waited on.
        match unsafe { chain.loader.queue_present(renderer.device().queue, &info) } {
            Ok(false) => Ok(true),
            Ok(true) | Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(false),
            Err(e) => Err(RenderError::vk("vkQueuePresentKHR", e)),
        }
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: waiting has no precondition on a live device; afterwards presentation is
        // done with the images and semaphores the fields free.
        let _ = unsafe { self.surface.device.raw.device_wait_idle() };
    }
}

/// Records: the renderer's colour target (in `TRANSFER_SRC_OPTIMAL`) blitted over the
/// whole swapchain image, which is left ready to present.
fn record_blit(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    (colour, extent): (vk::Image, vk::Extent2D),
    (image, image_extent): (vk::Image, vk::Extent2D),
) {
    let barrier = |old, new, src, dst| layout_barrier(image, vk::ImageAspectFlags::COLOR, (old, new), (src, dst));
    let to_dst = barrier(
        vk::ImageLayout::UNDEFINED,
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::AccessFlags::empty(),
        vk::AccessFlags::TRANSFER_WRITE,
    );
    let to_present = barrier(
        vk::ImageLayout::TRANSFER_DST_OPTIMAL,
        vk::ImageLayout::PRESENT_SRC_KHR,
        vk::AccessFlags::TRANSFER_WRITE,
        vk::AccessFlags::empty(),
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
        .dst_offsets([vk::Offset3D::default(), corner(image_extent)]);
    let (transfer, none) = (vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty());
    // SAFETY: `cmd` is recording and the swapchain image was acquired; the renderer's frame,
    // submitted before on the same queue, left its colour target in TRANSFER_SRC_OPTIMAL
    // behind a barrier to transfers, and the next frame's rendering into it waits for them.
    unsafe {
        d.cmd_pipeline_barrier(cmd, transfer, transfer, none, &[], &[], &[to_dst]);
        d.cmd_blit_image(
            cmd,
            colour,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            image,
            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
            &[blit],
            vk::Filter::NEAREST,
        );
        let bottom = vk::PipelineStageFlags::BOTTOM_OF_PIPE;
        d.cmd_pipeline_barrier(cmd, transfer, bottom, none, &[], &[], &[to_present]);
    }
}

impl Surface {
    /// A surface for the window, which the device's queue must be able to present to.
    fn new(
        device: &Arc<Device>,
        display: raw_window_handle::RawDisplayHandle,
        window: raw_window_handle::RawWindowHandle,
    ) -> Result<Surface, RenderError> {
        let instance = &device.instance;
        // SAFETY: the handles come from a live window, which outlives the surface (`Active`
        // drops the swapchain first).
        let raw = unsafe { ash_window::create_surface(&instance.entry, &instance.raw, display, window, None) }
            .map_err(|e| RenderError::vk("vkCreateSurfaceKHR", e))?;
        let surface = Surface {
            raw,
            loader: ash::khr::surface::Instance::new(&instance.entry, &instance.raw),
            device: Arc::clone(device),
        };
        // SAFETY: the queue family and the surface belong to this device and instance.
        let supported = unsafe {
            surface
                .loader
                .get_physical_device_surface_support(device.physical, device.queue_family, raw)
        }
        .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceSupportKHR", e))?;
        if !supported {
            return Err(RenderError::Window(
                "the graphics queue cannot present to this window".into(),
            ));
        }
        Ok(surface)
    }

    /// The sRGB format if there is one, else the first.
    fn format(&self) -> Result<vk::SurfaceFormatKHR, RenderError> {
        // SAFETY: the surface belongs to this physical device's instance.
        let formats = unsafe {
            self.loader
                .get_physical_device_surface_formats(self.device.physical, self.raw)
        }
        .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceFormatsKHR", e))?;
        formats
            .iter()
            .find(|f| f.format == vk::Format::B8G8R8A8_SRGB || f.format == vk::Format::R8G8B8A8_SRGB)
            .or(formats.first())
            .copied()
            .ok_or_else(|| RenderError::Window("the surface has no formats".into()))
    }
}

impl Drop for Surface {
    fn drop(&mut self) {
        // SAFETY: the surface's one swapchain (`Chain`, an earlier field of `Swapchain`) is
        // gone; `device` keeps the instance alive.
        unsafe { self.loader.destroy_surface(self.raw, None) };
    }
}

impl Chain {
    /// A FIFO swapchain of `size` (or the surface's own extent) replacing `old`.
    fn new(surface: &Surface, (width, height): (u32, u32), old: vk::SwapchainKHR) -> Result<Chain, RenderError> {
        let device = &surface.device;
        // SAFETY: the surface belongs to this physical device's instance.
        let caps = unsafe {
            surface
                .loader
                .get_physical_device_surface_capabilities(device.physical, surface.raw)
        }
        .map_err(|e| RenderError::vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", e))?;
        let format = surface.format()?;
        let extent = if caps.current_extent.width != u32::MAX {
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
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface.raw)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true)
            .old_swapchain(old);
        let loader = ash::khr::swapchain::Device::new(&device.instance.raw, &device.raw);
        // SAFETY: `info` outlives the call; `old` is null or the live swapchain of this surface.
        let raw =
            unsafe { loader.create_swapchain(&info, None) }.map_err(|e| RenderError::vk("vkCreateSwapchainKHR", e))?;
        let mut chain = Chain {
            raw,
            loader,
            images: Vec::new(),
            extent,
            _device: Arc::clone(device),
        };
        // SAFETY: the swapchain was just created on this device.
        chain.images = unsafe { chain.loader.get_swapchain_images(raw) }
            .map_err(|e| RenderError::vk("vkGetSwapchainImagesKHR", e))?;
        Ok(chain)
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        // SAFETY: the owner waited for the device (`Swapchain::recreate` or its Drop), so no
        // image is in use; `device` keeps the device alive.
        unsafe { self.loader.destroy_swapchain(self.raw, None) };
    }
}

/// Why no window can open, for a person: winit's error names its own source file
/// and mentions Wayland, which this build does not include.
fn no_display(e: &winit::error::EventLoopError) -> String {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    let why = if display.is_empty() {
        "no X11 display: DISPLAY is not set".to_owned()
    } else {
        format!("cannot reach the X11 display {display} ({})", cause(e))
    };
    format!(
        "{why}. `sylva view` needs an X11 desktop (Wayland desktops run it through XWayland); \
         without one, render to a file: `sylva run SCENE --screenshot out.png`"
    )
}

/// The cause in winit's error without the source location it carries.
fn cause(e: &winit::error::EventLoopError) -> String {
    let text = e.to_string();
    match text.rsplit_once(": ") {
        Some((_, cause)) if text.contains(".rs:") => cause.to_owned(),
        _ => text,
    }
}
