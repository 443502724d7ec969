//! glTF 2.0 binary (`.glb`) export of a tree's mesh, bare or with its bark colour and leaves,
//! through the mesh kit's one glTF writer.

use std::io::Write;

use glam::Vec3;
use serde_json::json;

use super::{TreeError, TreeMesh, UpAxis};
use crate::mesh_kit::Mesh;
use crate::mesh_kit::gltf::{Glb, GlbError, Primitive, linear};

/// Writes `mesh` as a binary glTF 2.0 file with one node, one mesh and one triangle primitive.
///
/// The primitive has `POSITION`, `NORMAL` and `TEXCOORD_0` (each with `min`/`max`) and `u32`
/// indices, each in its own buffer view of a single buffer stored in the BIN chunk. Coordinates
/// are converted from `up` to glTF's Y-up; `v` is flipped (`1 − v`) to glTF's top-left texture
/// origin. Tangents are not written: importers derive their own from the UVs. An empty mesh gives
/// a file with an empty node and no BIN chunk, because glTF forbids zero-length buffers.
///
/// Fails, writing nothing, when the mesh is inconsistent; otherwise fails only when `out` does.
pub fn write_glb(mesh: &TreeMesh, up: UpAxis, out: impl Write) -> Result<(), TreeError> {
    write_tree(mesh, up, None, out)
}

/// Writes `mesh` as [`write_glb`] does, in a material of the `bark` colour (sRGB), with
/// `leaves` (the kit's [`leaf_mesh`](crate::mesh_kit::leaf_mesh), Y up, metres) as a second
/// primitive in a two-sided material that multiplies their vertex colours.
pub fn write_tree_glb(
    mesh: &TreeMesh,
    up: UpAxis,
    bark: [u8; 4],
    leaves: &Mesh,
    out: impl Write,
) -> Result<(), TreeError> {
    write_tree(mesh, up, Some((bark, leaves)), out)
}

fn write_tree(
    mesh: &TreeMesh,
    up: UpAxis,
    look: Option<([u8; 4], &Mesh)>,
    mut out: impl Write,
) -> Result<(), TreeError> {
    mesh.validate()?;
    let positions: Vec<Vec3> = mesh.positions.iter().map(|&p| up.to_y_up(p)).collect();
    let normals: Vec<Vec3> = mesh.normals.iter().map(|&n| up.to_y_up(n)).collect();
    let mut glb = Glb::new();
    let mut primitives = vec![Primitive {
        positions: &positions,
        normals: &normals,
        uvs: Some(&mesh.uvs),
        colours: None,
        indices: &mesh.indices,
        material: None,
    }];
    if let Some((bark, leaves)) = look {
        let [r, g, b, _] = bark;
        primitives[0].material = Some(glb.material("bark", [linear(r), linear(g), linear(b), 1.0], false, false));
        primitives.push(Primitive {
            positions: &leaves.positions,
            normals: &leaves.normals,
            uvs: None,
            colours: Some(&leaves.colours),
            indices: &leaves.indices,
            material: Some(glb.material("leaves", [1.0; 4], true, false)),
        });
    }
    let node = match glb.mesh("tree", &primitives, json!({})).map_err(glb_error)? {
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
