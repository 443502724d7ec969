//! Wavefront OBJ export.

use std::io::{BufWriter, Write};

use super::{TreeError, TreeMesh, UpAxis};

/// Writes `mesh` as OBJ text: `v`, `vt`, `vn` lines per vertex (same order, so a face corner is
/// `i/i/i`), then one `f` line per triangle. Coordinates are converted from `up` to Y-up.
///
/// Fails, writing nothing, when the mesh is inconsistent; otherwise fails only when `out` does.
pub fn write_obj(mesh: &TreeMesh, up: UpAxis, out: impl Write) -> Result<(), TreeError> {
    mesh.validate()?;
    let mut w = BufWriter::with_capacity(1 << 16, out);
    writeln!(
        w,
        "# Sylva tree mesh: {} vertices, {} triangles",
        mesh.vertex_count(),
        mesh.triangle_count()
    )?;
    for p in &mesh.positions {
        let p = up.to_y_up(*p);
        writeln!(w, "v {} {} {}", p.x, p.y, p.z)?;
    }
    for t in &mesh.uvs {
        writeln!(w, "vt {} {}", t.x, t.y)?;
    }
    for n in &mesh.normals {
        let n = up.to_y_up(*n);
        writeln!(w, "vn {} {} {}", n.x, n.y, n.z)?;
    }
    for t in mesh.indices.chunks_exact(3) {
        // OBJ indices start at 1.
        let (a, b, c) = (t[0] + 1, t[1] + 1, t[2] + 1);
        writeln!(w, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
    }
    w.flush()?;
    Ok(())
}
