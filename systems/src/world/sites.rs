//! The Voronoi partition of the basin domains: one jittered site per domain
//! square, and which site owns each lattice node.
//!
//! A node's owner is the nearest of the 3 × 3 sites around its square, and
//! its distance to the border the smallest to a bisector with the other
//! sites of the 5 × 5: 33 sites per node. A domain solve asks for the owner
//! of every node around the domain, so [`Sites`] hashes the sites of the
//! squares a rectangle of nodes can reach once, and looks them up.

use sylva_runtime::rng::{hash_words, unit_f32};

/// Squares along a side of the largest table [`Partition::sites`] makes;
/// sites beyond it are hashed as asked (the same bits, only slower).
const MAX_TABLE_SIDE: i64 = 64;

/// One jittered site per square of `side` × `side` nodes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Partition {
    /// The world's seed (a domain's own noise and jitter derive from it too).
    pub(super) seed: u64,
    /// Nodes along a domain square's side.
    pub(super) side: i64,
}

/// A node's domain and how far the node lies from the domain's border.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Owner {
    pub(super) cell: [i64; 2],
    /// Distance to the nearest bisector with another site, nodes.
    pub(super) border: f64,
}

impl Partition {
    /// The site of domain `cell`, in nodes: within the middle half of its
    /// square, so a node's nearest site lies in the 3 × 3 squares around its
    /// own, and the site across any border in the 5 × 5.
    pub(super) fn site(&self, cell: [i64; 2]) -> [f64; 2] {
        let h = hash_words(&[self.seed, cell[0] as u64, cell[1] as u64, 0xd0d0]);
        let u = [unit_f32(h), unit_f32(h.rotate_left(32))];
        std::array::from_fn(|k| (cell[k] as f64 + 0.25 + 0.5 * f64::from(u[k])) * self.side as f64)
    }

    /// The square `node` lies in.
    fn home(&self, node: [i64; 2]) -> [i64; 2] {
        node.map(|v| v.div_euclid(self.side))
    }

    /// The sites every node from `lo` to `hi` (inclusive) may ask about,
    /// hashed once.
    pub(super) fn sites(&self, lo: [i64; 2], hi: [i64; 2]) -> Sites {
        let (lo, hi) = (self.home(lo).map(|v| v - 2), self.home(hi).map(|v| v + 2));
        let width = (hi[0] - lo[0] + 1).max(hi[1] - lo[1] + 1);
        let width = if width <= MAX_TABLE_SIDE { width } else { 0 };
        let table = (0..width * width)
            .map(|i| self.site([lo[0] + i % width, lo[1] + i / width]))
            .collect();
        Sites {
            partition: *self,
            lo,
            width,
            table,
        }
    }
}

/// The sites of a square of domain squares, hashed once ([`Partition::sites`]).
pub(super) struct Sites {
    partition: Partition,
    /// The square of `table[0]`.
    lo: [i64; 2],
    /// Squares along the table's side.
    width: i64,
    table: Vec<[f64; 2]>,
}

impl Sites {
    /// The site of domain `cell`, from the table where it holds it.
    fn site(&self, cell: [i64; 2]) -> [f64; 2] {
        let [x, z] = [cell[0] - self.lo[0], cell[1] - self.lo[1]];
        if (0..self.width).contains(&x) && (0..self.width).contains(&z) {
            self.table[(z * self.width + x) as usize]
        } else {
            self.partition.site(cell)
        }
    }

    /// A cursor asking about nodes one after another, fastest along rows.
    pub(super) fn cursor(&self) -> Cursor<'_> {
        Cursor {
            sites: self,
            around: None,
        }
    }
}

/// Nodes' nearest sites and owners, with the sites around the last node's
/// square kept ([`Sites::cursor`]): consecutive nodes of a row share them.
pub(super) struct Cursor<'a> {
    sites: &'a Sites,
    around: Option<Around>,
}

impl Cursor<'_> {
    /// The domain whose site is nearest to `node`: its owner, without the
    /// distance to the border.
    pub(super) fn nearest(&mut self, node: [i64; 2]) -> [i64; 2] {
        let around = self.around(node);
        around.nearest(node).map_or(around.home, |(_, j)| around.cell(INNER[j]))
    }

    /// The domain of lattice node `node`.
    pub(super) fn owner(&mut self, node: [i64; 2]) -> Owner {
        let around = self.around(node);
        let p = node.map(|v| v as f64);
        let Some((d1, j)) = around.nearest(node) else {
            return Owner {
                cell: around.home,
                border: f64::INFINITY,
            };
        };
        let n = INNER[j];
        let gaps = *around.gaps[j].get_or_insert_with(|| {
            let s1 = around.sites[n];
            around
                .sites
                .map(|s| ((s[0] - s1[0]).powi(2) + (s[1] - s1[1]).powi(2)).sqrt())
        });
        // Every distance first, then their minimum in order: the divisions
        // go side by side (the nearest site's own is no border's).
        let to_bisector: [f64; 25] = std::array::from_fn(|i| {
            let s = around.sites[i];
            let dist2 = (s[0] - p[0]).powi(2) + (s[1] - p[1]).powi(2);
            (dist2 - d1) / (2.0 * gaps[i])
        });
        let mut border = f64::INFINITY;
        for (i, d) in to_bisector.into_iter().enumerate() {
            if i != n {
                border = border.min(d);
            }
        }
        Owner {
            cell: around.cell(n),
            border,
        }
    }

    /// The sites around `node`'s square, kept from the last node where it
    /// is in the same square.
    fn around(&mut self, node: [i64; 2]) -> &mut Around {
        let kept = self.around.as_ref().is_some_and(|a| {
            let side = self.sites.partition.side;
            (0..2).all(|k| (0..side).contains(&(node[k] - a.home[k] * side)))
        });
        if !kept {
            self.around = Some(Around::new(self.sites, self.sites.partition.home(node)));
        }
        self.around.as_mut().expect("made above")
    }
}

/// The 5 × 5 domain squares around a home square, row by row, and their sites.
struct Around {
    home: [i64; 2],
    sites: [[f64; 2]; 25],
    /// From each of the inner 3 × 3 sites ([`INNER`]) to every site, once
    /// an owner needed them.
    gaps: [Option<[f64; 25]>; 9],
}

/// The inner 3 × 3 of an [`Around`], row by row: where a node's nearest
/// site lies.
const INNER: [usize; 9] = [6, 7, 8, 11, 12, 13, 16, 17, 18];

impl Around {
    fn new(sites: &Sites, home: [i64; 2]) -> Self {
        let mut around = Around {
            home,
            sites: [[0.0; 2]; 25],
            gaps: [None; 9],
        };
        around.sites = std::array::from_fn(|i| sites.site(around.cell(i)));
        around
    }

    /// The domain square at index `i`.
    fn cell(&self, i: usize) -> [i64; 2] {
        [self.home[0] + (i % 5) as i64 - 2, self.home[1] + (i / 5) as i64 - 2]
    }

    /// The inner site nearest to `node` (the first of equals): its squared
    /// distance and its index in [`INNER`].
    fn nearest(&self, node: [i64; 2]) -> Option<(f64, usize)> {
        let p = node.map(|v| v as f64);
        let (mut best, mut at) = (f64::INFINITY, usize::MAX);
        for (j, i) in INNER.into_iter().enumerate() {
            let s = self.sites[i];
            let d = (s[0] - p[0]).powi(2) + (s[1] - p[1]).powi(2);
            if d < best {
                (best, at) = (d, j);
            }
        }
        (at != usize::MAX).then_some((best, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's owner as the partition defines it, every site hashed as
    /// asked: the nearest of the 3 × 3 sites around its square, and the
    /// distance to the nearest bisector with the other 24 of the 5 × 5.
    fn defined_owner(partition: Partition, node: [i64; 2]) -> Owner {
        let p = node.map(|v| v as f64);
        let home = partition.home(node);
        let dist2 = |s: [f64; 2]| (s[0] - p[0]).powi(2) + (s[1] - p[1]).powi(2);
        let mut nearest = (f64::INFINITY, home, [0.0; 2]);
        for dz in -1..=1 {
            for dx in -1..=1 {
                let cell = [home[0] + dx, home[1] + dz];
                let s = partition.site(cell);
                if dist2(s) < nearest.0 {
                    nearest = (dist2(s), cell, s);
                }
            }
        }
        let (d1, cell, s1) = nearest;
        let mut border = f64::INFINITY;
        for dz in -2..=2 {
            for dx in -2..=2 {
                let other = [home[0] + dx, home[1] + dz];
                if other != cell {
                    let s = partition.site(other);
                    let gap = ((s[0] - s1[0]).powi(2) + (s[1] - s1[1]).powi(2)).sqrt();
                    border = border.min((dist2(s) - d1) / (2.0 * gap));
                }
            }
        }
        Owner { cell, border }
    }

    /// Cursors give the owners and nearest domains the partition defines, bit
    /// for bit, from a table of sites or hashing them, along rows (where
    /// they keep the sites around) or jumping about.
    #[test]
    fn cursors_give_the_defined_owners() {
        let partition = Partition { seed: 7, side: 16 };
        let sites = partition.sites([-40, -40], [40, 40]);
        assert!(sites.width > 0);
        let far = partition.sites([0, 0], [10_000, 0]);
        assert_eq!(far.width, 0, "a table past its limit is not made");
        let (mut along, mut hashed) = (sites.cursor(), far.cursor());
        let rows = (-60..60).flat_map(|z| (-60..60).map(move |x| [x, z]));
        let jumps = (0..2_000i64).map(|k| [(k * 7_919) % 201 - 100, (k * 104_729) % 173 - 86]);
        for node in rows.chain(jumps) {
            let owner = defined_owner(partition, node);
            assert_eq!(along.owner(node), owner, "{node:?}");
            assert_eq!(along.nearest(node), owner.cell, "{node:?}");
            assert_eq!(hashed.owner(node), owner, "{node:?}");
        }
    }
}
