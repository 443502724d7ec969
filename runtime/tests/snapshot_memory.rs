//! What loading and hashing snapshots allocate, measured by a counting allocator: no
//! count read from a crafted file sizes an allocation beyond what the file holds, and
//! the state hash takes no memory in proportion to the state.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr::null_mut;

use serde::{Deserialize, Serialize};
use sylva_runtime::framed::{Frame, HEADER_LEN};
use sylva_runtime::hecs::Entity;
use sylva_runtime::snapshot::FORMAT_VERSION;
use sylva_runtime::{SceneKey, SnapshotError, SnapshotRegistry, Time, World};

/// Counts the bytes each thread holds and the most it held. It refuses any one
/// allocation over [`REFUSE`]: an unbounded count then aborts the test, as it aborted
/// the CLI, instead of taking the machine's memory.
struct Counting;

const REFUSE: usize = 1 << 30;

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: the allocator also runs while a thread's locals are torn down.
    let _ = HELD.try_with(|held| {
        let now = held.get() + delta;
        held.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded to the system allocator with the caller's
// arguments; the counting touches only const-initialised thread locals, which
// never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > REFUSE {
            return null_mut();
        }
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > REFUSE {
            return null_mut();
        }
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc_zeroed` requires.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which got it from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > REFUSE {
            return null_mut();
        }
        // SAFETY: `ptr` came from `System` with `layout`; the caller guarantees `new_size`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `f`'s result and the most bytes this thread held, above what it held before, while `f` ran.
fn peak<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = HELD.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let r = f();
    (r, (PEAK.with(Cell::get) - start).max(0) as usize)
}

#[derive(Serialize, Deserialize)]
struct Pos([f32; 3]);
#[derive(Serialize, Deserialize)]
struct Link(Entity);
#[derive(Serialize, Deserialize)]
struct Label(String);
#[derive(Serialize, Deserialize)]
struct Wind(Vec<f32>);
#[derive(Serialize, Deserialize)]
struct Big(Vec<f32>);

fn registry() -> SnapshotRegistry {
    let mut r = SnapshotRegistry::new();
    r.component::<Pos>("pos")
        .component::<Link>("link")
        .component::<Label>("label")
        .component::<Big>("big")
        .resource::<Wind>("wind");
    r
}

fn key() -> SceneKey {
    SceneKey {
        name: "crafted".into(),
        fingerprint: 1,
        seed: 2,
    }
}

const TIME: Time = Time {
    tick: 3,
    dt: 0.25,
    elapsed: 0.75,
    seed: 2,
};

/// A small world with every kind of count in it: entities (one index freed and reused,
/// so a generation above one), links, strings, and a resource's sequence.
fn small_world() -> World {
    let mut w = World::new();
    let mut last = w.entities.spawn((Pos([0.0; 3]),));
    for i in 0..6 {
        let e = w
            .entities
            .spawn((Pos([i as f32; 3]), Link(last), Label(format!("node {i}"))));
        last = e;
    }
    let gone = w.entities.spawn((Label("gone".into()),));
    w.entities.despawn(gone).unwrap();
    w.entities.spawn((Link(last),));
    w.resources.insert(Wind(vec![0.5, 1.5, 2.5]));
    w
}

/// Bincode varints of huge values: u16, u32 and u64 markers followed by all-ones bytes.
const HUGE: [&[u8]; 3] = [
    &[251, 0xFF, 0xFF],
    &[252, 0xFF, 0xFF, 0xFF, 0x7F],
    &[253, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
];

/// The hostile user's experiment, every way: a huge count written over the bytes from
/// each position of a snapshot's payload (or in place of the one byte there, or that
/// byte set to the largest one-byte count), resealed with a valid checksum. Before the bounds, 6 of 300 such files
/// aborted `sylva run --resume` allocating 25 to 51 GB (entity indices sizing hecs's
/// slots; a string's length would do the same). Now each loads or is an error, and no
/// load holds more than the entity slots any snapshot may use (2^20 of 16 bytes) and
/// a little besides.
#[test]
fn crafted_counts_never_allocate_beyond_the_file() {
    let reg = registry();
    let good = reg.save(&small_world(), TIME, &key(), 9).unwrap();
    let payload = &good[HEADER_LEN..];
    let frame = Frame {
        magic: *b"SYLVASNP",
        version: FORMAT_VERSION,
    };
    let mut variants = Vec::new();
    for i in 0..payload.len() {
        for huge in HUGE {
            let mut over = payload[..i].to_vec();
            over.extend_from_slice(huge);
            over.extend_from_slice(payload.get(i + huge.len()..).unwrap_or_default());
            variants.push(over);
            let mut before = payload[..i].to_vec();
            before.extend_from_slice(huge);
            before.extend_from_slice(&payload[i + 1..]);
            variants.push(before);
        }
        let mut top = payload.to_vec();
        top[i] = 250;
        variants.push(top);
    }
    let (mut loaded, mut refused, mut worst) = (0, 0, 0);
    for crafted in &variants {
        let bytes = frame.seal(reg.schema_hash(), crafted);
        let (result, held) = peak(|| reg.load_into(&bytes, &mut World::new(), &key()).map(|_| ()));
        match result {
            Ok(()) => loaded += 1,
            Err(SnapshotError::Decode(_) | SnapshotError::Scene { .. }) => refused += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
        worst = worst.max(held);
    }
    assert!(refused > variants.len() / 2, "{refused} of {} refused", variants.len());
    assert!(loaded > 0, "some changes are values, not counts");
    assert!(worst < 40 << 20, "a crafted load held {} MiB", worst >> 20);
}

#[test]
fn the_state_hash_holds_no_copy_of_the_state() {
    let reg = registry();
    let mut w = small_world();
    w.entities.spawn((Big(vec![1.0; 16 << 20]),));
    let (hash, held) = peak(|| reg.state_hash(&w, TIME).unwrap());
    assert!(held < 1 << 20, "hashing 64 MiB of state held {} KiB", held >> 10);
    // The counter sees what a save holds: the encoded payload and the sealed file.
    let (bytes, held) = peak(|| reg.save(&w, TIME, &key(), 0).unwrap());
    assert!(held > 2 * (64 << 20), "a save held only {} MiB", held >> 20);
    let mut back = World::new();
    reg.load_into(&bytes, &mut back, &key()).unwrap();
    assert_eq!(reg.state_hash(&back, TIME).unwrap(), hash);
}
