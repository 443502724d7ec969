//! A scene followed on disk: when its file (or a points file it reads) is
//! saved, it is read again and rebuilt on a thread of its own, and
//! [`LiveScene::poll`] swaps the new build in, keeping the camera where the
//! viewer left it. A file that no longer reads, or a scene that no longer
//! builds, is reported with its file and line, and the last good build stays.
//! [`LiveScene::switch`] follows another file instead (a viewer's PageDown to the
//! next scene of the folder, [`sibling`]), built the same way.
//!
//! ```no_run
//! use sylva::live::{LiveScene, Reload};
//! use sylva::MemoryLimit;
//!
//! let (mut live, mut built) = LiveScene::open("scenes/valley.ron".as_ref(), 0, MemoryLimit::default(), |_| {})?;
//! loop {
//!     match live.poll(&mut built) {
//!         Reload::Reloaded { millis, .. } => println!("reloaded in {millis:.0} ms"),
//!         Reload::Failed(error) => eprintln!("{error}"),
//!         Reload::Unchanged | Reload::Rebuilding => {}
//!     }
//!     built.app.update(1.0 / 60.0);
//!     # break;
//! }
//! # Ok::<(), sylva::live::LiveError>(())
//! ```

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant, SystemTime};

use sylva_runtime::extract::Camera;

use crate::{BuildError, Built, MemoryLimit, Scene, SceneError, build_within};

/// How often the files are looked at.
const POLL: Duration = Duration::from_millis(200);

/// What [`LiveScene::poll`] found.
pub enum Reload {
    /// Nothing changed since the last look.
    Unchanged,
    /// A changed scene is being built.
    Rebuilding,
    /// The changed scene is built and swapped in ([`LiveScene::scene`] is the new one).
    Reloaded {
        /// Milliseconds from noticing the change to the finished build.
        millis: f64,
    },
    /// The changed scene does not read or build: the error, with its file and line.
    Failed(String),
}

/// What a background build sends back.
type Build = Result<(Scene, Built), BuildError>;

/// Why a followed scene could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The file does not read as a scene.
    #[error(transparent)]
    Read(#[from] SceneError),
    /// The scene does not build.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// A file's identity at one look: modification time and length.
type Stamp = Option<(SystemTime, u64)>;

/// What a host changes in every scene it reads (command-line overrides).
type Adjust = Arc<dyn Fn(&mut Scene) + Send + Sync>;

/// A scene file watched for changes (see the module docs).
pub struct LiveScene {
    path: PathBuf,
    adjust: Adjust,
    threads: usize,
    limit: MemoryLimit,
    files: Vec<(PathBuf, Stamp)>,
    looked: Instant,
    building: Option<(Receiver<Build>, Instant)>,
    scene: Scene,
}

impl LiveScene {
    /// Reads the scene at `path`, changes it with `adjust` (as it will every
    /// version read later), builds it on `threads` threads (0: one per core)
    /// within `limit`, and starts watching it.
    pub fn open(
        path: &Path,
        threads: usize,
        limit: MemoryLimit,
        adjust: impl Fn(&mut Scene) + Send + Sync + 'static,
    ) -> Result<(Self, Built), LiveError> {
        let adjust: Adjust = Arc::new(adjust);
        let scene = read(path, &adjust)?;
        let built = build_within(&scene, threads, limit)?;
        let live = Self {
            path: path.to_owned(),
            adjust,
            threads,
            limit,
            files: watched(path, &scene),
            looked: Instant::now(),
            building: None,
            scene,
        };
        Ok((live, built))
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Follows the scene file at `path` from now on, read and built in the background like
    /// an edit ([`poll`](Self::poll) swaps it in); a build under way is abandoned.
    pub fn switch(&mut self, path: &Path) -> Reload {
        path.clone_into(&mut self.path);
        self.building = None;
        self.rebuild()
    }

    /// The scene of the build swapped in last.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The files watched: the scene and the files it reads.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }

    /// Looks at the files (at most every 200 ms) and at a build under way,
    /// and swaps a finished build into `current`, with `current`'s camera;
    /// call it once per frame.
    pub fn poll(&mut self, current: &mut Built) -> Reload {
        if let Some((rx, started)) = &self.building {
            return match rx.try_recv() {
                Err(TryRecvError::Empty) => Reload::Rebuilding,
                Err(TryRecvError::Disconnected) => {
                    self.building = None;
                    Reload::Failed(format!("{}: the rebuild stopped", self.path.display()))
                }
                Ok(result) => {
                    let millis = started.elapsed().as_secs_f64() * 1e3;
                    self.building = None;
                    match result {
                        Ok((scene, mut built)) => {
                            if let Some(camera) = current.app.world.resources.get::<Camera>().map(|c| *c) {
                                built.app.world.resources.insert(camera);
                            }
                            *current = built;
                            self.scene = scene;
                            Reload::Reloaded { millis }
                        }
                        Err(e) => Reload::Failed(e.to_string()),
                    }
                }
            };
        }
        if self.looked.elapsed() < POLL {
            return Reload::Unchanged;
        }
        self.looked = Instant::now();
        if self.files.iter().all(|(p, s)| stamp(p) == *s) {
            return Reload::Unchanged;
        }
        self.rebuild()
    }

    /// Reads the scene again (on this thread: reading is quick) and starts
    /// building it on a thread of its own.
    fn rebuild(&mut self) -> Reload {
        let scene = read(&self.path, &self.adjust);
        // Whatever happens next, this version of the files has been seen.
        let files = match &scene {
            Ok(s) => watched(&self.path, s),
            Err(_) => self.files.iter().map(|(p, _)| (p.clone(), stamp(p))).collect(),
        };
        self.files = files;
        let scene = match scene {
            Ok(s) => s,
            Err(e) => return Reload::Failed(e.to_string()),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let (threads, limit) = (self.threads, self.limit);
        std::thread::spawn(move || {
            let built = build_within(&scene, threads, limit);
            // The host may have closed; then nobody waits for the build.
            let _ = tx.send(built.map(|b| (scene, b)));
        });
        self.building = Some((rx, Instant::now()));
        Reload::Rebuilding
    }
}

/// The scene file `step` places after `path` (before it, for a negative `step`) among the
/// `.ron` files of its folder, in name order with numbers compared as numbers (`fig5_9`
/// before `fig5_10`), wrapping around; none when the folder cannot be read.
pub fn sibling(path: &Path, step: i32) -> Option<PathBuf> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".ron"))
        .collect();
    names.sort_by(|a, b| natural(a, b));
    let name = path.file_name()?.to_str()?;
    let at = names.iter().position(|n| n == name).unwrap_or(0) as i64;
    let next = (at + i64::from(step)).rem_euclid(names.len().max(1) as i64) as usize;
    names.get(next).map(|n| path.with_file_name(n))
}

/// Compares names as a person sorts them: runs of digits by their value, the rest by byte.
fn natural(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    while let (Some(&x), Some(&y)) = (a.first(), b.first()) {
        let order = if x.is_ascii_digit() && y.is_ascii_digit() {
            let (da, ra) = a.split_at(a.iter().take_while(|c| c.is_ascii_digit()).count());
            let (db, rb) = b.split_at(b.iter().take_while(|c| c.is_ascii_digit()).count());
            (a, b) = (ra, rb);
            let value = |d: &[u8]| {
                d.iter()
                    .fold(0u128, |v, &c| v.saturating_mul(10) + u128::from(c - b'0'))
            };
            value(da).cmp(&value(db)).then(da.len().cmp(&db.len()))
        } else {
            (a, b) = (&a[1..], &b[1..]);
            x.cmp(&y)
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// The scene file and the points files it reads, with their stamps now.
fn watched(path: &Path, scene: &Scene) -> Vec<(PathBuf, Stamp)> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let colonize = scene.colonize.iter();
    let forest = scene
        .forest
        .iter()
        .flat_map(|f| f.species.iter().filter_map(|s| s.colonize.as_ref()));
    let points = colonize
        .chain(forest)
        .filter_map(|c| c.points_file.as_ref())
        .map(|p| dir.join(p));
    std::iter::once(path.to_owned())
        .chain(points)
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect()
}

fn read(path: &Path, adjust: &Adjust) -> Result<Scene, crate::SceneError> {
    let mut scene = Scene::load(path)?;
    adjust(&mut scene);
    Ok(scene)
}

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}
