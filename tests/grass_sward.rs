//! Grass expanded on the GPU from a chunk's ground cover (vk/src/sward.rs,
//! docs/design/grass.md, "Blades from the field on the GPU") against the library's
//! CPU expansion: read back, the same blades bit for bit, each with the live slot
//! the host's table gives it; culled and thinned by the view, a subset of them; on
//! lavapipe with validation.
//!
//! Without a Vulkan driver the tests print `SKIPPED` and pass unless
//! `SYLVA_REQUIRE_VULKAN=1`.

use std::collections::BTreeMap;
use sylva::Scene;

use sylva::runtime::extract::{
    Camera, GrassBatch, GrassLayer, GrassShape, LiveCell, LiveCells, Sun, TerrainBatch, TerrainPatch,
};
use sylva::runtime::glam::Vec3;
use sylva::systems::grass::extraction::motion;
use sylva::systems::grass::{BakeSettings, BladeShape, Dynamics, Segment, WindField, bake};
use sylva::systems::world::{Blade, ChunkPayload, WorldGen, WorldParams, cover_rules, expand_blades, ground_cover};
use sylva::vk::testing::{assert_clean_shutdown, assert_validation_clean, renderer_or_skip};
use sylva::vk::{FrameInput, Renderer, SwardBlade};

/// The bundled world with 64-cell chunks, and a chunk of it with grass on dry land.
fn meadow_chunk() -> (WorldParams, ChunkPayload) {
    let scene = Scene::world();
    let mut params = scene.world.expect("the world scene has a world");
    params.chunk_cells = 64;
    if let Some(b) = &mut params.terrain.basins {
        b.domain_chunks = 64;
    }
    let g = WorldGen::new(params.clone(), scene.seed);
    let n = params.chunk_cells;
    let chunk = (0..40)
        .map(|k| g.chunk([k % 8 - 4, k / 8 - 2]))
        .max_by_key(|c| {
            let mut blades = Vec::new();
            expand_blades(c, &params.grass.species, [0, 0, n, n], 1.0, &mut blades);
            blades.len()
        })
        .expect("chunks");
    (params, chunk)
}

/// The chunk's ground and cover as the world's source hands them to a renderer.
fn patch(params: &WorldParams, c: &ChunkPayload) -> TerrainPatch {
    let n = params.chunk_cells as i32;
    TerrainPatch {
        key: c.coord,
        origin: Vec3::new(c.coord[0] as f32, 0.0, c.coord[1] as f32) * params.chunk_size(),
        cell_size: params.cell_size,
        resolution: c.surface.resolution,
        height: c.surface.height.clone(),
        material: c.surface.material.clone(),
        water: c.surface.water.clone(),
        cover: Some(ground_cover(&c.cover, [c.coord[0] * n, c.coord[1] * n])),
        dirty: true,
    }
}

/// The world's one grass species as a layer growing out of the cover at `share`.
fn layer(params: &WorldParams, share: f32) -> GrassLayer {
    let shape = BladeShape::blade(2, 0.3, Segment::default());
    let settings = BakeSettings {
        cells: 2,
        cell_size: 0.5,
        record_every: 12,
        frames: 4,
        max_warmup_seconds: 0.5,
        ..BakeSettings::default()
    };
    let baked = bake(&shape, &Dynamics::default(), &WindField::default(), &settings)
        .expect("bake")
        .0;
    let rest: Vec<Vec3> = (0..=baked.links).map(|k| Vec3::Y * 0.1 * k as f32).collect();
    let particles = rest.len();
    GrassLayer {
        shape: GrassShape {
            parent: (0..particles as u32).map(|p| p.saturating_sub(1)).collect(),
            width: vec![0.02; particles],
            rest,
        },
        motion: motion(&baked),
        generation: 1,
        cover: cover_rules(&params.grass.species, params.cell_size, share)
            .first()
            .copied(),
        ..GrassLayer::default()
    }
}

/// Renders one frame of the chunk and its grass, and reads back what the GPU expanded.
fn expanded(r: &mut Renderer, terrain: &mut TerrainBatch, grass: &mut GrassBatch, camera: Camera) -> Vec<SwardBlade> {
    r.render(FrameInput {
        terrain: Some(terrain),
        grass: Some(grass),
        camera,
        sun: Sun::default(),
        ..FrameInput::default()
    })
    .expect("render");
    r.read_sward().expect("read back")
}

/// A blade's bits, to compare sets of blades exactly.
fn key(root: Vec3, yaw: f32, scale: f32) -> [u32; 5] {
    [root.x, root.y, root.z, yaw, scale].map(f32::to_bits)
}

fn keys_cpu(blades: &[Blade]) -> Vec<[u32; 5]> {
    let mut k: Vec<_> = blades.iter().map(|b| key(b.root, b.yaw, b.scale)).collect();
    k.sort_unstable();
    k
}

fn keys_gpu(blades: &[SwardBlade]) -> Vec<[u32; 5]> {
    let mut k: Vec<_> = blades.iter().map(|b| key(b.root, b.yaw, b.scale)).collect();
    k.sort_unstable();
    k
}

/// A live table over `blades`: every third blade of every fifth cell live, slots in order;
/// and the number of slots.
fn live_table(blades: &[Blade]) -> (LiveCells, usize) {
    let mut by_cell: BTreeMap<(i32, i32), Vec<u32>> = BTreeMap::new();
    for b in blades {
        by_cell.entry((b.cell[1], b.cell[0])).or_default().push(b.index);
    }
    let mut live = LiveCells::default();
    let mut slots = 0;
    for (k, ((z, x), indices)) in by_cell.into_iter().enumerate() {
        if k % 5 != 0 {
            continue;
        }
        let first = live.slots.len() as u32;
        let top = indices.iter().max().copied().unwrap_or(0);
        for i in 0..=top {
            if i % 3 == 0 {
                live.slots.push(slots);
                slots += 1;
            } else {
                live.slots.push(u32::MAX);
            }
        }
        live.cells.push(LiveCell {
            cell: [x, z],
            first,
            blades: top + 1,
        });
    }
    assert!(live.is_consistent());
    (live, slots as usize)
}

#[test]
fn gpu_expanded_grass_equals_the_cpu_expansion_bit_for_bit() {
    let Some(mut r) = renderer_or_skip(64, 48) else { return };
    let (params, chunk) = meadow_chunk();
    let n = params.chunk_cells;
    let centre = (Vec3::new(chunk.coord[0] as f32, 0.0, chunk.coord[1] as f32) + 0.5) * params.chunk_size();
    let camera = Camera {
        position: centre + Vec3::new(0.0, 80.0, 60.0),
        target: centre,
        far: 1000.0,
        ..Camera::default()
    };
    let mut terrain = TerrainBatch {
        patches: vec![patch(&params, &chunk)],
        evicted: Vec::new(),
    };
    r.set_grass_culling(false);
    let mut all = Vec::new();
    expand_blades(&chunk, &params.grass.species, [0, 0, n, n], 1.0, &mut all);
    let (live, slots) = live_table(&all);
    for share in [1.0, 0.3] {
        let mut layer = layer(&params, share);
        layer.live_displacement = vec![Vec3::ZERO; slots * (layer.shape.rest.len() - 1)];
        let mut grass = GrassBatch {
            layers: vec![layer],
            wind_power: 1.0,
            wave_speed: 1.0,
            live: live.clone(),
            ..GrassBatch::default()
        };
        let mut cpu = Vec::new();
        expand_blades(&chunk, &params.grass.species, [0, 0, n, n], share, &mut cpu);
        assert!(cpu.len() > 500, "only {} blades on the CPU", cpu.len());
        let gpu = expanded(&mut r, &mut terrain, &mut grass, camera);
        assert_eq!(gpu.len(), cpu.len(), "share {share}");
        assert_eq!(keys_gpu(&gpu), keys_cpu(&cpu), "share {share}: the blades differ");
        let colour = params.grass.species[0].colour;
        assert!(gpu.iter().all(|b| b.layer == 0 && b.colour == colour));
        // Each blade takes the live slot the table gives its cell and index, or none.
        let by_key: BTreeMap<[u32; 5], &Blade> = cpu.iter().map(|b| (key(b.root, b.yaw, b.scale), b)).collect();
        let mut lived = 0;
        for g in &gpu {
            let b = by_key[&key(g.root, g.yaw, g.scale)];
            let want = live.slot(b.cell, b.index).unwrap_or(u32::MAX);
            assert_eq!(g.live, want, "share {share}: blade {} of cell {:?}", b.index, b.cell);
            lived += usize::from(want != u32::MAX);
        }
        assert!(lived > 20, "share {share}: only {lived} blades drawn live");
    }
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}

#[test]
fn the_view_culls_and_thins_the_sward_to_a_subset_of_its_blades() {
    let Some(mut r) = renderer_or_skip(96, 72) else { return };
    let (params, chunk) = meadow_chunk();
    let n = params.chunk_cells;
    let corner = Vec3::new(chunk.coord[0] as f32, 0.0, chunk.coord[1] as f32) * params.chunk_size();
    let ground = chunk.surface.height[0];
    let camera = Camera {
        position: corner + Vec3::new(-20.0, ground + 6.0, -20.0),
        target: corner + Vec3::new(20.0, ground, 20.0),
        far: 1000.0,
        ..Camera::default()
    };
    let mut terrain = TerrainBatch {
        patches: vec![patch(&params, &chunk)],
        evicted: Vec::new(),
    };
    let mut grass = GrassBatch {
        layers: vec![layer(&params, 1.0)],
        wind_power: 1.0,
        wave_speed: 1.0,
        ..GrassBatch::default()
    };
    let mut cpu = Vec::new();
    expand_blades(&chunk, &params.grass.species, [0, 0, n, n], 1.0, &mut cpu);
    let gpu = expanded(&mut r, &mut terrain, &mut grass, camera);
    let all = keys_cpu(&cpu);
    let seen = keys_gpu(&gpu);
    assert!(
        !seen.is_empty() && seen.len() < all.len(),
        "{} of {}",
        seen.len(),
        all.len()
    );
    assert!(
        seen.iter().all(|k| all.binary_search(k).is_ok()),
        "a blade the CPU does not make"
    );
    // Behind the camera nothing is expanded.
    let away = Camera {
        target: camera.position * 2.0 - camera.target,
        ..camera
    };
    let behind = expanded(&mut r, &mut terrain, &mut grass, away);
    assert!(
        behind.len() < seen.len() / 4,
        "{} behind, {} ahead",
        behind.len(),
        seen.len()
    );
    assert_validation_clean(&r);
    assert_clean_shutdown(r);
}
