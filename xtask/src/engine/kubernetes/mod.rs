//! The Kubernetes engine: a run's containers as Pods on a cluster, over
//! its API (kube-rs, server-side apply; no `kubectl`).
//!
//! One namespace per run ([`pod::namespace_of`]), labelled as the run's
//! containers are; each container a Pod of it ([`pod`]): same image, user,
//! capabilities, read-only root and limits, Guaranteed with whole CPUs for
//! the roles that get exclusive cores ([`Cluster::exclusive`]), Burstable on
//! the shared pool for the others. Exec goes over the API's WebSocket,
//! logs through the log API, a folder comes back as a `tar` through exec.
//! Removing a run's containers deletes its namespace, and what is in it.
//!
//! Every Pod the cluster started is recorded ([`PodRecord`]): its node,
//! QoS class, the cpuset read from inside it, whether its node runs the
//! static CPU manager policy, and the image digest it ran.
//! [`preflight`] checks a cluster before anything starts. Images reach
//! the nodes loaded into their runtime (`imagePullPolicy: Never`), or
//! pushed to a registry the cluster pulls from ([`push`],
//! `--image-registry`; `IfNotPresent`).

pub mod pod;
pub mod preflight;
pub mod push;

use crate::basics::role::Role;
use crate::engine::containers::{
    ContainerRole, ContainerSpec, Containers, LabContainer, LABEL_MANAGED, LABEL_RUN,
};
use anyhow::{anyhow, bail, Context, Result};
use futures_util::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod};
use kube::api::{Api, AttachParams, DeleteParams, ListParams, LogParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use pod::{Cpu, State};
use rpclab_model::manifest::HostRecord;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// The field manager of every object the lab applies.
const MANAGER: &str = "rpclab";
/// How long a Pod may take to start its container.
const START_WITHIN: Duration = Duration::from_secs(180);
/// How often a Pod's status is read while waiting on it.
const POLL: Duration = Duration::from_millis(250);
/// Where a container's cpuset is, under cgroup v2 and v1.
const CPUSET_FILES: &str =
    "cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null || cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus";

/// The node label that says its kubelet runs the static CPU manager
/// policy, where its configuration cannot be read (tools/k8s/up sets it).
pub const STATIC_POLICY_LABEL: &str = "rpclab.io/cpu-manager";

/// What the manifest records of one Pod the cluster ran (`[[pods]]`).
pub use rpclab_model::manifest::PodRecord;

/// A connection to a Kubernetes cluster.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    /// The kubeconfig that was read.
    pub kubeconfig: PathBuf,
    /// The API server's address.
    pub server: String,
    /// Its version (`v1.34.4`).
    pub version: String,
    /// The roles whose Pods get whole CPUs of their own (Guaranteed); the
    /// others run on the shared pool.
    pub exclusive: BTreeSet<Role>,
    /// The CPU sets of those roles: a calibration measures the set its
    /// role will run on, so one on such a set is exclusive too.
    pub exclusive_sets: BTreeSet<String>,
    /// The image pull policy of an image loaded into the node's runtime
    /// (`Never`); a pushed one is pulled `IfNotPresent`.
    pub pull: String,
    /// Images pushed to a registry, by the lab's tag ([`Cluster::use_pushed`]).
    pushed: Arc<Mutex<BTreeMap<String, push::Pushed>>>,
    /// Nodes known to run the static CPU manager policy.
    static_nodes: Arc<Mutex<BTreeMap<String, bool>>>,
    /// The namespaces this process applied.
    namespaces: Arc<Mutex<BTreeSet<String>>>,
    /// The Pods this process made, by id, to make again on a restart.
    pods: Arc<Mutex<BTreeMap<String, Pod>>>,
    records: Arc<Mutex<Vec<PodRecord>>>,
}

/// The kubeconfig the lab reads: `KUBECONFIG` (its first file), else
/// `~/.kube/config`.
pub fn kubeconfig_path() -> PathBuf {
    if let Some(first) = std::env::var_os("KUBECONFIG")
        .and_then(|v| std::env::split_paths(&v).next())
        .filter(|p| !p.as_os_str().is_empty())
    {
        return first;
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".kube/config")
}

/// A memory quantity's bytes (`24531060Ki`, `2Gi`, `1000000`); None for
/// a spelling the lab does not read (decimal suffixes, exponents).
fn bytes_of(quantity: &str) -> Option<u64> {
    let units = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
    ];
    for (suffix, unit) in units {
        if let Some(n) = quantity.strip_suffix(suffix) {
            return n.parse::<u64>().ok().map(|n| n * unit);
        }
    }
    quantity.parse().ok()
}

/// Loads `images` from this machine's Docker engine into the node's
/// runtime with `tools/k8s/load-image` (the cluster `tools/k8s/up` made
/// here; a cluster elsewhere needs a registry, which the lab does not push
/// to yet). One line when it fails.
pub async fn load_images(root: &std::path::Path, images: &[String]) -> Result<()> {
    let script = root.join("tools/k8s/load-image");
    crate::say!("loading {} into the cluster's node", images.join(", "));
    let out = tokio::process::Command::new(&script)
        .args(images)
        .output()
        .await
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !out.status.success() {
        bail!(
            "{} could not load the run's images into the node: {}",
            script.display(),
            one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(())
}

/// One line, whatever the transport's message spans.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Cluster {
    /// Connects with the kubeconfig ([`kubeconfig_path`]) and checks the
    /// API server answers within 10 s; the error is one line naming the
    /// kubeconfig that was read.
    pub async fn connect() -> Result<Cluster> {
        let path = kubeconfig_path();
        let unreachable = |detail: String| {
            anyhow!(
                "no Kubernetes cluster reachable with the kubeconfig {}: {}",
                path.display(),
                one_line(&detail)
            )
        };
        let file = Kubeconfig::read_from(&path).map_err(|e| unreachable(e.to_string()))?;
        let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| unreachable(e.to_string()))?;
        let version = tokio::time::timeout(Duration::from_secs(10), client.apiserver_version())
            .await
            .map_err(|_| unreachable(format!("{server} gave no answer in 10 s")))?
            .map_err(|e| unreachable(format!("{server}: {e}")))?;
        Ok(Cluster {
            client,
            kubeconfig: path,
            server,
            version: version.git_version,
            exclusive: BTreeSet::from([Role::Server]),
            exclusive_sets: BTreeSet::new(),
            pull: "Never".into(),
            pushed: Arc::default(),
            static_nodes: Arc::default(),
            namespaces: Arc::default(),
            pods: Arc::default(),
            records: Arc::default(),
        })
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// From now on, a Pod of a pushed image names its reference in the
    /// registry, pulled `IfNotPresent`; other images stay as they are.
    pub fn use_pushed(&self, pushed: Vec<push::Pushed>) {
        self.pushed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(pushed.into_iter().map(|p| (p.image.clone(), p)));
    }

    /// The image a Pod of `image` names, and its pull policy.
    fn image_of(&self, image: &str) -> (String, String) {
        let pushed = self.pushed.lock().unwrap_or_else(|e| e.into_inner());
        match pushed.get(image) {
            Some(p) => (p.reference.clone(), "IfNotPresent".into()),
            None => (image.to_owned(), self.pull.clone()),
        }
    }

    /// Every Pod this connection started, as the manifest records them.
    pub fn records(&self) -> Vec<PodRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn pods_in(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// The Pod of a container id.
    async fn get(&self, id: &str) -> Result<Pod> {
        let (ns, name) = pod::split_id(id)?;
        self.pods_in(ns)
            .get(name)
            .await
            .with_context(|| format!("cannot read pod {id}"))
    }

    /// Applies the run's namespace (once per process and run).
    async fn ensure_namespace(&self, spec: &ContainerSpec<'_>) -> Result<String> {
        let ns = pod::namespace_of(spec.run_id);
        if self
            .namespaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&ns)
        {
            return Ok(ns);
        }
        let api: Api<Namespace> = Api::all(self.client.clone());
        api.patch(
            &ns,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&pod::namespace(spec)),
        )
        .await
        .with_context(|| format!("cannot apply namespace {ns}"))?;
        self.namespaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ns.clone());
        Ok(ns)
    }

    /// How `spec`'s Pod gets its CPU: whole CPUs for an exclusive role
    /// (and a calibration of its set), the shared pool otherwise.
    fn cpu_of(&self, spec: &ContainerSpec<'_>) -> Result<Cpu> {
        let exclusive = match spec.role {
            ContainerRole::Plays(role) => self.exclusive.contains(&role),
            ContainerRole::Calibration => self.exclusive_sets.contains(spec.cpuset),
        };
        Ok(if exclusive {
            Cpu::Exclusive(pod::cpu_count(spec.cpuset)?)
        } else {
            Cpu::Shared
        })
    }

    async fn start_pod(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> Result<String> {
        let ns = self.ensure_namespace(&spec).await?;
        let cpu = self.cpu_of(&spec)?;
        let (image, pull) = self.image_of(spec.image);
        let spec = ContainerSpec {
            image: &image,
            ..spec
        };
        let manifest = pod::pod(&spec, &ns, cpu, &pull, files.as_ref().map(|(d, _)| *d))?;
        let name = pod::pod_name(&spec);
        let id = pod::container_id(&ns, &name);
        if let Some((_, tar)) = files {
            let maps: Api<ConfigMap> = Api::namespaced(self.client.clone(), &ns);
            let map = pod::files_map(&ns, &name, tar, pod::labels(&spec));
            maps.patch(
                &pod::files_map_name(&name),
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&map),
            )
            .await
            .with_context(|| format!("cannot apply the files of pod {id}"))?;
        }
        self.apply_and_wait(&id, &manifest, cpu, spec.image, spec.role.label())
            .await?;
        Ok(id)
    }

    /// Applies `manifest` and waits until its `main` container started
    /// (or exited); records the Pod. A Pod that cannot start is removed,
    /// and the error says why (the kubelet's reason, or its last event).
    async fn apply_and_wait(
        &self,
        id: &str,
        manifest: &Pod,
        cpu: Cpu,
        image: &str,
        role: &str,
    ) -> Result<()> {
        let (ns, name) = pod::split_id(id)?;
        let api = self.pods_in(ns);
        api.patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(manifest),
        )
        .await
        .with_context(|| format!("cannot apply pod {id}"))?;
        self.pods
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), manifest.clone());
        let started = Instant::now();
        loop {
            let pod = api
                .get(name)
                .await
                .with_context(|| format!("cannot read pod {id}"))?;
            match pod::state_of(&pod, pod::MAIN) {
                State::Running | State::Exited(_) => {
                    self.record(id, &pod, cpu, image, role).await;
                    return Ok(());
                }
                State::Waiting(Some((reason, message))) if pod::hopeless(&reason) => {
                    let event = self.last_event(ns, name).await;
                    let _ = self.remove(id).await;
                    bail!(
                        "pod {id} cannot start its image {image}: {reason}: {}{}",
                        one_line(&message),
                        event.map(|e| format!(" (event: {e})")).unwrap_or_default()
                    );
                }
                State::Waiting(_) => {}
            }
            if started.elapsed() > START_WITHIN {
                let event = self.last_event(ns, name).await;
                let _ = self.remove(id).await;
                bail!(
                    "pod {id} did not start in {} s{}",
                    START_WITHIN.as_secs(),
                    event.map(|e| format!(": {e}")).unwrap_or_default()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The last event of a Pod, as `Reason: message`.
    async fn last_event(&self, ns: &str, name: &str) -> Option<String> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), ns);
        let list = events
            .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
            .await
            .ok()?;
        let last = list.items.into_iter().max_by_key(|e| {
            e.last_timestamp
                .as_ref()
                .map(|t| t.0.as_second())
                .unwrap_or_default()
        })?;
        Some(format!(
            "{}: {}",
            last.reason.unwrap_or_default(),
            one_line(&last.message.unwrap_or_default())
        ))
    }

    /// Records a started Pod: its node, QoS, cpuset from inside, image id.
    async fn record(&self, id: &str, pod: &Pod, cpu: Cpu, image: &str, role: &str) {
        let (ns, name) = pod::split_id(id).unwrap_or(("", id));
        let status = pod.status.clone().unwrap_or_default();
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let image_id = status
            .container_statuses
            .iter()
            .flatten()
            .find(|c| c.name == pod::MAIN)
            .map(|c| c.image_id.clone())
            .unwrap_or_default();
        let cpuset = self.cpuset_inside(id, pod).await;
        let static_policy = self.static_policy(&node).await.unwrap_or(false);
        let pushed = self
            .pushed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .find(|p| p.reference == image)
            .cloned();
        let record = PodRecord {
            namespace: ns.to_owned(),
            pod: name.to_owned(),
            role: role.to_owned(),
            node,
            qos: status.qos_class.unwrap_or_default(),
            cpu: cpu.describe(),
            cpuset,
            static_policy,
            image: image.to_owned(),
            pull: pushed
                .as_ref()
                .map_or(self.pull.clone(), |_| "IfNotPresent".into()),
            pushed_digest: pushed.map(|p| p.digest),
            image_id,
            ip: status.pod_ip.unwrap_or_default(),
        };
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.retain(|r| !(r.namespace == record.namespace && r.pod == record.pod));
        records.push(record);
    }

    /// The cpuset of Pod `id` as read inside it: in `main`, else (it ended
    /// first, as a short client may) in its `keeper`, which shares its
    /// CPUs (both on the shared pool); `unknown` when neither answers.
    async fn cpuset_inside(&self, id: &str, pod: &Pod) -> String {
        let has_keeper = pod
            .spec
            .as_ref()
            .is_some_and(|s| s.containers.iter().any(|c| c.name == pod::KEEPER));
        let mut containers = vec![pod::MAIN];
        if has_keeper {
            containers.push(pod::KEEPER);
        }
        for container in containers {
            if let Ok((out, _, 0)) = exec_in(self, id, container, &["sh", "-c", CPUSET_FILES]).await
            {
                let text = String::from_utf8_lossy(&out).trim().to_owned();
                if !text.is_empty() {
                    return text;
                }
            }
        }
        "unknown".into()
    }

    /// Whether `node`'s kubelet runs the static CPU manager policy: as its
    /// configuration says (`/configz` through the API server's node proxy),
    /// else, where the API server will not proxy to the node (a node on
    /// the loopback: "address not allowed"), as its label
    /// [`STATIC_POLICY_LABEL`] says.
    pub async fn static_policy(&self, node: &str) -> Result<bool> {
        if let Some(known) = self
            .static_nodes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
        {
            return Ok(*known);
        }
        let request = http::Request::get(format!("/api/v1/nodes/{node}/proxy/configz"))
            .body(Vec::new())
            .context("a configz request")?;
        let on = match self.client.request::<serde_json::Value>(request).await {
            Ok(config) => config["kubeletconfig"]["cpuManagerPolicy"].as_str() == Some("static"),
            Err(_) => {
                let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(self.client.clone());
                let labels = nodes
                    .get(node)
                    .await
                    .with_context(|| format!("cannot read node {node}"))?
                    .metadata
                    .labels
                    .unwrap_or_default();
                labels.get(STATIC_POLICY_LABEL).map(String::as_str) == Some("static")
            }
        };
        self.static_nodes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(node.to_owned(), on);
        Ok(on)
    }

    /// The address other Pods reach a container at (its Pod's IP; the
    /// node's, on the host network).
    pub async fn address(&self, id: &str) -> Result<String> {
        self.get(id)
            .await?
            .status
            .and_then(|s| s.pod_ip)
            .with_context(|| format!("pod {id} has no IP"))
    }

    /// What the manifest records of node `name`'s machine, from its
    /// status (`[[hosts]]`: CPUs, memory, kernel, OS, runtime and kubelet
    /// versions); the roles, CPU model and calibration are the run's to
    /// add. The clock is not compared (the API gives no node's time): 0,
    /// with an unknown uncertainty (NaN is no TOML; -1 says "not measured").
    pub async fn describe_node(&self, name: &str) -> Result<HostRecord> {
        let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(self.client.clone());
        let node = nodes
            .get(name)
            .await
            .with_context(|| format!("cannot read node {name}"))?;
        let status = node.status.unwrap_or_default();
        let info = status.node_info.unwrap_or_default();
        let capacity = status.capacity.unwrap_or_default();
        let quantity = |key: &str| capacity.get(key).map(|q| q.0.clone()).unwrap_or_default();
        let cores = quantity("cpu").parse::<usize>().unwrap_or(0);
        let memory_gib = bytes_of(&quantity("memory"))
            .map(|b| (b as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0)
            .unwrap_or(0.0);
        Ok(HostRecord {
            roles: Vec::new(),
            endpoint: self.server.clone(),
            engine_id: format!("kubernetes node {name} ({})", info.machine_id),
            data_root: String::new(),
            hostname: name.to_owned(),
            cpu_model: String::new(),
            cores,
            memory_gib,
            kernel: info.kernel_version,
            operating_system: info.os_image,
            docker_version: format!(
                "{} (kubelet {}, Kubernetes {})",
                info.container_runtime_version, info.kubelet_version, self.version
            ),
            clock: rpclab_model::manifest::ClockOffset {
                offset_ms: 0.0,
                uncertainty_ms: -1.0,
            },
            clock_applied: false,
            calibration: Default::default(),
            images: Default::default(),
        })
    }

    /// The namespaces of lab runs (of `run_id` only, when given).
    pub async fn lab_namespaces(&self, run_id: Option<&str>) -> Result<Vec<Namespace>> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let list = api
            .list(&ListParams::default().labels(&selector(run_id)))
            .await
            .context("cannot list namespaces")?;
        Ok(list.items)
    }

    /// Deletes the namespaces of lab runs (of `run_id` only, when given)
    /// and waits until they are gone: how many there were.
    pub async fn remove_namespaces(&self, run_id: Option<&str>) -> Result<usize> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let found = self.lab_namespaces(run_id).await?;
        for ns in &found {
            let name = ns.metadata.name.clone().unwrap_or_default();
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e).with_context(|| format!("cannot delete namespace {name}")),
            }
            self.namespaces
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&name);
        }
        let started = Instant::now();
        while !self.lab_namespaces(run_id).await?.is_empty() {
            if started.elapsed() > Duration::from_secs(120) {
                bail!("the run's namespaces were not gone 120 s after their deletion");
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        Ok(found.len())
    }
}

/// The label selector of lab objects (of `run_id` only, when given).
fn selector(run_id: Option<&str>) -> String {
    match run_id {
        Some(run) => format!("{LABEL_MANAGED}=true,{LABEL_RUN}={}", pod::label_value(run)),
        None => format!("{LABEL_MANAGED}=true,{LABEL_RUN}"),
    }
}

impl Containers for Cluster {
    fn sees_local_files(&self) -> bool {
        false
    }

    async fn start_with(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> Result<String> {
        self.start_pod(spec, files).await
    }

    async fn exec(&self, id: &str, cmd: &[&str]) -> Result<(i64, String)> {
        let (mut out, err, code) = exec_in(self, id, pod::MAIN, cmd).await?;
        out.extend_from_slice(&err);
        Ok((code, String::from_utf8_lossy(&out).into_owned()))
    }

    async fn restart(&self, id: &str) -> Result<()> {
        let manifest = self
            .pods
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
            .with_context(|| format!("pod {id} was not started by this process"))?;
        let (ns, name) = pod::split_id(id)?;
        self.delete_pod(ns, name).await?;
        let record = self
            .records()
            .into_iter()
            .find(|r| pod::container_id(&r.namespace, &r.pod) == id);
        let cpu = match manifest
            .spec
            .as_ref()
            .and_then(|s| s.containers[0].resources.as_ref())
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("cpu"))
        {
            Some(q) => Cpu::Exclusive(q.0.parse().unwrap_or(1)),
            None => Cpu::Shared,
        };
        let (image, role) = record.map(|r| (r.image, r.role)).unwrap_or_default();
        self.apply_and_wait(id, &manifest, cpu, &image, &role).await
    }

    async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        Ok(match pod::state_of(&self.get(id).await?, pod::MAIN) {
            State::Exited(code) => Some(code),
            _ => None,
        })
    }

    async fn wait(&self, id: &str) -> Result<i64> {
        loop {
            if let Some(code) = Containers::exit_code(self, id).await? {
                return Ok(code);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn log_tail(&self, id: &str, lines: usize) -> String {
        let Ok((ns, name)) = pod::split_id(id) else {
            return String::new();
        };
        let params = LogParams {
            container: Some(pod::MAIN.into()),
            tail_lines: Some(lines as i64),
            ..Default::default()
        };
        self.pods_in(ns)
            .logs(name, &params)
            .await
            .unwrap_or_default()
    }

    fn follow_logs(&self, id: &str) -> impl futures_util::Stream<Item = String> + Send + '_ {
        self.log_stream(id)
    }

    async fn download(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        let path = path.trim_end_matches('/');
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        let parent = if parent.is_empty() { "/" } else { parent };
        // The keeper holds the folder after `main` exited.
        let (tar, err, code) = exec_in(
            self,
            id,
            pod::KEEPER,
            &["tar", "-cf", "-", "-C", parent, name],
        )
        .await?;
        if code != 0 {
            bail!(
                "cannot read {path} of pod {id}: tar exited with {code}: {}",
                one_line(&String::from_utf8_lossy(&err))
            );
        }
        Ok(tar)
    }

    async fn remove(&self, id: &str) -> Result<()> {
        let (ns, name) = pod::split_id(id)?;
        self.delete_pod(ns, name).await?;
        let maps: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
        match maps
            .delete(&pod::files_map_name(name), &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot delete the files of pod {id}")),
        }
    }

    async fn lab_containers(&self, run_id: Option<&str>) -> Result<Vec<LabContainer>> {
        let api: Api<Pod> = Api::all(self.client.clone());
        let list = api
            .list(&ListParams::default().labels(&selector(run_id)))
            .await
            .context("cannot list pods")?;
        Ok(list
            .items
            .into_iter()
            .map(|p| {
                let labels = p.metadata.labels.clone().unwrap_or_default();
                let ns = p.metadata.namespace.clone().unwrap_or_default();
                let name = p.metadata.name.clone().unwrap_or_default();
                LabContainer {
                    id: pod::container_id(&ns, &name),
                    name,
                    run: labels.get(LABEL_RUN).cloned().unwrap_or_default(),
                    labels,
                }
            })
            .collect())
    }

    async fn address(&self, id: &str) -> Result<Option<String>> {
        Cluster::address(self, id).await.map(Some)
    }

    async fn answers(&self, within: Duration) -> bool {
        matches!(
            tokio::time::timeout(within, self.client.apiserver_version()).await,
            Ok(Ok(_))
        )
    }

    /// Deletes the run's namespaces: everything in them goes too.
    async fn remove_lab_containers(&self, run_id: Option<&str>) -> Result<usize> {
        let pods = self.lab_containers(run_id).await?.len();
        self.remove_namespaces(run_id).await?;
        Ok(pods)
    }
}

impl Cluster {
    /// Its output, chunk by chunk, until it exits ([`Containers::follow_logs`]),
    /// borrowing only the connection.
    pub fn log_stream(&self, id: &str) -> impl futures_util::Stream<Item = String> + Send + '_ {
        let id = id.to_owned();
        let lines = async move {
            let (ns, name) = pod::split_id(&id).ok()?;
            let params = LogParams {
                container: Some(pod::MAIN.into()),
                follow: true,
                ..Default::default()
            };
            let stream = self.pods_in(ns).log_stream(name, &params).await.ok()?;
            Some(
                stream
                    .lines()
                    .filter_map(|l| async move { l.ok().map(|l| l + "\n") }),
            )
        };
        futures_util::stream::once(lines)
            .filter_map(|s| async move { s })
            .flatten()
    }

    /// Deletes a Pod at once and waits until it is gone (its CPUs free).
    async fn delete_pod(&self, ns: &str, name: &str) -> Result<()> {
        let api = self.pods_in(ns);
        match api
            .delete(
                name,
                &DeleteParams {
                    grace_period_seconds: Some(0),
                    ..Default::default()
                },
            )
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("cannot delete pod {ns}/{name}")),
        }
        let started = Instant::now();
        loop {
            match api.get_opt(name).await {
                Ok(None) => return Ok(()),
                Ok(Some(_)) if started.elapsed() < Duration::from_secs(60) => {
                    tokio::time::sleep(POLL).await
                }
                Ok(Some(_)) => bail!("pod {ns}/{name} was not gone 60 s after its deletion"),
                Err(e) => return Err(e).with_context(|| format!("cannot read pod {ns}/{name}")),
            }
        }
    }
}

/// Runs `cmd` in `container` of `id`'s Pod over the API's WebSocket.
/// Its standard output, its standard error and its exit code.
async fn exec_in(
    cluster: &Cluster,
    id: &str,
    container: &str,
    cmd: &[&str],
) -> Result<(Vec<u8>, Vec<u8>, i64)> {
    let (ns, name) = pod::split_id(id)?;
    let params = AttachParams::default()
        .container(container)
        .stdin(false)
        .stdout(true)
        .stderr(true);
    let mut attached = cluster
        .pods_in(ns)
        .exec(
            name,
            cmd.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            &params,
        )
        .await
        .with_context(|| format!("cannot run {cmd:?} in pod {id}"))?;
    let mut stdout = attached.stdout().context("no standard output")?;
    let mut stderr = attached.stderr().context("no standard error")?;
    let status = attached.take_status().context("no exit status")?;
    let mut out = Vec::new();
    let mut err = Vec::new();
    let (a, b) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
    a.and(b)
        .with_context(|| format!("cannot read the output of {cmd:?} in pod {id}"))?;
    let status = status.await;
    let _ = attached.join().await;
    Ok((out, err, exit_code_of(status.as_ref())))
}

/// The exit code an exec's status carries: 0 for success, the
/// `ExitCode` cause otherwise, -1 when it says none.
fn exit_code_of(status: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>) -> i64 {
    let Some(status) = status else {
        return -1;
    };
    if status.status.as_deref() == Some("Success") {
        return 0;
    }
    status
        .details
        .as_ref()
        .and_then(|d| d.causes.as_ref())
        .and_then(|causes| {
            causes
                .iter()
                .find(|c| c.reason.as_deref() == Some("ExitCode"))
                .and_then(|c| c.message.as_deref()?.parse().ok())
        })
        .unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusCause, StatusDetails};

    #[test]
    fn an_execs_status_gives_its_exit_code() {
        let success = Status {
            status: Some("Success".into()),
            ..Default::default()
        };
        assert_eq!(exit_code_of(Some(&success)), 0);
        let failed = Status {
            status: Some("Failure".into()),
            reason: Some("NonZeroExitCode".into()),
            details: Some(StatusDetails {
                causes: Some(vec![StatusCause {
                    reason: Some("ExitCode".into()),
                    message: Some("3".into()),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(exit_code_of(Some(&failed)), 3);
        assert_eq!(exit_code_of(None), -1);
    }

    #[test]
    fn a_runs_objects_are_selected_by_its_labels() {
        assert_eq!(
            selector(Some("20261207T181500Z-4242")),
            "io.rpclab.managed=true,io.rpclab.run=20261207T181500Z-4242"
        );
        assert_eq!(selector(None), "io.rpclab.managed=true,io.rpclab.run");
    }

    #[test]
    fn a_nodes_memory_is_read_in_bytes() {
        assert_eq!(bytes_of("24531060Ki"), Some(24531060 * 1024));
        assert_eq!(bytes_of("2Gi"), Some(2 << 30));
        assert_eq!(bytes_of("1000"), Some(1000));
        assert_eq!(bytes_of("1G"), None);
    }

    #[test]
    fn a_message_is_one_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
    }
}
