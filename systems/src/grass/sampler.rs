//! The CPU mirror of the vertex shader's fetch: field position → texel, time
//! (× Wave Speed) → two frames interpolated with the loop seam, × Wind Power.
//! A bake ([`BakedGrass::sample`]) and its render-contract copy ([`motion_sample`], what a
//! host without Vulkan plays back) read through the same loop.

use glam::Vec3;
use sylva_runtime::extract::{GrassMotion, GrassTexel};

use super::bake::{BakedGrass, TextureLayout, decode};

/// The loop's shape: field cells per side, cell size (m), frames, seconds between frames.
struct Loop {
    cells: u32,
    cell_size: f32,
    frames: u32,
    frame_seconds: f32,
}

impl Loop {
    /// The displacement at world `(x, z)` and `time` seconds, `texel(frame, cx, cz)` reading
    /// the stored one.
    fn sample(
        &self,
        x: f32,
        z: f32,
        time: f32,
        wind_power: f32,
        wave_speed: f32,
        texel: impl Fn(u32, u32, u32) -> Vec3,
    ) -> Vec3 {
        let n = i64::from(self.cells.max(1));
        let cell = |p: f32| ((p / self.cell_size).floor() as i64).rem_euclid(n) as u32;
        let frames = self.frames.max(1);
        let f = (time * wave_speed / self.frame_seconds).rem_euclid(frames as f32);
        let f0 = (f.floor() as u32).min(frames - 1);
        let f1 = (f0 + 1) % frames;
        let w = f - f0 as f32;
        let (cx, cz) = (cell(x), cell(z));
        (texel(f0, cx, cz) * (1.0 - w) + texel(f1, cx, cz) * w) * wind_power
    }
}

/// Displacement of particle `link` (0 = first above the root) of a blade whose root is at
/// world `(x, z)`, at `time` seconds, from its rest position, metres (Y up; not turned by the
/// blade's yaw): `motion` played back as Sylva's grass shader plays it (see [`GrassMotion`]).
/// Zero where the motion holds no such texel.
pub fn motion_sample(
    motion: &GrassMotion,
    link: u32,
    x: f32,
    z: f32,
    time: f32,
    wind_power: f32,
    wave_speed: f32,
) -> Vec3 {
    let (layout, scale) = match motion.texel {
        GrassTexel::Rgba16F => (TextureLayout::Rgba16F, 1.0),
        GrassTexel::Rgb8 { scale } => (TextureLayout::ThesisRgb8, scale),
    };
    let shape = Loop {
        cells: motion.cells,
        cell_size: motion.cell_size,
        frames: motion.frames,
        frame_seconds: motion.frame_seconds,
    };
    let b = motion.texel.bytes();
    shape.sample(x, z, time, wind_power, wave_speed, |frame, cx, cz| {
        let n = motion.cells as usize;
        let idx = ((link as usize * motion.frames as usize + frame as usize) * n + cz as usize) * n + cx as usize;
        motion
            .texels
            .get(idx * b..(idx + 1) * b)
            .map_or(Vec3::ZERO, |bytes| decode(layout, scale, bytes))
    })
}

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
        let shape = Loop {
            cells: self.cells,
            cell_size: self.cell_size,
            frames: self.frames,
            frame_seconds: self.frame_seconds,
        };
        shape.sample(x, z, time, wind_power, wave_speed, |frame, cx, cz| {
            self.texel(link, frame, cx, cz)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grass::extraction::motion;
    use crate::grass::wind::breeze;
    use crate::grass::{BakeSettings, BladeShape, Dynamics, Segment, bake};

    #[test]
    fn the_render_contracts_motion_plays_back_as_its_bake_in_both_layouts() {
        for layout in [TextureLayout::Rgba16F, TextureLayout::ThesisRgb8] {
            let settings = BakeSettings {
                cells: 3,
                frames: 4,
                record_every: 2,
                max_warmup_seconds: 0.0,
                layout,
                ..BakeSettings::default()
            };
            let shape = BladeShape::blade(3, 0.3, Segment::default());
            let wind = breeze();
            let (baked, _) = bake(&shape, &Dynamics::default(), &wind, &settings).expect("bake");
            let m = motion(&baked);
            let mut moved = 0;
            for link in 0..baked.links {
                for (x, z, t) in [(0.1, 0.2, 0.0), (-3.7, 11.2, 0.37), (5.5, -0.4, 9.81)] {
                    let a = baked.sample(link, x, z, t, 1.5, 0.8);
                    assert_eq!(motion_sample(&m, link, x, z, t, 1.5, 0.8), a, "{layout:?} link {link}");
                    moved += usize::from(a != Vec3::ZERO);
                }
            }
            assert!(moved > 0, "the breeze moves the blade");
            assert_eq!(
                motion_sample(&m, baked.links, 0.0, 0.0, 0.0, 1.0, 1.0),
                Vec3::ZERO,
                "no such link"
            );
        }
    }
}
