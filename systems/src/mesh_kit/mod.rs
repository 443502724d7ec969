//! The mesh kit: what an engine with its own renderer draws of a world, as plain vertex and
//! index data. There is one path from a chunk to triangles: the glTF region export and any
//! host renderer both go through here.
//!
//! Every [`Mesh`] is a triangle list in the world's frame: **Y up, metres**, triangles
//! counter-clockwise seen from their front, unit normals, colours as sRGB RGBA8 with linear alpha, as Sylva's renderer reads them (alpha 255:
//! opaque; leaves are cut to their shape in geometry, so no texture or alpha test is needed).
//!
//! - [`MeshKit::ground`]: a chunk's ground at a level of detail, with skirts, in world
//!   coordinates; neighbouring chunks share their border vertices and normals bit for bit.
//! - [`MeshKit::water`]: a chunk's rivers and sea as a surface over the water depth.
//! - [`MeshKit::tree`]: a tree variant's [`TreeLods`], in the tree's own frame (root at the
//!   origin), each level of detail its bark and its leaves (two-sided), with its bounds;
//!   [`place`] is the transform from a tree instance to the world; [`MeshKit::tree_cards`]
//!   its impostor card images from eight sides and above.
//! - [`MeshKit::blade`]: a grass species' blade at a root, at rest or played back in the
//!   world's wind ([`motion_sample`](crate::grass::sampler::motion_sample) is the playback
//!   alone: inputs, output and units, for a host that ports it to its shaders).
//! - [`MeshKit::chunk_bounds`]: a chunk's ground, water and trees, boxed.
//! - [`MeshKit::region_glb`]: chunks as one glTF document ([`gltf::Glb`]), trees instanced, their coarser levels by `MSFT_lod`.
//!
//! ```
//! # mod sylva { pub use sylva_runtime as runtime; pub use sylva_systems as systems; }
//! use sylva::runtime::glam::Vec3;
//! use sylva::runtime::aabb::Aabb;
//! use sylva::systems::mesh_kit::Mesh;
//! let mut m = Mesh::default();
//! m.push_triangle([Vec3::ZERO, Vec3::X, Vec3::Z], [200, 180, 140, 255]);
//! assert_eq!(m.triangle_count(), 1);
//! assert_eq!(m.normals[0], Vec3::NEG_Y); // counter-clockwise seen from below
//! assert_eq!(m.bounds(), Aabb { min: Vec3::ZERO, max: Vec3::new(1.0, 0.0, 1.0) });
//! ```

mod card_images;
pub mod gltf;
mod grass_blade;
mod ground;
mod region_export;
mod variants;

use std::io::Write;
use std::sync::{Arc, OnceLock};

use glam::{Quat, Vec2, Vec3};
use sylva_runtime::aabb::Aabb;

use crate::world::{ChunkPayload, WorldContent, WorldParams};

pub use card_images::{CARD_VIEWS, CardImage};
pub use ground::{GROUND_LEVELS, WATER_COLOUR};
pub use region_export::{RegionCounts, RegionExportError};
pub use variants::{TREE_LEVELS, TreeLod, TreeLods, leaf_mesh};

/// A triangle list with one normal, colour and uv per vertex (see the module docs for the
/// frame and units).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// Vertex positions, metres.
    pub positions: Vec<Vec3>,
    /// Unit vertex normals.
    pub normals: Vec<Vec3>,
    /// sRGB RGBA8 colour per vertex (alpha linear).
    pub colours: Vec<[u8; 4]>,
    /// Texture coordinates per vertex: on the ground, metres along x and z over 64 m; on bark,
    /// around the tube and along it; on a leaf, its card ([0, 1]², stalk at u = 0).
    pub uvs: Vec<Vec2>,
    /// Three vertex indices per triangle.
    pub indices: Vec<u32>,
}

/// Where point `p` of a model lands for a tree at `position`, turned by `yaw` radians about +Y
/// (glam's `Quat::from_rotation_y`, as Sylva's renderer turns it) and scaled by `scale`.
///
/// ```
/// # mod sylva { pub use sylva_runtime as runtime; pub use sylva_systems as systems; }
/// use sylva::runtime::glam::Vec3;
/// let p = sylva::systems::mesh_kit::place(Vec3::X, Vec3::new(10.0, 0.0, 0.0), std::f32::consts::FRAC_PI_2, 2.0);
/// assert!((p - Vec3::new(10.0, 0.0, -2.0)).length() < 1e-5);
/// ```
pub fn place(p: Vec3, position: Vec3, yaw: f32, scale: f32) -> Vec3 {
    position + Quat::from_rotation_y(yaw) * (p * scale)
}

impl Mesh {
    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the mesh has no triangle.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// The box around every vertex ([`Aabb::EMPTY`] for none).
    pub fn bounds(&self) -> Aabb {
        self.positions.iter().fold(Aabb::EMPTY, |b, &p| b.with(p))
    }

    /// Bytes of the five arrays.
    pub fn bytes(&self) -> usize {
        self.positions.len() * (12 + 12 + 4 + 8) + self.indices.len() * 4
    }

    /// Appends one vertex and returns its index.
    pub fn push_vertex(&mut self, position: Vec3, normal: Vec3, colour: [u8; 4], uv: Vec2) -> u32 {
        let i = self.positions.len() as u32;
        self.positions.push(position);
        self.normals.push(normal);
        self.colours.push(colour);
        self.uvs.push(uv);
        i
    }

    /// Appends one flat triangle (its own three vertices, the face's normal).
    pub fn push_triangle(&mut self, corners: [Vec3; 3], colour: [u8; 4]) {
        let [a, b, c] = corners;
        let n = (b - a).cross(c - a).normalize_or_zero();
        for (p, uv) in corners.into_iter().zip([Vec2::ZERO, Vec2::X, Vec2::Y]) {
            let i = self.push_vertex(p, n, colour, uv);
            self.indices.push(i);
        }
    }

    /// Appends `other`, each vertex moved by [`place`].
    pub fn append_placed(&mut self, other: &Mesh, position: Vec3, yaw: f32, scale: f32) {
        let base = self.positions.len() as u32;
        let turn = Quat::from_rotation_y(yaw);
        self.positions
            .extend(other.positions.iter().map(|&p| place(p, position, yaw, scale)));
        self.normals.extend(other.normals.iter().map(|&n| turn * n));
        self.colours.extend_from_slice(&other.colours);
        self.uvs.extend_from_slice(&other.uvs);
        self.indices.extend(other.indices.iter().map(|i| i + base));
    }

    /// Writes the mesh as Wavefront OBJ lines: `v x y z r g b` (colour in [0, 1], which Blender
    /// and MeshLab read), `vt`, `vn`, then `f` lines. `first` is the OBJ index of this mesh's
    /// first vertex (1 for a file of one mesh); returns the index after its last, for the next
    /// mesh in the same file.
    pub fn write_obj(&self, name: &str, first: u64, mut out: impl Write) -> std::io::Result<u64> {
        writeln!(out, "o {name}")?;
        for (p, c) in self.positions.iter().zip(&self.colours) {
            let [r, g, b, _] = c.map(|v| f32::from(v) / 255.0);
            writeln!(out, "v {} {} {} {r:.4} {g:.4} {b:.4}", p.x, p.y, p.z)?;
        }
        for t in &self.uvs {
            writeln!(out, "vt {} {}", t.x, t.y)?;
        }
        for n in &self.normals {
            writeln!(out, "vn {} {} {}", n.x, n.y, n.z)?;
        }
        for t in self.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| first + u64::from(i));
            writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
        }
        Ok(first + self.positions.len() as u64)
    }
}

/// Why the kit could not make a mesh.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum KitError {
    /// A level of detail beyond the last.
    #[error("level {asked} asked, the last is {last}")]
    Level {
        /// The level asked for.
        asked: usize,
        /// The last level there is.
        last: usize,
    },
    /// The chunk's ground is not the world's shape (a payload of another world).
    #[error("chunk {coord:?}: its ground has {found} samples and a ring of {ring}, the world's chunks {expected}")]
    Ground {
        /// The chunk.
        coord: [i32; 2],
        /// Samples it holds.
        found: usize,
        /// Ring samples it holds.
        ring: usize,
        /// Samples the world's chunks hold.
        expected: usize,
    },
    /// No such tree variant or grass species.
    #[error("no {what} {index}")]
    Missing {
        /// "tree model" or "grass species".
        what: &'static str,
        /// The index asked for.
        index: usize,
    },
}

/// Meshes of one world's chunks and content: cheap to clone and to send to the generation pool
/// ([`WorldStreamer::mesh_kit`](crate::world::WorldStreamer::mesh_kit)).
#[derive(Clone, Debug)]
pub struct MeshKit {
    cell_size: f32,
    chunk_cells: u32,
    content: Arc<WorldContent>,
    wind_power: f32,
    wave_speed: f32,
    /// Tree species' names, in the world's order.
    species: Arc<Vec<String>>,
    /// Each tree model's bounds, made on first use.
    tree_bounds: Arc<OnceLock<Vec<Aabb>>>,
}

impl MeshKit {
    /// The kit of a world with these parameters and grown content.
    pub fn new(params: &WorldParams, content: Arc<WorldContent>) -> Self {
        Self {
            cell_size: params.cell_size,
            chunk_cells: params.chunk_cells,
            content,
            wind_power: params.grass.wind_power,
            wave_speed: params.grass.wave_speed,
            species: Arc::new(params.trees.iter().map(|t| t.species.name.clone()).collect()),
            tree_bounds: Arc::new(OnceLock::new()),
        }
    }

    /// Distance between ground samples, metres.
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// Cells along a chunk's side.
    pub fn chunk_cells(&self) -> u32 {
        self.chunk_cells
    }

    /// The grown content the tree and blade meshes come from.
    pub fn content(&self) -> &WorldContent {
        &self.content
    }

    /// The box around a chunk's ground, water and trees (each tree's variant bounds placed).
    pub fn chunk_bounds(&self, payload: &ChunkPayload) -> Result<Aabb, KitError> {
        let b = self.ground(payload, 0)?.bounds().union(self.water(payload)?.bounds());
        Ok(b.union(self.trees_bounds(payload)?))
    }

    /// The box around `payload`'s trees: each tree's variant bounds, placed.
    pub fn trees_bounds(&self, payload: &ChunkPayload) -> Result<Aabb, KitError> {
        let mut b = Aabb::EMPTY;
        for t in &payload.trees {
            let Some(model) = self.content.model_id(usize::from(t.species), usize::from(t.variant)) else {
                continue;
            };
            let tree = self.tree_bounds(model as usize)?;
            b = b.union(tree.transformed(|p| place(p, t.position, t.yaw, t.scale)));
        }
        Ok(b)
    }
}
