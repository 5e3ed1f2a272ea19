//! `lab capacity`: the highest open-loop rate at which a latency
//! percentile stays under a bound (the SLO) with no failed call and every
//! reply verified, on one server variant.
//!
//! The command reads its flags (the SLO before anything else, so that a
//! missing or unreadable one costs nothing), then runs the lab through
//! `lab run`'s own path ([`crate::engine::run::run_lab`]: build, calibrate,
//! start the server pinned, wait for a verified call, prime) with a search
//! instead of the plan's cells ([`crate::engine::capacity`]). It writes a
//! snapshot like any run ([`outcome::publish`]: `results.json` with the
//! steps' cells and the search, `report.html`, `charts/capacity.svg`),
//! then ends with the report's line: the rate found, the last pass and
//! the first fail. When no rate holds the SLO it exits with code 99
//! ([`NoRateHolds`]).

use crate::basics::cpus;
use crate::cli::outcome;
use crate::cli::target;
use crate::definitions::hosts;
use crate::definitions::lab::Lab;
use crate::definitions::overrides::{self, Overrides};
use crate::engine::netns::NetworkChoice;
use crate::engine::run;
use anyhow::{bail, Context, Result};
use rpclab_model::capacity::{parse_percentile, Asked, Outcome, Percentile};
use rpclab_model::threshold::parse_slo;
use std::path::{Path, PathBuf};

/// `lab capacity`'s flags.
#[derive(clap::Args)]
pub struct CapacityArgs {
    /// The server, by folder name or framework (one server: `thrift-java`);
    /// none with `--target`, a service the lab did not start.
    #[arg(required_unless_present = "target", conflicts_with = "target")]
    pub server: Option<String>,
    #[command(flatten)]
    pub target: target::TargetArgs,
    /// The latency bound the percentile must stay under, with a unit
    /// (`5ms`, `800us`): the thresholds' grammar.
    #[arg(long)]
    pub slo: Option<String>,
    /// The percentile judged, any from 0 to 100 as the thresholds write
    /// it: `95`, `99.9`, `p99`, `p(97.5)`.
    #[arg(long, default_value = "99")]
    pub percentile: String,
    /// Stop bisecting when the failing rate is within this share of the
    /// passing one: `5%` or `0.05`.
    #[arg(long, default_value = "5%", value_parser = parse_share)]
    pub tolerance: f64,
    /// The most steps (open-loop windows) measured; the closed-loop hint
    /// is not one.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..))]
    pub budget: u32,
    /// The first rate, calls/s [default: the closed-loop throughput of the
    /// steps' connections, measured first].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub start_rate: Option<u32>,
    /// The lowest rate tried, calls/s: when it fails too, no rate holds
    /// the SLO.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub min_rate: u32,
    /// The scenario whose operation the steps call (an open-loop one
    /// lends its arrivals and senders too) [default: the lab's first].
    #[arg(long)]
    pub scenario: Option<String>,
    /// The variant, `server/variant` or its name [default: the server's
    /// first that can run the scenario].
    #[arg(long)]
    pub variant: Option<String>,
    /// Each step's window (`10s`, `500ms`), instead of the profile's
    /// `measure_s`.
    #[arg(long, value_parser = overrides::parse_duration)]
    pub duration: Option<f64>,
    /// Lab definition (TOML).
    #[arg(long, default_value = "compose/lab.toml")]
    pub lab: PathBuf,
    /// A server folder from outside the repository, or a folder of
    /// them, relative to the current folder (as `lab run`'s).
    #[arg(long = "servers-dir", value_name = "PATH")]
    pub servers_dir: Vec<PathBuf>,
    /// Profile from the lab definition (its warm-up, priming and windows).
    #[arg(long)]
    pub profile: Option<String>,
    #[command(flatten)]
    pub cpus: cpus::CpuArgs,
    #[command(flatten)]
    pub hosts: hosts::HostArgs,
    /// Folder of extra CA certificates (*.crt) to trust in image builds.
    #[arg(long)]
    pub ca_certs: Option<PathBuf>,
    /// Where the snapshot goes [default: as `lab run`'s, by the profile].
    #[arg(long)]
    pub results_dir: Option<PathBuf>,
    /// Show build output and every line of each client's log.
    #[arg(long, short)]
    pub verbose: bool,
    /// Seconds to wait for the server's ports to be freed by another run.
    #[arg(long, default_value_t = 0)]
    pub wait_for_ports: u64,
    /// Whose network the containers use: `private` (default on one host:
    /// a namespace of the run's own) or `host` (the host's 127.0.0.1),
    /// as for `lab run`.
    #[arg(long, value_name = "private|host")]
    pub network: Option<NetworkChoice>,
}

/// `--tolerance`: `5%` or a share, `0.05`.
fn parse_share(text: &str) -> Result<f64, String> {
    let share = match text.trim().strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.trim().parse::<f64>(),
    };
    match share {
        Ok(s) if (0.0..1.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a tolerance: give a share below 1, as 5% or 0.05"
        )),
    }
}

/// The error of a search in which no rate held the SLO: the line was
/// printed; the process exits with code 99, a threshold breach's.
#[derive(Debug, thiserror::Error)]
#[error("no rate holds the SLO {0}; exit code {code}", code = rpclab_model::threshold::BREACH_EXIT_CODE)]
pub struct NoRateHolds(pub String);

/// `lab capacity`: the search, the snapshot, the final line.
pub async fn capacity(root: &Path, invoked_from: &Path, args: CapacityArgs) -> Result<()> {
    // The SLO first: a missing or unreadable one costs nothing.
    let slo_us = parse_slo(args.slo.as_deref())?;
    let percentile: Percentile = parse_percentile(&args.percentile)?;
    let mut servers_dirs: Vec<PathBuf> = args
        .servers_dir
        .iter()
        .map(|d| invoked_from.join(d))
        .collect();
    let server = match &args.server {
        Some(server) => server.clone(),
        None => {
            let (folder, name) = target::write_folder(root, invoked_from, &args.target)?;
            servers_dirs.push(folder);
            name
        }
    };
    let lab = Lab::load(&args.lab)?;
    let scenario = match args.scenario {
        Some(s) => s,
        None => lab
            .def
            .scenarios
            .first()
            .cloned()
            .with_context(|| format!("{} names no scenario", args.lab.display()))?,
    };
    // The lab as the search runs it: its one scenario (any of the lab's
    // scenario files), which manifest.toml records.
    let mut def = lab.def;
    def.scenarios = vec![scenario.clone()];
    let lab = Lab::from_def(&args.lab, def)?;
    if args.start_rate.is_some_and(|r| r < args.min_rate) {
        bail!(
            "--start-rate {} is below --min-rate {}: start at or above the lowest rate",
            args.start_rate.unwrap_or_default(),
            args.min_rate
        );
    }
    let asked = Asked {
        scenario,
        percentile,
        slo_us,
        slo: args.slo.unwrap_or_default().trim().to_owned(),
        tolerance: args.tolerance,
        budget: args.budget,
        start_rate: args.start_rate,
        min_rate: args.min_rate,
    };
    let run = run::run_lab(
        root,
        lab,
        run::RunOptions {
            lab: args.lab,
            only: vec![server],
            servers_dirs,
            profile: args.profile,
            cpus: args.cpus,
            ca_certificates: args.ca_certs,
            results_dir: args.results_dir,
            verbose: args.verbose,
            variants: Vec::new(),
            port_wait_s: args.wait_for_ports,
            network: args.network,
            hosts: args.hosts,
            rounds_seed: None,
            plan: None,
            resume: None,
            variant_names: args.variant.into_iter().collect(),
            overrides: Overrides {
                measure_s: args.duration,
                ..Overrides::default()
            },
            thresholds: Vec::new(),
            // A search is minutes long; an engine that goes away stops it
            // (no resume for a search: its steps depend on each other).
            engine_wait: crate::engine::outage::DEFAULT_WAIT,
            capacity: Some(asked.clone()),
            kubernetes: false,
            image_registry: None,
        },
    )
    .await?;
    outcome::publish(&run)?;
    let search = run.results.capacity.clone();
    run.into_result()?;
    let Some(search) = search else {
        bail!("the search recorded no step");
    };
    println!("{}", rpclab_report::capacity::conclusion(&search));
    match search.outcome {
        Some(Outcome::NoRate) => Err(NoRateHolds(asked.slo_line()).into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tolerance_reads_as_a_percentage_or_a_share() {
        assert_eq!(parse_share("5%"), Ok(0.05));
        assert_eq!(parse_share("0.1"), Ok(0.1));
        assert!(parse_share("100%").is_err());
        assert!(parse_share("-1%").is_err());
        assert!(parse_share("five").is_err());
    }
}
