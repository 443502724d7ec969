//! The property the `lsystem_parse` fuzz target and the `lsystem_fuzz` test
//! share: text → parse → derive (bounded) → turtle never panics, and every
//! failure is an error that points into the text.
//!
//! The fuzz crate includes this file by path, so it uses only the public
//! `sylva_systems::lsystem` API.

use sylva_systems::lsystem::{DeriveOptions, LSystem, LSystemError, Position, TurtleOptions, interpret};

/// Module limit of the derivation: small, so runaway growth is hit within a
/// few steps and each input stays cheap.
pub const MODULE_LIMIT: usize = 2_000;

/// Checks that `pos` lies inside `text`: on one of its lines, at most one
/// column past that line's last character (an error at the end of a line),
/// or at column 1 of the line after the last (the "end of grammar" position
/// of a missing axiom).
pub fn position_in_text(pos: Position, text: &str) -> Result<(), String> {
    let lines: Vec<usize> = text.lines().map(|l| l.chars().count()).collect();
    let line = pos.line as usize;
    let ok = match line.checked_sub(1).and_then(|i| lines.get(i)) {
        Some(&chars) => pos.column >= 1 && pos.column as usize <= chars + 1,
        None => line == lines.len() + 1 && pos.column == 1,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("position {pos} outside the text (line lengths {lines:?})"))
    }
}

/// Checks one error: it names a position inside `text` and has a message.
fn check_error(e: &LSystemError, text: &str) -> Result<(), String> {
    let pos = e.position().ok_or_else(|| format!("error without a position: {e}"))?;
    position_in_text(pos, text).map_err(|m| format!("{m}: {e}"))?;
    if e.to_string().is_empty() {
        return Err(format!("empty message for {e:?}"));
    }
    Ok(())
}

/// Runs parse, `iterations` derivation steps and the turtle on `text`.
///
/// Returns `Err` with a description when a property fails: an error without
/// a position in the text, a word past [`MODULE_LIMIT`], a limit error that
/// names another limit, parallel and sequential derivation disagreeing, or
/// the turtle drawing a non-finite point or rejecting a derived word for
/// anything but leaving the `f32` range. A panic anywhere is a failure too.
pub fn check_pipeline(text: &str, iterations: u32) -> Result<(), String> {
    let system = match LSystem::parse(text) {
        Ok(system) => system,
        Err(e) => return check_error(&e, text),
    };
    let sequential = DeriveOptions {
        module_limit: MODULE_LIMIT,
        chunk_size: usize::MAX,
        parallel: false,
        ..DeriveOptions::default()
    };
    // Tiny chunks put even short words on the parallel path.
    let parallel = DeriveOptions {
        chunk_size: 7,
        parallel: true,
        ..sequential
    };
    let word = system.derive(iterations, &sequential);
    if word != system.derive(iterations, &parallel) {
        return Err("parallel derivation differs from sequential".into());
    }
    match word {
        Err(LSystemError::ModuleLimit { limit, step, .. }) if limit != MODULE_LIMIT || step > iterations => {
            Err(format!("module limit error names limit {limit} at step {step}"))
        }
        Err(e) => check_error(&e, text),
        Ok(word) if word.len() > MODULE_LIMIT => Err(format!("word of {} modules passed the limit", word.len())),
        Ok(word) => match interpret(&word, &TurtleOptions::default()) {
            Ok(out) if out.graph.start.iter().chain(&out.graph.end).all(|p| p.is_finite()) => Ok(()),
            Ok(_) => Err("the turtle drew a non-finite point".into()),
            // Finite steps may still add up past the f32 range.
            Err(LSystemError::Turtle { module, .. }) if module < word.len() => Ok(()),
            Err(e) => Err(format!("turtle rejected a derived word: {e}")),
        },
    }
}
