//! The committed SPIR-V in `shaders/spv/` is what shaderc makes of the GLSL in
//! `shaders/` (run with `--features shaderc`). Regenerate it with
//! `SYLVA_WRITE_SPIRV=1 cargo test -p sylva-vk --release --features shaderc --test shaders`.
#![cfg(feature = "shaderc")]

use std::path::PathBuf;

fn shaders_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shaders")
}

#[test]
fn committed_spirv_matches_the_glsl() {
    let write = std::env::var_os("SYLVA_WRITE_SPIRV").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for shader in sylva_vk::shaders::ALL {
        let source = std::fs::read_to_string(shaders_dir().join(shader.name)).unwrap();
        let spirv = sylva_vk::shaders::compile(shader.name, &source).unwrap_or_else(|e| panic!("{e}"));
        if write {
            std::fs::write(shaders_dir().join("spv").join(format!("{}.spv", shader.name)), &spirv).unwrap();
        } else if spirv != shader.spirv {
            stale.push(shader.name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale SPIR-V for {stale:?}: run SYLVA_WRITE_SPIRV=1 cargo test -p sylva-vk --release --features shaderc --test shaders"
    );
}

#[test]
fn every_glsl_source_is_listed() {
    let mut on_disk: Vec<String> = std::fs::read_dir(shaders_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".vert") || n.ends_with(".frag") || n.ends_with(".comp"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = sylva_vk::shaders::ALL.iter().map(|s| s.name.to_owned()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}
