//! Property tests: random small terrains under every process at once never
//! panic, stay finite, respect the layer bound and conserve water and rock.

use proptest::prelude::*;
use sylva_runtime::Validate;
use sylva_systems::terrain::{
    Boundary, Eroder, Material, Rain, ScheduleParams, TerrainBalance, TerrainChunk, TerrainParams, Transport,
};

fn material(i: u8) -> Material {
    Material::ALL[usize::from(i) % Material::ALL.len()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_process_together_conserves_and_stays_bounded(
        size in 1u32..7,
        slots in 1u8..5,
        stack in prop::collection::vec((0u8..7, 0.01f32..5.0), 1..40),
        water in prop::collection::vec(0.0f32..3.0, 36),
        wrap in any::<bool>(),
        thesis_flux in any::<bool>(),
        sliding in any::<bool>(),
        debris in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut p = TerrainParams {
            schedule: ScheduleParams { water_every: 1, aging_every: 1, thermal_every: 1 },
            ..TerrainParams::default()
        };
        p.hydraulic.boundary = if wrap { Boundary::Wrap } else { Boundary::Closed };
        p.hydraulic.transport = if thesis_flux { Transport::ThesisFlux } else { Transport::Flux };
        p.hydraulic.evaporation = 0.0;
        p.hydraulic.capacity = 3.0;
        p.hydraulic.rain = Rain::Random { drops: 2, amount: 1.0 };
        p.thermal.layer_sliding = sliding;
        p.thermal.debris_to_regolith = debris;
        p.standing_water.min_depth = 0.0;
        p.aging.thresholds = [1, 2, 3, 4, 5, 6];
        prop_assert!(p.validate().is_ok());
        let mut c = TerrainChunk::new([0, 0], size, slots).unwrap();
        for (k, &(m, t)) in stack.iter().enumerate() {
            let cell = k as u32 % (size * size);
            prop_assert!(c.push_layer(cell % size, cell / size, material(m), t));
        }
        for (w, &v) in c.water_mut().iter_mut().zip(&water) {
            *w = v;
        }
        let (w0, m0) = (c.total_water(), c.total_rock());
        let mut books = TerrainBalance::default();
        let mut eroder = Eroder::default();
        for it in 1..=30 {
            eroder.step(&mut c, &p, seed, it, &mut books);
        }
        for z in 0..size {
            for x in 0..size {
                let col = c.column(x, z).unwrap();
                prop_assert!(col.len() <= usize::from(slots));
                prop_assert!(col.water().is_finite() && col.water() >= 0.0);
                prop_assert!(col.layers().all(|(_, t)| t.is_finite() && t >= 0.0));
            }
        }
        let w = c.total_water() + books.water_absorbed;
        prop_assert!((w - w0 - books.water_added).abs() <= 1e-4 * (1.0 + w0 + books.water_added));
        let m = c.total_rock() + c.total_sediment();
        prop_assert!((m - m0).abs() <= 1e-4 * (1.0 + m0), "{} vs {}", m, m0);
    }
}
