//! glTF 2.0 binary (`.glb`) export of a tree's mesh, through the mesh kit's one glTF writer.

use std::io::Write;

use glam::Vec3;
use serde_json::json;

use super::{TreeError, TreeMesh, UpAxis};
use crate::mesh_kit::gltf::{Glb, GlbError, Primitive};

/// Writes `mesh` as a binary glTF 2.0 file with one node, one mesh and one triangle primitive.
///
/// The primitive has `POSITION`, `NORMAL` and `TEXCOORD_0` (each with `min`/`max`) and `u32`
/// indices, each in its own buffer view of a single buffer stored in the BIN chunk. Coordinates
/// are converted from `up` to glTF's Y-up; `v` is flipped (`1 − v`) to glTF's top-left texture
/// origin. Tangents are not written: importers derive their own from the UVs. An empty mesh gives
/// a file with an empty node and no BIN chunk, because glTF forbids zero-length buffers.
///
/// Fails, writing nothing, when the mesh is inconsistent; otherwise fails only when `out` does.
pub fn write_glb(mesh: &TreeMesh, up: UpAxis, mut out: impl Write) -> Result<(), TreeError> {
    mesh.validate()?;
    let positions: Vec<Vec3> = mesh.positions.iter().map(|&p| up.to_y_up(p)).collect();
    let normals: Vec<Vec3> = mesh.normals.iter().map(|&n| up.to_y_up(n)).collect();
    let mut glb = Glb::new();
    let primitive = Primitive {
        positions: &positions,
        normals: &normals,
        uvs: Some(&mesh.uvs),
        colours: None,
        indices: &mesh.indices,
        material: None,
    };
    let node = match glb.mesh("tree", &[primitive], json!({})).map_err(glb_error)? {
        Some(m) => json!({ "name": "tree", "mesh": m }),
        None => json!({ "name": "tree" }),
    };
    glb.node(node, true);
    glb.write(&mut out).map_err(glb_error)
}

/// A glTF writer's error as the tree's.
fn glb_error(e: GlbError) -> TreeError {
    match e {
        GlbError::Io(e) => TreeError::from(e),
        other => TreeError::InvalidMesh(other.to_string()),
    }
}
