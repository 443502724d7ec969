//! Rock-cycle aging (thesis §3.1.2, Fig. 3.2 as reconstructed in the notes,
//! erratum 16): a layer left unchanged long enough turns into the next harder
//! rock, regolith → sand → sandstone → limestone → slate → marble → granite.
//!
//! Each layer slot carries a counter of unchanged iterations. Erosion resets
//! it whenever it changes the layer; every aging call adds the iterations
//! since the last call (saturating). A layer whose counter reaches its
//! material's threshold changes type, restarts its counter, optionally halves
//! (compaction, erratum 15), and merges with an equal neighbour — the thesis's
//! sandstone turning into limestone after 64 iterations and joining the
//! limestone below is this rule.

use rayon::prelude::*;

use super::columns::TerrainChunk;
use super::hydraulic::ROWS;
use super::materials::Material;
use super::params::AgingParams;

/// Ages every layer of `chunk` by `elapsed` iterations; returns the thickness
/// lost to compaction.
///
/// Row by row, every layer plane's counters advance in a branch-free loop
/// that also notes whether any layer reached its threshold; only such rows
/// take the per-column pass that changes materials and merges.
pub(crate) fn step(chunk: &mut TerrainChunk, p: &AgingParams, elapsed: u32) -> f64 {
    let n = chunk.size() as usize;
    let block = ROWS * n;
    let inc = u16::try_from(elapsed).unwrap_or(u16::MAX);
    // Threshold and successor by material byte; a 256-entry table needs no
    // bounds check. Rock that does not age (granite) never reaches its threshold.
    let mut threshold = [u32::MAX; 256];
    let mut next = [0u8; 256];
    for m in Material::ALL {
        if let Some(to) = m.aged() {
            // Regolith is step 0 of the chain, marble step 5.
            threshold[m as usize] = u32::from(p.thresholds[Material::Regolith as usize - m as usize]);
            next[m as usize] = to as u8;
        }
    }
    chunk
        .parts(block)
        .layers
        .into_par_iter()
        .map(|mut layers| {
            let mut lost = 0.0f64;
            for row in 0..layers.count.len() / n {
                let cells = row * n..(row + 1) * n;
                let mut due = false;
                for k in 0..layers.material.len() {
                    let count = &layers.count[cells.clone()];
                    let material = &layers.material[k][cells.clone()];
                    let age = &mut layers.age[k][cells.clone()];
                    for ((a, &c), &m) in age.iter_mut().zip(count).zip(material) {
                        let live = usize::from(c) > k;
                        let aged = if live { a.saturating_add(inc) } else { *a };
                        *a = aged;
                        due |= live & (u32::from(aged) >= threshold[usize::from(m)]);
                    }
                }
                if !due {
                    continue;
                }
                for i in cells {
                    let mut changed = false;
                    for k in 0..layers.len(i) {
                        let m = usize::from(layers.material[k][i]);
                        if u32::from(layers.age[k][i]) >= threshold[m] {
                            layers.material[k][i] = next[m];
                            layers.age[k][i] = 0;
                            if p.compaction_halving {
                                let t = layers.thickness[k][i];
                                layers.thickness[k][i] = t * 0.5;
                                lost += f64::from(t - t * 0.5);
                            }
                            changed = true;
                        }
                    }
                    if changed {
                        layers.merge_equal(i);
                        layers.refresh(i);
                    }
                }
            }
            lost
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum()
}
