//! The far field: the world beyond the streamed chunks, out to the horizon, from
//! the basin lattice alone (docs/design/horizon.md).
//!
//! The basin domains are already the world's coarse terrain: every chunk adds its
//! detail to their heights. Read every few lattice nodes, they give the ground
//! kilometres away for the cost of solving the domains there, once each
//! (memoised and cached like the chunks' own), with no chunk generated. The
//! field is a pure function of the domains and its centre, which is snapped to
//! a coarse grid, so the same viewer position gives the same bytes; it is
//! computed on the generation pool and recentred only when the viewer has
//! moved a good part of its radius.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use glam::Vec2;
use rayon::prelude::*;
use sylva_runtime::extract::HorizonField;

use super::attributes::Reading;
use super::domains::{Domains, KEPT_DOMAINS};
use crate::ecology::{Attributes, Biomes, EcologyParams, Layer};

/// How far the field reaches from its centre at most, metres: fog has taken nearly
/// all of the ground's colour by then (the default fog, seen from 400 m up).
pub const HORIZON_RADIUS: f32 = 9216.0;

/// How far the field reaches in domains at most, so the domains it solves stay within
/// what [`Domains`] keeps (a world of small domains gets a nearer horizon; the default
/// world's 4 km domains reach [`HORIZON_RADIUS`]).
const RADIUS_DOMAINS: f32 = 2.25;

/// Metres between the field's samples, at least: a whole number of lattice nodes
/// (four of the default 16 m lattice), so the field samples the domains' nodes
/// themselves and never interpolates them.
pub const HORIZON_SPACING: f32 = 64.0;

/// The field's centre snaps to multiples of this, metres; a viewer farther than
/// this from the centre recentres it, so most of the field always lies ahead.
pub const HORIZON_RECENTRE: f32 = 1024.0;

/// The outer share of the radius over which the ground sinks to the sea, so the
/// field's rim meets the sea the sky draws beyond it with no edge.
const RIM_SHARE: f32 = 0.15;

/// How deep below the sea level the rim sinks, metres: the sea covers it.
const RIM_DEPTH: f32 = 4.0;

/// The shape of a far field over `domains`: samples per side, their spacing (a whole
/// number of lattice nodes) and the radius, metres.
pub fn horizon_grid(domains: &Domains) -> (u32, f32, f32) {
    grid(domains.params().node_spacing, domains.domain_size())
}

/// [`horizon_grid`] for a lattice of `node_spacing` and domains of `domain_size` metres.
fn grid(node_spacing: f32, domain_size: f32) -> (u32, f32, f32) {
    let nodes = (HORIZON_SPACING / node_spacing).ceil().max(1.0);
    let spacing = nodes * node_spacing;
    let radius = HORIZON_RADIUS.min(RADIUS_DOMAINS * domain_size).max(spacing);
    let half = (radius / spacing).ceil() as u32;
    (2 * half + 1, spacing, radius)
}

/// Canopy stems per m² at which the far field counts the ground as wholly under crowns:
/// 250 a hectare, where crowns 6 to 7 m across close (docs/design/horizon.md, "Far forests").
pub const CLOSED_CANOPY_STEMS: f32 = 0.025;

/// The soil depth the far field's biomes are read with, metres: the lattice knows no
/// layers, and this is loose ground most rules let trees stand on.
const FAR_SOIL_DEPTH: f32 = 1.0;

/// What the far field's forests are read from: the world's biomes and ecology.
#[derive(Clone, Debug)]
pub struct FarCanopy {
    /// The world's biomes.
    pub biomes: Biomes,
    /// The world's ecology section (sun, temperatures, distances).
    pub ecology: EcologyParams,
}

impl FarCanopy {
    /// The share of the ground under crowns at world `(x, z)` with attributes `at`: the
    /// biomes' canopy stems there against [`CLOSED_CANOPY_STEMS`].
    fn share(&self, at: &Attributes, x: f32, z: f32, scratch: &mut (Vec<f32>, Vec<f32>)) -> f32 {
        let (memberships, stems) = scratch;
        memberships.resize(self.biomes.len(), 0.0);
        stems.clear();
        stems.resize(self.biomes.tree_species(), 0.0);
        self.biomes.memberships(at, x, z, memberships);
        self.biomes.stems(Layer::Canopy, memberships, x, z, stems);
        (stems.iter().sum::<f32>() / CLOSED_CANOPY_STEMS).clamp(0.0, 1.0)
    }

    /// The canopy share of each sample of a far field, read from its lattice node: `heights`,
    /// `gradients` over the lattice's `node_spacing` and drainage `areas` (where known) per
    /// sample, the samples `n` a side `spacing` metres apart from world `origin`, over a sea
    /// at `sea_level`: the chunks' attributes read on the lattice (docs/design/horizon.md,
    /// "Far forests").
    pub fn shares(
        &self,
        (heights, gradients, areas): (&[f32], &[Vec2], Option<&[f32]>),
        (n, spacing, node_spacing): (usize, f32, f32),
        (origin, sea_level): (Vec2, f32),
    ) -> Vec<f32> {
        let e = &self.ecology;
        let mut scratch = (Vec::new(), Vec::new());
        (0..n * n)
            .map(|k| {
                let h = heights[k];
                if h <= sea_level {
                    return 0.0;
                }
                let read = Reading {
                    height: h - sea_level,
                    gradient: gradients[k],
                    soil: FAR_SOIL_DEPTH,
                    drainage: (areas.map_or(node_spacing * node_spacing, |a| a[k]), node_spacing),
                    distances: (e.max_distance, e.max_distance),
                };
                let a = read.attributes(e);
                let p = origin + Vec2::new((k % n) as f32, (k / n) as f32) * spacing;
                self.share(&a, p.x, p.y, &mut scratch)
            })
            .collect()
    }
}

/// Bytes a far field holds while it is computed (the lattice window it reads every
/// node of, heights and drainage areas, and the field with its canopy) and the domains it keeps solved (about one and a half domain
/// squares of nodes each, heights and drainage areas; at most what [`Domains`] keeps),
/// for a lattice of `node_spacing` and domains of `domain_size` metres.
pub fn horizon_bytes(node_spacing: f32, domain_size: f32) -> u64 {
    let (samples, spacing, radius) = grid(node_spacing, domain_size);
    let nodes_per_side = u64::from(samples - 1) * (spacing / node_spacing) as u64 + 1;
    // The window's heights and drainage areas; per sample its height, area, canopy and
    // the field's height.
    let window = 4 * (2 * nodes_per_side * nodes_per_side + 4 * u64::from(samples) * u64::from(samples));
    let across = (2.0 * radius / domain_size).ceil() as u64 + 2;
    let domains = (across * across).min(KEPT_DOMAINS as u64);
    let side = (1.5 * domain_size / node_spacing) as u64 + 2;
    window + domains * side * side * 8
}

/// The centre of the field a viewer at world `(x, z)` gets: snapped to [`HORIZON_RECENTRE`].
pub fn horizon_centre(at: Vec2) -> Vec2 {
    (at / HORIZON_RECENTRE).round() * HORIZON_RECENTRE
}

/// The far field around `centre` (a [`horizon_centre`]): the basin heights every
/// [`horizon_grid`] spacing, their domains solved on the current rayon pool (or, from a
/// baked store, only the domains it holds; the rest is sea floor); the rim sinks below
/// the sea level. With `canopy`, each sample's share of ground under crowns.
pub fn far_field(domains: &Domains, centre: Vec2, canopy: Option<&FarCanopy>) -> HorizonField {
    let p = domains.params();
    let (samples, spacing, radius) = horizon_grid(domains);
    let step = (spacing / p.node_spacing).round() as usize;
    let half = (samples / 2) as f32 * spacing;
    let first = [centre.x, centre.y].map(|v| ((v - half) / p.node_spacing).round() as i64);
    let side = (samples as usize - 1) * step + 1;
    let nodes = if domains.is_read_only() {
        // A baked store is the world as shipped: what it lacks is not solved here.
        domains.stored_heights(first, side, side)
    } else {
        // Solving the domains first, in parallel, spares the sequential read below
        // from solving them one after another.
        let cells: Vec<[i64; 2]> = domains.cells_over(first, side, side).into_iter().collect();
        cells.par_iter().for_each(|&cell| {
            domains.domain(cell);
        });
        domains.heights(first, side, side).0
    };
    let n = samples as usize;
    let rim = radius * (1.0 - RIM_SHARE);
    let shore = p.sea_level - RIM_DEPTH;
    let origin = Vec2::new(first[0] as f32, first[1] as f32) * p.node_spacing;
    let sample = |k: usize| nodes[(k / n) * step * side + (k % n) * step];
    let mut canopy = canopy.map_or(Vec::new(), |c| {
        // Each sample's node, its height and its gradient over the neighbouring nodes.
        let node = |k: usize| ((k / n) * step, (k % n) * step);
        let at = |row: usize, col: usize| nodes[row.min(side - 1) * side + col.min(side - 1)];
        let heights: Vec<f32> = (0..n * n).map(sample).collect();
        let gradients: Vec<Vec2> = (0..n * n)
            .map(|k| {
                let (row, col) = node(k);
                let (l, r) = (col.saturating_sub(1), (col + 1).min(side - 1));
                let (b, f) = (row.saturating_sub(1), (row + 1).min(side - 1));
                Vec2::new(
                    (at(row, r) - at(row, l)) / ((r - l).max(1) as f32 * p.node_spacing),
                    (at(f, col) - at(b, col)) / ((f - b).max(1) as f32 * p.node_spacing),
                )
            })
            .collect();
        let areas = (!domains.is_read_only()).then(|| {
            let all = domains.areas(first, side, side).0;
            (0..n * n)
                .map(|k| {
                    let (row, col) = node(k);
                    all[row * side + col]
                })
                .collect::<Vec<f32>>()
        });
        c.shares(
            (&heights, &gradients, areas.as_deref()),
            (n, spacing, p.node_spacing),
            (origin, p.sea_level),
        )
    });
    let height: Vec<f32> = (0..n * n)
        .map(|k| {
            let (i, j) = (k % n, k / n);
            let h = sample(k);
            let from_centre = Vec2::new(i as f32, j as f32) * spacing - Vec2::splat(half);
            let s = ((from_centre.length() - rim) / (radius - rim)).clamp(0.0, 1.0);
            h + s * s * (3.0 - 2.0 * s) * (shore.min(h) - h)
        })
        .collect();
    // The rim sinks under the sea, and no forest stands there.
    for (c, h) in canopy.iter_mut().zip(&height) {
        if *h <= p.sea_level {
            *c = 0.0;
        }
    }
    HorizonField {
        origin,
        spacing,
        resolution: samples,
        height,
        canopy,
    }
}

/// The far field kept for the viewers: computed on the generation pool, one
/// field at a time, and recentred when the first viewer leaves its middle.
pub(super) struct Horizon {
    domains: Arc<Domains>,
    canopy: Option<Arc<FarCanopy>>,
    /// The centre of the field last handed out or being computed.
    centre: Option<Vec2>,
    /// The field being computed.
    pending: Option<Receiver<HorizonField>>,
}

impl Horizon {
    /// No field yet, over `domains`, its forests read from `canopy`.
    pub fn new(domains: Arc<Domains>, canopy: Option<Arc<FarCanopy>>) -> Horizon {
        Horizon {
            domains,
            canopy,
            centre: None,
            pending: None,
        }
    }

    /// The field, when one has just finished; starts computing one for the viewer at
    /// `at` on `pool` when it is far from the last field's centre and `idle` (no chunk
    /// waits for the pool: the chunks come first).
    pub fn update(&mut self, at: Vec2, idle: bool, pool: &rayon::ThreadPool) -> Option<HorizonField> {
        let done = match self.pending.as_ref().map(Receiver::try_recv) {
            Some(Ok(field)) => Some(field),
            Some(Err(TryRecvError::Empty)) => return None,
            // A job that died (a panic on the pool) is started again below.
            Some(Err(TryRecvError::Disconnected)) => {
                self.centre = None;
                None
            }
            None => None,
        };
        self.pending = None;
        if idle && !self.is_near(at) {
            let (send, receive) = channel();
            let domains = Arc::clone(&self.domains);
            let canopy = self.canopy.clone();
            let centre = horizon_centre(at);
            pool.spawn(move || {
                let _ = send.send(far_field(&domains, centre, canopy.as_deref()));
            });
            self.centre = Some(centre);
            self.pending = Some(receive);
        }
        done
    }

    /// Whether the field last handed out (or being computed) serves a viewer at `at`.
    fn is_near(&self, at: Vec2) -> bool {
        self.centre
            .is_some_and(|c| (at - c).abs().max_element() <= HORIZON_RECENTRE)
    }

    /// Whether a field for a viewer at `at` has been handed out.
    pub fn is_ready(&self, at: Vec2) -> bool {
        self.pending.is_none() && self.is_near(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::WorldBasins;

    /// Domains of 1 km (4 chunks of 256 m): a far field of 2.25 km, quick to solve.
    fn domains() -> Domains {
        let params = WorldBasins {
            domain_chunks: 4,
            ..WorldBasins::default()
        };
        Domains::new(params, 256.0, 7, 0)
    }

    #[test]
    fn the_field_reads_the_lattice_and_sinks_at_its_rim() {
        let d = domains();
        let (samples, spacing, radius) = horizon_grid(&d);
        assert_eq!((spacing, radius), (64.0, 2304.0));
        assert_eq!(samples, 73);
        let centre = horizon_centre(Vec2::new(700.0, -300.0));
        assert_eq!(centre, Vec2::new(1024.0, 0.0));
        let field = far_field(&d, centre, None);
        assert!(field.is_consistent());
        assert_eq!(field.centre(), centre);
        // Inside the rim every sample is the lattice node under it.
        let n = samples as usize;
        let first = (field.origin / d.params().node_spacing).round();
        let (nodes, _) = d.heights([first.x as i64, first.y as i64], 4 * (n - 1) + 1, 4 * (n - 1) + 1);
        let side = 4 * (n - 1) + 1;
        let mid = n / 2;
        for (i, j) in [(mid, mid), (mid + 5, mid - 7), (mid - 20, mid + 11)] {
            assert_eq!(field.height[j * n + i], nodes[4 * j * side + 4 * i], "({i}, {j})");
        }
        // The corners, beyond the radius, lie under the sea.
        let sea = d.params().sea_level;
        for k in [0, n - 1, n * (n - 1), n * n - 1] {
            assert!(field.height[k] <= sea - RIM_DEPTH, "corner {k}: {}", field.height[k]);
        }
        // The same place gives the same bytes, whatever was solved before.
        assert_eq!(far_field(&domains(), centre, None), field);
    }

    #[test]
    fn a_field_is_computed_off_the_frame_and_recentred_far_away() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let mut h = Horizon::new(Arc::new(domains()), None);
        let at = Vec2::new(100.0, 100.0);
        // Chunks still wait for the pool: nothing starts.
        assert!(h.update(at, false, &pool).is_none());
        assert!(!h.is_ready(at));
        let field = loop {
            if let Some(f) = h.update(at, true, &pool) {
                break f;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(field.centre(), Vec2::ZERO);
        assert!(h.is_ready(at));
        // Nearby, the field serves; far away it is computed again around the viewer.
        assert!(h.update(Vec2::new(900.0, -900.0), true, &pool).is_none());
        assert!(h.is_ready(Vec2::new(900.0, -900.0)));
        let far = Vec2::new(3000.0, 0.0);
        assert!(h.update(far, true, &pool).is_none());
        assert!(!h.is_ready(far));
    }
}
