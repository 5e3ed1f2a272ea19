//! The running cell on the terminal: its label, phase, calls and current
//! rate, from the client's `rpclab-progress:` lines. On a terminal it is one
//! line redrawn in place; elsewhere (CI logs) it stays silent and only the
//! cell's result line is printed.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

pub struct CellBar {
    bar: ProgressBar,
    label: String,
}

impl CellBar {
    pub fn new(label: &str) -> CellBar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("  {spinner} {msg}").expect("static template"));
        bar.set_message(format!("{label} · starting"));
        bar.enable_steady_tick(Duration::from_millis(200));
        CellBar {
            bar,
            label: label.to_owned(),
        }
    }

    /// `progress` is the client's line after its prefix:
    /// `phase=Measure calls=1234 rate=567/s`.
    pub fn update(&self, progress: &str) {
        let field = |key: &str| {
            progress
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
                .unwrap_or("?")
                .to_owned()
        };
        self.bar.set_message(format!(
            "{} · {} · {} calls · {}",
            self.label,
            field("phase").to_lowercase(),
            field("calls"),
            field("rate")
        ));
    }

    pub fn println(&self, line: &str) {
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
