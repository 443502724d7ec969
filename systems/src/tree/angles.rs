//! A cache of sines and cosines for the few distinct angles trees use over and over.

/// Sine and cosine of angles in degrees, remembered per distinct angle: a grammar turns by a
/// handful of constant angles thousands of times, and a mesh rotates its chains by a few multiples
/// of one angle, so `sin_cos` would otherwise dominate both.
///
/// Sets of two entries, picked by a Fibonacci hash of the angle's bits, the most recently used
/// first: two angles that share a set stay cached together (Fig. 6.1b's 31° and 190° do, and
/// taking turns in one slot they missed on most turns). A miss just recomputes.
#[derive(Default)]
pub(crate) struct AngleCache {
    sets: [[Entry; 2]; 16],
}

/// An angle's bits with its sine and cosine.
type Entry = Option<(u32, (f32, f32))>;

impl AngleCache {
    /// `degrees.to_radians().sin_cos()`, bit for bit.
    pub(crate) fn sin_cos(&mut self, degrees: f32) -> (f32, f32) {
        let bits = degrees.to_bits();
        let set = &mut self.sets[(bits.wrapping_mul(0x9E37_79B9) >> 28) as usize];
        match *set {
            [Some((key, value)), _] if key == bits => return value,
            [first, Some((key, value))] if key == bits => {
                *set = [Some((key, value)), first];
                return value;
            }
            _ => {}
        }
        let value = degrees.to_radians().sin_cos();
        *set = [Some((bits, value)), set[0]];
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angles_sharing_a_set_give_their_own_values() {
        let mut cache = AngleCache::default();
        for _ in 0..3 {
            for degrees in [31.0f32, 190.0, 120.0, 45.0, 0.0, -31.0] {
                let expected = degrees.to_radians().sin_cos();
                let got = cache.sin_cos(degrees);
                assert_eq!(
                    (got.0.to_bits(), got.1.to_bits()),
                    (expected.0.to_bits(), expected.1.to_bits())
                );
            }
        }
    }
}
