//! Deterministic Poisson-disk scattering of trees (and anything else planted) on a plane or on
//! terrain, by slope, height and material rules.
//!
//! [`scatter`] throws darts: candidate `i` is drawn from its own random stream
//! (`rng::stream(seed, Index(i), "placement.candidate")`), checked against the [`Rules`] on the
//! [`Ground`], and kept when no kept point lies within `min_distance` (a grid of the kept points
//! answers that). Candidates are tried in index order until `count` points are kept
//! or `count · attempts_per_point` candidates were tried, so the same seed gives the same points
//! on any thread count. Points are world space, metres, Y up; the ground is sampled at (x, z).
//!
//! [`AppGround`] is what a scene's forest and grass stand on: the app's terrain, or a plane.
//!
//! [`forest`] puts species on the scattered points: a forest of L-system and colonization trees.
//!
//! ```
//! use sylva_systems::placement::{Plane, ScatterParams, scatter};
//!
//! let params = ScatterParams { count: 50, min_distance: 4.0, ..ScatterParams::default() };
//! let points = scatter(&params, &Plane { y: 2.0 }, 11)?;
//! assert_eq!(points.len(), 50);
//! assert!(points.iter().all(|p| p.y == 2.0), "every point stands on the ground");
//! for (i, a) in points.iter().enumerate() {
//!     for b in &points[i + 1..] {
//!         assert!(glam::vec2(a.x - b.x, a.z - b.z).length() >= 4.0);
//!     }
//! }
//! assert_eq!(scatter(&params, &Plane { y: 2.0 }, 11)?, points, "the same seed, the same points");
//! # Ok::<(), sylva_runtime::FieldError>(())
//! ```

pub mod forest;

use glam::{Vec2, Vec3};
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, stream};
use sylva_runtime::{App, FieldError, Validate};

use crate::terrain::{Heightfield, Material, TerrainParams};

/// Most points one scatter may ask for.
pub const MAX_POINTS: u32 = 1_000_000;

/// What the ground is at one (x, z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundSample {
    /// Height (world y), metres.
    pub height: f32,
    /// Slope from horizontal, degrees.
    pub slope: f32,
    /// The top material, `None` on a plain plane or bare ground.
    pub material: Option<Material>,
}

/// Something trees stand on; [`scatter`] samples it on the thread pool.
pub trait Ground: Sync {
    /// The ground at (x, z), or `None` outside it.
    fn sample(&self, x: f32, z: f32) -> Option<GroundSample>;
}

/// A flat, material-less plane at height `y`, unbounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// Height of the plane, metres.
    pub y: f32,
}

impl Ground for Plane {
    fn sample(&self, _x: f32, _z: f32) -> Option<GroundSample> {
        Some(GroundSample {
            height: self.y,
            slope: 0.0,
            material: None,
        })
    }
}

/// Terrain as a heightfield: cell (i, j) covers x in [i·cell, (i+1)·cell) and z likewise; the
/// height is the cell's rock height, the slope comes from central differences of its neighbours.
#[derive(Clone, Copy, Debug)]
pub struct TerrainGround<'a> {
    /// The heights and top materials.
    pub field: &'a Heightfield,
    /// Cell side, metres.
    pub cell_length: f32,
}

impl TerrainGround<'_> {
    fn height(&self, i: usize, j: usize) -> f32 {
        self.field.ground[j * self.field.width + i]
    }
}

impl Ground for TerrainGround<'_> {
    fn sample(&self, x: f32, z: f32) -> Option<GroundSample> {
        let (w, d) = (self.field.width, self.field.depth);
        if w == 0 || d == 0 || x < 0.0 || z < 0.0 {
            return None;
        }
        let (i, j) = ((x / self.cell_length) as usize, (z / self.cell_length) as usize);
        if i >= w || j >= d {
            return None;
        }
        let (i0, i1) = (i.saturating_sub(1), (i + 1).min(w - 1));
        let (j0, j1) = (j.saturating_sub(1), (j + 1).min(d - 1));
        let run = |a: usize, b: usize| ((b - a).max(1) as f32) * self.cell_length;
        let dx = (self.height(i1, j) - self.height(i0, j)) / run(i0, i1);
        let dz = (self.height(i, j1) - self.height(i, j0)) / run(j0, j1);
        Some(GroundSample {
            height: self.height(i, j),
            slope: Vec2::new(dx, dz).length().atan().to_degrees(),
            material: self.field.top[j * w + i],
        })
    }
}

/// What a scene's forest and grass stand on: the app's terrain where it has one, the plane y = 0
/// otherwise.
#[derive(Clone, Debug)]
pub enum AppGround {
    /// The terrain chunks, stitched.
    Terrain {
        /// The heights and top materials.
        field: Heightfield,
        /// Cell side, metres.
        cell_length: f32,
    },
    /// No terrain (or none that stitches into one heightfield).
    Plane(Plane),
}

impl AppGround {
    /// The ground of `app` as it is now: the chunks [`crate::terrain::install`] spawned, with the
    /// cell length of the [`TerrainParams`] it inserted.
    pub fn of(app: &App) -> Self {
        let cell_length = app.world.resources.get::<TerrainParams>().map(|p| p.cell_length);
        let field = cell_length.and_then(|c| Heightfield::from_world(&app.world.entities).map(|f| (f, c)));
        match field {
            Some((field, cell_length)) => AppGround::Terrain { field, cell_length },
            None => AppGround::Plane(Plane { y: 0.0 }),
        }
    }
}

impl Ground for AppGround {
    fn sample(&self, x: f32, z: f32) -> Option<GroundSample> {
        match self {
            AppGround::Terrain { field, cell_length } => TerrainGround {
                field,
                cell_length: *cell_length,
            }
            .sample(x, z),
            AppGround::Plane(plane) => plane.sample(x, z),
        }
    }
}

/// Where points may go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Rules {
    /// Allowed slope, degrees, inclusive. Default (0, 90): any.
    pub slope: (f32, f32),
    /// Allowed ground height, metres, inclusive. Default: any.
    pub height: (f32, f32),
    /// Allowed top materials; empty (default) allows any, including none.
    pub materials: Vec<Material>,
}

impl Default for Rules {
    fn default() -> Self {
        Self {
            slope: (0.0, 90.0),
            height: (f32::MIN, f32::MAX),
            materials: Vec::new(),
        }
    }
}

impl Rules {
    /// Whether a ground sample passes every rule.
    pub fn allows(&self, g: &GroundSample) -> bool {
        (self.slope.0..=self.slope.1).contains(&g.slope)
            && (self.height.0..=self.height.1).contains(&g.height)
            && (self.materials.is_empty() || g.material.is_some_and(|m| self.materials.contains(&m)))
    }
}

/// A scatter: how many points, how far apart, over which area and by which rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScatterParams {
    /// Points wanted. Default 100.
    pub count: u32,
    /// No two points closer than this (in x, z), metres. Default 5.
    pub min_distance: f32,
    /// Lower corner of the area in (x, z), metres. Default (-50, -50).
    pub min: Vec2,
    /// Upper corner of the area in (x, z), metres. Default (50, 50).
    pub max: Vec2,
    /// Candidates tried per wanted point before giving up. Default 30.
    pub attempts_per_point: u32,
    /// The ground rules.
    pub rules: Rules,
}

impl Default for ScatterParams {
    fn default() -> Self {
        Self {
            count: 100,
            min_distance: 5.0,
            min: Vec2::splat(-50.0),
            max: Vec2::splat(50.0),
            attempts_per_point: 30,
            rules: Rules::default(),
        }
    }
}

impl Validate for ScatterParams {
    /// Checks every field.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(self.count <= MAX_POINTS, "count", || {
            format!("is {}, at most {MAX_POINTS} points are allowed", self.count)
        })?;
        FieldError::check(
            self.min_distance.is_finite() && self.min_distance > 0.0,
            "min_distance",
            || format!("is {}, must be a finite number > 0", self.min_distance),
        )?;
        FieldError::check(
            self.min.is_finite() && self.max.is_finite() && self.min.cmplt(self.max).all(),
            "max",
            || {
                format!(
                    "is {}, must be finite and above min ({}) on both axes",
                    self.max, self.min
                )
            },
        )?;
        FieldError::check(self.attempts_per_point > 0, "attempts_per_point", || {
            "is 0, must be at least 1".to_owned()
        })?;
        self.rules.validate().map_err(|e| e.within("rules"))
    }
}

impl Validate for Rules {
    /// Checks that the slope and height ranges are ordered.
    fn validate(&self) -> Result<(), FieldError> {
        let ordered = |(lo, hi): (f32, f32)| !lo.is_nan() && !hi.is_nan() && lo <= hi;
        let (s, h) = (self.slope, self.height);
        FieldError::check(ordered(s), "slope", || format!("is {s:?}, must be an ordered range"))?;
        FieldError::check(ordered(h), "height", || format!("is {h:?}, must be an ordered range"))
    }
}

/// Scatters points on `ground` by `params` (see the module docs); each point stands on the
/// ground (its y is the ground height). Fewer than `count` come back when the area is full or
/// the rules reject most of it. Fails, naming the field, on invalid parameters.
pub fn scatter(params: &ScatterParams, ground: &impl Ground, seed: u64) -> Result<Vec<Vec3>, FieldError> {
    params.validate()?;
    let count = params.count as usize;
    let mut kept: Vec<Vec3> = Vec::new();
    let mut spacing = Spacing::new(params);
    let mut batch = Vec::new();
    let attempts = u64::from(params.count) * u64::from(params.attempts_per_point);
    let mut tried = 0;
    while tried < attempts && kept.len() < count {
        let next = (tried + CANDIDATE_BATCH).min(attempts);
        (0..(next - tried) as usize)
            .into_par_iter()
            .map(|j| candidate(params, ground, seed, tried + j as u64))
            .collect_into_vec(&mut batch);
        tried = next;
        for &(p, height) in batch.iter().flatten() {
            if kept.len() >= count {
                break;
            }
            if spacing.admit(p) {
                kept.push(Vec3::new(p.x, height, p.y));
            }
        }
    }
    Ok(kept)
}

/// Candidates drawn and sampled at once on the pool, then admitted in index order: drawing
/// and sampling was half of scattering meadow's grass roots, and needs nothing kept.
const CANDIDATE_BATCH: u64 = 4096;

/// Candidate `i` of a scatter in (x, z) and the ground's height there, where the ground is and
/// the rules allow it.
fn candidate(params: &ScatterParams, ground: &impl Ground, seed: u64, i: u64) -> Option<(Vec2, f32)> {
    let mut rng = stream(seed, StreamKey::Index(i), "placement.candidate");
    let p = params.min + (params.max - params.min) * Vec2::new(rng.random::<f32>(), rng.random::<f32>());
    let g = ground.sample(p.x, p.y)?;
    params.rules.allows(&g).then_some((p, g.height))
}

/// The points a scatter kept, on a grid of cells at least `min_distance` wide (and no more than
/// about four cells per point asked for), so that any kept point within `min_distance` of a
/// candidate lies in the candidate's cell or one of the eight around it. Each cell lists its
/// points, newest first, through `next`. (A kiddo k-d tree did this once, for the same points:
/// in a profile of building meadow's 120,000 grass roots, its queries and inserts took about
/// three times the samples the grid takes.)
struct Spacing {
    min: Vec2,
    /// Cells per metre along each axis.
    per_metre: f32,
    columns: usize,
    rows: usize,
    /// Squared `min_distance`: a candidate at most this far (squared) from a kept point is
    /// crowded out.
    r2: f32,
    /// Per cell, its newest point, or [`Spacing::NONE`].
    head: Vec<u32>,
    /// Per point, the one kept before it in the same cell, or [`Spacing::NONE`].
    next: Vec<u32>,
    points: Vec<Vec2>,
}

impl Spacing {
    const NONE: u32 = u32::MAX;
    /// Most cells along an axis.
    const MAX_CELLS: usize = 2048;

    fn new(params: &ScatterParams) -> Self {
        let size = params.max - params.min;
        // Cells a little wider than the distance: a rounded cell index then never puts a
        // point within it two cells away. No smaller than a share of the area by point, and
        // at most `MAX_CELLS` along an axis, so the grid stays within about four cells per
        // point asked for, and a few mebibytes, whatever the distance and the area.
        let by_count = (size.x * size.y / (4.0 * params.count.max(1) as f32)).sqrt();
        let by_axis = size.max_element() / Self::MAX_CELLS as f32;
        let cell = (params.min_distance * 1.001).max(by_count).max(by_axis);
        let per_metre = 1.0 / cell;
        let cells = |extent: f32| ((extent * per_metre).ceil() as usize).clamp(1, Self::MAX_CELLS);
        let (columns, rows) = (cells(size.x), cells(size.y));
        Spacing {
            min: params.min,
            per_metre,
            columns,
            rows,
            r2: params.min_distance * params.min_distance,
            head: vec![Self::NONE; columns * rows],
            next: Vec::new(),
            points: Vec::new(),
        }
    }

    /// The cell of `p` along each axis, edges included.
    fn cell(&self, p: Vec2) -> [usize; 2] {
        let at = ((p - self.min) * self.per_metre).max(Vec2::ZERO);
        [
            (at.x as usize).min(self.columns - 1),
            (at.y as usize).min(self.rows - 1),
        ]
    }

    /// Keeps `p` unless a kept point lies within the distance (squared distance at most `r2`,
    /// summed x then z); returns whether it did.
    fn admit(&mut self, p: Vec2) -> bool {
        let [cx, cz] = self.cell(p);
        for z in cz.saturating_sub(1)..=(cz + 1).min(self.rows - 1) {
            for x in cx.saturating_sub(1)..=(cx + 1).min(self.columns - 1) {
                let mut k = self.head[z * self.columns + x];
                while k != Self::NONE {
                    let d = p - self.points[k as usize];
                    if d.x * d.x + d.y * d.y <= self.r2 {
                        return false;
                    }
                    k = self.next[k as usize];
                }
            }
        }
        let at = cz * self.columns + cx;
        self.next.push(self.head[at]);
        self.head[at] = self.points.len() as u32;
        self.points.push(p);
        true
    }
}
