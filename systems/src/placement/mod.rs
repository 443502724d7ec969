//! Deterministic Poisson-disk scattering of trees (and anything else planted) on a plane or on
//! terrain, by slope, height and material rules.
//!
//! [`scatter`] throws darts: candidate `i` is drawn from its own random stream
//! (`rng::stream(seed, Index(i), "placement.candidate")`), checked against the [`Rules`] on the
//! [`Ground`], and kept when no kept point lies within `min_distance` (a kiddo k-d tree over the
//! kept points answers that). Candidates are tried in index order until `count` points are kept
//! or `count · attempts_per_point` candidates were tried, so the same seed gives the same points
//! on any thread count. Points are world space, metres, Y up; the ground is sampled at (x, z).
//!
//! [`AppGround`] is what a scene's forest and grass stand on: the app's terrain, or a plane.
//!
//! [`forest`] puts species on the scattered points: a forest of L-system and colonization trees.

pub mod forest;

use glam::{Vec2, Vec3};
use kiddo::{MutableKdTree, SquaredEuclidean};
use rand::RngExt;
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

/// Something trees stand on.
pub trait Ground {
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
    let mut kept: Vec<Vec3> = Vec::new();
    let mut index: MutableKdTree<f32, 2> = MutableKdTree::default();
    let r2 = params.min_distance * params.min_distance;
    let size = params.max - params.min;
    let attempts = u64::from(params.count) * u64::from(params.attempts_per_point);
    for i in 0..attempts {
        if kept.len() >= params.count as usize {
            break;
        }
        let mut rng = stream(seed, StreamKey::Index(i), "placement.candidate");
        let p = params.min + size * Vec2::new(rng.random::<f32>(), rng.random::<f32>());
        let Some(g) = ground.sample(p.x, p.y) else {
            continue;
        };
        if !params.rules.allows(&g) {
            continue;
        }
        let mut crowded = false;
        index
            .query(&p.to_array())
            .within::<SquaredEuclidean<f32>>(r2)
            .unsorted()
            .visit(|_| crowded = true);
        if crowded {
            continue;
        }
        index
            .add(&p.to_array(), kept.len() as u32)
            .map_err(|e| FieldError::new("count", format!("the spatial index refused a point: {e}")))?;
        kept.push(Vec3::new(p.x, g.height, p.y));
    }
    Ok(kept)
}
