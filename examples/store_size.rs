//! The compact chunk store measured against the full-precision form it replaced
//! (docs/design/chunk-store.md), side by side in one run on the bundled world.
//!
//! For a block of chunks around the longest river of domain (0, 0) and a few along the
//! coast, it prints the bytes of a chunk file in each form (median and largest) and the
//! time to encode and to decode one, the two forms interleaved chunk by chunk and each
//! timed as the median of a few runs on one thread. It then compresses the stored stream
//! at several zstd levels, to show what the chosen level buys.
//!
//! Run: `cargo run --release --example store_size [CHUNKS_PER_SIDE]` (default 4).

use std::time::Instant;

use sylva::Scene;
use sylva::runtime::framed;
use sylva::systems::ecology::{AttributeMaps, CoverField};
use sylva::systems::terrain::TerrainChunk;
use sylva::systems::world::{ChunkPayload, RiverCrossing, Surface, TreeInstance, WorldGen, packed};

/// A chunk file before the compact store: every field at full precision, the erosion
/// solver's state included, as the chunk cache framed it.
type FullPrecision = (
    [i32; 2],
    TerrainChunk,
    Surface,
    Vec<TreeInstance>,
    AttributeMaps,
    CoverField,
    Vec<RiverCrossing>,
    u64,
);

const RUNS: usize = 5;

/// Median milliseconds of `RUNS` runs of `f`.
fn millis<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[RUNS / 2]
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let side: i32 = std::env::args().nth(1).map_or(Ok(4), |s| s.parse())?;
    if !(1..=16).contains(&side) {
        return Err("CHUNKS_PER_SIDE must be 1 to 16".into());
    }
    let scene = Scene::world();
    let params = scene.world.ok_or("the world scene has no world")?;
    let g = WorldGen::new(params, scene.seed);
    let domain = g.domains().ok_or("the world has no basins")?.domain([0, 0]);
    let river = domain.rivers.iter().max_by_key(|r| r.points.len()).ok_or("no river")?;
    let mid = river.points[river.points.len() / 2] / g.params().chunk_size();
    let first = [mid.x.floor() as i32 - side / 2, mid.y.floor() as i32 - side / 2];
    let mut coords: Vec<[i32; 2]> = (0..side * side)
        .map(|k| [first[0] + k % side, first[1] + k / side])
        .collect();
    coords.extend((0..4).map(|k| [first[0] + side + 2 * k, first[1] - 2 * k]));
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;

    let (mut bytes, mut times) = (
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new(), Vec::new(), Vec::new()],
    );
    let (mut generate, mut streams) = (Vec::new(), Vec::new());
    for (k, &c) in coords.iter().enumerate() {
        let start = Instant::now();
        let raw = one.install(|| g.generated(c));
        generate.push(start.elapsed().as_secs_f64() * 1e3);
        let stored = packed::settle(&raw);
        let full: FullPrecision = (
            raw.coord,
            raw.terrain,
            raw.surface,
            raw.trees,
            raw.attributes,
            raw.cover,
            raw.rivers,
            stored.hash,
        );
        let old = framed::encode(&full)?;
        let new = framed::encode(&stored)?;
        times[0].push(millis(|| framed::encode(&full)));
        times[1].push(millis(|| framed::encode(&stored)));
        times[2].push(millis(|| framed::decode::<FullPrecision>(&old)));
        times[3].push(millis(|| framed::decode::<ChunkPayload>(&new)));
        bytes[0].push(old.len() as f64);
        bytes[1].push(new.len() as f64);
        streams.push(packed::stream(&stored));
        eprint!("\rchunk {}/{}", k + 1, coords.len());
    }
    eprintln!();
    let largest = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "{} chunks of {} m on one thread, medians:",
        coords.len(),
        g.params().chunk_size()
    );
    println!("  generate (full precision)      {:8.1} ms", median(&mut generate));
    println!(
        "  file bytes      full {:>10.0} (largest {:>10.0})   stored {:>8.0} (largest {:>8.0})   ratio {:.1}x",
        median(&mut bytes[0].clone()),
        largest(&bytes[0]),
        median(&mut bytes[1].clone()),
        largest(&bytes[1]),
        median(&mut bytes[0]) / median(&mut bytes[1])
    );
    let [enc_old, enc_new, dec_old, dec_new] = times.each_mut().map(|t| median(t));
    println!(
        "  encode ms       full {enc_old:10.2}   stored {enc_new:8.2}   ratio {:.2}",
        enc_new / enc_old
    );
    println!(
        "  decode ms       full {dec_old:10.2}   stored {dec_new:8.2}   ratio {:.2}",
        dec_new / dec_old
    );

    println!(
        "the stored stream ({:.0} bytes median) by zstd level:",
        median(&mut streams.iter().map(|s| s.len() as f64).collect::<Vec<_>>())
    );
    for level in [1, 3, 6, 9, 15, 19] {
        let (mut size, mut enc, mut dec) = (Vec::new(), Vec::new(), Vec::new());
        for s in &streams {
            let z = zstd::bulk::compress(s, level)?;
            size.push(z.len() as f64);
            enc.push(millis(|| zstd::bulk::compress(s, level)));
            dec.push(millis(|| zstd::bulk::decompress(&z, s.len())));
        }
        println!(
            "  level {level:2}: {:8.0} bytes  compress {:6.2} ms  decompress {:5.2} ms",
            median(&mut size),
            median(&mut enc),
            median(&mut dec)
        );
    }
    Ok(())
}
