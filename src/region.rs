//! `sylva terrain`'s pictures, and `sylva terrain --region`: a rectangle of a
//! world's chunks generated chunk by chunk, stitched, measured and drawn.

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use sylva::systems::terrain::basin::Drainage;
use sylva::systems::terrain::{Heightfield, PngKind, write_png};
use sylva::systems::world::{RegionReport, WorldGen, stitch};

use crate::outputs::{self, Output, PNG};
use crate::{Common, count, load};

/// The PNGs `sylva terrain` writes.
#[derive(Debug, Default)]
pub(crate) struct Pictures {
    /// 16-bit grey ground heights.
    pub heightmap: Option<PathBuf>,
    /// Top material per cell.
    pub material_map: Option<PathBuf>,
    /// Topographic colours.
    pub false_colour: Option<PathBuf>,
}

impl Pictures {
    /// The pictures as outputs to check before any work.
    pub fn outputs(&self) -> [Output<'_>; 3] {
        [
            ("--heightmap", self.heightmap.as_deref(), PNG),
            ("--material-map", self.material_map.as_deref(), PNG),
            ("--false-colour", self.false_colour.as_deref(), PNG),
        ]
    }

    /// Whether any picture is asked for.
    pub fn any(&self) -> bool {
        self.heightmap.is_some() || self.material_map.is_some() || self.false_colour.is_some()
    }

    /// Writes every asked-for picture of `field`; white in the heightmap is its highest ground.
    pub fn write(&self, field: &Heightfield) -> Result<(), String> {
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

/// Parses `x0,z0,x1,z1`.
pub(crate) fn parse_region(s: &str) -> Result<[i32; 4], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let numbers: Result<Vec<i32>, _> = parts.iter().map(|p| p.parse::<i32>()).collect();
    match numbers {
        Ok(v) if v.len() == 4 && v[0] <= v[2] && v[1] <= v[3] => Ok([v[0], v[1], v[2], v[3]]),
        Ok(v) if v.len() == 4 => Err(format!("the last chunk ({}, {}) lies before the first", v[2], v[3])),
        _ => Err(format!("expected four chunk coordinates X0,Z0,X1,Z1, got `{s}`")),
    }
}

/// The report `terrain --region` writes.
#[derive(Serialize)]
struct Report<'a> {
    scene: &'a str,
    seed: u64,
    threads: usize,
    wall_ms: f64,
    terrain: &'a RegionReport,
}

/// Runs `sylva terrain SCENE --region X0,Z0,X1,Z1`.
pub(crate) fn terrain_region(path: &Path, r: [i32; 4], pictures: &Pictures, common: &Common) -> Result<(), String> {
    outputs::check_all(common, &pictures.outputs())?;
    let scene = load(path, common)?;
    let Some(params) = scene.world.clone() else {
        return Err(format!(
            "{}: --region needs a scene with a `world` section",
            path.display()
        ));
    };
    let t0 = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(common.threads.map_or(0, usize::from))
        .build()
        .map_err(|e| e.to_string())?;
    let world = WorldGen::new(params, scene.seed);
    let chunks = (i64::from(r[2]) - i64::from(r[0]) + 1) * (i64::from(r[3]) - i64::from(r[1]) + 1);
    let bar = count_bar(chunks as u64, &scene.name, "chunks");
    let stitched = pool
        .install(|| stitch(&world, [r[0], r[1]], [r[2], r[3]], || bar.inc(1)))
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let wall = t0.elapsed();
    let t = &stitched.report;
    println!(
        "{}: chunks ({}, {}) to ({}, {}), {}, {} × {} cells of {} m in {:.2} s on {}",
        scene.name,
        r[0],
        r[1],
        r[2],
        r[3],
        count(t.chunks as u64, "chunk"),
        stitched.field.width,
        stitched.field.depth,
        t.cell_size,
        wall.as_secs_f64(),
        count(pool.current_num_threads() as u64, "thread")
    );
    if let Some(d) = &t.drainage {
        print_drainage(d);
    }
    println!(
        "  rivers across chunk borders: {} matched, {} mismatched; deepest closed depression on a river {:.3} m",
        t.border_crossings, t.border_mismatches, t.river_depression_max
    );
    pictures.write(&stitched.field)?;
    if let Some(out) = &common.report {
        let report = Report {
            scene: &scene.name,
            seed: scene.seed,
            threads: pool.current_num_threads(),
            wall_ms: wall.as_secs_f64() * 1e3,
            terrain: t,
        };
        write_json(out, &report)?;
    }
    Ok(())
}

/// Writes `value` as pretty JSON to `path`, atomically.
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<(), String> {
    let json = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    sylva::runtime::framed::write_atomic(path, &json).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("report: {}", path.display());
    Ok(())
}

/// Prints the drainage measures on one line.
pub(crate) fn print_drainage(d: &Drainage) {
    let hack = d.hack_exponent.map_or("-".to_owned(), |h| format!("{h:.3}"));
    println!(
        "  drainage: largest area {:.4} km², {} outlets, {} closed depressions deeper than 1 m, Hack exponent {hack}, density {:.3} /km",
        d.largest_area / 1e6,
        d.outlets,
        d.closed_depressions,
        // + 0.0 prints a density of −0 as 0.
        d.drainage_density * 1e3 + 0.0
    );
}

/// A bar over `len` things called `unit` (hidden when stdout is not a terminal).
pub(crate) fn count_bar(len: u64, scene: &str, unit: &str) -> ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stdout());
    let template = format!("{{prefix}} [{{bar:40}}] {{pos}}/{{len}} {unit}, {{per_sec}}, eta {{eta}}");
    bar.set_style(
        ProgressStyle::with_template(&template)
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar.set_prefix(scene.to_owned());
    bar
}
