//! Saving and restoring a world's simulation state.
//!
//! Only registered component and resource types are simulation state; the rest
//! (caches, GPU handles, metrics) is rebuilt. A resource that mixes both (a bake
//! and the live state beside it) registers just its [`StatePart`]. A snapshot
//! file is:
//!
//! | bytes | field |
//! | ----- | ----- |
//! | 8     | magic `SYLVASNP` |
//! | 4     | format version (little endian) |
//! | 8     | schema hash: the registered type names, in order |
//! | 8     | payload length |
//! | 8     | xxh3-64 checksum of the payload |
//! | n     | payload: bincode 2 (serde, standard config) |
//!
//! The payload is the [`SceneKey`] (scene name, fingerprint, seed) and the frames run,
//! then the state: tick, step, elapsed time, seed, and each component column and
//! resource as (name, bytes).
//!
//! Loading checks all of it, refuses a snapshot of another scene or seed, decodes
//! every column into a fresh world, and only then hands it back: a bad file is an
//! error and never a half-loaded world. No count read from the file sizes an
//! allocation beyond what the file holds: strings are bounded by `framed::decode`,
//! entity indices (hecs keeps a slot for every index below the largest) by
//! [`entity_slots`]. The state part, hashed as it is encoded and never held whole,
//! is the [`state_hash`](SnapshotRegistry::state_hash) that determinism tests compare.

use std::any::Any;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::framed::{self, Frame, FrameError};
use crate::resources::Resources;
use crate::system::Time;
use crate::world::World;

/// Version of the snapshot layout this build writes and reads (2: the scene key and frames).
pub const FORMAT_VERSION: u32 = 2;
/// Snapshot files: the registry's schema hash is the frame's key.
const FRAME: Frame = Frame {
    magic: *b"SYLVASNP",
    version: FORMAT_VERSION,
};

/// Entity slots any snapshot may use, however small.
pub const MIN_ENTITY_SLOTS: u64 = 1 << 20;

/// The entity indices a snapshot of `payload_len` bytes may use: at least
/// [`MIN_ENTITY_SLOTS`], and one per payload byte beyond that.
///
/// hecs keeps a 16-byte slot (location, generation, free list) for every index below
/// the largest in use, so one crafted index near 2³² would make a small file allocate
/// 64 GB. A world reuses freed indices, so its largest index stays below the most
/// entities it ever held at once, which a snapshot reaches only after mass despawns.
pub fn entity_slots(payload_len: usize) -> u64 {
    MIN_ENTITY_SLOTS.max(payload_len as u64)
}

/// The scene a state belongs to. Every snapshot carries it, and a snapshot loads
/// only into a world whose key has the same fingerprint and seed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneKey {
    /// The scene's name, for messages only: renaming a scene changes no state.
    pub name: String,
    /// Hash of the scene parameters that shape the state (see `Scene::fingerprint`).
    pub fingerprint: u64,
    /// The world seed.
    pub seed: u64,
}

/// Hash of `params`' encoding: a [`SceneKey`]'s fingerprint of the parameters that
/// shape a state. Encoded as it is hashed, like the state.
///
/// # Errors
/// [`SnapshotError::Encode`] when `params` do not encode (a map or sequence of unknown length).
pub fn fingerprint<T: Serialize + ?Sized>(params: &T) -> Result<u64, SnapshotError> {
    let mut hasher = HashWriter(Xxh3::new());
    put(params, &mut hasher)?;
    Ok(hasher.0.digest())
}

impl fmt::Display for SceneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "scene `{}` (seed {})", self.name, self.seed)
    }
}

/// Why a snapshot could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The bytes do not start with the snapshot magic.
    #[error("not a Sylva snapshot (bad magic bytes)")]
    NotASnapshot,
    /// Written by an incompatible build.
    #[error("snapshot format version {found} is not supported (this build reads version {supported})")]
    Version {
        /// Version in the file.
        found: u32,
        /// Version this build reads.
        supported: u32,
    },
    /// Written by a world with other registered types.
    #[error("snapshot was written for other component types (schema {found:016x}, this world has {expected:016x})")]
    Schema {
        /// Schema hash in the file.
        found: u64,
        /// Schema hash of this registry.
        expected: u64,
    },
    /// Saved from another scene, or with another seed.
    #[error("snapshot of {saved} does not fit {this}: {}", mismatch(saved, this))]
    Scene {
        /// The key in the file.
        saved: Box<SceneKey>,
        /// The key of the world it was to load into.
        this: Box<SceneKey>,
    },
    /// The file is shorter or longer than its header says.
    #[error("snapshot is truncated or padded: header promises {expected} payload bytes, file has {found}")]
    Length {
        /// Payload length in the header.
        expected: u64,
        /// Payload bytes present.
        found: u64,
    },
    /// The payload does not match its checksum.
    #[error("snapshot is corrupt: checksum mismatch")]
    Checksum,
    /// The payload could not be decoded.
    #[error("snapshot payload could not be decoded: {0}")]
    Decode(String),
    /// State could not be encoded.
    #[error("state could not be encoded: {0}")]
    Encode(String),
    /// A resource refused its saved state (see [`StatePart::check_state`]).
    #[error("snapshot state `{name}` does not fit this world: {why}")]
    State {
        /// Registered name of the state.
        name: String,
        /// Why it does not fit.
        why: StateMismatch,
    },
}

/// What differs between two scene keys that do not fit.
fn mismatch(saved: &SceneKey, this: &SceneKey) -> &'static str {
    match (saved.fingerprint == this.fingerprint, saved.seed == this.seed) {
        (false, false) => "the scene parameters and the seeds differ",
        (false, true) => "the scene parameters differ",
        _ => "the seeds differ",
    }
}

/// Entities being decoded, by index: the handle and the components so far.
type Builders = BTreeMap<u32, (hecs::Entity, hecs::EntityBuilder)>;
/// Encodes a column into the writer: bytes written, and entity slots used (largest index + 1).
type WriteColumn = fn(&hecs::World, &mut dyn Write) -> Result<(u64, u64), SnapshotError>;
type LoadColumn = fn(&[u8], &mut Builders, u64) -> Result<(), SnapshotError>;
/// Encodes a resource into the writer, if the world has it: bytes written.
type WriteResource = fn(&Resources, &mut dyn Write) -> Result<Option<u64>, SnapshotError>;
type DecodeResource = fn(&[u8]) -> Result<Box<dyn Any + Send + Sync>, SnapshotError>;
type CheckResource = fn(&Resources, &(dyn Any + Send + Sync)) -> Result<(), StateMismatch>;
type InsertResource = fn(&mut Resources, Box<dyn Any + Send + Sync>);

struct ComponentCodec {
    name: String,
    write: WriteColumn,
    load: LoadColumn,
}

struct ResourceCodec {
    name: String,
    write: WriteResource,
    decode: DecodeResource,
    /// Runs on every decoded value before the world is touched.
    check: CheckResource,
    insert: InsertResource,
}

/// Why a saved state does not fit the resource it would be restored into (see
/// [`StatePart::check_state`]): what differs, in words, with where it differs.
///
/// ```
/// use sylva_runtime::snapshot::StateMismatch;
///
/// let e = StateMismatch::new("3 blades saved, the field has 2").within("species 1");
/// assert_eq!(e.to_string(), "species 1: 3 blades saved, the field has 2");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct StateMismatch {
    why: String,
}

impl StateMismatch {
    /// A mismatch described by `why`.
    pub fn new(why: impl Into<String>) -> Self {
        Self { why: why.into() }
    }

    /// The mismatch found inside `part` of a larger state.
    pub fn within(self, part: impl std::fmt::Display) -> Self {
        Self {
            why: format!("{part}: {}", self.why),
        }
    }
}

/// A resource whose simulation state is a part of it: the rest (bakes, indices,
/// settings from the scene) is rebuilt with the world and stays as it is on load.
///
/// Registered with [`SnapshotRegistry::resource_state`]. Loading decodes the state,
/// asks the world's resource to [`check_state`](Self::check_state) it (nothing has
/// changed yet, so a refusal leaves the world as it was), and only then
/// [`restore_state`](Self::restore_state)s it.
pub trait StatePart: Send + Sync + 'static {
    /// The saved part.
    type State: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The current state.
    fn save_state(&self) -> Self::State;
    /// Whether `state` fits this resource (for example, was saved from the same scene).
    ///
    /// # Errors
    /// Why it does not fit.
    fn check_state(&self, state: &Self::State) -> Result<(), StateMismatch>;
    /// Replaces the current state with a checked one.
    fn restore_state(&mut self, state: Self::State);
}

/// The payload as read: the scene key and frames, then the state, its columns
/// borrowed from the file until each is decoded.
#[derive(Deserialize)]
struct Saved<'a> {
    scene: &'a str,
    fingerprint: u64,
    key_seed: u64,
    frames: u64,
    tick: u64,
    dt: f32,
    elapsed: f64,
    seed: u64,
    #[serde(borrow)]
    components: Vec<(&'a str, &'a [u8])>,
    #[serde(borrow)]
    resources: Vec<(&'a str, &'a [u8])>,
}

/// What a load hands back besides the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loaded {
    /// The time the snapshot was saved at.
    pub time: Time,
    /// Frames run before the save, over every run that built the state.
    pub frames: u64,
}

/// Which types make up the simulation state, and how to encode them.
#[derive(Default)]
pub struct SnapshotRegistry {
    components: Vec<ComponentCodec>,
    resources: Vec<ResourceCodec>,
}

/// Encodes `value` into `out`; the bytes written.
fn put<T: Serialize + ?Sized>(value: &T, mut out: &mut dyn Write) -> Result<u64, SnapshotError> {
    framed::encode_into(value, &mut out).map_err(|e| SnapshotError::Encode(e.to_string()))
}

fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, SnapshotError> {
    framed::decode(bytes).map_err(|e| SnapshotError::Decode(e.to_string()))
}

fn write_column<T: hecs::Component + Serialize>(
    world: &hecs::World,
    out: &mut dyn Write,
) -> Result<(u64, u64), SnapshotError> {
    let mut query = world.query::<(hecs::Entity, &T)>();
    let mut slots = 0;
    let mut rows: Vec<(u64, &T)> = query
        .iter()
        .map(|(e, c)| {
            slots = slots.max(u64::from(e.id()) + 1);
            (e.to_bits().get(), c)
        })
        .collect();
    rows.sort_unstable_by_key(|r| r.0);
    Ok((put(&rows, out)?, slots))
}

fn load_column<T: hecs::Component + DeserializeOwned>(
    bytes: &[u8],
    builders: &mut Builders,
    slots: u64,
) -> Result<(), SnapshotError> {
    let rows: Vec<(u64, T)> = decode(bytes)?;
    let mut last = 0;
    for (bits, value) in rows {
        let entity = hecs::Entity::from_bits(bits)
            .ok_or_else(|| SnapshotError::Decode(format!("invalid entity handle {bits:#x}")))?;
        // Saved in handle order: a repeat or a step back is not a file this build wrote.
        if bits <= last {
            return Err(SnapshotError::Decode(format!("entity {bits:#x} out of order")));
        }
        last = bits;
        let index = entity.id();
        if u64::from(index) >= slots {
            return Err(SnapshotError::Decode(format!(
                "entity index {index} is beyond the {slots} a snapshot of this size may use"
            )));
        }
        match builders.entry(index) {
            Entry::Vacant(v) => {
                v.insert((entity, hecs::EntityBuilder::new())).1.add(value);
            }
            Entry::Occupied(o) if o.get().0 == entity => {
                o.into_mut().1.add(value);
            }
            Entry::Occupied(_) => {
                return Err(SnapshotError::Decode(format!("two entities share index {index}")));
            }
        }
    }
    Ok(())
}

fn write_resource<T: Serialize + Send + Sync + 'static>(
    resources: &Resources,
    out: &mut dyn Write,
) -> Result<Option<u64>, SnapshotError> {
    resources.get::<T>().map(|r| put(&*r, out)).transpose()
}

fn decode_resource<T: DeserializeOwned + Send + Sync + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn Any + Send + Sync>, SnapshotError> {
    Ok(Box::new(decode::<T>(bytes)?))
}

fn accept_resource(_: &Resources, _: &(dyn Any + Send + Sync)) -> Result<(), StateMismatch> {
    Ok(())
}

fn insert_resource<T: Send + Sync + 'static>(resources: &mut Resources, value: Box<dyn Any + Send + Sync>) {
    if let Ok(v) = value.downcast::<T>() {
        resources.insert(*v);
    }
}

fn write_state_part<R: StatePart>(resources: &Resources, out: &mut dyn Write) -> Result<Option<u64>, SnapshotError> {
    resources.get::<R>().map(|r| put(&r.save_state(), out)).transpose()
}

fn check_state<R: StatePart>(resources: &Resources, value: &(dyn Any + Send + Sync)) -> Result<(), StateMismatch> {
    let state = value
        .downcast_ref::<R::State>()
        .ok_or_else(|| StateMismatch::new("decoded state has the wrong type"))?;
    resources
        .get::<R>()
        .ok_or_else(|| StateMismatch::new("the world has no resource to restore it into"))?
        .check_state(state)
}

fn restore_state<R: StatePart>(resources: &mut Resources, value: Box<dyn Any + Send + Sync>) {
    if let (Ok(state), Some(mut r)) = (value.downcast::<R::State>(), resources.get_mut::<R>()) {
        r.restore_state(*state);
    }
}

/// The xxh3 hash of everything written into it.
struct HashWriter(Xxh3);

impl Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SnapshotRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes component `T` part of the saved state under `name`.
    ///
    /// # Panics
    /// When `name` is already registered.
    pub fn component<T>(&mut self, name: &str) -> &mut Self
    where
        T: hecs::Component + Serialize + DeserializeOwned,
    {
        self.assert_new(name);
        self.components.push(ComponentCodec {
            name: name.to_owned(),
            write: write_column::<T>,
            load: load_column::<T>,
        });
        self
    }

    /// Makes resource `T` part of the saved state under `name`.
    ///
    /// # Panics
    /// When `name` is already registered.
    pub fn resource<T>(&mut self, name: &str) -> &mut Self
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        self.assert_new(name);
        self.resources.push(ResourceCodec {
            name: name.to_owned(),
            write: write_resource::<T>,
            decode: decode_resource::<T>,
            check: accept_resource,
            insert: insert_resource::<T>,
        });
        self
    }

    /// Makes the [`StatePart`] of resource `R` part of the saved state under `name`.
    ///
    /// # Panics
    /// When `name` is already registered.
    pub fn resource_state<R: StatePart>(&mut self, name: &str) -> &mut Self {
        self.assert_new(name);
        self.resources.push(ResourceCodec {
            name: name.to_owned(),
            write: write_state_part::<R>,
            decode: decode_resource::<R::State>,
            check: check_state::<R>,
            insert: restore_state::<R>,
        });
        self
    }

    fn assert_new(&self, name: &str) {
        let taken = self
            .components
            .iter()
            .map(|c| &c.name)
            .chain(self.resources.iter().map(|r| &r.name));
        for n in taken {
            assert!(n != name, "snapshot name `{name}` is registered twice");
        }
    }

    /// Hash of the registered names in order: files from another set are refused.
    pub fn schema_hash(&self) -> u64 {
        let mut text = String::new();
        for c in &self.components {
            text.push_str("c:");
            text.push_str(&c.name);
            text.push('\n');
        }
        for r in &self.resources {
            text.push_str("r:");
            text.push_str(&r.name);
            text.push('\n');
        }
        xxh3_64(text.as_bytes())
    }

    /// Writes the state part of the payload to `out` as it is encoded, each column
    /// twice (its length, which comes first, is counted by encoding it into a sink),
    /// so that no column is ever held encoded. Returns the entity slots used.
    fn write_state(&self, world: &World, time: Time, out: &mut dyn Write) -> Result<u64, SnapshotError> {
        put(&(time.tick, time.dt, time.elapsed, time.seed), out)?;
        put(&(self.components.len() as u64), out)?;
        let mut slots = 0;
        for c in &self.components {
            let (len, used) = (c.write)(&world.entities, &mut io::sink())?;
            put(&(c.name.as_str(), len), out)?;
            (c.write)(&world.entities, out)?;
            slots = slots.max(used);
        }
        let mut present = Vec::with_capacity(self.resources.len());
        for r in &self.resources {
            if let Some(len) = (r.write)(&world.resources, &mut io::sink())? {
                present.push((r, len));
            }
        }
        put(&(present.len() as u64), out)?;
        for (r, len) in present {
            put(&(r.name.as_str(), len), out)?;
            (r.write)(&world.resources, out)?;
        }
        Ok(slots)
    }

    /// Hash of the registered state: equal states give equal hashes. The state is
    /// hashed as it is encoded, so hashing takes no memory in proportion to it.
    pub fn state_hash(&self, world: &World, time: Time) -> Result<u64, SnapshotError> {
        let mut hasher = HashWriter(Xxh3::new());
        let mut buffered = BufWriter::with_capacity(1 << 16, &mut hasher);
        self.write_state(world, time, &mut buffered)?;
        buffered.flush().map_err(|e| SnapshotError::Encode(e.to_string()))?;
        drop(buffered);
        Ok(hasher.0.digest())
    }

    /// Encodes the registered state of `world` into snapshot bytes, stamped with the
    /// scene it belongs to and the `frames` run to reach it.
    ///
    /// # Errors
    /// [`SnapshotError::Encode`] also when the world uses entity indices beyond what
    /// [`entity_slots`] lets the file use: loading would refuse it.
    pub fn save(&self, world: &World, time: Time, scene: &SceneKey, frames: u64) -> Result<Vec<u8>, SnapshotError> {
        let mut payload = Vec::new();
        put(
            &(scene.name.as_str(), scene.fingerprint, scene.seed, frames),
            &mut payload,
        )?;
        let slots = self.write_state(world, time, &mut payload)?;
        if slots > entity_slots(payload.len()) {
            return Err(SnapshotError::Encode(format!(
                "the world uses {slots} entity indices, more than the {} a snapshot of {} bytes may use",
                entity_slots(payload.len()),
                payload.len()
            )));
        }
        Ok(FRAME.seal(self.schema_hash(), &payload))
    }

    /// Replaces `world`'s entities and registered resources with the snapshot's
    /// and returns the time it was saved at and the frames run to reach it.
    ///
    /// The snapshot must have been saved from a world keyed like `scene` (fingerprint
    /// and seed). Everything is decoded, and every [`StatePart`] checked, before
    /// `world` is touched, so on error `world` is unchanged. Resources that are not
    /// registered (caches, settings) stay as they were; systems that cache derived
    /// data must notice the new entities.
    pub fn load_into(&self, bytes: &[u8], world: &mut World, scene: &SceneKey) -> Result<Loaded, SnapshotError> {
        let payload = self.check_header(bytes)?;
        let saved: Saved = decode(payload)?;
        if saved.fingerprint != scene.fingerprint || saved.key_seed != scene.seed {
            let key = SceneKey {
                name: saved.scene.to_owned(),
                fingerprint: saved.fingerprint,
                seed: saved.key_seed,
            };
            return Err(SnapshotError::Scene {
                saved: Box::new(key),
                this: Box::new(scene.clone()),
            });
        }
        let slots = entity_slots(payload.len());
        let mut builders = Builders::new();
        for &(name, blob) in &saved.components {
            let codec = self
                .components
                .iter()
                .find(|c| c.name == name)
                .ok_or_else(|| SnapshotError::Decode(format!("unknown component `{name}`")))?;
            (codec.load)(blob, &mut builders, slots)?;
        }
        let mut decoded = Vec::with_capacity(saved.resources.len().min(self.resources.len()));
        for &(name, blob) in &saved.resources {
            let codec = self
                .resources
                .iter()
                .find(|r| r.name == name)
                .ok_or_else(|| SnapshotError::Decode(format!("unknown resource `{name}`")))?;
            let value = (codec.decode)(blob)?;
            (codec.check)(&world.resources, &*value).map_err(|why| SnapshotError::State {
                name: name.to_owned(),
                why,
            })?;
            decoded.push((codec.insert, value));
        }
        let mut entities = hecs::World::new();
        // In index order, each index is new to the world when spawned: hecs extends its
        // slots once per entity instead of searching its free list.
        for (entity, mut builder) in builders.into_values() {
            entities.spawn_at(entity, builder.build());
        }
        world.entities = entities;
        for (insert, value) in decoded {
            insert(&mut world.resources, value);
        }
        Ok(Loaded {
            time: Time {
                tick: saved.tick,
                dt: saved.dt,
                elapsed: saved.elapsed,
                seed: saved.seed,
            },
            frames: saved.frames,
        })
    }

    fn check_header<'b>(&self, bytes: &'b [u8]) -> Result<&'b [u8], SnapshotError> {
        let (schema, payload) = FRAME.open(bytes).map_err(|e| match e {
            FrameError::Magic => SnapshotError::NotASnapshot,
            FrameError::Version { found, supported } => SnapshotError::Version { found, supported },
            FrameError::Length { expected, found } => SnapshotError::Length { expected, found },
            FrameError::Checksum => SnapshotError::Checksum,
        })?;
        if schema != self.schema_hash() {
            return Err(SnapshotError::Schema {
                found: schema,
                expected: self.schema_hash(),
            });
        }
        Ok(payload)
    }

    /// Writes a snapshot file the user named, through
    /// [`write_output`](framed::write_output) (a regular file replaced atomically, a FIFO
    /// written through, a link's file replaced); see [`save`](Self::save).
    pub fn save_file(
        &self,
        world: &World,
        time: Time,
        scene: &SceneKey,
        frames: u64,
        path: &Path,
    ) -> Result<(), SnapshotError> {
        let bytes = self.save(world, time, scene, frames)?;
        let io = |source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        };
        framed::write_output(path, &bytes).map_err(io)
    }

    /// Reads a snapshot file written by [`save_file`](Self::save_file); see [`load_into`](Self::load_into).
    pub fn load_file_into(&self, path: &Path, world: &mut World, scene: &SceneKey) -> Result<Loaded, SnapshotError> {
        let bytes = framed::read_regular(path, framed::MAX_READ_BYTES, framed::Links::Follow).map_err(|source| {
            SnapshotError::Io {
                path: path.to_owned(),
                source,
            }
        })?;
        self.load_into(&bytes, world, scene)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framed::HEADER_LEN;

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Pos([f32; 3]);
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Link(hecs::Entity);
    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    struct Wind(f32);
    struct Cache;

    /// A bake (rebuilt, not saved) with live state beside it.
    struct Field {
        bake: Vec<f32>,
        live: Vec<f32>,
    }

    impl StatePart for Field {
        type State = Vec<f32>;
        fn save_state(&self) -> Vec<f32> {
            self.live.clone()
        }
        fn check_state(&self, state: &Vec<f32>) -> Result<(), StateMismatch> {
            if state.len() == self.bake.len() {
                Ok(())
            } else {
                Err(StateMismatch::new(format!(
                    "{} values for a bake of {}",
                    state.len(),
                    self.bake.len()
                )))
            }
        }
        fn restore_state(&mut self, state: Vec<f32>) {
            self.live = state;
        }
    }

    fn registry() -> SnapshotRegistry {
        let mut r = SnapshotRegistry::new();
        r.component::<Pos>("pos")
            .component::<Link>("link")
            .resource::<Wind>("wind");
        r
    }

    fn key() -> SceneKey {
        SceneKey {
            name: "meadow".into(),
            fingerprint: 0xF00D,
            seed: 7,
        }
    }

    fn sample() -> (World, Time) {
        let mut w = World::new();
        let a = w.entities.spawn((Pos([1.0, 2.0, 3.0]),));
        let gone = w.entities.spawn((Pos([0.0; 3]),));
        let b = w.entities.spawn((Pos([4.0, 5.0, 6.0]), Link(a)));
        w.entities.despawn(gone).unwrap();
        w.entities.spawn((Link(b), Cache));
        w.resources.insert(Wind(0.5));
        w.resources.insert(Cache);
        (
            w,
            Time {
                tick: 10,
                dt: 0.1,
                elapsed: 1.0,
                seed: 7,
            },
        )
    }

    fn rows(w: &World) -> Vec<(u64, Option<Pos>, Option<Link>)> {
        let mut v: Vec<_> = w
            .entities
            .iter()
            .map(|e| {
                (
                    e.entity().to_bits().get(),
                    e.get::<&Pos>().map(|p| (*p).clone()),
                    e.get::<&Link>().map(|l| (*l).clone()),
                )
            })
            .filter(|r| r.1.is_some() || r.2.is_some())
            .collect();
        v.sort_by_key(|r| r.0);
        v
    }

    /// The payload as format version 2 lays it out, built by hand: the scene key and
    /// frames, the time, and the (name, bytes) of each component and resource.
    type Parts = (Vec<(String, Vec<u8>)>, Vec<(String, Vec<u8>)>);
    fn payload(key: &SceneKey, frames: u64, t: Time, (components, resources): &Parts) -> Vec<u8> {
        let stamp = (key.name.as_str(), key.fingerprint, key.seed, frames);
        let state = (t.tick, t.dt, t.elapsed, t.seed, components, resources);
        framed::encode(&(stamp, state)).unwrap()
    }

    /// The payload's state part as format version 1 encoded it, held whole: what the
    /// state hash hashed before it was streamed.
    fn state_v1(w: &World, t: Time) -> Vec<u8> {
        fn column<T: hecs::Component + Serialize>(w: &World) -> Vec<u8> {
            let mut query = w.entities.query::<(hecs::Entity, &T)>();
            let mut rows: Vec<(u64, &T)> = query.iter().map(|(e, c)| (e.to_bits().get(), c)).collect();
            rows.sort_by_key(|r| r.0);
            framed::encode(&rows).unwrap()
        }
        let components = vec![
            ("pos".to_owned(), column::<Pos>(w)),
            ("link".to_owned(), column::<Link>(w)),
        ];
        let wind = w.resources.get::<Wind>().map(|r| framed::encode(&*r).unwrap());
        let resources: Vec<(String, Vec<u8>)> = wind.into_iter().map(|b| ("wind".to_owned(), b)).collect();
        framed::encode(&(t.tick, t.dt, t.elapsed, t.seed, components, resources)).unwrap()
    }

    #[test]
    fn round_trip_keeps_entities_links_resources_and_frames() {
        let (w, t) = sample();
        let reg = registry();
        let bytes = reg.save(&w, t, &key(), 25).unwrap();
        let mut back = World::new();
        back.resources.insert(Cache);
        let loaded = reg.load_into(&bytes, &mut back, &key()).unwrap();
        assert_eq!(rows(&w), rows(&back));
        assert_eq!(back.resources.get::<Wind>().map(|w| w.0), Some(0.5));
        assert!(back.resources.contains::<Cache>(), "unregistered resources are kept");
        assert_eq!(loaded, Loaded { time: t, frames: 25 });
        assert_eq!(reg.state_hash(&w, t).unwrap(), reg.state_hash(&back, t).unwrap());
        // Links still point at the right entity.
        let link = back.entities.query::<&Link>().iter().map(|l| l.0).next().unwrap();
        assert!(back.entities.get::<&Pos>(link).is_ok());
    }

    #[test]
    fn the_state_hash_is_streamed_and_unchanged_from_version_1() {
        let (w, t) = sample();
        let reg = registry();
        assert_eq!(reg.state_hash(&w, t).unwrap(), xxh3_64(&state_v1(&w, t)));
        // The file holds the same state bytes after the scene key and frames.
        let bytes = reg.save(&w, t, &key(), 3).unwrap();
        let stamp = framed::encode(&("meadow", 0xF00Du64, 7u64, 3u64)).unwrap();
        assert_eq!(bytes[HEADER_LEN..HEADER_LEN + stamp.len()], stamp[..]);
        assert_eq!(bytes[HEADER_LEN + stamp.len()..], state_v1(&w, t)[..]);
    }

    #[test]
    fn a_snapshot_of_another_scene_or_seed_is_refused_naming_both() {
        let (w, t) = sample();
        let reg = registry();
        let bytes = reg.save(&w, t, &key(), 0).unwrap();
        let refuse = |this: SceneKey| {
            let (mut target, _) = sample();
            target.entities.spawn((Pos([9.0; 3]),));
            let before = rows(&target);
            let e = reg.load_into(&bytes, &mut target, &this).unwrap_err();
            assert_eq!(rows(&target), before, "a refused load changed the world");
            e.to_string()
        };
        let other = SceneKey {
            name: "showcase".into(),
            fingerprint: 0xBEEF,
            ..key()
        };
        assert_eq!(
            refuse(other.clone()),
            "snapshot of scene `meadow` (seed 7) does not fit scene `showcase` (seed 7): the scene parameters differ"
        );
        assert_eq!(
            refuse(SceneKey { seed: 8, ..key() }),
            "snapshot of scene `meadow` (seed 7) does not fit scene `meadow` (seed 8): the seeds differ"
        );
        assert_eq!(
            refuse(SceneKey { seed: 8, ..other }),
            "snapshot of scene `meadow` (seed 7) does not fit scene `showcase` (seed 8): the scene parameters and the seeds differ"
        );
        // The name is for messages: a renamed scene with the same parameters and seed loads.
        let renamed = SceneKey {
            name: "meadow-copy".into(),
            ..key()
        };
        reg.load_into(&bytes, &mut World::new(), &renamed).unwrap();
    }

    #[test]
    fn state_parts_round_trip_and_a_misfit_changes_nothing() {
        let mut reg = registry();
        reg.resource_state::<Field>("field");
        let (mut w, t) = sample();
        w.resources.insert(Field {
            bake: vec![1.0, 2.0],
            live: vec![0.25, 0.5],
        });
        let bytes = reg.save(&w, t, &key(), 0).unwrap();
        let h = reg.state_hash(&w, t).unwrap();
        w.resources.get_mut::<Field>().unwrap().live[1] = 9.0;
        assert_ne!(h, reg.state_hash(&w, t).unwrap(), "the state part is in the hash");
        reg.load_into(&bytes, &mut w, &key()).unwrap();
        assert_eq!(w.resources.get::<Field>().unwrap().live, [0.25, 0.5]);
        assert_eq!(reg.state_hash(&w, t).unwrap(), h);

        // A world whose field has another size refuses the state, and keeps its entities.
        w.resources.insert(Field {
            bake: vec![1.0; 3],
            live: vec![7.0; 3],
        });
        let pos = w.entities.spawn((Pos([9.0; 3]),));
        match reg.load_into(&bytes, &mut w, &key()) {
            Err(SnapshotError::State { name, why }) => {
                assert_eq!(name, "field");
                assert_eq!(why.to_string(), "2 values for a bake of 3");
            }
            other => panic!("expected a state error, got {other:?}"),
        }
        assert!(w.entities.contains(pos), "entities were left alone");
        assert_eq!(w.resources.get::<Field>().unwrap().live, [7.0; 3]);
    }

    #[test]
    fn state_hash_sees_every_change() {
        let (mut w, t) = sample();
        let reg = registry();
        let h = reg.state_hash(&w, t).unwrap();
        let p = w.entities.query_mut::<&mut Pos>().into_iter().next().unwrap();
        p.0[0] = f32::from_bits(p.0[0].to_bits() + 1);
        assert_ne!(h, reg.state_hash(&w, t).unwrap());
    }

    #[test]
    fn every_corruption_is_an_error() {
        let (w, t) = sample();
        let reg = registry();
        let good = reg.save(&w, t, &key(), 0).unwrap();
        let load = |bytes: &[u8]| {
            let (mut target, _) = sample();
            let before = rows(&target);
            let r = reg.load_into(bytes, &mut target, &key());
            if r.is_err() {
                assert_eq!(rows(&target), before, "a failed load changed the world");
            }
            r
        };
        assert!(matches!(load(b"hello"), Err(SnapshotError::NotASnapshot)));
        assert!(matches!(
            load(&good[..HEADER_LEN - 1]),
            Err(SnapshotError::NotASnapshot)
        ));
        let mut v = good.clone();
        v[8] = 99;
        assert!(matches!(load(&v), Err(SnapshotError::Version { found: 99, .. })));
        assert!(matches!(
            load(&good[..good.len() - 1]),
            Err(SnapshotError::Length { .. })
        ));
        // Flip every payload byte in turn: each is caught by the checksum.
        for i in HEADER_LEN..good.len() {
            let mut v = good.clone();
            v[i] ^= 0x40;
            assert!(matches!(load(&v), Err(SnapshotError::Checksum)), "byte {i}");
        }
        let mut other = SnapshotRegistry::new();
        other.component::<Pos>("pos");
        assert!(matches!(
            other.load_into(&good, &mut World::new(), &key()),
            Err(SnapshotError::Schema { .. })
        ));
    }

    #[test]
    fn a_version_1_file_is_refused_with_the_version_error() {
        let (w, t) = sample();
        let reg = registry();
        let v1 = Frame { version: 1, ..FRAME }.seal(reg.schema_hash(), &state_v1(&w, t));
        let e = reg.load_into(&v1, &mut World::new(), &key()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "snapshot format version 1 is not supported (this build reads version 2)"
        );
    }

    #[test]
    fn valid_checksum_over_garbage_is_a_decode_error() {
        let reg = registry();
        let payload = vec![0xFFu8; 64];
        let v = FRAME.seal(reg.schema_hash(), &payload);
        assert!(matches!(
            reg.load_into(&v, &mut World::new(), &key()),
            Err(SnapshotError::Decode(_))
        ));
    }

    /// Loads a hand-built payload with `pos` as the position column.
    fn load_pos_rows(pos: &[(u64, Pos)]) -> Result<Loaded, SnapshotError> {
        let reg = registry();
        let parts = (vec![("pos".to_owned(), framed::encode(&pos).unwrap())], vec![]);
        let bytes = FRAME.seal(reg.schema_hash(), &payload(&key(), 0, sample().1, &parts));
        reg.load_into(&bytes, &mut World::new(), &key())
    }

    #[test]
    fn entity_handles_are_checked_before_any_is_spawned() {
        let p = |x| Pos([x; 3]);
        let handle = |generation: u64, index: u64| (generation << 32) | index;
        let decode_error = |rows: &[(u64, Pos)]| match load_pos_rows(rows) {
            Err(SnapshotError::Decode(m)) => m,
            other => panic!("expected a decode error, got {other:?}"),
        };
        // A hand-built column loads: the check is not what refuses the others.
        load_pos_rows(&[(handle(1, 0), p(0.0)), (handle(1, 5), p(1.0))]).unwrap();
        // hecs would size its slots by this index: 64 GB for a file of a few bytes.
        assert_eq!(
            decode_error(&[(handle(1, 0xFFFF_FFF0), p(0.0))]),
            "entity index 4294967280 is beyond the 1048576 a snapshot of this size may use"
        );
        assert!(decode_error(&[(handle(1, 1 << 20), p(0.0))]).contains("entity index 1048576"));
        assert_eq!(decode_error(&[(7, p(0.0))]), "invalid entity handle 0x7");
        assert!(decode_error(&[(handle(1, 3), p(0.0)), (handle(1, 3), p(1.0))]).ends_with("out of order"));
        assert!(decode_error(&[(handle(2, 3), p(0.0)), (handle(1, 4), p(1.0))]).ends_with("out of order"));
        assert_eq!(
            decode_error(&[(handle(1, 3), p(0.0)), (handle(2, 3), p(1.0))]),
            "two entities share index 3"
        );
    }

    #[test]
    fn a_world_beyond_its_entity_slots_is_refused_when_saved() {
        let reg = registry();
        let (mut w, t) = sample();
        let far = hecs::Entity::from_bits((1 << 32) | (1 << 20)).unwrap();
        w.entities.spawn_at(far, (Pos([0.0; 3]),));
        let e = reg.save(&w, t, &key(), 0).unwrap_err();
        assert!(e.to_string().contains("uses 1048577 entity indices"), "{e}");
    }

    #[test]
    fn files_round_trip_and_missing_files_error() {
        let (w, t) = sample();
        let reg = registry();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.snap");
        reg.save_file(&w, t, &key(), 0, &path).unwrap();
        let mut back = World::new();
        reg.load_file_into(&path, &mut back, &key()).unwrap();
        assert_eq!(rows(&w), rows(&back));
        let err = reg
            .load_file_into(&dir.path().join("missing.snap"), &mut back, &key())
            .unwrap_err();
        assert!(err.to_string().contains("missing.snap"));
    }
}
