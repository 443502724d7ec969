//! A [`Colonizer`] in a snapshot: what it started from and how far it grew.
//!
//! Growth is deterministic and `step(n)` grows the same tree as n calls of
//! `step(1)`, so the attractors, the trunk targets, the parameters and the
//! iteration count are the whole state: loading grows the colonizer again to
//! where it was. That keeps snapshots small (no node, grid or scratch arrays)
//! and cannot drift from the growth code, at the price of regrowing on load.

use glam::Vec3;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ColonizeParams, Colonizer};

/// The saved form of a colonizer.
#[derive(Serialize, Deserialize)]
struct Record {
    params: ColonizeParams,
    attractors: Vec<Vec3>,
    targets: Vec<(Vec3, f32)>,
    /// Iterations that grew; growth after them stopped when `terminated`.
    iterations: u32,
    terminated: bool,
}

impl Serialize for Colonizer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Record {
            params: self.params().clone(),
            attractors: self.attractors().to_vec(),
            targets: self.targets().to_vec(),
            iterations: self.iterations(),
            terminated: self.termination().is_some(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Colonizer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let r = Record::deserialize(deserializer)?;
        if r.iterations > r.params.iterations {
            return Err(D::Error::custom(format!(
                "colonizer saved after {} iterations of at most {}",
                r.iterations, r.params.iterations
            )));
        }
        let mut c = Colonizer::with_attractors(&r.params, r.attractors, &r.targets).map_err(D::Error::custom)?;
        // Every iteration that does not end growth grows exactly once, so the count replays it;
        // a finished colonizer ran one more call, the one that found the reason to stop.
        c.step(r.iterations + u32::from(r.terminated));
        if c.iterations() != r.iterations || c.termination().is_some() != r.terminated {
            return Err(D::Error::custom(
                "colonizer does not regrow to its saved iteration (saved by another version?)",
            ));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::colonize::{Region, Shape};

    fn params() -> ColonizeParams {
        ColonizeParams {
            regions: vec![Region {
                shape: Shape::Sphere {
                    centre: Vec3::new(0.0, 0.0, 300.0),
                    radius: 200.0,
                },
                ..Region::default()
            }],
            count: 400,
            influence_radius: 120.0,
            kill_distance: 30.0,
            step: 15.0,
            iterations: 60,
            ..ColonizeParams::default()
        }
    }

    fn round_trip(c: &Colonizer) -> Colonizer {
        let bytes = bincode::serde::encode_to_vec(c, bincode::config::standard()).unwrap();
        bincode::serde::decode_from_slice(&bytes, bincode::config::standard())
            .unwrap()
            .0
    }

    #[test]
    fn a_colonizer_regrows_to_where_it_was_and_goes_on_the_same() {
        let mut whole = Colonizer::new(&params(), 3).unwrap();
        let mut half = Colonizer::new(&params(), 3).unwrap();
        half.step(7);
        let mut back = round_trip(&half);
        assert_eq!(back.iterations(), 7);
        assert_eq!(back.graphs(), half.graphs());
        assert_eq!(back.killed(), half.killed());
        whole.run();
        back.run();
        assert_eq!(back.graphs(), whole.graphs());
        assert_eq!(back.termination(), whole.termination());

        let done = round_trip(&whole);
        assert_eq!(done.termination(), whole.termination());
        assert_eq!(done.graphs(), whole.graphs());
    }

    #[test]
    fn a_record_that_does_not_regrow_is_an_error() {
        let mut c = Colonizer::new(&params(), 3).unwrap();
        let t = c.run();
        let record = Record {
            params: c.params().clone(),
            attractors: c.attractors().to_vec(),
            targets: c.targets().to_vec(),
            iterations: c.iterations() + 1,
            terminated: false,
        };
        let bytes = bincode::serde::encode_to_vec(&record, bincode::config::standard()).unwrap();
        let Err(e) = bincode::serde::decode_from_slice::<Colonizer, _>(&bytes, bincode::config::standard()) else {
            panic!("a colonizer past its termination ({t:?}) decoded");
        };
        assert!(e.to_string().contains("does not regrow"), "{e}");
    }
}
