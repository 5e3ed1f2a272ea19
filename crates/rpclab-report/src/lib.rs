//! rpclab's report: everything a snapshot shows, rendered from its
//! results (`results.json`: cells, aggregates, and a reproduction's
//! published figures) and its setup (`manifest.toml`) alone, so any old
//! snapshot can be re-rendered.
//!
//! * [`snapshot`]: reading a snapshot folder (results and manifest);
//! * [`tables`]: the result tables, for the terminal and `summary.md`;
//! * [`charts`] and [`html`]: SVG charts (drawn with [`svg`]'s
//!   primitives) and the self-contained `report.html`;
//! * [`reproduction`]: published vs measured and the claim verdicts,
//!   each claim drawn by [`forest`] as a forest plot of its pairs;
//! * [`capacity`]: a capacity search (`lab capacity`): its steps, the
//!   rate found and its latency-vs-rate chart;
//! * [`index`]: `results/README.md`, the index of snapshots;
//! * [`compare`]: two snapshots side by side, noise-aware, with
//!   [`pair_order`] (two lab runs: the pairs of servers each decided) and
//!   [`repeatability`] (two reproductions: their verdicts);
//! * [`phases`]: where a run's wall time went, by phase;
//! * [`export`]: the figures for continuous-benchmarking tools (BMF,
//!   github-action-benchmark, CSV, JSON);
//! * [`format`]: number and name formatting they share;
//!
//! and [`write_all`], the one function that writes a snapshot's rendered
//! files (`summary.md`, `report.html`, `charts/*.svg`): `lab run`,
//! `lab reproduce` and `lab report` all call it.
//!
//! A crate of its own, over the model's types ([`rpclab_model::result`],
//! [`rpclab_model::manifest`], [`rpclab_model::aggregate`]) and light
//! crates only: nothing here runs a container, speaks to Docker or decides
//! what to measure, and its dependencies say so (no tokio, no bollard).

pub mod across_starts;
pub mod capacity;
pub mod charts;
pub mod compare;
pub mod export;
#[cfg(test)]
mod fixture;
pub mod forest;
pub mod format;
pub mod html;
pub mod index;
pub mod pair_order;
pub mod phases;
pub mod priming;
pub mod repeatability;
pub mod reproduction;
pub mod snapshot;
pub mod student;
pub mod svg;
pub mod tables;
pub mod verdicts;

use anyhow::{Context, Result};
use rpclab_model::manifest::RunManifest;
use rpclab_model::result::Results;
use std::path::{Path, PathBuf};

/// What [`write_all`] wrote.
pub struct Written {
    pub summary: PathBuf,
    pub page: PathBuf,
    pub charts: Vec<PathBuf>,
}

/// Writes everything a snapshot shows into `dir` from `results` and its
/// `setup` alone: `summary.md` (the tables in Markdown, and a
/// reproduction's comparison), `charts/*.svg` and `report.html`. `name` is
/// the snapshot's ([`snapshot::name_of`]), the title of both documents;
/// `setup` is [`snapshot::read_manifest`] of the snapshot's folder.
pub fn write_all(
    dir: &Path,
    name: &str,
    results: &Results,
    setup: &snapshot::Setup,
) -> Result<Written> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let comparison = reproduction::of(results);
    let summary = dir.join("summary.md");
    std::fs::write(
        &summary,
        summary_md(name, results, setup.as_ref().ok(), comparison.as_ref()),
    )
    .with_context(|| format!("cannot write {}", summary.display()))?;
    let mut charts = html::write_report(dir, name, results, setup, comparison.as_ref())?;
    let page = dir.join("report.html");
    charts.retain(|p| p != &page);
    Ok(Written {
        summary,
        page,
        charts,
    })
}

/// `summary.md`: whether the run is complete (and, from its `manifest`,
/// why it stopped and when it was resumed), its errors, the tables the
/// terminal showed (in Markdown), a reproduction's `comparison`
/// ([`reproduction::of`] the results), a capacity search, how its servers
/// were primed under the JIT rule ([`priming`]), and where the run's time
/// went (the manifest's `[phases]`, when it has them).
pub fn summary_md(
    name: &str,
    results: &Results,
    manifest: Option<&RunManifest>,
    comparison: Option<&reproduction::Comparison>,
) -> String {
    let mut md = format!(
        "# rpclab snapshot {name}\n\n{}\n",
        if results.complete {
            "Complete run."
        } else {
            "**Partial run**: it stopped early; the cells below were measured."
        }
    );
    if let Some(stopped) = manifest.and_then(|m| m.stopped.as_ref()) {
        md.push_str(&format!("\nStopped at {}: {}\n", stopped.utc, stopped.why));
    }
    if let Some(m) = manifest.filter(|m| !m.resumed_utc.is_empty()) {
        md.push_str(&format!(
            "\nResumed (`--resume`) at {}.\n",
            m.resumed_utc.join(", ")
        ));
    }
    for e in &results.errors {
        md.push_str(&format!("\n- error: {e}\n"));
    }
    md.push('\n');
    md.push_str(&tables::render(results, true, None));
    if let Some(cmp) = comparison {
        md.push('\n');
        md.push_str(&reproduction::render(cmp, true));
    }
    if let Some(search) = &results.capacity {
        md.push('\n');
        md.push_str(&capacity::render(search, true));
    }
    let priming = priming::render(results);
    if !priming.is_empty() {
        md.push('\n');
        md.push_str(&priming);
    }
    if let Some(spent) = manifest.and_then(|m| m.phases.as_ref()) {
        md.push('\n');
        md.push_str(&phases::render(spent));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed fixture run's results and its manifest, which the
    /// summary tests change one field of at a time.
    fn committed_run() -> (Results, rpclab_model::manifest::RunManifest) {
        let text = std::fs::read_to_string(fixture::results_json()).unwrap();
        let results: Results = serde_json::from_str(&text).unwrap();
        let setup =
            snapshot::read_manifest(&fixture::committed("20261129T235428Z-vm-c20a70e")).unwrap();
        (results, setup)
    }

    #[test]
    fn a_stopped_and_resumed_run_says_why_and_when_in_its_summary() {
        let (results, mut setup) = committed_run();
        assert!(!summary_md("fixture", &results, Some(&setup), None).contains("Stopped at"));
        setup.stopped = Some(rpclab_model::manifest::Stopped {
            utc: "2026-12-05T07:00:00Z".into(),
            why: "the Docker engine at unix:///var/run/docker.sock stopped answering".into(),
        });
        setup.resumed_utc = vec!["2026-12-05T07:05:00Z".into()];
        let md = summary_md("fixture", &results, Some(&setup), None);
        assert!(md.contains(
            "Stopped at 2026-12-05T07:00:00Z: the Docker engine at unix:///var/run/docker.sock stopped answering"
        ));
        assert!(md.contains("Resumed (`--resume`) at 2026-12-05T07:05:00Z."));
    }

    #[test]
    fn the_summary_says_where_the_time_went_when_the_manifest_does() {
        let (results, mut setup) = committed_run();
        assert!(
            !summary_md("fixture", &results, Some(&setup), None).contains("Where the time went")
        );
        let mut spent = rpclab_model::phases::Phases::default();
        spent.add(
            rpclab_model::phases::Phase::Build,
            std::time::Duration::from_secs(90),
        );
        setup.phases = Some(spent.closed(std::time::Duration::from_secs(900)));
        let md = summary_md("fixture", &results, Some(&setup), None);
        assert!(md.contains("## Where the time went"), "{md}");
        assert!(
            md.contains("| build (images, client) | 90.0 | 10.0 % |"),
            "{md}"
        );
        assert!(md.contains("| **wall** | 900.0 | 100 % |"), "{md}");
    }
}
