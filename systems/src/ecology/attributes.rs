//! Terrain attributes: what vegetation reads of the land at a place, sampled on
//! a coarse grid of world cells (docs/design/ecology.md, "Attributes").

use serde::{Deserialize, Serialize};

/// One attribute of the land.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Attribute {
    /// Ground height above the sea surface, metres (negative under the sea).
    Height,
    /// Steepness, degrees (0 flat, 90 a wall).
    Slope,
    /// Direct sunlight on the ground under the scene's sun, 0 (none) to 1 (facing it).
    Insolation,
    /// Thickness of the loose layers (sand and regolith) at the top of the column, metres.
    SoilDepth,
    /// Topographic wetness index ln(a / tan β): a the upslope area per metre of contour, β the slope.
    Wetness,
    /// Distance to the nearest river bank, metres, at most the ecology's `max_distance`.
    RiverDistance,
    /// Distance to the nearest sea, metres, at most the ecology's `max_distance`.
    SeaDistance,
    /// Air temperature, °C, falling with height.
    Temperature,
}

/// How many attributes there are.
pub const ATTRIBUTES: usize = 8;

impl Attribute {
    /// Every attribute, in the order maps store them.
    pub const ALL: [Attribute; ATTRIBUTES] = [
        Attribute::Height,
        Attribute::Slope,
        Attribute::Insolation,
        Attribute::SoilDepth,
        Attribute::Wetness,
        Attribute::RiverDistance,
        Attribute::SeaDistance,
        Attribute::Temperature,
    ];

    /// Its lower-case name, as mask files are named.
    pub fn name(self) -> &'static str {
        match self {
            Attribute::Height => "height",
            Attribute::Slope => "slope",
            Attribute::Insolation => "insolation",
            Attribute::SoilDepth => "soil_depth",
            Attribute::Wetness => "wetness",
            Attribute::RiverDistance => "river_distance",
            Attribute::SeaDistance => "sea_distance",
            Attribute::Temperature => "temperature",
        }
    }

    /// Where the values lie: every computed value is clamped into it, and a
    /// biome rule wholly outside it can never match.
    pub fn bounds(self) -> (f32, f32) {
        match self {
            Attribute::Height => (-1e5, 1e5),
            Attribute::Slope => (0.0, 90.0),
            Attribute::Insolation => (0.0, 1.0),
            Attribute::SoilDepth => (0.0, 1e4),
            Attribute::Wetness => (-20.0, 40.0),
            Attribute::RiverDistance | Attribute::SeaDistance => (0.0, 1e4),
            Attribute::Temperature => (-100.0, 100.0),
        }
    }

    /// The span a 16-bit mask maps to 0..=65535 (values outside are clamped).
    pub fn mask_range(self) -> (f32, f32) {
        match self {
            Attribute::Height => (-50.0, 1000.0),
            Attribute::Slope => (0.0, 90.0),
            Attribute::Insolation => (0.0, 1.0),
            Attribute::SoilDepth => (0.0, 10.0),
            Attribute::Wetness => (-5.0, 25.0),
            Attribute::RiverDistance | Attribute::SeaDistance => (0.0, 1000.0),
            Attribute::Temperature => (-30.0, 40.0),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Every attribute at one place.
pub type Attributes = [f32; ATTRIBUTES];

/// Attribute maps over a square grid of samples `spacing` cells apart, sample
/// (0, 0) at world cell `origin`. A sample is a function of its world cell
/// alone, so two maps agree wherever they overlap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttributeMaps {
    /// World cell of sample (0, 0).
    pub origin: [i64; 2],
    /// Cells between samples.
    pub spacing: u32,
    /// Samples along a side.
    pub side: u32,
    /// Side of a cell, metres.
    pub cell_size: f32,
    /// Every attribute's samples, row by row, attribute after attribute
    /// ([`Attribute::ALL`] order).
    pub values: Vec<f32>,
}

impl AttributeMaps {
    /// Maps of `side`² samples with every value 0.
    pub fn new(origin: [i64; 2], spacing: u32, side: u32, cell_size: f32) -> Self {
        let n = side as usize * side as usize;
        Self {
            origin,
            spacing,
            side,
            cell_size,
            values: vec![0.0; n * ATTRIBUTES],
        }
    }

    /// Samples per map.
    pub fn samples(&self) -> usize {
        self.side as usize * self.side as usize
    }

    /// Attribute `a`'s samples, row by row.
    pub fn map(&self, a: Attribute) -> &[f32] {
        let n = self.samples();
        &self.values[a.index() * n..][..n]
    }

    /// Attribute `a`'s samples, to fill.
    pub fn map_mut(&mut self, a: Attribute) -> &mut [f32] {
        let n = self.samples();
        &mut self.values[a.index() * n..][..n]
    }

    /// World cell of sample `(i, j)`.
    pub fn cell_of(&self, i: u32, j: u32) -> [i64; 2] {
        let s = i64::from(self.spacing);
        [self.origin[0] + i64::from(i) * s, self.origin[1] + i64::from(j) * s]
    }

    /// Every attribute at sample `index`.
    pub fn sample(&self, index: usize) -> Attributes {
        let n = self.samples();
        std::array::from_fn(|a| self.values[a * n + index])
    }

    /// Every attribute at world position `(x, z)` metres, bilinear between the
    /// four samples around it; `None` outside the maps.
    pub fn at(&self, x: f32, z: f32) -> Option<Attributes> {
        let (corners, w) = self.corners(x, z)?;
        let n = self.samples();
        Some(std::array::from_fn(|a| {
            let v = |k: usize| self.values[a * n + corners[k]];
            (v(0) * (1.0 - w[0]) + v(1) * w[0]) * (1.0 - w[1]) + (v(2) * (1.0 - w[0]) + v(3) * w[0]) * w[1]
        }))
    }

    /// The samples around `(x, z)` metres (row-major: (0,0), (1,0), (0,1), (1,1))
    /// and the weights along x and z. World cell first, in f64, so two maps
    /// find the same samples for the same point.
    fn corners(&self, x: f32, z: f32) -> Option<([usize; 4], [f32; 2])> {
        let step = f64::from(self.spacing) * f64::from(self.cell_size);
        let u = [
            (f64::from(x) - self.origin[0] as f64 * f64::from(self.cell_size)) / step,
            (f64::from(z) - self.origin[1] as f64 * f64::from(self.cell_size)) / step,
        ];
        let i = u.map(|v| v.floor());
        let last = f64::from(self.side) - 1.0;
        if i.iter().any(|&v| v < 0.0 || v >= last) {
            return None;
        }
        let (i0, j0) = (i[0] as usize, i[1] as usize);
        let side = self.side as usize;
        let c = j0 * side + i0;
        Some((
            [c, c + 1, c + side, c + side + 1],
            [(u[0] - i[0]) as f32, (u[1] - i[1]) as f32],
        ))
    }

    /// The `side`² samples from sample `(i0, j0)` on, as maps of their own.
    pub fn crop(&self, i0: u32, j0: u32, side: u32) -> Option<AttributeMaps> {
        if i0.checked_add(side)? > self.side || j0.checked_add(side)? > self.side {
            return None;
        }
        let mut out = AttributeMaps::new(self.cell_of(i0, j0), self.spacing, side, self.cell_size);
        for a in Attribute::ALL {
            let from = self.map(a);
            let to = out.map_mut(a);
            for j in 0..side as usize {
                let row = (j + j0 as usize) * self.side as usize + i0 as usize;
                to[j * side as usize..][..side as usize].copy_from_slice(&from[row..row + side as usize]);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bilinear reads hit the samples exactly on them, blend between them, and
    /// crops keep the values of the cells they cover.
    #[test]
    fn reads_interpolate_between_samples_and_crops_keep_cells() {
        let mut m = AttributeMaps::new([-8, 4], 4, 3, 0.5);
        for (k, v) in m.map_mut(Attribute::Slope).iter_mut().enumerate() {
            *v = k as f32;
        }
        // Sample (1, 1) is world cell (-4, 8): metres (-2, 4).
        assert_eq!(m.at(-2.0, 4.0).unwrap()[Attribute::Slope as usize], 4.0);
        // Halfway to sample (2, 1) along x.
        assert_eq!(m.at(-1.0, 4.0).unwrap()[Attribute::Slope as usize], 4.5);
        assert!(m.at(-4.1, 4.0).is_none(), "before the first sample");
        assert!(m.at(0.0, 4.0).is_none(), "on the last column: no sample after it");
        let c = m.crop(1, 1, 2).unwrap();
        assert_eq!(c.origin, [-4, 8]);
        assert_eq!(c.map(Attribute::Slope), &[4.0, 5.0, 7.0, 8.0]);
        assert!(m.crop(2, 2, 2).is_none());
    }
}
