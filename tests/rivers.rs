//! Rivers as a user meets them: the valley scene drains into one
//! dendritic network, and `sylva terrain --region` stitches a world's chunks
//! into one map whose rivers cross chunk borders unbroken.
mod support;

use std::path::Path;

use sylva::Scene;
use sylva::runtime::App;
use sylva::systems::terrain::report;

fn scene(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(path)
}

/// After 1000 iterations the valley's main basin obeys Hack's law like real
/// basins (main-stream length ∝ area^h, h within [0.45, 0.65]), holds no
/// closed depression deeper than 1 m, and drains far more than the 1,290
/// cells of the tilted-plane valley it replaced.
#[test]
fn the_valley_drains_into_one_dendritic_network() {
    let s = Scene::load(&scene("valley.ron")).unwrap();
    let mut app: App = sylva::build(&s, 2).unwrap();
    sylva::simulate(&mut app, 1000, 1, |_| {});
    let d = report(&app).drainage.expect("the valley has drainage measures");
    let h = d.hack_exponent.expect("the main basin has channels");
    assert!((0.45..=0.65).contains(&h), "Hack exponent {h}");
    assert_eq!(d.closed_depressions, 0);
    assert!(d.largest_area > 20_000.0, "largest drainage area {} m²", d.largest_area);
}

/// `sylva terrain --region` on a small world: a 4 × 4-chunk map as three
/// PNGs and a report whose rivers match across every inner border; a bad
/// region is refused with a message.
#[test]
fn terrain_region_stitches_measures_and_draws() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("islands.ron");
    std::fs::write(
        &path,
        r#"(name: "islands", seed: 11, world: (chunk_cells: 64, cell_size: 4.0,
            terrain: (max_layers: 4,
                basins: Some((domain_chunks: 8, node_spacing: 32.0, coast: 300.0, coast_noise: 150.0,
                              river_area: 0.05, solver: (steps: 120))),
                erosion: Some((iterations: 5)),
                generator: (height: Some(Fbm((frequency: 0.05, amplitude: 2.0, octaves: 3, lacunarity: 2.0, gain: 0.5))),
                            layers: [(material: Granite, thickness: Share(1.0))]))))"#,
    )
    .unwrap();
    let out = |name: &str| dir.path().join(name);
    let run = |region: &str| {
        support::sylva()
            .args(["terrain", path.to_str().unwrap(), "--region", region, "--threads", "2"])
            .args(["--heightmap", out("h.png").to_str().unwrap()])
            .args(["--false-colour", out("f.png").to_str().unwrap()])
            .args(["--material-map", out("m.png").to_str().unwrap()])
            .args(["--report", out("r.json").to_str().unwrap()])
            .output()
            .unwrap()
    };
    let ok = run("1,1,4,4");
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{stdout}{}", String::from_utf8_lossy(&ok.stderr));
    assert!(
        stdout.contains("16 chunks") && stdout.contains("heightmap scale: white = "),
        "{stdout}"
    );
    for png in ["h.png", "f.png", "m.png"] {
        let bytes = std::fs::read(out(png)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{png}");
    }
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(out("r.json")).unwrap()).unwrap();
    let t = &report["terrain"];
    assert_eq!(t["chunks"], 16);
    assert_eq!(t["cells"], 256 * 256);
    assert_eq!(t["border_mismatches"], 0);
    assert!(t["height_scale"].as_f64().unwrap() > 20.0);
    assert!(t["drainage"]["largest_area"].as_f64().unwrap() > 0.0);
    let bad = run("4,4,1,1");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("lies before the first"));
}
