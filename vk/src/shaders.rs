//! The SPIR-V of `shaders/`, compiled ahead of time and embedded, and (with the
//! `shaderc` feature) the compiler that regenerates it.

use std::io::Cursor;
use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::error::RenderError;
use crate::handles::Owned;

/// Bytes with the alignment `read_spv` wants for a zero-copy read.
#[repr(C, align(4))]
struct Aligned<T: ?Sized>(T);

macro_rules! spirv {
    ($file:literal) => {{
        static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shaders/spv/",
            $file,
            ".spv"
        )));
        &BYTES.0
    }};
}

/// A shader of `shaders/`: its file name and its committed SPIR-V.
#[derive(Clone, Copy, Debug)]
pub struct Shader {
    /// File name under `shaders/`, e.g. `cylinder.vert`.
    pub name: &'static str,
    /// The committed SPIR-V (`shaders/spv/<name>.spv`).
    pub spirv: &'static [u8],
}

/// Instanced branch cylinders.
pub const CYLINDER_VERT: Shader = Shader {
    name: "cylinder.vert",
    spirv: spirv!("cylinder.vert"),
};
/// Terrain grid with vertex texture fetch.
pub const TERRAIN_VERT: Shader = Shader {
    name: "terrain.vert",
    spirv: spirv!("terrain.vert"),
};
/// Terrain colour: materials by slope and height, depth-tinted water.
pub const TERRAIN_FRAG: Shader = Shader {
    name: "terrain.frag",
    spirv: spirv!("terrain.frag"),
};
/// The sky's full-screen triangle at the far plane.
pub const SKY_VERT: Shader = Shader {
    name: "sky.vert",
    spirv: spirv!("sky.vert"),
};
/// The sky along each pixel's ray: gradient, haze, sun.
pub const SKY_FRAG: Shader = Shader {
    name: "sky.frag",
    spirv: spirv!("sky.frag"),
};
/// Screen-space point squares.
pub const POINT_VERT: Shader = Shader {
    name: "point.vert",
    spirv: spirv!("point.vert"),
};
/// Sun, ambient and fog for lit surfaces.
pub const LIT_FRAG: Shader = Shader {
    name: "lit.frag",
    spirv: spirv!("lit.frag"),
};
/// Lit surfaces keeping a dithered share of their pixels (rings cross-fading).
pub const LIT_FADE_FRAG: Shader = Shader {
    name: "lit_fade.frag",
    spirv: spirv!("lit_fade.frag"),
};
/// Unlit fogged points.
pub const POINT_FRAG: Shader = Shader {
    name: "point.frag",
    spirv: spirv!("point.frag"),
};

/// Grass blades: one quad per link, rows displaced by the baked motion.
pub const GRASS_VERT: Shader = Shader {
    name: "grass.vert",
    spirv: spirv!("grass.vert"),
};
/// Two-sided lit, fogged grass.
pub const GRASS_FRAG: Shader = Shader {
    name: "grass.frag",
    spirv: spirv!("grass.frag"),
};
/// The grass fetch evaluated for a list of queries (what tests read back).
pub const GRASS_PROBE_COMP: Shader = Shader {
    name: "grass_probe.comp",
    spirv: spirv!("grass_probe.comp"),
};
/// The crowns' wind (`wind.glsl`) evaluated for a list of queries (what tests read back).
pub const WIND_PROBE_COMP: Shader = Shader {
    name: "wind_probe.comp",
    spirv: spirv!("wind_probe.comp"),
};
/// The crowns' wind evaluated on the frame's wind grid, which the sways read.
pub const WIND_GRID_COMP: Shader = Shader {
    name: "wind_grid.comp",
    spirv: spirv!("wind_grid.comp"),
};

/// Leaves as cards turned by their normals, swaying in the wind.
pub const LEAF_VERT: Shader = Shader {
    name: "leaf.vert",
    spirv: spirv!("leaf.vert"),
};
/// Leaf-shaped cut, two-sided lighting with translucency, fog.
pub const LEAF_FRAG: Shader = Shader {
    name: "leaf.frag",
    spirv: spirv!("leaf.frag"),
};
/// Leaves in the shadow map: the leaf-shaped cut only.
pub const LEAF_SHADOW_FRAG: Shader = Shader {
    name: "leaf_shadow.frag",
    spirv: spirv!("leaf_shadow.frag"),
};

/// Impostor bake: a model's cylinders from one direction, orthographic, unlit.
pub const BAKE_CYLINDER_VERT: Shader = Shader {
    name: "bake_cylinder.vert",
    spirv: spirv!("bake_cylinder.vert"),
};
/// Impostor bake: a model's leaves, every one at full size, without sway.
pub const BAKE_LEAF_VERT: Shader = Shader {
    name: "bake_leaf.vert",
    spirv: spirv!("bake_leaf.vert"),
};
/// Impostor bake: albedo and coverage, and the normal in the model's frame.
pub const BAKE_FRAG: Shader = Shader {
    name: "bake.frag",
    spirv: spirv!("bake.frag"),
};
/// Far trees as camera-facing cards picking their baked directions.
pub const CARD_VERT: Shader = Shader {
    name: "card.vert",
    spirv: spirv!("card.vert"),
};
/// Cards alpha-tested and lit from the baked normals.
pub const CARD_FRAG: Shader = Shader {
    name: "card.frag",
    spirv: spirv!("card.frag"),
};

/// Overlay quads (text and its box) placed in pixels.
pub const OVERLAY_VERT: Shader = Shader {
    name: "overlay.vert",
    spirv: spirv!("overlay.vert"),
};
/// An overlay glyph's pixels, bit-tested.
pub const OVERLAY_FRAG: Shader = Shader {
    name: "overlay.frag",
    spirv: spirv!("overlay.frag"),
};

/// A model's segments placed per tree of the instanced trees' lists.
pub const INSTANCED_CYLINDER_VERT: Shader = Shader {
    name: "instanced_cylinder.vert",
    spirv: spirv!("instanced_cylinder.vert"),
};
/// A model's leaves placed per tree of the instanced trees' lists.
pub const INSTANCED_LEAF_VERT: Shader = Shader {
    name: "instanced_leaf.vert",
    spirv: spirv!("instanced_leaf.vert"),
};
/// The instanced trees' culling and levels of detail: lists and indirect commands.
pub const TREE_CULL_COMP: Shader = Shader {
    name: "tree_cull.comp",
    spirv: spirv!("tree_cull.comp"),
};

/// Grass blades expanded from the chunks' ground cover into the layers' parts of one buffer.
pub const GRASS_EXPAND_COMP: Shader = Shader {
    name: "grass_expand.comp",
    spirv: spirv!("grass_expand.comp"),
};

/// The far field's grid with vertex texture fetch, sunk under the streamed chunks.
pub const HORIZON_VERT: Shader = Shader {
    name: "horizon.vert",
    spirv: spirv!("horizon.vert"),
};
/// The far field's colour: ground by slope, the open sea, fog.
pub const HORIZON_FRAG: Shader = Shader {
    name: "horizon.frag",
    spirv: spirv!("horizon.frag"),
};

/// Every shader, for the staleness check.
pub const ALL: [Shader; 30] = [
    CYLINDER_VERT,
    TERRAIN_VERT,
    TERRAIN_FRAG,
    SKY_VERT,
    SKY_FRAG,
    POINT_VERT,
    LIT_FRAG,
    LIT_FADE_FRAG,
    POINT_FRAG,
    GRASS_VERT,
    GRASS_FRAG,
    GRASS_PROBE_COMP,
    WIND_PROBE_COMP,
    WIND_GRID_COMP,
    LEAF_VERT,
    LEAF_FRAG,
    LEAF_SHADOW_FRAG,
    OVERLAY_VERT,
    OVERLAY_FRAG,
    BAKE_CYLINDER_VERT,
    BAKE_LEAF_VERT,
    BAKE_FRAG,
    CARD_VERT,
    CARD_FRAG,
    INSTANCED_CYLINDER_VERT,
    INSTANCED_LEAF_VERT,
    TREE_CULL_COMP,
    GRASS_EXPAND_COMP,
    HORIZON_VERT,
    HORIZON_FRAG,
];

/// Creates a shader module from committed SPIR-V.
pub(crate) fn module(device: &Arc<Device>, shader: Shader) -> Result<Owned<vk::ShaderModule>, RenderError> {
    let words = ash::util::read_spv(&mut Cursor::new(shader.spirv))
        .map_err(|e| RenderError::Shader(format!("{}: {e}", shader.name)))?;
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: the device is live and the code is the SPIR-V words read above; the guard is
    // the module's one owner.
    unsafe {
        Owned::new(
            device,
            "vkCreateShaderModule",
            device.raw.create_shader_module(&info, None),
        )
    }
}

/// Compiles one GLSL source of `shaders/` to SPIR-V bytes with shaderc; the stage
/// comes from the file extension (`.vert`, `.frag`, `.comp`). `#include "file"` reads
/// `shaders/file` (shared code such as `grass_fetch.glsl`).
#[cfg(feature = "shaderc")]
pub fn compile(name: &str, source: &str) -> Result<Vec<u8>, ShaderError> {
    let kind = match name.rsplit('.').next() {
        Some("vert") => shaderc::ShaderKind::Vertex,
        Some("frag") => shaderc::ShaderKind::Fragment,
        Some("comp") => shaderc::ShaderKind::Compute,
        _ => return Err(ShaderError::Stage(name.to_owned())),
    };
    let compiler = shaderc::Compiler::new()?;
    let mut options = shaderc::CompileOptions::new()?;
    options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_3 as u32);
    options.set_optimization_level(shaderc::OptimizationLevel::Performance);
    options.set_include_callback(|requested, _, _, _| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shaders")
            .join(requested);
        let content = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(shaderc::ResolvedInclude {
            resolved_name: requested.to_owned(),
            content,
        })
    });
    let artifact = compiler.compile_into_spirv(source, kind, name, "main", Some(&options))?;
    Ok(artifact.as_binary_u8().to_vec())
}

/// Why a shader did not compile.
#[cfg(feature = "shaderc")]
#[derive(Debug, thiserror::Error)]
pub enum ShaderError {
    /// The file's extension names no shader stage.
    #[error("{0}: unknown shader stage (use .vert, .frag or .comp)")]
    Stage(String),
    /// shaderc refused the source (its message names the file and line) or could not start.
    #[error(transparent)]
    Shaderc(#[from] shaderc::Error),
}
