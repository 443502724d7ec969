//! The compact chunk store (docs/design/chunk-store.md): a stored chunk of the bundled
//! world is within the documented steps of the chunk as generated, storing it again
//! changes nothing, its hash is the stored stream's, and what the store drops is gone.

use sylva::Scene;
use sylva::runtime::framed;
use sylva::systems::ecology::{ATTRIBUTES, AttributeMaps};
use sylva::systems::world::packed::{self, ATTRIBUTE_STEPS, HEIGHT_STEP, POSITION_STEP, SCALE_STEP, WATER_STEP};
use sylva::systems::world::{ChunkPayload, WorldGen};

/// Largest difference of two equally long lists.
fn worst(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Half a step and the rounding of an f32 of magnitude `at` (a value's steps are counted in
/// f64 and the result rounded to f32 once).
fn bound(step: f32, at: f32) -> f32 {
    0.5 * step + at.abs() * f32::EPSILON
}

/// The bundled world and two chunks of it: one by its longest river, and one out at sea.
fn chunks() -> (WorldGen, Vec<[i32; 2]>) {
    let scene = Scene::world();
    let g = WorldGen::new(scene.world.expect("the world scene has a world"), scene.seed);
    let domain = g.domains().expect("the world has basins").domain([0, 0]);
    let river = domain.rivers.iter().max_by_key(|r| r.points.len()).unwrap();
    let mid = river.points[river.points.len() / 2] / g.params().chunk_size();
    (g, vec![[mid.x.floor() as i32, mid.y.floor() as i32], [-40, -40]])
}

fn assert_maps_within_steps(stored: &AttributeMaps, generated: &AttributeMaps) {
    assert_eq!(
        (stored.origin, stored.spacing, stored.side, stored.cell_size),
        (generated.origin, generated.spacing, generated.side, generated.cell_size)
    );
    let per_map = stored.samples();
    assert_eq!(stored.values.len(), ATTRIBUTES * per_map);
    let maps = stored.values.chunks(per_map).zip(generated.values.chunks(per_map));
    for (k, ((s, g), step)) in maps.zip(ATTRIBUTE_STEPS).enumerate() {
        for (a, b) in s.iter().zip(g) {
            assert!((a - b).abs() <= bound(step, *b), "attribute {k}: {a} for {b}");
        }
    }
}

fn assert_within_steps(stored: &ChunkPayload, generated: &ChunkPayload) {
    let (s, g) = (&stored.terrain, &generated.terrain);
    assert_eq!(
        (s.coord(), s.size(), s.max_layers()),
        (g.coord(), g.size(), g.max_layers())
    );
    let (mut hs, mut hg) = (Vec::new(), Vec::new());
    s.ground_heights(&mut hs);
    g.ground_heights(&mut hg);
    let top = hg.iter().fold(0.0f32, |m, h| m.max(h.abs()));
    assert!(
        worst(&hs, &hg) <= bound(HEIGHT_STEP, top),
        "ground off by {}",
        worst(&hs, &hg)
    );
    for z in 0..s.size() {
        for x in 0..s.size() {
            let (a, b) = (s.column(x, z).unwrap(), g.column(x, z).unwrap());
            assert_eq!(a.len(), b.len(), "layers of ({x}, {z})");
            for k in 0..a.len() {
                let ((ma, ta, age), (mb, _, _)) = (a.layer(k).unwrap(), b.layer(k).unwrap());
                assert_eq!(ma, mb, "layer {k} of ({x}, {z})");
                assert!(ta >= 0.0, "a negative layer at ({x}, {z})");
                // What the store drops: a world chunk is eroded once, in its region.
                assert_eq!(age, 0);
            }
            assert_eq!(
                (a.water(), a.sediment(), a.flux(), a.velocity()),
                (0.0, 0.0, [0.0; 4], [0.0; 2])
            );
        }
    }
    let (s, g) = (&stored.surface, &generated.surface);
    assert_eq!((s.resolution, &s.material), (g.resolution, &g.material));
    assert!(worst(&s.height, &g.height) <= bound(HEIGHT_STEP, top));
    assert!(worst(&s.ring, &g.ring) <= bound(HEIGHT_STEP, top));
    assert!(worst(&s.water, &g.water) <= bound(WATER_STEP, 100.0));
    assert!(
        s.water
            .iter()
            .zip(&g.water)
            .all(|(a, b)| (*a > 0.0) == (*b >= 0.5 * WATER_STEP))
    );
    assert_maps_within_steps(&stored.attributes, &generated.attributes);
    assert_eq!(stored.cover, generated.cover);
    assert_eq!(stored.rivers, generated.rivers);
    assert_eq!(stored.trees.len(), generated.trees.len());
    for (a, b) in stored.trees.iter().zip(&generated.trees) {
        assert_eq!((a.species, a.variant), (b.species, b.variant));
        let far = b.position.abs().max_element();
        assert!((a.position - b.position).abs().max_element() <= bound(POSITION_STEP, far));
        assert!((a.scale - b.scale).abs() <= bound(SCALE_STEP, b.scale));
    }
}

#[test]
fn a_stored_chunk_is_within_its_steps_of_the_generated_one() {
    let (g, coords) = chunks();
    for c in coords {
        let (stored, generated) = (g.chunk(c), g.generated(c));
        assert_within_steps(&stored, &generated);
        if c != [-40, -40] {
            assert!(stored.trees.len() > 100, "{} trees by the river", stored.trees.len());
            assert!(stored.surface.water.iter().any(|&w| w > 0.0), "no water by the river");
        }
    }
}

#[test]
fn storing_a_stored_chunk_again_changes_nothing_and_its_hash_is_the_streams() {
    let (g, coords) = chunks();
    for c in coords {
        let stored = g.chunk(c);
        assert_eq!(packed::settle(&stored), stored);
        let stream = packed::stream(&stored);
        assert_eq!(stored.hash, xxhash_rust::xxh3::xxh3_64(&stream));
        assert_eq!(packed::unpack(&packed::pack(&stored)).unwrap(), stored);
        // As a cache file holds it: framed, with the stream compressed inside.
        let file = framed::encode(&stored).unwrap();
        assert_eq!(framed::decode::<ChunkPayload>(&file).unwrap(), stored);
        assert!(
            file.len() < stream.len(),
            "{} bytes stored for a stream of {}",
            file.len(),
            stream.len()
        );
    }
}

#[test]
fn attribute_maps_of_their_own_region_equal_the_stored_chunks() {
    let (g, coords) = chunks();
    let stored = g.chunk(coords[0]);
    let maps = g.attributes(stored.attributes.origin, stored.attributes.side);
    assert_eq!(maps, stored.attributes);
    assert_eq!(packed::settle_attributes(&maps), maps);
}
