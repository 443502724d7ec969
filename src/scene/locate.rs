//! Where a field is written in RON text, and which field a position of the text belongs to.
//!
//! A small scanner follows the nesting of parentheses and brackets (skipping strings and
//! comments), so a path such as `grass.species[1].scale` finds the `scale:` of the second
//! species, and a position inside a value names the key it is the value of.

/// One step of the way from the document root to a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step<'a> {
    /// The value of `name:` in a struct.
    Field(&'a str),
    /// An element of a list.
    Index(usize),
    /// The parenthesised content of `Name(...)`: an enum variant, or `Some`.
    Variant(&'a str),
}

/// The path of field names a [`FieldError`](sylva_runtime::FieldError) uses: variants are left
/// out and a list index is attached to the list's field, `["species[1]", "scale"]`.
pub(super) fn field_path(steps: &[Step]) -> Vec<String> {
    let mut path: Vec<String> = Vec::new();
    for step in steps {
        match *step {
            Step::Field(name) => path.push(name.to_owned()),
            Step::Index(i) => match path.last_mut() {
                Some(last) => last.push_str(&format!("[{i}]")),
                None => path.push(format!("[{i}]")),
            },
            Step::Variant(_) => {}
        }
    }
    path
}

/// A place in the text where a path starts: a `name:` key, or the first token of a list element.
#[derive(Debug)]
struct Mark<'a> {
    steps: Vec<Step<'a>>,
    line: usize,
    column: usize,
}

/// An open `(`, `[` or `{`.
struct Frame {
    /// Steps before it was opened; its own variant step, if any, comes after them.
    outer: usize,
    /// Steps of the frame itself; a key or element inside starts after them.
    base: usize,
    /// The list index, when the frame is a list.
    list: Option<usize>,
    /// Whether the current list element has begun.
    started: bool,
}

/// Every mark of `text`, and the steps leading to byte offset `stop` (empty past the end).
fn scan(text: &str, stop: usize) -> (Vec<Mark<'_>>, Vec<Step<'_>>) {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        marks: Vec::new(),
        steps: Vec::new(),
        frames: Vec::new(),
        ident: None,
        i: 0,
        line: 1,
        line_start: 0,
    };
    let mut at_stop = None;
    while s.i < s.bytes.len() {
        let c = s.bytes[s.i];
        s.start_element(c);
        if s.i >= stop && at_stop.is_none() {
            at_stop = Some(s.steps.clone());
        }
        s.token(c);
    }
    (s.marks, at_stop.unwrap_or_default())
}

/// The scanner's state: what it has found, where it is, and the nesting around it.
struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    marks: Vec<Mark<'a>>,
    steps: Vec<Step<'a>>,
    frames: Vec<Frame>,
    /// An identifier not followed by `:`, which names the variant when `(` follows.
    ident: Option<&'a str>,
    /// The byte offset.
    i: usize,
    line: usize,
    /// The byte offset of the line's start.
    line_start: usize,
}

impl<'a> Scanner<'a> {
    /// Marks the start of a list element at the first token after its `[` or `,`.
    fn start_element(&mut self, c: u8) {
        let (bytes, i) = (self.bytes, self.i);
        let blank = c.is_ascii_whitespace()
            || (c == b'/' && matches!(bytes.get(i + 1), Some(b'/' | b'*')))
            || matches!(c, b']' | b',');
        if !blank
            && let Some(f) = self.frames.last_mut()
            && let Some(k) = f.list
            && !f.started
        {
            f.started = true;
            self.steps.truncate(f.base);
            self.steps.push(Step::Index(k));
            self.marks.push(Mark {
                steps: self.steps.clone(),
                line: self.line,
                column: self.text[self.line_start..i].chars().count() + 1,
            });
        }
    }

    /// Reads the token at `c`, moving past it.
    fn token(&mut self, c: u8) {
        let bytes = self.bytes;
        match c {
            b'\n' => {
                self.newline(self.i);
                self.i += 1;
            }
            b'/' if bytes.get(self.i + 1) == Some(&b'/') => {
                while self.i < bytes.len() && bytes[self.i] != b'\n' {
                    self.i += 1;
                }
            }
            b'/' if bytes.get(self.i + 1) == Some(&b'*') => self.block_comment(),
            b'"' => self.string(),
            b'r' if bytes.get(self.i + 1).is_some_and(|&b| b == b'#' || b == b'"') => {
                self.ident = None;
                let end = raw_string_end(self.text, self.i);
                for (j, &b) in bytes.iter().enumerate().take(end).skip(self.i) {
                    if b == b'\n' {
                        self.newline(j);
                    }
                }
                self.i = end;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => self.word(),
            b'(' | b'[' | b'{' => {
                let outer = self.steps.len();
                if let (b'(', Some(name)) = (c, self.ident.take()) {
                    self.steps.push(Step::Variant(name));
                }
                self.frames.push(Frame {
                    outer,
                    base: self.steps.len(),
                    list: (c == b'[').then_some(0),
                    started: false,
                });
                self.i += 1;
            }
            b')' | b']' | b'}' => {
                self.ident = None;
                if let Some(f) = self.frames.pop() {
                    self.steps.truncate(f.outer);
                }
                self.i += 1;
            }
            b',' => {
                self.ident = None;
                if let Some(f) = self.frames.last_mut() {
                    self.steps.truncate(f.base);
                    if let Some(k) = &mut f.list {
                        *k += 1;
                        f.started = false;
                    }
                }
                self.i += 1;
            }
            c => {
                if !c.is_ascii_whitespace() {
                    self.ident = None;
                }
                self.i += 1;
            }
        }
    }

    /// A line starts after the newline at byte `j`.
    fn newline(&mut self, j: usize) {
        self.line += 1;
        self.line_start = j + 1;
    }

    /// Skips a `/* … */` comment.
    fn block_comment(&mut self) {
        let bytes = self.bytes;
        self.i += 2;
        while self.i < bytes.len() && !(bytes[self.i] == b'*' && bytes.get(self.i + 1) == Some(&b'/')) {
            if bytes[self.i] == b'\n' {
                self.newline(self.i);
            }
            self.i += 1;
        }
        self.i += 2;
    }

    /// Skips a `"…"` string.
    fn string(&mut self) {
        let bytes = self.bytes;
        self.ident = None;
        self.i += 1;
        while self.i < bytes.len() && bytes[self.i] != b'"' {
            if bytes[self.i] == b'\\' {
                self.i += 1;
            } else if bytes[self.i] == b'\n' {
                self.newline(self.i);
            }
            self.i += 1;
        }
        self.i += 1;
    }

    /// An identifier: a key when `:` follows, else perhaps a variant's name.
    fn word(&mut self) {
        let bytes = self.bytes;
        let start = self.i;
        while self.i < bytes.len() && (bytes[self.i].is_ascii_alphanumeric() || bytes[self.i] == b'_') {
            self.i += 1;
        }
        let mut j = self.i;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        self.ident = None;
        let name = &self.text[start..self.i];
        if bytes.get(j) == Some(&b':') {
            if let Some(f) = self.frames.last() {
                self.steps.truncate(f.base);
            }
            self.steps.push(Step::Field(name));
            self.marks.push(Mark {
                steps: self.steps.clone(),
                line: self.line,
                column: start - self.line_start + 1,
            });
        } else {
            self.ident = Some(name);
        }
    }
}

/// The byte offset just past the raw string `r#"..."#` that starts at `start`.
fn raw_string_end(text: &str, start: usize) -> usize {
    let hashes = text.as_bytes()[start + 1..].iter().take_while(|&&b| b == b'#').count();
    let body = start + 1 + hashes + 1;
    let close = format!("\"{}", "#".repeat(hashes));
    text.get(body..)
        .and_then(|t| t.find(&close))
        .map_or(text.len(), |p| body + p + close.len())
}

/// Finds where the field at `path` (as [`field_path`] spells it) is written: the 1-based line
/// and column of its key. When it is not written (its value came from a default), the deepest
/// written part of the path: the list element, list or section holding it. `None` when nothing
/// of it is written.
pub(super) fn locate(text: &str, path: &[String]) -> Option<(usize, usize)> {
    let (marks, _) = scan(text, usize::MAX);
    let mut best: Option<(usize, &Mark)> = None;
    for mark in &marks {
        let at = field_path(&mark.steps);
        if at.is_empty() || at.len() > path.len() {
            continue;
        }
        let n = at.len() - 1;
        let last = &path[n];
        let exact = at[n] == *last;
        // `species:` covers `species[1]` too, but less closely than the element itself.
        let covers = exact
            || last
                .strip_prefix(at[n].as_str())
                .is_some_and(|rest| rest.starts_with('['));
        if at[..n] != path[..n] || !covers {
            continue;
        }
        if exact && at.len() == path.len() {
            return Some((mark.line, mark.column));
        }
        let rank = 2 * at.len() + usize::from(exact);
        if best.is_none_or(|(r, _)| rank > r) {
            best = Some((rank, mark));
        }
    }
    best.map(|(_, m)| (m.line, m.column))
}

/// The steps from the root to the value that byte offset `offset` of `text` lies in.
pub(super) fn steps_at(text: &str, offset: usize) -> Vec<Step<'_>> {
    scan(text, offset).1
}

/// Maps a 1-based (line, column) inside the string value of the field at `path` to a
/// (line, column) of the file, following the escapes of a plain string (`\n` is a line of the
/// value but not of the file). `None` when the position lies outside the string.
pub(super) fn locate_in_string(text: &str, path: &[String], line: usize, column: usize) -> Option<(usize, usize)> {
    let (key_line, key_col) = locate(text, path)?;
    let key_at = offset_of(text, key_line, key_col)?;
    let quote = key_at + text[key_at..].find('"')?;
    let hashes = text[..quote].len() - text[..quote].trim_end_matches('#').len();
    let raw = text[..quote - hashes].ends_with('r');
    let content = quote + 1;
    let end = if raw {
        raw_string_end(text, quote - hashes - 1)
            .saturating_sub(1 + hashes)
            .max(content)
    } else {
        text.len()
    };
    let (mut at_line, mut at_column) = (1, 1);
    let mut chars = text[content..end].char_indices();
    loop {
        let next = chars.next();
        if (at_line, at_column) == (line, column) {
            return Some(position_of(text, content + next.map_or(end - content, |(i, _)| i)));
        }
        let decoded = match next? {
            (_, '"') if !raw => return None,
            (_, '\\') if !raw => match chars.next()?.1 {
                'n' => '\n',
                'u' => {
                    chars.by_ref().find(|&(_, c)| c == '}');
                    'u'
                }
                'x' => {
                    chars.by_ref().nth(1);
                    'x'
                }
                c => c,
            },
            (_, c) => c,
        };
        if decoded == '\n' {
            (at_line, at_column) = (at_line + 1, 1);
        } else {
            at_column += 1;
        }
    }
}

/// The byte offset of a 1-based (line, column in characters); `None` past the end of the line.
pub(super) fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum();
    let rest = text.get(line_start..)?;
    let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
    rest.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(rest.len()))
        .nth(column.checked_sub(1)?)
        .map(|i| line_start + i)
}

/// The 1-based (line, column) of byte offset `offset`.
pub(super) fn position_of(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// The scalar written at byte offset `offset` — a number, word or quoted string standing alone
/// as a value — with its start offset. `None` when the position is not inside such a token.
pub(super) fn scalar_at(text: &str, offset: usize) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    let is_token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'_');
    // RON may point at the blank before a value.
    let at = offset.min(bytes.len());
    let at = at + bytes[at..].iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    let mut start = at;
    while start > 0 && is_token(bytes[start - 1]) {
        start -= 1;
    }
    let end = if bytes.get(start) == Some(&b'"') {
        let close = text[start + 1..].find('"')?;
        start + 1 + close + 1
    } else {
        start + bytes[start..].iter().take_while(|&&b| is_token(b)).count()
    };
    let before = text[..start].trim_end();
    let after = text[end..].trim_start();
    let stands_alone = before.ends_with([':', '(', '[', ','])
        && (after.is_empty() || after.starts_with([',', ')', ']', '}']) || after.starts_with("//"));
    (end > start && at <= end && stands_alone).then(|| (start, &text[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_owned).collect()
    }

    fn keys(text: &str) -> Vec<String> {
        scan(text, usize::MAX)
            .0
            .iter()
            .filter(|m| matches!(m.steps.last(), Some(Step::Field(_))))
            .map(|m| field_path(&m.steps).join("."))
            .collect()
    }

    #[test]
    fn keys_skip_strings_and_comments() {
        assert_eq!(keys("(a: \"b: c\", /* d: */ r#\"e: \"# , f: 1)"), ["a", "f"]);
    }

    #[test]
    fn list_elements_are_told_apart() {
        let text =
            "(grass: (species: [\n  (scale: (1.0, 2.0)),\n  (blade: Grammar(grammar: \"x\"), scale: (2.0, 1.0)),\n]))";
        assert_eq!(locate(text, &path("grass.species[1].scale")), Some((3, 34)));
        assert_eq!(locate(text, &path("grass.species[0].scale")), Some((2, 4)));
        assert_eq!(locate(text, &path("grass.species[1].blade.grammar")), Some((3, 19)));
        // Not written: the element that would hold it, then the list.
        assert_eq!(locate(text, &path("grass.species[0].colour")), Some((2, 3)));
        assert_eq!(locate(text, &path("grass.species[2].colour")), Some((1, 10)));
        assert_eq!(locate(text, &path("terrain.size")), None);
    }

    #[test]
    fn a_position_names_the_value_it_is_in() {
        let text = "(\n  terrain: (size: -64, chunks: (1, 1)),\n  forest: (species: [(lsystem: ()), (weight: x)]),\n)";
        let at = |needle: &str| field_path(&steps_at(text, text.find(needle).unwrap()));
        assert_eq!(at("64"), path("terrain.size"));
        assert_eq!(at("1, 1"), path("terrain.chunks"));
        assert_eq!(at("x)"), path("forest.species[1].weight"));
        let text = "(colonize: (regions: [(shape: Sphere(radius: -1.0))]))";
        let steps = steps_at(text, text.find("-1").unwrap());
        assert_eq!(
            steps,
            [
                Step::Field("colonize"),
                Step::Field("regions"),
                Step::Index(0),
                Step::Field("shape"),
                Step::Variant("Sphere"),
                Step::Field("radius"),
            ]
        );
    }

    #[test]
    fn scalars_stand_alone() {
        let text = "(size: -64, name: \"a b\", v: (4.5, x))";
        assert_eq!(scalar_at(text, text.find("64").unwrap()), Some((7, "-64")));
        assert_eq!(scalar_at(text, text.find("\"a b").unwrap()), Some((18, "\"a b\"")));
        assert_eq!(scalar_at(text, text.find(".5").unwrap()), Some((29, "4.5")));
        assert_eq!(scalar_at(text, text.find(" -64").unwrap()), Some((7, "-64")));
        assert_eq!(scalar_at(text, text.find("size").unwrap()), None);
    }

    #[test]
    fn string_positions_follow_escapes() {
        let p = path("g");
        let text = "(\n  g: \"ab\\ncd\\\"e\",\n)";
        assert_eq!(locate_in_string(text, &p, 1, 2), Some((2, 8)));
        assert_eq!(locate_in_string(text, &p, 2, 1), Some((2, 11)));
        assert_eq!(
            locate_in_string(text, &p, 2, 4),
            Some((2, 15)),
            "after the escaped quote"
        );
        assert_eq!(locate_in_string(text, &p, 2, 5), Some((2, 16)), "the end of the string");
        assert_eq!(locate_in_string(text, &p, 3, 1), None);
        let text = "(g: r#\"a\n  b\"c\"#)";
        assert_eq!(locate_in_string(text, &p, 2, 3), Some((2, 3)));
        assert_eq!(
            locate_in_string(text, &p, 2, 4),
            Some((2, 4)),
            "a quote inside the raw string"
        );
        assert_eq!(locate_in_string(text, &p, 2, 6), Some((2, 6)), "the end of the string");
        assert_eq!(locate_in_string(text, &p, 3, 1), None);
    }

    #[test]
    fn offsets_and_positions_agree() {
        let text = "ab\ncdé\nf";
        for offset in [0, 1, 3, 5, 8] {
            let (line, column) = position_of(text, offset);
            assert_eq!(offset_of(text, line, column), Some(offset));
        }
    }
}
