//! Timing of the Fig. 6.1b pipeline. Ignored by default: speed is measured, never asserted.
//!
//! `CARGO_TARGET_DIR=/work/target-tree cargo test -p sylva-systems --release --test tree_perf -- --ignored --nocapture`

mod tree_support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use sylva_systems::tree::{
    Chains, MeshParams, RadiusParams, TreeMesh, UpAxis, build_mesh, build_mesh_into, compute_radii, reduce_curves,
    write_glb, write_obj,
};
use tree_support::ternary_fig_6_1b;

/// Best of `runs` wall-clock times, which is the least disturbed by other work on the machine.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
#[ignore = "timing; run with --release --ignored --nocapture"]
fn fig_6_1b_pipeline_timing() {
    let graph = ternary_fig_6_1b(8);
    let radius = RadiusParams::thesis_fig_6_1b();
    let params = MeshParams::thesis_fig_6_1b();
    let runs = 30;

    let reduce = best(runs, || reduce_curves(&graph, params.curve_reduction).unwrap());
    let reduce_095 = best(runs, || reduce_curves(&graph, 0.95).unwrap());
    let mut prepared = reduce_curves(&graph, params.curve_reduction).unwrap();
    let radii = best(runs, || compute_radii(&mut prepared, &radius).unwrap());
    let chains = best(runs, || Chains::build(&prepared).unwrap());
    let mesh_time = best(runs, || build_mesh(&prepared, &params).unwrap());
    let mut mesh = TreeMesh::default();
    let mesh_reuse = best(runs, || build_mesh_into(&prepared, &params, &mut mesh).unwrap());
    let glb = best(5, || {
        let mut out = Vec::with_capacity(16 << 20);
        write_glb(&mesh, UpAxis::Z, &mut out).unwrap();
        out
    });
    let obj = best(3, || {
        let mut out = Vec::with_capacity(32 << 20);
        write_obj(&mesh, UpAxis::Z, &mut out).unwrap();
        out
    });

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "Fig. 6.1b: {} segments, {} vertices, {} triangles",
        prepared.len(),
        mesh.vertex_count(),
        mesh.triangle_count()
    );
    println!("reduce_curves (max_K = 1.0, copy) {:8.3} ms", ms(reduce));
    println!("reduce_curves (max_K = 0.95)      {:8.3} ms", ms(reduce_095));
    println!("compute_radii                     {:8.3} ms", ms(radii));
    println!("Chains::build                     {:8.3} ms", ms(chains));
    println!("build_mesh (fresh buffers)        {:8.3} ms", ms(mesh_time));
    println!("build_mesh_into (reused buffers)  {:8.3} ms", ms(mesh_reuse));
    println!("radii + build_mesh                {:8.3} ms", ms(radii + mesh_time));
    println!("write_glb (to memory)             {:8.3} ms", ms(glb));
    println!("write_obj (to memory)             {:8.3} ms", ms(obj));
}
