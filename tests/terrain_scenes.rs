//! The terrain scene files parse, validate, install and run.

use std::path::Path;

use sylva::Scene;
use sylva::runtime::{App, AppConfig};
use sylva::systems::terrain::{Heightfield, Material, Rain, TerrainChunk, TerrainParams, Transport, install, report};

/// Loads (and so validates) a scene that has a terrain section.
fn load(path: &str) -> Scene {
    let scene =
        Scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(path)).unwrap_or_else(|e| panic!("{e}"));
    assert!(scene.terrain.is_some(), "{path} has a terrain section");
    scene
}

fn terrain(scene: &Scene) -> &TerrainParams {
    scene.terrain.as_ref().expect("a terrain section")
}

#[test]
fn every_terrain_scene_parses_and_validates() {
    for (i, path) in [
        "thesis/landscape1.ron",
        "thesis/landscape2.ron",
        "thesis/landscape3.ron",
    ]
    .iter()
    .enumerate()
    {
        let s = load(path);
        let t = terrain(&s);
        assert_eq!(s.seed, i as u64 + 1);
        assert_eq!(t.size, 512);
        assert_eq!(
            t.hydraulic.rain,
            Rain::Random {
                drops: 10,
                amount: 20.0
            }
        );
        assert_eq!(t.hydraulic.springs[0].amount, 20.0);
        assert_eq!(
            (t.hydraulic.capacity, t.hydraulic.gravity, t.hydraulic.evaporation),
            (0.5, 0.9, 0.01)
        );
        assert_eq!(t.hydraulic.transport, Transport::SemiLagrangian);
        let m: Vec<_> = t.generator.layers.iter().map(|l| l.material).collect();
        assert_eq!(
            m,
            [
                Material::Granite,
                Material::Marble,
                Material::Limestone,
                Material::Sandstone
            ]
        );
    }
    assert_eq!(terrain(&load("thesis/terrain_fig5_12.ron")).generator.layers.len(), 4);
    assert!(terrain(&load("valley.ron")).hydraulic.springs.len() == 2);
}

#[test]
fn unknown_fields_are_refused() {
    let text = "(seed: 1, terrain: (size: 64, sizes: 3))";
    let r = Scene::from_str(text, "sizes.ron");
    assert!(r.is_err());
}

fn app(scene: &Scene, size: u32) -> App {
    let mut t = terrain(scene).clone();
    t.size = size;
    let mut app = App::new(AppConfig {
        seed: scene.seed,
        threads: 2,
        ..AppConfig::default()
    })
    .unwrap();
    install(&mut app, &t).unwrap();
    app
}

/// Thesis landscapes at a quarter of the size: 40 iterations of everything
/// keep the books, water and material (the semi-Lagrangian transport
/// conserves).
#[test]
fn thesis_landscapes_run_and_keep_their_books() {
    for path in [
        "thesis/landscape1.ron",
        "thesis/landscape2.ron",
        "thesis/landscape3.ron",
    ] {
        let s = load(path);
        let mut a = app(&s, 128);
        assert_eq!(a.world.count::<TerrainChunk>(), 1);
        a.advance(40);
        let r = report(&a);
        assert_eq!(r.iterations, 40);
        let (water, material) = (r.water.expect("a scene keeps books"), r.material.expect("books"));
        assert!(water.error.abs() <= 1e-5 * (water.added + water.initial), "{water:?}");
        assert!(material.error.abs() <= 1e-5 * material.initial, "{material:?}");
        assert!(r.score_after.is_finite() && r.score_before > 0.0);
    }
}

/// ε = σ/d̄ does not change when heights are scaled, so landscapes 1 and 2,
/// which differ only in amplitude, score the same for the same seed (the
/// thesis reports 0.0245 and 0.2525; its amplitude cannot have been a plain
/// factor).
#[test]
fn the_score_ignores_the_amplitude() {
    let score = |path| {
        let mut s = load(path);
        s.seed = 4;
        let a = app(&s, 128);
        report(&a).score_before
    };
    let (flat, rugged) = (score("thesis/landscape1.ron"), score("thesis/landscape2.ron"));
    assert!((flat - rugged).abs() < 1e-4 * rugged, "{flat} vs {rugged}");
}

/// The valley collects its rain: after 400 iterations the wettest tenth of
/// the cells holds more than 40 % of the water (uniform rain alone would give 10 %).
#[test]
fn valley_water_gathers_into_channels_and_lakes() {
    let s = load("valley.ron");
    let mut a = app(&s, 256);
    a.advance(400);
    let hf = Heightfield::from_world(&a.world.entities).unwrap();
    let mut w = hf.water.clone();
    w.sort_by(|a, b| b.total_cmp(a));
    let total: f32 = w.iter().sum();
    let top: f32 = w[..w.len() / 10].iter().sum();
    assert!(top > 0.4 * total, "top tenth holds {}", top / total);
}

/// Thesis §5.3 on the three 512² landscapes: erosion score every 10
/// iterations for water alone (Test 1, Tables 5.3–5.4) and thermal erosion
/// alone (Tables 5.12–5.13). Prints the series for comparison with the
/// thesis and checks the books: thermal erosion moves rock without losing any,
/// the water balance closes.
#[test]
#[ignore = "thesis reproduction: about a minute in release"]
fn thesis_score_tables() {
    use sylva::systems::terrain::{Eroder, ScheduleParams, ScoreMode, TerrainBalance, erosion_score};
    for path in [
        "thesis/landscape1.ron",
        "thesis/landscape2.ron",
        "thesis/landscape3.ron",
    ] {
        let s = load(path);
        for (label, schedule) in [
            (
                "water",
                ScheduleParams {
                    water_every: 1,
                    aging_every: 0,
                    thermal_every: 0,
                },
            ),
            (
                "thermal",
                ScheduleParams {
                    water_every: 0,
                    aging_every: 0,
                    thermal_every: 1,
                },
            ),
        ] {
            let p = TerrainParams {
                schedule,
                ..terrain(&s).clone()
            };
            let mut c = p.generator.generate(s.seed, [0, 0], p.size, p.max_layers).unwrap();
            let score = |c: &TerrainChunk| {
                let hf = Heightfield::from_chunk(c);
                erosion_score(&hf.ground, hf.width, ScoreMode::Thesis).unwrap()
            };
            let rock = c.total_rock();
            let mut series = vec![score(&c)];
            let mut eroder = Eroder::default();
            let mut books = TerrainBalance::default();
            let t = std::time::Instant::now();
            for it in 1..=100 {
                eroder.step(&mut c, &p, s.seed, it, &mut books);
                if it % 10 == 0 {
                    series.push(score(&c));
                }
            }
            let ms = t.elapsed().as_secs_f64() * 10.0;
            let text: Vec<String> = series.iter().map(|v| format!("{v:.4}")).collect();
            println!("{path} {label:7} {:.1} ms/iteration: {}", ms, text.join(" "));
            if label == "thermal" {
                assert!((c.total_rock() - rock).abs() < 1e-5 * rock);
            } else {
                let expected = books.water_added - books.water_evaporated - books.water_drained - books.water_absorbed;
                assert!((c.total_water() - expected).abs() < 1e-4 * books.water_added);
            }
        }
    }
}
