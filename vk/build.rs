//! With the `shaderc` feature on Linux, links the glslang and SPIRV-Tools static
//! libraries that Debian's `libshaderc_combined.a` (libshaderc-dev) leaves out.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let shaderc = std::env::var_os("CARGO_FEATURE_SHADERC").is_some();
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if !(shaderc && linux) {
        return;
    }
    for lib in [
        "MachineIndependent",
        "GenericCodeGen",
        "OSDependent",
        "OGLCompiler",
        "SPIRV",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
        "glslang-default-resource-limits",
    ] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
}
