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
//! Loading checks all of it, decodes every column into a fresh world, and
//! only then hands it back: a bad file is an error and never a half-loaded world.
//! The same payload bytes, hashed, are the [`state_hash`](SnapshotRegistry::state_hash)
//! that determinism tests compare.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use xxhash_rust::xxh3::xxh3_64;

use crate::framed::{self, Frame, FrameError};
use crate::resources::Resources;
use crate::system::Time;
use crate::world::World;

/// Version of the snapshot layout this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Snapshot files: the registry's schema hash is the frame's key.
const FRAME: Frame = Frame {
    magic: *b"SYLVASNP",
    version: FORMAT_VERSION,
};

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
        why: String,
    },
}

type SaveColumn = fn(&hecs::World) -> Result<Vec<u8>, SnapshotError>;
type LoadColumn = fn(&[u8], &mut BTreeMap<u64, hecs::EntityBuilder>) -> Result<(), SnapshotError>;
type SaveResource = fn(&Resources) -> Result<Option<Vec<u8>>, SnapshotError>;
type DecodeResource = fn(&[u8]) -> Result<Box<dyn Any + Send + Sync>, SnapshotError>;
type CheckResource = fn(&Resources, &(dyn Any + Send + Sync)) -> Result<(), String>;
type InsertResource = fn(&mut Resources, Box<dyn Any + Send + Sync>);

struct ComponentCodec {
    name: String,
    save: SaveColumn,
    load: LoadColumn,
}

struct ResourceCodec {
    name: String,
    save: SaveResource,
    decode: DecodeResource,
    /// Runs on every decoded value before the world is touched.
    check: CheckResource,
    insert: InsertResource,
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
    fn check_state(&self, state: &Self::State) -> Result<(), String>;
    /// Replaces the current state with a checked one.
    fn restore_state(&mut self, state: Self::State);
}

/// The payload as stored.
#[derive(Serialize, Deserialize)]
struct Body {
    tick: u64,
    dt: f32,
    elapsed: f64,
    seed: u64,
    components: Vec<(String, Vec<u8>)>,
    resources: Vec<(String, Vec<u8>)>,
}

/// Which types make up the simulation state, and how to encode them.
#[derive(Default)]
pub struct SnapshotRegistry {
    components: Vec<ComponentCodec>,
    resources: Vec<ResourceCodec>,
}

fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, SnapshotError> {
    framed::encode(value).map_err(SnapshotError::Encode)
}

fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, SnapshotError> {
    framed::decode(bytes).map_err(SnapshotError::Decode)
}

fn save_column<T: hecs::Component + Serialize>(world: &hecs::World) -> Result<Vec<u8>, SnapshotError> {
    let mut query = world.query::<(hecs::Entity, &T)>();
    let mut rows: Vec<(u64, &T)> = query.iter().map(|(e, c)| (e.to_bits().get(), c)).collect();
    rows.sort_unstable_by_key(|r| r.0);
    encode(&rows)
}

fn load_column<T: hecs::Component + DeserializeOwned>(
    bytes: &[u8],
    builders: &mut BTreeMap<u64, hecs::EntityBuilder>,
) -> Result<(), SnapshotError> {
    let rows: Vec<(u64, T)> = decode(bytes)?;
    for (bits, value) in rows {
        if hecs::Entity::from_bits(bits).is_none() {
            return Err(SnapshotError::Decode(format!("invalid entity handle {bits:#x}")));
        }
        builders.entry(bits).or_default().add(value);
    }
    Ok(())
}

fn save_resource<T: Serialize + Send + Sync + 'static>(
    resources: &Resources,
) -> Result<Option<Vec<u8>>, SnapshotError> {
    resources.get::<T>().map(|r| encode(&*r)).transpose()
}

fn decode_resource<T: DeserializeOwned + Send + Sync + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn Any + Send + Sync>, SnapshotError> {
    Ok(Box::new(decode::<T>(bytes)?))
}

fn accept_resource(_: &Resources, _: &(dyn Any + Send + Sync)) -> Result<(), String> {
    Ok(())
}

fn insert_resource<T: Send + Sync + 'static>(resources: &mut Resources, value: Box<dyn Any + Send + Sync>) {
    if let Ok(v) = value.downcast::<T>() {
        resources.insert(*v);
    }
}

fn save_state<R: StatePart>(resources: &Resources) -> Result<Option<Vec<u8>>, SnapshotError> {
    resources.get::<R>().map(|r| encode(&r.save_state())).transpose()
}

fn check_state<R: StatePart>(resources: &Resources, value: &(dyn Any + Send + Sync)) -> Result<(), String> {
    let state = value
        .downcast_ref::<R::State>()
        .ok_or("decoded state has the wrong type")?;
    resources
        .get::<R>()
        .ok_or("the world has no resource to restore it into")?
        .check_state(state)
}

fn restore_state<R: StatePart>(resources: &mut Resources, value: Box<dyn Any + Send + Sync>) {
    if let (Ok(state), Some(mut r)) = (value.downcast::<R::State>(), resources.get_mut::<R>()) {
        r.restore_state(*state);
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
            save: save_column::<T>,
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
            save: save_resource::<T>,
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
            save: save_state::<R>,
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

    fn payload(&self, world: &World, time: Time) -> Result<Vec<u8>, SnapshotError> {
        let mut body = Body {
            tick: time.tick,
            dt: time.dt,
            elapsed: time.elapsed,
            seed: time.seed,
            components: Vec::with_capacity(self.components.len()),
            resources: Vec::new(),
        };
        for c in &self.components {
            body.components.push((c.name.clone(), (c.save)(&world.entities)?));
        }
        for r in &self.resources {
            if let Some(bytes) = (r.save)(&world.resources)? {
                body.resources.push((r.name.clone(), bytes));
            }
        }
        encode(&body)
    }

    /// Hash of the registered state: equal states give equal hashes.
    pub fn state_hash(&self, world: &World, time: Time) -> Result<u64, SnapshotError> {
        Ok(xxh3_64(&self.payload(world, time)?))
    }

    /// Encodes the registered state of `world` into snapshot bytes.
    pub fn save(&self, world: &World, time: Time) -> Result<Vec<u8>, SnapshotError> {
        Ok(FRAME.seal(self.schema_hash(), &self.payload(world, time)?))
    }

    /// Replaces `world`'s entities and registered resources with the snapshot's
    /// and returns the time it was saved at.
    ///
    /// Everything is decoded, and every [`StatePart`] checked, before `world` is
    /// touched, so on error `world` is unchanged. Resources that are not registered (caches, settings) stay as
    /// they were; systems that cache derived data must notice the new entities.
    pub fn load_into(&self, bytes: &[u8], world: &mut World) -> Result<Time, SnapshotError> {
        let payload = self.check_header(bytes)?;
        let body: Body = decode(payload)?;
        let mut builders: BTreeMap<u64, hecs::EntityBuilder> = BTreeMap::new();
        for (name, blob) in &body.components {
            let codec = self
                .components
                .iter()
                .find(|c| &c.name == name)
                .ok_or_else(|| SnapshotError::Decode(format!("unknown component `{name}`")))?;
            (codec.load)(blob, &mut builders)?;
        }
        let mut decoded = Vec::with_capacity(body.resources.len());
        for (name, blob) in &body.resources {
            let codec = self
                .resources
                .iter()
                .find(|r| &r.name == name)
                .ok_or_else(|| SnapshotError::Decode(format!("unknown resource `{name}`")))?;
            let value = (codec.decode)(blob)?;
            (codec.check)(&world.resources, &*value).map_err(|why| SnapshotError::State {
                name: name.clone(),
                why,
            })?;
            decoded.push((codec.insert, value));
        }
        let mut entities = hecs::World::new();
        for (bits, mut builder) in builders {
            let entity = hecs::Entity::from_bits(bits).expect("handles were checked while decoding");
            entities.spawn_at(entity, builder.build());
        }
        world.entities = entities;
        for (insert, value) in decoded {
            insert(&mut world.resources, value);
        }
        Ok(Time {
            tick: body.tick,
            dt: body.dt,
            elapsed: body.elapsed,
            seed: body.seed,
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

    /// Writes a snapshot file atomically (temporary file, then rename).
    pub fn save_file(&self, world: &World, time: Time, path: &Path) -> Result<(), SnapshotError> {
        let bytes = self.save(world, time)?;
        let io = |source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        };
        framed::write_atomic(path, &bytes).map_err(io)
    }

    /// Reads a snapshot file written by [`save_file`](Self::save_file).
    pub fn load_file_into(&self, path: &Path, world: &mut World) -> Result<Time, SnapshotError> {
        let bytes = std::fs::read(path).map_err(|source| SnapshotError::Io {
            path: path.to_owned(),
            source,
        })?;
        self.load_into(&bytes, world)
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
        fn check_state(&self, state: &Vec<f32>) -> Result<(), String> {
            if state.len() == self.bake.len() {
                Ok(())
            } else {
                Err(format!("{} values for a bake of {}", state.len(), self.bake.len()))
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

    #[test]
    fn round_trip_keeps_entities_links_and_resources() {
        let (w, t) = sample();
        let reg = registry();
        let bytes = reg.save(&w, t).unwrap();
        let mut back = World::new();
        back.resources.insert(Cache);
        let t2 = reg.load_into(&bytes, &mut back).unwrap();
        assert_eq!(rows(&w), rows(&back));
        assert_eq!(back.resources.get::<Wind>().map(|w| w.0), Some(0.5));
        assert!(back.resources.contains::<Cache>(), "unregistered resources are kept");
        assert_eq!(t2, t);
        assert_eq!(reg.state_hash(&w, t).unwrap(), reg.state_hash(&back, t2).unwrap());
        // Links still point at the right entity.
        let link = back.entities.query::<&Link>().iter().map(|l| l.0).next().unwrap();
        assert!(back.entities.get::<&Pos>(link).is_ok());
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
        let bytes = reg.save(&w, t).unwrap();
        let h = reg.state_hash(&w, t).unwrap();
        w.resources.get_mut::<Field>().unwrap().live[1] = 9.0;
        assert_ne!(h, reg.state_hash(&w, t).unwrap(), "the state part is in the hash");
        reg.load_into(&bytes, &mut w).unwrap();
        assert_eq!(w.resources.get::<Field>().unwrap().live, [0.25, 0.5]);
        assert_eq!(reg.state_hash(&w, t).unwrap(), h);

        // A world whose field has another size refuses the state, and keeps its entities.
        w.resources.insert(Field {
            bake: vec![1.0; 3],
            live: vec![7.0; 3],
        });
        let pos = w.entities.spawn((Pos([9.0; 3]),));
        match reg.load_into(&bytes, &mut w) {
            Err(SnapshotError::State { name, why }) => {
                assert_eq!(name, "field");
                assert_eq!(why, "2 values for a bake of 3");
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
        let good = reg.save(&w, t).unwrap();
        let load = |bytes: &[u8]| {
            let (mut target, _) = sample();
            let before = rows(&target);
            let r = reg.load_into(bytes, &mut target);
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
            other.load_into(&good, &mut World::new()),
            Err(SnapshotError::Schema { .. })
        ));
    }

    #[test]
    fn valid_checksum_over_garbage_is_a_decode_error() {
        let reg = registry();
        let payload = vec![0xFFu8; 64];
        let v = FRAME.seal(reg.schema_hash(), &payload);
        assert!(matches!(
            reg.load_into(&v, &mut World::new()),
            Err(SnapshotError::Decode(_))
        ));
    }

    #[test]
    fn files_round_trip_and_missing_files_error() {
        let (w, t) = sample();
        let reg = registry();
        let dir = std::env::temp_dir().join(format!("sylva-snap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.snap");
        reg.save_file(&w, t, &path).unwrap();
        let mut back = World::new();
        reg.load_file_into(&path, &mut back).unwrap();
        assert_eq!(rows(&w), rows(&back));
        let err = reg.load_file_into(&dir.join("missing.snap"), &mut back).unwrap_err();
        assert!(err.to_string().contains("missing.snap"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
