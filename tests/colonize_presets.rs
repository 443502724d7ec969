//! The thesis colonization presets parse strictly and grow.

use sylva::Scene;
use sylva::runtime::Validate;
use sylva::systems::colonize::{ColonizeParams, Colonizer};

fn presets() -> Vec<(String, Scene)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis");
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
        let scene = Scene::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(scene.colonize.is_some(), "{name} has a colonize section");
        out.push((name, scene));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn params(scene: &Scene) -> &ColonizeParams {
    scene.colonize.as_ref().expect("a colonize section")
}

#[test]
fn every_preset_parses_and_validates() {
    let all = presets();
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(all.len(), 28, "{names:?}");
    for (name, scene) in &all {
        params(scene).validate().unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    let a = &all.iter().find(|(n, _)| n == "fig5_11a.ron").unwrap().1;
    let b = &all.iter().find(|(n, _)| n == "fig5_11b.ron").unwrap().1;
    assert_eq!((a.seed, params(a).count, params(a).iterations), (1, 5000, 1000));
    assert_eq!(
        (params(a).influence_radius, params(a).kill_distance, params(a).step),
        (250.0, 100.0, 20.0)
    );
    assert_eq!((params(a).max_no_growth, params(b).max_no_growth), (2, 1000));
}

#[test]
fn small_presets_grow_a_tree() {
    for (name, scene) in presets()
        .iter()
        .filter(|(n, _)| n.starts_with("fig5_9_iterations") || n == "fig5_8_degree1.ron")
    {
        let mut c = Colonizer::new(params(scene), scene.seed).unwrap();
        c.run();
        let g = &c.finish().unwrap()[0];
        assert!(g.len() > 10, "{name}: {} segments", g.len());
        g.validate().unwrap();
    }
}
