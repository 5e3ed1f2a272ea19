//! A run's private network: the servers under test (Java deserialization
//! endpoints among them) reachable by the run's own client and by no other
//! process of the machine.
//!
//! On one host, a run starts a *holder* container with a network namespace
//! of its own (Docker's `none` network: nothing but a loopback interface),
//! and every server, registry and client container of the run joins it
//! (`container:<holder>`). They still talk over 127.0.0.1 through the same
//! kernel loopback path as on the host's network, so the figures do not
//! change; but the host's 127.0.0.1 is another interface, where no lab
//! port listens. What the orchestrator itself would have called from the
//! host (a server's readiness probe, ZooKeeper's) runs inside the namespace
//! instead ([`crate::engine::readiness`], [`crate::engine::registry`]).
//!
//! `--network host` keeps the host's network: for host tools that call the
//! servers (`bench peers`), for multi-host runs (where the client is on
//! another machine and servers listen on a routable address, see
//! docs/multi-host.md), and for anyone who wants to reach a server by hand.

use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::engine::docker::{ContainerSpec, Engine, Network};
use crate::engine::images;
use anyhow::{bail, Result};
use std::fmt;
use std::str::FromStr;

/// The `--network` a user asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NetworkChoice {
    /// A namespace of the run's own (the default on one host).
    #[default]
    Private,
    /// The host's network.
    Host,
}

impl NetworkChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkChoice::Private => "private",
            NetworkChoice::Host => "host",
        }
    }
}

impl fmt::Display for NetworkChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for NetworkChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "private" => Ok(NetworkChoice::Private),
            "host" => Ok(NetworkChoice::Host),
            other => Err(format!(
                "unknown network {other:?}: `private` (a namespace of the run's own, the default) or `host`"
            )),
        }
    }
}

/// What a run's containers are exposed to, in the manifest's words.
pub fn exposure(choice: NetworkChoice, multi_host: bool, bind: &str) -> String {
    match (choice, multi_host) {
        (NetworkChoice::Private, _) => "private: the run's containers share a network namespace of their own (a holder container's); their 127.0.0.1 is not the host's, and no host process can connect to a server".into(),
        (NetworkChoice::Host, false) => "host: servers listen on the host's 127.0.0.1; any process of this machine can connect to them while the run lasts".into(),
        (NetworkChoice::Host, true) => format!("host, multi-host: servers listen on {bind}, reachable by every machine that can route to it while the run lasts"),
    }
}

/// Checks `choice` against the run's machines: a private namespace exists
/// on one machine only.
pub fn check(choice: Option<NetworkChoice>, multi_host: bool) -> Result<NetworkChoice> {
    match (choice, multi_host) {
        (Some(NetworkChoice::Private), true) => bail!(
            "--network private needs every role on one Docker engine: a network namespace cannot span engines or hosts; use --network host (docs/multi-host.md says what that exposes)"
        ),
        (Some(c), _) => Ok(c),
        (None, true) => Ok(NetworkChoice::Host),
        (None, false) => Ok(NetworkChoice::Private),
    }
}

/// Starts the run's holder on `engine` (the one engine of a single-host
/// run) and returns the network its containers join; [`Network::Host`] for
/// [`NetworkChoice::Host`]. The holder is labelled with the run like every
/// other container, so the run's scope removes it with them.
pub async fn open(
    engine: &Engine,
    choice: NetworkChoice,
    run_id: &RunId,
    cpus: &str,
) -> Result<Network> {
    if choice == NetworkChoice::Host {
        return Ok(Network::Host);
    }
    // Any image of the run with a `sleep` will do: the client's is built
    // for every run. Containers join it by name, which stays the same when
    // the holder is started again (after an engine restart, [`reopen`]).
    let name = format!("rpclab-network-{run_id}");
    let id = engine
        .start(ContainerSpec {
            name: name.clone(),
            image: images::CLIENT,
            role: Role::Client.into(),
            run_id,
            env: Vec::new(),
            entrypoint: Some(vec!["sleep".into(), "infinity".into()]),
            cmd: None,
            cpuset: cpus,
            binds: Vec::new(),
            confinement: &crate::basics::confine::client(),
            network: &Network::Own,
        })
        .await?;
    crate::say!(
        "network: a private namespace for the run (holder {name}, {})",
        &id[..12.min(id.len())]
    );
    Ok(Network::Joins(name))
}

/// Starts the holder of `network` again, under its name, after the run's
/// containers were removed (an engine that stopped answering came back);
/// nothing for the host's network.
pub async fn reopen(engine: &Engine, network: &Network, run_id: &RunId, cpus: &str) -> Result<()> {
    if let Network::Joins(_) = network {
        open(engine, NetworkChoice::Private, run_id, cpus).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_is_the_default_on_one_host_and_refused_across_hosts() {
        assert_eq!(check(None, false).unwrap(), NetworkChoice::Private);
        assert_eq!(check(None, true).unwrap(), NetworkChoice::Host);
        assert_eq!(
            check(Some(NetworkChoice::Host), false).unwrap(),
            NetworkChoice::Host
        );
        let refused = check(Some(NetworkChoice::Private), true)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("--network host"), "{refused}");
    }

    #[test]
    fn a_network_parses_from_its_name_and_an_unknown_one_names_both() {
        assert_eq!("host".parse::<NetworkChoice>(), Ok(NetworkChoice::Host));
        assert_eq!(
            "private".parse::<NetworkChoice>(),
            Ok(NetworkChoice::Private)
        );
        let e = "bridge".parse::<NetworkChoice>().unwrap_err();
        assert!(e.contains("`private`") && e.contains("`host`"), "{e}");
    }

    #[test]
    fn each_mode_gets_docker_s_name() {
        assert_eq!(Network::Host.mode(), "host");
        assert_eq!(Network::Own.mode(), "none");
        assert_eq!(Network::Joins("abc".into()).mode(), "container:abc");
    }
}
