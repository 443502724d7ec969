//! The bundled scenes' results, pinned: the state hash of each scene whose
//! kernels are tuned for speed, after a few steps on 1 and 2 threads.
//!
//! Speed work must leave results alone bit for bit (and says so when a fix
//! changes them on purpose); these hashes catch a kernel that rounds once
//! differently. A deliberate change of results updates the table here and
//! says in its commit which scenes changed and why.

use std::path::Path;

use sylva::Scene;

/// Scene file, fixed steps run, and the state hash they end in.
const PINNED: [(&str, u32, &str); 8] = [
    ("thesis/landscape1.ron", 40, "fd8f7f062b1b3bb7"),
    ("thesis/landscape2.ron", 40, "110cb9f77064effc"),
    ("thesis/landscape3.ron", 40, "5aa08401b2bda7df"),
    ("valley.ron", 40, "0d235972bb52d8bb"),
    ("thesis/fig6_1b.ron", 1, "a150587defd3f2b0"),
    ("forest.ron", 1, "0835f32c84e5c55b"),
    ("conifers_and_shrubs.ron", 1, "2c63e341261c2315"),
    ("meadow.ron", 1, "13b1415c583c63fb"),
];

/// The state hash of `path` after `steps` fixed steps on `threads` threads.
fn hash(path: &str, steps: u32, threads: usize) -> String {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(path);
    let scene = Scene::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let mut app = sylva::build(&scene, threads).unwrap_or_else(|e| panic!("{path}: {e}"));
    app.advance(steps);
    format!("{:016x}", app.state_hash().expect("the state hashes"))
}

#[test]
fn scene_results_are_unchanged_on_any_thread_count() {
    let mut wrong = Vec::new();
    for (path, steps, pinned) in PINNED {
        for threads in [1, 2] {
            let got = hash(path, steps, threads);
            if got != pinned {
                wrong.push(format!(
                    "{path} after {steps} steps on {threads} threads: {got}, pinned {pinned}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "results changed:\n{}", wrong.join("\n"));
}
