//! Large fresh buffers on 2 MiB pages, where the kernel hands them out on request.
//!
//! Writing a fresh buffer faults its memory in one 4 KiB page at a time, at about 2 µs a fault
//! on the 2-core VMs Sylva is measured on: a fresh thesis Fig. 6.1b mesh (9 MB) spent over 4 ms
//! in the kernel, more than meshing itself took. Hosts whose transparent huge pages are
//! `madvise` only (a common default) give 2 MiB pages to ranges that ask, and one such page is
//! cleared in about the time of 100 small faults.

use std::collections::TryReserveError;

/// Bytes below which a buffer keeps small pages: a huge page is cleared whole, so it only pays
/// where the data fills at least half of one.
const MIN_BYTES: usize = 1 << 20;

/// The huge page size of x86-64 and of ARM with 4 KiB pages.
const HUGE_PAGE: usize = 2 << 20;

/// Room in `v` for `additional` more elements, as [`Vec::reserve`] makes it; where that takes a
/// fresh allocation of at least a mebibyte, the allocation asks for huge pages.
///
/// The capacity is then rounded up to whole huge pages less one small page: glibc maps such a
/// chunk on its own, header included, in a whole number of huge pages, which Linux aligns to a
/// huge page, so that each huge page of the buffer can be one (it must lie wholly inside the
/// advised range). The spare capacity stays virtual unless written.
///
/// Only a hint: contents never change, and elsewhere (other systems, allocators or kernel
/// settings) the buffer simply gets small pages.
pub(crate) fn reserve_huge<T>(v: &mut Vec<T>, additional: usize) {
    if try_reserve_huge(v, additional).is_err() {
        // Fails as `Vec::reserve` fails.
        v.reserve(additional);
    }
}

/// [`reserve_huge`] where the room may not be had: then `v` is left as it was.
pub(crate) fn try_reserve_huge<T>(v: &mut Vec<T>, additional: usize) -> Result<(), TryReserveError> {
    let size = std::mem::size_of::<T>();
    let needed = v.len().saturating_add(additional);
    let bytes = needed.saturating_mul(size);
    if needed <= v.capacity() || bytes < MIN_BYTES || bytes > isize::MAX as usize / 2 {
        return v.try_reserve(additional);
    }
    let small_page = 4096;
    let mapped = (bytes + small_page).div_ceil(HUGE_PAGE) * HUGE_PAGE;
    v.try_reserve_exact((mapped - small_page) / size - v.len())?;
    advise_huge(v.as_ptr().cast(), bytes, v.capacity() * size);
    Ok(())
}

/// `len` copies of `value`, on huge pages where the buffer fills at least one ([`reserve_huge`]).
///
/// For buffers that live long and are swept often, such as a terrain chunk's planes: a sweep
/// over tens of planes at once keeps finding 4 KiB page boundaries, where a page walk and a
/// restarted prefetch stream wait for memory (the hydraulic sweep of a 1024² chunk ran 7 %
/// faster on huge pages). A smaller buffer keeps small pages: one huge page would double it.
pub(crate) fn filled_huge<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut v = room_huge(len);
    v.resize(len, value);
    v
}

/// A copy of `src`, on huge pages as [`filled_huge`] puts them.
pub(crate) fn copied_huge<T: Copy>(src: &[T]) -> Vec<T> {
    let mut v = room_huge(src.len());
    v.extend_from_slice(src);
    v
}

/// An empty buffer with room for `len` elements, on huge pages where they fill at least one.
fn room_huge<T>(len: usize) -> Vec<T> {
    let mut v = Vec::new();
    if len.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGE {
        reserve_huge(&mut v, len);
    }
    v
}

/// Asks Linux to back the buffer of `capacity` bytes at `start` with huge pages, as far as its
/// first `used` bytes fill at least half of each.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn advise_huge(start: *const u8, used: usize, capacity: usize) {
    // SAFETY: `sysconf` only reads a configuration value.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let first = start as usize & !(page - 1);
    // A huge page that the data fills less than half of would be cleared whole for a few small
    // faults' worth of data.
    let filled = (start as usize + used + HUGE_PAGE / 2) & !(HUGE_PAGE - 1);
    let end = (start as usize + capacity).next_multiple_of(page).min(filled);
    if end <= first {
        return;
    }
    // SAFETY: both advices only change which pages back the range, never the contents or the
    // validity of any byte (a collapse copies what is there), so they are sound on any range,
    // including the allocator's own bytes that share the buffer's first page. Failures (a kernel
    // without transparent huge pages, or before Linux 6.1 for the collapse) leave small pages,
    // which is all a hint promises.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        // The allocator wrote its header into the first huge page before it was advised, so that
        // one is already mapped small and would fault in the rest small too; collapsing it now,
        // while it holds just the header, costs a fraction of those faults.
        if first.is_multiple_of(HUGE_PAGE) && first + HUGE_PAGE <= end {
            libc::madvise(first as *mut libc::c_void, HUGE_PAGE, libc::MADV_COLLAPSE);
        }
    }
}

/// Elsewhere there is no such hint (or, with other C libraries, no knowing how the allocator maps
/// a buffer), so buffers keep the pages they get.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn advise_huge(_start: *const u8, _used: usize, _capacity: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserves_what_is_asked_and_keeps_the_contents() {
        for len in [0, 3, 100_000] {
            let mut v: Vec<u32> = (0..len).collect();
            reserve_huge(&mut v, 700_000);
            assert!(v.capacity() >= len as usize + 700_000);
            assert!(v.iter().copied().eq(0..len));
            let capacity = v.capacity();
            reserve_huge(&mut v, 10);
            assert_eq!(v.capacity(), capacity, "room already there is kept");
        }
        let mut small: Vec<u8> = Vec::new();
        reserve_huge(&mut small, 1000);
        assert!(small.capacity() >= 1000);
    }

    #[test]
    fn fills_small_and_huge_buffers_alike() {
        for len in [0, 5, HUGE_PAGE / 4 - 1, HUGE_PAGE / 4 + 3] {
            let v = filled_huge(len, 7.5f32);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == 7.5));
        }
    }

    #[test]
    fn room_that_cannot_be_had_leaves_the_buffer_as_it_was() {
        let mut v: Vec<u64> = vec![1, 2, 3];
        assert!(try_reserve_huge(&mut v, usize::MAX / 16).is_err());
        assert_eq!(v, [1, 2, 3]);
    }
}
