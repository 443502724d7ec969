//! Timing of derivation and turtle (not run by default; timings are
//! reported, never asserted). Run with
//! `cargo test -p sylva-systems --release --test lsystem_perf -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use sylva_systems::lsystem::{DeriveOptions, LSystem, TropismMode, TurtleOptions, interpret};

/// Thesis eq. 5.3 with the Fig. 5.4d / 6.1b values.
const FIG_6_1B: &str = "#define a 31
#define d1 120
#define d2 190
#define lr 1.2
#define ls 50
axiom: /(45)A
A -> F(ls)[&(a)F(ls)A]/(d1)[&(a)F(ls)A]/(d2)[&(a)F(ls)A]
F(l) -> F(l*lr)";

fn fig_6_1b_turtle() -> TurtleOptions {
    TurtleOptions {
        tropism: glam::Vec3::new(1.0, 0.0, 1.0),
        tropism_strength: 0.3,
        tropism_mode: TropismMode::Thesis,
        root_stub: 10.0,
        ..TurtleOptions::default()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore = "timing; run explicitly in release"]
fn time_fig_6_1b() {
    let opts = fig_6_1b_turtle();
    let mut times = Vec::new();
    let mut segments = 0;
    for _ in 0..21 {
        let t = Instant::now();
        let system = LSystem::parse(FIG_6_1B).unwrap();
        let word = system.derive(8, &DeriveOptions::default()).unwrap();
        segments = interpret(&word, &opts).unwrap().graph.len();
        times.push(t.elapsed());
    }
    assert_eq!(segments, 13_121);
    println!(
        "Fig. 6.1b parse+derive+turtle: median {:?} over 21 runs ({segments} segments)",
        median(times)
    );
}

#[test]
#[ignore = "timing; run explicitly in release"]
fn time_ten_million_modules() {
    // Fig. 6.1b's grammar at n = 13: 13.55 million modules, 3.19 million segments.
    let system = LSystem::parse(FIG_6_1B).unwrap();
    let threads = rayon::current_num_threads();
    for (label, parallel) in [("sequential", false), ("parallel", true)] {
        let derive_opts = DeriveOptions {
            parallel,
            module_limit: 50_000_000,
            ..DeriveOptions::default()
        };
        let t = Instant::now();
        let word = system.derive(13, &derive_opts).unwrap();
        let derive_time = t.elapsed();
        let t = Instant::now();
        let out = interpret(&word, &fig_6_1b_turtle()).unwrap();
        let turtle_time = t.elapsed();
        let modules = word.len() as f64;
        let segments = out.graph.len() as f64;
        println!(
            "{label} ({threads} threads): {} modules derived in {derive_time:?} ({:.1} M modules/s), \
             turtle {turtle_time:?} ({:.1} M segments/s, {:.1} M modules/s), total {:?}",
            word.len(),
            modules / derive_time.as_secs_f64() / 1e6,
            segments / turtle_time.as_secs_f64() / 1e6,
            modules / turtle_time.as_secs_f64() / 1e6,
            derive_time + turtle_time,
        );
    }
}
