//! An allocator for hosts that want Sylva's large buffers on transparent huge pages (Linux).
//!
//! A fresh process touches every page of a buffer once before it can use it: a tree's mesh or a
//! 1024² chunk's planes fault in thousands of 4 KiB pages, at about 2 µs each, and then miss the
//! TLB on every row. Blocks of [`HugePages::THRESHOLD`] and more are therefore mapped on their
//! own, aligned to 2 MiB and advised onto huge pages (`MADV_HUGEPAGE`, which works where
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise` or `always`); smaller blocks go to the
//! system allocator unchanged. The `sylva` binary uses it; an engine opts in with:
//!
//! ```
//! #[global_allocator]
//! static ALLOCATOR: sylva::huge_pages::HugePages = sylva::huge_pages::HugePages;
//!
//! let planes = vec![0f32; 1 << 20]; // 4 MiB, mapped on its own: zero without being touched
//! assert_eq!(planes.as_ptr() as usize % (2 << 20), 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

/// The system allocator, with blocks of at least [`Self::THRESHOLD`] bytes mapped on 2 MiB
/// aligned, huge-page-advised memory of their own. See the [module docs](self).
#[derive(Clone, Copy, Debug, Default)]
pub struct HugePages;

/// A huge page on x86-64 and aarch64 with 4 KiB base pages.
const HUGE: usize = 2 << 20;

impl HugePages {
    /// The smallest block mapped on huge pages: one huge page.
    pub const THRESHOLD: usize = HUGE;

    fn own(layout: Layout) -> bool {
        layout.size() >= Self::THRESHOLD && layout.align() <= HUGE
    }
}

/// `size` rounded up to whole huge pages; `None` where that overflows.
fn whole_pages(size: usize) -> Option<usize> {
    size.checked_next_multiple_of(HUGE)
}

/// Maps `size` bytes (rounded up to whole huge pages) at a 2 MiB boundary, zeroed by the kernel
/// and advised onto huge pages; null where the kernel refuses.
fn map(size: usize) -> *mut u8 {
    let Some((len, over)) = whole_pages(size).and_then(|len| Some((len, len.checked_add(HUGE)?))) else {
        return ptr::null_mut();
    };
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches no
    // existing memory; the unaligned head and the tail beyond `len` are returned at once, and
    // only pages of this mapping are advised.
    unsafe {
        let raw = libc::mmap(
            ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if raw == libc::MAP_FAILED {
            return ptr::null_mut();
        }
        let head = (raw as usize).next_multiple_of(HUGE) - raw as usize;
        let start = raw.cast::<u8>().add(head);
        if head > 0 {
            libc::munmap(raw, head);
        }
        if HUGE - head > 0 {
            libc::munmap(start.add(len).cast(), HUGE - head);
        }
        // Advice only: where huge pages are off, the block is ordinary memory.
        libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE);
        start
    }
}

// SAFETY: every block is either the system allocator's, under the same layout it was asked
// with, or a mapping of its own made by `map` for a layout `own` accepts and unmapped whole for
// that layout; `own` depends on the layout only, so both sides of a pair take the same path.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::own(layout) {
            map(layout.size())
        } else {
            // SAFETY: forwarded under the caller's contract.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::own(layout) {
            // A fresh mapping is zero, and stays untouched until used.
            map(layout.size())
        } else {
            // SAFETY: forwarded under the caller's contract.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if Self::own(layout) {
            let len = whole_pages(layout.size()).expect("a mapped block's size rounded when it was made");
            // SAFETY: `ptr` is the start of a mapping of `len` bytes made by `map`.
            unsafe { libc::munmap(ptr.cast(), len) };
        } else {
            // SAFETY: forwarded under the caller's contract.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller promises `new_size` rounded to `layout.align()` does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (Self::own(layout), Self::own(new)) {
            // SAFETY: forwarded under the caller's contract.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            (true, true) if whole_pages(new_size) == whole_pages(layout.size()) => ptr,
            _ => {
                // SAFETY: `new` is non-zero in size (the caller's contract); the copy stays within
                // both blocks, which are distinct; the old block is freed under its own layout.
                unsafe {
                    let moved = self.alloc(new);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    /// Fills `n` bytes at `p` with a pattern of `seed`.
    unsafe fn fill(p: *mut u8, n: usize, seed: u8) {
        for i in (0..n).step_by(4093) {
            // SAFETY: the caller's block holds `n` bytes.
            unsafe { p.add(i).write(seed.wrapping_add(i as u8)) };
        }
    }

    /// Whether the `n` bytes at `p` still hold [`fill`]'s pattern of `seed`.
    unsafe fn holds(p: *const u8, n: usize, seed: u8) -> bool {
        (0..n).step_by(4093).all(|i| {
            // SAFETY: the caller's block holds `n` initialized bytes.
            let byte = unsafe { p.add(i).read() };
            byte == seed.wrapping_add(i as u8)
        })
    }

    #[test]
    fn large_blocks_are_aligned_zeroed_and_keep_their_bytes_through_every_realloc() {
        let a = HugePages;
        // SAFETY: every block is used within its size and freed once, under its last layout.
        unsafe {
            let p = a.alloc_zeroed(layout(3 * MIB));
            assert!(!p.is_null());
            assert_eq!(p as usize % HUGE, 0, "a large block starts on a huge page");
            assert!((0..3 * MIB).step_by(4096).all(|i| p.add(i).read() == 0));
            fill(p, 3 * MIB, 7);
            // Within its whole pages: the block stays where it is.
            let same = a.realloc(p, layout(3 * MIB), 4 * MIB);
            assert_eq!(same, p);
            // Beyond them: a new mapping with the old bytes.
            let grown = a.realloc(same, layout(4 * MIB), 9 * MIB);
            assert_eq!(grown as usize % HUGE, 0);
            assert!(holds(grown, 3 * MIB, 7));
            fill(grown, 9 * MIB, 9);
            // Below the threshold: back to the system allocator, bytes kept.
            let small = a.realloc(grown, layout(9 * MIB), MIB);
            assert!(holds(small, MIB, 9));
            // And up again.
            let large = a.realloc(small, layout(MIB), 2 * MIB);
            assert_eq!(large as usize % HUGE, 0);
            assert!(holds(large, MIB, 9));
            a.dealloc(large, layout(2 * MIB));
        }
    }

    #[test]
    fn small_and_over_aligned_blocks_are_the_system_allocators() {
        let a = HugePages;
        // SAFETY: every block is used within its size and freed once, under its layout.
        unsafe {
            let small = a.alloc(layout(4096));
            assert!(!small.is_null());
            fill(small, 4096, 1);
            assert!(holds(small, 4096, 1));
            a.dealloc(small, layout(4096));
            let wide = Layout::from_size_align(4 * MIB, 4 * MIB).unwrap();
            let p = a.alloc(wide);
            assert_eq!(p as usize % (4 * MIB), 0);
            a.dealloc(p, wide);
        }
    }

    #[test]
    fn an_impossible_size_is_refused_not_mapped() {
        assert!(map(usize::MAX - HUGE / 2).is_null());
        assert!(map(isize::MAX as usize).is_null(), "far beyond any address space");
    }
}
