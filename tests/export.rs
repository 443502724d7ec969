//! `sylva export`: a region of the world as one glTF binary (docs/design/embedding.md,
//! "glTF"): its structure read back, its instances the chunks' trees, and bad input refused
//! before any work. CI also runs the Khronos validator on an export (`.ci/run`).

use serde_json::Value;
use sylva::Scene;
use sylva::systems::world::WorldGen;

mod support;
use support::{run, stderr, stdout, temp};

/// The JSON chunk and the length of the binary chunk of a GLB file.
fn read_glb(bytes: &[u8]) -> (Value, usize) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!((word(4), word(8)), (2, bytes.len()), "version and length");
    let json_len = word(12);
    assert_eq!(&bytes[16..20], b"JSON");
    let json = serde_json::from_slice(&bytes[20..20 + json_len]).expect("the JSON chunk parses");
    let bin_at = 20 + json_len;
    assert_eq!(&bytes[bin_at + 4..bin_at + 8], b"BIN\0");
    (json, word(bin_at))
}

#[test]
fn an_export_holds_each_chunks_ground_and_its_trees_as_instances() {
    let out = temp("two.glb");
    let (heightmap, masks) = (temp("two-heights.png"), temp("two-masks"));
    let o = run(&[
        "export",
        "--region=-4,2,-3,2",
        "--out",
        out.to_str().unwrap(),
        "--tree-level",
        "2",
        "--heightmap",
        heightmap.to_str().unwrap(),
        "--masks",
        masks.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 chunks"), "{}", stdout(&o));
    // Beside the glTF: the region's 16-bit heightmap, a cell per pixel, and its masks.
    let png = std::fs::read(&heightmap).unwrap();
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    let cells = Scene::world().world.unwrap().chunk_cells;
    assert_eq!(
        (&png[12..16], word(16), word(20), png[24]),
        (&b"IHDR"[..], 2 * cells, cells, 16)
    );
    for file in ["masks.json", "biome.png", "wetness.png", "slope.png"] {
        assert!(masks.join(file).is_file(), "{file} beside the export");
    }
    let (doc, bin) = read_glb(&std::fs::read(&out).unwrap());
    let buffer = doc["buffers"][0]["byteLength"].as_u64().unwrap() as usize;
    assert!(
        (buffer..buffer + 4).contains(&bin),
        "the BIN chunk is the buffer, padded: {bin} for {buffer}"
    );
    assert_eq!(
        doc["extensionsUsed"],
        serde_json::json!(["EXT_mesh_gpu_instancing", "MSFT_lod"])
    );
    let nodes = doc["nodes"].as_array().unwrap();
    let roots = doc["scenes"][0]["nodes"].as_array().unwrap();
    assert_eq!(roots.len(), 2, "a root node per chunk");
    let scene = Scene::world();
    let world = WorldGen::new(scene.world.clone().unwrap(), scene.seed);
    for (root, coord) in roots.iter().zip([[-4, 2], [-3, 2]]) {
        let chunk = &nodes[root.as_u64().unwrap() as usize];
        assert_eq!(chunk["name"], format!("chunk {},{}", coord[0], coord[1]));
        assert_eq!(chunk["extras"]["chunk"], serde_json::json!(coord));
        let biome = chunk["extras"]["biome"]
            .as_str()
            .expect("a chunk on land names its biome");
        let biomes = &scene.world.as_ref().unwrap().ecology.biomes;
        assert!(biomes.iter().any(|b| b.name == biome), "{biome}");
        let children: Vec<&Value> = chunk["children"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &nodes[c.as_u64().unwrap() as usize])
            .collect();
        assert!(
            children
                .iter()
                .any(|c| c["name"] == format!("ground {},{}", coord[0], coord[1]))
        );
        let placed: u64 = children
            .iter()
            .filter_map(|c| c["extensions"]["EXT_mesh_gpu_instancing"]["attributes"]["TRANSLATION"].as_u64())
            .map(|a| doc["accessors"][a as usize]["count"].as_u64().unwrap())
            .sum();
        let trees = world.chunk(coord).trees.len() as u64;
        assert!(trees > 0, "the chunk has trees");
        assert_eq!(placed, trees, "chunk {coord:?}: every tree and shrub is an instance");
        for c in children.iter().filter(|c| c.get("extensions").is_some()) {
            assert!(c["extras"]["species"].is_string() && c["extras"]["variant"].is_u64());
            // The coarser level is an MSFT_lod alternative: the same instances, outside the
            // scene graph, drawing the variant's level 3 where the node draws its level 2.
            let ids = c["extensions"]["MSFT_lod"]["ids"].as_array().expect("a coarser level");
            assert_eq!(ids.len(), 1);
            let coarser = &nodes[ids[0].as_u64().unwrap() as usize];
            let instancing = "EXT_mesh_gpu_instancing";
            assert_eq!(coarser["extensions"][instancing], c["extensions"][instancing]);
            let level = |n: &Value| doc["meshes"][n["mesh"].as_u64().unwrap() as usize]["extras"]["level"].clone();
            assert_eq!((level(c), level(coarser)), (serde_json::json!(2), serde_json::json!(3)));
            assert!(
                !roots.contains(&ids[0])
                    && nodes
                        .iter()
                        .all(|n| !n["children"].as_array().is_some_and(|k| k.contains(&ids[0])))
            );
        }
    }
    // Leaves are two-sided, water blends, colours ride the vertices.
    let materials = doc["materials"].as_array().unwrap();
    assert!(
        materials
            .iter()
            .any(|m| m["name"] == "leaves" && m["doubleSided"] == true)
    );
    assert!(
        materials
            .iter()
            .any(|m| m["name"] == "water" && m["alphaMode"] == "BLEND")
    );
    assert!(doc["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"].is_u64());
}

#[test]
fn bad_export_requests_are_refused_before_any_work() {
    let dir = temp("exports");
    std::fs::create_dir_all(&dir).unwrap();
    let wrong = dir.join("region.obj");
    let o = run(&["export", "--region=0,0,0,0", "--out", wrong.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains(".glb"), "{}", stderr(&o));
    let picture = dir.join("heights.jpg");
    let good = dir.join("region.glb");
    let o = run(&[
        "export",
        "--region=0,0,0,0",
        "--out",
        good.to_str().unwrap(),
        "--heightmap",
        picture.to_str().unwrap(),
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("--heightmap") && !good.exists(),
        "{}",
        stderr(&o)
    );
    let missing = dir.join("no/such/dir/region.glb");
    let o = run(&["export", "--region=0,0,0,0", "--out", missing.to_str().unwrap()]);
    assert!(!o.status.success(), "{}", stderr(&o));
    let huge = dir.join("huge.glb");
    let o = run(&[
        "export",
        "--region=-1000,-1000,1000,1000",
        "--out",
        huge.to_str().unwrap(),
        "--memory-limit",
        "4G",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("4004001 chunks"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("--region"),
        "the estimate names its largest part: {}",
        stderr(&o)
    );
    assert!(!huge.exists());
}

#[test]
fn a_trees_gltf_carries_its_bark_colour_and_its_leaves() {
    let out = temp("tree.glb");
    let o = run(&["tree", "scenes/thesis/fig6_1b.ron", "--export", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (doc, _) = read_glb(&std::fs::read(&out).unwrap());
    let primitives = doc["meshes"][0]["primitives"].as_array().unwrap();
    assert_eq!(primitives.len(), 2, "bark and leaves");
    let material = |p: &Value| &doc["materials"][p["material"].as_u64().unwrap() as usize];
    assert_eq!(material(&primitives[0])["name"], "bark");
    let bark = material(&primitives[0])["pbrMetallicRoughness"]["baseColorFactor"]
        .as_array()
        .unwrap();
    assert!(
        bark[..3].iter().any(|c| c.as_f64().unwrap() < 0.9),
        "bark is coloured, not white"
    );
    assert_eq!(material(&primitives[1])["name"], "leaves");
    assert_eq!(material(&primitives[1])["doubleSided"], true);
    let leaves = &doc["accessors"][primitives[1]["attributes"]["POSITION"].as_u64().unwrap() as usize];
    assert!(
        leaves["count"].as_u64().unwrap() >= 8 * 1000,
        "thousands of leaves, eight vertices each"
    );
    assert!(primitives[1]["attributes"]["COLOR_0"].is_u64());
}
