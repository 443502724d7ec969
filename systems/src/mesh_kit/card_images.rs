//! A tree variant's impostor card images, drawn on the CPU (docs/design/embedding.md,
//! "Card images"): what a host shows where a tree is a few pixels tall.

use glam::{Vec2, Vec3};

use super::{KitError, Mesh, MeshKit};

/// Views per variant: eight around it, every 45° from +Z, then one from above.
pub const CARD_VIEWS: usize = 9;

/// The level of detail the cards are drawn from (the trunk, the limbs and 30 % of the leaves,
/// grown to keep the crown's cover).
const CARD_LEVEL: usize = 1;

/// One view of a tree as an image with alpha.
#[derive(Clone, Debug, PartialEq)]
pub struct CardImage {
    /// Pixels across.
    pub width: u32,
    /// Pixels up.
    pub height: u32,
    /// sRGB RGBA8 pixels, row by row from the top; alpha 0 where the tree is not.
    pub rgba: Vec<u8>,
    /// The direction the view looks from, toward the tree (unit).
    pub from: Vec3,
    /// The card's size, metres: across and up (for the view from above: along x and along z).
    pub size: Vec2,
    /// Where the card's bottom-left corner is in the tree's frame, metres: along the card's
    /// right axis and up (from above: x and z).
    pub corner: Vec2,
}

impl MeshKit {
    /// Tree model `model_id`'s [`CARD_VIEWS`] card images, `pixels` tall (the side views; the
    /// view from above is `pixels` square): its level 1 drawn in orthographic projection with
    /// a depth test, lit by a fixed sun from the upper left, both sides of a leaf lit alike.
    pub fn tree_cards(&self, model_id: usize, pixels: u32) -> Result<Vec<CardImage>, KitError> {
        let lods = self.tree(model_id)?;
        let level = &lods.levels[CARD_LEVEL];
        let b = lods.bounds;
        // Wide enough for the crown seen from any side.
        let reach = [b.min.x, b.max.x, b.min.z, b.max.z]
            .iter()
            .fold(1e-3f32, |r, v| r.max(v.abs()));
        let pixels = pixels.clamp(1, 4096);
        let mut cards = Vec::with_capacity(CARD_VIEWS);
        for k in 0..CARD_VIEWS - 1 {
            let a = k as f32 * std::f32::consts::FRAC_PI_4;
            let from = Vec3::new(a.sin(), 0.0, a.cos());
            let right = Vec3::new(a.cos(), 0.0, -a.sin());
            let size = Vec2::new(2.0 * reach, (b.max.y - b.min.y).max(1e-3));
            let width = ((pixels as f32 * size.x / size.y).round() as u32).clamp(1, 4096);
            let view = View {
                from,
                right,
                up: Vec3::Y,
                corner: Vec2::new(-reach, b.min.y),
                size,
            };
            cards.push(view.draw(&[&level.bark, &level.leaves], width, pixels));
        }
        let top = View {
            from: Vec3::Y,
            right: Vec3::X,
            up: Vec3::NEG_Z,
            corner: Vec2::splat(-reach),
            size: Vec2::splat(2.0 * reach),
        };
        cards.push(top.draw(&[&level.bark, &level.leaves], pixels, pixels));
        Ok(cards)
    }
}

/// An orthographic view: the direction it looks from, the image's axes and the rectangle of
/// the plane it covers (along `right` and `up`).
struct View {
    from: Vec3,
    right: Vec3,
    up: Vec3,
    corner: Vec2,
    size: Vec2,
}

impl View {
    /// `meshes` drawn into a `width` × `height` image.
    fn draw(&self, meshes: &[&Mesh], width: u32, height: u32) -> CardImage {
        let (w, h) = (width as usize, height as usize);
        let mut depth = vec![f32::NEG_INFINITY; w * h];
        let mut rgba = vec![0u8; w * h * 4];
        let sun = Vec3::new(-0.4, 0.8, 0.45).normalize();
        let pixel = |p: Vec3| {
            let q = (Vec2::new(p.dot(self.right), p.dot(self.up)) - self.corner) / self.size;
            Vec2::new(q.x * w as f32, (1.0 - q.y) * h as f32)
        };
        for mesh in meshes {
            for t in mesh.indices.chunks_exact(3) {
                let [i, j, k] = [t[0], t[1], t[2]].map(|i| i as usize);
                let [a, b, c] = [i, j, k].map(|i| pixel(mesh.positions[i]));
                let area = (b - a).perp_dot(c - a);
                if area.abs() < 1e-12 {
                    continue;
                }
                let z = [i, j, k].map(|i| mesh.positions[i].dot(self.from));
                let n = (mesh.normals[i] + mesh.normals[j] + mesh.normals[k]).normalize_or(self.from);
                let n = if n.dot(self.from) < 0.0 { -n } else { n };
                let shade = 0.45 + 0.55 * n.dot(sun).max(0.0);
                let colour = mesh.colours[i];
                let lo = a.min(b).min(c).floor().max(Vec2::ZERO);
                let hi = a.max(b).max(c).ceil().min(Vec2::new(w as f32, h as f32));
                for y in lo.y as usize..hi.y as usize {
                    for x in lo.x as usize..hi.x as usize {
                        let p = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                        let (wa, wb) = ((b - p).perp_dot(c - p) / area, (c - p).perp_dot(a - p) / area);
                        let wc = 1.0 - wa - wb;
                        if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                            continue;
                        }
                        let d = wa * z[0] + wb * z[1] + wc * z[2];
                        let at = y * w + x;
                        if d <= depth[at] {
                            continue;
                        }
                        depth[at] = d;
                        let lit = colour.map(|c| (f32::from(c) * shade).round().min(255.0) as u8);
                        rgba[4 * at..4 * at + 4].copy_from_slice(&[lit[0], lit[1], lit[2], 255]);
                    }
                }
            }
        }
        CardImage {
            width,
            height,
            rgba,
            from: self.from,
            size: self.size,
            corner: self.corner,
        }
    }
}
