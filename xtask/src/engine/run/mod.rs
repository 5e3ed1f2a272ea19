//! `lab run`: build what is needed, then for each server variant start it,
//! wait until a real call succeeds, run every cell with the client in its own
//! container, and stop it.
//!
//! The snapshot is written after every cell, and every container carries the
//! run's label, so an error, a dying server or Ctrl-C loses nothing measured
//! and leaves no container behind.
//!
//! The run returns what it measured ([`RunOutcome`]); rendering it is the
//! commands' business (they call [`rpclab_report::write_all`]), and so is
//! anything a command adds to the results, such as a reproduction's
//! published figures.
//!
//! Its rooms, each with one responsibility: [`prepare`] (what the command
//! line asks, made into the run's profile, servers, variants and CPU sets;
//! pure), [`record`] (the snapshot and its manifest, changed by typed
//! updates), [`context`] (what the parts share, and the run's course: plan,
//! build, calibrate, then the mode), [`server`] (a server's ports,
//! registry, start, readiness and exit, and the one retry through an
//! engine's outage), [`cell`] (one cell, and its record made of the client's report,
//! pure), and one file per mode: [`blocks`], [`interleaved`] rounds, the
//! capacity [`search`].

mod blocks;
mod cell;
mod context;
mod interleaved;
mod prepare;
mod record;
mod search;
mod server;

pub use prepare::RunOptions;

use crate::basics::cpus;
use crate::basics::host;
use crate::basics::owner::Sharing;
use crate::basics::run_id::RunId;
use crate::definitions::hosts::Roles;
use crate::definitions::lab::{Lab, Profile};
use crate::engine::engines::Engines;
use crate::engine::netns;
use crate::engine::outage::{EngineGone, Outage};
use crate::engine::resume::{Asked, Interrupted, Refused};
use crate::engine::run_engine::RunEngines;
use crate::engine::scope::RunScope;
use crate::store::snapshot::Snapshot;
use anyhow::{anyhow, bail, Result};
use context::RunContext;
use prepare::Prepared;
use record::{Opening, Record};
use rpclab_model::manifest::{HostInfo, ServerRecord};
use rpclab_model::phases::Phase;
use rpclab_model::result::Results;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a run that got as far as creating its snapshot returns, whether it
/// finished, stopped early or finished with errors: the results are those
/// `results.json` holds.
pub struct RunOutcome {
    /// The snapshot folder.
    pub snapshot: PathBuf,
    /// The folder of snapshots it is in (whose index is `README.md`).
    pub results_dir: PathBuf,
    /// `results_dir` is the profile's scratch default, not a folder
    /// the user chose.
    pub scratch: bool,
    /// The profile it ran.
    pub profile: String,
    pub results: Results,
    /// Every selected server variant as `manifest.toml` records it (with
    /// why it was not run, when it was not).
    pub servers: Vec<ServerRecord>,
    pub took: Duration,
    /// Why the run stopped before its end (Ctrl-C, a failed build, ...).
    pub stopped: Option<anyhow::Error>,
    /// Removing the run's containers failed.
    pub cleanup: Option<anyhow::Error>,
}

impl RunOutcome {
    /// The run as a command's result: an error when the clean-up failed,
    /// the run stopped, or it finished with errors.
    pub fn into_result(self) -> Result<()> {
        if let Some(e) = self.cleanup {
            return Err(e.context("cleaning up the run's containers failed"));
        }
        match self.stopped {
            Some(e) => Err(e.context(format!(
                "the run stopped; the cells measured so far are in {}",
                self.snapshot.display()
            ))),
            None if !self.results.complete => bail!(
                "the run finished with errors:\n- {}\nthe cells measured are in {}",
                self.results
                    .errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n- "),
                self.snapshot.display()
            ),
            None => Ok(()),
        }
    }
}

/// Loads the lab definition `opts.lab` and runs it.
pub async fn run(root: &Path, opts: RunOptions) -> Result<RunOutcome> {
    let lab = Lab::load(&opts.lab)?;
    run_lab(root, lab, opts).await
}

/// Runs an already loaded lab definition. An error means nothing was
/// measured and no snapshot (or only its manifest) was written; a run that
/// stopped later returns its outcome with `stopped` set.
pub async fn run_lab(root: &Path, lab: Lab, opts: RunOptions) -> Result<RunOutcome> {
    // The wall time of `[phases]`: this invocation's, from its start.
    let invoked = Instant::now();
    let outside = prepare::outside(&lab, &opts);
    let manifests = crate::definitions::manifest::load_with(root, &outside)?;
    // Everything the command line asks is checked before anything starts:
    // no snapshot, no build.
    let prepared = prepare::prepare(root, lab, &opts, &manifests, &cpus::online())?;
    // What a resume must match too.
    let interrupted = opts.resume.as_deref().map(Interrupted::open).transpose()?;
    let def = &prepared.def;
    let roles = Roles::resolve(&def.hosts.clone().unwrap_or_default(), &opts.hosts)?;
    // A service the lab did not start is on the host's network.
    let network_choice = if prepared.calls_a_target() {
        netns::NetworkChoice::Host
    } else {
        netns::check(opts.network, !roles.is_single())?
    };
    let engines = Engines::connect(&roles).await?;
    let host_info = host::host_info(&engines.server.version);
    if let Some(i) = &interrupted {
        i.check(&asked(&prepared, &opts, &host_info))?;
    }
    if !roles.is_single() {
        say_engines(&engines);
    }
    let now = time::OffsetDateTime::now_utc();
    let stamp = stamp(now);
    let mut scope = RunScope::open(run_id(&stamp, &prepared.profile));
    let run_engines = run_engines(&opts, &engines, scope.id(), &prepared.split.server).await?;
    claim(&mut scope, &engines, &run_engines).await?;
    let place = Place::of(&opts, &prepared.profile, interrupted.as_ref());
    let started_utc = record::utc(now);
    let git = host::git_state(root);
    let (snapshot, opening) = match &interrupted {
        Some(i) => resumed(i, &prepared.profile, started_utc),
        None => {
            let snapshot = Snapshot::create(
                &place.results_dir,
                &stamp,
                &host::hostname(),
                &git.0,
                prepared.profile.cv_threshold,
            )?;
            (snapshot, (started_utc, scope.id().to_string(), Vec::new()))
        }
    };
    eprintln!("snapshot: {}", snapshot.dir.display());
    let (started_utc, run_id, resumed_utc) = opening;
    let opening = Opening {
        run_id,
        started_utc,
        resumed_utc,
        host: host_info,
        git,
        resuming: interrupted.as_ref(),
        network: exposure(&run_engines, network_choice, &roles),
    };
    let manifest = opening_manifest(&prepared, &opts, opening, &run_engines)?;
    let mut record = Record::open(snapshot, manifest, interrupted.is_some())?;

    let ctx = RunContext {
        root,
        opts: &opts,
        prepared: &prepared,
        engine: &run_engines.server,
        run_engines: &run_engines,
        engines: &engines,
        manifests: &manifests,
        run_id: scope.id(),
        rounds_seed: record.manifest().rounds_seed.unwrap_or(0),
        resuming: interrupted.as_ref(),
        network_choice,
        outage: Outage::new(&engines, scope.id(), opts.engine_wait),
        bar: std::sync::OnceLock::new(),
        client_clock_offset_s: std::sync::OnceLock::new(),
        network: std::sync::OnceLock::new(),
        registry_address: std::sync::Mutex::default(),
        phases: std::sync::Mutex::default(),
    };
    let run_started = Instant::now();
    let outcome = tokio::select! {
        r = ctx.run_all(&mut record) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted (Ctrl-C)")),
    };
    // Whatever happened, no container of this run survives it, on any engine.
    let removed = ctx.timed(Phase::Teardown, scope.close()).await;
    if let Some(bar) = ctx.bar.get() {
        bar.finish();
    }
    let removed = forgiven(removed, &outcome);
    let outcome = match outcome {
        // A refused resume leaves the snapshot as it was.
        Err(e) if e.is::<Refused>() => {
            removed?;
            return Err(e);
        }
        other => other,
    };
    record_pods(&run_engines, &mut record)?;
    let spent = ctx.phases_of(invoked.elapsed());
    let (snapshot, manifest) = record.close(&outcome, &opts.thresholds, spent)?;
    Ok(RunOutcome {
        snapshot: snapshot.dir,
        results_dir: place.results_dir,
        scratch: place.scratch,
        profile: prepared.def.profile,
        results: snapshot.results,
        servers: manifest.servers,
        took: run_started.elapsed(),
        stopped: outcome.err(),
        cleanup: removed.err(),
    })
}

/// What `[cpus]` says of its sets on a cluster.
const ON_A_CLUSTER: &str = "; on Kubernetes a set's size is what its Pod asks: the server's whole CPUs (Guaranteed, exclusive), which the kubelet's static policy picks, the others the shared pool; [[pods]] has each Pod's cpuset as read inside it";

/// The manifest a run opens with; on a cluster, `[cpus]` says what its
/// sets are there.
fn opening_manifest(
    prepared: &prepare::Prepared<'_>,
    opts: &RunOptions,
    opening: Opening<'_>,
    run_engines: &RunEngines,
) -> Result<rpclab_model::manifest::RunManifest> {
    let mut manifest = record::opening(prepared, opts, opening)?;
    if run_engines.server.docker().is_none() {
        manifest.cpus.note.push_str(ON_A_CLUSTER);
    }
    Ok(manifest)
}

/// What a run on a cluster's containers are exposed to, in the manifest's
/// words.
const POD_NETWORK: &str = "pods: every server, registry and client is a Pod with an address of its own on the cluster's Pod network; servers listen on every interface of their Pod, and any Pod of the cluster can connect to them while the run lasts";

/// What the run's containers are exposed to, in the manifest's words.
fn exposure(run_engines: &RunEngines, choice: netns::NetworkChoice, roles: &Roles) -> String {
    match run_engines.server.own_network() {
        Some(_) => POD_NETWORK.into(),
        None => netns::exposure(choice, !roles.all_local(), &roles.bind),
    }
}

/// Makes the run's engines its own: containers of a killed run are
/// removed; a live run is refused. On a cluster, Docker only builds: its
/// containers are not the run's.
async fn claim(scope: &mut RunScope, engines: &Engines, run_engines: &RunEngines) -> Result<()> {
    if run_engines.server.docker().is_none() {
        return scope.claim_run_engine(&run_engines.server).await;
    }
    for (engine, _) in engines.distinct() {
        scope.claim(engine).await?;
    }
    Ok(())
}

/// The Pods a run on a cluster ran, into its manifest.
fn record_pods(run_engines: &RunEngines, record: &mut Record) -> Result<()> {
    #[cfg(feature = "kubernetes")]
    if let Some(cluster) = run_engines.cluster() {
        record.pods(cluster.records())?;
    }
    let _ = (run_engines, record);
    Ok(())
}

/// What this run would measure with, as a resume checks it.
fn asked<'a>(prepared: &'a Prepared, opts: &RunOptions, host: &'a HostInfo) -> Asked<'a> {
    Asked {
        def: &prepared.def,
        profile: &prepared.def.profile,
        only: &prepared.only,
        host,
        rounds_seed: opts.rounds_seed,
        on_kubernetes: opts.kubernetes,
    }
}

/// Each role's engine for the run's containers: the Docker engines of
/// `engines`, or (`--engine kubernetes`) the cluster of the kubeconfig,
/// checked for a run whose server takes `server_cpus`' count of whole
/// CPUs (one line for what is missing, before anything starts).
async fn run_engines(
    opts: &RunOptions,
    engines: &Engines,
    run_id: &RunId,
    server_cpus: &str,
) -> Result<RunEngines> {
    if !opts.kubernetes {
        return Ok(RunEngines::docker(engines));
    }
    if !engines.roles.is_single() {
        bail!("--engine kubernetes runs every role on the cluster: leave out [hosts] and the host flags");
    }
    #[cfg(feature = "kubernetes")]
    {
        // The image registry answers, before the cluster is asked.
        if let Some(registry) = &opts.image_registry {
            crate::engine::kubernetes::push::ImageRegistry::parse(registry)?
                .check()
                .await?;
        }
        let exclusive = cpus::CpuSet::parse(server_cpus).map_or(1, |s| s.len() as u32);
        let (mut cluster, node) =
            crate::engine::kubernetes::preflight::connect_checked(run_id, exclusive).await?;
        // The server's calibration measures its set as the server runs on
        // it: exclusive.
        cluster.exclusive_sets.insert(server_cpus.to_owned());
        Ok(RunEngines::kubernetes(cluster, node.name))
    }
    #[cfg(not(feature = "kubernetes"))]
    {
        let _ = (run_id, server_cpus, &opts.image_registry);
        bail!(
            "--engine kubernetes needs xtask's kubernetes feature: `cargo xtask-kube lab run ...`"
        )
    }
}

/// A run's start as its id and its snapshot's name begin: `20261206T213930Z`.
fn stamp(now: time::OffsetDateTime) -> String {
    now.format(time::macros::format_description!(
        "[year][month][day]T[hour][minute][second]Z"
    ))
    .expect("static format")
}

/// Which engine runs which roles, for a run across several.
fn say_engines(engines: &Engines) {
    for (engine, roles) in engines.distinct() {
        eprintln!(
            "engine {} (data root {}): {}",
            engine.endpoint,
            engine.data_root,
            crate::basics::role::joined(&roles)
        );
    }
}

/// Where the run's snapshot goes.
struct Place {
    /// The folder of snapshots (a resumed snapshot's own).
    results_dir: PathBuf,
    /// The profile's scratch default, not a folder the user chose.
    scratch: bool,
}

impl Place {
    fn of(opts: &RunOptions, profile: &Profile, interrupted: Option<&Interrupted>) -> Place {
        let results_dir = match interrupted {
            Some(i) => i.dir.parent().map(Path::to_owned).unwrap_or_default(),
            None => opts
                .results_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from(profile.default_results_dir())),
        };
        let scratch = opts.results_dir.is_none()
            && profile.scratch
            && results_dir == Path::new(profile.default_results_dir());
        Place {
            results_dir,
            scratch,
        }
    }
}

/// The run's id (its start and this process), and whom it shares its
/// engine with: a check whose numbers are not read, other checks; a run
/// whose numbers are read, no other run.
fn run_id(stamp: &str, profile: &Profile) -> RunId {
    let sharing = if profile.scratch {
        Sharing::WithChecks
    } else {
        Sharing::Alone
    };
    RunId::new(format!("{stamp}-{}", std::process::id()), sharing)
}

/// The interrupted snapshot `i` reopened, with the first run's start and
/// id, and every resume's start with this one's (`started_utc`).
fn resumed(
    i: &Interrupted,
    profile: &Profile,
    started_utc: String,
) -> (Snapshot, (String, String, Vec<String>)) {
    eprintln!(
        "resuming {}: {} cells measured, the rest of the plan follows",
        i.dir.display(),
        i.results.cells.len()
    );
    let snapshot = Snapshot::reopen(i.dir.clone(), i.results.clone(), profile.cv_threshold);
    let (first_started, run_id) = i.started();
    let mut resumed_utc = i.resumed_utc();
    resumed_utc.push(started_utc);
    (snapshot, (first_started, run_id, resumed_utc))
}

/// The scope's clean-up as the run's outcome sees it: an engine that is
/// gone cannot remove anything, and the next run that claims it does
/// (its containers' orchestrator is then gone).
fn forgiven(removed: Result<()>, outcome: &Result<()>) -> Result<()> {
    let gone = outcome
        .as_ref()
        .err()
        .and_then(|e| e.downcast_ref::<EngineGone>());
    match (removed, gone) {
        (Err(_), Some(gone)) => {
            eprintln!(
                "the containers this run left on {} are removed by the next run on it",
                gone.endpoint
            );
            Ok(())
        }
        (removed, _) => removed,
    }
}
