//! Ecology at density (docs/design/ecology.md): attributes equal across chunk borders and
//! to a monolithic region, memberships that sum to 1, densities realized as asked, plants
//! that follow the water and keep out of it, blades the same wherever they are expanded,
//! and old scenes told what to write.

use std::sync::Arc;

use sylva::Scene;
use sylva::runtime::glam::Vec2;
use sylva::systems::ecology::{Attribute, Biome, Stand};
use sylva::systems::world::{
    Blade, ChunkPayload, FarCanopy, WorldGen, WorldParams, expand_blades, far_field, horizon_centre, packed,
};

/// The bundled world with small chunks, so tests stay quick.
fn world(chunk_cells: u32) -> (WorldParams, u64) {
    let scene = Scene::world();
    let mut w = scene.world.expect("the world scene has a world");
    w.chunk_cells = chunk_cells;
    if let Some(b) = &mut w.terrain.basins {
        b.domain_chunks = (4096 / chunk_cells).min(64);
    }
    (w, scene.seed)
}

/// A 3 × 3 block of chunks on land around the middle of basin domain (0, 0)'s longest river.
fn block_by_a_river(g: &WorldGen) -> Vec<ChunkPayload> {
    let domain = g.domains().expect("the world has basins").domain([0, 0]);
    let river = domain
        .rivers
        .iter()
        .max_by_key(|r| r.points.len())
        .expect("the domain has rivers");
    let mid = river.points[river.points.len() / 2] / g.params().chunk_size();
    let at = [mid.x.floor() as i32 - 1, mid.y.floor() as i32 - 1];
    (0..3)
        .flat_map(|z| (0..3).map(move |x| [at[0] + x, at[1] + z]))
        .map(|c| g.chunk(c))
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn attribute_maps_agree_on_shared_edges_and_with_a_monolithic_region() {
    let (params, seed) = world(64);
    let g = WorldGen::new(params.clone(), seed);
    let block = block_by_a_river(&g);
    let (a, b, c) = (&block[0], &block[1], &block[3]);
    let side = a.attributes.side as usize;
    for attr in Attribute::ALL {
        let (ma, mb, mc) = (a.attributes.map(attr), b.attributes.map(attr), c.attributes.map(attr));
        for k in 0..side {
            assert_eq!(
                ma[k * side + side - 1].to_bits(),
                mb[k * side].to_bits(),
                "{attr:?} x edge {k}"
            );
            assert_eq!(
                ma[(side - 1) * side + k].to_bits(),
                mc[k].to_bits(),
                "{attr:?} z edge {k}"
            );
        }
    }
    // One region over the block's first two rows of chunks, sampled on its own.
    let per = side as u32 - 1;
    let whole = g.attributes(a.attributes.origin, 3 * per + 1);
    for chunk in &block[..6] {
        let [i, j] = [0, 1].map(|k| ((chunk.attributes.origin[k] - whole.origin[k]) / i64::from(whole.spacing)) as u32);
        let part = whole.crop(i, j, per + 1).unwrap();
        for attr in Attribute::ALL {
            assert_eq!(
                bits(part.map(attr)),
                bits(chunk.attributes.map(attr)),
                "{attr:?} of {:?}",
                chunk.coord
            );
        }
    }
    // The river runs through the block: some samples lie on it, and some are wet.
    let river = block
        .iter()
        .flat_map(|c| c.attributes.map(Attribute::RiverDistance).iter())
        .fold(f32::MAX, |m, &v| m.min(v));
    assert_eq!(river, 0.0);
}

#[test]
fn memberships_sum_to_one_at_every_sample() {
    let (params, seed) = world(64);
    let g = WorldGen::new(params, seed);
    let mut m = vec![0.0; g.biomes().len()];
    let mut seen = vec![false; g.biomes().len()];
    for chunk in block_by_a_river(&g) {
        let maps = &chunk.attributes;
        for k in 0..maps.samples() {
            let cell = maps.cell_of(k as u32 % maps.side, k as u32 / maps.side);
            g.biomes()
                .memberships(&maps.sample(k), cell[0] as f32, cell[1] as f32, &mut m);
            let sum: f32 = m.iter().sum();
            assert!((sum - 1.0).abs() < 1e-5, "{:?} sample {k}: {m:?}", chunk.coord);
            for (s, v) in seen.iter_mut().zip(&m) {
                *s |= *v > 0.5;
            }
        }
    }
    assert!(
        seen.iter().filter(|s| **s).count() >= 4,
        "a river valley shows several biomes: {seen:?}"
    );
}

#[test]
fn a_uniform_biome_realizes_the_density_asked_for() {
    for (per_hectare, spacing) in [(300.0, 3.0), (120.0, 5.0)] {
        for seed in 0..3u64 {
            let (mut params, _) = world(64);
            params.terrain.basins = None;
            params.terrain.erosion = None;
            params.trees.truncate(1);
            params.trees[0].placement.rules = Default::default();
            params.trees[0].placement.min_distance = spacing;
            let name = params.trees[0].species.name.clone();
            params.ecology.biomes = vec![Biome {
                name: "stand".into(),
                canopy: vec![Stand {
                    species: name,
                    per_hectare,
                }],
                ..Biome::default()
            }];
            let g = WorldGen::new(params.clone(), seed);
            let trees: usize = (0..9).map(|k| g.chunk([k % 3 - 1, k / 3 - 1]).trees.len()).sum();
            let hectares = 9.0 * f64::from(params.chunk_size()).powi(2) / 1e4;
            let realized = trees as f64 / hectares;
            assert!(
                (realized / f64::from(per_hectare) - 1.0).abs() <= 0.15,
                "{per_hectare}/ha at {spacing} m, seed {seed}: {realized:.0}/ha"
            );
        }
    }
}

#[test]
fn plants_follow_the_water_and_keep_out_of_it() {
    let (params, seed) = world(64);
    let g = WorldGen::new(params.clone(), seed);
    let block = block_by_a_river(&g);
    let wetness = |c: &ChunkPayload, x: f32, z: f32| c.attributes.at(x, z).map(|a| a[Attribute::Wetness as usize]);
    let riparian = params
        .trees
        .iter()
        .position(|t| t.species.name == "round crown")
        .unwrap();
    let (mut all, mut wet) = ((0.0, 0), (0.0, 0));
    let n = params.chunk_cells as usize;
    for c in &block {
        let r = c.surface.resolution as usize;
        for t in &c.trees {
            let Some(w) = wetness(c, t.position.x, t.position.z) else {
                continue;
            };
            all = (all.0 + w, all.1 + 1);
            if usize::from(t.species) == riparian {
                wet = (wet.0 + w, wet.1 + 1);
            }
            let local = Vec2::new(t.position.x, t.position.z) / params.cell_size
                - Vec2::new(c.coord[0] as f32, c.coord[1] as f32) * n as f32;
            let (i, j) = (local.x.floor() as usize, local.y.floor() as usize);
            assert_eq!(
                c.surface.water[j * r + i],
                0.0,
                "a tree stands in water at {}",
                t.position
            );
            if (1..n - 1).contains(&i) && (1..n - 1).contains(&j) {
                let h = |i: usize, j: usize| c.surface.height[j * r + i];
                let slope = Vec2::new(h(i + 1, j) - h(i - 1, j), h(i, j + 1) - h(i, j - 1)) / (2.0 * params.cell_size);
                let most = params.trees[usize::from(t.species)].placement.rules.slope.1;
                // Each stored height is within half a step of the one placement saw.
                let stored = 2f32.sqrt() * packed::HEIGHT_STEP / (2.0 * params.cell_size);
                assert!(
                    (slope.length() - stored).max(0.0).atan().to_degrees() <= most + 1e-3,
                    "a tree beyond its slope at {}",
                    t.position
                );
            }
        }
    }
    assert!(all.1 > 200 && wet.1 > 10, "{} trees, {} riparian", all.1, wet.1);
    let (mean_all, mean_wet) = (all.0 / all.1 as f32, wet.0 / wet.1 as f32);
    assert!(
        mean_wet > mean_all,
        "riparian wetness {mean_wet} vs the forest's {mean_all}"
    );
}

#[test]
fn blades_are_the_same_expanded_twice_on_one_and_seven_threads() {
    let (params, seed) = world(64);
    let g = WorldGen::new(params.clone(), seed);
    let chunk = &block_by_a_river(&g)[4];
    let n = params.chunk_cells;
    let expand = |threads: usize| -> Vec<Blade> {
        use rayon::prelude::*;
        let pool = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap());
        pool.install(|| {
            (0..n)
                .into_par_iter()
                .flat_map_iter(|z| {
                    let mut row = Vec::new();
                    expand_blades(chunk, &params.grass.species, [0, z, n, z + 1], 1.0, &mut row);
                    row
                })
                .collect()
        })
    };
    let mut whole = Vec::new();
    expand_blades(chunk, &params.grass.species, [0, 0, n, n], 1.0, &mut whole);
    assert!(whole.len() > 1000, "{} blades", whole.len());
    assert_eq!(expand(1), whole);
    assert_eq!(expand(7), whole);
    // A smaller share is a subset of the same blades.
    let mut few = Vec::new();
    expand_blades(chunk, &params.grass.species, [0, 0, n, n], 0.1, &mut few);
    assert!(few.len() * 5 < whole.len() && !few.is_empty());
    assert!(few.iter().all(|b| whole.contains(b)));
}

#[test]
fn old_densities_are_refused_with_what_to_write_instead() {
    let text = include_str!("../scenes/world.ron");
    let old_grass = text.replacen(
        "rules: (slope: (0.0, 30.0), materials: [Regolith]),\n                    scale: (1.5, 2.5),",
        "placement: (density: 6000.0, min_distance: 0.5),",
        1,
    );
    assert_ne!(old_grass, text);
    let e = Scene::from_str(&old_grass, "old.ron").unwrap_err().to_string();
    assert!(
        e.contains("old.ron:") && e.contains("ground: [(grass: \"tuft\", per_m2: 0.6)]"),
        "{e}"
    );
    let old_trees = text.replacen(
        "placement: (min_distance: 3.0,",
        "placement: (density: 30.0, min_distance: 3.0,",
        1,
    );
    let e = Scene::from_str(&old_trees, "old.ron").unwrap_err().to_string();
    assert!(e.contains("canopy: [(species: \"spiral\", per_hectare: 30)]"), "{e}");
    let unknown = text.replacen(
        "(attribute: Slope, range: (52.0",
        "(attribute: Steepness, range: (52.0",
        1,
    );
    let e = Scene::from_str(&unknown, "old.ron").unwrap_err().to_string();
    assert!(e.contains("old.ron:") && e.contains("Steepness"), "{e}");
    let typo = text.replacen(
        "(species: \"hazel\", per_hectare: 180.0)",
        "(species: \"hazle\", per_hectare: 180.0)",
        1,
    );
    let e = Scene::from_str(&typo, "old.ron").unwrap_err().to_string();
    assert!(e.contains("old.ron:") && e.contains("hazle"), "{e}");
    let dense = text.replacen(
        "(species: \"hazel\", per_hectare: 180.0)",
        "(species: \"hazel\", per_hectare: 9000.0)",
        1,
    );
    let e = Scene::from_str(&dense, "old.ron").unwrap_err().to_string();
    assert!(e.contains("more than their min distances"), "{e}");
}

/// The far field shows the biomes' forests: no canopy on the sea, a closed one somewhere
/// inland and open ground elsewhere, and forests where the chunks grow the most trees.
#[test]
fn the_far_field_grows_the_forests_the_chunks_grow() {
    let (mut params, seed) = world(64);
    if let Some(b) = &mut params.terrain.basins {
        b.domain_chunks = 16;
    }
    let g = WorldGen::new(params.clone(), seed);
    let domains = g.domains().expect("the world has basins");
    let canopy = FarCanopy {
        biomes: g.biomes().clone(),
        ecology: params.ecology.clone(),
    };
    let field = far_field(domains, horizon_centre(Vec2::ZERO), Some(&canopy));
    assert!(field.is_consistent());
    let sea = domains.params().sea_level;
    let land: Vec<(f32, f32)> = field.height.iter().zip(&field.canopy).map(|(&h, &c)| (h, c)).collect();
    assert!(
        land.iter().filter(|(h, _)| *h <= sea).all(|(_, c)| *c == 0.0),
        "canopy on the sea"
    );
    let dry: Vec<f32> = land.iter().filter(|(h, _)| *h > sea).map(|(_, c)| *c).collect();
    let closed = dry.iter().filter(|&&c| c > 0.6).count();
    let open = dry.iter().filter(|&&c| c < 0.2).count();
    assert!(
        closed > dry.len() / 20 && open > dry.len() / 20,
        "{closed} closed, {open} open of {}",
        dry.len()
    );
    // The chunks agree: where the far field sees closed forest, they plant more canopy trees
    // than where it sees open ground.
    let n = field.resolution as usize;
    let trees_at = |k: usize| {
        let p = field.origin + Vec2::new((k % n) as f32, (k / n) as f32) * field.spacing;
        let c = (p / params.chunk_size()).floor();
        let chunk = g.chunk([c.x as i32, c.y as i32]);
        let canopy = |t: &&sylva::systems::world::TreeInstance| {
            g.biomes().layer_of(usize::from(t.species)) == Some(sylva::systems::ecology::Layer::Canopy)
        };
        chunk.trees.iter().filter(canopy).count()
    };
    let pick = |want: fn(f32) -> bool| -> Vec<usize> {
        (0..n * n)
            .filter(|&k| field.height[k] > sea && want(field.canopy[k]))
            .step_by(97)
            .take(6)
            .collect()
    };
    let forest: usize = pick(|c| c > 0.6).into_iter().map(trees_at).sum();
    let meadow: usize = pick(|c| c < 0.2).into_iter().map(trees_at).sum();
    assert!(
        forest > 2 * meadow,
        "{forest} canopy trees under far forest, {meadow} under far meadow"
    );
}
