//! Standing-water erosion (thesis §2.3.2, §3.1.4): water that barely moves
//! grinds the rock beneath it into regolith and soaks into it.
//!
//! Eq. 2.33 is printed as max(w, K_s), which contradicts the text and can
//! drive w negative; we use r = min(w, K_s) as the target regolith depth, so
//! the regolith under standing water never exceeds the K_s of the rock
//! beneath, and w −= r (eq. 2.34) never goes below zero
//! (docs/design/terrain.md, "Standing water target depth").
//! It runs inside the water step, which has the fluxes and applies the
//! standing criterion ([`super::params::Standing`]).

use super::columns::Layers;
use super::materials::{MATERIAL_COUNT, Material};

/// Turns rock under standing water into regolith until the regolith on top
/// is min(w, K_s) thick (K_s of the rock beneath); returns the converted
/// thickness, which is also the water used up.
pub(crate) fn grind(layers: &mut Layers<'_>, i: usize, w: f32, ks: &[f32; MATERIAL_COUNT]) -> f32 {
    let regolith = Material::Regolith as u8;
    let c = layers.len(i);
    let (existing, rock) = match layers.top(i) {
        Some((m, t)) if m == regolith => (t, c.checked_sub(2)),
        Some(_) => (0.0, c.checked_sub(1)),
        None => return 0.0,
    };
    let Some(k) = rock else { return 0.0 };
    let target = w.min(ks[usize::from(layers.material[k][i])]);
    if target <= existing {
        return 0.0;
    }
    let converted = layers.take_from_slot(i, k, (target - existing).min(w));
    layers.push(i, regolith, converted);
    converted
}
