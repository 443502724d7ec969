//! Byte views of plain data: what the uploads, the globals and the push
//! constants hand to Vulkan.

use sylva_runtime::extract::TreeAnchor;
use sylva_runtime::glam::Vec3;

/// Plain data whose every byte is initialised: no padding, no pointers, and
/// any byte pattern read back is harmless to the GPU.
///
/// # Safety
///
/// An implementing type must be `Copy`, and a primitive, an array of `Pod`, or
/// a `repr(C)` struct of `Pod` fields with no padding between or after them.
pub(crate) unsafe trait Pod: Copy {}

// SAFETY: a primitive: four bytes, every one a value bit.
unsafe impl Pod for f32 {}
// SAFETY: a primitive: four bytes, every one a value bit.
unsafe impl Pod for u32 {}
// SAFETY: an array of bytes: no padding between or after them.
unsafe impl Pod for [u8; 4] {}
// SAFETY: an array of `u32` (size 4, align 4): no padding between or after them.
unsafe impl Pod for [u32; 2] {}
// SAFETY: an array of `f32` (size 4, align 4): no padding between or after them.
unsafe impl Pod for [f32; 2] {}
// SAFETY: an array of `u16` (size 2, align 2): no padding between or after them.
unsafe impl Pod for [u16; 4] {}
// SAFETY: an array of `f32` (size 4, align 4): no padding between or after them.
unsafe impl Pod for [f32; 4] {}
// SAFETY: glam's `Vec3` is `repr(C)` of three `f32` (12 bytes, align 4), without the
// `cuda` feature that would align it to 16.
unsafe impl Pod for Vec3 {}
// SAFETY: repr(C) of a `Vec3` and an `f32` (16 bytes, align 4): no padding.
unsafe impl Pod for TreeAnchor {}

/// The bytes of one value.
pub(crate) fn bytes_of<T: Pod>(value: &T) -> &[u8] {
    slice_bytes(std::slice::from_ref(value))
}

/// The bytes of a slice.
pub(crate) fn slice_bytes<T: Pod>(values: &[T]) -> &[u8] {
    // SAFETY: `Pod` types have no padding, so all `size_of_val` bytes are initialised; the
    // view borrows `values` for its whole life and `u8` has no alignment requirement.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_are_the_little_endian_bytes() {
        assert_eq!(bytes_of(&1.0f32), 1.0f32.to_le_bytes());
        assert_eq!(slice_bytes(&[Vec3::new(1.0, 2.0, 3.0)]).len(), 12);
        assert_eq!(slice_bytes(&[[1u8, 2, 3, 4], [5, 6, 7, 8]]), [1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
