//! glTF 2.0 binary (`.glb`) export.

use std::io::Write;

use glam::{Vec2, Vec3};
use serde_json::{Value, json};

use super::{TreeError, TreeMesh, UpAxis};

const MAGIC: u32 = 0x4654_6C67; // "glTF"
const VERSION: u32 = 2;
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"
const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const TRIANGLES: u32 = 4;

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
    let vertices = mesh.vertex_count();
    if vertices == 0 || mesh.is_empty() {
        let doc = document(json!([{ "name": "tree" }]), None);
        return write_container(&mut out, &doc, &[]);
    }

    let positions: Vec<Vec3> = mesh.positions.iter().map(|&p| up.to_y_up(p)).collect();
    let normals: Vec<Vec3> = mesh.normals.iter().map(|&n| up.to_y_up(n)).collect();
    let uvs: Vec<Vec2> = mesh.uvs.iter().map(|t| Vec2::new(t.x, 1.0 - t.y)).collect();

    let sizes = [vertices * 12, vertices * 12, vertices * 8, mesh.indices.len() * 4];
    let mut bin = Vec::with_capacity(sizes.iter().sum());
    for p in positions.iter().chain(&normals) {
        p.to_array()
            .iter()
            .for_each(|c| bin.extend_from_slice(&c.to_le_bytes()));
    }
    for t in &uvs {
        t.to_array()
            .iter()
            .for_each(|c| bin.extend_from_slice(&c.to_le_bytes()));
    }
    for i in &mesh.indices {
        bin.extend_from_slice(&i.to_le_bytes());
    }

    let mut offset = 0;
    let views: Vec<Value> = sizes
        .iter()
        .zip([ARRAY_BUFFER, ARRAY_BUFFER, ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER])
        .map(|(&length, target)| {
            let view = json!({ "buffer": 0, "byteOffset": offset, "byteLength": length, "target": target });
            offset += length;
            view
        })
        .collect();
    let (pmin, pmax) = bounds(positions.iter().map(|v| v.to_array()));
    let (nmin, nmax) = bounds(normals.iter().map(|v| v.to_array()));
    let (tmin, tmax) = bounds(uvs.iter().map(|v| v.to_array()));
    let accessors = json!([
        { "bufferView": 0, "componentType": FLOAT, "count": vertices, "type": "VEC3", "min": pmin, "max": pmax },
        { "bufferView": 1, "componentType": FLOAT, "count": vertices, "type": "VEC3", "min": nmin, "max": nmax },
        { "bufferView": 2, "componentType": FLOAT, "count": vertices, "type": "VEC2", "min": tmin, "max": tmax },
        { "bufferView": 3, "componentType": UNSIGNED_INT, "count": mesh.indices.len(), "type": "SCALAR" },
    ]);
    let gltf_mesh = json!({
        "name": "tree",
        "primitives": [{
            "attributes": { "POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2 },
            "indices": 3,
            "mode": TRIANGLES,
        }],
    });
    let buffers = Buffers {
        views,
        accessors,
        mesh: gltf_mesh,
        byte_length: bin.len(),
    };
    let doc = document(json!([{ "name": "tree", "mesh": 0 }]), Some(buffers));
    write_container(&mut out, &doc, &bin)
}

struct Buffers {
    views: Vec<Value>,
    accessors: Value,
    mesh: Value,
    byte_length: usize,
}

fn document(nodes: Value, buffers: Option<Buffers>) -> Value {
    let mut doc = json!({
        "asset": { "version": "2.0", "generator": concat!("sylva ", env!("CARGO_PKG_VERSION")) },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": nodes,
    });
    if let Some(b) = buffers {
        doc["meshes"] = json!([b.mesh]);
        doc["accessors"] = b.accessors;
        doc["bufferViews"] = Value::Array(b.views);
        doc["buffers"] = json!([{ "byteLength": b.byte_length }]);
    }
    doc
}

/// Per-component minimum and maximum, as glTF requires for `POSITION` accessors.
fn bounds<const N: usize>(values: impl Iterator<Item = [f32; N]>) -> (Vec<f32>, Vec<f32>) {
    let mut min = [f32::INFINITY; N];
    let mut max = [f32::NEG_INFINITY; N];
    for v in values {
        for k in 0..N {
            min[k] = min[k].min(v[k]);
            max[k] = max[k].max(v[k]);
        }
    }
    (min.to_vec(), max.to_vec())
}

fn write_container(out: &mut impl Write, doc: &Value, bin: &[u8]) -> Result<(), TreeError> {
    let mut json_bytes = serde_json::to_vec(doc).map_err(std::io::Error::from)?;
    // Chunks must start on 4-byte boundaries: JSON is padded with spaces, BIN with zeros.
    json_bytes.resize(json_bytes.len().next_multiple_of(4), b' ');
    let bin_padded = bin.len().next_multiple_of(4);
    let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin_padded };
    let total = 12 + 8 + json_bytes.len() + bin_chunk;
    let total = u32::try_from(total)
        .map_err(|_| TreeError::InvalidMesh(format!("{total} bytes exceed the GLB size limit of 4 GiB")))?;

    let mut header = Vec::with_capacity(20);
    for word in [MAGIC, VERSION, total, json_bytes.len() as u32, CHUNK_JSON] {
        header.extend_from_slice(&word.to_le_bytes());
    }
    out.write_all(&header)?;
    out.write_all(&json_bytes)?;
    if !bin.is_empty() {
        out.write_all(&(bin_padded as u32).to_le_bytes())?;
        out.write_all(&CHUNK_BIN.to_le_bytes())?;
        out.write_all(bin)?;
        out.write_all(&[0u8; 3][..bin_padded - bin.len()])?;
    }
    out.flush()?;
    Ok(())
}
