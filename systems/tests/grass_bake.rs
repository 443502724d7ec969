//! Baking: determinism, seamless loop, texture sizes (thesis table), file round trip, sampler.

use sylva_systems::grass::{
    BakeFileError, BakeSettings, BakedGrass, BladeShape, Dynamics, GrassBakeError, MAX_BAKE_FRAMES, Segment,
    TextureLayout, Wind, WindField, bake, bake_inputs, texture_bytes,
};

fn wind() -> WindField {
    WindField {
        winds: vec![Wind {
            seed: 5,
            power_offset: 1.0,
            power_amplitude: 3.0,
            polar_amplitude: 0.2,
            azimuth_amplitude: 0.4,
            frequency: 0.8,
            deviation: 1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    }
}

fn settings() -> BakeSettings {
    BakeSettings {
        cells: 8,
        instances: 2,
        record_every: 12,
        frames: 32,
        max_warmup_seconds: 6.0,
        ..BakeSettings::default()
    }
}

fn run(s: &BakeSettings) -> BakedGrass {
    bake(
        &BladeShape::blade(6, 0.3, Segment::default()),
        &Dynamics::default(),
        &wind(),
        s,
    )
    .unwrap()
    .0
}

#[test]
fn same_seed_gives_an_identical_bake_on_one_and_two_threads() {
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    let a = pool(1).install(|| run(&settings()));
    let b = pool(2).install(|| run(&settings()));
    assert_eq!(a, b);
    let c = run(&BakeSettings { seed: 1, ..settings() });
    assert_ne!(a.textures, c.textures);
}

#[test]
fn warm_up_is_detected_before_the_cap() {
    let b = run(&BakeSettings {
        max_warmup_seconds: 30.0,
        ..settings()
    });
    assert!(b.warmup_steps >= 480 && b.warmup_steps < 30 * 240, "{}", b.warmup_steps);
}

#[test]
fn the_loop_is_seamless() {
    let b = run(&settings());
    let t = b.frames;
    for link in [2, 5] {
        let mut steps = vec![0.0f32; t as usize - 1];
        let mut seam = 0.0f32;
        for cz in 0..b.cells {
            for cx in 0..b.cells {
                for f in 0..t - 1 {
                    steps[f as usize] += (b.texel(link, f + 1, cx, cz) - b.texel(link, f, cx, cz)).length();
                }
                seam += (b.texel(link, 0, cx, cz) - b.texel(link, t - 1, cx, cz)).length();
            }
        }
        steps.sort_by(f32::total_cmp);
        let (median, max) = (steps[steps.len() / 2], steps[steps.len() - 1]);
        assert!(median > 0.0);
        assert!(
            seam <= max && seam <= 2.0 * median,
            "link {link}: seam {seam} vs median {median}, max {max}"
        );
    }
}

#[test]
fn thesis_rgb8_mode_reproduces_the_memory_table() {
    assert_eq!(texture_bytes(128, 6, 10, TextureLayout::ThesisRgb8), Some(2_949_120));
    for (cells, parts) in [(64, 1), (64, 2), (64, 6), (128, 1), (128, 2)] {
        assert_eq!(
            texture_bytes(cells, parts, 10, TextureLayout::ThesisRgb8),
            Some(30 * (cells * cells * parts) as usize)
        );
    }
    let s = BakeSettings {
        cells: 16,
        instances: 1,
        frames: 10,
        layout: TextureLayout::ThesisRgb8,
        ..settings()
    };
    let rgb8 = bake(
        &BladeShape::blade(2, 0.3, Segment::default()),
        &Dynamics::default(),
        &wind(),
        &s,
    )
    .unwrap()
    .0;
    assert_eq!(rgb8.texture_bytes(), 30 * 16 * 16 * 2);
    let f16 = run(&BakeSettings {
        layout: TextureLayout::Rgba16F,
        ..settings()
    });
    assert_eq!(f16.texture_bytes(), 8 * 8 * 8 * 6 * 32);
}

#[test]
fn rgb8_and_f16_store_the_same_motion_within_their_precision() {
    let a = run(&settings());
    let b = run(&BakeSettings {
        layout: TextureLayout::ThesisRgb8,
        ..settings()
    });
    for f in 0..a.frames {
        let (x, y) = (a.texel(5, f, 3, 4), b.texel(5, f, 3, 4));
        assert!((x - y).abs().max_element() <= 0.5 * b.rgb8_scale + 1e-3, "{x} vs {y}");
    }
}

#[test]
fn baked_file_round_trips_and_damage_is_a_clear_error() {
    let b = run(&settings());
    let bytes = b.to_bytes();
    assert_eq!(BakedGrass::from_bytes(&bytes).unwrap(), b);
    let mut corrupt = bytes.clone();
    let last = corrupt.len() - 5;
    corrupt[last] ^= 0x40;
    assert_eq!(BakedGrass::from_bytes(&corrupt), Err(BakeFileError::Checksum));
    let cut = BakedGrass::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(matches!(cut, BakeFileError::Truncated { expected, found } if found + 1 == expected));
    assert!(cut.to_string().starts_with("truncated"), "{cut}");
    let mut appended = bytes.clone();
    appended.extend_from_slice(b"more");
    let e = BakedGrass::from_bytes(&appended).unwrap_err();
    assert_eq!(e, BakeFileError::Trailing(4));
    assert_eq!(e.to_string(), "4 trailing bytes after the grass bake");
    let e = BakedGrass::from_bytes(&[0; 20]).unwrap_err();
    assert_eq!(e.to_string(), "too short (20 bytes) to be a grass bake");
    assert_eq!(
        BakedGrass::from_bytes(b"hello world, not grass at all, but long enough"),
        Err(BakeFileError::Magic)
    );
    let mut version = bytes.clone();
    version[8] = 99;
    let e = BakedGrass::from_bytes(&version).unwrap_err();
    assert!(matches!(e, BakeFileError::Version { found: 99, .. }), "{e}");
}

#[test]
fn a_saved_bake_reads_back_equal_and_file_errors_name_the_file() {
    let b = run(&settings());
    let dir = std::env::temp_dir().join(format!("sylva-grass-bake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("field.bin");
    b.save(&path).unwrap();
    assert_eq!(BakedGrass::load(&path).unwrap(), b);
    let inputs = bake_inputs(
        &BladeShape::blade(6, 0.3, Segment::default()),
        &Dynamics::default(),
        &wind(),
        &settings(),
    );
    assert_eq!(b.inputs, inputs, "a bake carries the fingerprint of its inputs");
    assert_eq!(BakedGrass::load_for(&path, inputs).unwrap(), b);
    let other = bake_inputs(
        &BladeShape::blade(6, 0.3, Segment::default()),
        &Dynamics::default(),
        &wind(),
        &BakeSettings { seed: 9, ..settings() },
    );
    assert_ne!(other, inputs, "the seed is an input");
    let e = BakedGrass::load_for(&path, other).unwrap_err();
    assert!(matches!(&e, GrassBakeError::Stale { path: p } if *p == path), "{e}");

    let missing = dir.join("missing.bin");
    let e = BakedGrass::load(&missing).unwrap_err();
    assert!(matches!(&e, GrassBakeError::Io { path, .. } if *path == missing), "{e}");
    assert!(e.to_string().starts_with(&format!("{}: ", missing.display())), "{e}");
    let short = dir.join("short.bin");
    std::fs::write(&short, [0; 20]).unwrap();
    let e = BakedGrass::load(&short).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("{}: too short (20 bytes) to be a grass bake", short.display())
    );
}

#[test]
fn sampler_interpolates_frames_wraps_and_scales() {
    let b = run(&settings());
    let (x, z) = (3.2 * b.cell_size, 5.7 * b.cell_size);
    let fs = b.frame_seconds;
    for f in 0..b.frames {
        let s = b.sample(4, x, z, f as f32 * fs, 1.0, 1.0);
        assert!((s - b.texel(4, f, 3, 5)).length() < 1e-5);
    }
    let last = b.frames - 1;
    let mid = b.sample(4, x, z, (last as f32 + 0.5) * fs, 1.0, 1.0);
    assert!((mid - (b.texel(4, last, 3, 5) + b.texel(4, 0, 3, 5)) * 0.5).length() < 1e-5);
    let wrapped = b.sample(4, x + b.cells as f32 * b.cell_size, z, b.frames as f32 * fs, 1.0, 1.0);
    assert!((wrapped - b.texel(4, 0, 3, 5)).length() < 1e-5);
    let t = 7.3 * fs;
    assert!((b.sample(4, x, z, t, 2.0, 1.0) - 2.0 * b.sample(4, x, z, t, 1.0, 1.0)).length() < 1e-5);
    assert!((b.sample(4, x, z, t, 1.0, 2.0) - b.sample(4, x, z, 2.0 * t, 1.0, 1.0)).length() < 1e-5);
}

#[test]
fn bad_settings_are_errors() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let d = Dynamics::default();
    assert!(bake(&shape, &d, &wind(), &BakeSettings { cells: 0, ..settings() }).is_err());
    assert!(
        bake(
            &shape,
            &d,
            &wind(),
            &BakeSettings {
                frames: 1,
                ..settings()
            }
        )
        .is_err()
    );
    let bad = WindField {
        winds: vec![Wind {
            power_offset: -1.0,
            ..Wind::default()
        }],
        gusts: vec![],
    };
    assert!(bake(&shape, &d, &bad, &settings()).is_err());
}

/// Every size a bake allocates or steps by is a field error with its bound, before any work
/// (`frames: 4294967295` once sized the textures with an unchecked multiply and aborted;
/// docs/design/limits.md, "Grass bake sizes").
#[test]
fn bake_sizes_are_bounded_before_allocating() {
    let shape = BladeShape::blade(6, 0.3, Segment::default());
    let d = Dynamics::default();
    let cases = [
        (
            BakeSettings {
                frames: u32::MAX,
                ..settings()
            },
            "bake.frames",
            "2..=4096",
        ),
        (
            BakeSettings {
                cells: 1024,
                instances: 1,
                ..settings()
            },
            "bake.frames",
            "16777216 texels",
        ),
        (
            BakeSettings {
                cells: u32::MAX,
                ..settings()
            },
            "bake.cells",
            "1..=1024",
        ),
        (
            BakeSettings {
                instances: u32::MAX,
                ..settings()
            },
            "bake.instances",
            "1..=64",
        ),
        (
            BakeSettings {
                cells: 1024,
                instances: 2,
                ..settings()
            },
            "bake.instances",
            "1048576 blades",
        ),
        (
            BakeSettings {
                record_every: u32::MAX,
                ..settings()
            },
            "bake.record_every",
            "1..=10000",
        ),
        (
            BakeSettings {
                max_warmup_seconds: 1e30,
                ..settings()
            },
            "bake.max_warmup_seconds",
            "0..=600",
        ),
        (
            BakeSettings {
                cell_size: f32::INFINITY,
                ..settings()
            },
            "bake.cell_size",
            "finite",
        ),
    ];
    for (s, field, bound) in cases {
        let started = std::time::Instant::now();
        match bake(&shape, &d, &wind(), &s) {
            Err(GrassBakeError::Settings(e)) => {
                assert_eq!(e.dotted(), field, "{e}");
                assert!(e.message.contains(bound), "{e}");
            }
            Err(e) => panic!("{field}: {e}"),
            Ok(_) => panic!("{field}: baked"),
        }
        assert!(started.elapsed().as_secs_f32() < 1.0, "{field}");
    }
    // The texture size of any u32 sizes is computed without overflow.
    assert_eq!(
        texture_bytes(u32::MAX, u32::MAX, u32::MAX, TextureLayout::Rgba16F),
        None
    );
    assert_eq!(
        texture_bytes(1024, 15, MAX_BAKE_FRAMES, TextureLayout::Rgba16F),
        Some(1024 * 1024 * 15 * 4096 * 8)
    );
}
