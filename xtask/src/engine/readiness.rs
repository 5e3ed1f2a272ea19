//! Readiness: a server is ready when a real, verified call of the contract
//! succeeds, not when its port opens (a JVM listens long before its RPC
//! stack can serialise the contract's types).
//!
//! On the host's network the orchestrator makes the call itself. In a run's
//! private network ([`crate::engine::netns`]) it cannot reach the server, so
//! a client container that joins the network makes it (`rpclab-client probe
//! --wait-s`), and its exit says whether the server got ready.

use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::engine::containers::{ContainerSpec, Containers, Network};
use crate::engine::images;
use anyhow::{bail, Result};
use rpclab_model::contract::Operation;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What to probe, and what to tell the user when it never answers.
pub struct Probe<'a> {
    /// How the server is called in messages.
    pub name: &'a str,
    /// Its container, watched for an early exit; `None` for a service the
    /// lab did not start.
    pub container: Option<&'a str>,
    pub protocol: &'a str,
    pub options: &'a BTreeMap<String, String>,
    pub target: &'a str,
    pub operation: Operation,
    pub timeout: Duration,
    /// Advice added to the time-out error.
    pub hint: &'a str,
    /// The server's network; in a private one, the probe runs from a
    /// container of run `run_id` pinned to `cpus` (the client's).
    pub network: &'a Network,
    pub run_id: &'a RunId,
    pub cpus: &'a str,
    /// The method a generic protocol's probe calls (the options name it),
    /// for the messages; `None`: `operation`, the contract's.
    pub call: Option<&'a str>,
    /// The server's folder, mounted read-only into the probe's container
    /// for the files its options name ([`crate::engine::client_container::server_files_bind`]).
    pub files: Option<&'a std::path::Path>,
}

/// The host's network, as a probe of a container on it names it.
const HOST: &Network = &Network::Host;

impl<'a> Probe<'a> {
    /// A probe of a container the bench harness started on the host's
    /// network, calling the contract's `hello` within two minutes: no
    /// private network, hint, generic method nor server files. The harness
    /// starts three such servers; each sets only what differs with
    /// `Probe { .., ..Probe::on_host(..) }`.
    pub fn on_host(
        name: &'a str,
        container: &'a str,
        protocol: &'a str,
        options: &'a BTreeMap<String, String>,
        target: &'a str,
        run_id: &'a RunId,
    ) -> Self {
        Probe {
            name,
            container: Some(container),
            protocol,
            options,
            target,
            operation: Operation::Hello,
            timeout: Duration::from_secs(120),
            hint: "",
            network: HOST,
            run_id,
            cpus: "",
            call: None,
            files: None,
        }
    }

    /// What the probe calls: the generic method, or the operation.
    fn what(&self) -> String {
        self.call
            .map_or_else(|| self.operation.to_string(), str::to_owned)
    }
}

/// Probes until a verified call succeeds, the container exits, or the time
/// runs out; the errors carry the last lines of the server's log.
pub async fn wait(engine: &impl Containers, p: Probe<'_>) -> Result<()> {
    if let Network::Joins(_) | Network::Pods = p.network {
        return wait_inside(engine, p).await;
    }
    let started = Instant::now();
    let mut last_error = String::from("no attempt yet");
    while started.elapsed() < p.timeout {
        if let Some(exited) = exited(engine, &p).await? {
            bail!(exited);
        }
        let probe = rpclab_client::probe::probe(
            p.protocol,
            p.options,
            p.target,
            p.operation,
            Duration::from_secs(2),
        );
        match probe.await {
            Ok(verified) => {
                crate::say!(
                    "{} ready after {:.1} s (probe {} verified in {:.2} ms)",
                    p.name,
                    started.elapsed().as_secs_f64(),
                    p.what(),
                    verified.latency.as_secs_f64() * 1e3
                );
                return Ok(());
            }
            Err(e) => last_error = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let log = log_of(engine, &p).await;
    bail!(
        "{} was not ready after {} s (last probe: {last_error}).\n{}{log}",
        p.name,
        p.timeout.as_secs(),
        p.hint
    )
}

/// What the server left when its container exited, if it did (a service
/// the lab did not start never has).
async fn exited(engine: &impl Containers, p: &Probe<'_>) -> Result<Option<String>> {
    let Some(container) = p.container else {
        return Ok(None);
    };
    Ok(match engine.exit_code(container).await? {
        Some(code) => Some(format!(
            "{} exited with code {code} before it was ready.{}",
            p.name,
            log_of(engine, p).await
        )),
        None => None,
    })
}

/// The last lines of the server's log under a heading, for an error; none
/// for a service the lab did not start.
async fn log_of(engine: &impl Containers, p: &Probe<'_>) -> String {
    match p.container {
        Some(container) => format!(
            "\n--- last lines of its log ---\n{}",
            engine.log_tail(container, 40).await
        ),
        None => String::new(),
    }
}

/// [`wait`] from inside the private network `p.network`: one probe
/// container retries until it verifies a call or `p.timeout` has passed,
/// while the server is watched for an early exit.
async fn wait_inside(engine: &impl Containers, p: Probe<'_>) -> Result<()> {
    let started = Instant::now();
    let mut cmd: Vec<String> = [
        "probe",
        "--protocol",
        p.protocol,
        "--target",
        p.target,
        "--operation",
        &p.operation.to_string(),
        "--timeout-s",
        "2",
        "--wait-s",
        &p.timeout.as_secs_f64().to_string(),
    ]
    .map(String::from)
    .to_vec();
    for (k, v) in p.options {
        cmd.extend(["--option".to_owned(), format!("{k}={v}")]);
    }
    let prober = engine
        .start(ContainerSpec {
            name: format!("rpclab-probe-{}-{}", p.name.replace(' ', "-"), p.run_id),
            image: images::CLIENT,
            role: Role::Client.into(),
            run_id: p.run_id,
            env: Vec::new(),
            entrypoint: None,
            cmd: Some(cmd),
            cpuset: p.cpus,
            binds: p
                .files
                .map(crate::engine::client_container::server_files_bind)
                .transpose()?
                .into_iter()
                .collect(),
            confinement: &crate::basics::confine::client(),
            network: p.network,
        })
        .await?;
    let outcome = loop {
        if let Some(exited) = exited(engine, &p).await? {
            break Err(anyhow::anyhow!(exited));
        }
        match engine.exit_code(&prober).await? {
            Some(0) => {
                let said = engine.log_tail(&prober, 1).await;
                crate::say!(
                    "{} ready after {:.1} s (probe in the run's network: {})",
                    p.name,
                    started.elapsed().as_secs_f64(),
                    said.trim()
                );
                break Ok(());
            }
            Some(_) => {
                let last = engine.log_tail(&prober, 3).await;
                let log = log_of(engine, &p).await;
                break Err(anyhow::anyhow!(
                    "{} was not ready after {} s (last probe: {}).\n{}{log}",
                    p.name,
                    p.timeout.as_secs(),
                    last.trim(),
                    p.hint
                ));
            }
            None => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    };
    engine.remove(&prober).await?;
    outcome
}
