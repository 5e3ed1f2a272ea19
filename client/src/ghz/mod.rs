//! `rpclab-client ghz …`: a ghz command line, run as it is.
//!
//! A user who load-tests a gRPC service with ghz keeps the command line:
//! [`args`] takes every flag ghz has, [`plan`] says what it means as one
//! cell of this client (or why a flag cannot mean the same, in one line,
//! before any load), and [`output`] writes the report in ghz's formats.
//! The calls are the client's own: every reply decoded (or compared with
//! `--expect`'s value through the client's own flags), the window after a
//! warm-up, the latency of a rated call from when it was due.

pub mod args;
pub mod output;
pub mod plan;

use crate::runner;
use anyhow::{bail, Context, Result};
use plan::{Format, Plan};
use std::io::Read;

/// Translates `args` (reading `-d @` from standard input) into a plan.
pub fn plan_of(args: &args::GhzArgs) -> Result<Plan> {
    plan::plan(args, || {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    })
    .map_err(|why| anyhow::anyhow!(why))
}

/// Runs `plan`'s cell and writes its report as `-O` and `-o` say. A run
/// in which no call succeeded is an error, as in the client's own
/// command line, after its report is written.
pub async fn run(plan: &Plan) -> Result<()> {
    let report = runner::run_cell(&plan.spec).await?.report;
    let text = match plan.format {
        Format::Summary => output::summary(&report),
        Format::Json => serde_json::to_string(&output::json(&report, &plan.labels))? + "\n",
        Format::Pretty => {
            serde_json::to_string_pretty(&output::json(&report, &plan.labels))? + "\n"
        }
        Format::InfluxSummary => output::influx_summary(&report, &plan.labels),
        Format::Prometheus => output::prometheus(&report, &plan.labels),
    };
    match &plan.output {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write -o {}", path.display()))?,
        None => print!("{text}"),
    }
    if report.calls_ok == 0 {
        bail!("no call succeeded: {:?}", report.failures.examples);
    }
    Ok(())
}
