//! Rendering keeps to the app's threads: the renderer's parallel work (cluster orders,
//! packing) runs in the pool the user sized with `--threads`, never in rayon's global
//! pool, which would start one thread per core behind the user's back.
//!
//! A test binary of its own: rayon's global pool starts on first use and stays for the
//! process, so only a process that uses it for nothing else can tell whether it started.

use std::path::Path;

use sylva::vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva::{Scene, build};

#[test]
fn rendering_an_app_leaves_the_global_pool_unstarted() {
    let Some(mut r) = renderer_or_skip(64, 48) else {
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/thesis/fig6_1b.ron");
    let scene = Scene::load(&path).unwrap();
    let mut app = build(&scene, 1).unwrap();
    app.update(0.0);
    let stats = sylva::render(&mut r, &app, false).unwrap();
    assert!(stats.cylinders > 0 && stats.leaves > 0, "the tree is drawn: {stats:?}");
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
    // Building the global pool succeeds only while nothing has started it.
    let unstarted = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    assert!(
        unstarted.is_ok(),
        "rendering started rayon's global pool: {unstarted:?}"
    );
}
