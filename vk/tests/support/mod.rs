//! What the tree render tests share: a small tree model, and its cylinders and leaves moved
//! into world space as trees place it (what a world chunk held before trees were drawn from
//! their models).

use sylva_runtime::extract::{CylinderBatch, LeafBatch, TreeAnchor, TreeInstances, TreeModel, TreeModels};
use sylva_runtime::glam::{Quat, Vec3};

/// A small tree in its own frame: a trunk, eight branches, a cluster of 160 leaves on each (over
/// `CLUSTER_MIN` in all, so far leaves are thinned and grown as in a world's chunk).
pub fn model() -> TreeModel {
    let mut m = TreeModel::default();
    m.cylinders
        .push(Vec3::ZERO, Vec3::Y * 6.0, 0.35, 0.2, [110, 80, 55, 255]);
    for k in 0..8 {
        let a = k as f32 * 0.785 + 0.3;
        let out = Vec3::new(a.sin(), 0.0, a.cos());
        let base = Vec3::Y * (3.0 + 0.35 * k as f32);
        let tip = base + out * 2.5 + Vec3::Y * 1.5;
        m.cylinders.push(base, tip, 0.12, 0.05, [110, 80, 55, 255]);
        for j in 0..160 {
            let h = (j as f32 * 2.399).sin_cos();
            let p = tip + Vec3::new(h.0, (j % 5) as f32 * 0.3 - 0.6, h.1) * (0.3 + 0.006 * j as f32);
            m.leaves
                .push(p, Vec3::new(h.1, 0.6, h.0).normalize(), 0.25, [70, 120, 45, 255]);
        }
    }
    m
}

/// The model's cylinders and leaves moved as `trees` place them, each anchored to its tree
/// (what a world's chunk holds).
pub fn geometry(models: &TreeModels, trees: &TreeInstances) -> (CylinderBatch, LeafBatch) {
    let (mut c, mut l) = (CylinderBatch::default(), LeafBatch::default());
    for t in 0..trees.len() {
        let from = (c.len(), l.len());
        let m = &models.models[trees.model[t] as usize];
        let turn = Quat::from_rotation_y(trees.yaw[t]);
        let s = trees.scale[t];
        let place = |p: Vec3| trees.position[t] + turn * p * s;
        for i in 0..m.cylinders.len() {
            let mc = &m.cylinders;
            c.push(
                place(mc.start[i]),
                place(mc.end[i]),
                mc.start_radius[i] * s,
                mc.end_radius[i] * s,
                mc.colour[i],
            );
        }
        for i in 0..m.leaves.len() {
            let ml = &m.leaves;
            l.push(place(ml.position[i]), turn * ml.normal[i], ml.size[i] * s, ml.colour[i]);
        }
        let anchor = TreeAnchor::of(trees.position[t], (&c, &l), from);
        c.set_tree(from.0..c.len(), anchor);
        l.set_tree(from.1..l.len(), anchor);
    }
    (c, l)
}
