//! `lab reproduce <seed>`: run a seed's lab definition (its stand-in
//! variants only), then print the comparison of every published figure and
//! claim with the measurement ([`rpclab_report::reproduction`]).

use crate::cli::outcome::Resumable;
use crate::definitions::seeds::Seed;
use crate::engine::run::{self, RunOptions};
use anyhow::{bail, Result};
use rpclab_model::plan::RecordedPlan;
use rpclab_model::result::{Reproduction, Results, SeedSystem};
use rpclab_model::run_error::RunError;
use rpclab_report::reproduction::{compare, render};
use std::path::{Path, PathBuf};

/// What `lab reproduce` was asked for.
pub struct ReproduceOptions {
    pub profile: Option<String>,
    pub cpus: crate::basics::cpus::CpuArgs,
    pub ca_certificates: Option<PathBuf>,
    /// `None`: the profile's default ([`crate::definitions::lab::Profile::default_results_dir`]).
    pub results_dir: Option<PathBuf>,
    pub verbose: bool,
    pub port_wait_s: u64,
    /// `--network` ([`crate::engine::run::RunOptions::network`]).
    pub network: Option<crate::engine::netns::NetworkChoice>,
    /// Which engine runs each role.
    pub hosts: crate::definitions::hosts::HostArgs,
    /// Seed of the rounds' order; `None`: from the clock (recorded).
    pub rounds_seed: Option<u64>,
    /// An interrupted snapshot of the (one) seed to continue.
    pub resume: Option<PathBuf>,
    /// How long to wait for an engine that stops answering.
    pub engine_wait: std::time::Duration,
    /// The command line (without the program), which a run's `--resume`
    /// line repeats for its seed.
    pub command: Vec<String>,
}

/// Runs one seed (or all) and prints its comparison; the snapshot also
/// gets it in `summary.md`, the charts and `report.html`.
pub async fn reproduce(root: &Path, ids: Vec<String>, opts: ReproduceOptions) -> Result<()> {
    if opts.resume.is_some() && ids.len() != 1 {
        bail!(
            "--resume continues one snapshot, so it takes one seed (not {} of them)",
            ids.len()
        );
    }
    let mut failures = Vec::new();
    for id in &ids {
        if let Err(e) = reproduce_one(root, id, &ids, &opts).await {
            // The next seeds need the engine that did not come back.
            if e.is::<Resumable>() {
                return Err(e);
            }
            eprintln!("error: seed {id}: {e:#}");
            failures.push(format!("{id}: {e:#}"));
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} seed reproduction(s) did not finish cleanly:\n- {}",
            failures.len(),
            ids.len(),
            failures.join("\n- ")
        );
    }
    Ok(())
}

/// `ids` are every seed of the command, `id` among them.
async fn reproduce_one(
    root: &Path,
    id: &str,
    ids: &[String],
    opts: &ReproduceOptions,
) -> Result<()> {
    let seed = Seed::load(root, id)?;
    let manifests = crate::definitions::manifest::load_all(root)?;
    let systems = seed.resolve(&manifests);
    let reproduction = seed.reproduction(systems.clone());
    let variants = Seed::variants_run(&systems);
    eprintln!("seed {id}: {}", seed.def.title);
    let profile = opts.profile.as_deref().unwrap_or(&seed.def.profile);
    let plan = seed.recorded_plan()?;
    announce(&seed, id, profile, &plan, &manifests, &systems);
    if variants.is_empty() {
        nothing_runs(id, &reproduction);
        return Ok(());
    }
    let mut run = run::run_lab(
        root,
        seed.lab.clone(),
        run_options(&seed, opts, variants, &plan),
    )
    .await?;
    // The published figures travel in results.json; a stand-in the profile
    // skipped says why in the report.
    let mut reproduction = reproduction;
    for s in &mut reproduction.systems {
        let record = run.servers.iter().find(|rec| {
            Some(&rec.name) == s.server.as_ref() && Some(&rec.variant) == s.variant.as_ref()
        });
        if let Some(why) = record.and_then(|rec| rec.not_run.clone()) {
            s.not_run = Some(why);
        }
    }
    // Decided once, here, under the plan fixed before the run, and stored:
    // every rendering prints these verdicts.
    reproduction.under_plan = profile == plan.plan.profile;
    reproduction.plan = Some(plan);
    rpclab_report::verdicts::fill(&run.results, &mut reproduction);
    reproduction.verdicts_by = Some(crate::basics::host::decider(root));
    let cmp = compare(&run.results, &reproduction);
    run.results.reproduction = Some(reproduction);
    crate::store::snapshot::write_results(&run.snapshot, &run.results)?;
    crate::cli::outcome::publish(&run)?;
    println!("{}", render(&cmp, false));
    eprintln!(
        "report: {} (charts in {})",
        run.snapshot.join("report.html").display(),
        run.snapshot.join("charts").display()
    );
    if let Some(stopped) =
        crate::cli::outcome::resumable(&run, &seed_command(&opts.command, ids, id))
    {
        return Err(stopped);
    }
    run.into_result()
}

/// What the seed will run and how it will be judged, before the run.
fn announce(
    seed: &Seed,
    id: &str,
    profile: &str,
    plan: &RecordedPlan,
    manifests: &[crate::definitions::manifest::Manifest],
    systems: &[SeedSystem],
) {
    eprintln!(
        "  plan {} ({}, α {}, {} JVM starts × {} rounds under profile {}){}",
        plan.label(id),
        plan.plan.rule,
        plan.plan.alpha,
        plan.plan.starts,
        plan.plan.rounds,
        plan.plan.profile,
        if profile == plan.plan.profile {
            String::new()
        } else {
            format!("; this run's profile is {profile}, so its verdicts are exploratory, not the plan's")
        }
    );
    if let Ok(b) = seed.budget(profile, manifests) {
        eprintln!(
            "  profile {profile}: {} variants, {} cells, at most {:.0} min (compose/seeds/README.md, \"Time budget\")",
            b.variants,
            b.cells,
            b.seconds / 60.0
        );
    }
    if let Ok(accounted) = seed.accounting(profile, manifests) {
        let twins = accounted.iter().filter(|(_, v)| v.is_ok()).count();
        eprintln!(
            "  {} published figures: {twins} with a measured twin under {profile}",
            accounted.len()
        );
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for why in accounted.iter().filter_map(|(_, v)| v.as_ref().err()) {
            match reasons.iter_mut().find(|(w, _)| w == why) {
                Some((_, n)) => *n += 1,
                None => reasons.push((why.clone(), 1)),
            }
        }
        for (why, n) in reasons {
            eprintln!("    {n} {why}");
        }
    }
    for d in &seed.def.deviations {
        eprintln!("  deviation: {d}");
    }
    for s in systems {
        match (&s.server, &s.not_run) {
            (Some(server), _) => eprintln!(
                "  {:<24} → {server} {}",
                s.key,
                s.variant.as_deref().unwrap_or("")
            ),
            (None, Some(why)) => eprintln!("  {:<24} not run: {why}", s.key),
            _ => {}
        }
    }
}

/// Nothing of the seed can run yet: what was published, and why not.
fn nothing_runs(id: &str, reproduction: &Reproduction) {
    let empty = Results {
        errors: vec![RunError::of_run(
            "no system of this seed can run in the lab yet".into(),
        )],
        reproduction: Some(reproduction.clone()),
        ..Results::empty()
    };
    println!("{}", render(&compare(&empty, reproduction), false));
    eprintln!("seed {id}: no system can run yet, so no snapshot was written");
}

/// The lab run of the seed's variants, under its plan.
fn run_options(
    seed: &Seed,
    opts: &ReproduceOptions,
    variants: Vec<(String, String)>,
    plan: &RecordedPlan,
) -> RunOptions {
    let mut only: Vec<String> = Vec::new();
    for (server, _) in &variants {
        if !only.contains(server) {
            only.push(server.clone());
        }
    }
    RunOptions {
        lab: seed.path.clone(),
        only,
        servers_dirs: Vec::new(),
        profile: opts.profile.clone(),
        cpus: opts.cpus.clone(),
        ca_certificates: opts.ca_certificates.clone(),
        results_dir: opts.results_dir.clone(),
        verbose: opts.verbose,
        variants,
        port_wait_s: opts.port_wait_s,
        network: opts.network,
        hosts: opts.hosts.clone(),
        rounds_seed: opts.rounds_seed,
        plan: Some(plan.clone()),
        resume: opts.resume.clone(),
        variant_names: Vec::new(),
        overrides: Default::default(),
        thresholds: Vec::new(),
        engine_wait: opts.engine_wait,
        capacity: None,
        kubernetes: false,
        image_registry: None,
    }
}

/// `command` (`lab reproduce` of the seeds `ids`, or `--all`) for the seed
/// `id` alone: what continues that seed's snapshot.
fn seed_command(command: &[String], ids: &[String], id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for arg in command {
        if arg == "--all" || ids.contains(arg) {
            continue;
        }
        out.push(arg.clone());
        if arg == "reproduce" && !out.iter().any(|a| a == id) {
            out.push(id.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::words;

    #[test]
    fn a_seed_s_command_names_that_seed_alone() {
        let ids = words("a b");
        assert_eq!(
            seed_command(&words("lab reproduce a b --profile smoke"), &ids, "b"),
            words("lab reproduce b --profile smoke")
        );
        assert_eq!(
            seed_command(&words("lab reproduce --all --profile smoke"), &ids, "a"),
            words("lab reproduce a --profile smoke")
        );
    }
}
