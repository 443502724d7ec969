//! A region of a world as one glTF document: each chunk's ground and water, and its trees
//! and shrubs as instances of their variants' meshes (docs/design/embedding.md, "glTF").

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde_json::json;

use super::gltf::{Glb, GlbError, Primitive};
use super::{KitError, Mesh, MeshKit, TREE_LEVELS};
use crate::world::ChunkPayload;

/// Why a region could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum RegionExportError {
    /// The kit refused a chunk or a level.
    #[error(transparent)]
    Kit(#[from] KitError),
    /// The document could not be built.
    #[error(transparent)]
    Glb(#[from] GlbError),
}

/// What went into a region's document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionCounts {
    /// Chunks.
    pub chunks: usize,
    /// Trees and shrubs placed.
    pub trees: u64,
    /// Tree variants (meshes instanced).
    pub variants: usize,
    /// Triangles of the ground and water.
    pub ground_triangles: u64,
    /// Triangles of the variants' meshes (each counted once, not per instance).
    pub variant_triangles: u64,
}

/// The arrays of `mesh` in `material`: colours, no uvs (no texture reads them).
fn primitive(mesh: &Mesh, material: usize) -> Primitive<'_> {
    Primitive {
        positions: &mesh.positions,
        normals: &mesh.normals,
        uvs: None,
        colours: Some(&mesh.colours),
        indices: &mesh.indices,
        material: Some(material),
    }
}

impl MeshKit {
    /// `chunks` as one glTF document: per chunk a node (`chunk X,Z`, extras `chunk` and, where
    /// `biome_of` names one, `biome`) with its ground at `ground_level` and its water, and per tree variant standing there an
    /// instanced node (`EXT_mesh_gpu_instancing`; extras `species`, `variant`) of the variant's
    /// mesh at `tree_level` (its bark and its leaves, two-sided), with each coarser level of
    /// the variant a `MSFT_lod` alternative of that node. Materials multiply the vertex
    /// colours; water blends.
    pub fn region_glb(
        &self,
        chunks: &[ChunkPayload],
        (ground_level, tree_level): (usize, usize),
        biome_of: &dyn Fn(&ChunkPayload) -> Option<String>,
    ) -> Result<(Glb, RegionCounts), RegionExportError> {
        if tree_level >= TREE_LEVELS {
            return Err(KitError::Level {
                asked: tree_level,
                last: TREE_LEVELS - 1,
            }
            .into());
        }
        let mut glb = Glb::new();
        let ground = glb.material("ground", [1.0; 4], false, false);
        let water = glb.material("water", [1.0; 4], false, true);
        let bark = glb.material("bark", [1.0; 4], false, false);
        let leaves = glb.material("leaves", [1.0; 4], true, false);
        let mut counts = RegionCounts {
            chunks: chunks.len(),
            ..RegionCounts::default()
        };
        // Per model, its mesh at each level from `tree_level` on (none where a level is empty).
        let mut variants: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for payload in chunks {
            let [x, z] = payload.coord;
            let mut children = Vec::new();
            let g = self.ground(payload, ground_level)?;
            let w = self.water(payload)?;
            counts.ground_triangles += (g.triangle_count() + w.triangle_count()) as u64;
            for (name, mesh, material) in [("ground", &g, ground), ("water", &w, water)] {
                let name = format!("{name} {x},{z}");
                if let Some(m) = glb.mesh(&name, &[primitive(mesh, material)], json!({ "chunk": [x, z] }))? {
                    children.push(glb.node(json!({ "name": name, "mesh": m }), false));
                }
            }
            let mut by_model: BTreeMap<u32, (u16, u16, Vec<_>)> = BTreeMap::new();
            for t in &payload.trees {
                let Some(model) = self.content.model_id(usize::from(t.species), usize::from(t.variant)) else {
                    continue;
                };
                let entry = by_model.entry(model).or_insert((t.species, t.variant, Vec::new()));
                entry.2.push((t.position, t.yaw, t.scale));
                counts.trees += 1;
            }
            for (model, (species, variant, placed)) in by_model {
                if let Entry::Vacant(slot) = variants.entry(model) {
                    let lods = self.tree(model as usize)?;
                    let mut meshes = Vec::new();
                    for (k, level) in lods.levels.iter().enumerate().skip(tree_level) {
                        let name = format!("{} {variant} level {k}", self.species_name(species));
                        let extras = json!({ "species": self.species_name(species), "variant": variant, "level": k });
                        let prims = [primitive(&level.bark, bark), primitive(&level.leaves, leaves)];
                        if let Some(m) = glb.mesh(&name, &prims, extras)? {
                            meshes.push(m);
                            counts.variant_triangles +=
                                (level.bark.triangle_count() + level.leaves.triangle_count()) as u64;
                        }
                    }
                    slot.insert(meshes);
                }
                let Some((&mesh, coarser)) = variants[&model].split_first() else {
                    continue;
                };
                let name = format!("{} {variant} in {x},{z}", self.species_name(species));
                let extras = json!({ "chunk": [x, z], "species": self.species_name(species), "variant": variant, "count": placed.len() });
                if let Some(node) = glb.instanced(&name, mesh, &placed, extras) {
                    glb.lod(node, coarser);
                    children.push(node);
                }
            }
            let mut extras = json!({ "chunk": [x, z] });
            if let Some(biome) = biome_of(payload) {
                extras["biome"] = json!(biome);
            }
            glb.node(
                json!({ "name": format!("chunk {x},{z}"), "children": children, "extras": extras }),
                true,
            );
        }
        counts.variants = variants.len();
        Ok((glb, counts))
    }

    /// The name of tree species `species` (its index when the world names none).
    fn species_name(&self, species: u16) -> String {
        self.species
            .get(usize::from(species))
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("species {species}"))
    }
}
