//! A cache of sines and cosines for the few distinct angles trees use over and over.

/// Sine and cosine of angles in degrees, remembered per distinct angle: a grammar turns by a
/// handful of constant angles thousands of times, and a mesh rotates its chains by a few multiples
/// of one angle, so `sin_cos` would otherwise dominate both.
/// Direct-mapped on a Fibonacci hash of the angle's bits; a collision just recomputes.
#[derive(Default)]
pub(crate) struct AngleCache {
    slots: [(u32, (f32, f32)); 16],
    filled: [bool; 16],
}

impl AngleCache {
    /// `degrees.to_radians().sin_cos()`, bit for bit.
    pub(crate) fn sin_cos(&mut self, degrees: f32) -> (f32, f32) {
        let bits = degrees.to_bits();
        let slot = (bits.wrapping_mul(0x9E37_79B9) >> 28) as usize;
        if self.filled[slot] && self.slots[slot].0 == bits {
            return self.slots[slot].1;
        }
        let value = degrees.to_radians().sin_cos();
        self.slots[slot] = (bits, value);
        self.filled[slot] = true;
        value
    }
}
