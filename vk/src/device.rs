//! Instance, physical device choice, logical device and queue.
//!
//! Every Vulkan object the renderer makes holds an `Arc<Device>`, so the device
//! (and the instance inside it) is destroyed only after the last of them.

use std::ffi::{CStr, c_char};
use std::sync::Arc;

use ash::vk;

use crate::error::RenderError;
use crate::validation::{ValidationLog, messenger_info};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// The loader and the instance, with the debug messenger while validating.
/// Drop destroys the messenger and the instance.
pub struct Instance {
    /// The loader, opened at run time.
    pub entry: ash::Entry,
    /// The instance.
    pub raw: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    // Read by the messenger until the instance is gone; dropped after `drop` runs.
    validation: Arc<ValidationLog>,
}

impl Instance {
    /// Opens the loader and creates the instance with `surface_extensions`, validating
    /// whenever the layer is installed.
    fn new(surface_extensions: &[*const c_char]) -> Result<Instance, RenderError> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers, trusted as any
        // system library's are.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| RenderError::NoDriver(e.to_string()))?;
        let validation = Arc::new(ValidationLog::default());
        let log = has_validation_layer(&entry).then_some(&*validation);
        let raw = create_instance(&entry, surface_extensions, log)?;
        let validating = log.is_some();
        let mut instance = Instance {
            entry,
            raw,
            debug: None,
            validation,
        };
        if validating {
            let loader = ash::ext::debug_utils::Instance::new(&instance.entry, &instance.raw);
            let info = messenger_info(&instance.validation);
            // SAFETY: the log `info` points to is kept alive by `instance.validation` until
            // after the messenger is destroyed.
            let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .map_err(|e| RenderError::vk("vkCreateDebugUtilsMessengerEXT", e))?;
            instance.debug = Some((loader, messenger));
        }
        Ok(instance)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: the instance is dropped inside `Device`, after the logical device, so
        // nothing made from it is alive; the messenger belongs to it.
        unsafe {
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.raw.destroy_instance(None);
        }
    }
}

fn has_validation_layer(entry: &ash::Entry) -> bool {
    // SAFETY: a plain enumeration on a loaded entry.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
    layers
        .iter()
        .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
}

/// A Vulkan 1.3 instance; with `validation`, the layer is on and instance creation
/// and destruction report to the log too.
fn create_instance(
    entry: &ash::Entry,
    surface_extensions: &[*const c_char],
    validation: Option<&ValidationLog>,
) -> Result<ash::Instance, RenderError> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"sylva")
        .engine_name(c"sylva")
        .api_version(vk::API_VERSION_1_3);
    let mut layers: Vec<*const c_char> = Vec::new();
    let mut extensions: Vec<*const c_char> = surface_extensions.to_vec();
    if validation.is_some() {
        layers.push(VALIDATION_LAYER.as_ptr());
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
    }
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    let mut debug_info = validation.map(messenger_info);
    if let Some(debug_info) = debug_info.as_mut() {
        info = info.push_next(debug_info);
    }
    // SAFETY: every pointer in `info` outlives the call.
    unsafe { entry.create_instance(&info, None) }.map_err(|e| match e {
        vk::Result::ERROR_INCOMPATIBLE_DRIVER => RenderError::NoDriver("no Vulkan 1.3 driver".into()),
        e => RenderError::vk("vkCreateInstance", e),
    })
}

/// The Vulkan device everything else is created on. Drop waits for the GPU and
/// destroys the device, then the instance.
pub struct Device {
    /// The logical device.
    pub raw: ash::Device,
    /// The chosen physical device.
    pub physical: vk::PhysicalDevice,
    /// Its limits.
    pub limits: vk::PhysicalDeviceLimits,
    /// A queue that supports graphics and transfer.
    pub queue: vk::Queue,
    /// Its family.
    pub queue_family: u32,
    /// The physical device's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// Indirect draws may draw many commands at once and start at any instance
    /// (`multiDrawIndirect` and `drawIndirectFirstInstance`, enabled when supported).
    pub multi_draw: bool,
    /// Samples per pixel of the render target: 4 (multisample anti-aliasing, which keeps
    /// twigs and blades whole lines) where colour and depth targets support it, else 1.
    pub samples: vk::SampleCountFlags,
    /// The instance (destroyed after the device, being a later field).
    pub instance: Instance,
}

/// A physical device that can render, with its graphics queue family and properties.
struct Candidate {
    physical: vk::PhysicalDevice,
    queue_family: u32,
    properties: vk::PhysicalDeviceProperties,
    multi_draw: bool,
}

impl Device {
    /// Opens the loader and creates a device: discrete GPU, else integrated,
    /// else any other (a CPU driver such as lavapipe). The validation layer is
    /// enabled whenever it is installed. `surface_extensions` are the instance
    /// extensions a window needs (none headless); with any, the device gets
    /// `VK_KHR_swapchain`.
    pub fn new(surface_extensions: &[*const c_char], msaa: Msaa) -> Result<Device, RenderError> {
        let instance = Instance::new(surface_extensions)?;
        let best = pick(&instance.raw)?;
        let raw = create_device(&instance.raw, &best, !surface_extensions.is_empty())?;
        // SAFETY: family and index were requested at creation.
        let queue = unsafe { raw.get_device_queue(best.queue_family, 0) };
        let name = best
            .properties
            .device_name_as_c_str()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown device".into());
        Ok(Device {
            raw,
            physical: best.physical,
            limits: best.properties.limits,
            queue,
            queue_family: best.queue_family,
            name,
            multi_draw: best.multi_draw,
            samples: target_samples(msaa, best.properties.device_type, &best.properties.limits),
            instance,
        })
    }

    /// The validation log (counts stay readable after the device is dropped).
    pub fn validation(&self) -> Arc<ValidationLog> {
        Arc::clone(&self.instance.validation)
    }

    /// True when the validation layer is on.
    pub fn validating(&self) -> bool {
        self.instance.debug.is_some()
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every object made on the device holds an `Arc<Device>`, so none is left
        // when this runs; the wait lets queued work finish first.
        unsafe {
            let _ = self.raw.device_wait_idle();
            self.raw.destroy_device(None);
        }
    }
}

/// Multisample anti-aliasing of the render target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Msaa {
    /// 4 samples per pixel on a GPU; 1 on a CPU driver such as lavapipe, where it costs
    /// more than the rest of the frame. `SYLVA_MSAA=1` or `SYLVA_MSAA=4` decides instead.
    #[default]
    Auto,
    /// 1 sample per pixel.
    Off,
    /// 4 samples per pixel where the device renders them to colour and depth.
    On,
}

/// The target's samples per pixel for `msaa` on a device of `kind` with `limits`.
fn target_samples(msaa: Msaa, kind: vk::PhysicalDeviceType, limits: &vk::PhysicalDeviceLimits) -> vk::SampleCountFlags {
    let both = limits.framebuffer_color_sample_counts & limits.framebuffer_depth_sample_counts;
    let asked = std::env::var("SYLVA_MSAA").ok();
    let on = match (msaa, asked.as_deref().map(str::trim)) {
        (Msaa::On, _) => true,
        (Msaa::Off, _) => false,
        (Msaa::Auto, Some("1")) => false,
        (Msaa::Auto, Some("4")) => true,
        (Msaa::Auto, _) => kind != vk::PhysicalDeviceType::CPU,
    };
    if on && both.contains(vk::SampleCountFlags::TYPE_4) {
        vk::SampleCountFlags::TYPE_4
    } else {
        vk::SampleCountFlags::TYPE_1
    }
}

/// The best Vulkan 1.3 device with a graphics queue.
fn pick(instance: &ash::Instance) -> Result<Candidate, RenderError> {
    // SAFETY: the instance is live.
    let physicals = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| RenderError::vk("vkEnumeratePhysicalDevices", e))?;
    let rank = |t: vk::PhysicalDeviceType| match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    };
    let mut best: Option<Candidate> = None;
    for physical in physicals {
        // SAFETY: `physical` came from this instance.
        let properties = unsafe { instance.get_physical_device_properties(physical) };
        if properties.api_version < vk::API_VERSION_1_3 {
            continue;
        }
        // SAFETY: `physical` came from this instance.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let Some(family) = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
        else {
            continue;
        };
        // The instanced trees' multi-draws tell their draws apart by the draw index.
        let mut vulkan11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut vulkan11);
        // SAFETY: `physical` came from this instance, which is Vulkan 1.3.
        unsafe { instance.get_physical_device_features2(physical, &mut features2) };
        if vulkan11.shader_draw_parameters != vk::TRUE {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|b| rank(properties.device_type) < rank(b.properties.device_type))
        {
            // SAFETY: `physical` came from this instance.
            let features = unsafe { instance.get_physical_device_features(physical) };
            best = Some(Candidate {
                physical,
                queue_family: family as u32,
                properties,
                multi_draw: features.multi_draw_indirect == vk::TRUE
                    && features.draw_indirect_first_instance == vk::TRUE,
            });
        }
    }
    best.ok_or_else(|| RenderError::NoDriver("no Vulkan 1.3 device with graphics and shader draw parameters".into()))
}

/// The logical device with one queue of the candidate's family and dynamic rendering.
fn create_device(instance: &ash::Instance, best: &Candidate, swapchain: bool) -> Result<ash::Device, RenderError> {
    let priorities = [1.0];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(best.queue_family)
        .queue_priorities(&priorities)];
    // maintenance4 (required of every 1.3 device) lets compute shaders use LocalSizeId, which
    // shaderc emits for Vulkan 1.3 (the grass probe).
    let mut features13 = vk::PhysicalDeviceVulkan13Features::default()
        .dynamic_rendering(true)
        .maintenance4(true);
    let mut features11 = vk::PhysicalDeviceVulkan11Features::default().shader_draw_parameters(true);
    let device_extensions = [ash::khr::swapchain::NAME.as_ptr()];
    let features = vk::PhysicalDeviceFeatures::default()
        .multi_draw_indirect(best.multi_draw)
        .draw_indirect_first_instance(best.multi_draw);
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_features(&features)
        .enabled_extension_names(if swapchain { &device_extensions } else { &[] })
        .push_next(&mut features13)
        .push_next(&mut features11);
    // SAFETY: `physical` belongs to the instance; `info` outlives the call.
    unsafe { instance.create_device(best.physical, &info, None) }.map_err(|e| RenderError::vk("vkCreateDevice", e))
}
