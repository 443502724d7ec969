//! A spatial index over points with payloads, shared by every system that asks
//! "nearest" or "within r": space colonization, placement, grass pushers, picking.
//!
//! A thin wrapper over kiddo's immutable k-d tree. Results come in a
//! deterministic order (distance, then insertion index) so that callers that
//! fold over them stay bit-identical across runs and thread counts.

use glam::Vec3;
use kiddo::{ImmutableKdTree, SquaredEuclidean};

/// A point set in 3D with one payload per point (an entity, a node index, ...).
///
/// ```
/// use glam::Vec3;
/// use sylva_runtime::SpatialIndex;
/// let idx = SpatialIndex::build(vec![(Vec3::ZERO, "a"), (Vec3::X * 5.0, "b")]);
/// assert_eq!(idx.nearest(Vec3::X * 4.0).map(|h| *h.payload), Some("b"));
/// assert_eq!(idx.within(Vec3::ZERO, 1.0).len(), 1);
/// ```
pub struct SpatialIndex<T> {
    tree: ImmutableKdTree<f32, 3>,
    points: Vec<Vec3>,
    payloads: Vec<T>,
}

/// One query result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit<'a, T> {
    /// The point's position.
    pub point: Vec3,
    /// Squared distance from the query point.
    pub distance_squared: f32,
    /// The point's payload.
    pub payload: &'a T,
    /// The point's index in build order.
    pub index: u32,
}

impl<T> SpatialIndex<T> {
    /// Builds the index. Points with non-finite coordinates are dropped,
    /// since no distance to them is meaningful.
    ///
    /// # Panics
    /// When given more than `u32::MAX` points.
    pub fn build(items: impl IntoIterator<Item = (Vec3, T)>) -> Self {
        let (points, payloads): (Vec<Vec3>, Vec<T>) = items.into_iter().filter(|(p, _)| p.is_finite()).unzip();
        assert!(points.len() <= u32::MAX as usize, "too many points for one index");
        let coords: Vec<[f32; 3]> = points.iter().map(|p| p.to_array()).collect();
        let tree = ImmutableKdTree::new_from_slice(&coords).expect("finite points always build a tree");
        Self { tree, points, payloads }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// True when the index holds no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The closest point to `q`; ties go to the lowest build index.
    pub fn nearest(&self, q: Vec3) -> Option<Hit<'_, T>> {
        if self.points.is_empty() || !q.is_finite() {
            return None;
        }
        let r = self
            .tree
            .query(&q.to_array())
            .nearest_one::<SquaredEuclidean<f32>>()
            .execute();
        // kiddo may return any of several equidistant points; settle ties by index.
        let best = r.distance;
        if best > 0.0 {
            let tied = self.within(q, best.sqrt() * (1.0 + 4.0 * f32::EPSILON));
            if let Some(first) = tied.into_iter().find(|h| h.distance_squared <= best) {
                return Some(first);
            }
        }
        Some(self.hit(r.item, r.distance))
    }

    /// All points within `radius` of `q` (inclusive), nearest first, ties by index.
    pub fn within(&self, q: Vec3, radius: f32) -> Vec<Hit<'_, T>> {
        if self.points.is_empty() || !q.is_finite() || radius.is_nan() || radius < 0.0 {
            return Vec::new();
        }
        let mut hits: Vec<Hit<'_, T>> = self
            .tree
            .query(&q.to_array())
            .within::<SquaredEuclidean<f32>>(radius * radius)
            .unsorted()
            .execute()
            .into_iter()
            .map(|r| self.hit(r.item, r.distance))
            .collect();
        hits.sort_by(|a, b| {
            a.distance_squared
                .total_cmp(&b.distance_squared)
                .then(a.index.cmp(&b.index))
        });
        hits
    }

    /// The point and payload at build index `i`.
    pub fn get(&self, i: u32) -> Option<(Vec3, &T)> {
        Some((*self.points.get(i as usize)?, self.payloads.get(i as usize)?))
    }

    fn hit(&self, item: u32, distance_squared: f32) -> Hit<'_, T> {
        let i = item as usize;
        Hit {
            point: self.points[i],
            distance_squared,
            payload: &self.payloads[i],
            index: item,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_within(pts: &[Vec3], q: Vec3, r: f32) -> Vec<u32> {
        let mut v: Vec<(f32, u32)> = pts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.distance_squared(q), i as u32))
            .filter(|(d, _)| *d <= r * r)
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        v.into_iter().map(|(_, i)| i).collect()
    }

    fn arb_points() -> impl Strategy<Value = Vec<Vec3>> {
        // A coarse grid of coordinates makes exact ties common, which is the hard case.
        prop::collection::vec((-20i32..20, -20i32..20, -20i32..20), 1..300).prop_map(|v| {
            v.into_iter()
                .map(|(x, y, z)| Vec3::new(x as f32, y as f32, z as f32) * 0.5)
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn within_matches_brute_force(pts in arb_points(), q in (-12f32..12.0, -12f32..12.0, -12f32..12.0), r in 0f32..6.0) {
            let q = Vec3::new(q.0, q.1, q.2);
            let idx = SpatialIndex::build(pts.iter().copied().enumerate().map(|(i, p)| (p, i)));
            let got: Vec<u32> = idx.within(q, r).iter().map(|h| h.index).collect();
            prop_assert_eq!(got, brute_within(&pts, q, r));
            for h in idx.within(q, r) {
                prop_assert_eq!(*h.payload as u32, h.index);
            }
        }

        #[test]
        fn nearest_matches_brute_force(pts in arb_points(), q in (-12f32..12.0, -12f32..12.0, -12f32..12.0)) {
            let q = Vec3::new(q.0, q.1, q.2);
            let idx = SpatialIndex::build(pts.iter().copied().map(|p| (p, ())));
            let best = pts
                .iter()
                .enumerate()
                .map(|(i, p)| (p.distance_squared(q), i as u32))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .unwrap();
            let hit = idx.nearest(q).unwrap();
            prop_assert_eq!(hit.distance_squared, best.0);
            prop_assert_eq!(hit.index, best.1);
        }
    }

    #[test]
    fn empty_and_non_finite_inputs() {
        let idx: SpatialIndex<u8> = SpatialIndex::build(Vec::new());
        assert!(idx.nearest(Vec3::ZERO).is_none());
        let idx = SpatialIndex::build(vec![(Vec3::NAN, 0u8), (Vec3::ONE, 1)]);
        assert_eq!(idx.len(), 1);
        assert!(idx.nearest(Vec3::NAN).is_none());
        assert!(idx.within(Vec3::ONE, f32::NAN).is_empty());
        assert!(idx.within(Vec3::ONE, -1.0).is_empty());
        assert_eq!(*idx.nearest(Vec3::ZERO).unwrap().payload, 1);
    }
}
