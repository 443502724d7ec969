//! Parametric bracketed L-systems.
