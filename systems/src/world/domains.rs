//! Basin domains: the macro scale of a world's terrain (docs/design/architecture.md, "Basin
//! domains").
//!
//! A coarse lattice of nodes `node_spacing` metres apart covers the plane.
//! One jittered site per square of `domain_chunks` chunks claims the nodes
//! nearest to it (a Voronoi partition); the nodes near a domain's border, within
//! a wandering coast, are sea at the fixed base level. Each domain is an island
//! whose coast is its outlet, so its drainage never depends on anything
//! outside it: solved once by stream-power erosion ([`crate::terrain::basin`]),
//! it gives the coarse heights and the rivers every chunk over it reads.
//!
//! The partition itself, the sites and the nodes each owns, is `sites`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use glam::Vec2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sylva_runtime::chunk_cache::{CacheRead, ChunkCache};
use sylva_runtime::rng::{StreamKey, hash_words, stream_seed, unit_f32};

use super::params::WorldBasins;
use super::sites::{Owner, Partition, Sites};
use crate::terrain::Fbm;
use crate::terrain::basin::{Basin, BasinGrid, solve};

/// Solved domains kept in memory; more are solved again when needed.
pub(super) const KEPT_DOMAINS: usize = 64;

/// Nodes of one channel polyline, smoothed, in world metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RiverPath {
    /// Points from the source down to the mouth or the junction.
    pub points: Vec<Vec2>,
    /// Water surface height at each point, metres; strictly descending.
    pub level: Vec<f32>,
    /// Drainage area at each point, km².
    pub area: Vec<f32>,
}

/// One solved domain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Domain {
    /// Lattice node of `heights[0]`.
    origin: [i64; 2],
    /// Nodes per row of `heights`.
    width: usize,
    /// Heights of the nodes around the domain (the domain's own ones valid), metres.
    heights: Vec<f32>,
    /// Drainage area of each node (its own cell included), m².
    area: Vec<f32>,
    /// The domain's rivers.
    pub rivers: Vec<RiverPath>,
}

/// The domains of a world: the partition, and the solved domains so far.
#[derive(Debug)]
pub struct Domains {
    params: WorldBasins,
    /// Hash of everything a domain depends on but its cell.
    key: u64,
    /// The sites and the nodes they own.
    partition: Partition,
    memo: Mutex<Memo>,
    cache: Mutex<Option<ChunkCache>>,
    /// Solved, from the cache, rejected, not written.
    counts: [AtomicU64; 4],
    /// Why the first domain that could not be written to the cache was not.
    write_error: Mutex<Option<String>>,
}

/// How the domains needed so far were obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DomainCounts {
    /// Solved here.
    pub solved: u64,
    /// Read from the cache.
    pub from_cache: u64,
    /// Cache files that could not be trusted, solved again.
    pub rejected: u64,
    /// Solved domains that could not be written to the cache.
    pub write_failed: u64,
}

/// Kept domains by cell, with when each was last asked for; `None` while one
/// is being solved.
#[derive(Debug, Default)]
struct Memo {
    clock: u64,
    slots: BTreeMap<[i64; 2], (u64, Option<Arc<Domain>>)>,
}

impl Domains {
    /// The domains of `params` for chunks of `chunk_size` metres (validated);
    /// `key` hashes the generation-relevant parameters and the seed, and names
    /// the domains' cache files.
    pub fn new(params: WorldBasins, chunk_size: f32, seed: u64, key: u64) -> Self {
        let per_chunk = params.nodes_per_chunk(chunk_size).unwrap_or(1);
        Self {
            partition: Partition {
                seed,
                side: i64::from(per_chunk) * i64::from(params.domain_chunks),
            },
            params,
            key,
            memo: Mutex::new(Memo::default()),
            cache: Mutex::new(None),
            counts: Default::default(),
            write_error: Mutex::new(None),
        }
    }

    /// Reads solved domains from `cache` and writes them there (the chunks'
    /// cache rules: checked header, atomic writes, a bad file solved again).
    pub fn use_cache(&self, cache: ChunkCache) {
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(cache);
    }

    /// How the domains needed so far were obtained.
    pub fn counts(&self) -> DomainCounts {
        let [solved, from_cache, rejected, write_failed] = self.counts.each_ref().map(|c| c.load(Ordering::Relaxed));
        DomainCounts {
            solved,
            from_cache,
            rejected,
            write_failed,
        }
    }

    /// Why the first domain that could not be written to the cache was not
    /// (its path and the OS error), if one could not.
    pub fn write_error(&self) -> Option<String> {
        self.write_error.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The cache key of domain `cell`.
    pub fn cache_key(&self, cell: [i64; 2]) -> u64 {
        hash_words(&[self.key, cell[0] as u64, cell[1] as u64, 0xd0_3a1e])
    }

    /// Domain `cell` from the cache, or solved (and cached).
    fn load_or_solve(&self, cell: [i64; 2]) -> Domain {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let key = self.cache_key(cell);
        if let Some(cache) = &cache {
            match cache.read::<Domain>(key) {
                CacheRead::Hit(d) => {
                    self.counts[1].fetch_add(1, Ordering::Relaxed);
                    return d;
                }
                CacheRead::Rejected(_) => {
                    self.counts[2].fetch_add(1, Ordering::Relaxed);
                }
                CacheRead::Missing => {}
            }
        }
        let d = self.solve(cell);
        self.counts[0].fetch_add(1, Ordering::Relaxed);
        // A cache that cannot be written costs a solve next time; it is counted
        // and its first error kept, for the run to say.
        if let Some(cache) = cache.filter(|c| !c.is_read_only())
            && let Err(e) = cache.write(key, &d)
        {
            self.counts[3].fetch_add(1, Ordering::Relaxed);
            let why = format!("{}: {e}", cache.path(key).display());
            self.write_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(why);
        }
        d
    }

    /// The parameters.
    pub fn params(&self) -> &WorldBasins {
        &self.params
    }

    /// Whether `node` (owned as `owner`) is sea: within the coast, which wanders
    /// by at most `coast_noise` (`coast`, the noise, is clamped), so every node
    /// next to another domain is sea.
    fn is_sea(&self, node: [i64; 2], owner: Owner, coast: &mut impl FnMut(f64, f64) -> f32) -> bool {
        let p = &self.params;
        if owner.border < 1.5 {
            return true;
        }
        let metres = owner.border * f64::from(p.node_spacing);
        let sea = |wander: f32| metres + f64::from(wander) < f64::from(p.coast);
        // The noise only decides within its reach of the coast (sums round
        // monotonically, so the bounds decide as every wander between them
        // would); a domain's inland nodes, most of them, skip it.
        let reach = p.coast_noise.abs();
        match (sea(reach), sea(-reach)) {
            (true, _) => true,
            (_, false) => false,
            _ => sea(coast(node[0] as f64, node[1] as f64).clamp(-1.0, 1.0) * p.coast_noise),
        }
    }

    /// The coast's noise, for [`Domains::is_sea`]: a sampler kept across the
    /// nodes of a solve, row by row.
    fn coast(&self) -> impl FnMut(f64, f64) -> f32 + use<> {
        Fbm {
            frequency: 1.0 / 40.0,
            amplitude: 1.0,
            octaves: 4,
            lacunarity: 2.0,
            gain: 0.5,
        }
        .sampler(stream_seed(self.partition.seed, StreamKey::Global, "world.coast"))
    }

    /// Starts solving on `pool` every domain that owns ground within `radius`
    /// metres of `at` (world x, z; sampled every quarter domain) and that is
    /// not kept or being solved, so the chunks over it find it ready instead
    /// of waiting for it.
    pub fn prefetch(self: &Arc<Self>, at: Vec2, radius: f32, pool: &rayon::ThreadPool) {
        let spacing = self.params.node_spacing;
        let (centre, r) = (at / spacing, (radius / spacing) as i64);
        let step = (self.partition.side / 4).max(1);
        let centre = [centre.x as i64, centre.y as i64];
        let sites = self.partition.sites(centre.map(|v| v - r), centre.map(|v| v + r));
        let mut sites = sites.cursor();
        let mut cells = std::collections::BTreeSet::new();
        for dz in (-r..=r).step_by(step as usize) {
            for dx in (-r..=r).step_by(step as usize) {
                if dx * dx + dz * dz <= r * r {
                    cells.insert(sites.nearest([centre[0] + dx, centre[1] + dz]));
                }
            }
        }
        for cell in cells {
            if self.claim(cell) {
                let me = Arc::clone(self);
                pool.spawn(move || {
                    me.domain(cell);
                });
            }
        }
    }

    /// Makes an entry for domain `cell` in the memo; false when it already has one.
    fn claim(&self, cell: [i64; 2]) -> bool {
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        if memo.slots.contains_key(&cell) {
            return false;
        }
        memo.clock += 1;
        let now = memo.clock;
        memo.slots.insert(cell, (now, None));
        true
    }

    /// Metres along a domain square's side.
    pub fn domain_size(&self) -> f32 {
        self.partition.side as f32 * self.params.node_spacing
    }

    /// The solved domain `cell`, solving it on this thread unless it is kept.
    ///
    /// Nothing waits for another thread's solve: a solve samples its uplift
    /// on the rayon pool, and a worker waiting there may pick up a chunk job
    /// that needs the same domain, which would then wait for itself. Two
    /// threads may solve the same domain at once; both get the same bits,
    /// and the first one kept is returned.
    pub fn domain(&self, cell: [i64; 2]) -> Arc<Domain> {
        if let Some(d) = self.kept(cell) {
            return d;
        }
        let solved = Arc::new(self.load_or_solve(cell));
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        memo.clock += 1;
        let now = memo.clock;
        let slot = memo.slots.entry(cell).or_insert((now, None));
        let kept = slot.1.get_or_insert(solved).clone();
        if memo.slots.len() > KEPT_DOMAINS {
            let oldest = memo.slots.iter().min_by_key(|(_, (used, _))| *used).map(|(c, _)| *c);
            oldest.map(|c| memo.slots.remove(&c));
        }
        kept
    }

    /// Domain `cell` if it is kept, marking it used; otherwise makes an empty
    /// entry for it (being solved).
    fn kept(&self, cell: [i64; 2]) -> Option<Arc<Domain>> {
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        memo.clock += 1;
        let now = memo.clock;
        match memo.slots.get_mut(&cell) {
            Some(slot) => {
                slot.0 = now;
                slot.1.clone()
            }
            None => {
                memo.slots.insert(cell, (now, None));
                None
            }
        }
    }

    /// Solves domain `cell` on the square of nodes around its own nodes.
    fn solve(&self, cell: [i64; 2]) -> Domain {
        let p = &self.params;
        let (lo, hi) = self.bounds(cell);
        let width = (hi[0] - lo[0]).max(hi[1] - lo[1]) as usize + 1;
        let mut initial = vec![p.sea_floor; width * width];
        let mut fixed = vec![true; width * width];
        let sites = self.partition.sites(lo, lo.map(|v| v + width as i64 - 1));
        let mut sites = sites.cursor();
        let mut coast = self.coast();
        for (i, (h, f)) in initial.iter_mut().zip(&mut fixed).enumerate() {
            let node = [lo[0] + (i % width) as i64, lo[1] + (i / width) as i64];
            let owner = sites.owner(node);
            if owner.cell == cell && !self.is_sea(node, owner, &mut coast) {
                let jitter = unit_f32(hash_words(&[
                    self.partition.seed,
                    node[0] as u64,
                    node[1] as u64,
                    0x1a4d,
                ]));
                *h = p.sea_level + 0.5 + jitter;
                *f = false;
            }
        }
        let mut uplift = vec![0.0f32; width * width];
        p.uplift.add_to(
            stream_seed(self.partition.seed, StreamKey::Global, "world.uplift"),
            lo,
            width,
            &mut uplift,
        );
        uplift.iter_mut().for_each(|u| *u = u.max(0.0));
        let grid = BasinGrid {
            width,
            height: width,
            spacing: p.node_spacing,
            initial: &initial,
            uplift: &uplift,
            fixed: &fixed,
        };
        match solve(&grid, &p.solver) {
            Ok(basin) => Domain {
                origin: lo,
                width,
                rivers: self.rivers(&basin, lo),
                area: basin.area,
                heights: basin.heights,
            },
            // Validated parameters on a grid whose ring is fixed always solve;
            // an island of sea alone has nothing to solve.
            Err(_) => Domain {
                origin: lo,
                width,
                area: vec![p.node_spacing * p.node_spacing; initial.len()],
                heights: initial,
                rivers: Vec::new(),
            },
        }
    }

    /// The rivers of `basin` (solved on nodes from `lo` on) in world metres,
    /// smoothed and joined.
    fn rivers(&self, basin: &Basin, lo: [i64; 2]) -> Vec<RiverPath> {
        let p = &self.params;
        let at = |n: u32| {
            let n = n as usize;
            let node = [lo[0] + (n % basin.width) as i64, lo[1] + (n / basin.width) as i64];
            Vec2::new(node[0] as f32, node[1] as f32) * p.node_spacing
        };
        let rivers = basin
            .rivers(p.river_area * 1e6)
            .iter()
            .map(|r| {
                smooth(RiverPath {
                    points: r.nodes.iter().map(|&n| at(n)).collect(),
                    level: r.nodes.iter().map(|&n| basin.heights[n as usize]).collect(),
                    area: r.nodes.iter().map(|&n| basin.area[n as usize] * 1e-6).collect(),
                })
            })
            .collect();
        join(rivers, p.sea_floor)
    }

    /// The smallest node rectangle around every node of domain `cell`, with a
    /// ring of one node (another domain's, so sea) around it.
    fn bounds(&self, cell: [i64; 2]) -> ([i64; 2], [i64; 2]) {
        let (mut lo, mut hi) = ([i64::MAX; 2], [i64::MIN; 2]);
        let side = self.partition.side;
        let start = cell.map(|c| (c - 1) * side);
        let sites = self.partition.sites(start, start.map(|v| v + 3 * side - 1));
        let mut sites = sites.cursor();
        for z in start[1]..start[1] + 3 * side {
            for x in start[0]..start[0] + 3 * side {
                if sites.nearest([x, z]) == cell {
                    lo = [lo[0].min(x), lo[1].min(z)];
                    hi = [hi[0].max(x), hi[1].max(z)];
                }
            }
        }
        (lo.map(|v| v - 1), hi.map(|v| v + 1))
    }

    /// The domains owning the `width × height` nodes from `origin` on: those
    /// [`heights`](Self::heights) of the same nodes reads.
    pub fn cells_over(&self, origin: [i64; 2], width: usize, height: usize) -> BTreeSet<[i64; 2]> {
        let sites = self.sites_over(origin, width, height);
        (0..height as i64)
            .into_par_iter()
            .map(|z| {
                let mut sites = sites.cursor();
                (0..width as i64)
                    .map(|x| sites.nearest([origin[0] + x, origin[1] + z]))
                    .collect::<BTreeSet<_>>()
            })
            .reduce(BTreeSet::new, |mut a, b| {
                a.extend(b);
                a
            })
    }

    /// The sites the `width × height` nodes from `origin` on may ask about.
    fn sites_over(&self, origin: [i64; 2], width: usize, height: usize) -> Sites {
        let last = [width, height].map(|n| n.saturating_sub(1) as i64);
        self.partition.sites(origin, [origin[0] + last[0], origin[1] + last[1]])
    }

    /// Domain `cell` solved afresh, neither kept nor read from or written to
    /// the cache (a bake decides what to do with it).
    pub fn solve_fresh(&self, cell: [i64; 2]) -> Domain {
        self.solve(cell)
    }

    /// Heights of the `width × height` nodes from `origin` on, and every domain
    /// they belong to.
    pub fn heights(&self, origin: [i64; 2], width: usize, height: usize) -> (Vec<f32>, Vec<Arc<Domain>>) {
        self.nodes(origin, [width, height], |d, i| d.heights[i])
    }

    /// Drainage areas (m²) of the `width × height` nodes from `origin` on, and
    /// every domain they belong to.
    pub fn areas(&self, origin: [i64; 2], width: usize, height: usize) -> (Vec<f32>, Vec<Arc<Domain>>) {
        self.nodes(origin, [width, height], |d, i| d.area[i])
    }

    /// Whether the domains are read from a read-only store (a baked world): the far field
    /// then reads only what the store holds.
    pub fn is_read_only(&self) -> bool {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(ChunkCache::is_read_only)
    }

    /// Heights of the `width × height` nodes from `origin` on, read from the domains that
    /// are kept or in the cache, solving none: the nodes of a domain neither holds are the
    /// sea floor. What a reader of a baked store draws far off is what was baked.
    pub fn stored_heights(&self, origin: [i64; 2], width: usize, height: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(width * height);
        self.each_node(
            origin,
            [width, height],
            |cell| self.stored(cell),
            |node| {
                out.push(node.map_or(self.params.sea_floor, |(d, i)| d.heights[i]));
            },
        );
        out
    }

    /// Domain `cell` if it is kept or in the cache, never solved (nor kept: the chunks'
    /// domains keep their places in the memo).
    fn stored(&self, cell: [i64; 2]) -> Option<Arc<Domain>> {
        let kept = self
            .memo
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .slots
            .get(&cell)
            .and_then(|s| s.1.clone());
        if kept.is_some() {
            return kept;
        }
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
        match cache.read::<Domain>(self.cache_key(cell)) {
            CacheRead::Hit(d) => Some(Arc::new(d)),
            CacheRead::Rejected(_) | CacheRead::Missing => None,
        }
    }

    /// `value(domain, index)` of each of the `size[0] × size[1]` nodes from
    /// `origin` on, read from the domain that owns it, and those domains.
    fn nodes(
        &self,
        origin: [i64; 2],
        size: [usize; 2],
        value: impl Fn(&Domain, usize) -> f32,
    ) -> (Vec<f32>, Vec<Arc<Domain>>) {
        let mut out = Vec::with_capacity(size[0] * size[1]);
        let domains = self.each_node(
            origin,
            size,
            |cell| Some(self.domain(cell)),
            |node| {
                out.push(node.map_or(0.0, |(d, i)| value(d, i)));
            },
        );
        (out, domains)
    }

    /// Visits each of the `size[0] × size[1]` nodes from `origin` on, row by row, with the
    /// domain `find` gives its owner (asked once per owner; none: the node has no domain)
    /// and the node's index in it; returns the domains found.
    fn each_node(
        &self,
        origin: [i64; 2],
        [width, height]: [usize; 2],
        find: impl Fn([i64; 2]) -> Option<Arc<Domain>>,
        mut visit: impl FnMut(Option<(&Domain, usize)>),
    ) -> Vec<Arc<Domain>> {
        let mut domains: BTreeMap<[i64; 2], Option<Arc<Domain>>> = BTreeMap::new();
        let sites = self.sites_over(origin, width, height);
        let mut sites = sites.cursor();
        for z in 0..height as i64 {
            for x in 0..width as i64 {
                let node = [origin[0] + x, origin[1] + z];
                let cell = sites.nearest(node);
                let d = domains.entry(cell).or_insert_with(|| find(cell));
                visit(d.as_deref().map(|d| {
                    let (lx, lz) = (node[0] - d.origin[0], node[1] - d.origin[1]);
                    (d, lz as usize * d.width + lx as usize)
                }));
            }
        }
        domains.into_values().flatten().collect()
    }
}

/// Ends every tributary on the smoothed river it joins: smoothing cut the
/// corner at the junction node, which would leave a gap of a few metres
/// between the two channels. A river that ends at the sea (`sea_floor`) stays.
fn join(mut rivers: Vec<RiverPath>, sea_floor: f32) -> Vec<RiverPath> {
    for k in 0..rivers.len() {
        let (Some(&end), Some(&last)) = (rivers[k].points.last(), rivers[k].level.last()) else {
            continue;
        };
        if last == sea_floor {
            continue;
        }
        let nearest = rivers
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .flat_map(|(_, r)| {
                (1..r.points.len()).map(move |i| {
                    let (a, b) = (r.points[i - 1], r.points[i]);
                    let d = b - a;
                    let t = ((end - a).dot(d) / d.length_squared().max(1e-12)).clamp(0.0, 1.0);
                    let at = a + d * t;
                    (
                        at.distance_squared(end),
                        at,
                        r.level[i - 1] + (r.level[i] - r.level[i - 1]) * t,
                    )
                })
            })
            .min_by(|x, y| x.0.total_cmp(&y.0));
        let Some((_, at, level)) = nearest else { continue };
        let r = &mut rivers[k];
        if level < last {
            let area = r.area.last().copied().unwrap_or(0.0);
            r.points.push(at);
            r.level.push(level);
            r.area.push(area);
        } else if let Some(p) = r.points.last_mut() {
            *p = at;
        }
    }
    rivers
}

/// Chaikin's corner cutting, twice: the D8 zigzag becomes a smooth curve.
/// Every new point is a convex combination of two neighbours, so levels still
/// descend strictly, and the end points stay where they were, so tributaries
/// still end on their main river's node.
fn smooth(mut r: RiverPath) -> RiverPath {
    for _ in 0..2 {
        if r.points.len() < 3 {
            return r;
        }
        let n = r.points.len();
        let mut out = RiverPath {
            points: vec![r.points[0]],
            level: vec![r.level[0]],
            area: vec![r.area[0]],
        };
        for i in 0..n - 1 {
            for (k, t) in [(0, 0.25f32), (1, 0.75)] {
                if (i == 0 && k == 0) || (i == n - 2 && k == 1) {
                    continue;
                }
                out.points.push(r.points[i].lerp(r.points[i + 1], t));
                out.level.push(r.level[i] + (r.level[i + 1] - r.level[i]) * t);
                out.area.push(r.area[i] + (r.area[i + 1] - r.area[i]) * t);
            }
        }
        out.points.push(r.points[n - 1]);
        out.level.push(r.level[n - 1]);
        out.area.push(r.area[n - 1]);
        r = out;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains() -> Domains {
        Domains::new(WorldBasins::default(), 256.0, 7, 0)
    }

    /// Every node next to another domain's node is sea, so no drainage
    /// crosses a border.
    #[test]
    fn borders_are_sea() {
        let d = domains();
        let sites = d.partition.sites([-300, -300], [300, 300]);
        let mut sites = sites.cursor();
        let mut coast = d.coast();
        let mut borders = 0;
        for z in -300..300 {
            for x in -300..300 {
                let (a, b) = (sites.owner([x, z]), sites.owner([x + 1, z]));
                if a.cell != b.cell {
                    borders += 1;
                    assert!(
                        d.is_sea([x, z], a, &mut coast) && d.is_sea([x + 1, z], b, &mut coast),
                        "({x}, {z})"
                    );
                }
            }
        }
        assert!(borders > 100);
    }

    /// Nodes decided by the coast's reach alone are decided as the noise
    /// decides them, on both sides of the band, and the band is sampled.
    #[test]
    fn the_coast_band_decides_as_the_noise() {
        let d = domains();
        let p = &d.params;
        let sites = d.partition.sites([-300, -300], [300, 300]);
        let (mut sites, mut coast, mut noise) = (sites.cursor(), d.coast(), d.coast());
        let mut seen = [0; 2];
        for z in -300..300 {
            for x in -300..300 {
                let owner = sites.owner([x, z]);
                let wander = noise(x as f64, z as f64).clamp(-1.0, 1.0) * p.coast_noise;
                let metres = owner.border * f64::from(p.node_spacing);
                let sea = owner.border < 1.5 || metres + f64::from(wander) < f64::from(p.coast);
                assert_eq!(d.is_sea([x, z], owner, &mut coast), sea, "({x}, {z})");
                let near = (metres - f64::from(p.coast)).abs() <= f64::from(p.coast_noise);
                seen[usize::from(near && owner.border >= 1.5)] += 1;
            }
        }
        assert!(seen[0] > 1000 && seen[1] > 1000, "{seen:?}");
    }

    /// A prefetched domain is kept once, whoever asks for it first.
    #[test]
    fn a_prefetched_domain_is_solved_once() {
        let d = Arc::new(Domains::new(
            WorldBasins {
                domain_chunks: 4,
                ..WorldBasins::default()
            },
            256.0,
            7,
            0,
        ));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let site = d.partition.site([0, 0]);
        let at = Vec2::new(site[0] as f32, site[1] as f32) * d.params.node_spacing;
        let node = site.map(|v| v as i64);
        assert_eq!(d.partition.sites(node, node).cursor().nearest(node), [0, 0]);
        d.prefetch(at, 10.0, &pool);
        assert!(!d.claim([0, 0]), "the prefetch claimed the domain");
        let first = d.domain([0, 0]);
        d.prefetch(at, 10.0, &pool);
        assert!(Arc::ptr_eq(&first, &d.domain([0, 0])));
        assert!((1..=2).contains(&d.counts().solved));
    }

    /// Smoothing keeps the ends and strictly descending levels.
    #[test]
    fn smoothing_keeps_ends_and_descent() {
        let r = RiverPath {
            points: vec![
                Vec2::ZERO,
                Vec2::new(1.0, 1.0),
                Vec2::new(2.0, 1.0),
                Vec2::new(3.0, 2.0),
            ],
            level: vec![9.0, 5.0, 4.0, 1.0],
            area: vec![1.0, 2.0, 3.0, 4.0],
        };
        let s = smooth(r.clone());
        assert_eq!((s.points[0], *s.points.last().unwrap()), (r.points[0], r.points[3]));
        assert!(s.level.windows(2).all(|w| w[1] < w[0]));
        assert_eq!(s.points.len(), s.level.len());
    }
}
