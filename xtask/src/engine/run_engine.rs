//! The engine a run's containers run on, whichever it is: [`RunEngine`],
//! Docker's ([`crate::engine::docker::Engine`]) or a Kubernetes cluster's
//! (`engine::kubernetes::Cluster`, with the `kubernetes` feature), one per
//! role ([`RunEngines`]).
//!
//! The run holds its engines through this enum, which implements
//! [`Containers`] by handing each call to the engine it holds: the Docker
//! path does exactly what it did when the run held Docker's engine. What
//! only one engine has is a question the enum answers: the network the
//! run's containers use (Docker's private namespace behind a holder
//! container, [`crate::engine::netns`]; a cluster's Pod network), the
//! addresses servers listen on and advertise, and the description of the
//! machine a role runs on (`docker info`; the node's status). A container's
//! counters ([`crate::engine::cost`]) are read by each engine's own means
//! there. Images are always built on Docker ([`crate::engine::engines`]).

use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::engine::containers::{ContainerSpec, Containers, LabContainer, Network};
use crate::engine::docker::Engine;
use crate::engine::engines::{self, Engines};
#[cfg(feature = "kubernetes")]
use crate::engine::kubernetes::Cluster;
use anyhow::Result;
use futures_util::StreamExt;
use rpclab_model::manifest::HostRecord;
use std::time::Duration;

/// The engine that runs a role's containers.
#[derive(Clone)]
pub enum RunEngine {
    Docker(Engine),
    /// A cluster, and the node the run's checks chose (which the
    /// manifest describes).
    #[cfg(feature = "kubernetes")]
    Kubernetes(Cluster, String),
}

/// What a server is told to listen on and to advertise, on a cluster: every
/// interface of its Pod, and its Pod's IP (expanded by Kubernetes from
/// the variable every Pod gets, `engine::kubernetes::pod::POD_IP_VAR`).
#[cfg(feature = "kubernetes")]
const POD_BIND: &str = "0.0.0.0";
#[cfg(feature = "kubernetes")]
const POD_ADVERTISE: &str = "$(RPCLAB_POD_IP)";

impl RunEngine {
    /// Docker's engine, when it is one.
    pub fn docker(&self) -> Option<&Engine> {
        match self {
            RunEngine::Docker(engine) => Some(engine),
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(..) => None,
        }
    }

    /// The cluster, when it is one.
    #[cfg(feature = "kubernetes")]
    pub fn cluster(&self) -> Option<&Cluster> {
        match self {
            RunEngine::Docker(_) => None,
            RunEngine::Kubernetes(cluster, _) => Some(cluster),
        }
    }

    /// Whether its containers run on this machine's kernel, so that their
    /// cgroups and `/proc/stat` can be read here: a local Docker engine's.
    /// A cluster's node may be this machine, but the lab does not assume
    /// it.
    pub fn on_this_machine(&self) -> bool {
        match self {
            RunEngine::Docker(engine) => engine.endpoint.machine().is_none(),
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(..) => false,
        }
    }

    /// The network every container of a run on this engine uses, when the
    /// engine has one of its own (a cluster's Pod network); None: the run
    /// opens its own ([`crate::engine::netns`]).
    pub fn own_network(&self) -> Option<Network> {
        match self {
            RunEngine::Docker(_) => None,
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(..) => Some(Network::Pods),
        }
    }

    /// What a server listens on and advertises, when the engine decides
    /// it (on a cluster: every interface, and its Pod's IP); None: the
    /// run's `[hosts]` say.
    pub fn listen(&self) -> Option<(&'static str, &'static str)> {
        match self {
            RunEngine::Docker(_) => None,
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(..) => Some((POD_BIND, POD_ADVERTISE)),
        }
    }

    /// What the manifest records of the machine that runs `roles` on this
    /// engine (its calibration is the run's to add): `docker info`, or the
    /// node's status; the CPU model read in a container either way.
    pub async fn describe(&self, roles: &[Role], run_id: &RunId) -> Result<HostRecord> {
        match self {
            RunEngine::Docker(engine) => engines::describe(engine, roles, run_id).await,
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(cluster, node) => {
                let mut record = cluster.describe_node(node).await?;
                record.roles = roles.iter().map(|r| r.to_string()).collect();
                // Read on the shared pool: the container's cpuset ("0")
                // may be the server's, which is exclusive on this cluster.
                let mut shared = cluster.clone();
                shared.exclusive_sets.clear();
                record.cpu_model = engines::cpu_model(&shared, node, run_id).await?;
                Ok(record)
            }
        }
    }
}

/// Hands a [`Containers`] call to the engine a [`RunEngine`] holds.
macro_rules! each {
    ($self:expr, $engine:ident => $call:expr) => {
        match $self {
            RunEngine::Docker($engine) => $call,
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes($engine, _) => $call,
        }
    };
}

impl Containers for RunEngine {
    fn sees_local_files(&self) -> bool {
        each!(self, e => e.sees_local_files())
    }

    async fn start_with(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> Result<String> {
        each!(self, e => Containers::start_with(e, spec, files).await)
    }

    async fn exec(&self, id: &str, cmd: &[&str]) -> Result<(i64, String)> {
        each!(self, e => Containers::exec(e, id, cmd).await)
    }

    async fn restart(&self, id: &str) -> Result<()> {
        each!(self, e => Containers::restart(e, id).await)
    }

    async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        each!(self, e => Containers::exit_code(e, id).await)
    }

    async fn wait(&self, id: &str) -> Result<i64> {
        each!(self, e => Containers::wait(e, id).await)
    }

    async fn log_tail(&self, id: &str, lines: usize) -> String {
        each!(self, e => Containers::log_tail(e, id, lines).await)
    }

    fn follow_logs(&self, id: &str) -> impl futures_util::Stream<Item = String> + Send + '_ {
        match self {
            RunEngine::Docker(e) => Engine::follow_logs(e, id).boxed(),
            #[cfg(feature = "kubernetes")]
            RunEngine::Kubernetes(c, _) => c.log_stream(id).boxed(),
        }
    }

    async fn download(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        each!(self, e => Containers::download(e, id, path).await)
    }

    async fn remove(&self, id: &str) -> Result<()> {
        each!(self, e => Containers::remove(e, id).await)
    }

    async fn lab_containers(&self, run_id: Option<&str>) -> Result<Vec<LabContainer>> {
        each!(self, e => Containers::lab_containers(e, run_id).await)
    }

    async fn address(&self, id: &str) -> Result<Option<String>> {
        each!(self, e => Containers::address(e, id).await)
    }

    async fn answers(&self, within: Duration) -> bool {
        each!(self, e => Containers::answers(e, within).await)
    }

    async fn remove_lab_containers(&self, run_id: Option<&str>) -> Result<usize> {
        each!(self, e => Containers::remove_lab_containers(e, run_id).await)
    }
}

/// The engine of each role of a run.
pub struct RunEngines {
    pub server: RunEngine,
    pub registry: RunEngine,
    pub client: RunEngine,
}

impl RunEngines {
    /// The Docker engines of `engines`, each role's.
    pub fn docker(engines: &Engines) -> RunEngines {
        RunEngines {
            server: RunEngine::Docker(engines.server.clone()),
            registry: RunEngine::Docker(engines.registry.clone()),
            client: RunEngine::Docker(engines.client.clone()),
        }
    }

    /// One cluster for every role, the run's checks passed on `node`.
    #[cfg(feature = "kubernetes")]
    pub fn kubernetes(cluster: Cluster, node: String) -> RunEngines {
        let engine = RunEngine::Kubernetes(cluster, node);
        RunEngines {
            server: engine.clone(),
            registry: engine.clone(),
            client: engine,
        }
    }

    /// The cluster every role runs on, when the run is on one.
    #[cfg(feature = "kubernetes")]
    pub fn cluster(&self) -> Option<&Cluster> {
        self.server.cluster()
    }
}
