//! Generalized-cylinder meshes (thesis §4.4.4, with the code's \[C\] conventions for exact counts).
//!
//! Each chain (see [`Chains`]) becomes one tube: a ring at the chain's base and one ring at the end
//! of each of its segments, so neighbouring cylinders share their ring (thesis Fig. 4.4). A ring
//! of `n` sides has `n + 1` vertices, because the seam vertex is duplicated to carry both `u = 0`
//! and `u = 1`. That gives `(n + 1) × (segments + chains)` vertices, the formula behind the
//! thesis's 206,658 vertices for Fig. 6.1b. Each segment contributes `2n` triangles.
//!
//! Ring normals follow eq. 4.1, `n_e = normalize((p_e − p_s) + n_s)` with `n_s` the parent's `n_e`;
//! a ring lies in the plane through its centre orthogonal to its normal, placed by the shortest-arc
//! rotation from +Z ([`ring_rotation`]) and then turned by the chain's rotation angle.
//!
//! Output conventions: Z is up (the thesis's frame); triangles wind counter-clockwise seen from
//! outside (right-handed, as glTF expects; \[C\] winds the other way for Unreal); `v` runs from 0
//! at a chain's base to 1 at its tip. Tangents (eq. 4.5) are not stored, since importers derive
//! them from the UVs; a vertex's tangent along increasing `u` is `n_ring × n_vertex` (\[C\]'s sign,
//! eq. 4.5 prints the opposite).

use std::f32::consts::TAU;
use std::mem::MaybeUninit;

use glam::{Mat3, Quat, Vec2, Vec3, Vec3A};
use rayon::prelude::*;
use sylva_runtime::Validate;

use super::AngleCache;
use super::chains::Chains;
use super::graph::Children;
use super::params::{MeshParams, MeshStyle, RootNormal, SidesRule};
use super::{BranchGraph, NO_PARENT, TreeError};
use crate::pages::{reserve_huge, try_reserve_huge};

/// A triangle mesh with per-vertex attributes in separate arrays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeMesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Unit vertex normals, pointing away from the ring centre.
    pub normals: Vec<Vec3>,
    /// Texture coordinates: `u` around the ring in [0, 1], `v` along the chain in [0, 1].
    pub uvs: Vec<Vec2>,
    /// Triangle list, three indices per triangle, counter-clockwise from outside.
    pub indices: Vec<u32>,
}

impl TreeMesh {
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

    /// Checks what exporters rely on: equal attribute counts, whole triangles, indices in range
    /// and finite attribute values.
    pub fn validate(&self) -> Result<(), TreeError> {
        let n = self.positions.len();
        if self.normals.len() != n || self.uvs.len() != n {
            return Err(TreeError::InvalidMesh(format!(
                "attribute counts differ: {n} positions, {} normals, {} uvs",
                self.normals.len(),
                self.uvs.len()
            )));
        }
        if !self.indices.len().is_multiple_of(3) {
            return Err(TreeError::InvalidMesh(format!(
                "{} indices do not form whole triangles",
                self.indices.len()
            )));
        }
        if let Some(bad) = self.indices.iter().find(|&&i| i as usize >= n) {
            return Err(TreeError::InvalidMesh(format!(
                "index {bad} out of range for {n} vertices"
            )));
        }
        let finite = self.positions.iter().all(|v| v.is_finite())
            && self.normals.iter().all(|v| v.is_finite())
            && self.uvs.iter().all(|v| v.is_finite());
        if !finite {
            return Err(TreeError::InvalidMesh(
                "a vertex attribute is NaN or infinite".to_owned(),
            ));
        }
        Ok(())
    }
}

/// Sizes of the mesh [`build_mesh`] would produce, computed without building it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeshCounts {
    /// Tubes: chains, or meshed segments in the fractal style.
    pub chains: usize,
    /// Rings: one per tube base plus one per meshed segment.
    pub rings: usize,
    /// Vertices: `sides + 1` per ring.
    pub vertices: usize,
    /// Triangles: `2 × sides` per meshed segment.
    pub triangles: usize,
}

/// The rotation that turns +Z onto the unit vector `normal` along the shortest arc (the thesis
/// code's `FindBetweenNormals`; eq. 4.3 as printed varies its axis per vertex).
///
/// The shortest arc degenerates as `normal` approaches −Z, where its axis `Z × normal` vanishes,
/// so below `normal.z = −0.99` the rotation is a half turn about X followed by the short,
/// well-conditioned arc from −Z. Either way the result is a unit quaternion that maps +Z onto
/// `normal` to float precision. A zero or non-finite input yields the identity.
pub fn ring_rotation(normal: Vec3) -> Quat {
    let Some(n) = normal.try_normalize() else {
        return Quat::IDENTITY;
    };
    let (x, y) = ring_axes(n);
    Quat::from_mat3(&Mat3::from_cols(x, y, n))
}

/// Images of +X and +Y under [`ring_rotation`] for a unit `n`, by Rodrigues' formula for the
/// shortest arc from Z: one division and no square root, as every ring needs them.
fn ring_axes(n: Vec3) -> (Vec3, Vec3) {
    // For the arc Z → m: X ↦ (1 − mx²/(1+mz), −mx·my/(1+mz), −mx), Y ↦ (−mx·my/(1+mz), 1 − my²/(1+mz), −my).
    let arc = |m: Vec3| {
        let k = 1.0 / (1.0 + m.z);
        let xy = -m.x * m.y * k;
        (
            Vec3::new(1.0 - m.x * m.x * k, xy, -m.x),
            Vec3::new(xy, 1.0 - m.y * m.y * k, -m.y),
        )
    };
    if n.z >= 0.0 {
        return arc(n);
    }
    let (x, y) = if n.z >= -0.99 {
        arc(n)
    } else {
        // Half turn about X (X ↦ X, Y ↦ −Y, Z ↦ −Z), then the arc −Z → n, which is the arc Z → −n.
        let (x, y) = arc(-n);
        (x, -y)
    };
    // Below the equator 1/(1+mz) grows to 100 and magnifies n's own rounding into axes that are
    // 1e-5 off unit length; one projection per ring (not per vertex) restores an orthonormal frame.
    let x = (x - n * n.dot(x)).normalize();
    // Both branches are right-handed (x × y = n), so y follows from n and x.
    debug_assert!(y.dot(n.cross(x)) > 0.0);
    (x, n.cross(x))
}

/// Counts the mesh [`build_mesh`] would produce for `graph` with `params`.
pub fn mesh_counts(graph: &BranchGraph, params: &MeshParams) -> Result<MeshCounts, TreeError> {
    Ok(Plan::new(graph, params)?.counts)
}

/// Builds the mesh of `graph` (radii already set, e.g. by
/// [`compute_radii`](super::compute_radii)).
///
/// Fails when the parameters or the graph are invalid or the vertex count exceeds 32-bit
/// indices. Degenerate geometry (zero-length segments, zero radii, reversing segments) yields
/// degenerate triangles but never NaN.
pub fn build_mesh(graph: &BranchGraph, params: &MeshParams) -> Result<TreeMesh, TreeError> {
    let mut mesh = TreeMesh::default();
    build_mesh_into(graph, params, &mut mesh)?;
    Ok(mesh)
}

/// [`build_mesh`] into an existing mesh, reusing its allocations: rebuilding a tree (parameter
/// tweaks, streaming) then costs no fresh memory. Returns the sizes [`mesh_counts`] would, which
/// the build has to plan anyway. On failure `mesh` is left unchanged.
pub fn build_mesh_into(graph: &BranchGraph, params: &MeshParams, mesh: &mut TreeMesh) -> Result<MeshCounts, TreeError> {
    params.validate()?;
    graph.validate()?;
    let (plan, angles, end_normals) = plan_reserving(graph, params, mesh)?;
    let counts = plan.counts;
    let tubes = Tubes {
        graph,
        params,
        plan: &plan,
        angles: &angles,
        end_normals: &end_normals,
        circles: &CircleTables::for_sides(&plan.sides),
    };
    clear(mesh);
    reserve_huge(&mut mesh.positions, counts.vertices);
    reserve_huge(&mut mesh.normals, counts.vertices);
    reserve_huge(&mut mesh.uvs, counts.vertices);
    reserve_huge(&mut mesh.indices, counts.triangles * 3);
    // Written once, in place, from the sizes planned: no capacity checks, and no zeroing of
    // memory that is overwritten anyway.
    let mut slots = Slots {
        positions: &mut mesh.positions.spare_capacity_mut()[..counts.vertices],
        normals: &mut mesh.normals.spare_capacity_mut()[..counts.vertices],
        uvs: &mut mesh.uvs.spare_capacity_mut()[..counts.vertices],
        indices: &mut mesh.indices.spare_capacity_mut()[..counts.triangles * 3],
    };
    // Runs of tubes of about `RUN_VERTICES` vertices each, meshed on the pool: each run's slots
    // and first vertex are known from the plan, and every vertex is computed alone, so the bits
    // do not depend on the threads. A fresh mesh's pages are faulted in on every core too.
    let mut runs = Vec::new();
    let (mut first, mut base, mut vertices, mut indices) = (0, 0u32, 0, 0);
    for t in 0..plan.tubes.len() {
        let (v, i) = plan.size(t);
        (vertices, indices) = (vertices + v, indices + i);
        if vertices >= RUN_VERTICES || t + 1 == plan.tubes.len() {
            runs.push((first..t + 1, base, slots.take(vertices, indices)));
            (first, base, vertices, indices) = (t + 1, base + vertices as u32, 0, 0);
        }
    }
    assert!(slots.is_empty(), "the runs took fewer slots than planned");
    runs.into_par_iter().for_each(|(run, mut base, mut slots)| {
        let mut turns = AngleCache::default();
        for t in run {
            base = tubes.mesh(t, base, &mut turns, &mut slots);
        }
        assert!(slots.is_empty(), "the tubes wrote fewer slots than planned");
    });
    // SAFETY: the runs split exactly `counts` slots of each buffer among them, the tubes of each
    // took theirs in turn from the front of its share, each wrote every slot it took
    // (`write_ring`, `write_quads`), and none is left.
    unsafe {
        mesh.positions.set_len(counts.vertices);
        mesh.normals.set_len(counts.vertices);
        mesh.uvs.set_len(counts.vertices);
        mesh.indices.set_len(counts.triangles * 3);
    }
    Ok(counts)
}

/// The plan of a valid graph with valid parameters, with each segment's rotation angle and, for
/// chains, ring normal. Meanwhile, where planning cannot fail, `mesh` is emptied and given room
/// for the largest mesh the graph can have: a fresh mesh's pages are a large share of its cost
/// (see `reserve_huge`), and the kernel clears the first huge page of each buffer as it is
/// reserved, which takes about as long as planning.
fn plan_reserving(
    graph: &BranchGraph,
    params: &MeshParams,
    mesh: &mut TreeMesh,
) -> Result<(Plan, Vec<f32>, Vec<Vec3>), TreeError> {
    let plan = || {
        let plan = Plan::of_valid(graph, params)?;
        let angles = rotation_angles(graph, &plan.children, params);
        let end_normals = match params.style {
            MeshStyle::Chains => end_normals(graph, params.root_normal),
            MeshStyle::Fractal { .. } => Vec::new(),
        };
        Ok((plan, angles, end_normals))
    };
    // Every tube has a segment, so tubes add at most one base ring per segment to the segments'.
    let most_vertices = graph.len().saturating_mul(2 * (params.sides_max as usize + 1));
    if most_vertices > u32::MAX as usize {
        // Planning may fail, and must leave `mesh` as it is.
        return plan();
    }
    let most_indices = graph.len().saturating_mul(6 * params.sides_max as usize);
    let reserve = || {
        clear(mesh);
        // Room the mesh does not fill is mostly never touched. Where even that cannot be had,
        // the exact reservation decides.
        let _ = try_reserve_huge(&mut mesh.positions, most_vertices)
            .and_then(|()| try_reserve_huge(&mut mesh.normals, most_vertices))
            .and_then(|()| try_reserve_huge(&mut mesh.uvs, most_vertices))
            .and_then(|()| try_reserve_huge(&mut mesh.indices, most_indices));
    };
    rayon::join(plan, reserve).0
}

/// Empties every buffer of `mesh`, keeping its room.
fn clear(mesh: &mut TreeMesh) {
    mesh.positions.clear();
    mesh.normals.clear();
    mesh.uvs.clear();
    mesh.indices.clear();
}

/// Vertices per run of tubes meshed as one task: enough to outweigh a task's cost, few enough
/// that a large tree's runs spread over the cores.
const RUN_VERTICES: usize = 16 * 1024;

/// Unwritten mesh slots, taken from the front as the tubes are meshed.
struct Slots<'a> {
    positions: &'a mut [MaybeUninit<Vec3>],
    normals: &'a mut [MaybeUninit<Vec3>],
    uvs: &'a mut [MaybeUninit<Vec2>],
    indices: &'a mut [MaybeUninit<u32>],
}

impl<'a> Slots<'a> {
    /// Splits off the first `vertices` vertex and `indices` index slots; panics if there are
    /// fewer.
    fn take(&mut self, vertices: usize, indices: usize) -> Slots<'a> {
        let (positions, rest) = std::mem::take(&mut self.positions).split_at_mut(vertices);
        self.positions = rest;
        let (normals, rest) = std::mem::take(&mut self.normals).split_at_mut(vertices);
        self.normals = rest;
        let (uvs, rest) = std::mem::take(&mut self.uvs).split_at_mut(vertices);
        self.uvs = rest;
        let (indices, rest) = std::mem::take(&mut self.indices).split_at_mut(indices);
        self.indices = rest;
        Slots {
            positions,
            normals,
            uvs,
            indices,
        }
    }

    fn is_empty(&self) -> bool {
        self.positions.is_empty() && self.normals.is_empty() && self.uvs.is_empty() && self.indices.is_empty()
    }
}

/// What meshing a tube reads.
struct Tubes<'a> {
    graph: &'a BranchGraph,
    params: &'a MeshParams,
    plan: &'a Plan,
    angles: &'a [f32],
    end_normals: &'a [Vec3],
    circles: &'a CircleTables,
}

impl Tubes<'_> {
    /// Meshes tube `t`, whose first vertex is `base`, into the slots it takes from the front of
    /// `slots`, writing all of them; returns the next tube's first vertex.
    fn mesh(&self, t: usize, base: u32, turns: &mut AngleCache, slots: &mut Slots<'_>) -> u32 {
        let graph = self.graph;
        let tube = self.plan.tubes.get(t);
        let sides = self.plan.sides[t];
        let circle = self.circles.get(sides);
        let stride = circle.points.len();
        let (vertices, indices) = self.plan.size(t);
        let mut out = slots.take(vertices, indices);
        let mut ring = |r: &Ring, turn: Vec2, v: f32| write_ring(&mut out.take(stride, 0), circle, r, turn, v);
        let mut turn_of = |degrees: f32| {
            let (sin, cos) = turns.sin_cos(degrees);
            Vec2::new(cos, sin)
        };
        match self.params.style {
            MeshStyle::Chains => {
                let first = tube[0] as usize;
                let turn = turn_of(self.angles[first]);
                let v_step = 1.0 / tube.len() as f32;
                let start_normal = match graph.parent[first] {
                    NO_PARENT => root_start_normal(graph, first, self.params.root_normal),
                    p => self.end_normals[p as usize],
                };
                let start = Ring {
                    centre: graph.start[first],
                    radius: graph.start_radius[first],
                    normal: start_normal,
                };
                ring(&start, turn, 0.0);
                for (j, &s) in tube.iter().enumerate() {
                    let s = s as usize;
                    let end = Ring {
                        centre: graph.end[s],
                        radius: graph.end_radius[s],
                        normal: self.end_normals[s],
                    };
                    ring(&end, turn, (j + 1) as f32 * v_step);
                }
            }
            MeshStyle::Fractal { .. } => {
                let s = tube[0] as usize;
                let turn = turn_of(self.angles[s]);
                let axis = (graph.end[s] - graph.start[s]).normalize_or(Vec3::Z);
                let start_radius = graph.start_radius[s];
                let end_radius = graph.end_radius[s];
                let start = Ring {
                    centre: graph.start[s] - axis * start_radius,
                    radius: start_radius,
                    normal: axis,
                };
                let end = Ring {
                    centre: graph.end[s] + axis * end_radius,
                    radius: end_radius,
                    normal: axis,
                };
                ring(&start, turn, 0.0);
                ring(&end, turn, 1.0);
            }
        }
        write_quads(std::mem::take(&mut out.indices), base, sides);
        assert!(out.is_empty(), "a tube wrote fewer slots than planned");
        base + vertices as u32
    }
}

/// What to mesh: the tubes, their side counts and the resulting sizes.
struct Plan {
    children: Children,
    tubes: Chains,
    sides: Vec<u32>,
    counts: MeshCounts,
}

impl Plan {
    /// The vertices and indices of tube `t`: a ring of `sides + 1` vertices (the seam twice) at
    /// each end of each segment, and two triangles per side and segment.
    fn size(&self, t: usize) -> (usize, usize) {
        let (segments, sides) = (self.tubes.get(t).len(), self.sides[t] as usize);
        ((sides + 1) * (segments + 1), 6 * sides * segments)
    }

    fn new(graph: &BranchGraph, params: &MeshParams) -> Result<Self, TreeError> {
        params.validate()?;
        graph.validate()?;
        Self::of_valid(graph, params)
    }

    /// The plan of a valid graph with valid parameters; fails only when it has too many vertices.
    fn of_valid(graph: &BranchGraph, params: &MeshParams) -> Result<Self, TreeError> {
        let children = graph.children();
        let tubes = match params.style {
            MeshStyle::Chains => Chains::with_children(graph, &children),
            MeshStyle::Fractal { drop_root } => Chains::singletons(
                (0..graph.len() as u32)
                    .filter(|&s| !(drop_root && graph.parent[s as usize] == NO_PARENT))
                    .collect(),
            ),
        };
        let sides = side_counts(graph, &tubes, params);
        let (mut rings, mut vertices, mut triangles) = (0u64, 0u64, 0u64);
        for (tube, &n) in tubes.iter().zip(&sides) {
            let (segments, n) = (tube.len() as u64, u64::from(n));
            rings += segments + 1;
            vertices += (n + 1) * (segments + 1);
            triangles += 2 * n * segments;
        }
        if vertices > u64::from(u32::MAX) {
            return Err(TreeError::TooLarge {
                what: "vertex",
                count: vertices,
            });
        }
        let counts = MeshCounts {
            chains: tubes.len(),
            rings: rings as usize,
            vertices: vertices as usize,
            triangles: triangles as usize,
        };
        Ok(Self {
            children,
            tubes,
            sides,
            counts,
        })
    }
}

/// Number of sides of each tube, from its first segment.
fn side_counts(graph: &BranchGraph, tubes: &Chains, params: &MeshParams) -> Vec<u32> {
    let (n_min, n_max) = (params.sides_min, params.sides_max);
    match params.sides_rule {
        SidesRule::Radius => {
            let mut root = vec![0u32; graph.len()];
            for i in 0..graph.len() {
                root[i] = match graph.parent[i] {
                    NO_PARENT => i as u32,
                    p => root[p as usize],
                };
            }
            let spread = (n_max - n_min) as f32 + 0.5;
            tubes
                .iter()
                .map(|tube| {
                    let first = tube[0] as usize;
                    let reference = graph.start_radius[root[first] as usize];
                    // A zero reference radius (radii never computed) has no meaningful ratio.
                    let ratio = if reference > 0.0 {
                        (graph.start_radius[first] / reference).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    n_max.min((ratio * spread + n_min as f32) as u32)
                })
                .collect()
        }
        SidesRule::Depth => {
            let deepest = graph.depth.iter().copied().max().unwrap_or(0);
            tubes
                .iter()
                .map(|tube| {
                    if deepest == 0 {
                        return n_max;
                    }
                    let depth = graph.depth[tube[0] as usize];
                    let shallowness = 1.0 - f64::from(depth) / f64::from(deepest);
                    n_min + (f64::from(n_max - n_min) * shallowness).round() as u32
                })
                .collect()
        }
    }
}

/// Per-segment rotation about the ring normal, in degrees in [0, 360): roots start at
/// `start_rotation_deg`, child `k` adds `k × rotation_per_branch_deg` to its parent's.
fn rotation_angles(graph: &BranchGraph, children: &Children, params: &MeshParams) -> Vec<f32> {
    let start = params.start_rotation_deg.rem_euclid(360.0);
    let step = params.rotation_per_branch_deg;
    let mut degrees = vec![start; graph.len()];
    for p in 0..graph.len() {
        for (k, &c) in children.of(p as u32).iter().enumerate() {
            // Kept in [0, 360) so that deep trees do not lose precision.
            degrees[c as usize] = (degrees[p] + step * k as f32).rem_euclid(360.0);
        }
    }
    degrees
}

fn root_start_normal(graph: &BranchGraph, segment: usize, rule: RootNormal) -> Vec3 {
    match rule {
        RootNormal::Up => Vec3::Z,
        RootNormal::Direction => (graph.end[segment] - graph.start[segment]).normalize_or(Vec3::Z),
    }
}

/// End normal of every segment by eq. 4.1.
fn end_normals(graph: &BranchGraph, rule: RootNormal) -> Vec<Vec3> {
    let mut normals = vec![Vec3::Z; graph.len()];
    for i in 0..graph.len() {
        let start_normal = match graph.parent[i] {
            NO_PARENT => root_start_normal(graph, i, rule),
            p => normals[p as usize],
        };
        let delta = graph.end[i] - graph.start[i];
        // The sum vanishes when a segment reverses its start normal exactly; then the segment's
        // own direction is the best plane normal, and the start normal the last resort.
        normals[i] = (delta + start_normal)
            .try_normalize()
            .or_else(|| delta.try_normalize())
            .unwrap_or(start_normal);
    }
    normals
}

/// Ring vertex templates per side count, built once per side count and mesh.
struct CircleTables {
    tables: Vec<Circle>,
}

/// Unit circle points `(cos, sin)` at `i · 2π / n` and their `u = i / n`, for `i = 0..=n`.
#[derive(Default)]
struct Circle {
    points: Vec<Vec2>,
    u: Vec<f32>,
}

impl CircleTables {
    /// The tables of every side count in `sides`, built up front so meshing only reads them.
    fn for_sides(sides: &[u32]) -> Self {
        let mut tables: Vec<Circle> = Vec::new();
        for &sides in sides {
            let n = sides as usize;
            if tables.len() <= n {
                tables.resize_with(n + 1, Circle::default);
            }
            let circle = &mut tables[n];
            if circle.points.is_empty() {
                circle.points = (0..n).map(|i| Vec2::from_angle(TAU * i as f32 / n as f32)).collect();
                // The seam vertex repeats the first bit for bit, so the seam closes exactly.
                circle.points.push(circle.points[0]);
                circle.u = (0..=n).map(|i| i as f32 / n as f32).collect();
            }
        }
        Self { tables }
    }

    /// The table of `sides`, which [`Self::for_sides`] was given.
    fn get(&self, sides: u32) -> &Circle {
        &self.tables[sides as usize]
    }
}

struct Ring {
    centre: Vec3,
    radius: f32,
    normal: Vec3,
}

/// Writes a ring's `sides + 1` vertices into `out`, whose vertex slots it fills exactly.
fn write_ring(out: &mut Slots<'_>, circle: &Circle, ring: &Ring, turn: Vec2, v: f32) {
    // The circle lies in the z = 0 plane, so only the images of X and Y are needed, turned by the
    // chain's rotation angle: two multiply-adds per vertex instead of a rotation each.
    let (ax, ay) = ring_axes(ring.normal);
    let x = Vec3A::from(ax * turn.x + ay * turn.y);
    let y = Vec3A::from(ay * turn.x - ax * turn.y);
    let (centre, radius) = (Vec3A::from(ring.centre), ring.radius);
    assert_eq!(out.positions.len(), circle.points.len());
    let slots = out
        .positions
        .iter_mut()
        .zip(out.normals.iter_mut())
        .zip(out.uvs.iter_mut());
    for (((position, normal), uv), (p, &u)) in slots.zip(circle.points.iter().zip(&circle.u)) {
        let n = Vec3::from(x * p.x + y * p.y);
        normal.write(n);
        position.write(Vec3::from(centre + radius * Vec3A::from(n)));
        uv.write(Vec2::new(u, v));
    }
}

/// Two counter-clockwise triangles per side between each pair of consecutive rings of a tube
/// whose first vertex is `base`, filling `indices` (six per side and segment) exactly.
fn write_quads(indices: &mut [MaybeUninit<u32>], base: u32, sides: u32) {
    let stride = sides + 1;
    for (j, band) in indices.chunks_exact_mut(6 * sides as usize).enumerate() {
        let ring = base + j as u32 * stride;
        for (quad, a) in band.chunks_exact_mut(6).zip(ring..) {
            let b = a + stride;
            for (slot, index) in quad.iter_mut().zip([a, a + 1, b + 1, a, b + 1, b]) {
                slot.write(index);
            }
        }
    }
}

/// The up axis of a mesh's coordinates, which exporters convert to the Y-up frame that glTF
/// requires and OBJ importers (Blender's included) assume by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UpAxis {
    /// Z is up (the thesis's Unreal frame, and what the tree operations assume).
    #[default]
    Z,
    /// Y is up already; coordinates are written unchanged.
    Y,
}

impl UpAxis {
    /// `v` expressed in the Y-up frame: a proper rotation (x, y, z) → (x, z, −y) for Z-up, so
    /// handedness and triangle winding are kept.
    pub fn to_y_up(self, v: Vec3) -> Vec3 {
        match self {
            UpAxis::Z => Vec3::new(v.x, v.z, -v.y),
            UpAxis::Y => v,
        }
    }
}
