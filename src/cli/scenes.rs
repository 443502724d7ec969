//! `sylva scenes`: the bundled scenes, each with the first sentence of its comment (listed
//! by `build.rs` at compile time).

include!(concat!(env!("OUT_DIR"), "/scenes.rs"));

/// Prints the bundled scenes, each with the first sentence of its comment.
pub(crate) fn run() {
    let width = BUNDLED.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    for (path, about) in BUNDLED {
        println!("{path:width$}  {about}");
    }
    println!(
        "{} scenes; run one with `sylva run PATH`, look at it with `sylva view PATH`",
        BUNDLED.len()
    );
}

#[cfg(test)]
mod tests {
    use super::BUNDLED;

    #[test]
    fn every_bundled_scene_is_listed_with_what_it_shows() {
        assert!(BUNDLED.iter().any(|(p, _)| *p == "scenes/world.ron"));
        for (path, about) in BUNDLED {
            assert!(!about.is_empty(), "{path} says nothing about itself");
            assert!(std::path::Path::new(path).is_file(), "{path} is listed but missing");
        }
    }
}
