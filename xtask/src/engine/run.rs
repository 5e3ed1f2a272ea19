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

use crate::basics::cpus;
use crate::basics::host;
use crate::basics::role::Role;
use crate::definitions::hosts::{HostArgs, Roles};
use crate::definitions::lab::{Lab, LabDef, Profile, Scenario};
use crate::definitions::manifest::{Manifest, Registry, Variant, FILES_IN_CONTAINERS};
use crate::definitions::overrides::{self, Overrides};
use crate::engine::capacity::{self, Next};
use crate::engine::client_container::{self, ClientCell, ClientRun};
use crate::engine::docker::Network;
use crate::engine::docker::{ContainerSpec, Engine};
use crate::engine::engines::{self, Engines};
use crate::engine::netns::{self, NetworkChoice};
use crate::engine::outage::{AfterFailure, EngineGone, Outage};
use crate::engine::plan::{self, Filters, Plan, Planned};
use crate::engine::readiness;
use crate::engine::registry;
use crate::engine::resume::{Asked, Interrupted, Refused};
use crate::engine::scope::RunScope;
use crate::store::snapshot::Snapshot;
use anyhow::{anyhow, bail, Context, Result};
use rpclab_model::capacity::{Asked as CapacityAsked, CapacitySearch, Hint};
use rpclab_model::limit;
use rpclab_model::manifest::{CpuPinning, HostRecord, RunManifest, ServerRecord, Stopped};
use rpclab_model::result::{Cell, Priming, Results};
use rpclab_model::spec::CellSpec;
use rpclab_model::threshold::{Threshold, ThresholdCheck};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the user asked for on the command line.
pub struct RunOptions {
    pub lab: PathBuf,
    pub only: Vec<String>,
    /// Server folders from outside the repository (`--servers-dir`), over
    /// the lab's `servers_dirs`.
    pub servers_dirs: Vec<PathBuf>,
    pub profile: Option<String>,
    pub cpus: crate::basics::cpus::CpuArgs,
    pub ca_certificates: Option<PathBuf>,
    /// Where snapshots go; `None`: the profile's default
    /// ([`crate::definitions::lab::Profile::default_results_dir`]).
    pub results_dir: Option<PathBuf>,
    pub verbose: bool,
    /// Run only these (server, variant) pairs; empty: every variant of the
    /// selected servers. `lab reproduce` runs only a seed's stand-ins.
    pub variants: Vec<(String, String)>,
    /// Seconds to wait for a server's ports (and ZooKeeper's) to become free
    /// before giving up on it; 0: fail at once. For hosts where other lab
    /// runs share 127.0.0.1.
    pub port_wait_s: u64,
    /// `--network`; `None`: private on one host, the host's across hosts.
    pub network: Option<NetworkChoice>,
    /// Which engine runs each role (over the lab's `[hosts]`).
    pub hosts: HostArgs,
    /// Seed of an interleaved run's order; `None`: drawn from the clock
    /// (and recorded either way).
    pub rounds_seed: Option<u64>,
    /// The seed's analysis plan, recorded in the manifest (`lab reproduce`).
    pub plan: Option<rpclab_model::plan::RecordedPlan>,
    /// An interrupted snapshot to continue instead of starting a new one
    /// ([`crate::engine::resume`]).
    pub resume: Option<PathBuf>,
    /// `--variant` names (`server/variant` or a variant's name), resolved
    /// among the selected servers and added to `variants`.
    pub variant_names: Vec<String>,
    /// The command line's changes to the profile (`--duration`, ...).
    pub overrides: Overrides,
    /// Every cell is judged by these; the breaches go into `results.json`.
    pub thresholds: Vec<Threshold>,
    /// How long to wait for an engine that stopped answering before the
    /// run stops, resumable ([`crate::engine::outage`]).
    pub engine_wait: Duration,
    /// `lab capacity`: instead of the plan's cells, search the highest
    /// open-loop rate that holds this SLO on the one selected variant
    /// (with the lab's only scenario; [`crate::engine::capacity`]).
    pub capacity: Option<CapacityAsked>,
}

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
                self.results.errors.join("\n- "),
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
pub async fn run_lab(root: &Path, mut lab: Lab, opts: RunOptions) -> Result<RunOutcome> {
    let profile_name = opts
        .profile
        .clone()
        .unwrap_or_else(|| lab.def.profile.clone());
    if let Some(p) = lab.def.profiles.get_mut(&profile_name) {
        opts.overrides.apply(p);
    }
    let profile = lab.profile(&profile_name)?.clone();
    let mut outside = lab.servers_dirs();
    outside.extend(opts.servers_dirs.iter().cloned());
    let manifests = crate::definitions::manifest::load_with(root, &outside)?;
    let only = if opts.only.is_empty() {
        lab.def.servers.clone()
    } else {
        opts.only.clone()
    };
    let selected = crate::definitions::manifest::select(&manifests, &only)?;
    // A server of a generic protocol runs each scenario's load calling
    // its own method, as scenarios of their own (plan::with_calls).
    let scenarios = plan::with_calls(&lab.scenarios, &selected);
    let mut variants = opts.variants.clone();
    for pair in overrides::variant_pairs(&opts.variant_names, &selected)? {
        if !variants.contains(&pair) {
            variants.push(pair);
        }
    }
    if let Some(asked) = &opts.capacity {
        let base = lab
            .scenarios
            .iter()
            .find(|s| s.name == asked.scenario)
            .with_context(|| format!("the lab has no scenario `{}`", asked.scenario))?;
        capacity::Loads::of(base, &profile)?;
        variants = vec![capacity::variant(&selected, &variants, base)?];
    }
    // CPU sets are checked before anything starts: no snapshot, no build.
    let split = split_cpus(&lab.def.cpus, &opts.cpus)?;
    let mut def = as_run(
        &lab.def,
        &profile_name,
        &split,
        opts.ca_certificates.as_ref(),
    );
    // As the repository's root sees them, where they are inside.
    def.servers_dirs = outside
        .iter()
        .map(|d| d.strip_prefix(root).map_or(d.clone(), Path::to_owned))
        .collect();

    // What a resume must match is checked before anything starts.
    let interrupted = opts.resume.as_deref().map(Interrupted::open).transpose()?;
    let roles = Roles::resolve(&def.hosts.clone().unwrap_or_default(), &opts.hosts)?;
    let network_choice = netns::check(opts.network, !roles.is_single())?;
    let engines = Engines::connect(&roles).await?;
    let host_info = host::host_info(&engines.server.version);
    if let Some(i) = &interrupted {
        i.check(&Asked {
            def: &def,
            profile: &profile_name,
            only: &only,
            host: &host_info,
            rounds_seed: opts.rounds_seed,
        })?;
    }
    if !roles.is_single() {
        for (engine, roles) in engines.distinct() {
            eprintln!(
                "engine {} (data root {}): {}",
                engine.endpoint,
                engine.data_root,
                crate::basics::role::joined(&roles)
            );
        }
    }
    let now = time::OffsetDateTime::now_utc();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .expect("static format");
    let mut scope = RunScope::open(format!("{stamp}-{}", std::process::id()));
    // Containers of a killed run are removed; a live run is refused.
    for (engine, _) in engines.distinct() {
        scope.claim(engine).await?;
    }
    let results_dir = match &interrupted {
        Some(i) => i.dir.parent().map(Path::to_owned).unwrap_or_default(),
        None => opts
            .results_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(profile.default_results_dir())),
    };
    let scratch = opts.results_dir.is_none()
        && profile.scratch
        && results_dir == Path::new(profile.default_results_dir());
    let (sha, dirty) = host::git_state(root);
    let started_utc = now
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let (mut snapshot, (first_started, run_id), mut resumed_utc) = match &interrupted {
        Some(i) => {
            eprintln!(
                "resuming {}: {} cells measured, the rest of the plan follows",
                i.dir.display(),
                i.results.cells.len()
            );
            (
                Snapshot::reopen(i.dir.clone(), i.results.clone(), profile.cv_threshold),
                i.started(),
                i.resumed_utc(),
            )
        }
        None => (
            Snapshot::create(
                &results_dir,
                &stamp,
                &host::hostname(),
                &sha,
                profile.cv_threshold,
            )?,
            (started_utc.clone(), scope.id().to_owned()),
            Vec::new(),
        ),
    };
    if interrupted.is_some() {
        resumed_utc.push(started_utc);
    }
    eprintln!("snapshot: {}", snapshot.dir.display());
    let mut manifest = RunManifest {
        run_id,
        rpclab_version: env!("CARGO_PKG_VERSION").to_owned(),
        git_revision: sha,
        git_dirty: !dirty.is_empty(),
        git_dirty_files: dirty,
        started_utc: first_started,
        resumed_utc,
        profile: profile_name,
        client_build: Some(profile.client_build),
        only,
        variants: variants.iter().map(|(s, v)| format!("{s}/{v}")).collect(),
        thresholds: opts.thresholds.iter().map(ToString::to_string).collect(),
        host: host_info,
        cpus: CpuPinning {
            server: split.server.clone(),
            registry: split.registry.clone(),
            client: split.client.clone(),
            note: split.note.clone(),
        },
        calibration: None,
        hosts: Vec::new(),
        images: BTreeMap::new(),
        servers: Vec::new(),
        host_load: None,
        stopped: None,
        capacity: opts.capacity.clone(),
        rounds_seed: profile.rounds.map(|_| {
            interrupted
                .as_ref()
                .and_then(Interrupted::rounds_seed)
                .or(opts.rounds_seed)
                .unwrap_or_else(crate::engine::rounds::fresh_seed)
        }),
        plan: opts.plan.clone(),
        network: Some(netns::exposure(
            network_choice,
            !roles.all_local(),
            &roles.bind,
        )),
        lab_confinement: BTreeMap::from([
            (
                Role::Registry.to_string(),
                crate::basics::confine::registry(),
            ),
            (Role::Client.to_string(), crate::basics::confine::client()),
        ]),
        lab: toml::Table::try_from(&def)
            .context("the lab definition does not render as a TOML table")?,
    };
    // A resumed snapshot's manifest is rewritten once its images are
    // known to be those it measured.
    if interrupted.is_none() {
        snapshot.write_manifest(&manifest)?;
    }

    let ctx = RunContext {
        root,
        engine: &engines.server,
        engines: &engines,
        scenarios: &scenarios,
        def: &def,
        profile: &profile,
        run_id: scope.id(),
        cpus: &split,
        verbose: opts.verbose,
        variants: &variants,
        port_wait_s: opts.port_wait_s,
        bar: std::sync::OnceLock::new(),
        client_clock_offset_s: std::sync::OnceLock::new(),
        rounds_seed: manifest.rounds_seed.unwrap_or(0),
        resuming: interrupted.as_ref(),
        capacity: opts.capacity.as_ref(),
        network_choice,
        network: std::sync::OnceLock::new(),
        outage: Outage::new(&engines, scope.id(), opts.engine_wait),
    };
    let run_started = std::time::Instant::now();
    let outcome = tokio::select! {
        r = ctx.run_all(&selected, &mut snapshot, &mut manifest) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted (Ctrl-C)")),
    };
    // Whatever happened, no container of this run survives it, on any engine.
    let removed = scope.close().await;
    if let Some(bar) = ctx.bar.get() {
        bar.finish();
    }
    // An engine that is gone cannot remove anything: the next run that
    // claims it does (its containers' orchestrator is then gone).
    let gone = outcome
        .as_ref()
        .err()
        .and_then(|e| e.downcast_ref::<EngineGone>());
    let removed = match (removed, gone) {
        (Err(_), Some(gone)) => {
            eprintln!(
                "the containers this run left on {} are removed by the next run on it",
                gone.endpoint
            );
            Ok(())
        }
        (removed, _) => removed,
    };
    let outcome = match outcome {
        // A refused resume leaves the snapshot as it was.
        Err(e) if e.is::<Refused>() => {
            removed?;
            return Err(e);
        }
        other => other,
    };
    if let Err(e) = &outcome {
        snapshot.error(format!("{e:#}"))?;
    }
    manifest.host_load = crate::engine::host_load::summarise(&snapshot.results.cells);
    if let Some(h) = &manifest.host_load {
        if h.busy_windows > 0 {
            eprintln!(
                "the host was busy beside the lab in {} of {} windows (flagged host-busy): other processes used up to {:.2} core(s) of the server's CPUs, {:.2} of the client's, steal up to {:.2}",
                h.busy_windows, h.windows, h.other_server_cores_max, h.other_client_cores_max, h.steal_cores_max
            );
        }
    }
    manifest.stopped = outcome.as_ref().err().map(|e| Stopped {
        utc: time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        why: format!("{e:#}"),
    });
    snapshot.write_manifest(&manifest)?;
    if !opts.thresholds.is_empty() {
        snapshot.results.thresholds = Some(ThresholdCheck::of_cells(
            &opts.thresholds,
            &snapshot.results.cells,
        ));
    }
    let complete = outcome.is_ok() && snapshot.results.errors.is_empty();
    snapshot.finish(complete)?;
    Ok(RunOutcome {
        snapshot: snapshot.dir,
        results_dir,
        scratch,
        profile: def.profile,
        results: snapshot.results,
        servers: manifest.servers,
        took: run_started.elapsed(),
        stopped: outcome.err(),
        cleanup: removed.err(),
    })
}

/// The CPU sets of the run: the flags over the lab's `[cpus]`, checked
/// against the host's online CPUs.
fn split_cpus(lab: &crate::definitions::lab::Cpus, flags: &cpus::CpuArgs) -> Result<cpus::Split> {
    cpus::split(
        &cpus::Request {
            server: flags.server_cpus.as_deref().unwrap_or(&lab.server),
            registry: flags.registry_cpus.as_deref().unwrap_or(&lab.registry),
            client: flags.client_cpus.as_deref().unwrap_or(&lab.client),
            allow_shared: flags.allow_shared_cpus,
        },
        &cpus::online(),
    )
}

/// The lab definition as this run ran it, which `manifest.toml` records:
/// the file's, with the profile, the CPU sets and the CA certificates the
/// command line chose over it.
fn as_run(def: &LabDef, profile: &str, split: &cpus::Split, ca: Option<&PathBuf>) -> LabDef {
    let mut ran = def.clone();
    ran.profile = profile.to_owned();
    ran.cpus.server = split.server.clone();
    ran.cpus.registry = split.registry.clone();
    ran.cpus.client = split.client.clone();
    if let Some(ca) = ca {
        ran.build.ca_certificates = ca.clone();
    }
    ran
}

/// The containers of the server variant being measured.
#[derive(Clone, Copy)]
struct Running<'a> {
    server: &'a str,
    /// Its registry (ZooKeeper), when it uses one.
    registry: Option<&'a str>,
    /// The port it listens on (its manifest's, unless an interleaved run
    /// moved it).
    port: u16,
    /// The servers kept running beside it, not under load (an interleaved
    /// run), whose CPU is told apart from the host's.
    idle: &'a [String],
}

struct RunContext<'a> {
    root: &'a Path,
    /// The server role's engine (`engines.server`).
    engine: &'a Engine,
    engines: &'a Engines,
    scenarios: &'a [Scenario],
    /// The lab definition as the run runs it ([`as_run`]).
    def: &'a LabDef,
    profile: &'a Profile,
    run_id: &'a str,
    cpus: &'a cpus::Split,
    verbose: bool,
    variants: &'a [(String, String)],
    port_wait_s: u64,
    /// Cells done out of the run's total, once the total is known.
    bar: std::sync::OnceLock<crate::basics::progress::RunBar>,
    /// Seconds the client's clock is ahead of the orchestrator's, once
    /// measured (0 when the client shares the orchestrator's machine).
    client_clock_offset_s: std::sync::OnceLock<f64>,
    /// Seed of an interleaved run's order.
    rounds_seed: u64,
    /// The snapshot a resumed run continues.
    resuming: Option<&'a Interrupted>,
    /// A capacity search instead of the plan's cells.
    capacity: Option<&'a CapacityAsked>,
    /// `--network`, checked against the run's machines.
    network_choice: NetworkChoice,
    /// The network the run's containers join, once its holder is up
    /// (after the images are built).
    network: std::sync::OnceLock<Network>,
    /// What the run does when an engine stops answering.
    outage: Outage<'a>,
}

impl RunContext<'_> {
    /// The network the run's servers, registries and clients use.
    fn network(&self) -> &Network {
        self.network.get().unwrap_or(&Network::Host)
    }

    /// [`Outage::after_failure`], and when an engine came back (the run's
    /// containers removed, its network's holder among them), the holder
    /// started again under its name, so that what starts next joins it.
    async fn after_failure(&self) -> Result<AfterFailure> {
        let after = self.outage.after_failure().await?;
        if after == AfterFailure::EngineBack {
            if let Some(network) = self.network.get() {
                netns::reopen(self.engine, network, self.run_id, &self.cpus.client).await?;
            }
        }
        Ok(after)
    }

    /// Plans the run, builds and calibrates, then measures the plan: in
    /// blocks of repetitions, one server variant after the other, or in
    /// interleaved rounds.
    async fn run_all(
        &self,
        selected: &[&Manifest],
        snapshot: &mut Snapshot,
        manifest: &mut RunManifest,
    ) -> Result<()> {
        let plan = plan::plan(
            self.scenarios,
            self.profile,
            selected,
            &Filters {
                profile: &self.def.profile,
                variants: self.variants,
                all_local: self.engines.roles.all_local(),
            },
        )?;
        // A resumed run measures only what its snapshot lacks (a new
        // snapshot lacks every cell).
        let plan = plan::remaining(plan, &snapshot.results.cells);
        let cells = plan.cells();
        let Plan {
            servers,
            runnable,
            levels,
        } = plan;
        manifest.servers = servers;
        // Built again (nothing changed: found by hash) whenever an engine
        // that stopped answering came back.
        loop {
            let Err(e) = self
                .build_and_calibrate(selected, &runnable, snapshot, manifest)
                .await
            else {
                break;
            };
            if self.after_failure().await? == AfterFailure::EnginesAnswer {
                return Err(e);
            }
        }
        let network = netns::open(
            self.engine,
            self.network_choice,
            self.run_id,
            &self.cpus.client,
        )
        .await?;
        let _ = self.network.set(network);
        if runnable.is_empty() {
            let reasons: Vec<String> = manifest
                .servers
                .iter()
                .map(|s| {
                    format!(
                        "{} {}: {}",
                        s.name,
                        s.variant,
                        s.not_run.as_deref().unwrap_or("?")
                    )
                })
                .collect();
            bail!(
                "none of the selected servers can run:\n- {}",
                reasons.join("\n- ")
            );
        }
        if let Some(asked) = self.capacity {
            // The search's steps at most, and its hint.
            let most = asked.budget + u32::from(asked.start_rate.is_none());
            let _ = self
                .bar
                .set(crate::basics::progress::RunBar::new(most.into()));
            // One variant: its error is the run's.
            return self.run_server(&runnable[0], snapshot).await;
        }
        let _ = self
            .bar
            .set(crate::basics::progress::RunBar::new(cells as u64));
        if let Some(policy) = self.profile.rounds {
            // Started over, from the rounds' first missing cell, whenever
            // an engine that stopped answering came back.
            loop {
                let Err(e) = self
                    .run_rounds(&runnable, &levels, policy, snapshot, manifest)
                    .await
                else {
                    return Ok(());
                };
                if self.after_failure().await? == AfterFailure::EnginesAnswer {
                    return Err(e);
                }
            }
        }
        for planned in runnable.iter().filter(|p| !p.cells.is_empty()) {
            self.run_server_through(planned, snapshot).await?;
        }
        Ok(())
    }

    /// [`RunContext::run_server`], started over with the cells it has left
    /// whenever an engine that stopped answering came back
    /// ([`crate::engine::outage`]). A failure while every engine answers is
    /// the server's: recorded, and the run goes on with the next one. Err:
    /// the run stops (an engine did not come back).
    async fn run_server_through(
        &self,
        planned: &Planned<'_>,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        loop {
            let left = planned.left(&snapshot.results.cells);
            if left.cells.is_empty() {
                return Ok(());
            }
            let Err(e) = self.run_server(&left, snapshot).await else {
                return Ok(());
            };
            if self.after_failure().await? == AfterFailure::EnginesAnswer {
                // One broken server must not cost the others their run.
                let (m, v) = (planned.manifest, planned.variant);
                crate::say!("error: {e:#}");
                snapshot.error(format!("{}/{}: {e:#}", m.name, v.name))?;
                return Ok(());
            }
        }
    }

    /// Builds every image the run needs on each engine (a build error
    /// should not come after an hour of measuring), then calibrates the
    /// host and describes each engine's machine, into the manifest.
    async fn build_and_calibrate(
        &self,
        selected: &[&Manifest],
        runnable: &[Planned<'_>],
        snapshot: &mut Snapshot,
        manifest: &mut RunManifest,
    ) -> Result<()> {
        // The client compiles in the background while the images build.
        let client_build = host::StaticBuild::start(self.root, self.profile.client_build)?;
        // Every image is built on each engine that runs it (docs/multi-host.md,
        // "Images on each engine"); the server's engine comes first.
        let mut builders = crate::engine::prebuild::chains(
            self.engines,
            self.root,
            &self.def.build,
            self.verbose,
            selected,
        )
        .await?;
        let wanted: Vec<(&Manifest, &Variant)> =
            runnable.iter().map(|p| (p.manifest, p.variant)).collect();
        let ids = builders[0].0.servers(&wanted).await?;
        for (p, id) in runnable.iter().zip(&ids) {
            manifest.servers[p.record].image = format!("{}@{id}", p.manifest.image(p.variant));
        }
        let binary = client_build.finish()?;
        // Every engine runs the client image: the client's for the load,
        // the others for their calibration and CPU model.
        for (builder, _) in &mut builders {
            builder.client(&binary).await?;
        }
        let calibration = self.calibrate().await?;
        let mut hosts: Vec<HostRecord> = Vec::new();
        for (builder, roles) in &builders {
            hosts.push(self.describe(builder, roles, &calibration).await?);
        }
        let client_clock = hosts
            .iter()
            .find(|h| h.roles.iter().any(|r| r == Role::Client.as_str()))
            .map(|h| h.clock)
            .expect("one host runs the client");
        let foreign = self.engines.client_clock_is_foreign();
        let _ = self.client_clock_offset_s.set(if foreign {
            client_clock.offset_ms / 1e3
        } else {
            0.0
        });
        for h in &mut hosts {
            h.clock_applied = foreign && h.roles.iter().any(|r| r == Role::Client.as_str());
        }
        manifest.calibration = Some(calibration);
        manifest.hosts = hosts;
        manifest.images = builders[0].0.built.clone().into_iter().collect();
        if let Some(interrupted) = self.resuming {
            interrupted.check_images(&manifest.images)?;
        }
        snapshot.write_manifest(manifest)
    }

    /// The host calibration: the server's CPUs on its engine, the client's
    /// on its own.
    async fn calibrate(&self) -> Result<rpclab_model::result::Calibration> {
        eprintln!(
            "calibrating the host: CPU and loopback on the server's CPUs ({}) and the client's ({})",
            self.cpus.server, self.cpus.client
        );
        let calibration = crate::engine::calibration::measure(
            &self.engines.server,
            &self.engines.client,
            self.run_id,
            &self.cpus.server,
            &self.cpus.client,
            self.engines.roles.is_single(),
        )
        .await?;
        eprintln!(
            "  server CPUs: {:.0} CPU rounds/s, {:.0} loopback round trips/s; client CPUs: {:.0}, {:.0}",
            calibration.server.cpu_rounds_per_s,
            calibration.server.loopback_round_trips_per_s,
            calibration.client.cpu_rounds_per_s,
            calibration.client.loopback_round_trips_per_s
        );
        Ok(calibration)
    }

    /// What the manifest records of the machine of `builder`'s engine,
    /// which runs `roles`: with the calibration of those roles' CPU sets
    /// and the images it built.
    async fn describe(
        &self,
        builder: &crate::engine::images::Builder<'_>,
        roles: &[Role],
        calibration: &rpclab_model::result::Calibration,
    ) -> Result<HostRecord> {
        let mut record = engines::describe(builder.engine, roles, self.run_id).await?;
        for (role, figures) in [
            (Role::Server, &calibration.server),
            (Role::Client, &calibration.client),
        ] {
            if roles.contains(&role) {
                record.calibration.insert(role.to_string(), figures.clone());
            }
        }
        record.images = builder.built.clone().into_iter().collect();
        if !self.engines.roles.is_single() {
            eprintln!(
                "  {} ({}): {} cores, {}, clock {:+.3} ms ± {:.3} ms",
                record.endpoint,
                record.roles.join(", "),
                record.cores,
                record.cpu_model,
                record.clock.offset_ms,
                record.clock.uncertainty_ms
            );
        }
        Ok(record)
    }

    /// An interleaved run (a profile with `rounds`): one registry for all,
    /// every variant started on its own port and primed, then each scenario
    /// level measured in rounds (see [`crate::engine::rounds`]).
    async fn run_rounds(
        &self,
        runnable: &[Planned<'_>],
        levels: &[(&Scenario, u32)],
        policy: crate::definitions::lab::RoundsPolicy,
        snapshot: &mut Snapshot,
        manifest: &mut RunManifest,
    ) -> Result<()> {
        let reserved: std::collections::BTreeSet<u16> =
            crate::definitions::manifest::load_all(self.root)?
                .iter()
                .map(|m| m.port)
                .collect();
        let ports = crate::engine::rounds::ports(
            &runnable
                .iter()
                .map(|p| (p.manifest.name.as_str(), p.manifest.port))
                .collect::<Vec<_>>(),
            &reserved,
        );
        for (p, port) in runnable.iter().zip(&ports) {
            if *port != p.manifest.port {
                manifest.servers[p.record].port = Some(*port);
            }
        }
        snapshot.write_manifest(manifest)?;
        let needs_registry = runnable
            .iter()
            .any(|p| p.manifest.registry != Registry::None);
        if self.engines.roles.server.machine().is_none() && *self.network() == Network::Host {
            let mut wanted = ports.clone();
            if needs_registry {
                wanted.push(registry::ZOOKEEPER_PORT);
            }
            self.wait_for(&wanted).await;
            for (m, port) in runnable.iter().map(|p| p.manifest).zip(&ports) {
                host::check_port_free(*port, &m.name)?;
            }
        }
        let registry = registry::start(
            &self.engines.registry,
            if needs_registry {
                Registry::Zookeeper
            } else {
                Registry::None
            },
            self.run_id,
            &self.cpus.registry,
            "all",
            self.network(),
        )
        .await?;
        let result = self
            .rounds_with(
                runnable,
                levels,
                &ports,
                registry.as_ref(),
                policy,
                snapshot,
            )
            .await;
        if let Some(r) = registry {
            self.engines.registry.remove(&r.id).await?;
        }
        result
    }

    async fn rounds_with(
        &self,
        runnable: &[Planned<'_>],
        levels: &[(&Scenario, u32)],
        ports: &[u16],
        registry: Option<&registry::RunningRegistry>,
        policy: crate::definitions::lab::RoundsPolicy,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let mut rng = crate::engine::rounds::SplitMix64::new(self.rounds_seed);
        // A resumed run keeps the orders of the rounds measured before.
        let orders = snapshot
            .results
            .rounds
            .take()
            .map(|r| r.orders)
            .unwrap_or_default();
        snapshot.results.rounds = Some(rpclab_model::result::Rounds {
            seed: self.rounds_seed,
            min: policy.per_start,
            max: policy.per_start,
            starts: policy.starts.max(1),
            orders,
        });
        let registry_id = registry.map(|r| r.id.as_str());
        for start in 1..=policy.starts.max(1) {
            let rounds: Vec<u32> = (1..=policy.total())
                .filter(|r| policy.start_of(*r) == start)
                .collect();
            let measured = |snapshot: &Snapshot| {
                runnable.iter().all(|p| {
                    levels
                        .iter()
                        .filter(|(sc, _)| plan::carries(p.manifest, p.variant, sc))
                        .all(|(sc, level)| {
                            rounds.iter().all(|round| {
                                plan::CellId {
                                    server: &p.manifest.name,
                                    variant: &p.variant.name,
                                    scenario: &sc.name,
                                    level: *level,
                                    repetition: *round,
                                }
                                .is_in(&snapshot.results.cells)
                            })
                        })
                })
            };
            // A start measured whole before a resumed run is not started
            // again.
            if measured(snapshot) {
                continue;
            }
            if policy.starts > 1 {
                crate::say!("JVM start {start} of {}", policy.starts);
            }
            let mut live: Vec<Live> = Vec::new();
            for (p, port) in runnable.iter().zip(ports) {
                let (m, v) = (p.manifest, p.variant);
                match self.start_primed(m, v, *port, registry, snapshot).await {
                    Ok(l) => live.push(l),
                    // Not the server's: the run waits for the engine.
                    Err(e) if !self.outage.answering().await => return Err(e),
                    Err(e) => {
                        crate::say!("error: {e:#}");
                        snapshot.error(format!("{}/{}: {e:#}", m.name, v.name))?;
                    }
                }
            }
            for &(scenario, level) in levels {
                for &round in &rounds {
                    let seat = Seat {
                        scenario,
                        level,
                        round,
                        start,
                    };
                    self.round(&mut live, seat, registry_id, &mut rng, snapshot)
                        .await?;
                }
            }
            for l in &live {
                self.engine.remove(&l.id).await?;
            }
        }
        Ok(())
    }

    /// One round of a level: every live variant that carries the scenario,
    /// once, in a fresh seeded random order. The design is fixed: nothing
    /// measured decides whether another round follows.
    async fn round(
        &self,
        live: &mut [Live<'_>],
        seat: Seat<'_>,
        registry: Option<&str>,
        rng: &mut crate::engine::rounds::SplitMix64,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let Seat {
            scenario,
            level,
            round,
            ..
        } = seat;
        let mut order: Vec<usize> = (0..live.len())
            .filter(|i| live[*i].alive && plan::carries(live[*i].m, live[*i].v, scenario))
            .collect();
        if order.is_empty() {
            return Ok(());
        }
        // Drawn even where the order is recorded, so that a resumed run's
        // later rounds replay the interrupted run's orders.
        rng.shuffle(&mut order);
        let seats = seats(
            live,
            order,
            scenario,
            level,
            round,
            snapshot
                .results
                .rounds
                .as_mut()
                .expect("a run in rounds records its rounds"),
        );
        for (position, i) in seats {
            let l = &live[i];
            let id = plan::CellId {
                server: &l.m.name,
                variant: &l.v.name,
                scenario: &scenario.name,
                level,
                repetition: round,
            };
            if id.is_in(&snapshot.results.cells) {
                continue;
            }
            self.cell_in_round(live, i, position, seat, registry, snapshot)
                .await?;
        }
        Ok(())
    }

    /// One cell of a round: variant `i` under load, the others idle. A
    /// server that exits, or a cell that cannot run, costs that variant its
    /// later rounds, not the run.
    async fn cell_in_round(
        &self,
        live: &mut [Live<'_>],
        i: usize,
        position: usize,
        seat: Seat<'_>,
        registry: Option<&str>,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let Seat {
            scenario,
            level,
            round,
            start,
        } = seat;
        let idle: Vec<String> = live
            .iter()
            .enumerate()
            .filter(|(j, l)| *j != i && l.alive)
            .map(|(_, l)| l.id.clone())
            .collect();
        let l = &live[i];
        let (m, v) = (l.m, l.v);
        let running = Running {
            server: &l.id,
            registry,
            port: l.port,
            idle: &idle,
        };
        let cold = !l.served && l.primed.is_none();
        let cell = self
            .run_cell(m, v, scenario, level, round, cold, &running, snapshot)
            .await;
        let l = &mut live[i];
        l.served = true;
        let exit = self.engine.exit_code(&l.id).await;
        if (cell.is_err() || !matches!(exit, Ok(None))) && !self.outage.answering().await {
            // Not the server's failure: the run waits for the engine,
            // then starts the rounds over from this cell, measured again
            // (whether its server lived through it cannot be told).
            return Err(match (cell, exit) {
                (Err(e), _) | (_, Err(e)) => e,
                _ => anyhow!("the server's engine stopped answering"),
            });
        }
        if let Some(code) = exit? {
            let log = self.engine.log_tail(&l.id, 30).await;
            l.alive = false;
            let e = exited(m, scenario, level, code, &log);
            crate::say!("error: {e}");
            snapshot.error(format!("{}/{}: {e}", m.name, v.name))?;
        } else {
            match cell {
                Ok(cell) => snapshot.push(Cell {
                    primed: l.primed.take(),
                    round_position: Some(position as u32 + 1),
                    start: Some(start),
                    ..cell
                })?,
                Err(e) => {
                    l.alive = false;
                    crate::say!("error: {e:#}");
                    snapshot.error(format!("{}/{}: {e:#}", m.name, v.name))?;
                }
            }
        }
        if let Some(bar) = self.bar.get() {
            bar.cell_done();
        }
        Ok(())
    }

    /// Starts a variant of an interleaved run on `port`, waits for a
    /// verified call and primes it.
    async fn start_primed<'m>(
        &self,
        m: &'m Manifest,
        v: &'m Variant,
        port: u16,
        registry: Option<&registry::RunningRegistry>,
        snapshot: &Snapshot,
    ) -> Result<Live<'m>> {
        let id = self.start_server(m, v, port, registry).await?;
        let ready = async {
            self.wait_ready(m, v, &id, port).await?;
            self.prime(m, v, port, snapshot, 1).await
        };
        match ready.await {
            Ok(primed) => Ok(Live {
                m,
                v,
                port,
                id,
                primed,
                served: false,
                alive: true,
            }),
            Err(e) => {
                let _ = self.engine.remove(&id).await;
                Err(e)
            }
        }
    }

    /// Waits (up to `port_wait_s`) until `ports` are free.
    async fn wait_for(&self, ports: &[u16]) {
        let deadline = std::time::Instant::now() + Duration::from_secs(self.port_wait_s);
        let mut told = false;
        while let Some(busy) = ports
            .iter()
            .find(|p| std::net::TcpListener::bind(("127.0.0.1", **p)).is_err())
        {
            if std::time::Instant::now() >= deadline {
                return;
            }
            if !told {
                crate::say!(
                    "port {busy} is in use (another run?); waiting up to {} s for it",
                    self.port_wait_s
                );
                told = true;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// A run in blocks: `planned`'s variant with its registry, every cell
    /// of it, then both removed.
    async fn run_server(&self, planned: &Planned<'_>, snapshot: &mut Snapshot) -> Result<()> {
        let m = planned.manifest;
        // Ports can be checked only on the orchestrator's own machine, and
        // matter only on its network (a private one is the run's alone).
        let local =
            self.engines.roles.server.machine().is_none() && *self.network() == Network::Host;
        if local {
            self.wait_for_ports(m).await;
            host::check_port_free(m.port, &m.name)?;
        }
        let registry = registry::start(
            &self.engines.registry,
            m.registry,
            self.run_id,
            &self.cpus.registry,
            &m.name,
            self.network(),
        )
        .await?;
        let result = self
            .run_server_with(planned, registry.as_ref(), snapshot)
            .await;
        if let Some(r) = registry {
            self.engines.registry.remove(&r.id).await?;
        }
        result
    }

    /// Waits (up to `port_wait_s`) until the ports `m` needs are free.
    async fn wait_for_ports(&self, m: &Manifest) {
        let mut ports = vec![m.port];
        if m.registry == Registry::Zookeeper {
            ports.push(registry::ZOOKEEPER_PORT);
        }
        self.wait_for(&ports).await;
    }

    async fn run_server_with(
        &self,
        planned: &Planned<'_>,
        registry: Option<&registry::RunningRegistry>,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let m = planned.manifest;
        let server = self
            .start_server(m, planned.variant, m.port, registry)
            .await?;
        let running = Running {
            server: &server,
            registry: registry.map(|r| r.id.as_str()),
            port: m.port,
            idle: &[],
        };
        let result = self.measure_server(planned, &running, snapshot).await;
        self.engine.remove(&server).await?;
        result
    }

    /// Starts a server variant listening on `port`, pinned to the server's
    /// CPUs; returns its container id.
    async fn start_server(
        &self,
        m: &Manifest,
        v: &Variant,
        port: u16,
        registry: Option<&registry::RunningRegistry>,
    ) -> Result<String> {
        let mut env = vec![
            format!("RPCLAB_PORT={port}"),
            format!("JAVA_OPTS={}", m.jvm_flags.join(" ")),
            // The interface to listen on: 127.0.0.1 unless the client is
            // on another machine (docs/multi-host.md).
            format!("RPCLAB_BIND={}", self.engines.roles.bind),
        ];
        env.extend(m.env_of(v).iter().map(|(k, v)| format!("{k}={v}")));
        env.extend(registry.map(|r| r.server_env()).unwrap_or_default());
        crate::say!(
            "starting {} {} on {}:{port} (cpus {})",
            m.name,
            v.name,
            self.engines.roles.bind,
            &self.cpus.server
        );
        self.engine
            .start(ContainerSpec {
                name: format!("rpclab-{}-{}-{}", m.name, sanitize(&v.name), self.run_id),
                image: &m.image(v),
                role: Role::Server.into(),
                run_id: self.run_id,
                env,
                entrypoint: None,
                cmd: None,
                cpuset: &self.cpus.server,
                binds: Vec::new(),
                confinement: &crate::basics::confine::server(&m.confinement, &m.jvm_flags)?,
                network: self.network(),
            })
            .await
    }

    /// Waits until the server in container `id` answers a verified call on `port`.
    async fn wait_ready(&self, m: &Manifest, v: &Variant, id: &str, port: u16) -> Result<()> {
        let target = format!("{}:{}", self.engines.roles.server_address, port);
        // This process probes on the host's network, a container in a
        // private one (with the folder's files mounted).
        let here = *self.network() == Network::Host;
        let options = if here {
            m.client_options_at(v, &m.dir)
        } else {
            m.client_options_at(v, Path::new(FILES_IN_CONTAINERS))
        };
        let call = m.call_of(v);
        let hint = format!(
            "Raise [readiness] timeout_s in {} if it is only slow.",
            m.outside.as_ref().map_or_else(
                || format!("servers/{}/server.toml", m.name),
                |folder| folder.join("server.toml").display().to_string()
            )
        );
        let name = format!("server {}", m.name);
        readiness::wait(
            self.engine,
            readiness::Probe {
                name: &name,
                container: id,
                protocol: m.protocol.as_str(),
                options: &options,
                target: &target,
                operation: m.readiness.operation,
                timeout: Duration::from_secs(m.readiness.timeout_s),
                hint: &hint,
                network: self.network(),
                run_id: self.run_id,
                cpus: &self.cpus.client,
                call: call.as_deref(),
                files: files_of(m, v).filter(|_| !here),
            },
        )
        .await
    }

    /// Measures the cells of `planned` in order on its running server.
    async fn measure_server(
        &self,
        planned: &Planned<'_>,
        running: &Running<'_>,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let (m, v, server) = (planned.manifest, planned.variant, running.server);
        self.wait_ready(m, v, server, m.port).await?;
        let mut starts = 1;
        let mut primed = self.prime(m, v, m.port, snapshot, starts).await?;
        // The next cell is the first this JVM serves (it warms up longest),
        // unless priming already served its first calls.
        let mut cold = primed.is_none();
        if let Some(asked) = self.capacity {
            let start = Start { cold, primed };
            return self
                .search_capacity(asked, planned, running, start, snapshot)
                .await;
        }
        for (scenario, why) in &planned.skipped {
            crate::say!(
                "  {} {} · {}: not run, the variant cannot carry `{}`: {why}",
                m.name,
                v.name,
                scenario.name,
                scenario.operation
            );
        }
        // Whether this start of the server has served a cell (a resumed
        // run's first may be a later repetition, on a fresh server).
        let mut served = false;
        for cell in &planned.cells {
            let (scenario, level, rep) = (cell.scenario, cell.level, cell.repetition);
            if served && rep > 1 && self.profile.restart_between_repetitions {
                // A cold JVM for every repetition: the spread then
                // includes start-up and JIT effects.
                self.engine.restart(server).await?;
                self.wait_ready(m, v, server, m.port).await?;
                starts += 1;
                primed = self.prime(m, v, m.port, snapshot, starts).await?;
                cold = primed.is_none();
            }
            let cell = self
                .run_cell(m, v, scenario, level, rep, cold, running, snapshot)
                .await
                .map(|cell| Cell {
                    primed: primed.take(),
                    ..cell
                });
            cold = false;
            served = true;
            if let Some(code) = self.engine.exit_code(server).await? {
                let log = self.engine.log_tail(server, 30).await;
                bail!(exited(m, scenario, level, code, &log));
            }
            snapshot.push(cell?)?;
            if let Some(bar) = self.bar.get() {
                bar.cell_done();
            }
        }
        Ok(())
    }

    /// A capacity search on the running, primed server of `planned`: its
    /// hint (a closed loop, unless the command line gave the first rate),
    /// then a step (an open-loop cell) at each rate
    /// [`capacity::next`] asks for, each judged and printed on its line;
    /// the steps' cells and the search are written to the snapshot after
    /// every step.
    async fn search_capacity(
        &self,
        asked: &CapacityAsked,
        planned: &Planned<'_>,
        running: &Running<'_>,
        start: Start,
        snapshot: &mut Snapshot,
    ) -> Result<()> {
        let (m, v, server) = (planned.manifest, planned.variant, running.server);
        let Start {
            mut cold,
            mut primed,
        } = start;
        let base = self
            .scenarios
            .iter()
            .find(|s| s.name == asked.scenario)
            .with_context(|| format!("the lab has no scenario `{}`", asked.scenario))?;
        // A generic server's steps call its method, named after it.
        let base = match m.call_of(v) {
            Some(method) => base.calling(&method),
            None => base.clone(),
        };
        let loads = capacity::Loads::of(&base, self.profile)?;
        let mut search = loads.search(asked, m, &v.name, self.profile);
        let first = match asked.start_rate {
            Some(rate) => rate,
            None => {
                let level = loads.hint_level;
                let cell = self
                    .run_cell(m, v, &loads.hint, level, 1, cold, running, snapshot)
                    .await?;
                cold = false;
                if let Some(code) = self.engine.exit_code(server).await? {
                    let log = self.engine.log_tail(server, 30).await;
                    bail!(exited(m, &loads.hint, level, code, &log));
                }
                crate::say!(
                    "  hint: {} at {level} (closed loop): {:.0} calls/s, {} failed: the first rate",
                    loads.hint.name,
                    cell.throughput_per_s,
                    cell.calls_failed
                );
                search.hint = Some(Hint {
                    scenario: loads.hint.name.clone(),
                    concurrency: level,
                    throughput_per_s: cell.throughput_per_s,
                });
                let rate = cell.throughput_per_s.round() as u32;
                self.push_step(snapshot, &search, cell, primed.take())?;
                rate
            }
        };
        loop {
            let rate = match capacity::next(&search, first) {
                Next::Measure(rate) => rate,
                Next::Done(outcome) => {
                    search.conclude(outcome);
                    snapshot.results.capacity = Some(search);
                    return snapshot.write_results();
                }
            };
            let repetition = 1 + search
                .steps
                .iter()
                .filter(|s| s.offered_per_s == rate)
                .count() as u32;
            let cell = self
                .run_cell(
                    m,
                    v,
                    &loads.steps,
                    rate,
                    repetition,
                    cold,
                    running,
                    snapshot,
                )
                .await?;
            cold = false;
            if let Some(code) = self.engine.exit_code(server).await? {
                let log = self.engine.log_tail(server, 30).await;
                bail!(exited(m, &loads.steps, rate, code, &log));
            }
            let number = search.steps.len() as u32 + 1;
            let step = capacity::judge(asked, &cell, rate, repetition, number);
            crate::say!("{}", capacity::step_line(asked, &step));
            search.steps.push(step);
            self.push_step(snapshot, &search, cell, primed.take())?;
        }
    }

    /// Writes a capacity search's cell (the hint or a step) into the
    /// snapshot with the search as it stands, and counts it done.
    fn push_step(
        &self,
        snapshot: &mut Snapshot,
        search: &CapacitySearch,
        cell: Cell,
        primed: Option<Priming>,
    ) -> Result<()> {
        snapshot.results.capacity = Some(search.clone());
        snapshot.push(Cell { primed, ..cell })?;
        if let Some(bar) = self.bar.get() {
            bar.cell_done();
        }
        Ok(())
    }

    /// Primes a freshly (re)started server, when the profile says so: the
    /// first scenario it can carry, at that scenario's highest level, warmed
    /// up by the profile's rule from `prime_s` to the cold limit. Its files
    /// are kept in the snapshot (`prime-<scenario>-c<level>-r<start>`), its
    /// figures go with the next cell. Calls that fail while a cold server
    /// is primed (a timeout under its first load) are counted there, not
    /// held against the cells: the readiness probe already showed that the
    /// server answers correctly.
    async fn prime(
        &self,
        m: &Manifest,
        v: &Variant,
        port: u16,
        snapshot: &Snapshot,
        start: u32,
    ) -> Result<Option<Priming>> {
        if !self.profile.primes() {
            return Ok(None);
        }
        let Some((scenario, level)) = self.scenarios.iter().find_map(|sc| {
            let top = sc.levels(self.profile).into_iter().max()?;
            plan::carries(m, v, sc).then_some((sc, top))
        }) else {
            return Ok(None);
        };
        let spec = self.profile.priming_spec(
            m.protocol.as_str(),
            format!("{}:{}", self.engines.roles.server_address, port),
            scenario.operation,
            scenario.load(level, self.profile)?,
            m.client_options_at(v, Path::new(FILES_IN_CONTAINERS)),
        );
        // A resumed run's priming keeps the interrupted run's files: it
        // takes the first start number not yet used.
        let dir = (start..)
            .map(|start| {
                snapshot.cell_dir(
                    &m.name,
                    &sanitize(&v.name),
                    &sanitize(&format!("prime-{}", scenario.name)),
                    level,
                    start,
                )
            })
            .find(|dir| !dir.exists())
            .expect("an unused start number");
        let label = format!(
            "{} {} · priming · {} · level {level}",
            m.name, v.name, scenario.name
        );
        let ClientRun { report, .. } = client_container::run_client(
            &self.engines.client,
            ClientCell {
                files: files_of(m, v),
                ..self.client_cell(&dir, &spec, &label)
            },
        )
        .await?;
        let warmup = report.warmup.clone().unwrap_or_default();
        crate::basics::progress::println(&format!(
            "  {label}: {:.1} s{}, last interval {:.0} calls/s, {} failed",
            warmup.seconds,
            match (self.profile.steady_intervals, warmup.steady) {
                (None, _) => "",
                (Some(_), true) => " to steady",
                (Some(_), false) => ", not steady at its limit",
            },
            warmup
                .intervals
                .last()
                .copied()
                .unwrap_or(report.throughput_per_s),
            report.calls_failed
        ));
        Ok(Some(Priming {
            scenario: scenario.name.clone(),
            concurrency: level,
            calls_ok: report.calls_ok + warmup.calls,
            calls_failed: report.calls_failed,
            warmup,
        }))
    }

    /// The client run of `spec` in `dir`, on this run's client CPUs, with
    /// no container's counters sampled (a cell adds its server's).
    fn client_cell<'a>(
        &'a self,
        dir: &'a Path,
        spec: &'a CellSpec,
        label: &'a str,
    ) -> ClientCell<'a> {
        ClientCell {
            run_id: self.run_id,
            client_cpus: &self.cpus.client,
            dir,
            spec,
            label,
            server: None,
            registry: None,
            host: None,
            verbose: self.verbose,
            clock_offset_s: self.client_clock_offset_s.get().copied().unwrap_or(0.0),
            network: self.network(),
            files: None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_cell(
        &self,
        m: &Manifest,
        v: &Variant,
        scenario: &Scenario,
        concurrency: u32,
        rep: u32,
        cold: bool,
        running: &Running<'_>,
        snapshot: &Snapshot,
    ) -> Result<Cell> {
        let Running {
            server,
            registry,
            port,
            idle,
        } = *running;
        let target = format!("{}:{}", self.engines.roles.server_address, port);
        let mut spec: CellSpec = self.profile.cell_spec(
            m.protocol.as_str(),
            target,
            scenario.operation,
            scenario.load(concurrency, self.profile)?,
            scenario.include_connect,
            m.client_options_at(v, Path::new(FILES_IN_CONTAINERS)),
        );
        if cold && self.profile.cold_warmup_max_s.is_some() {
            spec.warmup_max_s = Some(self.profile.warmup_limit_s(true));
        }
        let dir = snapshot.cell_dir(
            &m.name,
            &sanitize(&v.name),
            &sanitize(&scenario.name),
            concurrency,
            rep,
        );
        let label = format!(
            "{} {} · {} · level {concurrency} · rep {rep}",
            m.name, v.name, scenario.name
        );
        let ClientRun {
            report,
            server_cost,
            registry_cost,
            host_load,
            ..
        } = client_container::run_client(
            &self.engines.client,
            ClientCell {
                server: Some((&self.engines.server, server)),
                registry: registry.map(|r| (&self.engines.registry, r)),
                host: Some(client_container::HostWatch {
                    server_cpus: &self.cpus.server,
                    registry_cpus: &self.cpus.registry,
                    idle: idle
                        .iter()
                        .map(|id| (&self.engines.server, id.as_str()))
                        .collect(),
                }),
                files: files_of(m, v),
                ..self.client_cell(&dir, &spec, &label)
            },
        )
        .await?;
        let judged = limit::judge(
            &report,
            &limit::Sides {
                server_cost,
                registry_on_server_cpus: registry_cost
                    .filter(|_| self.cpus.registry == self.cpus.server),
                server_cores: self.cpus.server_cores,
                client_cores: self.cpus.client_cores,
                shared_cpus: self.cpus.shared,
                host_busy: host_load
                    .as_ref()
                    .is_some_and(crate::engine::host_load::host_busy),
            },
        );
        // A capacity search prints its steps' own lines.
        let line = format!(
            "  {label}: {:.0} calls/s, p99 {:.3} ms, {} failed{}",
            report.throughput_per_s,
            report.latency_us.p99 / 1e3,
            report.calls_failed,
            if judged.flags.is_empty() {
                String::new()
            } else {
                format!(
                    " [{}]",
                    judged
                        .flags
                        .iter()
                        .map(|f| f.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        if self.capacity.is_none() {
            crate::basics::progress::println(&line);
        }
        Ok(Cell {
            server: m.name.clone(),
            variant: v.name.clone(),
            framework: m.framework.clone(),
            framework_version: v.version.clone(),
            protocol: m.protocol.to_string(),
            scenario: scenario.name.clone(),
            operation: scenario.operation,
            concurrency,
            repetition: rep,
            calls_ok: report.calls_ok,
            calls_failed: report.calls_failed,
            duration_s: report.duration_s,
            throughput_per_s: report.throughput_per_s,
            latency_us: report.latency_us,
            server_cost,
            client_cost: report.client_cost,
            client_bound: None,
            registry_cost,
            limit: Some(judged.limit),
            flags: judged.flags,
            primed: None,
            host_load,
            round_position: None,
            start: None,
            report,
        })
    }
}

/// How a server starts serving a search: whether its JVM is still cold,
/// and its priming, which goes with the first cell.
struct Start {
    cold: bool,
    primed: Option<Priming>,
}

/// Where a cell of an interleaved run sits: its level, its run-wide round
/// number (its `repetition`) and the JVM start that round belongs to.
#[derive(Clone, Copy)]
struct Seat<'a> {
    scenario: &'a Scenario,
    level: u32,
    round: u32,
    start: u32,
}

/// A server variant of an interleaved run: its container, port, and
/// whether it still runs.
struct Live<'m> {
    m: &'m Manifest,
    v: &'m Variant,
    port: u16,
    id: String,
    /// Its priming, until the first cell takes it.
    primed: Option<Priming>,
    /// It has served a cell (the first after an unprimed start is cold).
    served: bool,
    alive: bool,
}

impl Live<'_> {
    /// `server/variant`, as a round's order records it.
    fn key(&self) -> String {
        format!("{}/{}", self.m.name, self.v.name)
    }
}

/// Each variant's position in a round, by its index in `live`: the
/// order recorded for that round, when an interrupted run measured
/// some of it, else `drawn` (which is recorded).
fn seats(
    live: &[Live<'_>],
    drawn: Vec<usize>,
    scenario: &Scenario,
    level: u32,
    round: u32,
    rounds: &mut rpclab_model::result::Rounds,
) -> Vec<(usize, usize)> {
    let recorded = rounds
        .orders
        .iter()
        .find(|o| o.scenario == scenario.name && o.concurrency == level && o.round == round);
    match recorded {
        Some(o) => o
            .order
            .iter()
            .enumerate()
            .filter_map(|(position, key)| {
                let i = drawn.iter().copied().find(|i| live[*i].key() == *key)?;
                Some((position, i))
            })
            .collect(),
        None => {
            rounds.orders.push(rpclab_model::result::RoundOrder {
                scenario: scenario.name.clone(),
                concurrency: level,
                round,
                order: drawn.iter().map(|i| live[*i].key()).collect(),
            });
            drawn.into_iter().enumerate().collect()
        }
    }
}

/// The folder to mount into the client's and the probe's containers for
/// variant `v` of `m`: its own, when its client options name files there.
fn files_of<'m>(m: &'m Manifest, v: &Variant) -> Option<&'m Path> {
    (!m.named_files(v).is_empty()).then_some(m.dir.as_path())
}

/// What a server that exited during a cell leaves as the run's error.
fn exited(m: &Manifest, scenario: &Scenario, level: u32, code: i64, log: &str) -> String {
    format!(
        "server {} exited with code {code} during scenario {} (concurrency {level}); \
         cells measured before it are kept.\n--- last lines of its log ---\n{log}",
        m.name, scenario.name
    )
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
