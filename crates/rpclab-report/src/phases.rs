//! "Where the time went": a run's wall time by phase
//! ([`rpclab_model::phases::Phases`], the manifest's `[phases]`), as a
//! Markdown table for `summary.md`.

use rpclab_model::phases::{Phase, Phases};

/// What the table calls a phase.
fn label(phase: Phase) -> &'static str {
    match phase {
        Phase::Build => "build (images, client)",
        Phase::Calibration => "calibration",
        Phase::Start => "start (containers)",
        Phase::Readiness => "readiness (to a verified call)",
        Phase::Priming => "priming",
        Phase::Warmup => "warm-up",
        Phase::Windows => "measurement windows",
        Phase::Cooldown => "cool-down",
        Phase::ClientOverhead => "client containers around cells",
        Phase::Teardown => "teardown",
        Phase::Other => "other",
    }
}

/// Seconds as `m:ss`-style words for the reader: `1 min 05 s`, `42.0 s`.
fn duration(seconds: f64) -> String {
    if seconds >= 60.0 {
        let whole = seconds.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        format!("{seconds:.1} s")
    }
}

/// The table: every phase with its seconds and share of the wall time,
/// then the wall time, under a heading; a resumed run's figures are the
/// sum of its invocations'.
pub fn render(phases: &Phases) -> String {
    let mut md = String::from(
        "## Where the time went\n\n| phase | seconds | share of wall |\n| --- | ---: | ---: |\n",
    );
    for (phase, seconds) in phases.rows() {
        md.push_str(&format!(
            "| {} | {seconds:.1} | {:.1} % |\n",
            label(phase),
            100.0 * phases.share(seconds)
        ));
    }
    md.push_str(&format!(
        "| **wall** | {:.1} | 100 % |\n\nThe run took {} in all.\n",
        phases.wall,
        duration(phases.wall)
    ));
    md
}

/// The phases in one line for the terminal, those that took a second or
/// more, in the order of a run: `where the time went: build 1 min 02 s
/// (7 %), readiness 40.0 s (4 %), ...`.
pub fn line(phases: &Phases) -> String {
    let parts: Vec<String> = (phases.rows().into_iter())
        .filter(|(_, seconds)| *seconds >= 1.0)
        .map(|(phase, seconds)| {
            format!(
                "{} {} ({:.0} %)",
                phase.key().replace('_', " "),
                duration(seconds),
                100.0 * phases.share(seconds)
            )
        })
        .collect();
    format!("where the time went: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_phase_has_a_row_with_its_share() {
        let mut p = Phases::default();
        p.add(Phase::Build, Duration::from_secs(30));
        p.add(Phase::Windows, Duration::from_secs(60));
        let p = p.closed(Duration::from_secs(120));
        let md = render(&p);
        assert!(md.starts_with("## Where the time went\n"), "{md}");
        for phase in Phase::ALL {
            assert!(
                md.contains(&format!("| {} | ", label(phase))),
                "{phase:?}: {md}"
            );
        }
        assert!(
            md.contains("| build (images, client) | 30.0 | 25.0 % |"),
            "{md}"
        );
        assert!(
            md.contains("| measurement windows | 60.0 | 50.0 % |"),
            "{md}"
        );
        assert!(md.contains("| other | 30.0 | 25.0 % |"), "{md}");
        assert!(md.contains("| **wall** | 120.0 | 100 % |"), "{md}");
        assert!(md.contains("The run took 2 min 00 s in all."), "{md}");
    }

    #[test]
    fn the_terminal_line_names_the_phases_that_took_a_second() {
        let mut p = Phases::default();
        p.add(Phase::Build, Duration::from_secs(62));
        p.add(Phase::ClientOverhead, Duration::from_secs(30));
        p.add(Phase::Teardown, Duration::from_millis(200));
        let p = p.closed(Duration::from_secs(100));
        assert_eq!(
            line(&p),
            "where the time went: build 1 min 02 s (62 %), client overhead 30.0 s (30 %), other 7.8 s (8 %)"
        );
    }

    #[test]
    fn an_empty_run_renders_without_dividing_by_zero() {
        let md = render(&Phases::default());
        assert!(md.contains("| other | 0.0 | 0.0 % |"), "{md}");
        assert!(md.contains("The run took 0.0 s in all."), "{md}");
    }
}
