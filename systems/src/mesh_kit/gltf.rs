//! glTF 2.0 binary (`.glb`) documents built mesh by mesh: the one writer of Sylva's glTF files
//! (a tree's `--export` and a region's `sylva export`; docs/design/embedding.md, "glTF").

use std::io::Write;

use glam::{Quat, Vec2, Vec3};
use serde_json::{Value, json};

const MAGIC: u32 = 0x4654_6C67; // "glTF"
const VERSION: u32 = 2;
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const FLOAT: u32 = 5126;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const TRIANGLES: u32 = 4;
/// The extension that places one mesh many times.
pub const GPU_INSTANCING: &str = "EXT_mesh_gpu_instancing";
/// The glTF extension that gives a node coarser levels of detail.
pub const LOD: &str = "MSFT_lod";

/// An sRGB channel as linear light, in [0, 1] (the sRGB transfer function).
pub fn linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// One triangle primitive's arrays, Y up, metres (what [`Glb::mesh`] takes).
#[derive(Clone, Copy, Debug)]
pub struct Primitive<'a> {
    /// Vertex positions.
    pub positions: &'a [Vec3],
    /// Unit vertex normals.
    pub normals: &'a [Vec3],
    /// Texture coordinates with v up (flipped to glTF's top-left origin when written), if
    /// any: left out where no texture reads them.
    pub uvs: Option<&'a [Vec2]>,
    /// sRGB RGBA8 colour per vertex, if any (alpha linear), written as glTF's linear
    /// `COLOR_0` in normalized 16-bit channels.
    pub colours: Option<&'a [[u8; 4]]>,
    /// Three vertex indices per triangle.
    pub indices: &'a [u32],
    /// The material, an index [`Glb::material`] gave.
    pub material: Option<usize>,
}

/// Why a glTF document could not be written.
#[derive(Debug, thiserror::Error)]
pub enum GlbError {
    /// The document's binary part is over the format's 4 GiB.
    #[error("{0} bytes exceed the GLB size limit of 4 GiB")]
    TooLarge(usize),
    /// A primitive's arrays disagree.
    #[error("primitive `{name}`: {why}")]
    Inconsistent {
        /// The mesh's name.
        name: String,
        /// What disagrees.
        why: String,
    },
    /// The output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A glTF document under construction: meshes, materials and nodes, with their data in one
/// binary buffer.
#[derive(Debug, Default)]
pub struct Glb {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    meshes: Vec<Value>,
    materials: Vec<Value>,
    nodes: Vec<Value>,
    roots: Vec<usize>,
    extensions: Vec<&'static str>,
}

impl Glb {
    /// An empty document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of binary data so far.
    pub fn bin_bytes(&self) -> usize {
        self.bin.len()
    }

    /// A PBR material of `colour` (linear RGBA, multiplied by any vertex colours), rough and
    /// not metallic; `double_sided` for leaves and blades, `blend` for translucent water.
    pub fn material(&mut self, name: &str, colour: [f32; 4], double_sided: bool, blend: bool) -> usize {
        let mut m = json!({
            "name": name,
            "pbrMetallicRoughness": { "baseColorFactor": colour, "metallicFactor": 0.0, "roughnessFactor": 0.9 },
            "doubleSided": double_sided,
        });
        if blend {
            m["alphaMode"] = json!("BLEND");
        }
        self.materials.push(m);
        self.materials.len() - 1
    }

    /// Appends `bytes` as a buffer view (4-byte aligned) and returns its index.
    fn view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let mut v = json!({ "buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len() });
        if let Some(t) = target {
            v["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(v);
        self.views.len() - 1
    }

    /// An accessor of `count` elements over a new view of `bytes`.
    fn accessor(&mut self, bytes: &[u8], target: Option<u32>, mut accessor: Value) -> usize {
        accessor["bufferView"] = json!(self.view(bytes, target));
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// A float accessor of vectors of `N` components, with their bounds.
    fn floats<const N: usize>(
        &mut self,
        values: impl Iterator<Item = [f32; N]> + Clone,
        target: Option<u32>,
        kind: &str,
    ) -> usize {
        let (mut min, mut max) = ([f32::INFINITY; N], [f32::NEG_INFINITY; N]);
        let mut bytes = Vec::new();
        let mut count = 0;
        for v in values {
            for k in 0..N {
                min[k] = min[k].min(v[k]);
                max[k] = max[k].max(v[k]);
                bytes.extend_from_slice(&v[k].to_le_bytes());
            }
            count += 1;
        }
        let a =
            json!({ "componentType": FLOAT, "count": count, "type": kind, "min": min.to_vec(), "max": max.to_vec() });
        self.accessor(&bytes, target, a)
    }

    /// One primitive's accessors; `None` for a primitive without a triangle (glTF forbids
    /// empty buffers, so it is left out).
    fn primitive(&mut self, name: &str, p: &Primitive<'_>) -> Result<Option<Value>, GlbError> {
        let n = p.positions.len();
        let bad = |why: String| GlbError::Inconsistent {
            name: name.to_owned(),
            why,
        };
        if p.normals.len() != n || p.uvs.is_some_and(|u| u.len() != n) || p.colours.is_some_and(|c| c.len() != n) {
            return Err(bad(format!(
                "{n} positions, {} normals, and uvs or colours of other counts",
                p.normals.len()
            )));
        }
        if !p.indices.len().is_multiple_of(3) || p.indices.iter().any(|&i| i as usize >= n) {
            return Err(bad("indices are not whole triangles of its vertices".into()));
        }
        if p.indices.is_empty() {
            return Ok(None);
        }
        let position = self.floats(p.positions.iter().map(|v| v.to_array()), Some(ARRAY_BUFFER), "VEC3");
        let normal = self.floats(p.normals.iter().map(|v| v.to_array()), Some(ARRAY_BUFFER), "VEC3");
        let mut attributes = json!({ "POSITION": position, "NORMAL": normal });
        if let Some(uvs) = p.uvs {
            attributes["TEXCOORD_0"] =
                json!(self.floats(uvs.iter().map(|t| [t.x, 1.0 - t.y]), Some(ARRAY_BUFFER), "VEC2"));
        }
        if let Some(colours) = p.colours {
            let bytes: Vec<u8> = colours
                .iter()
                .flat_map(|&[r, g, b, a]| [linear(r), linear(g), linear(b), f32::from(a) / 255.0])
                .flat_map(|c| ((c * 65535.0).round() as u16).to_le_bytes())
                .collect();
            let a = json!({ "componentType": UNSIGNED_SHORT, "normalized": true, "count": n, "type": "VEC4" });
            attributes["COLOR_0"] = json!(self.accessor(&bytes, Some(ARRAY_BUFFER), a));
        }
        let bytes: Vec<u8> = p.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let a = json!({ "componentType": UNSIGNED_INT, "count": p.indices.len(), "type": "SCALAR" });
        let indices = self.accessor(&bytes, Some(ELEMENT_ARRAY_BUFFER), a);
        let mut primitive = json!({ "attributes": attributes, "indices": indices, "mode": TRIANGLES });
        if let Some(m) = p.material {
            primitive["material"] = json!(m);
        }
        Ok(Some(primitive))
    }

    /// A mesh of `primitives` named `name` with `extras`; `None` when no primitive has a
    /// triangle.
    pub fn mesh(&mut self, name: &str, primitives: &[Primitive<'_>], extras: Value) -> Result<Option<usize>, GlbError> {
        let mut made = Vec::new();
        for p in primitives {
            made.extend(self.primitive(name, p)?);
        }
        if made.is_empty() {
            return Ok(None);
        }
        self.meshes
            .push(json!({ "name": name, "primitives": made, "extras": extras }));
        Ok(Some(self.meshes.len() - 1))
    }

    /// A node; `root` puts it in the scene, otherwise it is a child named by its parent.
    pub fn node(&mut self, node: Value, root: bool) -> usize {
        self.nodes.push(node);
        let i = self.nodes.len() - 1;
        if root {
            self.roots.push(i);
        }
        i
    }

    /// A node drawing `mesh` once per placement (position, yaw about +Y, uniform scale) by
    /// `EXT_mesh_gpu_instancing`; `None` when there is no placement. The node itself stands at
    /// the first placement's position and the instances are placed from there, so a viewer
    /// without the extension still draws one of them where it belongs.
    pub fn instanced(
        &mut self,
        name: &str,
        mesh: usize,
        placements: &[(Vec3, f32, f32)],
        extras: Value,
    ) -> Option<usize> {
        let origin = placements.first()?.0;
        if !self.extensions.contains(&GPU_INSTANCING) {
            self.extensions.push(GPU_INSTANCING);
        }
        let translation = self.floats(placements.iter().map(|p| (p.0 - origin).to_array()), None, "VEC3");
        let rotation = self.floats(
            placements.iter().map(|p| Quat::from_rotation_y(p.1).to_array()),
            None,
            "VEC4",
        );
        let scale = self.floats(placements.iter().map(|p| [p.2; 3]), None, "VEC3");
        let node = json!({
            "name": name,
            "mesh": mesh,
            "translation": origin.to_array(),
            "extras": extras,
            "extensions": { GPU_INSTANCING: {
                "attributes": { "TRANSLATION": translation, "ROTATION": rotation, "SCALE": scale }
            } },
        });
        Some(self.node(node, false))
    }

    /// Gives node `base` coarser levels of detail by `MSFT_lod`: for each of `meshes`, coarsest
    /// last, a copy of the node drawing that mesh instead (its placements, instanced or not,
    /// shared), outside the scene as the extension asks. A viewer that knows the extension
    /// picks a level; one that does not draws the base.
    pub fn lod(&mut self, base: usize, meshes: &[usize]) {
        if meshes.is_empty() {
            return;
        }
        if !self.extensions.contains(&LOD) {
            self.extensions.push(LOD);
        }
        let ids: Vec<usize> = meshes
            .iter()
            .enumerate()
            .map(|(k, &mesh)| {
                let mut node = self.nodes[base].clone();
                node["mesh"] = json!(mesh);
                if let Some(name) = node["name"].as_str() {
                    node["name"] = json!(format!("{name} (level {} of {})", k + 1, meshes.len()));
                }
                self.node(node, false)
            })
            .collect();
        let extensions = &mut self.nodes[base]["extensions"];
        if !extensions.is_object() {
            *extensions = json!({});
        }
        extensions[LOD] = json!({ "ids": ids });
    }

    /// Writes the document as GLB: the JSON chunk, then the binary chunk (none when empty).
    pub fn write(self, out: &mut impl Write) -> Result<(), GlbError> {
        let mut doc = json!({
            "asset": { "version": "2.0", "generator": concat!("sylva ", env!("CARGO_PKG_VERSION")) },
            "scene": 0,
            "scenes": [{ "nodes": self.roots }],
            "nodes": self.nodes,
        });
        if !self.meshes.is_empty() {
            doc["meshes"] = json!(self.meshes);
            doc["accessors"] = json!(self.accessors);
            doc["bufferViews"] = json!(self.views);
            doc["buffers"] = json!([{ "byteLength": self.bin.len() }]);
        }
        if !self.materials.is_empty() {
            doc["materials"] = json!(self.materials);
        }
        if !self.extensions.is_empty() {
            // Used, not required: a viewer without instancing still opens the file and
            // draws each instanced mesh once.
            doc["extensionsUsed"] = json!(self.extensions);
        }
        let mut json_bytes = serde_json::to_vec(&doc).map_err(std::io::Error::from)?;
        // Chunks start on 4-byte boundaries: JSON is padded with spaces, BIN with zeros.
        json_bytes.resize(json_bytes.len().next_multiple_of(4), b' ');
        let bin = if self.meshes.is_empty() { &[][..] } else { &self.bin[..] };
        let bin_padded = bin.len().next_multiple_of(4);
        let bin_chunk = if bin.is_empty() { 0 } else { 8 + bin_padded };
        let total = 12 + 8 + json_bytes.len() + bin_chunk;
        let total_u32 = u32::try_from(total).map_err(|_| GlbError::TooLarge(total))?;
        let mut header = Vec::with_capacity(20);
        for word in [MAGIC, VERSION, total_u32, json_bytes.len() as u32, CHUNK_JSON] {
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
}
