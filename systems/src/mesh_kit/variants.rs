//! Tree variants as meshes with a chain of levels of detail (docs/design/embedding.md, "Tree
//! meshes").

use glam::{Vec2, Vec3};
use sylva_runtime::extract::{CylinderBatch, LeafBatch, TreeModel};

use sylva_runtime::aabb::Aabb;

use super::{KitError, Mesh, MeshKit};
use crate::ecology::pcg;
use crate::tree::model;

/// Levels of detail of a tree variant.
pub const TREE_LEVELS: usize = 4;

/// Per level: the share of segments kept (the thickest first), the sides around each, and the
/// share of leaves kept (each grown by 1/√share so the crown keeps its cover).
const LEVELS: [(f32, u32, f32); TREE_LEVELS] = [(1.0, 8, 1.0), (0.3, 5, 0.3), (0.06, 3, 0.08), (0.015, 3, 0.02)];

/// Where a leaf's edge lies at the card's x in [−1, 1] (stalk to tip): half the card's width,
/// as Sylva's renderer cuts its leaves: round at the stalk, pointed at the tip.
fn half_width(x: f32) -> f32 {
    let s = (0.5 * (x + 1.0)).clamp(0.0, 1.0);
    s.sqrt() * (1.0 - s).powf(0.8)
}

/// Card x of the leaf outline's vertices between stalk and tip.
const OUTLINE_X: [f32; 3] = [-0.5, 0.0, 0.5];

/// One level of detail of a tree variant, in the tree's own frame (root at the origin, Y up,
/// metres).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeLod {
    /// The branches as tubes, in the bark's colour.
    pub bark: Mesh,
    /// The leaves, cut to their outline; two-sided (draw them without back-face culling,
    /// flipping the normal on the back).
    pub leaves: Mesh,
}

/// A tree variant's meshes: its levels of detail, finest first, and its bounds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeLods {
    /// [`TREE_LEVELS`] levels, finest first: every segment with 8 sides and every leaf, then
    /// 30 % of the segments (the thickest) with 5 sides and 30 % of the leaves, then 6 % and
    /// 8 % with 3 sides, then 1.5 % and 2 % (the trunk and a crown's silhouette, for far
    /// trees).
    pub levels: Vec<TreeLod>,
    /// The box around every vertex of every level.
    pub bounds: Aabb,
    /// Height of the highest vertex above the root, metres.
    pub height: f32,
}

impl MeshKit {
    /// The meshes of tree model `model_id` (the index
    /// [`WorldContent::model_id`](crate::world::WorldContent::model_id) gives a species and
    /// variant, and a [`TreeInstances`](sylva_runtime::extract::TreeInstances) entry holds).
    pub fn tree(&self, model_id: usize) -> Result<TreeLods, KitError> {
        let m = self.tree_model(model_id)?;
        let levels: Vec<TreeLod> = LEVELS
            .iter()
            .map(|&(segments, sides, leaves)| TreeLod {
                bark: tubes(&m.cylinders, segments, sides),
                leaves: leaf_outlines(&m.leaves, leaves),
            })
            .collect();
        let bounds = levels
            .iter()
            .fold(Aabb::EMPTY, |b, l| b.union(l.bark.bounds()).union(l.leaves.bounds()));
        Ok(TreeLods {
            levels,
            height: if bounds.is_empty() { 0.0 } else { bounds.max.y },
            bounds,
        })
    }

    /// The box around every level of tree model `model_id` (every model's are made once, on
    /// first use, and kept by the kit and its clones).
    pub fn tree_bounds(&self, model_id: usize) -> Result<Aabb, KitError> {
        let all = self.tree_bounds.get_or_init(|| {
            (0..self.tree_count())
                .map(|m| self.tree(m).map_or(Aabb::EMPTY, |t| t.bounds))
                .collect()
        });
        all.get(model_id).copied().ok_or(KitError::Missing {
            what: "tree model",
            index: model_id,
        })
    }

    /// Number of tree models (variants of every species).
    pub fn tree_count(&self) -> usize {
        self.content.trees.iter().map(|k| k.variants.len()).sum()
    }

    /// Model `model_id` as Sylva's renderer draws it.
    fn tree_model(&self, model_id: usize) -> Result<TreeModel, KitError> {
        let mut left = model_id;
        for kind in &self.content.trees {
            if left < kind.variants.len() {
                return Ok(model(
                    &kind.variants[left],
                    &kind.leaves[left],
                    kind.scale,
                    kind.colour,
                    kind.leaf_colour,
                ));
            }
            left -= kind.variants.len();
        }
        Err(KitError::Missing {
            what: "tree model",
            index: model_id,
        })
    }
}

/// The thickest `share` of `segments` (at least one) as open tubes of `sides` sides.
fn tubes(segments: &CylinderBatch, share: f32, sides: u32) -> Mesh {
    let mut order: Vec<usize> = (0..segments.len()).collect();
    let thickness = |i: usize| segments.start_radius[i].max(segments.end_radius[i]);
    order.sort_by(|&a, &b| thickness(b).total_cmp(&thickness(a)).then(a.cmp(&b)));
    let kept = ((segments.len() as f32 * share).ceil() as usize).clamp(segments.len().min(1), segments.len());
    let mut mesh = Mesh::default();
    for &i in &order[..kept] {
        tube(&mut mesh, segments, i, sides);
    }
    mesh
}

/// Segment `i` as a tube of `sides` sides (a seam vertex repeated for the uvs).
fn tube(mesh: &mut Mesh, segments: &CylinderBatch, i: usize, sides: u32) {
    let (a, b) = (segments.start[i], segments.end[i]);
    let axis = (b - a).normalize_or_zero();
    if axis == Vec3::ZERO {
        return;
    }
    let helper = if axis.y.abs() < 0.99 { Vec3::Y } else { Vec3::X };
    let u = helper.cross(axis).normalize();
    let v = axis.cross(u);
    let colour = segments.colour[i];
    let base = mesh.positions.len() as u32;
    for k in 0..=sides {
        let turn = k as f32 / sides as f32;
        let angle = turn * std::f32::consts::TAU;
        let out = u * angle.cos() + v * angle.sin();
        mesh.push_vertex(a + out * segments.start_radius[i], out, colour, Vec2::new(turn, 0.0));
        mesh.push_vertex(b + out * segments.end_radius[i], out, colour, Vec2::new(turn, 1.0));
    }
    for k in 0..sides {
        let (a0, b0, a1, b1) = (base + 2 * k, base + 2 * k + 1, base + 2 * k + 2, base + 2 * k + 3);
        // Counter-clockwise from outside: the ring turns from u toward v = axis × u.
        mesh.indices.extend_from_slice(&[a0, a1, b1, a0, b1, b0]);
    }
}

/// Three values in [0, 1) from a position: the hash Sylva's leaf shader turns its cards by.
fn hash3(p: Vec3) -> Vec3 {
    let fract = |v: Vec3| v - v.floor();
    let mut p = fract(p * Vec3::new(0.1031, 0.1030, 0.0973));
    p += Vec3::splat(p.dot(Vec3::new(p.y, p.x, p.z) + 33.33));
    fract((Vec3::new(p.x, p.x, p.y) + Vec3::new(p.y, p.x, p.x)) * Vec3::new(p.z, p.y, p.x))
}

/// Every leaf of `leaves` (a model's or a placed tree's, Y up, metres) as its outline, eight
/// vertices in its plane turned and tinted as Sylva's renderer draws it: a tree's leaves for a
/// host or an exporter.
pub fn leaf_mesh(leaves: &LeafBatch) -> Mesh {
    leaf_outlines(leaves, 1.0)
}

/// The lowest-ranked `share` of `leaves` (at least one), each grown by 1/√share, as leaf
/// outlines.
fn leaf_outlines(leaves: &LeafBatch, share: f32) -> Mesh {
    let mut order: Vec<(u32, usize)> = (0..leaves.len()).map(|i| (pcg(i as u32), i)).collect();
    order.sort_unstable();
    let kept = ((leaves.len() as f32 * share).ceil() as usize).clamp(leaves.len().min(1), leaves.len());
    let grown = 1.0 / share.sqrt();
    let mut mesh = Mesh::default();
    for &(_, i) in &order[..kept] {
        leaf(&mut mesh, leaves, i, grown);
    }
    mesh
}

/// Leaf `i`, `grown` times its size, as an outline of eight vertices in its plane, turned
/// about its normal by a hash of its position and tinted by it, as the renderer does.
fn leaf(mesh: &mut Mesh, leaves: &LeafBatch, i: usize, grown: f32) {
    let (centre, size) = (leaves.position[i], leaves.size[i] * grown);
    let n = leaves.normal[i].normalize_or_zero();
    if n == Vec3::ZERO {
        return;
    }
    let h = hash3(centre * 7.31);
    let helper = if n.y.abs() < 0.99 { Vec3::Y } else { Vec3::X };
    let t0 = helper.cross(n).normalize();
    let b0 = n.cross(t0);
    let angle = h.x * std::f32::consts::TAU;
    let t = t0 * angle.cos() + b0 * angle.sin();
    let b = n.cross(t);
    let c = leaves.colour[i];
    let shade = 0.8 + 0.4 * h.y;
    let tint = [1.0 + 0.25 * (h.z - 0.5), 1.0, 1.0 - 0.3 * (h.z - 0.5)];
    let colour = [0, 1, 2].map(|k| (f32::from(c[k]) * tint[k] * shade).round().clamp(0.0, 255.0) as u8);
    let colour = [colour[0], colour[1], colour[2], 255];
    let mut corner = |x: f32, y: f32| {
        let p = centre + (t * x + b * y) * (0.5 * size);
        mesh.push_vertex(p, n, colour, Vec2::new(0.5 * (x + 1.0), 0.5 * (y + 1.0)))
    };
    let stalk = corner(-1.0, 0.0);
    let upper = OUTLINE_X.map(|x| corner(x, half_width(x)));
    let lower = OUTLINE_X.map(|x| corner(x, -half_width(x)));
    let tip = corner(1.0, 0.0);
    // Counter-clockwise about n: t × b = n, so from −t to +t the lower edge runs first.
    mesh.indices.extend_from_slice(&[stalk, lower[0], upper[0]]);
    for k in 0..OUTLINE_X.len() - 1 {
        mesh.indices
            .extend_from_slice(&[upper[k], lower[k], lower[k + 1], upper[k], lower[k + 1], upper[k + 1]]);
    }
    let last = OUTLINE_X.len() - 1;
    mesh.indices.extend_from_slice(&[upper[last], lower[last], tip]);
}
