//! Branch radii by the pipe model (Murray's rule, thesis eq. 3.6): `r^g = Σ r_child^g`, leaves `r₀`.

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
    let n = graph.len();
    let r0 = f64::from(params.leaf_radius);
    if !params.enabled {
        graph.start_radius.fill(params.leaf_radius);
        graph.end_radius.fill(params.leaf_radius);
        return Ok(());
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
    let radius = |count: u32| (r0 * f64::from(count).powf(inv_g)) as f32;
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
    Ok(())
}
