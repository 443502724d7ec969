//! The time loop of [`solve`](super::solve): uplift, routing, implicit
//! stream-power incision and diffusion, on buffers allocated once per solve.

use super::diffusion::Diffusion;
use super::flow::{Fill, Filler, Flow, NO_LINK, Shape, is_diagonal};
use super::{Basin, BasinGrid, BasinParams};

/// Most Newton iterations per node and step when n ≠ 1.
const NEWTON_ITERATIONS: u32 = 12;

/// Newton stops once a step is below this fraction of the height above the
/// receiver: well below f32 resolution, so more iterations change no bit of
/// the stored height.
const NEWTON_TOLERANCE: f64 = 1e-7;

/// One basin's state between time steps.
pub(crate) struct Solver<'g> {
    shape: Shape,
    spacing: f32,
    fixed: &'g [bool],
    heights: Vec<f32>,
    /// Uplift per step per node: U·u·Δt, and −0.0 on fixed nodes, the one
    /// addend that leaves every height (−0.0 included) bit for bit as it is.
    rise: Vec<f32>,
    incision: Incision,
    flow: Flow,
    filler: Filler,
    /// The nodes that drain to a fixed node, where a fill is needed.
    drained: Vec<bool>,
    diffusion: Option<Diffusion>,
}

/// The incision factor's parts: K·Δt·A^m per drainage area in cells (a
/// table, so a step takes no powers for n = 1), the slope exponent, and the
/// link term 1/Δx^n per direction code.
struct Incision {
    per_cells: Vec<f32>,
    slope_exponent: f64,
    per_link: [f64; 9],
}

impl Incision {
    fn new(p: &BasinParams, spacing: f32, nodes: usize) -> Self {
        let k_dt = f64::from(p.erodibility) * f64::from(p.time_step);
        let cell = f64::from(spacing) * f64::from(spacing);
        let m = f64::from(p.area_exponent);
        let per_cells = (0..=nodes).map(|c| (k_dt * (c as f64 * cell).powf(m)) as f32).collect();
        let n = f64::from(p.slope_exponent);
        let dx = f64::from(spacing);
        let (straight, diagonal) = (dx.powf(-n), (dx * std::f64::consts::SQRT_2).powf(-n));
        let mut per_link = [0.0; 9];
        for (k, p) in (0u8..).zip(&mut per_link[..8]) {
            *p = if is_diagonal(k) { diagonal } else { straight };
        }
        Self {
            per_cells,
            slope_exponent: n,
            per_link,
        }
    }
}

impl<'g> Solver<'g> {
    /// A solver on a checked grid.
    pub(crate) fn new(grid: &BasinGrid<'g>, p: &BasinParams) -> Self {
        let shape = Shape {
            width: grid.width,
            height: grid.height,
        };
        let n = shape.len();
        let u_dt = p.uplift * p.time_step;
        let rise = grid
            .uplift
            .iter()
            .zip(grid.fixed)
            .map(|(&u, &f)| if f { -0.0 } else { u_dt * u })
            .collect();
        Self {
            shape,
            spacing: grid.spacing,
            fixed: grid.fixed,
            heights: grid.initial.to_vec(),
            rise,
            incision: Incision::new(p, grid.spacing, n),
            flow: Flow::new(shape),
            filler: Filler::default(),
            drained: vec![false; n],
            diffusion: (p.diffusion > 0.0).then(|| Diffusion::new(p.diffusion, p.time_step, grid.spacing, n)),
        }
    }

    /// One time step: uplift, routing, incision, diffusion.
    pub(crate) fn step(&mut self) {
        for (h, r) in self.heights.iter_mut().zip(&self.rise) {
            *h += r;
        }
        self.route();
        if self.incision.slope_exponent == 1.0 {
            self.incise_linear();
        } else {
            self.incise_newton();
        }
        if let Some(d) = &mut self.diffusion {
            d.step(self.shape, &mut self.heights, self.fixed);
        }
    }

    /// Receivers, stack and area of the current heights, where some node
    /// cannot drain filled first: only the nodes that do not drain to a fixed
    /// node, so a step that needs a small fill pays for a small one.
    fn route(&mut self) {
        if self.flow.route(self.shape, &self.heights, self.fixed) > 0 {
            self.flow.mark_drained(self.fixed, &mut self.drained);
            self.filler
                .fill(self.shape, &mut self.heights, &self.drained, Fill::Epsilon);
            self.flow.route(self.shape, &self.heights, self.fixed);
        }
        self.flow.order();
    }

    /// n = 1: h_i ← (h_i + F·h_r) / (1 + F), F = K·Δt·A^m / Δx_ir, up the stack.
    fn incise_linear(&mut self) {
        let per_link = self.incision.per_link.map(|v| v as f32);
        let (h, flow) = (&mut self.heights, &self.flow);
        for &i in &flow.stack {
            let i = i as usize;
            let k = flow.links[i];
            if k == NO_LINK {
                continue;
            }
            let r = flow.receiver(i);
            let f = self.incision.per_cells[flow.cells[i] as usize] * per_link[usize::from(k)];
            let hr = h[r];
            h[i] = ((h[i] + f * hr) / (1.0 + f)).max(hr.next_up());
        }
    }

    /// n ≠ 1: x + F·xⁿ = x₀ for x = h_i − h_r by Newton's method, up the stack.
    fn incise_newton(&mut self) {
        let n = self.incision.slope_exponent;
        let (h, flow) = (&mut self.heights, &self.flow);
        for &i in &flow.stack {
            let i = i as usize;
            let k = flow.links[i];
            if k == NO_LINK {
                continue;
            }
            let r = flow.receiver(i);
            let f = f64::from(self.incision.per_cells[flow.cells[i] as usize]) * self.incision.per_link[usize::from(k)];
            let hr = h[r];
            let x0 = f64::from(h[i]) - f64::from(hr);
            if x0 > 0.0 {
                h[i] = ((f64::from(hr) + newton(x0, f, n)) as f32).max(hr.next_up());
            }
        }
    }

    /// The result: the heights after the last step, routed once more (and
    /// filled where they must be), so receivers, stack and area are theirs.
    pub(crate) fn finish(mut self) -> Basin {
        self.route();
        let cell = self.spacing * self.spacing;
        Basin {
            width: self.shape.width,
            height: self.shape.height,
            spacing: self.spacing,
            area: self.flow.cells.iter().map(|&c| c as f32 * cell).collect(),
            heights: self.heights,
            receivers: self.flow.receivers(),
            stack: self.flow.stack,
        }
    }
}

/// The root of g(x) = x + f·xⁿ − x₀ (x₀ > 0, f ≥ 0). For n > 1 g is convex,
/// and Newton's method from a point right of the root falls to it
/// monotonically; min(x₀, (x₀/f)^(1/n)) is such a point and already close
/// when f is large. For n < 1 g is concave, and from a point left of the
/// root, min(x₀/2, (x₀/2f)^(1/n)), the iterates rise to it monotonically.
pub(crate) fn newton(x0: f64, f: f64, n: f64) -> f64 {
    let mut x = if n > 1.0 {
        x0.min((x0 / f).powf(1.0 / n))
    } else {
        (0.5 * x0).min((0.5 * x0 / f).powf(1.0 / n))
    };
    for _ in 0..NEWTON_ITERATIONS {
        let fxn = f * x.powf(n);
        let step = (x + fxn - x0) / (1.0 + n * fxn / x);
        x -= step;
        if step.abs() <= NEWTON_TOLERANCE * x {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton's root satisfies its equation for slope exponents on both sides
    /// of 1 and for weak and strong incision.
    #[test]
    fn basin_newton_finds_the_root() {
        for n in [0.5, 0.8, 1.5, 2.0, 4.0] {
            for f in [0.0, 1e-3, 1.0, 1e3, 1e8] {
                for x0 in [1e-3, 1.0, 250.0] {
                    let x = newton(x0, f, n);
                    let g = x + f * x.powf(n) - x0;
                    assert!(x > 0.0 && x <= x0, "n {n} f {f} x0 {x0}: x {x}");
                    assert!(g.abs() <= 1e-6 * x0, "n {n} f {f} x0 {x0}: residual {g}");
                }
            }
        }
    }
}
