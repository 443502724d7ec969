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
pub(crate) fn step(chunk: &mut TerrainChunk, p: &AgingParams, elapsed: u32) -> f64 {
    let block = ROWS * chunk.size() as usize;
    let inc = u16::try_from(elapsed).unwrap_or(u16::MAX);
    chunk
        .parts(block)
        .layers
        .into_par_iter()
        .map(|mut layers| {
            let mut lost = 0.0f64;
            for i in 0..layers.count.len() {
                let mut changed = false;
                for k in 0..layers.len(i) {
                    let age = layers.age[k][i].saturating_add(inc);
                    layers.age[k][i] = age;
                    let Some(m) = Material::from_u8(layers.material[k][i]) else {
                        continue;
                    };
                    let Some(next) = m.aged() else { continue };
                    // Regolith is step 0 of the chain, marble step 5.
                    let step = Material::Regolith as usize - m as usize;
                    if age >= p.thresholds[step] {
                        layers.material[k][i] = next as u8;
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
                }
            }
            lost
        })
        .collect::<Vec<_>>()
        .into_iter()
        .sum()
}
