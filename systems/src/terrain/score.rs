//! The erosion score of thesis §5.3 (after Olsen 2004), eq. 5.1–5.4:
//! ε = σ_d / d̄ over the largest N4 height difference of every interior cell.
//! Erosion lowers it on hilly terrain.

use serde::{Deserialize, Serialize};

/// How the sums of eq. 5.2–5.3 are normalised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScoreMode {
    /// As printed: sums over the (W−2)·(H−2) interior cells divided by W·H
    /// (docs/design/terrain.md, "Score normalisation"), which reproduces the thesis's numbers.
    #[default]
    Thesis,
    /// Sums divided by the number of interior cells: the true mean and
    /// standard deviation.
    Corrected,
}

/// ε for a `width`-wide row-major height map (ground, without water).
///
/// 0 when every difference is 0 (d̄ = 0 is guarded); `None` when the map is
/// smaller than 3×3 or its length is not a multiple of `width`.
pub fn erosion_score(heights: &[f32], width: usize, mode: ScoreMode) -> Option<f32> {
    if width < 3 || !heights.len().is_multiple_of(width) || heights.len() / width < 3 {
        return None;
    }
    let depth = heights.len() / width;
    let h = |x: usize, z: usize| f64::from(heights[z * width + x]);
    let d_max = |x: usize, z: usize| {
        let c = h(x, z);
        [h(x - 1, z), h(x + 1, z), h(x, z - 1), h(x, z + 1)]
            .into_iter()
            .fold(0.0f64, |m, v| m.max((c - v).abs()))
    };
    let norm = match mode {
        ScoreMode::Thesis => (width * depth) as f64,
        ScoreMode::Corrected => ((width - 2) * (depth - 2)) as f64,
    };
    let interior = || (1..depth - 1).flat_map(move |z| (1..width - 1).map(move |x| d_max(x, z)));
    let mean = interior().sum::<f64>() / norm;
    if mean <= 0.0 {
        return Some(0.0);
    }
    let var = interior().map(|d| (d - mean) * (d - mean)).sum::<f64>() / norm;
    Some((var.sqrt() / mean) as f32)
}
