//! The files a command writes of a world region for other tools, besides its own output
//! (`sylva terrain --region`, `sylva export`): pictures of the ground (16-bit heightmap,
//! materials, false colour), the ecology (one 16-bit PNG per attribute, the biome PNG, a
//! legend) and the trees and shrubs as CSV.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use sylva::systems::ecology::Attribute;
use sylva::systems::terrain::{Heightfield, PngKind, write_png};
use sylva::systems::world::{ChunkPayload, WorldGen, instances, masks};

use crate::cli::output_paths::{self, Output, PNG, TABLE};

/// The pictures of a terrain or a region's ground.
#[derive(Args, Debug, Default)]
pub(crate) struct Pictures {
    /// Write the final ground heights as a 16-bit grey PNG.
    #[arg(long, value_name = "PATH")]
    heightmap: Option<PathBuf>,
    /// Write each cell's top material as an RGB PNG (water blue).
    #[arg(long, value_name = "PATH")]
    material_map: Option<PathBuf>,
    /// Write a topographic false-colour RGB PNG (water blue).
    #[arg(long, value_name = "PATH")]
    false_colour: Option<PathBuf>,
}

impl Pictures {
    /// The pictures as outputs to check before any work.
    pub(crate) fn outputs(&self) -> [Output<'_>; 3] {
        [
            ("--heightmap", self.heightmap.as_deref(), PNG),
            ("--material-map", self.material_map.as_deref(), PNG),
            ("--false-colour", self.false_colour.as_deref(), PNG),
        ]
    }

    /// Whether any picture is asked for.
    pub(crate) fn any(&self) -> bool {
        self.heightmap.is_some() || self.material_map.is_some() || self.false_colour.is_some()
    }

    /// Writes every asked-for picture of `field`; white in the heightmap is its highest ground.
    pub(crate) fn write(&self, field: &Heightfield) -> Result<(), String> {
        let top = field.max_ground();
        let pictures = [
            (&self.heightmap, PngKind::Height16, "heightmap"),
            (&self.material_map, PngKind::Materials, "material map"),
            (&self.false_colour, PngKind::FalseColour, "false colour"),
        ];
        for (path, kind, what) in pictures {
            if let Some(path) = path {
                write_png(path, field, kind, top).map_err(|e| e.to_string())?;
                println!("{what}: {}", path.display());
            }
        }
        if self.heightmap.is_some() {
            println!("  heightmap scale: white = {top:?} m (16-bit, value = round(h / {top:?} * 65535))");
        }
        Ok(())
    }
}

/// The ecology outputs of a region.
#[derive(Args, Debug, Default)]
pub(crate) struct EcologyOutputs {
    /// Write one 16-bit PNG per terrain attribute (`wetness.png`, `slope.png`, …), `biome.png`
    /// (the dominant biome's index per sample) and `masks.json` (each PNG's range, the biome
    /// names) into this directory, which is made if missing. +x is to the right, +z downward.
    #[arg(long, value_name = "DIR", requires = "region")]
    masks: Option<PathBuf>,
    /// Write every tree and shrub of the region as CSV: species, biome, x, y, z, scale
    /// (world metres, y up).
    #[arg(long, value_name = "FILE", requires = "region")]
    instances: Option<PathBuf>,
}

/// The legend `masks.json` holds.
#[derive(Serialize)]
struct Legend<'a> {
    /// Samples along x and z.
    width: usize,
    depth: usize,
    /// Metres between samples, and the world position (x, z) of the top-left one.
    spacing_m: f32,
    origin_m: [f32; 2],
    /// Per attribute PNG: the values that 0 and 65535 stand for.
    ranges: Vec<(String, [f32; 2])>,
    /// `biome.png`'s grey value `k` is `biomes[k]`.
    biomes: Vec<&'a str>,
}

impl EcologyOutputs {
    /// The instance table as an output to check before any work (the mask directory is
    /// made when written).
    pub(crate) fn outputs(&self) -> [Output<'_>; 1] {
        [("--instances", self.instances.as_deref(), TABLE)]
    }

    /// Writes what was asked for of `chunks` (a whole rectangle of `world`'s chunks).
    pub(crate) fn write(&self, world: &WorldGen, chunks: &[ChunkPayload]) -> Result<(), String> {
        if let Some(dir) = &self.masks {
            write_masks(dir, world, chunks)?;
        }
        if let Some(path) = &self.instances {
            let rows = instances(world, chunks);
            let mut csv = String::from("species,biome,x,y,z,scale\n");
            for r in &rows {
                let [x, y, z] = r.position;
                let _ = writeln!(
                    csv,
                    "{},{},{x},{y},{z},{}",
                    quoted(&r.species),
                    quoted(&r.biome),
                    r.scale
                );
            }
            output_paths::write(path, csv.as_bytes()).map_err(|e| format!("--instances {}: {e}", path.display()))?;
            println!("instances: {} ({} trees and shrubs)", path.display(), rows.len());
        }
        Ok(())
    }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break.
fn quoted(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn write_masks(dir: &Path, world: &WorldGen, chunks: &[ChunkPayload]) -> Result<(), String> {
    let at = |e: &dyn std::fmt::Display| format!("--masks {}: {e}", dir.display());
    std::fs::create_dir_all(dir).map_err(|e| at(&e))?;
    let m = masks(world, chunks);
    for a in Attribute::ALL {
        let png = m.png(a).map_err(|e| at(&e))?;
        output_paths::write(&dir.join(format!("{}.png", a.name())), &png).map_err(|e| at(&e))?;
    }
    output_paths::write(&dir.join("biome.png"), &m.biome_png().map_err(|e| at(&e))?).map_err(|e| at(&e))?;
    let biomes = world.biomes();
    let legend = Legend {
        width: m.width,
        depth: m.depth,
        spacing_m: m.spacing,
        origin_m: m.origin,
        ranges: Attribute::ALL
            .iter()
            .map(|a| (a.name().to_owned(), <[f32; 2]>::from(a.mask_range())))
            .collect(),
        biomes: (0..biomes.len()).map(|b| biomes.name(b)).collect(),
    };
    let json = serde_json::to_vec_pretty(&legend).map_err(|e| at(&e))?;
    output_paths::write(&dir.join("masks.json"), &json).map_err(|e| at(&e))?;
    println!(
        "masks: {} ({} attributes and the biome map, {} × {} samples {} m apart)",
        dir.display(),
        Attribute::ALL.len(),
        m.width,
        m.depth,
        m.spacing
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn csv_fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(quoted("round crown"), "round crown");
        assert_eq!(quoted("a,b"), "\"a,b\"");
        assert_eq!(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
