//! Ecology: what vegetation reads of the land, which biomes that makes, and
//! ground cover as a field (docs/design/ecology.md).
//!
//! - [`AttributeMaps`]: terrain attributes ([`Attribute`]) sampled on a coarse
//!   grid of world cells; the world computes them per chunk
//!   (`world::attributes`), equal across chunk borders.
//! - [`EcologyParams`] / [`Biomes`]: the scene's biome table, and memberships and
//!   densities evaluated from it at any place.
//! - [`CoverField`]: ground-cover density and kind per sample, expanded into
//!   blades by a hash of (seed, world cell, index).
//!
//! ```
//! use sylva_systems::ecology::{Attribute, Biome, BiomeRule, Biomes, EcologyParams};
//!
//! let params = EcologyParams {
//!     biomes: vec![
//!         Biome { name: "meadow".into(), ..Biome::default() },
//!         Biome {
//!             name: "cliff".into(),
//!             rules: vec![BiomeRule { attribute: Attribute::Slope, range: (40.0, 90.0), blend: 10.0 }],
//!             ..Biome::default()
//!         },
//!     ],
//!     ..EcologyParams::default()
//! };
//! let biomes = Biomes::new(&params, &[], &[], 7).unwrap();
//! let mut at = [0.0; 8];
//! at[Attribute::Slope as usize] = 60.0;
//! let mut m = [0.0; 2];
//! biomes.memberships(&at, 0.0, 0.0, &mut m);
//! assert!(m[1] > 0.5 && (m[0] + m[1] - 1.0).abs() < 1e-6);
//! ```

mod attributes;
mod biomes;
mod cover;

pub use attributes::{ATTRIBUTES, Attribute, AttributeMaps, Attributes};
pub use biomes::{
    Biome, BiomeRule, Biomes, Clearings, Cover, Dither, EcologyParams, Layer, MAX_BIOMES, MAX_COVER, MAX_PER_HECTARE,
    MAX_PER_M2, MAX_RULES, Stand, thrown_for,
};
pub use cover::{BladeDraw, CellCover, CoverField, DENSITY_UNIT, MAX_BLADES_PER_CELL, NO_KIND, blade_hash, pcg};
