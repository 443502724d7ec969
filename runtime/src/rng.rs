//! Deterministic random streams.
//!
//! Every random number in Sylva comes from a stream that is a pure function of
//! `(world seed, key, purpose)`. Work split across threads therefore draws the
//! same numbers whatever the thread count: a chunk, an entity or a chain of
//! particles asks for its own stream instead of sharing one generator.
//!
//! ```
//! use rand::RngExt;
//! use sylva_runtime::rng::{stream, StreamKey};
//!
//! let mut a = stream(42, StreamKey::Chunk([3, -1, 0]), "rain");
//! let mut b = stream(42, StreamKey::Chunk([3, -1, 0]), "rain");
//! assert_eq!(a.random::<u64>(), b.random::<u64>());
//! ```

use rand::SeedableRng;
pub use rand_xoshiro::Xoshiro256PlusPlus;

/// What a random stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamKey {
    /// World-wide state that belongs to no chunk or entity.
    Global,
    /// A chunk of the world grid (x, y, z chunk coordinates).
    Chunk([i32; 3]),
    /// A stable per-item index: an entity's spawn index, a tree number, a chain number.
    Index(u64),
}

impl StreamKey {
    fn words(self) -> [u64; 2] {
        match self {
            StreamKey::Global => [0, 0],
            StreamKey::Chunk([x, y, z]) => [
                1 | (u64::from(x as u32) << 32),
                u64::from(y as u32) | (u64::from(z as u32) << 32),
            ],
            StreamKey::Index(i) => [2, i],
        }
    }
}

/// One SplitMix64 finalisation step: a fast, well-mixed 64-bit hash of `x`.
///
/// Use it to turn structured inputs (step number, module index, ...) into
/// independent-looking seeds without a generator.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Hashes a sequence of words into one seed, order-sensitively.
#[inline]
pub fn hash_words(words: &[u64]) -> u64 {
    words
        .iter()
        .fold(0x5359_4C56_4100_0001, |acc, &w| mix64(acc ^ mix64(w)))
}

/// Hashes a purpose label (FNV-1a), so streams for different jobs differ.
pub fn purpose_hash(purpose: &str) -> u64 {
    purpose.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The 64-bit seed of the stream for `(world_seed, key, purpose)`.
pub fn stream_seed(world_seed: u64, key: StreamKey, purpose: &str) -> u64 {
    let [k0, k1] = key.words();
    hash_words(&[world_seed, k0, k1, purpose_hash(purpose)])
}

/// The generator for `(world_seed, key, purpose)`; equal inputs give equal sequences.
pub fn stream(world_seed: u64, key: StreamKey, purpose: &str) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(stream_seed(world_seed, key, purpose))
}

/// A uniform `f32` in `[0, 1)` from a 64-bit hash, for stateless sampling.
#[inline]
pub fn unit_f32(hash: u64) -> f32 {
    (hash >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn draw(mut r: Xoshiro256PlusPlus) -> Vec<u64> {
        (0..8).map(|_| r.random::<u64>()).collect()
    }

    #[test]
    fn same_inputs_same_sequence() {
        let key = StreamKey::Chunk([5, -7, 0]);
        assert_eq!(draw(stream(9, key, "a")), draw(stream(9, key, "a")));
    }

    #[test]
    fn every_input_changes_the_sequence() {
        let base = draw(stream(9, StreamKey::Chunk([5, -7, 0]), "a"));
        assert_ne!(base, draw(stream(10, StreamKey::Chunk([5, -7, 0]), "a")));
        assert_ne!(base, draw(stream(9, StreamKey::Chunk([5, -6, 0]), "a")));
        assert_ne!(base, draw(stream(9, StreamKey::Chunk([-7, 5, 0]), "a")));
        assert_ne!(base, draw(stream(9, StreamKey::Chunk([5, -7, 0]), "b")));
        assert_ne!(base, draw(stream(9, StreamKey::Index(5), "a")));
        assert_ne!(
            draw(stream(9, StreamKey::Global, "a")),
            draw(stream(9, StreamKey::Index(0), "a"))
        );
    }

    #[test]
    fn sequence_is_pinned() {
        // Pinned so a dependency upgrade or a refactor that changes every
        // generated world cannot slip through unnoticed.
        assert_eq!(stream_seed(1, StreamKey::Global, "pin"), 12_673_948_110_267_097_463);
        assert_eq!(stream(1, StreamKey::Global, "pin").random::<u64>(), PINNED_FIRST);
    }
    const PINNED_FIRST: u64 = 16_248_323_858_576_793_093;

    #[test]
    fn unit_f32_is_in_range() {
        for i in 0..10_000u64 {
            let u = unit_f32(mix64(i));
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(unit_f32(u64::MAX), 1.0 - 1.0 / (1u64 << 24) as f32);
    }
}
