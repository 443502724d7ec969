//! Basin-scale landscape evolution: tectonic uplift against stream-power
//! fluvial incision, solved with the implicit O(n) method of Braun & Willett
//! (2013, "FastScape"), the river network it carves, and measures of the
//! drainage of any heightfield. This is the macro half of the two-scale
//! terrain (docs/design/architecture.md, "Two-scale terrain"): one coarse
//! grid per basin domain, whose outlets the caller marks, so nothing outside the domain matters.
//! Pure functions of their inputs, deterministic bit for bit, single-threaded
//! (domains run in parallel with each other).
//!
//! [`solve`] evolves a [`BasinGrid`] under [`BasinParams`] into a [`Basin`];
//! [`Basin::rivers`] gives its channels as [`River`] polylines; [`drainage`]
//! measures any heightfield ([`Drainage`]).
//!
//! # Model
//!
//! Heights h (m) on a grid of nodes Δx metres apart evolve as
//!
//! ```text
//! ∂h/∂t = U·u − K·A^m·S^n + D·∇²h
//! ```
//!
//! with uplift rate U (m/yr) times a per-node multiplier u, drainage area A
//! (m²: the node's own cell Δx² plus every cell upstream), slope S towards
//! the node's receiver, erodibility K (m^(1−2m)/yr, so that K·A^m·S^n is in
//! m/yr), and hillslope diffusivity D (m²/yr). At steady state every channel
//! node has S = (U·u/K)^(1/n) · A^(−m/n) (the tests check it to 0.01 %).
//!
//! Each time step Δt ([`solve`] runs `steps` of them):
//!
//! 1. **Uplift**: h += U·u·Δt on every node that is not fixed. Fixed nodes
//!    (outlets, base level) keep their initial heights throughout.
//! 2. **Routing**: D8 receivers, each node's steepest strictly lower
//!    neighbour by drop over link length (Δx, or √2·Δx on diagonals), ties to
//!    the lowest node index. Where some node is left without a lower
//!    neighbour, the nodes that do not drain to a fixed node are filled by
//!    priority-flood+ε (Barnes, Lehman & Mulla 2014), growing from the
//!    draining nodes around them lowest first by (height, index): a lake
//!    becomes land at its spill height, as if filled with sediment at once,
//!    tilted by one f32 step per cell so that water crosses it to the outlet.
//!    Routing over lakes instead (Cordonnier et al. 2019) would keep them as
//!    water; at basin scale, where lakes are rare and the chunk kernels add
//!    the water, the fill is the simpler and cheaper choice. Only nodes that
//!    do not drain are touched, so once the network has formed a fill is
//!    rare and small (uplift can round a one-step tilt away, or raise a
//!    node above its downstream neighbour where u varies).
//! 3. **Stack and area** (Braun & Willett): donor lists, then a depth-first
//!    walk up from each fixed node in ascending index order, so every node
//!    comes after its receiver; drainage area accumulated down the stack in
//!    reverse, in whole cells (exact in any order).
//! 4. **Incision**, implicit, up the stack so each receiver already has its
//!    new height: for n = 1, h_i ← (h_i + F·h_r) / (1 + F) with
//!    F = K·Δt·A_i^m / Δx_ir; for n ≠ 1, Newton's method on x + F·xⁿ = x₀
//!    (x = h_i − h_r, F = K·Δt·A_i^m / Δx_irⁿ) in f64, at most 12 iterations,
//!    stopping when a step is below 10⁻⁷ of x. A node ends at least one f32
//!    step above its receiver, so rounding never makes a flat.
//! 5. **Diffusion** if D > 0: implicit (backward Euler), split into a row
//!    and a column sweep of tridiagonal solves; stable for any Δt; grid edges
//!    pass no flux, fixed nodes keep their heights. It can make pits, which
//!    the next step's routing fills.
//!
//! The incision is unconditionally stable: Δt is limited by accuracy (how
//! fast knickpoints travel), not stability. After the last step the surface
//! is routed once more, so the returned receivers, stack and area are those
//! of the returned heights (filled where they had to be).
//!
//! # Cost
//!
//! One step without diffusion takes about 17 ns per node on one core of the
//! development machine (a 1024² domain: about 18 ms), most of it building
//! the stack; a step whose receivers did not change reuses the last stack
//! and area. A solve adds a fixed cost: the incision table and, from a white
//! noise start, one fill through every node, O(n log n); about 0.2 s for
//! 1024², which with the default 40 steps takes about 0.9 s in all
//! (`benches/basin.rs`). Memory: about 32 bytes per node (diffusion adds 4,
//! and the heap of a fill through white noise up to 4). [`MAX_NODES`] bounds
//! the grid.
//!
//! # Sources
//!
//! - J. Braun, S. D. Willett (2013): "A very efficient O(n), implicit and
//!   parallel method to solve the stream power equation governing fluvial
//!   incision and landscape evolution". Geomorphology 180–181, 170–179.
//! - R. Barnes, C. Lehman, D. Mulla (2014): "Priority-flood: An optimal
//!   depression-filling and watershed-labeling algorithm for digital elevation
//!   models". Computers & Geosciences 62, 117–127.
//! - J. T. Hack (1957): "Studies of longitudinal stream profiles in Virginia
//!   and Maryland". USGS Professional Paper 294-B ([`Drainage::hack_exponent`]).
//! - G. Cordonnier, J. Braun, M.-P. Cani, B. Benes, É. Galin, A. Peytavie,
//!   É. Guérin (2016): "Large Scale Terrain Generation from Tectonic Uplift
//!   and Fluvial Erosion". Computer Graphics Forum 35(2), 165–175 (uplift
//!   maps as the designer's control: [`BasinGrid::uplift`]).
//! - G. Cordonnier, B. Bovy, J. Braun (2019): "A versatile, linear complexity
//!   algorithm for flow routing in topographies with depressions". Earth
//!   Surface Dynamics 7, 549–562 (lakes kept as water; not used here).

mod diffusion;
mod drainage;
mod flow;
mod rivers;
mod solver;

use serde::{Deserialize, Serialize};
use sylva_runtime::{FieldError, Validate};

pub use drainage::{DEPRESSION_DEPTH, Drainage, depression_depths, drainage};
pub use rivers::River;

/// Most nodes a grid may have (4096²): node indices and cell counts stay
/// exact in u32 and f32, and a solve's buffers stay below a gigabyte.
pub const MAX_NODES: usize = 1 << 24;

/// Largest magnitude of an initial height, metres.
pub const MAX_HEIGHT: f32 = 1e6;

/// Largest per-node uplift multiplier.
pub const MAX_UPLIFT_FACTOR: f32 = 1e3;

/// Most time steps one solve may run.
pub const MAX_STEPS: u32 = 100_000;

/// Parameters of the stream-power model and its time loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BasinParams {
    /// Erodibility K in m^(1−2m)/yr (with A in m², so that K·A^m·S^n is in
    /// m/yr). Default: 3e-5, which with the default uplift and exponents
    /// gives a 4 km square of 16 m nodes, drained over its whole border,
    /// 270–310 m of relief at steady state (the middle of 150–400 m).
    pub erodibility: f32,
    /// Area exponent m, in [0, 2]. Default: 0.45.
    pub area_exponent: f32,
    /// Slope exponent n, in [0.5, 4]; n ≠ 1 is solved by Newton's method per
    /// node (several times slower). Default: 1.
    pub slope_exponent: f32,
    /// Uplift rate U in m/yr, in [0, 0.1], times each node's multiplier.
    /// Default: 5e-4 (0.5 mm/yr, an active mountain belt).
    pub uplift: f32,
    /// Hillslope diffusivity D in m²/yr, in [0, 10]; 0 disables diffusion.
    /// Default: 0 (the chunk scale adds the hillslopes; typical values are
    /// 1e-3 to 1e-2).
    pub diffusion: f32,
    /// Time step Δt in years, in (0, 1e7]. Default: 5e4 (the implicit
    /// scheme's steady state does not depend on Δt; 1e4 gives the same
    /// relief within about 10 %, at five times the steps).
    pub time_step: f32,
    /// Number of time steps, at most [`MAX_STEPS`]; 0 only routes the
    /// initial surface. Default: 40 (2 Myr: the default 4 km square is at
    /// steady state, its mean height changing by under 1 % of the uplift;
    /// see the module docs for the cost).
    pub steps: u32,
}

impl Default for BasinParams {
    fn default() -> Self {
        Self {
            erodibility: 3e-5,
            area_exponent: 0.45,
            slope_exponent: 1.0,
            uplift: 5e-4,
            diffusion: 0.0,
            time_step: 5e4,
            steps: 40,
        }
    }
}

/// `Ok` when `v` is a number in `[lo, hi]`.
fn within(field: &str, v: f32, lo: f32, hi: f32) -> Result<(), FieldError> {
    FieldError::check(v.is_finite() && v >= lo && v <= hi, field, || {
        format!("must be a number in [{lo}, {hi}], got {v}")
    })
}

impl Validate for BasinParams {
    /// Checks every range given on the fields.
    fn validate(&self) -> Result<(), FieldError> {
        within("erodibility", self.erodibility, 0.0, 1.0)?;
        within("area_exponent", self.area_exponent, 0.0, 2.0)?;
        within("slope_exponent", self.slope_exponent, 0.5, 4.0)?;
        within("uplift", self.uplift, 0.0, 0.1)?;
        within("diffusion", self.diffusion, 0.0, 10.0)?;
        FieldError::check(
            self.time_step.is_finite() && self.time_step > 0.0 && self.time_step <= 1e7,
            "time_step",
            || format!("must be a number in (0, 1e7], got {}", self.time_step),
        )?;
        FieldError::check(self.steps <= MAX_STEPS, "steps", || {
            format!("must be at most {MAX_STEPS}, got {}", self.steps)
        })
    }
}

/// The input of [`solve`]: a row-major grid of `width × height` nodes
/// `spacing` metres apart, node `(x, y)` at index `y·width + x`.
#[derive(Clone, Copy, Debug)]
pub struct BasinGrid<'a> {
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Distance between neighbouring nodes, metres, in [1e-3, 1e5].
    pub spacing: f32,
    /// Starting heights, metres, finite and within ±[`MAX_HEIGHT`].
    pub initial: &'a [f32],
    /// Per-node multiplier of the uplift rate, in [0, [`MAX_UPLIFT_FACTOR`]].
    pub uplift: &'a [f32],
    /// Base-level nodes (outlets): their height stays `initial`, and water
    /// leaves the domain there. Grid-edge nodes are not fixed unless marked;
    /// an unmarked edge is a closed side. At least one node must be fixed.
    pub fixed: &'a [bool],
}

/// Why [`solve`] refused its input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BasinError {
    /// A parameter is out of range; the path is below the parameters, e.g. `uplift`.
    #[error("basin.{}: {}", .0.dotted(), .0.message)]
    InvalidParam(#[from] FieldError),
    /// The grid has no nodes or more than [`MAX_NODES`].
    #[error("a grid of {width} × {height} nodes: must have 1 to {MAX_NODES} nodes")]
    Size {
        /// Nodes along x.
        width: usize,
        /// Nodes along y.
        height: usize,
    },
    /// The node spacing is not a number in [1e-3, 1e5] metres.
    #[error("node spacing must be a number in [1e-3, 1e5] metres, got {0}")]
    Spacing(f32),
    /// A per-node slice does not have one value per node.
    #[error("`{field}` has {found} values for {expected} nodes")]
    Length {
        /// `initial`, `uplift` or `fixed`.
        field: &'static str,
        /// width × height.
        expected: usize,
        /// The slice's length.
        found: usize,
    },
    /// A per-node value is not finite or out of its range.
    #[error("`{field}[{index}]` is {value}: {allowed}")]
    Value {
        /// `initial` or `uplift`.
        field: &'static str,
        /// The first bad node.
        index: usize,
        /// Its value.
        value: f32,
        /// What the field allows.
        allowed: &'static str,
    },
    /// No node is fixed, so water could never leave.
    #[error("no fixed node: water has no outlet")]
    NoOutlet,
}

impl BasinGrid<'_> {
    /// Checks sizes, lengths and values.
    fn check(&self) -> Result<(), BasinError> {
        let nodes = self.width.checked_mul(self.height).filter(|&n| n > 0 && n <= MAX_NODES);
        let Some(n) = nodes else {
            return Err(BasinError::Size {
                width: self.width,
                height: self.height,
            });
        };
        if !(self.spacing.is_finite() && (1e-3..=1e5).contains(&self.spacing)) {
            return Err(BasinError::Spacing(self.spacing));
        }
        for (field, found) in [
            ("initial", self.initial.len()),
            ("uplift", self.uplift.len()),
            ("fixed", self.fixed.len()),
        ] {
            if found != n {
                return Err(BasinError::Length {
                    field,
                    expected: n,
                    found,
                });
            }
        }
        let height_ok = |v: f32| v.is_finite() && v.abs() <= MAX_HEIGHT;
        check_values(
            "initial",
            self.initial,
            height_ok,
            "heights must be finite, within ±1e6 m",
        )?;
        let uplift_ok = |v: f32| v.is_finite() && (0.0..=MAX_UPLIFT_FACTOR).contains(&v);
        check_values("uplift", self.uplift, uplift_ok, "multipliers must be in [0, 1e3]")?;
        if self.fixed.contains(&true) {
            Ok(())
        } else {
            Err(BasinError::NoOutlet)
        }
    }
}

/// The first value of `values` that `ok` refuses, as an error.
fn check_values(
    field: &'static str,
    values: &[f32],
    ok: impl Fn(f32) -> bool,
    allowed: &'static str,
) -> Result<(), BasinError> {
    match values.iter().position(|&v| !ok(v)) {
        Some(index) => Err(BasinError::Value {
            field,
            index,
            value: values[index],
            allowed,
        }),
        None => Ok(()),
    }
}

/// A solved basin: heights and the drainage that goes with them. Serde, so
/// a domain can be cached; [`Basin::rivers`] refuses fields that disagree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Basin {
    /// Nodes along x.
    pub width: usize,
    /// Nodes along y.
    pub height: usize,
    /// Distance between neighbouring nodes, metres.
    pub spacing: f32,
    /// Heights after the last step, metres, row-major.
    pub heights: Vec<f32>,
    /// Each node's receiver: its steepest strictly lower neighbour; fixed
    /// nodes, and only they, are their own.
    pub receivers: Vec<u32>,
    /// Drainage area, m²: the node's own cell and every cell upstream.
    pub area: Vec<f32>,
    /// Every node once, each after its receiver: walk it forwards to go
    /// downstream-first (as incision does), backwards to go upstream-first.
    pub stack: Vec<u32>,
}

/// Evolves `grid.initial` for `params.steps` time steps of uplift, stream-power
/// incision and diffusion (see the module docs) and returns the heights with
/// their receivers, stack and drainage area.
///
/// ```
/// use sylva_systems::terrain::basin::{BasinError, BasinGrid, BasinParams, solve};
///
/// // A 2 km square of 16 m nodes, rising uniformly, draining over its border.
/// let (w, h) = (128, 128);
/// let initial: Vec<f32> = (0..w * h).map(|i| ((i * 7919) % 101) as f32 * 0.01).collect();
/// let border: Vec<bool> = (0..w * h)
///     .map(|i| i % w == 0 || i % w == w - 1 || i / w == 0 || i / w == h - 1)
///     .collect();
/// let grid = BasinGrid {
///     width: w,
///     height: h,
///     spacing: 16.0,
///     initial: &initial,
///     uplift: &vec![1.0; w * h],
///     fixed: &border,
/// };
/// let basin = solve(&grid, &BasinParams::default())?;
/// let relief = basin.heights.iter().fold(0.0f32, |a, &b| a.max(b));
/// assert!(relief > 50.0);
/// // Channels draining at least 0.1 km²; the largest comes first and reaches the border.
/// let rivers = basin.rivers(1e5);
/// assert!(border[*rivers[0].nodes.last().unwrap() as usize]);
/// # Ok::<(), BasinError>(())
/// ```
pub fn solve(grid: &BasinGrid, params: &BasinParams) -> Result<Basin, BasinError> {
    params.validate()?;
    grid.check()?;
    let mut solver = solver::Solver::new(grid, params);
    for _ in 0..params.steps {
        solver.step();
    }
    Ok(solver.finish())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sylva_runtime::rng::{hash_words, unit_f32};

    /// Heights in [0, amplitude) from a hash of (seed, node).
    pub(crate) fn noise(w: usize, h: usize, seed: u64, amplitude: f32) -> Vec<f32> {
        (0..w * h)
            .map(|i| unit_f32(hash_words(&[seed, i as u64])) * amplitude)
            .collect()
    }

    /// The grid's edge nodes.
    pub(crate) fn bordered(w: usize, h: usize) -> Vec<bool> {
        (0..w * h)
            .map(|i| i % w == 0 || i % w == w - 1 || i / w == 0 || i / w == h - 1)
            .collect()
    }

    /// A grid over borrowed planes, uplift 1 everywhere.
    fn grid<'a>(
        w: usize,
        h: usize,
        spacing: f32,
        initial: &'a [f32],
        uplift: &'a [f32],
        fixed: &'a [bool],
    ) -> BasinGrid<'a> {
        BasinGrid {
            width: w,
            height: h,
            spacing,
            initial,
            uplift,
            fixed,
        }
    }

    /// A single-file channel of `len` nodes, its outlet at `outlet` (one end),
    /// run to steady state: every node's slope to its receiver is
    /// (U/K)^(1/n)·A^(−m/n) within 0.01 %.
    fn check_steady_state(p: &BasinParams, w: usize, h: usize, outlet: usize) {
        let (len, dx) = (w * h, 100.0f32);
        let mut fixed = vec![false; len];
        fixed[outlet] = true;
        let initial = vec![0.0; len];
        let basin = solve(&grid(w, h, dx, &initial, &vec![1.0; len], &fixed), p).unwrap();
        let (u, k, m, n) = (
            f64::from(p.uplift),
            f64::from(p.erodibility),
            f64::from(p.area_exponent),
            f64::from(p.slope_exponent),
        );
        for i in (0..len).filter(|&i| i != outlet) {
            let r = basin.receivers[i] as usize;
            assert_eq!(
                r.abs_diff(outlet) + 1,
                i.abs_diff(outlet),
                "node {i} drains towards the outlet"
            );
            let area = (len - i.abs_diff(outlet)) as f64 * f64::from(dx * dx);
            assert_eq!(f64::from(basin.area[i]), area);
            let slope = f64::from(basin.heights[i] - basin.heights[r]) / f64::from(dx);
            let expected = (u / k).powf(1.0 / n) * area.powf(-m / n);
            assert!(
                (slope / expected - 1.0).abs() < 1e-4,
                "node {i}: slope {slope}, analytic {expected}"
            );
        }
    }

    fn channel_params(n: f32) -> BasinParams {
        BasinParams {
            erodibility: 1e-4,
            area_exponent: 0.5,
            slope_exponent: n,
            uplift: 1e-3,
            diffusion: 0.0,
            time_step: 1e4,
            steps: 3000,
        }
    }

    /// n = 1 (closed form), along a row draining to its first node.
    #[test]
    fn basin_steady_state_slope_matches_analytic_linear() {
        check_steady_state(&channel_params(1.0), 40, 1, 0);
    }

    /// n = 2 (Newton), along a column draining to its last node.
    #[test]
    fn basin_steady_state_slope_matches_analytic_newton() {
        check_steady_state(&channel_params(2.0), 1, 40, 39);
    }

    /// A noisy domain with an interior outlet, uneven uplift (which dams
    /// valleys, so the fill runs) and diffusion (which makes pits): every
    /// receiver is strictly lower or the node is fixed, following receivers
    /// reaches a fixed node, the stack lists every node after its receiver,
    /// and the fixed nodes' areas sum to the domain's.
    #[test]
    fn basin_routing_drains_everything_to_fixed_nodes() {
        let (w, h) = (72, 56);
        let initial = noise(w, h, 3, 20.0);
        let mut fixed = bordered(w, h);
        fixed[30 * w + 40] = true;
        let uplift: Vec<f32> = (0..w * h).map(|i| 0.5 + (i % w) as f32 / w as f32).collect();
        let p = BasinParams {
            steps: 40,
            diffusion: 5e-3,
            ..BasinParams::default()
        };
        let b = solve(&grid(w, h, 16.0, &initial, &uplift, &fixed), &p).unwrap();
        let mut place = vec![usize::MAX; w * h];
        for (k, &i) in b.stack.iter().enumerate() {
            assert_eq!(place[i as usize], usize::MAX, "node {i} twice on the stack");
            place[i as usize] = k;
        }
        for i in 0..w * h {
            let r = b.receivers[i] as usize;
            assert_eq!(r == i, fixed[i], "node {i}");
            assert!(r == i || b.heights[r] < b.heights[i], "node {i} drains up");
            assert!(r == i || place[r] < place[i], "node {i} before its receiver");
            let mut j = i;
            for _ in 0..w * h {
                j = b.receivers[j] as usize;
            }
            assert!(fixed[j], "node {i} never reaches a fixed node");
        }
        let outlets: f64 = (0..w * h).filter(|&i| fixed[i]).map(|i| f64::from(b.area[i])).sum();
        assert_eq!(outlets, (w * h) as f64 * 256.0);
        assert!(
            fixed
                .iter()
                .zip(&b.heights)
                .zip(&initial)
                .all(|((&f, a), b)| !f || a == b)
        );
    }

    /// Heights of a square that rise from its border by at least 0.5 m per
    /// node inwards, plus noise (on the border too, so no two routes tie), so
    /// that no node starts without a lower neighbour.
    fn pyramid(w: usize, seed: u64) -> Vec<f32> {
        let n = noise(w, w, seed, 0.5);
        (0..w * w)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                x.min(y).min(w - 1 - x).min(w - 1 - y) as f32 + n[i]
            })
            .collect()
    }

    /// The node of `(x, y)` after mirroring x, or after transposing.
    fn mirrored(v: &[f32], w: usize, transpose: bool) -> Vec<f32> {
        (0..v.len())
            .map(|i| {
                let (x, y) = (i % w, i / w);
                if transpose {
                    v[x * w + y]
                } else {
                    v[y * w + (w - 1 - x)]
                }
            })
            .collect()
    }

    /// Solving twice gives the same bits; a mirrored or transposed start gives
    /// the mirrored or transposed heights and areas. (No ties occur on this
    /// start, and it never needs a fill, whose queue order is not symmetric.)
    #[test]
    fn basin_solve_is_deterministic_and_mirror_symmetric() {
        let w = 48;
        let initial = pyramid(w, 11);
        let fixed = bordered(w, w);
        let ones = vec![1.0; w * w];
        let p = BasinParams {
            steps: 80,
            ..BasinParams::default()
        };
        let a = solve(&grid(w, w, 16.0, &initial, &ones, &fixed), &p).unwrap();
        let b = solve(&grid(w, w, 16.0, &initial, &ones, &fixed), &p).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.heights), bits(&b.heights));
        assert_eq!((&a.receivers, &a.stack), (&b.receivers, &b.stack));
        for transpose in [false, true] {
            let m = mirrored(&initial, w, transpose);
            let c = solve(&grid(w, w, 16.0, &m, &ones, &fixed), &p).unwrap();
            assert_eq!(
                bits(&mirrored(&c.heights, w, transpose)),
                bits(&a.heights),
                "transpose {transpose}"
            );
            assert_eq!(bits(&mirrored(&c.area, w, transpose)), bits(&a.area));
        }
    }

    /// A 4 km square of 16 m nodes under the default parameters, drained over
    /// its whole border: a dendritic network (Hack's exponent of natural
    /// rivers), no closed depressions, relief in the range the default
    /// erodibility was chosen for.
    #[test]
    fn basin_uplifted_domain_is_dendritic() {
        let w = 256;
        let initial = noise(w, w, 5, 1.0);
        let fixed = bordered(w, w);
        let b = solve(
            &grid(w, w, 16.0, &initial, &vec![1.0; w * w], &fixed),
            &BasinParams::default(),
        )
        .unwrap();
        let relief = b.heights.iter().fold(0.0f32, |a, &h| a.max(h));
        let d = drainage(&b.heights, w, w, 16.0, 1e4).unwrap();
        assert!((150.0..=400.0).contains(&relief), "relief {relief}");
        assert_eq!(d.closed_depressions, 0);
        let hack = d.hack_exponent.unwrap();
        assert!((0.45..=0.65).contains(&hack), "Hack exponent {hack}");
        assert!(
            d.largest_area > 0.1 * (w * w) as f64 * 256.0,
            "largest basin {}",
            d.largest_area
        );
    }

    /// Every kind of bad input is an error, never a panic.
    #[test]
    fn basin_bad_input_is_refused() {
        let (w, h) = (4, 3);
        let ok_h = vec![0.0f32; 12];
        let ok_u = vec![1.0f32; 12];
        let ok_f = bordered(w, h);
        let p = BasinParams::default();
        assert!(solve(&grid(w, h, 1.0, &ok_h, &ok_u, &ok_f), &p).is_ok());
        let short = vec![0.0f32; 11];
        let err = |g: BasinGrid| solve(&g, &p).unwrap_err();
        assert!(matches!(
            err(grid(w, h, 1.0, &short, &ok_u, &ok_f)),
            BasinError::Length { field: "initial", .. }
        ));
        assert!(matches!(
            err(grid(w, h, 1.0, &ok_h, &short, &ok_f)),
            BasinError::Length { field: "uplift", .. }
        ));
        assert!(matches!(
            err(grid(w, h, 1.0, &ok_h, &ok_u, &ok_f[..5])),
            BasinError::Length { field: "fixed", .. }
        ));
        let mut nan = ok_h.clone();
        nan[4] = f32::NAN;
        assert!(matches!(
            err(grid(w, h, 1.0, &nan, &ok_u, &ok_f)),
            BasinError::Value {
                field: "initial",
                index: 4,
                ..
            }
        ));
        let mut negative = ok_u.clone();
        negative[2] = -1.0;
        assert!(matches!(
            err(grid(w, h, 1.0, &ok_h, &negative, &ok_f)),
            BasinError::Value {
                field: "uplift",
                index: 2,
                ..
            }
        ));
        assert_eq!(err(grid(w, h, 1.0, &ok_h, &ok_u, &[false; 12])), BasinError::NoOutlet);
        assert!(matches!(err(grid(0, h, 1.0, &[], &[], &[])), BasinError::Size { .. }));
        assert!(matches!(
            err(grid(usize::MAX, 2, 1.0, &[], &[], &[])),
            BasinError::Size { .. }
        ));
        assert!(matches!(
            err(grid(w, h, f32::NAN, &ok_h, &ok_u, &ok_f)),
            BasinError::Spacing(_)
        ));
        assert!(matches!(
            err(grid(w, h, 0.0, &ok_h, &ok_u, &ok_f)),
            BasinError::Spacing(_)
        ));
        type Spoil = fn(&mut BasinParams);
        let fields: [(&str, Spoil); 8] = [
            ("erodibility", |p| p.erodibility = -1.0),
            ("area_exponent", |p| p.area_exponent = f32::NAN),
            ("slope_exponent", |p| p.slope_exponent = 0.0),
            ("uplift", |p| p.uplift = f32::INFINITY),
            ("diffusion", |p| p.diffusion = -1e-3),
            ("time_step", |p| p.time_step = 0.0),
            ("steps", |p| p.steps = MAX_STEPS + 1),
            ("time_step", |p| p.time_step = f32::NAN),
        ];
        for (field, spoil) in fields {
            let mut bad = BasinParams::default();
            spoil(&mut bad);
            let e = solve(&grid(w, h, 1.0, &ok_h, &ok_u, &ok_f), &bad).unwrap_err();
            assert!(
                matches!(&e, BasinError::InvalidParam(f) if f.dotted() == field),
                "{field}: {e}"
            );
        }
    }

    /// The parameters read from JSON with defaults for missing fields, and
    /// refuse unknown ones.
    #[test]
    fn basin_params_deserialize_with_defaults() {
        let p: BasinParams = serde_json::from_str(r#"{"uplift": 1e-3}"#).unwrap();
        assert_eq!(
            p,
            BasinParams {
                uplift: 1e-3,
                ..BasinParams::default()
            }
        );
        assert!(serde_json::from_str::<BasinParams>(r#"{"uplfit": 1e-3}"#).is_err());
        assert!(BasinParams::default().validate().is_ok());
    }
}
