//! A server's life in a run: its ports, its registry, its container
//! started pinned to the server's CPUs, its readiness (a verified call),
//! and what it left when it exited. And the one retry through an engine
//! that stopped answering ([`RunContext::through_outage`]), which the build,
//! a block's server and the rounds go through alike (a capacity search,
//! one variant, stops with its engine, as before).

use super::context::RunContext;
use super::record::Record;
use crate::basics::host;
use crate::basics::role::Role;
use crate::definitions::lab::Scenario;
use crate::definitions::manifest::{Manifest, Registry, Variant, FILES_IN_CONTAINERS};
use crate::engine::containers::{ContainerSpec, Containers, Network};
use crate::engine::netns;
use crate::engine::outage::AfterFailure;
use crate::engine::readiness;
use crate::engine::registry::{self, RunningRegistry};
use anyhow::{bail, Result};
use rpclab_model::phases::Phase;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

/// The containers of the server variant being measured.
#[derive(Clone, Copy)]
pub struct Running<'a> {
    /// Its container; `None` for a target, a service the lab did not
    /// start ([`Manifest::target`]).
    pub server: Option<&'a str>,
    /// Its registry (ZooKeeper), when it uses one.
    pub registry: Option<&'a str>,
    /// The port it listens on (its manifest's, unless an interleaved run
    /// moved it).
    pub port: u16,
    /// The servers kept running beside it, not under load (an interleaved
    /// run), whose CPU is told apart from the host's.
    pub idle: &'a [String],
}

/// One attempt of the work [`RunContext::through_outage`] carries: a
/// future that borrows the run's record for `'r`.
pub type Attempt<'r, T> = Pin<Box<dyn Future<Output = Result<T>> + 'r>>;

/// Says that what an attempt borrows (for `'c`) outlives its borrow of the
/// record (`'r`), which a closure's signature cannot say otherwise; the
/// argument is always `[]`.
pub type Within<'r, 'c> = [&'r &'c (); 0];

impl RunContext<'_> {
    /// Runs `attempt` until it succeeds, or fails while every engine
    /// answers; whenever it failed because an engine had stopped answering
    /// and came back ([`crate::engine::outage`]: the run's containers are
    /// then gone, its network's holder started again), it runs again, and
    /// picks up from what the record holds. Ok(Err): the work's own
    /// failure, which the caller charges to what it was doing. Err: the
    /// run stops (an engine did not come back).
    pub async fn through_outage<'c, T>(
        &'c self,
        record: &mut Record,
        mut attempt: impl for<'r> FnMut(&'r mut Record, Within<'r, 'c>) -> Attempt<'r, T>,
    ) -> Result<Result<T>> {
        loop {
            match attempt(record, []).await {
                Ok(done) => return Ok(Ok(done)),
                Err(e) => {
                    if self.after_failure().await? == AfterFailure::EnginesAnswer {
                        return Ok(Err(e));
                    }
                }
            }
        }
    }

    /// [`crate::engine::outage::Outage::after_failure`], and when an engine
    /// came back (the run's containers removed, its network's holder among
    /// them), the holder started again under its name, so that what starts
    /// next joins it.
    async fn after_failure(&self) -> Result<AfterFailure> {
        let after = self.outage.after_failure().await?;
        if after == AfterFailure::EngineBack {
            if let (Some(network), Some(docker)) = (self.network.get(), self.engine.docker()) {
                netns::reopen(docker, network, self.run_id, &self.prepared.split.client).await?;
            }
        }
        Ok(after)
    }

    /// Where the client calls `m` listening on `port`: a target's own
    /// address, or the server's address and the port: its container's own
    /// (a Pod's IP) where it has one, else the run's server address.
    pub async fn address_of(
        &self,
        m: &Manifest,
        server: Option<&str>,
        port: u16,
    ) -> Result<String> {
        if let Some(target) = &m.target {
            return Ok(target.clone());
        }
        let own = match server {
            Some(id) => self.engine.address(id).await?,
            None => None,
        };
        let host = own.unwrap_or_else(|| self.engines.roles.server_address.clone());
        Ok(format!("{host}:{port}"))
    }

    /// Whether the servers' ports are the orchestrator's to check: only on
    /// its own machine, and only on the host's network (a private one is
    /// the run's alone).
    pub fn checks_ports(&self) -> bool {
        self.engines.roles.server.machine().is_none() && *self.network() == Network::Host
    }

    /// Waits (up to `port_wait_s`) until `ports` are free.
    pub async fn wait_for(&self, ports: &[u16]) {
        let deadline = std::time::Instant::now() + Duration::from_secs(self.opts.port_wait_s);
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
                    self.opts.port_wait_s
                );
                told = true;
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// Waits (up to `port_wait_s`) until `ports` are free, then checks
    /// that they are, each named after its server (`names`, in order).
    pub async fn claim_ports(&self, ports: &[u16], names: &[&str], registry: bool) -> Result<()> {
        let mut wanted = ports.to_vec();
        if registry {
            wanted.push(registry::ZOOKEEPER_PORT);
        }
        self.wait_for(&wanted).await;
        for (port, name) in ports.iter().zip(names) {
            host::check_port_free(*port, name)?;
        }
        Ok(())
    }

    /// Starts a registry of `kind` (none for [`Registry::None`]) on the
    /// registry's engine and CPUs, for `server` (its name's part), and
    /// waits until it answers: its container's start counted as `start`,
    /// the wait as `readiness`.
    pub async fn start_registry(
        &self,
        kind: Registry,
        server: &str,
    ) -> Result<Option<RunningRegistry>> {
        let engine = &self.run_engines.registry;
        let launched = registry::launch(
            engine,
            kind,
            self.run_id,
            &self.prepared.split.registry,
            server,
            self.network(),
        );
        let started = self.timed(Phase::Start, launched).await?;
        let own = started.as_ref().map(|r| r.address.clone());
        *self.registry_at() = own.filter(|a| a != "127.0.0.1");
        if let Some(r) = &started {
            let answers = registry::ready(engine, r, self.network());
            self.timed(Phase::Readiness, answers).await?;
        }
        Ok(started)
    }

    /// Removes the registry [`RunContext::start_registry`] started.
    pub async fn remove_registry(&self, registry: Option<RunningRegistry>) -> Result<()> {
        *self.registry_at() = None;
        match registry {
            Some(r) => {
                self.timed(Phase::Teardown, self.run_engines.registry.remove(&r.id))
                    .await
            }
            None => Ok(()),
        }
    }

    fn registry_at(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.registry_address
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `m`'s client options for `v` as a client calling `target` takes
    /// them ([`Manifest::client_options_at`]), its files under `files`; a
    /// registry they name on 127.0.0.1 named at the running registry's own
    /// address where it has one (a Pod's IP: the client's 127.0.0.1 is its
    /// Pod's).
    pub fn client_options(
        &self,
        m: &Manifest,
        v: &Variant,
        files: &Path,
        target: &str,
    ) -> BTreeMap<String, String> {
        let mut options = m.client_options_at(v, files, target);
        if let Some(address) = self.registry_at().as_deref() {
            let loopback = format!("127.0.0.1:{}", registry::ZOOKEEPER_PORT);
            let own = format!("{address}:{}", registry::ZOOKEEPER_PORT);
            for value in options.values_mut() {
                *value = value.replace(&loopback, &own);
            }
        }
        options
    }

    /// Stops and removes the server container `id`.
    pub async fn remove_server(&self, id: &str) -> Result<()> {
        self.timed(Phase::Teardown, self.engine.remove(id)).await
    }

    /// Restarts the server container `id` (a cold JVM for the next
    /// repetition): stopped and started again, until its container runs.
    pub async fn restart_server(&self, id: &str) -> Result<()> {
        self.timed(Phase::Start, Containers::restart(self.engine, id))
            .await
    }

    /// Starts a server variant listening on `port`, pinned to the server's
    /// CPUs; returns its container id.
    pub async fn start_server(
        &self,
        m: &Manifest,
        v: &Variant,
        port: u16,
        registry: Option<&RunningRegistry>,
    ) -> Result<String> {
        let jvm_flags = self.prepared.profile.jvm_flags_of(&m.jvm_flags);
        // The interface to listen on: 127.0.0.1 unless the client is on
        // another machine (docs/multi-host.md), every interface of its Pod
        // on a cluster; the address the client calls it at, which it
        // registers and hands out (the same as the interface it binds, its
        // Pod's IP on a cluster).
        let (bind, advertise) = self
            .engine
            .listen()
            .unwrap_or((&self.engines.roles.bind, &self.engines.roles.server_address));
        let mut env = vec![
            format!("RPCLAB_PORT={port}"),
            format!("JAVA_OPTS={}", jvm_flags.join(" ")),
            format!("RPCLAB_BIND={bind}"),
            format!("RPCLAB_ADVERTISE={advertise}"),
        ];
        env.extend(m.env_of(v).iter().map(|(k, v)| format!("{k}={v}")));
        env.extend(registry.map(|r| r.server_env()).unwrap_or_default());
        crate::say!(
            "starting {} {} on {}:{port} (cpus {})",
            m.name,
            v.name,
            bind,
            &self.prepared.split.server
        );
        let image = m.image(v);
        let confinement = crate::basics::confine::server(&m.confinement, &jvm_flags)?;
        let started = self.engine.start(ContainerSpec {
            name: format!("rpclab-{}-{}-{}", m.name, sanitize(&v.name), self.run_id),
            image: &image,
            role: Role::Server.into(),
            run_id: self.run_id,
            env,
            entrypoint: None,
            cmd: None,
            cpuset: &self.prepared.split.server,
            binds: Vec::new(),
            confinement: &confinement,
            network: self.network(),
        });
        self.timed(Phase::Start, started).await
    }

    /// Waits until the server in container `id` (none for a target)
    /// answers a verified call on `port`.
    pub async fn wait_ready(
        &self,
        m: &Manifest,
        v: &Variant,
        id: Option<&str>,
        port: u16,
    ) -> Result<()> {
        let target = self.address_of(m, id, port).await?;
        // This process probes on the host's network, a container in a
        // private one (with the folder's files mounted).
        let here = *self.network() == Network::Host;
        let options = if here {
            self.client_options(m, v, &m.dir, &target)
        } else {
            self.client_options(m, v, Path::new(FILES_IN_CONTAINERS), &target)
        };
        let call = m.call_of(v);
        let hint = match &m.target {
            Some(target) => format!(
                "The lab did not start it: check that the service at {target} runs and answers {} as asked.",
                call.as_deref().unwrap_or("the call")
            ),
            None => format!(
                "Raise [readiness] timeout_s in {} if it is only slow.",
                m.outside.as_ref().map_or_else(
                    || format!("servers/{}/server.toml", m.name),
                    |folder| folder.join("server.toml").display().to_string()
                )
            ),
        };
        let name = format!("server {}", m.name);
        let ready = readiness::wait(
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
                cpus: &self.prepared.split.client,
                call: call.as_deref(),
                files: files_of(m, v).filter(|_| !here),
            },
        );
        self.timed(Phase::Readiness, ready).await
    }

    /// Err with what the server in container `id` left, when it exited
    /// during the cell of `scenario` at `level` (a target's is not the
    /// lab's to watch).
    pub async fn still_up(
        &self,
        id: Option<&str>,
        m: &Manifest,
        scenario: &Scenario,
        level: u32,
    ) -> Result<()> {
        let Some(id) = id else {
            return Ok(());
        };
        if let Some(code) = self.engine.exit_code(id).await? {
            bail!(self.exited(id, m, scenario, level, code).await);
        }
        Ok(())
    }

    /// What a server that exited with `code` during a cell leaves as the
    /// run's error: the code and the last lines of its log.
    pub async fn exited(
        &self,
        id: &str,
        m: &Manifest,
        scenario: &Scenario,
        level: u32,
        code: i64,
    ) -> String {
        let log = self.engine.log_tail(id, 30).await;
        format!(
            "server {} exited with code {code} during scenario {} (concurrency {level}); \
             cells measured before it are kept.\n--- last lines of its log ---\n{log}",
            m.name, scenario.name
        )
    }
}

/// The folder to mount into the client's and the probe's containers for
/// variant `v` of `m`: its own, when its client options name files there.
pub fn files_of<'m>(m: &'m Manifest, v: &Variant) -> Option<&'m Path> {
    (!m.named_files(v).is_empty()).then_some(m.dir.as_path())
}

/// A name as a container's or a folder's part: ASCII letters, digits, `.`
/// and `-` kept, anything else `_`.
pub fn sanitize(s: &str) -> String {
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
