//! Lists the bundled scenes for `sylva scenes`: each file under `scenes/` with
//! the first sentence of its leading comment, which says what it shows.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=scenes");
    let mut files = Vec::new();
    collect(Path::new("scenes"), &mut files);
    files.sort();
    let mut out = String::from(
        "/// Every bundled scene: its path and what it shows.\npub(crate) const BUNDLED: &[(&str, &str)] = &[\n",
    );
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        out += &format!("    ({:?}, {:?}),\n", path.display().to_string(), about(&text));
    }
    out += "];\n";
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("scenes.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// The first sentence of the scene's leading comment, or its first line when that is a title
/// (at most about 110 characters).
fn about(text: &str) -> String {
    let comment: Vec<&str> = text
        .lines()
        .map_while(|l| l.trim_start().strip_prefix("//"))
        .map(str::trim)
        .collect();
    // A line that starts with a capital starts something new (the thesis scenes' titles stand alone).
    let mut joined = comment.first().copied().unwrap_or("").to_owned();
    for line in comment.iter().skip(1) {
        if line.is_empty() || line.starts_with(char::is_uppercase) {
            break;
        }
        joined = format!("{joined} {line}");
    }
    let sentence = sentence(&joined);
    match sentence.char_indices().nth(110) {
        Some((cut, _)) => format!("{}…", sentence[..cut].trim_end()),
        None => sentence.to_owned(),
    }
}

/// Up to the first full stop that ends a sentence (not one of `Fig. 6.1b`, `eq. 2.17`, `p. 25`).
fn sentence(text: &str) -> &str {
    const ABBREVIATIONS: [&str; 8] = ["Fig", "Figs", "eq", "eqs", "p", "cf", "Tab", "Sec"];
    let mut from = 0;
    while let Some(at) = text[from..].find(". ").map(|i| from + i) {
        let word = text[..at].rsplit([' ', '(']).next().unwrap_or("");
        if !ABBREVIATIONS.contains(&word) {
            return &text[..=at];
        }
        from = at + 2;
    }
    text
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ron") {
            out.push(path);
        }
    }
}
