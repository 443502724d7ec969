//! The thesis colonization presets parse strictly and grow.

use serde::Deserialize;
use sylva_runtime::Validate;
use sylva_systems::colonize::{ColonizeParams, Colonizer};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scene {
    seed: u64,
    colonize: ColonizeParams,
}

fn presets() -> Vec<(String, Scene)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenes/thesis");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("thesis scenes exist") {
        let path = entry.expect("readable entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let colonize = name == "fig3_2.ron"
            || name == "fig6_1a.ron"
            || (name.starts_with("fig5_") && name.contains('_') && {
                let fig: u32 = name[5..]
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap_or(0);
                (5..=12).contains(&fig) && name != "fig5_12.ron"
            });
        if !colonize {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let scene: Scene = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
            .from_str(&text)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push((name, scene));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_preset_parses_and_validates() {
    let all = presets();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(all.len(), 28, "{names:?}");
    for (name, scene) in &all {
        scene.colonize.validate().unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    let a = &all.iter().find(|(n, _)| n == "fig5_11a.ron").unwrap().1;
    let b = &all.iter().find(|(n, _)| n == "fig5_11b.ron").unwrap().1;
    assert_eq!((a.seed, a.colonize.count, a.colonize.iterations), (1, 5000, 1000));
    assert_eq!(
        (a.colonize.influence_radius, a.colonize.kill_distance, a.colonize.step),
        (250.0, 100.0, 20.0)
    );
    assert_eq!((a.colonize.max_no_growth, b.colonize.max_no_growth), (2, 1000));
}

#[test]
fn small_presets_grow_a_tree() {
    for (name, scene) in presets()
        .iter()
        .filter(|(n, _)| n.starts_with("fig5_9_iterations") || n == "fig5_8_degree1.ron")
    {
        let mut c = Colonizer::new(&scene.colonize, scene.seed).unwrap();
        c.run();
        let g = &c.finish().unwrap()[0];
        assert!(g.len() > 10, "{name}: {} segments", g.len());
        g.validate().unwrap();
    }
}
