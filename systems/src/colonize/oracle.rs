//! A brute-force reference of [`super::Colonizer`] for tests: every iteration, every live
//! attractor is compared with every node, as the thesis does. It shares only the per-node rules
//! (direction, step length, trunk), so it checks the incremental search and its bookkeeping.

use glam::Vec3;

use super::grow::{centroid_target, growth_direction, step_length, trunk_end};
use super::{ColonizeParams, Termination};
use crate::tree::{BranchGraph, NO_PARENT};

/// The result of a reference run.
#[derive(Debug, PartialEq)]
pub struct Reference {
    /// One graph per root, unsmoothed.
    pub graphs: Vec<BranchGraph>,
    /// Why growth stopped.
    pub termination: Termination,
    /// Iterations run.
    pub iterations: u32,
    /// Whether each attractor is alive at the end.
    pub alive: Vec<bool>,
}

struct Node {
    pos: Vec3,
    dir: Vec3,
    depth: u32,
    children: u32,
    no_growth: u32,
    growing: bool,
    tree: usize,
    segment: u32,
}

/// Grows like `Colonizer::with_attractors(params, attractors, targets)` then `run()`, by brute
/// force. `params` must be valid.
pub fn grow_brute_force(params: &ColonizeParams, attractors: &[Vec3], targets: &[(Vec3, f32)]) -> Reference {
    let di2 = params.influence_radius * params.influence_radius;
    let dk2 = params.kill_distance * params.kill_distance;
    let fallback = [centroid_target(attractors)];
    let targets = if targets.is_empty() { &fallback[..] } else { targets };
    let mut alive = vec![true; attractors.len()];
    let (mut nodes, mut graphs) = plant(params, attractors, targets);
    let gap2 = params.crown_gap * params.crown_gap;
    // Within the crown gap of nodes of two trees (the first such node's tree and another).
    let contested = |a: Vec3, nodes: &[Node]| {
        let mut near = nodes.iter().filter(|n| (a - n.pos).length_squared() <= gap2);
        near.next().is_some_and(|first| near.any(|n| n.tree != first.tree))
    };
    let kill = |alive: &mut Vec<bool>, nodes: &[Node]| {
        for (a, live) in attractors.iter().zip(alive.iter_mut()) {
            if *live && (nodes.iter().any(|n| (*a - n.pos).length_squared() <= dk2) || contested(*a, nodes)) {
                *live = false;
            }
        }
    };
    kill(&mut alive, &nodes);
    let mut iterations = 0;
    let termination = loop {
        if !alive.iter().any(|&l| l) {
            break Termination::AttractorsExhausted;
        }
        if iterations >= params.iterations {
            break Termination::IterationLimit;
        }
        let (sum, count) = influence(attractors, &alive, &nodes, di2);
        if count.iter().all(|&c| c == 0) {
            break Termination::NoInfluence;
        }
        grow(params, &mut nodes, &mut graphs, &sum, &count);
        kill(&mut alive, &nodes);
        iterations += 1;
    };
    Reference {
        graphs,
        termination,
        iterations,
        alive,
    }
}

/// Each root's trunk: its node and its tree's graph.
fn plant(params: &ColonizeParams, attractors: &[Vec3], targets: &[(Vec3, f32)]) -> (Vec<Node>, Vec<BranchGraph>) {
    let di2 = params.influence_radius * params.influence_radius;
    let mut nodes: Vec<Node> = Vec::new();
    let mut graphs = Vec::new();
    for (t, &root) in params.roots.iter().enumerate() {
        let (end, dir) = trunk_end(params, root, targets, |p| {
            attractors.iter().any(|a| (*a - p).length_squared() <= di2)
        });
        let mut g = BranchGraph::new();
        g.push(root, end, NO_PARENT, 0);
        graphs.push(g);
        nodes.push(Node {
            pos: end,
            dir,
            depth: 0,
            children: 0,
            no_growth: 0,
            growing: true,
            tree: t,
            segment: 0,
        });
    }
    (nodes, graphs)
}

/// Per node, the sum of the unit vectors toward the live attractors it is nearest to within
/// the influence radius (squared: `di2`), and their count; none for nodes that stopped.
fn influence(attractors: &[Vec3], alive: &[bool], nodes: &[Node], di2: f32) -> (Vec<Vec3>, Vec<u32>) {
    let mut sum = vec![Vec3::ZERO; nodes.len()];
    let mut count = vec![0u32; nodes.len()];
    for (a, _) in attractors.iter().zip(alive).filter(|(_, l)| **l) {
        let mut best: Option<(usize, f32)> = None;
        for (i, n) in nodes.iter().enumerate() {
            let d2 = (*a - n.pos).length_squared();
            if d2 <= di2 && best.is_none_or(|(_, b)| d2 < b) {
                best = Some((i, d2));
            }
        }
        if let Some((i, _)) = best
            && nodes[i].growing
        {
            sum[i] += (*a - nodes[i].pos).normalize();
            count[i] += 1;
        }
    }
    (sum, count)
}

/// One iteration's growth: each growing node with influence adds a segment, and nodes that
/// are full or have not grown for too long stop.
fn grow(params: &ColonizeParams, nodes: &mut Vec<Node>, graphs: &mut [BranchGraph], sum: &[Vec3], count: &[u32]) {
    let existing = nodes.len();
    for v in 0..existing {
        if !nodes[v].growing {
            continue;
        }
        let mut grew = false;
        if count[v] > 0
            && let Some(dir) = growth_direction(sum[v], params.tropism)
            && dir.dot(nodes[v].dir) >= -0.99
        {
            let depth = nodes[v].depth + u32::from(nodes[v].children > 0);
            if depth <= params.max_depth && nodes[v].children < params.max_degree {
                let end = nodes[v].pos + dir * step_length(params, nodes[v].depth);
                let t = nodes[v].tree;
                let segment = graphs[t].push(nodes[v].pos, end, nodes[v].segment, depth);
                nodes[v].children += 1;
                nodes.push(Node {
                    pos: end,
                    dir,
                    depth,
                    children: 0,
                    no_growth: 0,
                    growing: true,
                    tree: t,
                    segment,
                });
                grew = true;
            }
        }
        let n = &mut nodes[v];
        n.no_growth = if grew { 0 } else { n.no_growth + 1 };
        if n.children >= params.max_degree || n.no_growth > params.max_no_growth {
            n.growing = false;
        }
    }
}
