//! A cylinder batch reordered into spatial clusters (about a tree each),
//! thickest cylinder first in each, so a frame culls per cluster and splits
//! each into three ranges by size on screen: thick branches get the finest
//! ring, twigs the coarsest, and sub-pixel twigs are left out.

use std::ops::Range;

use rayon::prelude::*;
use sylva_runtime::extract::{CylinderBatch, DirtyRange};
use sylva_runtime::glam::Vec3;

use crate::cull::Aabb;
use crate::frame::View;

/// Side of a cluster's square on the ground, world units: about one tree crown.
pub const CELL: f32 = 16.0;
/// Pixels a cylinder's radius must cover to be drawn: thinner twigs only break into
/// dotted pixels, and a cluster's thickest branches still show its shape.
pub const MIN_RADIUS_PIXELS: f32 = 0.1;

/// Instances below which a batch is drawn as one cluster: sorting costs more than it saves.
pub const CLUSTER_MIN: usize = 1024;
/// Frames a batch in batch order must hold still before it is reordered into clusters.
pub const STILL_FRAMES: u32 = 30;

/// The instances a cluster draws with one ring.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RingRange {
    /// Every instance that may have a share of the ring somewhere in the cluster.
    pub range: Range<u32>,
    /// The part of `range` that is wholly this ring's everywhere in the cluster: drawn without
    /// dither, so its depth is tested before shading.
    pub solid: Range<u32>,
}

impl RingRange {
    /// The parts of the range that may fade against a neighbour: before and after `solid`.
    pub fn fading(&self) -> [Range<u32>; 2] {
        [self.range.start..self.solid.start, self.solid.end..self.range.end]
    }
}

/// One cluster: a range of the batch in its GPU order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cluster {
    /// The instances, in GPU order.
    pub range: Range<u32>,
    /// What they cover.
    pub bounds: Aabb,
    /// Radii fall along the range, so a prefix holds the thickest cylinders.
    pub sorted: bool,
}

/// The larger radius of each cylinder.
pub(crate) fn radii(batch: &CylinderBatch) -> Vec<f32> {
    batch
        .start_radius
        .iter()
        .zip(&batch.end_radius)
        .map(|(a, b)| a.max(*b))
        .collect()
}

/// What a slot sends up this frame to match its batch.
pub(crate) enum Plan<T> {
    /// Nothing: the batch has not changed.
    Keep,
    /// The whole batch reordered into clusters, with what the pass derives from that order.
    Reordered(T),
    /// This range of the batch, in batch order.
    Plain(DirtyRange),
}

/// Plans a slot's frame. A batch that held still before it changed, or for [`STILL_FRAMES`],
/// goes up whole reordered into clusters (`reorder`, where it holds at least
/// [`CLUSTER_MIN`]); one that keeps changing goes up in batch order by its dirty ranges, or
/// whole where the slot held it reordered. `still` counts the slot's frames since its batch
/// last changed, `held` the instances the slot holds, `reordered` whether in cluster order.
pub(crate) fn plan<T>(
    still: &mut u32,
    held: u32,
    (dirty, len): (DirtyRange, usize),
    reordered: bool,
    reorder: impl FnOnce() -> T,
) -> Plan<T> {
    let changed = !dirty.is_clean() || len != held as usize;
    let was_still = *still > 0 || held == 0;
    *still = if changed { 0 } else { still.saturating_add(1) };
    if len >= CLUSTER_MIN && ((changed && was_still) || (!reordered && *still == STILL_FRAMES)) {
        return Plan::Reordered(reorder());
    }
    match (changed, reordered) {
        (false, _) => Plan::Keep,
        (true, true) => Plan::Plain(DirtyRange {
            start: 0,
            end: len as u32,
        }),
        (true, false) => Plan::Plain(dirty),
    }
}

/// The ground cell of `p`: clusters are runs of one cell.
pub(crate) fn cell(p: Vec3) -> (i32, i32) {
    ((p.x / CELL).floor() as i32, (p.z / CELL).floor() as i32)
}

/// Instances in cluster order: which instance goes where, and the runs of one ground cell.
pub(crate) struct CellOrder {
    /// The instance at each place.
    pub order: Vec<u32>,
    /// The places of each ground cell, in order.
    pub runs: Vec<Range<u32>>,
}

/// An order of `n` instances by the ground cell of `at(i)`, then by the key `within(i)`,
/// then by index, so equal inputs give equal orders. The keys are made once and sorted on the
/// pool: a world's first frame orders millions of leaves.
pub(crate) fn order_by_cell(
    n: usize,
    at: impl Fn(usize) -> Vec3 + Sync,
    within: impl Fn(usize) -> u64 + Sync,
) -> CellOrder {
    let mut keyed: Vec<(u64, u64, u32)> = (0..n)
        .into_par_iter()
        .map(|i| (cell_key(at(i)), within(i), i as u32))
        .collect();
    keyed.par_sort_unstable();
    let mut runs: Vec<Range<u32>> = Vec::new();
    for (k, pair) in keyed.windows(2).enumerate() {
        if pair[0].0 != pair[1].0 {
            runs.push(runs.last().map_or(0, |r| r.end)..k as u32 + 1);
        }
    }
    if n > 0 {
        runs.push(runs.last().map_or(0, |r| r.end)..n as u32);
    }
    CellOrder {
        order: keyed.into_par_iter().map(|(_, _, i)| i).collect(),
        runs,
    }
}

/// [`cell`] as one number in the same order (x, then z).
fn cell_key(p: Vec3) -> u64 {
    let (x, z) = cell(p);
    // With the sign bit flipped, i32s compare as u32s do.
    let unsigned = |v: i32| u64::from(v as u32 ^ 1 << 31);
    unsigned(x) << 32 | unsigned(z)
}

/// A key that puts larger radii first, in the order of [`f32::total_cmp`] reversed.
fn thickest_first(radius: f32) -> u64 {
    let bits = radius.to_bits();
    // total_cmp's order on the bits: negative values reversed whole, positive ones above them.
    let ascending = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
    u64::from(!ascending)
}

/// `values` in `order`, gathered on the pool.
pub(crate) fn gather<T: Copy + Send + Sync>(values: &[T], order: &[u32]) -> Vec<T> {
    order.par_iter().map(|&i| values[i as usize]).collect()
}

/// The midpoint of cylinder `i`, which places it in a cell.
fn midpoint(batch: &CylinderBatch, i: usize) -> Vec3 {
    (batch.start[i] + batch.end[i]) * 0.5
}

/// The GPU order of a cylinder batch: by ground cell of the midpoint, then thickest
/// first, then batch order.
pub(crate) fn order(batch: &CylinderBatch, radius: &[f32]) -> CellOrder {
    order_by_cell(batch.len(), |i| midpoint(batch, i), |i| thickest_first(radius[i]))
}

/// `batch` with its instances in `order`, all of them marked dirty.
pub(crate) fn reorder(batch: &CylinderBatch, order: &[u32]) -> CylinderBatch {
    let mut out = CylinderBatch {
        start: gather(&batch.start, order),
        end: gather(&batch.end, order),
        start_radius: gather(&batch.start_radius, order),
        end_radius: gather(&batch.end_radius, order),
        colour: gather(&batch.colour, order),
        tree: gather(&batch.tree, order),
        ..CylinderBatch::default()
    };
    out.dirty.mark(0, order.len() as u32);
    out
}

/// The clusters of a batch reordered by [`order`], from the runs of its ground cells.
pub(crate) fn clusters(batch: &CylinderBatch, runs: Vec<Range<u32>>) -> Vec<Cluster> {
    runs.into_iter()
        .map(|range| {
            let mut bounds = Aabb::EMPTY;
            for i in range.start as usize..range.end as usize {
                add_cylinder(&mut bounds, batch, i);
            }
            Cluster {
                range,
                bounds,
                sorted: true,
            }
        })
        .collect()
}

/// The whole batch as one cluster in batch order (a batch that changes every frame).
pub(crate) fn whole(batch: &CylinderBatch) -> Cluster {
    let mut bounds = Aabb::EMPTY;
    for i in 0..batch.len() {
        add_cylinder(&mut bounds, batch, i);
    }
    Cluster {
        range: 0..batch.len() as u32,
        bounds,
        sorted: false,
    }
}

fn add_cylinder(bounds: &mut Aabb, batch: &CylinderBatch, i: usize) {
    bounds.add_sphere(batch.start[i], batch.start_radius[i]);
    bounds.add_sphere(batch.end[i], batch.end_radius[i]);
}

impl Cluster {
    /// The instances to draw with each ring (coarse to fine) as `view` sees them: thicker
    /// cylinders get more sides, those thinner than [`MIN_RADIUS_PIXELS`] none. Around each
    /// threshold of [`RING_FROM`] a band of instances is in both neighbouring rings (or in the
    /// coarsest and none), which the shader splits by dither as each instance's own size on
    /// screen asks; a ring's range holds every instance that may have a share of it anywhere
    /// in the cluster (from its nearest to its farthest point), its solid part those that are
    /// wholly its own everywhere. `None` when all of it is too thin. `radius` is the slot's
    /// radii in GPU order. Culling is the caller's: the view and the shadow map cull by
    /// different frusta.
    pub fn rings(&self, view: &View, radius: &[f32]) -> Option<[RingRange; 3]> {
        let eye = view.camera.position;
        let d = self.bounds.distance(eye);
        let radii = &radius[self.range.start as usize..self.range.end as usize];
        let first = self.range.start;
        let rings = if self.sorted {
            let far = self.bounds.farthest(eye);
            let upto = |px: f32, d: f32| first + radii.partition_point(|&r| view.pixels(r, d) >= px) as u32;
            let band = FADE * SLACK;
            let ring = |k: usize| {
                let end = upto(RING_FROM[k] / band, d);
                let start = RING_FROM.get(k + 1).map_or(first, |&finer| upto(finer * band, far));
                let range = start..end.max(start);
                let whole_from = RING_FROM.get(k + 1).map_or(first, |&finer| upto(finer / band, d));
                let whole_to = upto(RING_FROM[k] * band, far);
                let lo = whole_from.clamp(range.start, range.end);
                RingRange {
                    solid: lo..whole_to.clamp(lo, range.end),
                    range,
                }
            };
            [ring(0), ring(1), ring(2)]
        } else {
            let thickest = radii.iter().fold(0.0f32, |a, &r| a.max(r));
            let ring = RING_FROM[1..]
                .iter()
                .filter(|&&px| view.pixels(thickest, d) >= px)
                .count();
            let mut rings = [first..first, first..first, first..first];
            rings[ring] = self.range.clone();
            rings.map(|range| RingRange {
                solid: range.clone(),
                range,
            })
        };
        rings.iter().any(|r| !r.range.is_empty()).then_some(rings)
    }
}

/// Radii on screen, pixels, at which each ring (coarse to fine) has faded in halfway: the
/// 4-sided ring over nothing (the sub-pixel cut), the 8-sided over it, the 16-sided over that.
pub const RING_FROM: [f32; 3] = [MIN_RADIUS_PIXELS, 2.0, 8.0];
/// How far around each threshold of [`RING_FROM`] two levels cross-fade, as a factor of the
/// radius on screen: the finer level fades in from threshold / `FADE` to threshold × `FADE`.
/// Wide enough that a step of the camera changes a few pixels of each, narrow enough that
/// the bands stay apart and few instances are drawn twice.
pub const FADE: f32 = 1.5;
/// The picked ranges reach this factor past each band, so the shader's own arithmetic never
/// gives an instance a share of a ring it was not drawn with.
const SLACK: f32 = 1.02;

#[cfg(test)]
mod tests {
    use super::*;
    use sylva_runtime::extract::Camera;

    /// Two trees 40 m apart, each a trunk and ever thinner twigs pushed thinnest first.
    fn two_trees() -> CylinderBatch {
        let mut b = CylinderBatch::default();
        for x in [0.0, 40.0] {
            for k in (0..4).rev() {
                let r = 0.5 / 3f32.powi(k);
                b.push(Vec3::new(x + 4.0, 0.0, 4.0), Vec3::new(x + 4.0, 5.0, 4.0), r, r, [0; 4]);
            }
        }
        b
    }

    #[test]
    fn clusters_are_cells_with_the_thickest_first() {
        let b = two_trees();
        let r = radii(&b);
        let o = order(&b, &r);
        assert_eq!(o.order, vec![3, 2, 1, 0, 7, 6, 5, 4]);
        let sorted = reorder(&b, &o.order);
        let c = clusters(&sorted, o.runs);
        assert_eq!(c.iter().map(|c| c.range.clone()).collect::<Vec<_>>(), vec![0..4, 4..8]);
        assert_eq!(sorted.start_radius[0], 0.5);
        assert!(c[1].bounds.min.x > 40.0);
    }

    #[test]
    fn keyed_orders_sort_as_the_comparisons_they_replace() {
        // Cells on both sides of zero and far out, radii with ties, both zeros, NaNs and
        // infinities: the order is by cell (x, then z), the thickest first by `total_cmp`,
        // then by index.
        let radii = [
            0.5,
            0.5,
            -0.0,
            0.0,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            -1.0,
            1e-30,
            3.0,
        ];
        let mut b = CylinderBatch::default();
        let mut state = 7u32;
        for i in 0..5000usize {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = (state >> 8) as f32 / 256.0 - 32768.0;
            let z = (i as f32 * 37.0) % 200.0 - 100.0;
            let far = if i % 97 == 0 { 1e12 } else { 1.0 };
            let p = Vec3::new(x * far, 0.0, -z * far);
            let r = radii[(state >> 4) as usize % radii.len()];
            b.push(p, p, r, r, [0; 4]);
        }
        let r: Vec<f32> = b.start_radius.clone();
        let mut expected: Vec<u32> = (0..b.len() as u32).collect();
        expected.sort_by(|&a, &c| {
            let (pa, pc) = (midpoint(&b, a as usize), midpoint(&b, c as usize));
            cell(pa)
                .cmp(&cell(pc))
                .then(r[c as usize].total_cmp(&r[a as usize]))
                .then(a.cmp(&c))
        });
        let o = order(&b, &r);
        assert_eq!(o.order, expected);
        // Runs are the places where the cell changes, covering every place.
        let cells: Vec<(i32, i32)> = expected.iter().map(|&i| cell(midpoint(&b, i as usize))).collect();
        let mut starts: Vec<u32> = (1..cells.len())
            .filter(|&k| cells[k] != cells[k - 1])
            .map(|k| k as u32)
            .collect();
        starts.insert(0, 0);
        assert_eq!(o.runs.iter().map(|r| r.start).collect::<Vec<_>>(), starts);
        assert!(o.runs.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(o.runs.last().map(|r| r.end), Some(5000));
        let mut sorted = reorder(&b, &expected);
        assert!(
            sorted
                .start
                .iter()
                .zip(&expected)
                .all(|(p, &i)| *p == b.start[i as usize])
        );
        assert_eq!(sorted.dirty.take(), DirtyRange { start: 0, end: 5000 });
    }

    #[test]
    fn far_clusters_draw_fewer_twigs_on_coarser_rings() {
        let o = order(&two_trees(), &radii(&two_trees()));
        let b = reorder(&two_trees(), &o.order);
        let (r, c) = (radii(&b), clusters(&b, o.runs));
        let at = |z: f32| {
            let camera = Camera {
                position: Vec3::new(4.0, 2.0, z),
                target: Vec3::new(4.0, 2.0, 4.0),
                ..Camera::default()
            };
            View::new(camera, 1280, 720)
        };
        // Radii 0.5, 0.17, 0.056 and 0.019 m. Near, from 5.5 to 7.4 m, they are 57, 19, 6.3 and
        // 2.1 px at most and 42, 14, 4.7 and 1.6 px at least: the 16-sided ring takes the three
        // that may reach its band (above 8 / 1.5 px), the 8-sided the two that may be below 8 ×
        // 1.5 px, the 4-sided the one that may be below 2 × 1.5 px. Far, the twig of 0.09 px is
        // in the band of the sub-pixel cut, the thinnest is left out.
        let ranges = |rings: Option<[RingRange; 3]>| rings.map(|r| r.map(|r| (r.range, r.solid)));
        // Only the trunk and the branch are wholly 16-sided (at least 12 px); the rest fades.
        assert_eq!(
            ranges(c[0].rings(&at(10.0), &r)),
            Some([(3..4, 4..4), (2..4, 3..3), (0..3, 0..2)])
        );
        // Trunk and branch are wholly 4-sided; the twig of 0.09 px fades out.
        assert_eq!(
            ranges(c[0].rings(&at(400.0), &r)),
            Some([(0..3, 0..2), (0..0, 0..0), (0..0, 0..0)])
        );
        assert_eq!(c[0].rings(&at(9000.0), &r), None, "thinner than a tenth of a pixel");
        let unsorted = whole(&two_trees());
        assert_eq!(
            ranges(unsorted.rings(&at(400.0), &radii(&two_trees()))),
            Some([(0..8, 0..8), (0..0, 0..0), (0..0, 0..0)])
        );
    }
}
