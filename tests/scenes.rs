//! Every scene file in the repository loads and validates as a `Scene`.

use std::path::{Path, PathBuf};

fn scene_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scene_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "ron") {
            out.push(path);
        }
    }
}

#[test]
fn every_scene_file_loads() {
    let mut files = Vec::new();
    scene_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes"), &mut files);
    assert!(files.len() > 20, "found only {} scene files", files.len());
    for path in &files {
        let scene = sylva::Scene::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!scene.name.is_empty(), "{}", path.display());
    }
}
