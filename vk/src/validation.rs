//! The Khronos validation layer's messages, counted by severity.

use std::ffi::{CStr, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;

/// Error texts kept for test failure messages.
const KEPT: usize = 8;

/// Validation messages seen so far. Shared with the debug messenger, so it
/// still counts while the device and instance are destroyed (leak reports).
#[derive(Debug, Default)]
pub struct ValidationLog {
    errors: AtomicU32,
    warnings: AtomicU32,
    first: Mutex<Vec<String>>,
}

impl ValidationLog {
    /// Error messages so far.
    pub fn errors(&self) -> u32 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Warning messages so far.
    pub fn warnings(&self) -> u32 {
        self.warnings.load(Ordering::Relaxed)
    }

    /// The first few error and warning texts.
    pub fn messages(&self) -> Vec<String> {
        self.first.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn record(&self, severity: vk::DebugUtilsMessageSeverityFlagsEXT, text: &str) {
        let label = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            "error"
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            self.warnings.fetch_add(1, Ordering::Relaxed);
            "warning"
        } else {
            return;
        };
        if let Ok(mut first) = self.first.lock()
            && first.len() < KEPT
        {
            first.push(format!("{label}: {text}"));
        }
    }
}

/// The messenger's create info, also chained into the instance's so that
/// instance creation and destruction are checked too.
pub(crate) fn messenger_info(log: &ValidationLog) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(callback))
        .user_data(log as *const ValidationLog as *mut c_void)
}

unsafe extern "system" fn callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: `user` is the `ValidationLog` the renderer keeps alive (in an Arc)
    // until after the instance is destroyed; `data` is valid for this call.
    unsafe {
        let log = &*(user as *const ValidationLog);
        let text = if data.is_null() || (*data).p_message.is_null() {
            String::new()
        } else {
            CStr::from_ptr((*data).p_message).to_string_lossy().into_owned()
        };
        log.record(severity, &text);
    }
    vk::FALSE
}
