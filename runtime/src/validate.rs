//! The one shape of a validation failure: which field, and why.
//!
//! Every parameter type of a scene implements [`Validate`]. A nested type
//! returns paths relative to itself; its parent prefixes its own field name
//! with [`FieldError::within`], so the scene ends up with the full dotted path
//! and maps it to `file:line:column` in one place.
//!
//! ```
//! use sylva_runtime::{FieldError, Validate};
//!
//! struct Wheel { spokes: u32 }
//! impl Validate for Wheel {
//!     fn validate(&self) -> Result<(), FieldError> {
//!         FieldError::check(self.spokes > 2, "spokes", || format!("must be at least 3, got {}", self.spokes))
//!     }
//! }
//!
//! let e = Wheel { spokes: 1 }.validate().unwrap_err().within("front");
//! assert_eq!(e.to_string(), "field `front.spokes`: must be at least 3, got 1");
//! ```

use std::fmt;

/// A field that failed validation: its path below the value that was checked, and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Field names from the outside in (`["species[1]", "weight"]`); empty for the value itself.
    pub path: Vec<String>,
    /// What is wrong, with the value found and what is allowed.
    pub message: String,
}

impl FieldError {
    /// An error at `field` (a name, or a dotted path such as `rules.slope`).
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            path: field.split('.').filter(|p| !p.is_empty()).map(str::to_owned).collect(),
            message: message.into(),
        }
    }

    /// `Ok` when `ok`, else an error at `field` with the message `message()` builds.
    pub fn check(ok: bool, field: &str, message: impl FnOnce() -> String) -> Result<(), Self> {
        if ok { Ok(()) } else { Err(Self::new(field, message())) }
    }

    /// The same error seen from the parent that holds the checked value as `field`.
    pub fn within(mut self, field: impl Into<String>) -> Self {
        self.path.insert(0, field.into());
        self
    }

    /// The dotted path, `species[1].weight`.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.dotted(), self.message)
    }
}

impl std::error::Error for FieldError {}

/// Parameters that can say whether they are in range.
pub trait Validate {
    /// Checks every range the types cannot express.
    fn validate(&self) -> Result<(), FieldError>;
}
