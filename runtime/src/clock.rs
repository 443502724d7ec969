//! Fixed simulation step with an accumulator.

/// Turns variable frame times into a whole number of fixed simulation steps.
///
/// Rendering runs at whatever rate the display allows; simulation always
/// advances by exactly `step` seconds, so results do not depend on frame rate.
/// When a frame is very long, at most `max_steps` are run and the rest of the
/// backlog is dropped, so a slow frame cannot snowball into slower ones.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedClock {
    step: f64,
    max_steps: u32,
    accumulator: f64,
}

impl FixedClock {
    /// A clock of `step` seconds per simulation step.
    ///
    /// # Panics
    /// When `step` is not a positive finite number or `max_steps` is zero
    /// (scene validation rejects both before they get here).
    pub fn new(step: f64, max_steps: u32) -> Self {
        assert!(
            step.is_finite() && step > 0.0,
            "fixed step must be positive, got {step}"
        );
        assert!(max_steps > 0, "max_steps must be at least 1");
        Self {
            step,
            max_steps,
            accumulator: 0.0,
        }
    }

    /// Seconds per step.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Adds `frame_seconds` of real time and returns how many steps to run now.
    pub fn advance(&mut self, frame_seconds: f64) -> u32 {
        if frame_seconds.is_finite() && frame_seconds > 0.0 {
            self.accumulator += frame_seconds;
        }
        let due = (self.accumulator / self.step).floor();
        let run = due.min(f64::from(self.max_steps)) as u32;
        self.accumulator -= due * self.step;
        if due > f64::from(self.max_steps) {
            self.accumulator = self.accumulator.min(self.step);
        }
        run
    }

    /// How far the next step has progressed, 0..1, for interpolating drawn state.
    pub fn alpha(&self) -> f64 {
        self.accumulator / self.step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_fractional_frames() {
        let mut c = FixedClock::new(0.01, 8);
        assert_eq!(c.advance(0.004), 0);
        assert_eq!(c.advance(0.004), 0);
        assert_eq!(c.advance(0.004), 1);
        assert!((c.alpha() - 0.2).abs() < 1e-9);
        assert_eq!(c.advance(0.025), 2);
    }

    #[test]
    fn long_frames_are_capped() {
        let mut c = FixedClock::new(0.01, 4);
        assert_eq!(c.advance(1.0), 4);
        assert!(c.alpha() < 1.0);
        assert_eq!(c.advance(0.0), 0);
    }

    #[test]
    fn bad_frame_times_are_ignored() {
        let mut c = FixedClock::new(0.01, 4);
        assert_eq!(c.advance(f64::NAN), 0);
        assert_eq!(c.advance(-1.0), 0);
        assert_eq!(c.advance(f64::INFINITY), 0);
    }
}
