//! Progress on a terminal: bars over a known count, spinners for work without one. Both are
//! hidden when stdout is not a terminal, so piped output and reports stay clean.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `len` things called `unit` ("frames", "chunks"), prefixed by the scene's name.
pub(crate) fn bar(len: u64, scene: &str, unit: &str) -> ProgressBar {
    if !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stdout());
    let template = format!("{{prefix}} [{{bar:40}}] {{pos}}/{{len}} {unit}, {{per_sec}}, eta {{eta}}");
    bar.set_style(
        ProgressStyle::with_template(&template)
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar.set_prefix(scene.to_owned());
    bar
}

/// A spinner for work without a known length.
pub(crate) fn spinner(what: &str) -> ProgressBar {
    if !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let s = ProgressBar::new_spinner();
    s.set_style(ProgressStyle::with_template("{prefix} {spinner} {msg}").expect("static template is valid"));
    s.set_prefix(what.to_owned());
    s.enable_steady_tick(std::time::Duration::from_millis(100));
    s
}
