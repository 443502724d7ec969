//! The CPU mirror of the vertex shader's fetch: field position → texel, time
//! (× Wave Speed) → two frames interpolated with the loop seam, × Wind Power.

use glam::Vec3;

use super::bake::{BakedGrass, decode};

impl BakedGrass {
    /// The stored displacement of `link` in cell (cx, cz) at `frame`.
    pub fn texel(&self, link: u32, frame: u32, cx: u32, cz: u32) -> Vec3 {
        let n = self.cells as usize;
        let idx = ((link as usize * self.frames as usize + frame as usize) * n + cz as usize) * n + cx as usize;
        let b = self.layout.texel_bytes();
        decode(self.layout, self.rgb8_scale, &self.textures[idx * b..(idx + 1) * b])
    }

    /// Displacement of particle `link` (0 = first above the root) of a blade whose
    /// root is at world `(x, z)`, at `time` seconds: the field repeats every
    /// `cells × cell_size` metres (nearest texel), frames are linearly interpolated
    /// and wrap from the last to the first.
    pub fn sample(&self, link: u32, x: f32, z: f32, time: f32, wind_power: f32, wave_speed: f32) -> Vec3 {
        let n = self.cells as i64;
        let cell = |p: f32| ((p / self.cell_size).floor() as i64).rem_euclid(n) as u32;
        let f = (time * wave_speed / self.frame_seconds).rem_euclid(self.frames as f32);
        let f0 = (f.floor() as u32).min(self.frames - 1);
        let f1 = (f0 + 1) % self.frames;
        let w = f - f0 as f32;
        let (cx, cz) = (cell(x), cell(z));
        (self.texel(link, f0, cx, cz) * (1.0 - w) + self.texel(link, f1, cx, cz) * w) * wind_power
    }
}
