//! Grass into the render contract ([`sylva_runtime::extract::GrassBatch`]):
//! baked textures become a [`GrassMotion`] byte for byte (same `[link][frame][z][x]`
//! order and texel encodings), so a renderer's fetch and [`BakedGrass::sample`] read the same data.

use sylva_runtime::extract::{GrassMotion, GrassTexel};

use super::bake::{BakedGrass, TextureLayout};

/// The renderer's view of a bake.
pub fn motion(baked: &BakedGrass) -> GrassMotion {
    GrassMotion {
        cells: baked.cells,
        cell_size: baked.cell_size,
        frames: baked.frames,
        frame_seconds: baked.frame_seconds,
        links: baked.links,
        texel: match baked.layout {
            TextureLayout::Rgba16F => GrassTexel::Rgba16F,
            TextureLayout::ThesisRgb8 => GrassTexel::Rgb8 {
                scale: baked.rgb8_scale,
            },
        },
        texels: baked.textures.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grass::{BakeSettings, BladeShape, Dynamics, Segment, WindField, bake};

    #[test]
    fn motion_keeps_every_texel_and_the_layout() {
        for layout in [TextureLayout::Rgba16F, TextureLayout::ThesisRgb8] {
            let settings = BakeSettings {
                cells: 2,
                frames: 3,
                record_every: 2,
                max_warmup_seconds: 0.0,
                layout,
                ..BakeSettings::default()
            };
            let shape = BladeShape::blade(2, 0.2, Segment::default());
            let (baked, _) = bake(&shape, &Dynamics::default(), &WindField::default(), &settings).expect("bake");
            let m = motion(&baked);
            assert_eq!(m.texels, baked.textures);
            assert_eq!(m.texels.len(), 2 * 3 * 2 * 2 * m.texel.bytes());
            assert_eq!((m.cells, m.frames, m.links), (2, 3, 2));
        }
    }
}
