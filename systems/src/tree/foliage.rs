//! How a species looks (bark, leaf colour, size and density) and the leaf clusters it grows
//! at its twig tips.

use std::f32::consts::TAU;

use glam::Vec3;
use rand::RngExt;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::rng::{StreamKey, stream};
use sylva_runtime::{FieldError, Validate};

use super::{BranchGraph, Leaves, NO_PARENT};

/// Most leaves one twig tip may carry (`leaf_density`).
pub const MAX_LEAVES_PER_TIP: u32 = 64;
/// Largest accepted `leaf_size`, metres.
pub const MAX_LEAF_SIZE: f32 = 10.0;
/// Most leaves clusters add to one tree; tips past it stay bare, so a huge graph with a high
/// density cannot exhaust memory.
pub const MAX_CLUSTER_LEAVES: usize = 1 << 22;

/// A species' colours and leaves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreeLook {
    /// Bark colour, linear RGBA. Default (92, 80, 68, 255), a brown grey.
    pub bark: [u8; 4],
    /// Leaf colour, linear RGBA; the renderer varies it a little per leaf. Default
    /// (58, 112, 36, 255), a summer green.
    pub leaf_colour: [u8; 4],
    /// Length of a cluster leaf, metres, > 0 and at most [`MAX_LEAF_SIZE`]. Default 0.22.
    pub leaf_size: f32,
    /// Leaves in the cluster at each twig tip (a segment without children), at most
    /// [`MAX_LEAVES_PER_TIP`]; 0 grows none (leaves the grammar draws still grow). Default 10.
    pub leaf_density: u32,
}

impl Default for TreeLook {
    fn default() -> Self {
        Self {
            bark: [92, 80, 68, 255],
            leaf_colour: [58, 112, 36, 255],
            leaf_size: 0.22,
            leaf_density: 10,
        }
    }
}

impl Validate for TreeLook {
    /// Checks the leaf size and density.
    fn validate(&self) -> Result<(), FieldError> {
        FieldError::check(
            self.leaf_size.is_finite() && self.leaf_size > 0.0 && self.leaf_size <= MAX_LEAF_SIZE,
            "leaf_size",
            || {
                format!(
                    "is {}, must be > 0 and at most {MAX_LEAF_SIZE} (metres)",
                    self.leaf_size
                )
            },
        )?;
        FieldError::check(self.leaf_density <= MAX_LEAVES_PER_TIP, "leaf_density", || {
            format!("is {}, must be at most {MAX_LEAVES_PER_TIP}", self.leaf_density)
        })
    }
}

/// Indices of the segments no other segment grows from, in graph order.
pub fn twig_tips(graph: &BranchGraph) -> Vec<usize> {
    let mut has_child = vec![false; graph.len()];
    for &p in &graph.parent {
        if p != NO_PARENT {
            has_child[p as usize] = true;
        }
    }
    (0..graph.len()).filter(|&i| !has_child[i]).collect()
}

/// Appends `per_tip` leaves of length about `size` (graph units) around the end of every twig
/// tip of `graph`, up to [`MAX_CLUSTER_LEAVES`] in all.
///
/// Each tip's leaves come from its own stream, `rng::stream(seed, Index(segment), "tree.leaves")`,
/// so they depend on the seed and the tip only (tips are drawn in parallel on the current rayon
/// pool, with the same bits on any number of threads). They scatter in a ball of radius `1.5 · size`
/// around the tip; normals lean toward the graph's up (+Z), as leaves turn to the sky.
pub fn push_tip_clusters(graph: &BranchGraph, per_tip: u32, size: f32, seed: u64, out: &mut Leaves) {
    let per_tip = per_tip.min(MAX_LEAVES_PER_TIP) as usize;
    if per_tip == 0 || !(size.is_finite() && size > 0.0) {
        return;
    }
    let radius = 1.5 * size;
    let tips = twig_tips(graph);
    let tips = &tips[..tips.len().min(MAX_CLUSTER_LEAVES.saturating_sub(out.len()) / per_tip)];
    let added = tips.len() * per_tip;
    out.reserve(added);
    // Written in place, tip by tip on the pool: grown leaf by leaf, the arrays were copied and
    // faulted in again at every doubling, which cost more than drawing the leaves, and each
    // tip's stream is its own, so the bits do not depend on the threads.
    let position = &mut out.position.spare_capacity_mut()[..added];
    let normal = &mut out.normal.spare_capacity_mut()[..added];
    let length = &mut out.size.spare_capacity_mut()[..added];
    (
        position.par_chunks_mut(per_tip),
        normal.par_chunks_mut(per_tip),
        length.par_chunks_mut(per_tip),
        tips,
    )
        .into_par_iter()
        .for_each(|(position, normal, length, &tip)| {
            let mut rng = stream(seed, StreamKey::Index(tip as u64), "tree.leaves");
            for ((p, n), l) in position.iter_mut().zip(normal).zip(length) {
                let offset = unit_vector(rng.random(), rng.random()) * radius * rng.random::<f32>().cbrt();
                let up = (unit_vector(rng.random(), rng.random()) * 0.7 + Vec3::Z).normalize_or(Vec3::Z);
                p.write(graph.end[tip] + offset);
                n.write(up);
                l.write(size * (0.8 + 0.4 * rng.random::<f32>()));
            }
        });
    // SAFETY: the first `added` spare slots of each array (past its own length: the fields
    // are public, so the lengths may differ) were split into one chunk of `per_tip` per tip,
    // and every slot of every chunk was written above.
    unsafe {
        out.position.set_len(out.position.len() + added);
        out.normal.set_len(out.normal.len() + added);
        out.size.set_len(out.size.len() + added);
    }
}

/// The unit vector at height `2u − 1` and azimuth `2πv`: uniform on the sphere for uniform u, v.
fn unit_vector(u: f32, v: f32) -> Vec3 {
    let z = 2.0 * u - 1.0;
    let r = (1.0 - z * z).max(0.0).sqrt();
    let (s, c) = (TAU * v).sin_cos();
    Vec3::new(r * c, r * s, z)
}

/// A tree's leaves: those `drawn` by its grammar, then the clusters `look` puts at the twig tips
/// of `graph` (sized `look.leaf_size` metres at `scale` metres per graph unit), from `seed`.
pub fn grow_leaves(graph: &BranchGraph, drawn: &Leaves, look: &TreeLook, scale: f32, seed: u64) -> Leaves {
    let mut leaves = drawn.clone();
    if scale.is_finite() && scale > 0.0 {
        push_tip_clusters(graph, look.leaf_density, look.leaf_size / scale, seed, &mut leaves);
    }
    leaves
}
