//! Rock types and their parameters (thesis §3.1.2, Table 3.1).

use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

/// Number of rock types.
pub const MATERIAL_COUNT: usize = 7;

/// A rock type, stored as one byte per layer slot.
///
/// The order is the hardness order of the thesis (hardest first); the rock
/// cycle runs the other way, from regolith up to granite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Material {
    /// Granit: igneous, hardest.
    Granite = 0,
    /// Marmor: metamorphic.
    Marble = 1,
    /// Schiefer: between metamorphic and sedimentary.
    Slate = 2,
    /// Kalkstein: sedimentary.
    Limestone = 3,
    /// Sandstein: sedimentary.
    Sandstone = 4,
    /// Loose sediment.
    Sand = 5,
    /// Loose soil made by erosion; everything eroded or slid becomes regolith.
    Regolith = 6,
}

impl Material {
    /// All rock types in byte order.
    pub const ALL: [Material; MATERIAL_COUNT] = [
        Material::Granite,
        Material::Marble,
        Material::Slate,
        Material::Limestone,
        Material::Sandstone,
        Material::Sand,
        Material::Regolith,
    ];

    /// The type stored as byte `b`, if any.
    pub fn from_u8(b: u8) -> Option<Material> {
        Self::ALL.get(usize::from(b)).copied()
    }

    /// Loose sediments (regolith, sand) have no cohesion: a consolidated layer
    /// resting on them can slide (thesis §3.1.5).
    pub fn is_loose(self) -> bool {
        matches!(self, Material::Sand | Material::Regolith)
    }

    /// The next, harder type in the rock cycle
    /// (regolith → sand → sandstone → limestone → slate → marble → granite).
    pub fn aged(self) -> Option<Material> {
        match self {
            Material::Regolith => Some(Material::Sand),
            Material::Sand => Some(Material::Sandstone),
            Material::Sandstone => Some(Material::Limestone),
            Material::Limestone => Some(Material::Slate),
            Material::Slate => Some(Material::Marble),
            Material::Marble => Some(Material::Granite),
            Material::Granite => None,
        }
    }
}

/// Parameters of one rock type.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialProps {
    /// Talus angle α in degrees: thermal erosion moves material where a
    /// neighbour is lower by more than tan(α)·l.
    pub talus_angle: f32,
    /// K_s: how much of the capacity excess dissolves per step (and, in the
    /// thesis, also how much deposits), and how deep standing water turns this
    /// rock into regolith.
    pub ks: f32,
    /// Density, g/cm³. Not in the thesis (it names SiMetric's list only); it
    /// weighs layers in the sliding pressure rule (eq. 3.12).
    pub density: f32,
    /// Deposition rate when the hydraulic step does not use K_s for both
    /// directions ([`super::HydraulicParams::thesis_deposit`] = false): the
    /// fraction of the excess suspended sediment that settles on this surface per step.
    pub deposit: f32,
}

/// Parameters of every rock type; defaults are Table 3.1 plus typical densities.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaterialTable {
    /// Default: talus 70°, K_s 0.05, density 2.7, deposit 0.05.
    pub granite: MaterialProps,
    /// Default: talus 65°, K_s 0.1, density 2.7, deposit 0.1.
    pub marble: MaterialProps,
    /// Default: talus 60°, K_s 0.30, density 2.8, deposit 0.3.
    pub slate: MaterialProps,
    /// Default: talus 60°, K_s 0.65, density 2.5, deposit 0.3.
    pub limestone: MaterialProps,
    /// Default: talus 50°, K_s 0.70, density 2.3, deposit 0.3.
    pub sandstone: MaterialProps,
    /// Default: talus 45°, K_s 0.90, density 1.6, deposit 0.3.
    pub sand: MaterialProps,
    /// Default: talus 20°, K_s 1, density 1.4, deposit 0.3.
    pub regolith: MaterialProps,
}

const fn props(talus_angle: f32, ks: f32, density: f32, deposit: f32) -> MaterialProps {
    MaterialProps {
        talus_angle,
        ks,
        density,
        deposit,
    }
}

impl Default for MaterialTable {
    fn default() -> Self {
        Self {
            granite: props(70.0, 0.05, 2.7, 0.05),
            marble: props(65.0, 0.1, 2.7, 0.1),
            slate: props(60.0, 0.30, 2.8, 0.3),
            limestone: props(60.0, 0.65, 2.5, 0.3),
            sandstone: props(50.0, 0.70, 2.3, 0.3),
            sand: props(45.0, 0.90, 1.6, 0.3),
            regolith: props(20.0, 1.0, 1.4, 0.3),
        }
    }
}

impl MaterialTable {
    /// The parameters of `m`.
    pub fn get(&self, m: Material) -> &MaterialProps {
        match m {
            Material::Granite => &self.granite,
            Material::Marble => &self.marble,
            Material::Slate => &self.slate,
            Material::Limestone => &self.limestone,
            Material::Sandstone => &self.sandstone,
            Material::Sand => &self.sand,
            Material::Regolith => &self.regolith,
        }
    }

    /// One field of every material, indexed by the material byte, for kernels.
    pub(crate) fn lut(&self, f: impl Fn(&MaterialProps) -> f32) -> [f32; MATERIAL_COUNT] {
        Material::ALL.map(|m| f(self.get(m)))
    }

    /// Talus thresholds T_A = tan(α)·l by material byte (eq. 2.36).
    pub(crate) fn talus_thresholds(&self, cell_length: f32) -> [f32; MATERIAL_COUNT] {
        self.lut(|p| p.talus_angle.to_radians().tan() * cell_length)
    }
}

impl Validate for MaterialTable {
    /// Checks every material; the path names it, `granite.talus_angle`.
    fn validate(&self) -> Result<(), FieldError> {
        const NAMES: [&str; MATERIAL_COUNT] = [
            "granite",
            "marble",
            "slate",
            "limestone",
            "sandstone",
            "sand",
            "regolith",
        ];
        for (m, name) in Material::ALL.into_iter().zip(NAMES) {
            let p = self.get(m);
            let at = |field: &str| format!("{name}.{field}");
            FieldError::check(p.talus_angle > 0.0 && p.talus_angle < 90.0, &at("talus_angle"), || {
                format!("must be in (0, 90) degrees, got {}", p.talus_angle)
            })?;
            for (field, v) in [("ks", p.ks), ("deposit", p.deposit)] {
                FieldError::check((0.0..=1.0).contains(&v), &at(field), || {
                    format!("must be in [0, 1], got {v}")
                })?;
            }
            FieldError::check(p.density.is_finite() && p.density > 0.0, &at("density"), || {
                format!("must be a positive number, got {}", p.density)
            })?;
        }
        Ok(())
    }
}
