//! Live grass in a world (docs/design/grass.md, "Live grass in the world"): the ground
//! cover's blades near a pusher are expanded on the CPU by the one expansion every other
//! user calls ([`expand_ground`]) and simulated live as in a grass scene ([`LiveGrass`]);
//! a frame system lists the live ones by world cell in the [`GrassBatch`]'s
//! [`LiveCells`](sylva_runtime::extract::LiveCells), with their displacements in their layers, so a renderer that expands
//! the cover itself draws exactly those blades live.
//!
//! - Blades are taken a tile at a time: [`LIVE_TILE_CELLS`]² cells of one chunk. A tile is
//!   expanded when a pusher's reach touches it and its chunk's patch is in the
//!   [`TerrainBatch`], and let go once no pusher touches it and none of its blades is live
//!   any more, or when its chunk leaves. At most [`MAX_LIVE_BLADES`] blades are held: a
//!   tile beyond them is not expanded, and its blades play the bake.
//! - The world's walkers (`world.grass.walkers`) are entities with a [`WorldWalk`] and a
//!   [`Pusher`], lifted onto the ground under them each step. A host adds its own pushers
//!   (a player's feet) as [`Pusher`] entities.
//! - Every tile steps on one live clock, so a tile expanded later joins in step.
//! - Live blades are not saved in snapshots, like the chunks they grow on.

use std::collections::{BTreeMap, BTreeSet};

use glam::Vec3;
use sylva_runtime::extract::{CoverRule, GrassBatch, LiveCell, TerrainBatch, TerrainPatch};
use sylva_runtime::{Access, App, System};

use super::blades::{Blade, CoverGround, expand_ground, unpack_cover};
use super::content::WorldContent;
use super::params::WorldGrass;
use crate::grass::{BakedGrass, BladeKernel, LiveGrass, LiveSettings, Pusher, WalkPath, WindField, live_steps_due};
use crate::placement::Plane;

/// Cells along a side of a live tile.
pub const LIVE_TILE_CELLS: u32 = 8;

/// Most blades the live tiles hold together: what a frame's live steps cost is bounded by
/// it, whatever pushers a scene or a host adds.
pub const MAX_LIVE_BLADES: usize = 1 << 16;

/// Name of the fixed-step system that moves the world's walkers.
pub const WALK_SYSTEM: &str = "world.walk";

/// Name of the fixed-step system that expands, steps and lets go of live tiles.
pub const LIVE_SYSTEM: &str = "world.live";

/// Name of the frame system that lists the live blades in the [`GrassBatch`].
pub const LIVE_EXTRACT_SYSTEM: &str = "world.live_extract";

/// A walker of the world (an entity component): its loop at its height above y = 0, lifted
/// each step onto the ground under it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldWalk {
    path: WalkPath,
}

/// A live tile's key: its chunk, and the tile within it.
type TileKey = ([i32; 2], [u32; 2]);

/// One grass species' blades in a tile.
struct TileKind {
    /// The species (and its layer).
    kind: u8,
    live: LiveGrass,
    /// Per blade, its world cell and its index there.
    blades: Vec<([i32; 2], u32)>,
}

struct Tile {
    kinds: Vec<TileKind>,
}

impl Tile {
    fn blades(&self) -> usize {
        self.kinds.iter().map(|k| k.blades.len()).sum()
    }
}

struct Species {
    baked: BakedGrass,
    kernel: BladeKernel,
}

/// The world's live grass (a resource).
pub struct WorldLive {
    settings: LiveSettings,
    wind: WindField,
    species: Vec<Species>,
    rules: Vec<CoverRule>,
    chunk_cells: u32,
    cell_size: f32,
    tiles: BTreeMap<TileKey, Tile>,
    /// The live clock, seconds.
    time: f32,
}

impl WorldLive {
    /// Blades simulated live now.
    pub fn live_blades(&self) -> usize {
        self.tiles
            .values()
            .flat_map(|t| &t.kinds)
            .map(|k| k.live.live_blades())
            .sum()
    }

    /// Blades the live tiles hold (expanded near pushers, live or not).
    pub fn held_blades(&self) -> usize {
        self.tiles.values().map(Tile::blades).sum()
    }

    /// Each live blade's world cell, index there, species and displacement of particle
    /// `i ≥ 1` from its turned and scaled rest position (world metres), in tile order.
    pub fn displacements(&self, i: usize) -> Vec<([i32; 2], u32, u8, Vec3)> {
        let mut out = Vec::new();
        for tk in self.tiles.values().flat_map(|t| &t.kinds) {
            let baked = &self.species[usize::from(tk.kind)].baked;
            for b in tk.live.live_indices() {
                let (cell, index) = tk.blades[b as usize];
                out.push((cell, index, tk.kind, tk.live.displacement(baked, b as usize, i)));
            }
        }
        out
    }

    /// The tiles a sphere of `radius` at `center` reaches, in chunk-local tile coordinates.
    fn touched(&self, center: Vec3, radius: f32, out: &mut BTreeSet<TileKey>) {
        let tile = LIVE_TILE_CELLS as f32 * self.cell_size;
        let n = (self.chunk_cells.div_ceil(LIVE_TILE_CELLS)) as i64;
        // Tiles are counted from each chunk's corner; a chunk's last tile may be narrower.
        let chunk = self.chunk_cells as f32 * self.cell_size;
        let span = |v: f32| {
            let lo = ((v - radius) / chunk).floor() as i64;
            let hi = ((v + radius) / chunk).floor() as i64;
            lo..=hi
        };
        for cz in span(center.z) {
            for cx in span(center.x) {
                let origin = [cx as f32 * chunk, cz as f32 * chunk];
                let t = |v: f32, o: f32| (((v - o) / tile).floor() as i64).clamp(0, n - 1) as u32;
                let (tx0, tx1) = (t(center.x - radius, origin[0]), t(center.x + radius, origin[0]));
                let (tz0, tz1) = (t(center.z - radius, origin[1]), t(center.z + radius, origin[1]));
                let (Ok(x), Ok(z)) = (i32::try_from(cx), i32::try_from(cz)) else {
                    continue;
                };
                for tz in tz0..=tz1 {
                    for tx in tx0..=tx1 {
                        out.insert(([x, z], [tx, tz]));
                    }
                }
            }
        }
    }

    /// Tile `key`'s blades from `patch`, split by species, joining the live clock.
    fn expand(&self, key: TileKey, patch: &TerrainPatch) -> Option<Tile> {
        let cover = unpack_cover(patch.cover.as_ref()?);
        let ground = CoverGround::of_patch(patch, &cover)?;
        let [tx, tz] = key.1.map(|t| t * LIVE_TILE_CELLS);
        let mut blades: Vec<Blade> = Vec::new();
        expand_ground(
            &ground,
            &self.rules,
            [tx, tz, tx + LIVE_TILE_CELLS, tz + LIVE_TILE_CELLS],
            &mut blades,
        );
        let mut kinds = Vec::new();
        for (k, sp) in self.species.iter().enumerate() {
            let of_kind: Vec<&Blade> = blades.iter().filter(|b| usize::from(b.species) == k).collect();
            if of_kind.is_empty() {
                continue;
            }
            let roots = of_kind.iter().map(|b| b.root).collect();
            let yaw = of_kind.iter().map(|b| b.yaw).collect();
            let scale = of_kind.iter().map(|b| b.scale).collect();
            // A species whose scales the rules let reach zero has no live pose: it plays the bake.
            let Ok(mut live) = LiveGrass::new(sp.kernel.clone(), roots, self.settings).with_placement(yaw, scale)
            else {
                continue;
            };
            live.time = self.time;
            kinds.push(TileKind {
                kind: k as u8,
                live,
                blades: of_kind.iter().map(|b| (b.cell, b.index)).collect(),
            });
        }
        Some(Tile { kinds })
    }

    /// One fixed step of `dt` seconds ending at `until`: tiles touched by `pushers` expanded
    /// from `terrain`'s patches, every tile stepped on the live clock, idle tiles let go.
    fn step(&mut self, terrain: &TerrainBatch, pushers: &[Pusher], dt: f32, until: f32) {
        let mut touched = BTreeSet::new();
        for p in pushers {
            self.touched(p.center, p.radius + self.settings.reach, &mut touched);
        }
        let patch = |chunk: [i32; 2]| terrain.patches.iter().find(|p| p.key == chunk);
        self.tiles.retain(|k, _| patch(k.0).is_some());
        let mut held = self.held_blades();
        for key in &touched {
            if held >= MAX_LIVE_BLADES || self.tiles.contains_key(key) {
                continue;
            }
            if let Some(tile) = patch(key.0).and_then(|p| self.expand(*key, p)) {
                held += tile.blades();
                self.tiles.insert(*key, tile);
            }
        }
        let h = self.settings.step_seconds;
        for _ in 0..live_steps_due(self.time, until, h, dt) {
            for tk in self.tiles.values_mut().flat_map(|t| &mut t.kinds) {
                let sp = &self.species[usize::from(tk.kind)];
                tk.live.step(&sp.baked, &self.wind, pushers);
            }
            self.time += h;
        }
        self.tiles
            .retain(|k, t| touched.contains(k) || t.kinds.iter().any(|k| k.live.live_blades() > 0));
    }

    /// Lists the live blades in `batch`: their displacements in their layers' live slots,
    /// and the cells they stand in.
    fn extract(&self, batch: &mut GrassBatch) {
        for layer in &mut batch.layers {
            layer.live_displacement.clear();
        }
        let mut entries: Vec<([i32; 2], u32, u32)> = Vec::new();
        for tk in self.tiles.values().flat_map(|t| &t.kinds) {
            let Some(layer) = batch.layers.get_mut(usize::from(tk.kind)) else {
                continue;
            };
            let links = layer.shape.rest.len().saturating_sub(1);
            if links == 0 {
                continue;
            }
            let baked = &self.species[usize::from(tk.kind)].baked;
            for b in tk.live.live_indices() {
                let slot = (layer.live_displacement.len() / links) as u32;
                for i in 1..=links {
                    layer.live_displacement.push(tk.live.displacement(baked, b as usize, i));
                }
                let (cell, index) = tk.blades[b as usize];
                entries.push((cell, index, slot));
            }
        }
        entries.sort_unstable_by_key(|&(cell, index, _)| (cell[1], cell[0], index));
        let live = &mut batch.live;
        live.cells.clear();
        live.slots.clear();
        for (cell, index, slot) in entries {
            if live.cells.last().is_none_or(|c| c.cell != cell) {
                live.cells.push(LiveCell {
                    cell,
                    first: live.slots.len() as u32,
                    blades: 0,
                });
            }
            let c = live.cells.last_mut().expect("pushed above");
            let at = (c.first + index) as usize;
            if live.slots.len() <= at {
                live.slots.resize(at + 1, u32::MAX);
            }
            live.slots[at] = slot;
            c.blades = index + 1;
        }
    }
}

/// The ground height under (x, z) in `terrain`'s patch there, if it has one.
fn ground_height(terrain: &TerrainBatch, chunk_size: f32, x: f32, z: f32) -> Option<f32> {
    let key = [(x / chunk_size).floor() as i32, (z / chunk_size).floor() as i32];
    let p = terrain.patches.iter().find(|p| p.key == key)?;
    let n = p.resolution.checked_sub(1)?;
    let u = ((x - p.origin.x) / p.cell_size).clamp(0.0, n as f32);
    let v = ((z - p.origin.z) / p.cell_size).clamp(0.0, n as f32);
    let (i, j) = ((u as u32).min(n.saturating_sub(1)), (v as u32).min(n.saturating_sub(1)));
    let (fu, fv) = (u - i as f32, v - j as f32);
    let r = p.resolution as usize;
    let at = |i: u32, j: u32| p.height.get(j as usize * r + i as usize).copied();
    let (h00, h10, h01, h11) = (at(i, j)?, at(i + 1, j)?, at(i, j + 1)?, at(i + 1, j + 1)?);
    Some(p.origin.y + (h00 * (1.0 - fu) + h10 * fu) * (1.0 - fv) + (h01 * (1.0 - fu) + h11 * fu) * fv)
}

/// Inserts [`WorldLive`] for `content`'s grass growing by `rules` on chunks of `chunk_cells`
/// cells of `cell_size` metres, spawns `grass`'s walkers, and adds [`WALK_SYSTEM`],
/// [`LIVE_SYSTEM`] and [`LIVE_EXTRACT_SYSTEM`].
pub fn install_live(
    app: &mut App,
    content: &WorldContent,
    grass: &WorldGrass,
    rules: &[CoverRule],
    (chunk_cells, cell_size): (u32, f32),
) {
    app.world.resources.insert(WorldLive {
        settings: grass.live,
        wind: grass.wind.clone(),
        species: content
            .grass
            .iter()
            .map(|g| Species {
                baked: g.baked.clone(),
                kernel: g.kernel.clone(),
            })
            .collect(),
        rules: rules.to_vec(),
        chunk_cells,
        cell_size,
        tiles: BTreeMap::new(),
        time: 0.0,
    });
    for w in &grass.walkers {
        let path = w.resolve(&Plane { y: 0.0 });
        let pusher = path.pusher(0.0);
        app.world.entities.spawn((WorldWalk { path }, pusher));
    }
    let chunk_size = chunk_cells as f32 * cell_size;
    app.add_system(System::new(
        WALK_SYSTEM,
        Access::new()
            .read::<WorldWalk>()
            .write::<Pusher>()
            .read_res::<TerrainBatch>(),
        move |ctx| {
            let t = ctx.time();
            let at = t.elapsed + f64::from(t.dt);
            let terrain = ctx.res::<TerrainBatch>();
            for (walk, pusher) in ctx.query::<(&WorldWalk, &mut Pusher)>().iter() {
                *pusher = walk.path.pusher(at);
                let ground = ground_height(&terrain, chunk_size, pusher.center.x, pusher.center.z);
                pusher.center.y += ground.unwrap_or(0.0);
            }
        },
    ));
    let mut pushers = Vec::new();
    app.add_system(System::new(
        LIVE_SYSTEM,
        Access::new()
            .read::<Pusher>()
            .read_res::<TerrainBatch>()
            .write_res::<WorldLive>(),
        move |ctx| {
            pushers.clear();
            pushers.extend(ctx.query::<&Pusher>().iter().copied());
            let t = ctx.time();
            let until = (t.elapsed + f64::from(t.dt)) as f32;
            let terrain = ctx.res::<TerrainBatch>();
            ctx.res_mut::<WorldLive>().step(&terrain, &pushers, t.dt, until);
        },
    ));
    app.add_frame_system(System::new(
        LIVE_EXTRACT_SYSTEM,
        Access::new().read_res::<WorldLive>().write_res::<GrassBatch>(),
        |ctx| {
            let live = ctx.res::<WorldLive>();
            live.extract(&mut ctx.res_mut::<GrassBatch>());
        },
    ));
}
