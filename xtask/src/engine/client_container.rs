//! One cell of the load client, in its own container: write the cell spec,
//! run `rpclab-client run-spec` pinned to the client CPUs, follow its log,
//! and read back the report it wrote.
//!
//! Shared by `lab run` and `bench client`, so that both measure with the
//! client exactly the same way.

use crate::basics::confine;
use crate::basics::progress;
use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::engine::containers::{ContainerSpec, Containers, Network};
use crate::engine::cost;
use crate::engine::host_load;
use crate::engine::images;
use crate::engine::run_engine::RunEngine;
use anyhow::{bail, Context, Result};
use futures_util::StreamExt;
use rpclab_client::runner;
use rpclab_model::result::{ClientReport, Cost, HostLoad};
use rpclab_model::spec::CellSpec;
use std::path::Path;

/// What one client container left behind.
pub struct ClientRun {
    /// The report the client wrote (`report.json` in the cell folder).
    pub report: ClientReport,
    /// The client's whole output (also written to `client.log`).
    pub log: String,
    /// What the server container cost over the client's measurement window,
    /// when a server was named and both of its readings succeeded.
    pub server_cost: Option<Cost>,
    /// The same for the registry container, measured apart.
    pub registry_cost: Option<Cost>,
    /// What the host did beside the lab over the window, when the cell had
    /// a [`HostWatch`], a server, and everything ran on this machine
    /// ([`host_load`]).
    pub host_load: Option<HostLoad>,
}

/// What the host sampler needs to tell the lab's CPU from the rest's on the
/// server's and the client's CPU sets ([`host_load`]).
pub struct HostWatch<'a> {
    /// The run's server and registry CPU sets (cpuset syntax, as in
    /// `cpus::Split`); the client's is [`ClientCell::client_cpus`].
    pub server_cpus: &'a str,
    pub registry_cpus: &'a str,
    /// The servers that keep running on the server's set while this cell
    /// measures another (an interleaved run starts every server of a post
    /// at once): each is sampled like the server and subtracted.
    pub idle: Vec<(&'a RunEngine, &'a str)>,
}

/// One client cell to run.
pub struct ClientCell<'a> {
    /// The run's id: the container carries it as its run label.
    pub run_id: &'a RunId,
    /// The client container's cpuset.
    pub client_cpus: &'a str,
    /// The cell's folder on the host, mounted at `/cell`: the spec is
    /// written there as `spec.json`; the client writes `report.json` and its
    /// interval log there; its output is saved there as `client.log`.
    pub dir: &'a Path,
    pub spec: &'a CellSpec,
    /// What the progress line calls the cell.
    pub label: &'a str,
    /// The server container (and its engine) whose CPU and memory counters
    /// are sampled while the client runs; placed on the client's
    /// measurement window, they give [`ClientRun::server_cost`].
    pub server: Option<(&'a RunEngine, &'a str)>,
    /// The server's registry container, sampled the same way but apart, so
    /// that its CPU does not count as the server's.
    pub registry: Option<(&'a RunEngine, &'a str)>,
    /// Watch the host's CPU beside the lab's over the window
    /// ([`ClientRun::host_load`]); None for no host figures.
    pub host: Option<HostWatch<'a>>,
    /// Seconds the client's clock is ahead of the orchestrator's, in which
    /// the samples are taken: the window is moved back by this much before
    /// the samples are placed on it (0 when the client runs on the
    /// orchestrator's machine, whose clock it shares).
    pub clock_offset_s: f64,
    /// Print every line of the client's output, not only its progress.
    pub verbose: bool,
    /// The network the client joins: the run's (its servers' loopback).
    pub network: &'a Network,
    /// The server's folder, when its client options name files in it (a
    /// descriptor set, a request's JSON): mounted read-only at
    /// [`crate::definitions::manifest::FILES_IN_CONTAINERS`], where the
    /// spec's options look for them.
    pub files: Option<&'a Path>,
}

/// Runs the client for `cell.spec` in a container of [`images::CLIENT`] on
/// `engine` (the client role's), pinned to `cell.client_cpus` and labelled
/// with `cell.run_id`, showing
/// its progress on one line ([`progress::CellBar`]).
///
/// A client that exits non-zero is an error carrying the last lines of its
/// log. The container is removed once it has exited.
pub async fn run_client(engine: &RunEngine, cell: ClientCell<'_>) -> Result<ClientRun> {
    let ClientCell {
        run_id,
        client_cpus,
        dir,
        spec,
        label,
        server,
        registry,
        host,
        verbose,
        clock_offset_s,
        network,
        files,
    } = cell;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // The engine needs an absolute host path for the bind mount.
    let dir = dir.canonicalize()?;
    std::fs::write(dir.join("spec.json"), serde_json::to_vec_pretty(spec)?)?;
    // The watchers' first readings come before the client starts, so that
    // they cover its window from the start however late their tasks run.
    let mut watchers = Watchers::start(engine, server, registry, host.as_ref(), client_cpus);
    watchers.first_readings().await;
    let (client, through_api) = start(engine, run_id, client_cpus, &dir, network, files).await?;
    watchers.client_started(&client).await;
    // A server that exits under the cell ends it at once: the client would
    // otherwise wait out the profile's warm-up limit (minutes) for a first
    // verified call that no server will ever answer.
    let server_gone = async {
        match server {
            Some((server_engine, id)) => match server_engine.wait(id).await {
                Ok(code) => code,
                // Its engine does not say (an outage): the client's own
                // end tells the run what happened.
                Err(_) => std::future::pending().await,
            },
            None => std::future::pending().await,
        }
    };
    let (log, server_exit) = follow(engine, &client, label, verbose, server_gone).await;
    let watched = watchers.finish().await;
    if let Some(code) = server_exit {
        let _ = engine.remove(&client).await;
        std::fs::write(dir.join("client.log"), &log)?;
        bail!(
            "the server's container exited with code {code} while the load client ran; \
             the client was stopped"
        );
    }
    let report = collect(engine, &client, through_api, &dir, &log).await?;
    let window = report
        .window_unix_s
        .map(|[start, end]| [start - clock_offset_s, end - clock_offset_s]);
    let costs = watched.over(window, &report, registry.is_some());
    Ok(ClientRun {
        report,
        log,
        server_cost: costs.server,
        registry_cost: costs.registry,
        host_load: costs.host_load,
    })
}

/// What watches a cell from outside its client while the client runs:
/// the server's, the registry's and the idle servers' counters, and the
/// host's CPU on the run's sets.
struct Watchers {
    server: Option<cost::Sampler>,
    registry: Option<cost::Sampler>,
    idle: Vec<cost::Sampler>,
    host: Option<(host_load::Sets, cost::Sampler<host_load::HostSample>)>,
}

/// What [`Watchers`] saw, to be placed on the client's window.
struct Watched {
    server: Vec<cost::Sample>,
    registry: Vec<cost::Sample>,
    idle: Vec<Vec<cost::Sample>>,
    host: Option<(host_load::Sets, Vec<host_load::HostSample>)>,
}

/// A cell's costs over its window, from [`Watched`].
struct CellCosts {
    server: Option<Cost>,
    registry: Option<Cost>,
    host_load: Option<HostLoad>,
}

impl Watchers {
    /// Starts the samplers of a cell whose client is about to start on
    /// `engine` (the host's only where the server's engine is this
    /// machine's too; [`Watchers::client_started`] drops it where the
    /// client's counters turn out not to be visible here).
    fn start(
        engine: &RunEngine,
        server: Option<(&RunEngine, &str)>,
        registry: Option<(&RunEngine, &str)>,
        host: Option<&HostWatch<'_>>,
        client_cpus: &str,
    ) -> Watchers {
        // The server under load counts its context switches (the client
        // counts its own); the registry and the idle servers do not: each
        // count reads every thread's status file.
        let server_sampler = server.map(|(engine, server)| {
            cost::Sampler::start_counting(engine, server, cost::SERVER_SWITCHES_EVERY)
        });
        let registry = registry.map(|(engine, registry)| cost::Sampler::start(engine, registry));
        let idle = host
            .iter()
            .flat_map(|h| &h.idle)
            .map(|(engine, id)| cost::Sampler::start(engine, id))
            .collect();
        // `/proc/stat` is this machine's: it says something of the cell's
        // sets only when the server and the client run on this kernel.
        let host_sets = host.zip(server).and_then(|(h, (server_engine, id))| {
            let here = engine.on_this_machine()
                && server_engine.on_this_machine()
                && cost::visible_here(id);
            here.then(|| host_load::Sets::parse(h.server_cpus, h.registry_cpus, client_cpus).ok())
                .flatten()
        });
        Watchers {
            server: server_sampler,
            registry,
            idle,
            host: host_sets.map(|sets| (sets.clone(), host_load::start(sets))),
        }
    }

    /// Waits until every sampler has made its first reading.
    async fn first_readings(&self) {
        let samplers = self.server.iter().chain(&self.registry).chain(&self.idle);
        for sampler in samplers {
            sampler.first_reading().await;
        }
        if let Some((_, sampler)) = &self.host {
            sampler.first_reading().await;
        }
    }

    /// `/proc/stat` says something of the cell's sets only when the client
    /// runs on this kernel too: otherwise the host's sampler is stopped.
    async fn client_started(&mut self, client: &str) {
        if !cost::visible_here(client) {
            if let Some((_, sampler)) = self.host.take() {
                sampler.finish().await;
            }
        }
    }

    async fn finish(self) -> Watched {
        let finish = |sampler: Option<cost::Sampler>| async move {
            match sampler {
                Some(sampler) => sampler.finish().await,
                None => Vec::new(),
            }
        };
        let server = finish(self.server).await;
        let registry = finish(self.registry).await;
        let mut idle = Vec::new();
        for sampler in self.idle {
            idle.push(sampler.finish().await);
        }
        let host = match self.host {
            Some((sets, sampler)) => Some((sets, sampler.finish().await)),
            None => None,
        };
        Watched {
            server,
            registry,
            idle,
            host,
        }
    }
}

impl Watched {
    /// The costs over the client's `window` (on the orchestrator's clock);
    /// the host's load only when every container's own share is known.
    fn over(&self, window: Option<[f64; 2]>, report: &ClientReport, registry: bool) -> CellCosts {
        let calls = report.calls_ok + report.calls_failed;
        let over_window = |samples: &[cost::Sample]| {
            window.and_then(|window| cost::over_window(samples, window, calls))
        };
        let server = over_window(&self.server);
        let registry_cost = over_window(&self.registry);
        let idle_costs: Vec<Option<Cost>> = self.idle.iter().map(|s| over_window(s)).collect();
        let host_load = (|| {
            let (sets, samples) = self.host.as_ref()?;
            let own = host_load::Own {
                server: server?.cpu_cores_busy,
                registry: if registry {
                    registry_cost?.cpu_cores_busy
                } else {
                    0.0
                },
                idle_servers: idle_costs
                    .iter()
                    .map(|c| c.map(|c| c.cpu_cores_busy))
                    .sum::<Option<f64>>()?,
                client: report.client_cost?.cpu_cores_busy,
            };
            host_load::load_over(samples, window?, sets, own, host_load::tick_s())
        })();
        CellCosts {
            server,
            registry: registry_cost,
            host_load,
        }
    }
}

/// Starts the client container of the cell whose spec is in `dir`; returns
/// its id and whether the cell folder goes through the API.
///
/// The environment's engine sees this filesystem: the cell folder is
/// bind-mounted. Another engine (maybe on another machine) gets the spec
/// through the API in a volume of the container's, and the folder back
/// the same way once the client exits ([`collect`]).
async fn start(
    engine: &impl Containers,
    run_id: &RunId,
    client_cpus: &str,
    dir: &Path,
    network: &Network,
    files: Option<&Path>,
) -> Result<(String, bool)> {
    let confinement = confine::client();
    let through_api = !engine.sees_local_files();
    if through_api && files.is_some() {
        bail!(
            "the client options name files of the server's folder, which reach the client only \
             on this machine's engine: run the client role here (leave out --client-host)"
        );
    }
    let spec_container = |binds: Vec<String>| ContainerSpec {
        name: format!("rpclab-client-{run_id}-{}", unique()),
        image: images::CLIENT,
        role: Role::Client.into(),
        run_id,
        env: Vec::new(),
        entrypoint: None,
        cmd: Some(
            ["run-spec", "--spec", "/cell/spec.json", "--out", "/cell"]
                .map(String::from)
                .to_vec(),
        ),
        cpuset: client_cpus,
        binds,
        confinement: &confinement,
        network,
    };
    let client = if through_api {
        let mut files = images::BuildContext::new();
        files.add(&dir.join("spec.json"), "spec.json")?;
        engine
            .start_with_files(spec_container(Vec::new()), "/cell", files.finish()?)
            .await?
    } else {
        confine::prepare_bind_dir(dir)?;
        let mut binds = vec![format!("{}:/cell", dir.display())];
        binds.extend(files.map(server_files_bind).transpose()?);
        engine.start(spec_container(binds)).await?
    };
    Ok((client, through_api))
}

/// Follows the client's output until it exits, its progress on one line
/// ([`progress::CellBar`]), every other line too when `verbose`; returns
/// the whole output so far, and the exit code that `server_gone` gave when
/// it ended first (the server exited while the client ran).
async fn follow(
    engine: &impl Containers,
    client: &str,
    label: &str,
    verbose: bool,
    server_gone: impl std::future::Future<Output = i64>,
) -> (String, Option<i64>) {
    let bar = progress::CellBar::new(label);
    let mut lines = Box::pin(engine.follow_logs(client));
    let mut server_gone = std::pin::pin!(server_gone);
    let mut log = String::new();
    let mut server_exit = None;
    loop {
        let chunk = tokio::select! {
            chunk = lines.next() => match chunk {
                Some(chunk) => chunk,
                None => break,
            },
            code = &mut server_gone => {
                server_exit = Some(code);
                break;
            }
        };
        for line in chunk.lines() {
            if line.starts_with(runner::PHASE_MARKER) {
                continue;
            } else if let Some(p) = line.strip_prefix(runner::PROGRESS_MARKER) {
                bar.update(p.trim());
            } else if verbose {
                bar.println(&format!("    {line}"));
            }
        }
        log.push_str(&chunk);
    }
    bar.finish();
    (log, server_exit)
}

/// Once the client exited: its folder fetched (through the API), the
/// container removed, its output saved as `client.log`, and the report
/// it wrote read back; a non-zero exit is an error with its last lines.
async fn collect(
    engine: &impl Containers,
    client: &str,
    through_api: bool,
    dir: &Path,
    log: &str,
) -> Result<ClientReport> {
    let code = engine.wait(client).await?;
    if through_api {
        let fetched = engine.download(client, "/cell").await;
        let unpacked = fetched.and_then(|tar| unpack_cell(&tar, dir));
        if let Err(e) = unpacked {
            let _ = engine.remove(client).await;
            return Err(e.context("cannot fetch the cell folder from the client container"));
        }
    }
    engine.remove(client).await?;
    std::fs::write(dir.join("client.log"), log)?;
    if code != 0 {
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "the load client exited with code {code}:\n{}",
            tail.join("\n")
        );
    }
    let report_path = dir.join("report.json");
    serde_json::from_slice(
        &std::fs::read(&report_path)
            .with_context(|| format!("the client wrote no {}", report_path.display()))?,
    )
    .with_context(|| format!("{} is not a client report", report_path.display()))
}

/// Writes the files of a container folder's tar (entries `cell/…`) into `dir`.
fn unpack_cell(tar: &[u8], dir: &Path) -> Result<()> {
    let mut archive = tar::Archive::new(tar);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let mut parts = path.components();
        parts.next(); // the folder's own name
        let rest = parts.as_path();
        if rest.as_os_str().is_empty() || entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        if rest
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            bail!("the client container's folder holds `{}`", path.display());
        }
        let target = dir.join(rest);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut out = std::fs::File::create(&target)
            .with_context(|| format!("cannot write {}", target.display()))?;
        std::io::copy(&mut entry, &mut out)?;
    }
    Ok(())
}

/// A short unique suffix for client container names within a run.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The read-only bind mount of a server's folder at
/// [`crate::definitions::manifest::FILES_IN_CONTAINERS`], for the files its
/// client options name (the engine needs an absolute path).
pub fn server_files_bind(folder: &Path) -> Result<String> {
    let folder = folder
        .canonicalize()
        .with_context(|| format!("cannot find {}", folder.display()))?;
    Ok(format!(
        "{}:{}:ro",
        folder.display(),
        crate::definitions::manifest::FILES_IN_CONTAINERS
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            // Written raw: the builder itself refuses `..` in names.
            h.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn a_cell_folder_comes_back_without_its_own_name() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_of(&[("cell/report.json", b"{}"), ("cell/sub/latency.hlog", b"#")]);
        unpack_cell(&tar, dir.path()).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("report.json")).unwrap(),
            b"{}"
        );
        assert_eq!(
            std::fs::read(dir.path().join("sub/latency.hlog")).unwrap(),
            b"#"
        );
    }

    #[test]
    fn a_cell_folder_cannot_write_outside_the_cell() {
        let dir = tempfile::tempdir().unwrap();
        let tar = tar_of(&[("cell/../escaped", b"x")]);
        assert!(unpack_cell(&tar, &dir.path().join("cell")).is_err());
        assert!(!dir.path().join("escaped").exists());
    }
}
