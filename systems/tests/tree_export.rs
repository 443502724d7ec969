//! OBJ and GLB export, parameter files and the instanced-cylinder batch.

mod tree_support;

use glam::{Vec2, Vec3};
use serde_json::Value;
use sylva_runtime::{FieldError, Validate};
use sylva_systems::tree::{
    MeshParams, MeshStyle, Placement, RadiusParams, RadiusRule, RootNormal, SidesRule, TreeError, TreeMesh, UpAxis,
    build_mesh, prepare_graph, push_cylinders, write_glb, write_obj,
};
use tree_support::ternary_fig_6_1b;

fn small_mesh() -> TreeMesh {
    let graph = ternary_fig_6_1b(2);
    let prepared = prepare_graph(&graph, &RadiusParams::default(), &MeshParams::default()).unwrap();
    build_mesh(&prepared, &MeshParams::default()).unwrap()
}

#[test]
fn obj_parses_back() {
    let mesh = small_mesh();
    let mut out = Vec::new();
    write_obj(&mesh, UpAxis::Z, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let count = |tag: &str| {
        text.lines()
            .filter(|l| l.split_whitespace().next() == Some(tag))
            .count()
    };
    assert_eq!(count("v"), mesh.vertex_count());
    assert_eq!(count("vt"), mesh.vertex_count());
    assert_eq!(count("vn"), mesh.vertex_count());
    assert_eq!(count("f"), mesh.triangle_count());

    let positions: Vec<Vec3> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let c: Vec<f32> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            Vec3::new(c[0], c[1], c[2])
        })
        .collect();
    // Shortest round-trip formatting: parsing gives back the Y-up positions bit for bit.
    for (p, q) in mesh.positions.iter().zip(&positions) {
        assert_eq!(Vec3::new(p.x, p.z, -p.y), *q);
    }
    for (face, t) in text
        .lines()
        .filter_map(|l| l.strip_prefix("f "))
        .zip(mesh.indices.chunks(3))
    {
        let corners: Vec<u32> = face
            .split(' ')
            .map(|c| {
                let parts: Vec<u32> = c.split('/').map(|x| x.parse().unwrap()).collect();
                assert!(parts.len() == 3 && parts[0] == parts[1] && parts[1] == parts[2]);
                parts[0]
            })
            .collect();
        assert_eq!(corners, vec![t[0] + 1, t[1] + 1, t[2] + 1]);
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// Checks the GLB container and returns (JSON, BIN chunk data).
fn parse_glb(bytes: &[u8]) -> (Value, &[u8]) {
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(u32_at(bytes, 4), 2);
    assert_eq!(u32_at(bytes, 8) as usize, bytes.len());
    let json_len = u32_at(bytes, 12) as usize;
    assert_eq!(&bytes[16..20], b"JSON");
    assert_eq!(json_len % 4, 0);
    let json_bytes = &bytes[20..20 + json_len];
    let json_text = std::str::from_utf8(json_bytes).unwrap();
    let trimmed = json_text.trim_end_matches(' ');
    assert!(
        trimmed.ends_with('}') && json_len - trimmed.len() < 4,
        "JSON padded with fewer than 4 spaces"
    );
    let json: Value = serde_json::from_str(json_text).unwrap();
    let rest = &bytes[20 + json_len..];
    if rest.is_empty() {
        return (json, rest);
    }
    let bin_len = u32_at(rest, 0) as usize;
    assert_eq!(&rest[4..8], b"BIN\0");
    assert_eq!(bin_len % 4, 0);
    assert_eq!(rest.len(), 8 + bin_len, "BIN is the last chunk");
    (json, &rest[8..])
}

fn floats(bin: &[u8], offset: usize, count: usize) -> Vec<f32> {
    (0..count)
        .map(|i| f32::from_le_bytes(bin[offset + 4 * i..offset + 4 * i + 4].try_into().unwrap()))
        .collect()
}

#[test]
fn glb_structure_is_valid() {
    let mesh = small_mesh();
    let mut bytes = Vec::new();
    write_glb(&mesh, UpAxis::Z, &mut bytes).unwrap();
    let (json, bin) = parse_glb(&bytes);

    assert_eq!(json["asset"]["version"], "2.0");
    assert_eq!(json["buffers"][0]["byteLength"].as_u64().unwrap() as usize, bin.len());
    let primitive = &json["meshes"][0]["primitives"][0];
    assert_eq!(primitive["mode"], 4);
    let accessors = json["accessors"].as_array().unwrap();
    let views = json["bufferViews"].as_array().unwrap();
    for view in views {
        let (offset, length) = (
            view["byteOffset"].as_u64().unwrap(),
            view["byteLength"].as_u64().unwrap(),
        );
        assert_eq!(offset % 4, 0);
        assert!(offset + length <= bin.len() as u64);
    }
    let accessor = |name: &str| &accessors[primitive["attributes"][name].as_u64().unwrap() as usize];
    for (name, kind, width) in [
        ("POSITION", "VEC3", 3),
        ("NORMAL", "VEC3", 3),
        ("TEXCOORD_0", "VEC2", 2),
    ] {
        let a = accessor(name);
        assert_eq!(a["count"].as_u64().unwrap() as usize, mesh.vertex_count(), "{name}");
        assert_eq!(a["type"], kind);
        assert_eq!(a["componentType"], 5126);
        let view = &views[a["bufferView"].as_u64().unwrap() as usize];
        assert_eq!(
            view["byteLength"].as_u64().unwrap() as usize,
            mesh.vertex_count() * 4 * width
        );
        // min/max must be the exact extremes of the stored data.
        let data = floats(
            bin,
            view["byteOffset"].as_u64().unwrap() as usize,
            mesh.vertex_count() * width,
        );
        for k in 0..width {
            let column = data.iter().skip(k).step_by(width);
            let min = column.clone().copied().fold(f32::INFINITY, f32::min);
            let max = column.copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(a["min"][k].as_f64().unwrap() as f32, min, "{name} min[{k}]");
            assert_eq!(a["max"][k].as_f64().unwrap() as f32, max, "{name} max[{k}]");
        }
    }
    // Y-up: positions are (x, z, −y); texture v is flipped.
    let pview = &views[accessor("POSITION")["bufferView"].as_u64().unwrap() as usize];
    let stored = floats(bin, pview["byteOffset"].as_u64().unwrap() as usize, 3);
    let p = mesh.positions[0];
    assert_eq!(stored, vec![p.x, p.z, -p.y]);
    let tview = &views[accessor("TEXCOORD_0")["bufferView"].as_u64().unwrap() as usize];
    let stored = floats(bin, tview["byteOffset"].as_u64().unwrap() as usize, 2);
    assert_eq!(stored, vec![mesh.uvs[0].x, 1.0 - mesh.uvs[0].y]);

    let indices = &accessors[primitive["indices"].as_u64().unwrap() as usize];
    assert_eq!(indices["componentType"], 5125);
    assert_eq!(indices["count"].as_u64().unwrap() as usize, mesh.indices.len());
    let iview = &views[indices["bufferView"].as_u64().unwrap() as usize];
    let start = iview["byteOffset"].as_u64().unwrap() as usize;
    let stored: Vec<u32> = (0..mesh.indices.len()).map(|i| u32_at(bin, start + 4 * i)).collect();
    assert_eq!(stored, mesh.indices);
}

#[test]
fn empty_mesh_gives_a_valid_glb_without_bin() {
    let mut bytes = Vec::new();
    write_glb(&TreeMesh::default(), UpAxis::Z, &mut bytes).unwrap();
    let (json, bin) = parse_glb(&bytes);
    assert!(bin.is_empty());
    assert!(json.get("buffers").is_none() && json.get("meshes").is_none());
    assert_eq!(json["nodes"].as_array().unwrap().len(), 1);
}

#[test]
fn exporters_refuse_inconsistent_meshes_and_write_nothing() {
    let mut mesh = small_mesh();
    mesh.indices[4] = mesh.vertex_count() as u32;
    let mut out = Vec::new();
    assert!(matches!(
        write_glb(&mesh, UpAxis::Z, &mut out),
        Err(TreeError::InvalidMesh(_))
    ));
    assert!(matches!(
        write_obj(&mesh, UpAxis::Y, &mut out),
        Err(TreeError::InvalidMesh(_))
    ));
    let mut mesh = small_mesh();
    mesh.uvs[0] = Vec2::NAN;
    assert!(matches!(
        write_glb(&mesh, UpAxis::Z, &mut out),
        Err(TreeError::InvalidMesh(_))
    ));
    assert!(out.is_empty());
}

#[test]
fn param_defaults_are_the_thesis_code_defaults() {
    let r = RadiusParams::default();
    assert_eq!(
        (r.leaf_radius, r.exponent, r.trunk_multiplier, r.enabled, r.rule),
        (3.0, 2.5, 1.41, true, RadiusRule::Code)
    );
    let m = MeshParams::default();
    assert_eq!((m.sides_min, m.sides_max, m.sides_rule), (3, 4, SidesRule::Radius));
    assert_eq!(
        (m.curve_reduction, m.start_rotation_deg, m.rotation_per_branch_deg),
        (0.95, 0.0, 120.0)
    );
    assert_eq!((m.root_normal, m.style), (RootNormal::Up, MeshStyle::Chains));
    assert_eq!(r.validate(), Ok(()));
    assert_eq!(m.validate(), Ok(()));
}

#[test]
fn params_read_from_json_with_defaults_and_reject_unknown_fields() {
    let m: MeshParams =
        serde_json::from_str(r#"{ "sides_max": 12, "style": { "Fractal": { "drop_root": true } } }"#).unwrap();
    assert_eq!(
        m,
        MeshParams {
            sides_max: 12,
            style: MeshStyle::Fractal { drop_root: true },
            ..MeshParams::default()
        }
    );
    let r: RadiusParams = serde_json::from_str(r#"{ "rule": "Thesis" }"#).unwrap();
    assert_eq!(
        r,
        RadiusParams {
            rule: RadiusRule::Thesis,
            ..RadiusParams::default()
        }
    );
    let err = serde_json::from_str::<MeshParams>(r#"{ "sides": 4 }"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `sides`"), "{err}");
    let back: MeshParams = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
}

#[test]
fn validate_names_the_field() {
    let field = |e: Result<(), FieldError>| e.unwrap_err().dotted();
    let r = RadiusParams::default();
    assert_eq!(
        field(
            RadiusParams {
                leaf_radius: 0.0,
                ..r.clone()
            }
            .validate()
        ),
        "leaf_radius"
    );
    assert_eq!(
        field(
            RadiusParams {
                leaf_radius: f32::NAN,
                ..r.clone()
            }
            .validate()
        ),
        "leaf_radius"
    );
    assert_eq!(
        field(
            RadiusParams {
                exponent: 0.4,
                ..r.clone()
            }
            .validate()
        ),
        "exponent"
    );
    assert_eq!(
        field(
            RadiusParams {
                trunk_multiplier: -1.0,
                ..r
            }
            .validate()
        ),
        "trunk_multiplier"
    );
    let m = MeshParams::default();
    assert_eq!(
        field(
            MeshParams {
                sides_min: 2,
                ..m.clone()
            }
            .validate()
        ),
        "sides_min"
    );
    assert_eq!(
        field(
            MeshParams {
                sides_max: 513,
                ..m.clone()
            }
            .validate()
        ),
        "sides_max"
    );
    assert_eq!(
        field(
            MeshParams {
                curve_reduction: 1.5,
                ..m.clone()
            }
            .validate()
        ),
        "curve_reduction"
    );
    assert_eq!(
        field(
            MeshParams {
                rotation_per_branch_deg: f32::INFINITY,
                ..m
            }
            .validate()
        ),
        "rotation_per_branch_deg"
    );
    let e = MeshParams {
        sides_min: 6,
        sides_max: 5,
        ..MeshParams::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.message, "is 5, must be in [sides_min = 6, 512]");
}

#[test]
fn cylinders_mirror_the_graph_in_world_space() {
    let mut graph = ternary_fig_6_1b(2);
    graph = prepare_graph(&graph, &RadiusParams::default(), &MeshParams::thesis_fig_6_1b()).unwrap();
    let mut batch = sylva_runtime::extract::CylinderBatch::default();
    let placement = Placement {
        position: Vec3::new(100.0, 0.0, 0.0),
        scale: 0.01,
    };
    let first = push_cylinders(&mut batch, &graph, placement, |_, depth| [depth as u8, 0, 0, 255]).unwrap();
    let identity = Placement {
        position: Vec3::ZERO,
        scale: 1.0,
    };
    let second = push_cylinders(&mut batch, &graph, identity, |i, _| [i as u8; 4]).unwrap();
    assert_eq!(first, 0..graph.len());
    assert_eq!(second, graph.len()..2 * graph.len());
    assert_eq!(batch.dirty.end as usize, 2 * graph.len());
    for i in 0..graph.len() {
        let g = graph.start[i];
        assert_eq!(
            batch.start[i],
            Vec3::new(100.0, 0.0, 0.0) + Vec3::new(g.x, g.z, -g.y) * 0.01
        );
        assert_eq!(batch.start[graph.len() + i], Vec3::new(g.x, g.z, -g.y));
        assert_eq!(batch.start_radius[i], graph.start_radius[i] * 0.01);
        assert_eq!(batch.end_radius[graph.len() + i], graph.end_radius[i]);
        assert_eq!(batch.colour[i][0], graph.depth[i] as u8);
        assert_eq!(batch.colour[graph.len() + i], [i as u8; 4]);
    }
    // The root stands upright in the world: graph +Z is world +Y.
    assert!(batch.end[graph.len()].y > batch.start[graph.len()].y);
    let mut broken = graph.clone();
    broken.parent[3] = 7;
    assert!(push_cylinders(&mut batch, &broken, identity, |_, _| [0; 4]).is_err());
    assert_eq!(batch.len(), 2 * graph.len());
}
