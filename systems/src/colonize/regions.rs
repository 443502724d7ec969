//! Attractor regions and their seeded sampling, plus point files.
//!
//! Regions are Z up in plant units. The union of all regions is sampled: a point is drawn in a
//! region picked with probability proportional to its measure (volume, or area for surface
//! sampling) and kept only if no earlier region (for surface sampling: no other region) contains
//! it, so overlaps are not sampled twice. Points inside an exclusion shape are redrawn. Every
//! point has its own random stream (`rng::stream(seed, Index(i), "colonize.attractors")`), so the
//! cloud does not depend on thread count or on how many other points were redrawn.

use std::f32::consts::{PI, TAU};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use glam::Vec3;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, Xoshiro256PlusPlus, stream};
use sylva_runtime::{FieldError, Validate};

use super::ColonizeError;
use super::limits::{MAX_ATTRACTORS, MAX_COORDINATE, within_bounds};

/// Redraws allowed per point before the regions count as (nearly) fully excluded.
const MAX_ATTEMPTS: u32 = 10_000;

/// A region shape.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// A ball.
    Sphere {
        /// Centre.
        centre: Vec3,
        /// Radius.
        radius: f32,
    },
    /// An upright cylinder standing on `base` (z from base to base + height), as in the thesis.
    Cylinder {
        /// Centre of the bottom disc.
        base: Vec3,
        /// Radius.
        radius: f32,
        /// Height.
        height: f32,
    },
    /// An axis-aligned box.
    Box {
        /// Lower corner.
        min: Vec3,
        /// Upper corner.
        max: Vec3,
    },
    /// An upright cone standing on its base disc, apex at base + height·Z.
    Cone {
        /// Centre of the base disc.
        base: Vec3,
        /// Base radius.
        radius: f32,
        /// Height.
        height: f32,
    },
}

/// How points are spread over a region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sampling {
    /// Uniform in volume.
    #[default]
    Uniform,
    /// The thesis code's sampling: radial distance uniform, so density peaks at the centre (sphere,
    /// cone) or the axis (cylinder); boxes scale a surface point toward the centre.
    CentreWeighted,
    /// Uniform on the surface only.
    Surface,
}

/// One attractor region.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    /// The shape.
    pub shape: Shape,
    /// The point distribution. Default uniform.
    #[serde(default)]
    pub sampling: Sampling,
}

impl Default for Region {
    /// The thesis code's default sphere region (r = 150) above the root.
    fn default() -> Self {
        Self {
            shape: Shape::Sphere {
                centre: Vec3::new(0.0, 0.0, 300.0),
                radius: 150.0,
            },
            sampling: Sampling::Uniform,
        }
    }
}

fn unit(rng: &mut Xoshiro256PlusPlus) -> f32 {
    rng.random::<f32>()
}

fn unit_vector(rng: &mut Xoshiro256PlusPlus) -> Vec3 {
    let z = 2.0 * unit(rng) - 1.0;
    let phi = TAU * unit(rng);
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vec3::new(s * phi.cos(), s * phi.sin(), z)
}

fn disc(rng: &mut Xoshiro256PlusPlus, radius: f32) -> Vec3 {
    let r = radius * unit(rng).sqrt();
    let phi = TAU * unit(rng);
    Vec3::new(r * phi.cos(), r * phi.sin(), 0.0)
}

impl Validate for Shape {
    /// Checks the dimensions: finite, and within [`MAX_COORDINATE`] (a corner or centre on every
    /// axis, a radius or height), so sampled points and the grid over them stay well inside f32.
    fn validate(&self) -> Result<(), FieldError> {
        let point = |name: &str, v: Vec3| {
            FieldError::check(within_bounds(v), name, || {
                format!("is {v}, must be finite and within ±{MAX_COORDINATE} on every axis")
            })
        };
        let positive = |name: &str, v: f32| {
            FieldError::check(v.is_finite() && v > 0.0 && v <= MAX_COORDINATE, name, || {
                format!("is {v}, must be a number > 0 and at most {MAX_COORDINATE}")
            })
        };
        match *self {
            Shape::Sphere { centre, radius } => {
                point("centre", centre)?;
                positive("radius", radius)
            }
            Shape::Cylinder { base, radius, height } | Shape::Cone { base, radius, height } => {
                point("base", base)?;
                positive("radius", radius)?;
                positive("height", height)
            }
            Shape::Box { min, max } => {
                point("min", min)?;
                point("max", max)?;
                FieldError::check(min.cmplt(max).all(), "max", || {
                    format!("is {max}, must be above min {min} on every axis")
                })
            }
        }
    }
}

impl Shape {
    /// Whether `p` lies inside or on the shape, with a tolerance of `eps` (plant units).
    pub fn contains(&self, p: Vec3, eps: f32) -> bool {
        match *self {
            Shape::Sphere { centre, radius } => p.distance(centre) <= radius + eps,
            Shape::Cylinder { base, radius, height } => {
                let d = p - base;
                d.z >= -eps && d.z <= height + eps && d.truncate().length() <= radius + eps
            }
            Shape::Box { min, max } => (p + eps).cmpge(min).all() && (p - eps).cmple(max).all(),
            Shape::Cone { base, radius, height } => {
                let d = p - base;
                d.z >= -eps
                    && d.z <= height + eps
                    && d.truncate().length() <= radius * (1.0 - d.z / height).max(0.0) + eps
            }
        }
    }

    /// The point sampling aims at first, and how far from it the shape reaches (the thesis's
    /// "max distance from centre", used to place the trunk).
    pub fn centre_and_reach(&self) -> (Vec3, f32) {
        match *self {
            Shape::Sphere { centre, radius } => (centre, radius),
            Shape::Cylinder { base, radius, height } => (base, height.hypot(radius)),
            Shape::Box { min, max } => ((min + max) * 0.5, (max - min).length() * 0.5),
            Shape::Cone { base, radius, height } => (base, height.max(radius)),
        }
    }

    fn measure(&self, sampling: Sampling) -> f64 {
        let (r, h) = match *self {
            Shape::Sphere { radius, .. } => (f64::from(radius), 0.0),
            Shape::Cylinder { radius, height, .. } | Shape::Cone { radius, height, .. } => {
                (f64::from(radius), f64::from(height))
            }
            Shape::Box { min, max } => {
                let s = (max - min).as_dvec3();
                return match sampling {
                    Sampling::Surface => 2.0 * (s.x * s.y + s.y * s.z + s.z * s.x),
                    _ => s.x * s.y * s.z,
                };
            }
        };
        let pi = std::f64::consts::PI;
        match (self, sampling) {
            (Shape::Sphere { .. }, Sampling::Surface) => 4.0 * pi * r * r,
            (Shape::Sphere { .. }, _) => 4.0 / 3.0 * pi * r * r * r,
            (Shape::Cylinder { .. }, Sampling::Surface) => 2.0 * pi * r * (r + h),
            (Shape::Cylinder { .. }, _) => pi * r * r * h,
            (_, Sampling::Surface) => pi * r * (r + r.hypot(h)),
            _ => pi * r * r * h / 3.0,
        }
    }

    fn sample(&self, sampling: Sampling, rng: &mut Xoshiro256PlusPlus) -> Vec3 {
        match (*self, sampling) {
            (Shape::Sphere { centre, radius }, Sampling::Uniform) => {
                centre + unit_vector(rng) * radius * unit(rng).cbrt()
            }
            (Shape::Sphere { centre, radius }, Sampling::CentreWeighted) => {
                centre + unit_vector(rng) * radius * unit(rng)
            }
            (Shape::Sphere { centre, radius }, Sampling::Surface) => centre + unit_vector(rng) * radius,
            (Shape::Cylinder { base, radius, height }, Sampling::Uniform) => {
                base + disc(rng, radius) + Vec3::Z * height * unit(rng)
            }
            (Shape::Cylinder { base, radius, height }, Sampling::CentreWeighted) => {
                let phi = TAU * unit(rng);
                let r = radius * unit(rng);
                base + Vec3::new(r * phi.cos(), r * phi.sin(), height * unit(rng))
            }
            (Shape::Cylinder { base, radius, height }, Sampling::Surface) => {
                let side = 2.0 * PI * radius * height;
                let cap = PI * radius * radius;
                let pick = unit(rng) * (side + 2.0 * cap);
                if pick < side {
                    let phi = TAU * unit(rng);
                    base + Vec3::new(radius * phi.cos(), radius * phi.sin(), height * unit(rng))
                } else {
                    let z = if pick < side + cap { 0.0 } else { height };
                    base + disc(rng, radius) + Vec3::Z * z
                }
            }
            (Shape::Box { min, max }, Sampling::Uniform) => {
                min + (max - min) * Vec3::new(unit(rng), unit(rng), unit(rng))
            }
            (Shape::Box { min, max }, Sampling::CentreWeighted) => {
                let centre = (min + max) * 0.5;
                let on_surface = Shape::Box { min, max }.sample(Sampling::Surface, rng);
                centre + (on_surface - centre) * unit(rng)
            }
            (Shape::Box { min, max }, Sampling::Surface) => {
                let s = max - min;
                let areas = [s.y * s.z, s.z * s.x, s.x * s.y];
                let mut pick = unit(rng) * 2.0 * (areas[0] + areas[1] + areas[2]);
                let mut p = Vec3::new(unit(rng), unit(rng), unit(rng));
                for (axis, area) in areas.iter().enumerate() {
                    if pick < 2.0 * area || axis == 2 {
                        p[axis] = if pick < *area { 0.0 } else { 1.0 };
                        break;
                    }
                    pick -= 2.0 * area;
                }
                min + s * p
            }
            (Shape::Cone { base, radius, height }, Sampling::Uniform) => {
                let t = 1.0 - unit(rng).cbrt();
                base + disc(rng, radius * (1.0 - t)) + Vec3::Z * height * t
            }
            (Shape::Cone { base, radius, height }, Sampling::CentreWeighted) => {
                let t = unit(rng);
                let phi = TAU * unit(rng);
                let r = radius * (1.0 - t) * unit(rng);
                base + Vec3::new(r * phi.cos(), r * phi.sin(), height * t)
            }
            (Shape::Cone { base, radius, height }, Sampling::Surface) => {
                let lateral = PI * radius * radius.hypot(height);
                let bottom = PI * radius * radius;
                if unit(rng) * (lateral + bottom) < lateral {
                    let t = 1.0 - unit(rng).sqrt();
                    let phi = TAU * unit(rng);
                    let r = radius * (1.0 - t);
                    base + Vec3::new(r * phi.cos(), r * phi.sin(), height * t)
                } else {
                    base + disc(rng, radius)
                }
            }
        }
    }
}

/// Samples `count` attractors over the union of `regions`, avoiding `exclusions` (see the
/// module docs). Fails when there is no region or a shape is invalid, or when the exclusions
/// cover (nearly) everything.
pub fn sample_regions(
    regions: &[Region],
    exclusions: &[Shape],
    count: u32,
    seed: u64,
) -> Result<Vec<Vec3>, ColonizeError> {
    if regions.is_empty() {
        return Err(FieldError::new("regions", "is empty").into());
    }
    validate_shapes(regions, exclusions)?;
    let mut cumulative = Vec::with_capacity(regions.len());
    let mut total = 0.0f64;
    for r in regions {
        total += r.shape.measure(r.sampling);
        cumulative.push(total);
    }
    let mut points = Vec::with_capacity(count as usize);
    for i in 0..count {
        let mut rng = stream(seed, StreamKey::Index(u64::from(i)), "colonize.attractors");
        let mut attempt = 0;
        let p = loop {
            if attempt == MAX_ATTEMPTS {
                let message = format!("leave no room: attractor {i} was redrawn {MAX_ATTEMPTS} times");
                return Err(FieldError::new("exclusions", message).into());
            }
            attempt += 1;
            let pick = rng.random::<f64>() * total;
            let k = cumulative.iter().position(|&c| pick < c).unwrap_or(regions.len() - 1);
            let region = regions[k];
            let p = region.shape.sample(region.sampling, &mut rng);
            let claimed = match region.sampling {
                Sampling::Surface => regions
                    .iter()
                    .enumerate()
                    .any(|(j, r)| j != k && r.shape.contains(p, -1e-4 * scale(&r.shape))),
                _ => regions[..k].iter().any(|r| r.shape.contains(p, 0.0)),
            };
            if !claimed && !exclusions.iter().any(|e| e.contains(p, 0.0)) {
                break p;
            }
        };
        points.push(p);
    }
    Ok(points)
}

/// Checks every region's and exclusion's shape; the path names the list entry.
pub(crate) fn validate_shapes(regions: &[Region], exclusions: &[Shape]) -> Result<(), FieldError> {
    for (i, r) in regions.iter().enumerate() {
        r.shape
            .validate()
            .map_err(|e| e.within("shape").within(format!("regions[{i}]")))?;
    }
    for (i, s) in exclusions.iter().enumerate() {
        s.validate().map_err(|e| e.within(format!("exclusions[{i}]")))?;
    }
    Ok(())
}

/// A length typical of the shape, for relative tolerances.
fn scale(shape: &Shape) -> f32 {
    shape.centre_and_reach().1
}

/// Longest line a point file may have, bytes: three numbers with room for comments, so one
/// line without a newline (a binary file, say) cannot fill memory before it is rejected.
pub const MAX_POINT_LINE: usize = 1024;

/// Parses point file text: one `x y z` per line (whitespace separated); blank lines and lines
/// starting with `#` are skipped. `file` names the text in errors, which carry the 1-based line.
/// More than `limit` points, a line longer than [`MAX_POINT_LINE`], or a coordinate that is not
/// finite or beyond [`MAX_COORDINATE`] is an error at its line.
pub fn parse_points(text: &str, file: &str, limit: usize) -> Result<Vec<Vec3>, ColonizeError> {
    let mut points = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(p) = parse_point_line(line.as_bytes(), &points, limit).map_err(|m| point_error(file, n, m))? {
            points.push(p);
        }
    }
    Ok(points)
}

/// Reads and parses a point file (see [`parse_points`]) line by line, so that neither an
/// oversized file nor an endless line is read past the first line that breaks a limit.
pub fn load_points(path: &Path, limit: usize) -> Result<Vec<Vec3>, ColonizeError> {
    let file = path.display().to_string();
    let io = |e: std::io::Error| ColonizeError::Io {
        path: file.clone(),
        message: e.to_string(),
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut points = Vec::new();
    let mut line = Vec::new();
    for n in 0.. {
        line.clear();
        // One byte past the longest line tells an overlong line from one that fits.
        let read = (&mut reader)
            .take(MAX_POINT_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if read == 0 {
            break;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if let Some(p) = parse_point_line(text, &points, limit).map_err(|m| point_error(&file, n, m))? {
            points.push(p);
        }
    }
    Ok(points)
}

fn point_error(file: &str, index: usize, message: PointLineError) -> ColonizeError {
    ColonizeError::PointFile {
        file: file.to_owned(),
        line: index + 1,
        message,
    }
}

/// What is wrong with one line of a point file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PointLineError {
    /// The line is longer than any line of three numbers needs.
    #[error("line longer than {MAX_POINT_LINE} bytes")]
    TooLong,
    /// The line is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotUtf8,
    /// The file holds more points than its part of the attractor limit.
    #[error("more than {limit} points (at most {MAX_ATTRACTORS} attractors in all, sampled ones included)")]
    TooMany {
        /// The points this file may hold.
        limit: usize,
    },
    /// Fewer than three numbers.
    #[error("expected 3 numbers, found {0}")]
    Missing(usize),
    /// More than three numbers.
    #[error("expected 3 numbers, found more (`{0}`)")]
    Extra(String),
    /// A field that is not a number.
    #[error("`{field}`: {error}")]
    NotANumber {
        /// The field as written.
        field: String,
        /// Why it does not parse.
        error: std::num::ParseFloatError,
    },
    /// A coordinate beyond the bound every attractor keeps.
    #[error("`{0}` must be finite and within ±{MAX_COORDINATE}")]
    OutOfRange(String),
}

/// One line of a point file, `points` being those read before it: its point, `None` for a
/// blank or comment line, or what is wrong with it.
fn parse_point_line(line: &[u8], points: &[Vec3], limit: usize) -> Result<Option<Vec3>, PointLineError> {
    if line.len() > MAX_POINT_LINE {
        return Err(PointLineError::TooLong);
    }
    let line = std::str::from_utf8(line).map_err(|_| PointLineError::NotUtf8)?.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    if points.len() >= limit {
        return Err(PointLineError::TooMany { limit });
    }
    let mut values = [0.0f32; 3];
    let mut fields = line.split_whitespace();
    for (k, v) in values.iter_mut().enumerate() {
        let field = fields.next().ok_or(PointLineError::Missing(k))?;
        *v = field.parse::<f32>().map_err(|error| PointLineError::NotANumber {
            field: field.to_owned(),
            error,
        })?;
        if !(v.is_finite() && v.abs() <= MAX_COORDINATE) {
            return Err(PointLineError::OutOfRange(field.to_owned()));
        }
    }
    if let Some(extra) = fields.next() {
        return Err(PointLineError::Extra(extra.to_owned()));
    }
    Ok(Some(Vec3::from_array(values)))
}
