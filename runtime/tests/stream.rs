//! The streamer's lifecycle with a toy source: cancellation, budgets, bounded
//! residency, eviction, and the cache's regenerate-on-corruption path.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use sylva_runtime::chunk_cache::ChunkCache;
use sylva_runtime::glam::Vec3;
use sylva_runtime::stream::{
    ChunkCoord, ChunkSource, ChunkState, FrameBudget, StreamEvent, StreamSettings, Streamer, Viewer,
};

/// Chunk (x, z) is the vector [x, z, x·z]; generating it takes `delay`.
struct Toy {
    delay: Duration,
    generated: AtomicU32,
}

impl ChunkSource for Toy {
    type Payload = Vec<i64>;
    type Ready = Vec<i64>;
    fn generate(&self, c: ChunkCoord) -> Vec<i64> {
        self.generated.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(self.delay);
        vec![c[0].into(), c[1].into(), i64::from(c[0]) * i64::from(c[1])]
    }
    fn prepare(&self, p: Vec<i64>) -> Vec<i64> {
        p
    }
    fn cache_key(&self, c: ChunkCoord) -> u64 {
        ((c[0] as u32 as u64) << 32) | c[1] as u32 as u64
    }
    fn upload_bytes(p: &Vec<i64>) -> u64 {
        8 * p.len() as u64
    }
}

fn toy(delay_ms: u64) -> Arc<Toy> {
    Arc::new(Toy {
        delay: Duration::from_millis(delay_ms),
        generated: AtomicU32::new(0),
    })
}

const SETTINGS: StreamSettings = StreamSettings {
    chunk_size: 10.0,
    load_radius: 25.0,
    evict_radius: 35.0,
    near_radius: 5.0,
    max_in_flight: 2,
};

const BUDGET: FrameBudget = FrameBudget {
    installs: 2,
    millis: 100.0,
    upload_bytes: 1 << 20,
};

fn at(x: f32, z: f32) -> Viewer {
    Viewer {
        position: Vec3::new(x, 0.0, z),
        forward: Vec3::X,
    }
}

/// Runs frames until every wanted chunk is installed (or a few seconds pass).
fn settle(s: &mut Streamer<Toy>, viewers: &[Viewer], mut on: impl FnMut(StreamEvent<Vec<i64>>)) {
    let until = Instant::now() + Duration::from_secs(20);
    while !s.is_settled(viewers) {
        assert!(Instant::now() < until, "streaming did not settle");
        s.update(viewers, &BUDGET, &mut on);
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn installs_respect_the_budget_and_payloads_match_their_chunk() {
    let mut s = Streamer::new(toy(0), SETTINGS, Streamer::<Toy>::pool(2).unwrap());
    let mut installed = Vec::new();
    let until = Instant::now() + Duration::from_secs(20);
    while !s.is_settled(&[at(0.0, 0.0)]) {
        assert!(Instant::now() < until);
        let mut this_frame = 0;
        let frame = s.update(&[at(0.0, 0.0)], &BUDGET, |e| {
            if let StreamEvent::Ready { coord, payload } = e {
                assert_eq!(
                    payload,
                    vec![coord[0].into(), coord[1].into(), i64::from(coord[0] * coord[1])]
                );
                installed.push(coord);
                this_frame += 1;
            }
        });
        assert!(this_frame <= BUDGET.installs, "{this_frame} installs in one frame");
        assert_eq!(frame.installs, this_frame);
    }
    // The 25 m circle around the origin touches 6 × 6 chunks minus the corners.
    assert_eq!(installed.len(), 32);
    assert_eq!(s.stats().installed, 32);
    // Nearest first: the four chunks at the origin come before any other.
    let first: std::collections::BTreeSet<ChunkCoord> = installed[..4].iter().copied().collect();
    assert_eq!(first, [[-1, -1], [-1, 0], [0, -1], [0, 0]].into_iter().collect());
}

#[test]
fn a_chunk_that_leaves_before_its_job_starts_is_cancelled_and_never_installed() {
    // One slow generation thread: most jobs are still queued when the viewer jumps away.
    let source = toy(30);
    let settings = StreamSettings {
        max_in_flight: 8,
        ..SETTINGS
    };
    let mut s = Streamer::new(Arc::clone(&source), settings, Streamer::<Toy>::pool(1).unwrap());
    s.update(&[at(0.0, 0.0)], &BUDGET, |_| panic!("nothing is ready yet"));
    let far = [at(10_000.0, 0.0)];
    let mut installed_near_origin = 0;
    let until = Instant::now() + Duration::from_secs(20);
    while !s.is_settled(&far) {
        assert!(Instant::now() < until);
        s.update(&far, &BUDGET, |e| {
            if let StreamEvent::Ready { coord, .. } = e {
                installed_near_origin += u32::from(coord[0] < 100);
            }
        });
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(installed_near_origin, 0);
    assert_eq!(s.state([0, 0]), None);
    assert_eq!(s.state([1000, 0]), Some(ChunkState::Installed));
    let st = s.stats();
    assert!(st.cancelled >= 6, "{st:?}");
    assert_eq!(
        st.cancelled + st.dropped,
        32,
        "every origin chunk was cancelled or dropped: {st:?}"
    );
    // Cancelled jobs never generated: only the dropped ones and the far ring did.
    assert_eq!(u64::from(source.generated.load(Ordering::Relaxed)), st.dropped + 32);
}

#[test]
fn residency_stays_bounded_on_a_long_path_and_evicted_chunks_are_reported() {
    let mut s = Streamer::new(toy(0), SETTINGS, Streamer::<Toy>::pool(2).unwrap());
    let mut resident = std::collections::BTreeSet::new();
    for step in 0..60 {
        let v = [at(step as f32 * 20.0, 0.0)];
        settle(&mut s, &v, |e| match e {
            StreamEvent::Ready { coord, .. } => assert!(resident.insert(coord)),
            StreamEvent::Evicted { coord } => assert!(resident.remove(&coord), "evicted {coord:?} twice"),
        });
        assert_eq!(resident.len(), s.resident());
    }
    // A 35 m eviction circle holds at most 8 × 8 chunks of 10 m.
    assert!(s.stats().resident_max <= 64, "{}", s.stats().resident_max);
    assert!(s.stats().evicted > 100);
}

#[test]
fn a_long_flight_holds_as_many_chunks_as_its_first_ring() {
    let mut s = Streamer::new(toy(0), SETTINGS, Streamer::<Toy>::pool(2).unwrap());
    // A 25 m circle around a corner of 10 m chunks touches 32 of them, the most it can.
    assert_eq!(s.ring_chunks(), 32);
    let mut resident = std::collections::BTreeSet::new();
    let mut on = |e| match e {
        StreamEvent::Ready { coord, .. } => assert!(resident.insert(coord)),
        StreamEvent::Evicted { coord } => assert!(resident.remove(&coord), "evicted {coord:?} twice"),
    };
    settle(&mut s, &[at(0.0, 0.0)], &mut on);
    let first = s.resident();
    assert_eq!(first, 32);
    // Four metres a frame, askew to the grid, across 100 chunks; the evict radius alone
    // would trail the chunks left behind (up to 41).
    for step in 1..=250 {
        let t = step as f32 * 4.0;
        let v = [at(t * 0.8, t * 0.6)];
        settle(&mut s, &v, &mut on);
        let now = s.resident();
        assert!(now <= first, "step {step}: {now} chunks resident, {first} at the start");
        assert!(
            now as f64 >= 0.95 * first as f64,
            "step {step}: {now} resident, {first} at the start"
        );
    }
    assert_eq!(resident.len(), s.resident());
    assert_eq!(s.stats().resident_max, first);
    assert!(s.stats().evicted > 100);
}

#[test]
fn a_viewer_going_back_and_forth_keeps_its_chunks_while_the_budget_has_room() {
    let source = toy(0);
    let mut s = Streamer::new(Arc::clone(&source), SETTINGS, Streamer::<Toy>::pool(2).unwrap());
    // At a chunk's centre the load radius needs 27 chunks: room for 5 more.
    let (a, b) = ([at(5.0, 5.0)], [at(13.0, 5.0)]);
    settle(&mut s, &a, |_| {});
    settle(&mut s, &b, |_| {});
    let generated = source.generated.load(Ordering::Relaxed);
    for _ in 0..10 {
        settle(&mut s, &a, |_| {});
        settle(&mut s, &b, |_| {});
    }
    assert_eq!(
        source.generated.load(Ordering::Relaxed),
        generated,
        "chunks went and came back"
    );
    assert_eq!(s.stats().evicted, 0);
}

#[test]
fn the_cache_serves_warm_starts_and_regenerates_corrupt_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = |corrupt: bool| {
        let source = toy(0);
        let cache = ChunkCache::open(dir.path()).unwrap();
        if corrupt {
            std::fs::write(cache.path(source.cache_key([0, 0])), b"garbage").unwrap();
        }
        let mut s = Streamer::new(Arc::clone(&source), SETTINGS, Streamer::<Toy>::pool(2).unwrap()).with_cache(cache);
        let mut payloads = std::collections::BTreeMap::new();
        settle(&mut s, &[at(0.0, 0.0)], |e| {
            if let StreamEvent::Ready { coord, payload } = e {
                payloads.insert(coord, payload);
            }
        });
        (s.stats().clone(), payloads)
    };
    let (cold, a) = run(false);
    assert_eq!((cold.generated, cold.from_cache, cold.cache_rejected), (32, 0, 0));
    let (warm, b) = run(false);
    assert_eq!((warm.generated, warm.from_cache), (0, 32));
    let (fixed, c) = run(true);
    assert_eq!((fixed.generated, fixed.from_cache, fixed.cache_rejected), (1, 31, 1));
    assert_eq!(a, b);
    assert_eq!(a, c);
}
