//! Instance, physical device choice, logical device and queue.

use std::ffi::{CStr, c_char};
use std::sync::Arc;

use ash::vk;

use crate::error::RenderError;
use crate::validation::{ValidationLog, messenger_info};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// The Vulkan device everything else is created on.
pub struct Device {
    /// The loader, opened at run time.
    pub entry: ash::Entry,
    /// The instance.
    pub instance: ash::Instance,
    /// The chosen physical device.
    pub physical: vk::PhysicalDevice,
    /// The logical device.
    pub device: ash::Device,
    /// A queue that supports graphics and transfer.
    pub queue: vk::Queue,
    /// Its family.
    pub queue_family: u32,
    /// The physical device's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    // Read by the messenger until the instance is gone; dropped after `drop` runs.
    validation: Arc<ValidationLog>,
}

impl Device {
    /// Opens the loader and creates a device: discrete GPU, else integrated,
    /// else any other (a CPU driver such as lavapipe). The validation layer is
    /// enabled whenever it is installed. `surface_extensions` are the instance
    /// extensions a window needs (none headless); with any, the device gets
    /// `VK_KHR_swapchain`.
    pub fn new(surface_extensions: &[*const c_char]) -> Result<Device, RenderError> {
        // SAFETY: loading the system's Vulkan loader library; its initialisers are trusted.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| RenderError::NoDriver(e.to_string()))?;
        // SAFETY: plain enumeration calls on a loaded entry.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
        let has_validation = layers
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
        let validation = Arc::new(ValidationLog::default());

        let app = vk::ApplicationInfo::default()
            .application_name(c"sylva")
            .engine_name(c"sylva")
            .api_version(vk::API_VERSION_1_3);
        let layer_names: Vec<*const c_char> = if has_validation {
            vec![VALIDATION_LAYER.as_ptr()]
        } else {
            Vec::new()
        };
        let mut extensions: Vec<*const c_char> = surface_extensions.to_vec();
        if has_validation {
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let mut debug_info = messenger_info(&validation);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&extensions);
        if has_validation {
            info = info.push_next(&mut debug_info);
        }
        // SAFETY: every pointer in `info` outlives the call.
        let instance = unsafe { entry.create_instance(&info, None) }.map_err(|e| match e {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER => RenderError::NoDriver("no Vulkan 1.3 driver".into()),
            e => RenderError::vk("vkCreateInstance", e),
        })?;
        let debug = if has_validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: the log the info points to is kept alive by `validation`.
            match unsafe { loader.create_debug_utils_messenger(&messenger_info(&validation), None) } {
                Ok(m) => Some((loader, m)),
                Err(e) => {
                    // SAFETY: nothing was created from the instance yet.
                    unsafe { instance.destroy_instance(None) };
                    return Err(RenderError::vk("vkCreateDebugUtilsMessengerEXT", e));
                }
            }
        } else {
            None
        };
        let swapchain = !surface_extensions.is_empty();
        let mut this = DeviceParts {
            entry,
            instance,
            debug,
            validation,
        };
        match this.pick_and_create(swapchain) {
            Ok(d) => Ok(d),
            Err(e) => {
                this.destroy();
                Err(e)
            }
        }
    }

    /// The validation log (counts stay readable after the device is dropped).
    pub fn validation(&self) -> Arc<ValidationLog> {
        Arc::clone(&self.validation)
    }

    /// True when the validation layer is on.
    pub fn validating(&self) -> bool {
        self.debug.is_some()
    }
}

/// An instance without a device yet, destroyed by hand if no device can be made.
struct DeviceParts {
    entry: ash::Entry,
    instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    validation: Arc<ValidationLog>,
}

impl DeviceParts {
    fn pick_and_create(&mut self, swapchain: bool) -> Result<Device, RenderError> {
        // SAFETY: the instance is live.
        let physicals = unsafe { self.instance.enumerate_physical_devices() }
            .map_err(|e| RenderError::vk("vkEnumeratePhysicalDevices", e))?;
        let rank = |t: vk::PhysicalDeviceType| match t {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        };
        let mut best: Option<(u32, vk::PhysicalDevice, u32, vk::PhysicalDeviceProperties)> = None;
        for p in physicals {
            // SAFETY: `p` came from this instance.
            let props = unsafe { self.instance.get_physical_device_properties(p) };
            if props.api_version < vk::API_VERSION_1_3 {
                continue;
            }
            // SAFETY: as above.
            let families = unsafe { self.instance.get_physical_device_queue_family_properties(p) };
            let Some(family) = families
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
            else {
                continue;
            };
            let r = rank(props.device_type);
            if best.as_ref().is_none_or(|b| r < b.0) {
                best = Some((r, p, family as u32, props));
            }
        }
        let Some((_, physical, queue_family, props)) = best else {
            return Err(RenderError::NoDriver("no Vulkan 1.3 device with graphics".into()));
        };
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(queue_family)
            .queue_priorities(&priorities)];
        // maintenance4 (required of every 1.3 device) lets compute shaders use LocalSizeId, which
        // shaderc emits for Vulkan 1.3 (the grass probe).
        let mut features13 = vk::PhysicalDeviceVulkan13Features::default()
            .dynamic_rendering(true)
            .maintenance4(true);
        let device_extensions = [ash::khr::swapchain::NAME.as_ptr()];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(if swapchain { &device_extensions } else { &[] })
            .push_next(&mut features13);
        // SAFETY: `physical` belongs to the instance; `info` outlives the call.
        let device = unsafe { self.instance.create_device(physical, &info, None) }
            .map_err(|e| RenderError::vk("vkCreateDevice", e))?;
        // SAFETY: family and index were requested above.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let name = props
            .device_name_as_c_str()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown device".into());
        Ok(Device {
            entry: self.entry.clone(),
            instance: self.instance.clone(),
            physical,
            device,
            queue,
            queue_family,
            name,
            debug: self.debug.take(),
            validation: Arc::clone(&self.validation),
        })
    }

    fn destroy(&mut self) {
        // SAFETY: nothing created from the instance is alive any more.
        unsafe {
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the renderer destroyed every object made on this device before dropping it.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}
