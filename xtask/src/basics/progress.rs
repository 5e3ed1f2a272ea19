//! The run on the terminal: a bar of the cells done out of the total, with
//! the elapsed time and an estimate of what is left, and above it the
//! running cell (its label, phase, calls and current rate, from the
//! client's `rpclab-progress:` lines); finished cells print their line
//! above both. On a terminal the bars are redrawn in place; elsewhere (CI
//! logs) they stay silent and only the cells' lines are printed.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::OnceLock;
use std::time::Duration;

/// Every bar of the process, so that lines printed go above all of them.
fn bars() -> &'static MultiProgress {
    static BARS: OnceLock<MultiProgress> = OnceLock::new();
    BARS.get_or_init(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
}

/// `eprintln!` for lines printed while a run's bars may be on screen: the
/// line goes above the bars instead of through them.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::basics::progress::println(&format!($($arg)*))
    };
}

/// Prints a line above the bars (or plainly, where there are none).
pub fn println(line: &str) {
    if bars().is_hidden() {
        eprintln!("{line}");
    } else {
        let _ = bars().println(line);
    }
}

/// The whole run: cells done out of the total, elapsed time and ETA.
pub struct RunBar {
    bar: ProgressBar,
}

impl RunBar {
    pub fn new(cells: u64) -> RunBar {
        let bar = bars().add(ProgressBar::new(cells));
        bar.set_style(
            ProgressStyle::with_template(
                "[{elapsed_precise}] {wide_bar} {pos}/{len} cells · about {eta} left",
            )
            .expect("static template"),
        );
        RunBar { bar }
    }

    /// One more cell is done.
    pub fn cell_done(&self) {
        self.bar.inc(1);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

pub struct CellBar {
    bar: ProgressBar,
    label: String,
}

impl CellBar {
    pub fn new(label: &str) -> CellBar {
        // Above the run's bar, so the total stays at the bottom.
        let bar = bars().insert(0, ProgressBar::no_length());
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
        println(line);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
        bars().remove(&self.bar);
    }
}
