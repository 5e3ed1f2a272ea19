//! Registries started beside the servers that need one (ZooKeeper for
//! Dubbo, Motan and SOFA-RPC providers).
//!
//! A registry is started fresh for each server variant, pinned to the
//! server's CPUs (it is part of what the server side costs), checked ready
//! with a real ZooKeeper request (a session and a `getChildren`), and
//! removed with the server.

use crate::basics::host;
use crate::basics::run_id::RunId;
use crate::definitions::manifest::Registry;
use crate::engine::containers::{ContainerSpec, Containers, Network};
use crate::engine::images;
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

/// ZooKeeper's client port on 127.0.0.1.
pub const ZOOKEEPER_PORT: u16 = 2181;

/// A registry container of the current run.
pub struct RunningRegistry {
    pub id: String,
    pub kind: Registry,
    /// The address servers reach it at: 127.0.0.1 where they share its
    /// loopback, its Pod's IP on a cluster.
    pub address: String,
}

impl RunningRegistry {
    /// Environment a server needs to find this registry.
    pub fn server_env(&self) -> Vec<String> {
        match self.kind {
            Registry::Zookeeper => {
                vec![format!(
                    "ZK_ADDRESS=zookeeper://{}:{ZOOKEEPER_PORT}",
                    self.address
                )]
            }
            Registry::None => Vec::new(),
        }
    }
}

/// Starts the registry `kind` (nothing for `none`), until its container
/// runs; [`ready`] then waits until it answers (two steps, so that a run
/// can tell a container's start from ZooKeeper's).
pub async fn launch(
    engine: &impl Containers,
    kind: Registry,
    run_id: &RunId,
    cpus: &str,
    server: &str,
    network: &Network,
) -> Result<Option<RunningRegistry>> {
    if kind == Registry::None {
        return Ok(None);
    }
    if *network == Network::Host {
        host::check_port_free(ZOOKEEPER_PORT, &format!("{server}'s ZooKeeper registry"))?;
    }
    let on = if *network == Network::Pods {
        "its Pod's IP"
    } else {
        "127.0.0.1"
    };
    crate::say!("starting ZooKeeper for {server} on {on}:{ZOOKEEPER_PORT} (cpus {cpus})");
    let id = engine
        .start(ContainerSpec {
            name: format!("rpclab-zookeeper-{server}-{run_id}"),
            image: images::ZOOKEEPER,
            role: crate::basics::role::Role::Registry.into(),
            run_id,
            env: registry_env(network),
            entrypoint: None,
            cmd: None,
            cpuset: cpus,
            binds: Vec::new(),
            confinement: &crate::basics::confine::registry(),
            network,
        })
        .await?;
    let address = engine
        .address(&id)
        .await?
        .unwrap_or_else(|| "127.0.0.1".into());
    Ok(Some(RunningRegistry { id, kind, address }))
}

/// ZooKeeper's environment: its port, and on a Pod network every interface
/// of its Pod to listen on (the servers are in other Pods); else its
/// image's default, 127.0.0.1.
fn registry_env(network: &Network) -> Vec<String> {
    let mut env = vec![format!("ZK_PORT={ZOOKEEPER_PORT}")];
    if *network == Network::Pods {
        env.push("RPCLAB_BIND=0.0.0.0".into());
    }
    env
}

/// Waits until the registry [`launch`] started answers a real request;
/// one that does not is removed.
pub async fn ready(
    engine: &impl Containers,
    registry: &RunningRegistry,
    network: &Network,
) -> Result<()> {
    let ready = match network {
        Network::Host => wait_zookeeper(engine, &registry.id).await,
        _ => wait_zookeeper_inside(engine, &registry.id).await,
    };
    if let Err(e) = ready {
        let _ = engine.remove(&registry.id).await;
        return Err(e);
    }
    Ok(())
}

async fn wait_zookeeper(engine: &impl Containers, id: &str) -> Result<()> {
    let started = Instant::now();
    let deadline = Duration::from_secs(60);
    let address = format!("127.0.0.1:{ZOOKEEPER_PORT}");
    let mut last_error = String::from("no attempt yet");
    while started.elapsed() < deadline {
        if let Some(code) = engine.exit_code(id).await? {
            let log = engine.log_tail(id, 30).await;
            bail!("ZooKeeper exited with code {code} before it was ready.\n--- last lines of its log ---\n{log}");
        }
        let attempt = async {
            let client = zookeeper_client::Client::connector()
                .with_connection_timeout(Duration::from_secs(2))
                .with_session_timeout(Duration::from_secs(6))
                .connect(&address)
                .await?;
            client.list_children("/").await
        };
        match tokio::time::timeout(Duration::from_secs(3), attempt).await {
            Ok(Ok(_)) => {
                crate::say!(
                    "ZooKeeper ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                return Ok(());
            }
            Ok(Err(e)) => last_error = e.to_string(),
            Err(_) => last_error = "timed out".into(),
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let log = engine.log_tail(id, 30).await;
    bail!("ZooKeeper was not ready after 60 s (last request: {last_error}).\n--- last lines of its log ---\n{log}")
}

/// [`wait_zookeeper`] where the orchestrator cannot reach ZooKeeper (a
/// run's private network): ZooKeeper's `srvr` command, sent from inside
/// the registry's container over bash's `/dev/tcp`, which answers
/// `Mode: standalone` once the server serves requests (and "not currently
/// serving requests" before). Not `zkCli ls /`: that is a JVM started
/// for each attempt, seconds of CPU on the registry's own core while
/// ZooKeeper starts on it, and it made a registry's start take 8 s
/// instead of 2.
async fn wait_zookeeper_inside(engine: &impl Containers, id: &str) -> Result<()> {
    let started = Instant::now();
    let deadline = Duration::from_secs(60);
    let mut last_error = String::from("no attempt yet");
    while started.elapsed() < deadline {
        if let Some(code) = engine.exit_code(id).await? {
            let log = engine.log_tail(id, 30).await;
            bail!("ZooKeeper exited with code {code} before it was ready.\n--- last lines of its log ---\n{log}");
        }
        let (code, out) = engine.exec(id, &["bash", "-c", SRVR]).await?;
        if code == 0 && out.contains("Mode: ") {
            crate::say!(
                "ZooKeeper ready after {:.1} s (srvr in the run's network)",
                started.elapsed().as_secs_f64()
            );
            return Ok(());
        }
        last_error = match out.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(line) => format!("exit {code}: {}", line.trim()),
            None => format!("exit {code}"),
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = engine.log_tail(id, 30).await;
    bail!("ZooKeeper was not ready after 60 s (last request: {last_error}).\n--- last lines of its log ---\n{log}")
}

/// ZooKeeper's `srvr` four-letter command to the registry's own port, its
/// answer on stdout (the image allows `ruok`, `srvr`, `stat` and `mntr`).
const SRVR: &str =
    "exec 3<>/dev/tcp/127.0.0.1/${ZK_PORT:-2181} && printf srvr >&3 && timeout 2 cat <&3";
