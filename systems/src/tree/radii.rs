//! Branch radii by the pipe model (Murray's rule, thesis eq. 3.6): `r^g = Σ r_child^g`, leaves `r₀`.

use sylva_runtime::Validate;

use super::params::{RadiusParams, RadiusRule};
use super::{BranchGraph, NO_PARENT, TreeError};

/// Sets `start_radius` and `end_radius` of every segment.
///
/// Applying eq. 3.6 from the leaves up gives every node `r^g = r₀^g · L`, where `L` is the number
/// of leaves below it, so each radius is computed in closed form as `r₀ · L^(1/g)`: one power per
/// segment, and no overflow from summing `r^g` for large `g` or `r₀`.
///
/// Fails, changing nothing, when `params` or the graph is invalid.
pub fn compute_radii(graph: &mut BranchGraph, params: &RadiusParams) -> Result<(), TreeError> {
    params.validate()?;
    graph.validate()?;
    radii_valid(graph, params);
    Ok(())
}

/// [`compute_radii`] with `params` and `graph` already validated.
pub(crate) fn radii_valid(graph: &mut BranchGraph, params: &RadiusParams) {
    let n = graph.len();
    let r0 = f64::from(params.leaf_radius);
    if !params.enabled {
        graph.start_radius.fill(params.leaf_radius);
        graph.end_radius.fill(params.leaf_radius);
        return;
    }

    // Children have larger indices than their parent, so one backward pass sees all of a
    // segment's children before the segment itself.
    let mut leaves = vec![0u32; n];
    let mut largest_child = vec![0u32; n];
    for i in (0..n).rev() {
        if leaves[i] == 0 {
            leaves[i] = 1;
        }
        let parent = graph.parent[i];
        if parent != NO_PARENT {
            let p = parent as usize;
            leaves[p] += leaves[i];
            largest_child[p] = largest_child[p].max(leaves[i]);
        }
    }

    let inv_g = 1.0 / f64::from(params.exponent);
    let power = |count: u32| (r0 * f64::from(count).powf(inv_g)) as f32;
    // Most segments lie below only a few leaves (in a ternary tree two thirds are leaves), so the powers
    // of small counts are computed once rather than once per segment.
    let small: [f32; 64] = std::array::from_fn(|count| power(count as u32));
    let radius = |count: u32| small.get(count as usize).copied().unwrap_or_else(|| power(count));
    let trunk = params.trunk_multiplier;
    match params.rule {
        RadiusRule::Thesis => {
            for (i, &count) in leaves.iter().enumerate() {
                let end = radius(count);
                graph.end_radius[i] = end;
                let parent = graph.parent[i];
                graph.start_radius[i] = if parent == NO_PARENT {
                    trunk * end
                } else {
                    graph.end_radius[parent as usize]
                };
            }
        }
        RadiusRule::Code => {
            for (i, (&count, &largest)) in leaves.iter().zip(&largest_child).enumerate() {
                let start = radius(count);
                let is_leaf = largest == 0;
                graph.end_radius[i] = if is_leaf { start } else { radius(largest) };
                graph.start_radius[i] = if graph.parent[i] == NO_PARENT {
                    trunk * start
                } else {
                    start
                };
            }
        }
    }
}
