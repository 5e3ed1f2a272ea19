//! What a run needs of an engine, whichever runs its containers: the
//! [`Containers`] trait, the container it starts ([`ContainerSpec`]), the
//! network stack it joins ([`Network`]) and the labels every container of
//! a run carries.
//!
//! Two engines implement it: Docker ([`crate::engine::docker::Engine`],
//! over its API) and Kubernetes (`engine::kubernetes::Cluster`, with the `kubernetes` feature,
//! one Pod per container in a namespace per run). The run code that starts,
//! watches, reads and removes containers (readiness, the registry, the
//! client's cell, the host calibration) is written against the trait, so
//! that plan, rounds, capacity and the report do not know which engine ran.
//! Building images stays Docker's: a cluster gets them loaded or pulled.

use crate::basics::role::Role;
use anyhow::Result;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

/// Label on everything the lab creates.
pub const LABEL_MANAGED: &str = "io.rpclab.managed";
/// Label naming the run that created a container.
pub const LABEL_RUN: &str = "io.rpclab.run";
/// Label naming a container's role (server, client, registry).
pub const LABEL_ROLE: &str = "io.rpclab.role";
/// A container the lab created.
pub struct LabContainer {
    pub id: String,
    pub name: String,
    /// The run that created it.
    pub run: String,
    /// All its labels (the owner's among them, see [`crate::basics::owner`]).
    pub labels: std::collections::BTreeMap<String, String>,
}

impl LabContainer {
    /// As the owner's rules see it ([`crate::basics::owner`]).
    pub fn seen(&self) -> crate::basics::owner::Seen<'_> {
        crate::basics::owner::Seen {
            id: &self.id,
            name: &self.name,
            run: &self.run,
            labels: &self.labels,
        }
    }
}

/// What a container is to its run, as its role label ([`LABEL_ROLE`]) says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContainerRole {
    /// One of the run's parts.
    Plays(Role),
    /// A host calibration, or the machine's CPU model read, before any
    /// server starts.
    Calibration,
}

impl ContainerRole {
    /// The role label's value.
    pub fn label(self) -> &'static str {
        match self {
            ContainerRole::Plays(role) => role.as_str(),
            ContainerRole::Calibration => "calibration",
        }
    }
}

impl From<Role> for ContainerRole {
    fn from(role: Role) -> ContainerRole {
        ContainerRole::Plays(role)
    }
}

/// What to start.
pub struct ContainerSpec<'a> {
    pub name: String,
    pub image: &'a str,
    pub role: ContainerRole,
    pub run_id: &'a crate::basics::run_id::RunId,
    pub env: Vec<String>,
    /// Overrides the image's entrypoint (e.g. another binary of the image).
    pub entrypoint: Option<Vec<String>>,
    pub cmd: Option<Vec<String>>,
    pub cpuset: &'a str,
    /// `host_path:container_path` bind mounts.
    pub binds: Vec<String>,
    /// User, capabilities, limits and filesystem: every container has one.
    pub confinement: &'a rpclab_model::manifest::Policy,
    /// Whose network stack it uses.
    pub network: &'a Network,
}

/// The network stack a container uses. Every lab container talks over
/// 127.0.0.1; what differs is whose loopback that is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    /// The host's: every process of the machine can reach its ports. For
    /// the side-by-side peers (host tools), `--target` and multi-host runs.
    Host,
    /// The namespace of the run's holder container (its name): servers,
    /// registries and clients of one run share a loopback no host process
    /// can reach ([`crate::engine::netns`]).
    Joins(String),
    /// A namespace of its own with only a loopback: the holder's.
    Own,
    /// A cluster's Pod network: each Pod has an address of its own, which
    /// the others call it at ([`Containers::address`]); servers listen on
    /// every interface of their Pod. The orchestrator is outside it, so
    /// what it would call (readiness, ZooKeeper) runs in a Pod.
    Pods,
}

impl Network {
    /// Docker's `NetworkMode` for it.
    pub fn mode(&self) -> String {
        match self {
            Network::Host => "host".into(),
            Network::Joins(holder) => format!("container:{holder}"),
            Network::Own => "none".into(),
            // Docker never runs a Pod network's containers.
            Network::Pods => "none".into(),
        }
    }
}

/// The labels of a container of `spec`'s run: managed, its run, its role,
/// its sharing, and the owner's (which process started it, so that a later
/// run can tell whether this one is still alive, [`crate::basics::owner`]).
/// A Kubernetes run's namespace carries them too.
pub fn run_labels(spec: &ContainerSpec<'_>) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([
        (LABEL_MANAGED.to_owned(), "true".to_owned()),
        (LABEL_RUN.to_owned(), spec.run_id.to_string()),
        (LABEL_ROLE.to_owned(), spec.role.label().to_owned()),
        (
            crate::basics::owner::LABEL_SHARING.to_owned(),
            spec.run_id.sharing().label().to_owned(),
        ),
    ]);
    labels.extend(crate::basics::owner::Owner::me().labels());
    labels
}

/// What a run asks of the engine that runs its containers. A container is
/// known by the id [`Containers::start`] returned.
///
/// The futures are `Send` so that a run may spawn them; an implementation
/// writes plain `async fn`s.
pub trait Containers: Clone + Send + Sync + 'static {
    /// Whether a container sees this machine's filesystem, so that a bind
    /// mount of one of its folders works (else files go through the API,
    /// [`Containers::start_with_files`]).
    fn sees_local_files(&self) -> bool;

    /// Creates and starts a container of `spec`; its id. With `files`
    /// (`(dir, tar)`), a fresh folder `dir` holds the files of `tar`, put
    /// there before the container's process starts; removing the
    /// container removes it. [`Containers::download`] reads it back.
    fn start_with(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> impl Future<Output = Result<String>> + Send;

    /// [`Containers::start_with`] without files.
    fn start(&self, spec: ContainerSpec<'_>) -> impl Future<Output = Result<String>> + Send {
        self.start_with(spec, None)
    }

    /// [`Containers::start_with`] with a fresh folder `dir` holding the
    /// files of `tar`.
    fn start_with_files(
        &self,
        spec: ContainerSpec<'_>,
        dir: &str,
        tar: Vec<u8>,
    ) -> impl Future<Output = Result<String>> + Send {
        self.start_with(spec, Some((dir, tar)))
    }

    /// Runs `cmd` inside the running container `id` (its namespaces, its
    /// user) to its end: its exit code and its output, both streams.
    fn exec(&self, id: &str, cmd: &[&str]) -> impl Future<Output = Result<(i64, String)>> + Send;

    /// Starts the container's process again, with the same settings.
    fn restart(&self, id: &str) -> impl Future<Output = Result<()>> + Send;

    /// None while the container runs; its exit code once it exited.
    fn exit_code(&self, id: &str) -> impl Future<Output = Result<Option<i64>>> + Send;

    /// Waits for the container to exit: its exit code.
    fn wait(&self, id: &str) -> impl Future<Output = Result<i64>> + Send;

    /// The last `lines` lines of its output (empty when it cannot be read).
    fn log_tail(&self, id: &str, lines: usize) -> impl Future<Output = String> + Send;

    /// Its output, chunk by chunk, until it exits.
    fn follow_logs(&self, id: &str) -> impl futures_util::Stream<Item = String> + Send + '_;

    /// The folder `path` of a container (running or exited) as a tar whose
    /// entries start with the folder's name.
    fn download(&self, id: &str, path: &str) -> impl Future<Output = Result<Vec<u8>>> + Send;

    /// Removes the container, running or not; one that is gone is no error.
    fn remove(&self, id: &str) -> impl Future<Output = Result<()>> + Send;

    /// Every container a lab run made (of `run_id` only, when given).
    fn lab_containers(
        &self,
        run_id: Option<&str>,
    ) -> impl Future<Output = Result<Vec<LabContainer>>> + Send;

    /// The address other containers of the run reach container `id` at,
    /// where it has one of its own (a Pod's IP); None where the run's
    /// containers share a loopback (Docker's private network) or the
    /// host's network, and call each other at the run's server address.
    fn address(&self, id: &str) -> impl Future<Output = Result<Option<String>>> + Send {
        let _ = id;
        async { Ok(None) }
    }

    /// Whether the engine answers a fresh request within `within`.
    fn answers(&self, within: Duration) -> impl Future<Output = bool> + Send;

    /// Removes every lab container (of `run_id` only, when given): how many.
    fn remove_lab_containers(
        &self,
        run_id: Option<&str>,
    ) -> impl Future<Output = Result<usize>> + Send {
        async move {
            let containers = self.lab_containers(run_id).await?;
            for c in &containers {
                self.remove(&c.id).await?;
            }
            Ok(containers.len())
        }
    }

    /// Runs a one-off container to its end and removes it: its exit code
    /// and the last `lines` lines of its output.
    fn run_to_end(
        &self,
        spec: ContainerSpec<'_>,
        lines: usize,
    ) -> impl Future<Output = Result<(i64, String)>> + Send {
        async move {
            let id = self.start(spec).await?;
            let code = self.wait(&id).await;
            let log = self.log_tail(&id, lines).await;
            self.remove(&id).await?;
            Ok((code?, log))
        }
    }
}
