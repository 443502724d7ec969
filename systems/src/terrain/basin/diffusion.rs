//! Hillslope diffusion ∂h/∂t = D ∇²h, implicit and split by direction: a
//! backward-Euler step along the rows, then one along the columns (locally
//! one-dimensional splitting). Each half is a tridiagonal system solved
//! exactly (Thomas algorithm), so the step is stable for any time step and,
//! the matrices being M-matrices, makes no new extremes. Fixed nodes keep
//! their heights (their rows are the identity); the grid's own edges pass no
//! flux.

use super::flow::Shape;

/// The reused state of the diffusion step.
pub(crate) struct Diffusion {
    /// D·Δt / Δx², the coupling between neighbours.
    coupling: f32,
    /// The eliminated upper diagonal, one per node.
    upper: Vec<f32>,
}

impl Diffusion {
    /// Diffusivity `d` (m²/yr) over `dt` years on nodes `spacing` metres apart.
    pub(crate) fn new(d: f32, dt: f32, spacing: f32, nodes: usize) -> Self {
        let coupling = (f64::from(d) * f64::from(dt) / (f64::from(spacing) * f64::from(spacing))) as f32;
        Self {
            coupling,
            upper: vec![0.0; nodes],
        }
    }

    /// One time step on `h`.
    pub(crate) fn step(&mut self, shape: Shape, h: &mut [f32], fixed: &[bool]) {
        let w = shape.width;
        for ((row, fixed), upper) in h
            .chunks_exact_mut(w)
            .zip(fixed.chunks_exact(w))
            .zip(self.upper.chunks_exact_mut(w))
        {
            solve_row(row, fixed, self.coupling, upper);
        }
        self.solve_columns(shape, h, fixed);
    }

    /// The column systems, all columns at once row by row, so every pass reads
    /// memory in order.
    fn solve_columns(&mut self, shape: Shape, h: &mut [f32], fixed: &[bool]) {
        let (w, rows) = (shape.width, shape.height);
        for y in 0..rows {
            for i in y * w..(y + 1) * w {
                let (a, b, c) = coefficients(fixed[i], y > 0, y + 1 < rows, self.coupling);
                let (above_upper, above) = if y > 0 {
                    (self.upper[i - w], h[i - w])
                } else {
                    (0.0, 0.0)
                };
                let denom = b - a * above_upper;
                self.upper[i] = c / denom;
                h[i] = (h[i] - a * above) / denom;
            }
        }
        for i in (0..h.len().saturating_sub(w)).rev() {
            h[i] -= self.upper[i] * h[i + w];
        }
    }
}

/// Sub-, main and super-diagonal of a node's equation: the identity for a
/// fixed node, else 1 + k·r on the diagonal for its k neighbours along the line.
fn coefficients(fixed: bool, has_before: bool, has_after: bool, r: f32) -> (f32, f32, f32) {
    if fixed {
        return (0.0, 1.0, 0.0);
    }
    let a = if has_before { -r } else { 0.0 };
    let c = if has_after { -r } else { 0.0 };
    (a, 1.0 - a - c, c)
}

/// One row's system by the Thomas algorithm, in place.
fn solve_row(h: &mut [f32], fixed: &[bool], r: f32, upper: &mut [f32]) {
    let w = h.len();
    let (mut prev_upper, mut prev) = (0.0f32, 0.0f32);
    for x in 0..w {
        let (a, b, c) = coefficients(fixed[x], x > 0, x + 1 < w, r);
        let denom = b - a * prev_upper;
        prev_upper = c / denom;
        prev = (h[x] - a * prev) / denom;
        upper[x] = prev_upper;
        h[x] = prev;
    }
    for x in (0..w.saturating_sub(1)).rev() {
        h[x] -= upper[x] * h[x + 1];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step satisfies its row system exactly (up to rounding), keeps fixed
    /// nodes, and makes no new extremes.
    #[test]
    fn basin_diffusion_solves_its_systems() {
        let shape = Shape { width: 7, height: 5 };
        let h0: Vec<f32> = (0..35).map(|i| ((i * 37) % 11) as f32).collect();
        let fixed: Vec<bool> = (0..35).map(|i| i % 9 == 0).collect();
        let mut h = h0.clone();
        let mut d = Diffusion::new(2.0, 3.0, 2.0, 35);
        d.step(shape, &mut h, &fixed);
        for i in (0..35).filter(|&i| fixed[i]) {
            assert_eq!(h[i], h0[i]);
        }
        let (lo, hi) = (0.0, 10.0);
        assert!(h.iter().all(|&v| (lo - 1e-4..=hi + 1e-4).contains(&v)), "{h:?}");
        let mut row = h0[7..14].to_vec();
        let mut upper = vec![0.0; 7];
        solve_row(&mut row, &fixed[7..14], d.coupling, &mut upper);
        for x in 0..7 {
            let (a, b, c) = coefficients(fixed[7 + x], x > 0, x < 6, d.coupling);
            let before = if x > 0 { row[x - 1] } else { 0.0 };
            let after = if x < 6 { row[x + 1] } else { 0.0 };
            assert!((a * before + b * row[x] + c * after - h0[7 + x]).abs() < 1e-4);
        }
    }
}
