//! Live preview without a window: a scene file edited under a `LiveScene` is
//! rebuilt in the background and swapped in with the viewer's camera; an edit
//! that no longer reads keeps the last build and says where the error is.

use std::path::Path;
use std::time::{Duration, Instant};

use sylva::MemoryLimit;
use sylva::live::{LiveScene, Reload};
use sylva::runtime::extract::Camera;
use sylva::runtime::glam::Vec3;

/// Polls like a viewer's frames until the reload ends one way or the other.
fn settle(live: &mut LiveScene, built: &mut sylva::Built) -> Reload {
    let started = Instant::now();
    loop {
        match live.poll(built) {
            Reload::Unchanged | Reload::Rebuilding => {}
            done => return done,
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no reload within a minute");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn segments(built: &sylva::Built) -> usize {
    built.tree.as_ref().expect("the scene grows a tree").stats.segments
}

fn camera(built: &sylva::Built) -> Camera {
    *built.app.world.resources.get::<Camera>().expect("a scene has a camera")
}

#[test]
fn an_edit_is_rebuilt_with_the_viewers_camera_and_a_broken_one_keeps_the_last_build() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tree.ron");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig6_1b.ron")).unwrap();
    assert!(text.contains("iterations: 8,"));
    std::fs::write(&path, &text).unwrap();
    let (mut live, mut built) = LiveScene::open(&path, 2, MemoryLimit::default(), |s| s.seed = 1).unwrap();
    assert_eq!(live.files().collect::<Vec<_>>(), [path.as_path()]);
    assert_eq!(segments(&built), 13_121, "Fig. 6.1b");
    // The viewer has flown somewhere else.
    let flown = Camera {
        position: Vec3::new(3.0, 40.0, -70.0),
        ..camera(&built)
    };
    built.app.world.resources.insert(flown);
    assert!(matches!(live.poll(&mut built), Reload::Unchanged));

    edit(&path, &text.replace("iterations: 8,", "iterations: 6,"));
    match settle(&mut live, &mut built) {
        Reload::Reloaded { millis } => {
            assert_eq!(live.scene().tree.as_ref().unwrap().lsystem.iterations, 6);
            assert!(millis > 0.0);
        }
        Reload::Failed(e) => panic!("the edit does not reload: {e}"),
        _ => unreachable!(),
    }
    let fewer = segments(&built);
    assert!(fewer < 13_121 / 4, "{fewer} segments after two fewer derivations");
    assert_eq!(camera(&built), flown, "the viewer's camera stays");

    edit(&path, &text.replace("iterations: 8,", "iterations: \"eight\","));
    match settle(&mut live, &mut built) {
        Reload::Failed(e) => assert!(e.contains("tree.ron:16:"), "{e}"),
        _ => panic!("a broken scene reloads"),
    }
    assert_eq!(segments(&built), fewer, "the last good build stays");
    built.app.update(1.0 / 60.0);

    edit(&path, &text);
    assert!(matches!(settle(&mut live, &mut built), Reload::Reloaded { .. }));
    assert_eq!(segments(&built), 13_121);
    assert_eq!(camera(&built), flown);
}

/// Saves `text` as an editor would, so the next look sees a new file.
fn edit(path: &Path, text: &str) {
    // Modification times can be coarse: a save within the same tick must still differ.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(path, format!("{text}\n// saved {:?}\n", Instant::now())).unwrap();
}

/// PageUp and PageDown step through the scenes of a folder in name order, numbers
/// compared as numbers, wrapping around; other files are not scenes.
#[test]
fn a_folder_of_scenes_is_cycled_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "fig5_10.ron",
        "fig5_1b.ron",
        "fig5_1a.ron",
        "fig5_9.ron",
        "points.txt",
        "a.ron",
    ] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let at = |name: &str| dir.path().join(name);
    let name = |p: Option<std::path::PathBuf>| p.unwrap().file_name().unwrap().to_str().unwrap().to_owned();
    let mut order = vec![name(Some(at("a.ron")))];
    while order.len() < 6 {
        order.push(name(sylva::live::sibling(&at(order.last().unwrap()), 1)));
    }
    assert_eq!(
        order,
        [
            "a.ron",
            "fig5_1a.ron",
            "fig5_1b.ron",
            "fig5_9.ron",
            "fig5_10.ron",
            "a.ron"
        ]
    );
    assert_eq!(name(sylva::live::sibling(&at("a.ron"), -1)), "fig5_10.ron");
    assert_eq!(name(sylva::live::sibling(&at("fig5_1a.ron"), 1)), "fig5_1b.ron");
    // The bundled thesis figures: Fig. 5.1a is followed by Fig. 5.1b.
    let thesis = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/thesis/fig5_1a.ron"));
    assert_eq!(name(sylva::live::sibling(thesis, 1)), "fig5_1b.ron");
}
