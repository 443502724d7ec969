//! [`Runs`]: which runs of a growing array are in use, for arrays whose parts come and go
//! (a streamed world's grass blades per chunk, a renderer's table of resident trees).

use std::ops::Range;

/// Runs of an array owned by its users; freed runs are reused first fit, neighbours merged,
/// and a free run at the end cut off, so the array stays as long as what is in use plus gaps.
///
/// ```
/// use sylva_runtime::runs::Runs;
///
/// let mut runs = Runs::default();
/// let a = runs.take(10);
/// let b = runs.take(5);
/// assert_eq!((a.clone(), b.clone()), (0..10, 10..15));
/// assert_eq!(runs.give(a), None, "a hole: the array keeps its length");
/// assert_eq!(runs.take(4), 0..4, "first fit reuses the hole");
/// assert_eq!(runs.give(b), Some(4), "the end is free, merged with the hole's rest");
/// assert_eq!(runs.len(), 4);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Runs {
    free: Vec<Range<usize>>,
    len: usize,
}

impl Runs {
    /// A run of `n` elements: the first free run long enough, or new ones at the end.
    pub fn take(&mut self, n: usize) -> Range<usize> {
        if let Some(i) = self.free.iter().position(|r| r.len() >= n) {
            let r = self.free[i].clone();
            if r.len() == n {
                self.free.remove(i);
            } else {
                self.free[i].start += n;
            }
            return r.start..r.start + n;
        }
        self.len += n;
        self.len - n..self.len
    }

    /// Frees `r`; returns the new length when the array may be cut short.
    pub fn give(&mut self, r: Range<usize>) -> Option<usize> {
        if r.is_empty() {
            return None;
        }
        let at = self.free.partition_point(|f| f.start < r.start);
        self.free.insert(at, r);
        // Merge with the neighbours.
        if at + 1 < self.free.len() && self.free[at].end == self.free[at + 1].start {
            self.free[at].end = self.free.remove(at + 1).end;
        }
        if at > 0 && self.free[at - 1].end == self.free[at].start {
            self.free[at - 1].end = self.free.remove(at).end;
        }
        match self.free.last() {
            Some(last) if last.end == self.len => {
                self.len = last.start;
                self.free.pop();
                Some(self.len)
            }
            _ => None,
        }
    }

    /// The array's length: the end of the last run in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no run is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_reused_merged_and_cut_at_the_end() {
        let mut runs = Runs::default();
        let a = runs.take(10);
        let b = runs.take(5);
        let c = runs.take(7);
        assert_eq!((a.clone(), b.clone(), c.clone()), (0..10, 10..15, 15..22));
        assert_eq!(runs.give(b), None);
        let d = runs.take(3);
        assert_eq!(d, 10..13, "first fit reuses the hole");
        assert_eq!(runs.give(a), None);
        assert_eq!(runs.free, vec![0..10, 13..15]);
        assert_eq!(runs.give(d), None);
        assert_eq!(runs.free, vec![0..15]);
        // Freeing the last run leaves nothing in use: the array may shrink to zero.
        assert_eq!(runs.give(c), Some(0));
        assert!(runs.free.is_empty() && runs.is_empty());
        assert_eq!(runs.take(4), 0..4);
    }
}
