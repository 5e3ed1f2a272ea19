//! What a running client shows each second: the calls per second, the last
//! second's p50 and p99 once the window is open, and the failed calls.
//!
//! One [`Second`], two forms. The progress line on standard error
//! ([`PROGRESS_MARKER`]: `phase=… calls=… rate=…/s failed=… p50=… p99=…`),
//! which the orchestrator reads from a cell's log and shows on its bar, and
//! which a log file or a pipe gets. And, when standard error is a terminal,
//! a small panel drawn in place with `ratatui` instead of the lines, as
//! oha draws its own: the same figures, and the rate of the last minute as
//! a sparkline. Nothing of it reaches standard output, so `--json` output
//! is the report alone.
//!
//! The figures cost the hot path nothing new but one plain store per
//! failed call: the rate comes from the tasks' counters, the percentiles
//! from the `.hlog`'s interval histograms ([`crate::stats::IntervalSink`]),
//! read once a second under the lock the workers take once an interval.

use crate::load::{Clock, Phase};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Sparkline};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The prefix of the progress line on standard error (`rpclab-progress:
/// phase=… calls=… rate=…/s failed=… p50=… p99=…`).
pub const PROGRESS_MARKER: &str = "rpclab-progress:";

/// Seconds of rate the panel's sparkline keeps.
const HISTORY: usize = 60;

/// Height of the panel, in terminal lines.
const PANEL_LINES: u16 = 6;

/// One second of a run, as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct Second {
    pub phase: Phase,
    /// Since the client started its load.
    pub elapsed: Duration,
    /// Calls completed so far, in every phase.
    pub calls: u64,
    /// Calls completed in the last second.
    pub rate: u64,
    /// Failed calls so far, and in the last second.
    pub failed: u64,
    pub failed_now: u64,
    /// The last whole second's p50 and p99 (µs), once the window is open.
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

impl Second {
    /// The second that ends now, after `before` (the previous one's, or
    /// zeros).
    fn of(clock: &Clock, started: Instant, before: Option<&Second>) -> Second {
        let now = Instant::now();
        let calls = clock.completed_calls();
        let failed = clock.failed_calls();
        let (calls_before, failed_before) = before.map_or((0, 0), |b| (b.calls, b.failed));
        let last = clock.sink().and_then(|sink| sink.last_interval(now));
        Second {
            phase: clock.phase(),
            elapsed: now.duration_since(started),
            calls,
            rate: calls.saturating_sub(calls_before),
            failed,
            failed_now: failed.saturating_sub(failed_before),
            p50_us: last.map(|l| l.p50_us),
            p99_us: last.map(|l| l.p99_us),
        }
    }

    /// The progress line (standard error, and the orchestrator's bar).
    pub fn line(&self) -> String {
        let mut line = format!(
            "{PROGRESS_MARKER} phase={:?} calls={} rate={}/s failed={}",
            self.phase, self.calls, self.rate, self.failed
        );
        if let (Some(p50), Some(p99)) = (self.p50_us, self.p99_us) {
            line.push_str(&format!(" p50={} p99={}", ms(p50), ms(p99)));
        }
        line
    }
}

/// Microseconds as milliseconds, three decimals: `0.412ms`.
fn ms(us: f64) -> String {
    format!("{:.3}ms", us / 1e3)
}

/// Shows a [`Second`] every second until the run ends (the caller drops
/// the future): a panel when standard error is a terminal, lines
/// otherwise. `what` names the run in the panel's title.
pub async fn show(clock: &Clock, what: &str) {
    let started = Instant::now();
    let mut panel = std::io::stderr()
        .is_terminal()
        .then(Panel::open)
        .and_then(Result::ok);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let mut last: Option<Second> = None;
    loop {
        tick.tick().await;
        let second = Second::of(clock, started, last.as_ref());
        match &mut panel {
            Some(p) => p.draw(what, &second),
            None => eprintln!("{}", second.line()),
        }
        last = Some(second);
    }
}

/// The live panel: a few lines below the cursor, redrawn in place.
struct Panel {
    terminal: Terminal<CrosstermBackend<std::io::Stderr>>,
    rates: VecDeque<u64>,
}

impl Panel {
    fn open() -> std::io::Result<Panel> {
        let terminal = Terminal::with_options(
            CrosstermBackend::new(std::io::stderr()),
            TerminalOptions {
                viewport: Viewport::Inline(PANEL_LINES),
            },
        )?;
        Ok(Panel {
            terminal,
            rates: VecDeque::with_capacity(HISTORY),
        })
    }

    fn draw(&mut self, what: &str, second: &Second) {
        if self.rates.len() == HISTORY {
            self.rates.pop_front();
        }
        self.rates.push_back(second.rate);
        let rates: Vec<u64> = self.rates.iter().copied().collect();
        // A terminal that stopped answering only loses the panel.
        let _ = self
            .terminal
            .draw(|frame| render(frame, what, second, &rates));
    }
}

/// The panel's content: a title with the phase and time, the figures, the
/// rate's sparkline.
fn render(frame: &mut Frame, what: &str, second: &Second, rates: &[u64]) {
    let block = Block::bordered().title(format!(
        " {what} · {:?} · {} s ",
        second.phase,
        second.elapsed.as_secs()
    ));
    let inner = block.inner(frame.area());
    frame.render_widget(block, frame.area());
    let [figures, history] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
    let percentiles = match (second.p50_us, second.p99_us) {
        (Some(p50), Some(p99)) => format!("p50 {}   p99 {}", ms(p50), ms(p99)),
        _ => "p50 –   p99 –   (from the window's first second)".to_owned(),
    };
    let failed_style = if second.failed_now > 0 {
        Style::default().fg(Color::Red)
    } else {
        Style::default()
    };
    let text = vec![
        Line::from(format!("{} calls/s   {percentiles}", second.rate)),
        Line::styled(
            format!(
                "{} calls in all   {} failed ({} in the last second)",
                second.calls, second.failed, second.failed_now
            ),
            failed_style,
        ),
    ];
    frame.render_widget(Paragraph::new(text), figures);
    frame.render_widget(
        Sparkline::default()
            .data(rates)
            .style(Style::default().fg(Color::Cyan)),
        history,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    fn second(p: Option<(f64, f64)>) -> Second {
        Second {
            phase: Phase::Measure,
            elapsed: Duration::from_secs(7),
            calls: 12_000,
            rate: 2_000,
            failed: 3,
            failed_now: 1,
            p50_us: p.map(|p| p.0),
            p99_us: p.map(|p| p.1),
        }
    }

    #[test]
    fn a_line_keeps_the_bar_s_fields_first_and_adds_the_percentiles_once_known() {
        assert_eq!(
            second(None).line(),
            "rpclab-progress: phase=Measure calls=12000 rate=2000/s failed=3"
        );
        assert_eq!(
            second(Some((120.0, 4_512.0))).line(),
            "rpclab-progress: phase=Measure calls=12000 rate=2000/s failed=3 p50=0.120ms p99=4.512ms"
        );
    }

    #[test]
    fn the_panel_shows_the_rate_percentiles_and_failures() {
        let mut terminal = Terminal::new(TestBackend::new(80, PANEL_LINES)).unwrap();
        terminal
            .draw(|f| {
                render(
                    f,
                    "grpc 127.0.0.1:50051",
                    &second(Some((120.0, 450.0))),
                    &[1, 2, 3],
                )
            })
            .unwrap();
        let shown: String = terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        for part in [
            "grpc 127.0.0.1:50051 · Measure · 7 s",
            "2000 calls/s",
            "p50 0.120ms",
            "p99 0.450ms",
            "3 failed (1 in the last second)",
        ] {
            assert!(shown.contains(part), "{part} not in {shown}");
        }
    }
}
