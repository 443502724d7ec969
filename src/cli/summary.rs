//! The lines a run ends with: what was simulated, how long frames took, the state hash, and
//! for a benchmark every system's timings.

use sylva::Report;

use crate::cli::common::count;

/// Prints what a run did: frames, entities, frame times, throughput and the state hash.
pub(crate) fn print_summary(r: &Report) {
    println!(
        "{}: {} ({}, {:.2} s simulated) in {:.2} s on {}",
        r.scene,
        count(r.frames, "frame"),
        count(r.steps, "step"),
        r.sim_seconds,
        r.wall_ms / 1e3,
        count(r.threads as u64, "thread")
    );
    if r.resumed_from_step > 0 {
        println!(
            "  resumed from a snapshot at frame {} (step {})",
            r.resumed_from_frame, r.resumed_from_step
        );
    }
    println!(
        "  {}; frame ms mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
        entities(r),
        r.frame_ms.mean,
        r.frame_ms.p50,
        r.frame_ms.p99,
        r.frame_ms.max
    );
    if r.particles.particles > 0 {
        println!(
            "  {:.1} M particle updates/s, {:.1} M springs/s",
            r.particles.updates_per_s / 1e6,
            r.particles.springs_per_s / 1e6
        );
    }
    if let Some(g) = &r.grass {
        println!(
            "  grass: {} blades, {} baked frames in {:.0} ms, {} live at the end",
            g.blades, g.baked_frames, g.bake_ms, g.live_blades
        );
    }
    println!("  state hash {}", r.state_hash);
}

/// The report's entity counts in words: "1 tree, 40 segments", or "no entities".
fn entities(r: &Report) -> String {
    let entities: Vec<String> = r
        .entities
        .iter()
        .filter(|(kind, n)| **n > 0 && kind.as_str() != "total")
        // The report's plural keys, singular for one: "1 tree", "2 trees".
        .map(|(kind, n)| match kind.strip_suffix('s') {
            Some(one) => count(*n as u64, one),
            None => format!("{n} {kind}"),
        })
        .collect();
    if entities.is_empty() {
        "no entities".to_owned()
    } else {
        entities.join(", ")
    }
}

/// Prints every system's calls and times, and the peak resident memory.
pub(crate) fn print_systems(r: &Report) {
    println!(
        "  {:<24} {:>8} {:>12} {:>10} {:>10} {:>10}",
        "system", "calls", "total ms", "mean ms", "p50 ms", "p99 ms"
    );
    for (name, s) in &r.systems {
        println!(
            "  {:<24} {:>8} {:>12.3} {:>10.4} {:>10.4} {:>10.4}",
            name, s.calls, s.total_ms, s.mean_ms, s.p50_ms, s.p99_ms
        );
    }
    if let Some(rss) = r.peak_rss_bytes {
        println!("  peak RSS {:.1} MiB", rss as f64 / (1024.0 * 1024.0));
    }
}
