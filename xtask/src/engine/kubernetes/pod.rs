//! A lab container as a Kubernetes Pod, and back: the names, the Pod made
//! of a [`ContainerSpec`], what its status says of the container. Pure (no
//! cluster), unit-tested.
//!
//! Each container of a run is a Pod of one container, `main`, in the run's
//! namespace ([`namespace_of`]), with the same image, entrypoint, command,
//! environment, user, capabilities, read-only root, memory limit and tmpfs
//! folders (memory-backed `emptyDir`s) as the Docker engine gives it
//! ([`crate::basics::confine`]), written as the Pod's and container's
//! security contexts. Its CPU:
//!
//! * [`Cpu::Exclusive`]: requests = limits, an integer CPU count (the
//!   CPUs of its cpuset) and the memory limit: a Guaranteed Pod, which the
//!   kubelet's static CPU manager gives cores of its own;
//! * [`Cpu::Shared`]: a memory request = limit and no CPU request: a
//!   Burstable Pod on the node's shared pool (which excludes every core
//!   given to a Guaranteed Pod).
//!
//! A Pod that gets files ([`files_map`]) has them from a ConfigMap, copied
//! by an init container into a memory-backed folder, and a second container
//! (`keeper`) that sleeps, so that the folder can be read back after
//! `main` exited (no exec reaches an exited container).

use crate::engine::containers::{run_labels, ContainerSpec, Network};
use anyhow::{bail, Context, Result};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapVolumeSource, Container, ContainerStatus,
    EmptyDirVolumeSource, EnvVar, Namespace, Pod, PodSecurityContext, PodSpec,
    ResourceRequirements, SeccompProfile, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rpclab_model::manifest::Policy;
use std::collections::BTreeMap;

/// The name of the lab's container in every Pod.
pub const MAIN: &str = "main";
/// The container that keeps a Pod with files alive after `main` exited.
pub const KEEPER: &str = "keeper";
/// Where the init container finds the files' tar.
const SEED: &str = "/rpclab-seed";
/// The key of the files' tar in their ConfigMap.
const SEED_KEY: &str = "files.tar";

/// How a Pod gets its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpu {
    /// Guaranteed QoS: this many whole CPUs, exclusive under the static
    /// CPU manager policy.
    Exclusive(u32),
    /// Burstable QoS: the node's shared pool.
    Shared,
}

impl Cpu {
    /// What the manifest says the Pod got.
    pub fn describe(self) -> String {
        match self {
            Cpu::Exclusive(n) => format!("guaranteed, {n} exclusive cpu"),
            Cpu::Shared => "burstable, shared cpus".into(),
        }
    }
}

/// The number of CPUs of a cpuset (`1`, `0-3`, `1,3`).
pub fn cpu_count(cpuset: &str) -> Result<u32> {
    let mut n = 0;
    for part in cpuset.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse()?, b.parse()?);
                if b < a {
                    bail!("`{part}` is no CPU range");
                }
                b - a + 1
            }
            None => {
                part.parse::<u32>()
                    .with_context(|| format!("`{part}` is no CPU"))?;
                1
            }
        };
    }
    if n == 0 {
        bail!("the cpuset `{cpuset}` names no CPU");
    }
    Ok(n)
}

/// `text` as a DNS label (RFC 1123: at most 63 lower-case letters, digits
/// and `-`, starting and ending alphanumeric). A name that had to be cut
/// keeps a hash of the whole, so that two long names stay apart.
pub fn dns_label(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if s.len() > 63 {
        use sha2::{Digest, Sha256};
        let hash = hex::encode(&Sha256::digest(text.as_bytes())[..4]);
        s.truncate(63 - hash.len() - 1);
        s = format!("{}-{hash}", s.trim_end_matches('-'));
    }
    let s = s.trim_matches('-').to_owned();
    if s.is_empty() {
        "x".into()
    } else {
        s
    }
}

/// A label value as Kubernetes takes it (at most 63 of `[A-Za-z0-9_.-]`,
/// alphanumeric at both ends).
pub fn label_value(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(63)
        .collect();
    s.trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

/// The namespace of run `run_id`.
pub fn namespace_of(run_id: &str) -> String {
    dns_label(&format!("rpclab-{run_id}"))
}

/// A container's id on the Kubernetes engine: `namespace/pod`.
pub fn container_id(namespace: &str, pod: &str) -> String {
    format!("{namespace}/{pod}")
}

/// The namespace and the Pod of a container id.
pub fn split_id(id: &str) -> Result<(&str, &str)> {
    id.split_once('/')
        .with_context(|| format!("`{id}` is no container of the Kubernetes engine (namespace/pod)"))
}

/// The labels of `spec`'s run, as valid label values.
pub fn labels(spec: &ContainerSpec<'_>) -> BTreeMap<String, String> {
    run_labels(spec)
        .into_iter()
        .map(|(k, v)| (k, label_value(&v)))
        .collect()
}

/// The run's namespace, labelled as its containers are (all but the role).
pub fn namespace(spec: &ContainerSpec<'_>) -> Namespace {
    let mut labels = labels(spec);
    labels.remove(crate::engine::containers::LABEL_ROLE);
    Namespace {
        metadata: ObjectMeta {
            name: Some(namespace_of(spec.run_id)),
            labels: Some(labels),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The ConfigMap holding the files a Pod starts with (a tar).
pub fn files_map(
    namespace: &str,
    pod: &str,
    tar: Vec<u8>,
    labels: BTreeMap<String, String>,
) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(files_map_name(pod)),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels),
            ..Default::default()
        },
        binary_data: Some(BTreeMap::from([(
            SEED_KEY.to_owned(),
            k8s_openapi::ByteString(tar),
        )])),
        ..Default::default()
    }
}

/// The name of a Pod's files' ConfigMap.
pub fn files_map_name(pod: &str) -> String {
    dns_label(&format!("{pod}-files"))
}

/// The user and group of a Policy's `uid:gid`.
fn user_of(user: &str) -> Result<(i64, i64)> {
    let (u, g) = user.split_once(':').unwrap_or((user, user));
    Ok((
        u.parse()
            .with_context(|| format!("user `{user}` is no uid"))?,
        g.parse()
            .with_context(|| format!("user `{user}` is no gid"))?,
    ))
}

/// The size of a tmpfs from its Docker mount options (`size=256m`).
fn tmpfs_size(options: &str) -> Option<Quantity> {
    let size = options.split(',').find_map(|o| o.strip_prefix("size="))?;
    let bytes = crate::basics::confine::parse_size(size).ok()?;
    Some(Quantity(bytes.to_string()))
}

/// The Pod for `spec`, in `namespace`, with `cpu`, its image pulled as
/// `pull` says (`Never` for images loaded into the node's runtime,
/// `IfNotPresent` for a registry's); with `files`, a folder of them.
pub fn pod(
    spec: &ContainerSpec<'_>,
    namespace: &str,
    cpu: Cpu,
    pull: &str,
    files: Option<&str>,
) -> Result<Pod> {
    if !spec.binds.is_empty() {
        bail!(
            "{} would bind-mount {}: on the Kubernetes engine a container sees no folder of this machine",
            spec.name,
            spec.binds.join(", ")
        );
    }
    let policy = spec.confinement;
    let (uid, gid) = user_of(&policy.user)?;
    let security = security_of(policy, uid, gid);
    let (mut volumes, mut mounts) = tmpfs_volumes(&policy.tmpfs);
    let env = env_of(spec);
    let mut main = Container {
        name: MAIN.into(),
        image: Some(spec.image.to_owned()),
        image_pull_policy: Some(pull.to_owned()),
        command: spec.entrypoint.clone(),
        args: spec.cmd.clone(),
        env: (!env.is_empty()).then_some(env),
        resources: Some(resources_of(policy, cpu)),
        security_context: Some(security.clone()),
        volume_mounts: None,
        ..Default::default()
    };
    let mut init_containers = None;
    let mut containers = Vec::new();
    if let Some(dir) = files {
        let helpers = FilesHelpers::new(spec, dir, cpu, pull, &security);
        volumes.extend(helpers.volumes);
        mounts.push(helpers.mount);
        init_containers = Some(vec![helpers.unpacker]);
        containers.push(helpers.keeper);
    }
    main.volume_mounts = (!mounts.is_empty()).then_some(mounts);
    containers.insert(0, main);
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(spec)),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels(spec)),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            init_containers,
            restart_policy: Some("Never".into()),
            host_network: Some(*spec.network == Network::Host),
            automount_service_account_token: Some(false),
            enable_service_links: Some(false),
            termination_grace_period_seconds: Some(2),
            security_context: Some(PodSecurityContext {
                run_as_user: Some(uid),
                run_as_group: Some(gid),
                run_as_non_root: Some(uid != 0),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            volumes: (!volumes.is_empty()).then_some(volumes),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// The main container's requests and limits, equal (Guaranteed QoS when
/// `cpu` is exclusive): the confinement's memory, and the exclusive CPUs.
fn resources_of(policy: &Policy, cpu: Cpu) -> ResourceRequirements {
    let memory = Quantity(policy.memory_bytes.to_string());
    let mut amounts = BTreeMap::from([("memory".to_owned(), memory)]);
    if let Cpu::Exclusive(n) = cpu {
        amounts.insert("cpu".into(), Quantity(n.to_string()));
    }
    ResourceRequirements {
        limits: Some(amounts.clone()),
        requests: Some(amounts),
        ..Default::default()
    }
}

/// The confinement as a container's security context: its user, no
/// privilege escalation, the read-only root, the capabilities.
fn security_of(policy: &Policy, uid: i64, gid: i64) -> SecurityContext {
    SecurityContext {
        run_as_user: Some(uid),
        run_as_group: Some(gid),
        run_as_non_root: Some(uid != 0),
        allow_privilege_escalation: Some(!policy.no_new_privileges),
        read_only_root_filesystem: Some(policy.read_only_rootfs),
        capabilities: Some(Capabilities {
            drop: Some(policy.cap_drop.clone()),
            add: (!policy.cap_add.is_empty()).then(|| policy.cap_add.clone()),
        }),
        ..Default::default()
    }
}

/// The confinement's tmpfs folders as memory-backed volumes, and their
/// mounts.
fn tmpfs_volumes(tmpfs: &BTreeMap<String, String>) -> (Vec<Volume>, Vec<VolumeMount>) {
    let mut volumes = Vec::new();
    let mut mounts = Vec::new();
    for (i, (path, options)) in tmpfs.iter().enumerate() {
        let name = format!("tmpfs-{i}");
        volumes.push(Volume {
            name: name.clone(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".into()),
                size_limit: tmpfs_size(options),
            }),
            ..Default::default()
        });
        mounts.push(VolumeMount {
            name,
            mount_path: path.clone(),
            ..Default::default()
        });
    }
    (volumes, mounts)
}

/// The variable every Pod gets first: its own IP (the downward API's
/// `status.podIP`), known only once it is scheduled. A later variable's
/// value may name it as `$(RPCLAB_POD_IP)`, which Kubernetes expands: a
/// server advertises its Pod IP so (`RPCLAB_ADVERTISE`).
pub const POD_IP_VAR: &str = "RPCLAB_POD_IP";

/// The spec's `KEY=value` environment as the Pod's variables, after
/// [`POD_IP_VAR`].
fn env_of(spec: &ContainerSpec<'_>) -> Vec<EnvVar> {
    let pod_ip = EnvVar {
        name: POD_IP_VAR.to_owned(),
        value_from: Some(k8s_openapi::api::core::v1::EnvVarSource {
            field_ref: Some(k8s_openapi::api::core::v1::ObjectFieldSelector {
                field_path: "status.podIP".to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    std::iter::once(pod_ip)
        .chain(spec.env.iter().map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            EnvVar {
                name: k.to_owned(),
                value: Some(v.to_owned()),
                ..Default::default()
            }
        }))
        .collect()
}

/// What a Pod with files in a folder adds: the folder (memory-backed) and
/// the ConfigMap seed's volume, the folder's mount for the main container,
/// an init container that unpacks the seed into it, and a keeper that
/// holds the Pod open so the files can be copied out after the main
/// container ends.
struct FilesHelpers {
    volumes: [Volume; 2],
    mount: VolumeMount,
    unpacker: Container,
    keeper: Container,
}

impl FilesHelpers {
    fn new(
        spec: &ContainerSpec<'_>,
        dir: &str,
        cpu: Cpu,
        pull: &str,
        security: &SecurityContext,
    ) -> FilesHelpers {
        let volumes = [
            Volume {
                name: "files".into(),
                empty_dir: Some(EmptyDirVolumeSource {
                    medium: Some("Memory".into()),
                    size_limit: Some(Quantity("256Mi".into())),
                }),
                ..Default::default()
            },
            Volume {
                name: "seed".into(),
                config_map: Some(ConfigMapVolumeSource {
                    name: files_map_name(&pod_name(spec)),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ];
        let mount = VolumeMount {
            name: "files".into(),
            mount_path: dir.to_owned(),
            ..Default::default()
        };
        // The helpers take no CPU of their own: a Guaranteed Pod needs
        // limits on every container, so theirs are the smallest.
        let small = ResourceRequirements {
            limits: Some(helper_amounts(cpu)),
            requests: Some(helper_amounts(cpu)),
            ..Default::default()
        };
        let unpacker = Container {
            name: "files".into(),
            image: Some(spec.image.to_owned()),
            image_pull_policy: Some(pull.to_owned()),
            command: Some(vec![
                "tar".into(),
                "-xf".into(),
                format!("{SEED}/{SEED_KEY}"),
                "-C".into(),
                dir.to_owned(),
            ]),
            resources: Some(small.clone()),
            security_context: Some(security.clone()),
            volume_mounts: Some(vec![
                mount.clone(),
                VolumeMount {
                    name: "seed".into(),
                    mount_path: SEED.into(),
                    read_only: Some(true),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        };
        let keeper = Container {
            name: KEEPER.into(),
            image: Some(spec.image.to_owned()),
            image_pull_policy: Some(pull.to_owned()),
            command: Some(vec!["sleep".into(), "infinity".into()]),
            resources: Some(small),
            security_context: Some(security.clone()),
            volume_mounts: Some(vec![mount.clone()]),
            ..Default::default()
        };
        FilesHelpers {
            volumes,
            mount,
            unpacker,
            keeper,
        }
    }
}

/// A helper container's requests and limits: memory, and for a Guaranteed
/// Pod a sliver of CPU (every container of it needs a CPU limit).
fn helper_amounts(cpu: Cpu) -> BTreeMap<String, Quantity> {
    let mut m = BTreeMap::from([("memory".to_owned(), Quantity("32Mi".into()))]);
    if let Cpu::Exclusive(_) = cpu {
        m.insert("cpu".into(), Quantity("10m".into()));
    }
    m
}

/// The Pod's name: the container's name as a DNS label.
pub fn pod_name(spec: &ContainerSpec<'_>) -> String {
    dns_label(&spec.name)
}

/// What a Pod's status says of its `main` container.
#[derive(Debug, PartialEq, Eq)]
pub enum State {
    /// Not started yet; the reason it waits, when the kubelet gave one.
    Waiting(Option<(String, String)>),
    Running,
    Exited(i64),
}

/// The state of `container` in `pod`.
pub fn state_of(pod: &Pod, container: &str) -> State {
    let status = pod.status.as_ref();
    let found: Option<&ContainerStatus> = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|all| all.iter().find(|c| c.name == container));
    let Some(state) = found.and_then(|c| c.state.as_ref()) else {
        // The init container may be what waits (its image, its files).
        let init = status
            .and_then(|s| s.init_container_statuses.as_ref())
            .and_then(|all| all.first())
            .and_then(|c| c.state.as_ref());
        if let Some(t) = init.and_then(|s| s.terminated.as_ref()) {
            if t.exit_code != 0 {
                return State::Exited(i64::from(t.exit_code));
            }
        }
        let why = init
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| Some((w.reason.clone()?, w.message.clone().unwrap_or_default())));
        if status.and_then(|s| s.phase.as_deref()) == Some("Failed") {
            return State::Exited(-1);
        }
        return State::Waiting(why);
    };
    if let Some(t) = &state.terminated {
        State::Exited(i64::from(t.exit_code))
    } else if state.running.is_some() {
        State::Running
    } else {
        State::Waiting(
            state
                .waiting
                .as_ref()
                .and_then(|w| Some((w.reason.clone()?, w.message.clone().unwrap_or_default()))),
        )
    }
}

/// Whether a waiting reason means the Pod will never start as it is.
pub fn hopeless(reason: &str) -> bool {
    matches!(
        reason,
        "ErrImagePull"
            | "ImagePullBackOff"
            | "ErrImageNeverPull"
            | "InvalidImageName"
            | "CreateContainerConfigError"
            | "CreateContainerError"
            | "RunContainerError"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basics::owner::Sharing;
    use crate::basics::role::Role;
    use crate::basics::run_id::RunId;

    /// `f` of a registry container's spec on `network` with `binds`.
    fn with_spec<T>(
        network: Network,
        binds: Vec<String>,
        f: impl FnOnce(&ContainerSpec<'_>) -> T,
    ) -> T {
        let run_id = RunId::new("20261207T181500Z-4242".into(), Sharing::Alone);
        let policy = crate::basics::confine::registry();
        let spec = ContainerSpec {
            name: "rpclab-zookeeper-dubbo-2.6-20261207T181500Z-4242".into(),
            image: "rpclab/zookeeper:3.9",
            role: Role::Registry.into(),
            run_id: &run_id,
            env: vec!["ZK_PORT=2181".into()],
            entrypoint: None,
            cmd: Some(vec!["run".into()]),
            cpuset: "1",
            binds,
            confinement: &policy,
            network: &network,
        };
        f(&spec)
    }

    #[test]
    fn cpusets_count_their_cpus() {
        assert_eq!(cpu_count("1").unwrap(), 1);
        assert_eq!(cpu_count("0-3").unwrap(), 4);
        assert_eq!(cpu_count("1,3,5-6").unwrap(), 4);
        assert!(cpu_count("").is_err() && cpu_count("3-1").is_err() && cpu_count("a").is_err());
    }

    #[test]
    fn names_are_dns_labels_and_long_ones_stay_apart() {
        assert_eq!(dns_label("rpclab-client-Run_1.2"), "rpclab-client-run-1-2");
        let a = dns_label(&format!("{}-a", "x".repeat(80)));
        let b = dns_label(&format!("{}-b", "x".repeat(80)));
        assert!(a.len() <= 63 && b.len() <= 63 && a != b, "{a} {b}");
        assert_eq!(label_value("host name/with:odd"), "host_name_with_odd");
        assert_eq!(split_id("ns/pod").unwrap(), ("ns", "pod"));
        assert!(split_id("no-slash").is_err());
    }

    #[test]
    fn a_pod_is_confined_as_the_container_and_guaranteed_when_exclusive() {
        with_spec(Network::Own, Vec::new(), |spec| {
            let pod = pod(spec, "rpclab-run", Cpu::Exclusive(1), "Never", None).unwrap();
            let labels = pod.metadata.labels.as_ref().unwrap();
            assert_eq!(labels["io.rpclab.role"], "registry");
            assert_eq!(labels["io.rpclab.run"], "20261207T181500Z-4242");
            assert_eq!(labels["io.rpclab.managed"], "true");
            let spec_ = pod.spec.as_ref().unwrap();
            assert_eq!(spec_.host_network, Some(false));
            assert_eq!(spec_.restart_policy.as_deref(), Some("Never"));
            let main = &spec_.containers[0];
            assert_eq!(main.name, MAIN);
            assert_eq!(main.args.as_deref(), Some(&["run".to_owned()][..]));
            let r = main.resources.as_ref().unwrap();
            assert_eq!(r.limits, r.requests, "requests = limits: Guaranteed");
            assert_eq!(r.limits.as_ref().unwrap()["cpu"].0, "1");
            let sc = main.security_context.as_ref().unwrap();
            assert_eq!(sc.run_as_user, Some(10001));
            assert_eq!(sc.read_only_root_filesystem, Some(true));
            assert_eq!(sc.allow_privilege_escalation, Some(false));
            assert_eq!(
                sc.capabilities.as_ref().unwrap().drop.as_deref(),
                Some(&["ALL".to_owned()][..])
            );
            // ZooKeeper's data folder is a memory-backed emptyDir.
            let mounts = main.volume_mounts.as_ref().unwrap();
            assert!(mounts
                .iter()
                .any(|m| m.mount_path == "/var/lib/zookeeper/data"));
            // Shared: no CPU request, memory only.
            let shared = super::pod(spec, "rpclab-run", Cpu::Shared, "Never", None).unwrap();
            let r = shared.spec.unwrap().containers[0]
                .resources
                .clone()
                .unwrap();
            assert!(!r.requests.unwrap().contains_key("cpu"));
        });
        with_spec(Network::Host, Vec::new(), |spec| {
            let pod = pod(spec, "ns", Cpu::Shared, "Never", Some("/cell")).unwrap();
            let s = pod.spec.unwrap();
            assert_eq!(s.host_network, Some(true));
            assert_eq!(s.containers.len(), 2, "main and its keeper");
            assert_eq!(s.init_containers.unwrap().len(), 1);
        });
    }

    #[test]
    fn a_bind_mount_is_refused() {
        with_spec(Network::Own, vec!["/tmp/x:/cell".into()], |spec| {
            let e = pod(spec, "ns", Cpu::Shared, "Never", None).unwrap_err();
            assert!(
                e.to_string().contains("sees no folder of this machine"),
                "{e}"
            );
        });
    }
}
