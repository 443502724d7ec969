//! Space colonization (Runions et al. 2007, with the thesis's extensions).
