//! `manifest.toml`: how a snapshot's numbers were made, one typed
//! [`RunManifest`] that the run writes ([`RunManifest::to_toml`]) and the
//! report reads back ([`RunManifest::from_toml`]), so the two cannot drift.
//!
//! Data only: the orchestrator fills it (the host's facts, each container's
//! confinement, the engines of a run), the report renders it, and neither
//! keeps a copy of its fields.
//!
//! Every committed snapshot must keep reading. The fields a newer rpclab
//! added are read with an explicit `#[serde(default)]`, each saying since
//! when it is written and what its absence means; a test reads every
//! committed `results/*/manifest.toml`. The lab definition as run is kept
//! as its TOML table ([`RunManifest::lab`]): its typed reading is the
//! orchestrator's (strict, for today's keys), and an old snapshot's lab
//! has keys today's rpclab would reject.

use crate::aggregate::DEFAULT_CV_THRESHOLD;
use crate::result::{Calibration, CalibrationFigures};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The comment above the manifest's first key.
const HEADER: &str =
    "# How this snapshot was made. Written by `cargo xtask lab run`; do not edit.\n";

/// Everything `manifest.toml` records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Label value on every container of the run (`io.rpclab.run`).
    pub run_id: String,
    pub rpclab_version: String,
    pub git_revision: String,
    pub git_dirty: bool,
    /// The lab inputs (tracked or not) that differ from `git_revision`.
    /// Default: none (written only when some differ).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_dirty_files: Vec<String>,
    pub started_utc: String,
    /// When the run was resumed (`--resume`), each time, after it stopped
    /// before its end. Default: never (absent in a run never resumed, and
    /// in the snapshots written before resuming existed, 2026-12-05).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_utc: Vec<String>,
    pub profile: String,
    /// The cargo profile the load client was compiled with (`quick` only
    /// for checks whose numbers are not read). Default: unknown, in the
    /// snapshots written before it was recorded (2026-12-01).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_build: Option<ClientBuild>,
    pub only: Vec<String>,
    /// The server variants the run was limited to (`server/variant`:
    /// `lab run --variant`, or a reproduction's stand-ins). Default: every
    /// variant of the servers in `only` (absent then, and in the snapshots
    /// written before it was recorded, 2026-12-05).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// The thresholds every cell was judged by (`lab run --threshold`, as
    /// written: `p99<2ms`); the breaches are in `results.json`. Default:
    /// none (absent then, and before thresholds existed, 2026-12-05).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<String>,
    pub host: HostInfo,
    pub cpus: CpuPinning,
    /// A fixed CPU and loopback measurement of the server's and the
    /// client's CPU sets, taken at the start of the run (`lab compare`
    /// uses it to tell a slower host from slower code). Default: none, in
    /// the snapshots written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Every machine (engine) of the run, with the roles it ran, its CPU,
    /// kernel, Docker version, clock offset and calibration. Default: none,
    /// in the snapshots written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRecord>,
    /// Every Pod of a run on Kubernetes (`lab run --engine kubernetes`),
    /// as the cluster ran it: node, QoS, cpuset read inside, static CPU
    /// manager policy, image digest. Default: none, a run on Docker.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodRecord>,
    /// Image tag → image id (on the server's engine).
    pub images: BTreeMap<String, String>,
    pub servers: Vec<ServerRecord>,
    /// How the lab's own containers were confined: `registry`, `client`.
    /// Default: none, in the snapshots written before it was recorded.
    #[serde(default)]
    pub lab_confinement: BTreeMap<String, Policy>,
    /// Seed of the rounds' order, in a run measured in interleaved rounds
    /// (every round's order is in `results.json`, `rounds`). Default: none,
    /// a run in blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds_seed: Option<u64>,
    /// The analysis plan a reproduction was run under, with its hash
    /// (`lab reproduce`; `compose/seeds/<id>.toml`, `[plan]`). Default:
    /// none, a plain run or a reproduction made before plans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<crate::plan::RecordedPlan>,
    /// Whose network the run's containers used and what that exposed
    /// (`private: ...`, `host: ...`; `lab run --network`). Default: none,
    /// in snapshots written before 2026-12-05, which all used the host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// What the host did beside the lab over the run's windows (written
    /// when the run ends). Default: none, where no window could be read
    /// and in the snapshots written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<HostLoadSummary>,
    /// Why the run stopped before its end, when it did (Ctrl-C, a Docker
    /// engine that stopped answering and did not come back, a failed
    /// build): the snapshot is incomplete, and `--resume` completes it (a
    /// run that then ends takes it out). Default: none, a run that went
    /// to its end (and the snapshots written before it was recorded,
    /// 2026-12-05, whose `results.json` says `complete` and its errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// What a capacity search (`lab capacity`) was asked: the scenario,
    /// the percentile and its bound, the tolerance, the budget of steps,
    /// the start and the lowest rate. Default: none, a `lab run` or `lab
    /// reproduce` (absent then, and before searches existed, 2026-12-05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::Asked>,
    /// Where the run's wall time went, by phase (build, calibration,
    /// start, readiness, priming, warm-up, windows, cool-down, the
    /// client's containers, teardown, the rest), written when the run
    /// closes; a resumed run's is the sum of its invocations'. Default:
    /// none, in a run that has not closed yet (or was killed before it
    /// could) and in the snapshots written before it was measured
    /// (2026-12-06).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::phases::Phases>,
    /// The lab definition as run (`compose/*.toml` with its profiles), as
    /// the orchestrator's `LabDef` serialised it.
    pub lab: toml::Table,
}

impl RunManifest {
    /// Whether the run ran on a Kubernetes cluster (`lab run --engine
    /// kubernetes`), which records its Pods, rather than on Docker's engine.
    pub fn ran_on_kubernetes(&self) -> bool {
        !self.pods.is_empty()
    }

    /// The manifest as `manifest.toml` holds it, with its header comment.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        Ok(format!("{HEADER}{}", toml::to_string_pretty(self)?))
    }

    /// Reads a `manifest.toml`, of this rpclab or an older one.
    pub fn from_toml(text: &str) -> Result<RunManifest, toml::de::Error> {
        toml::from_str(text)
    }

    /// The settings of the profile the run used (`warmup_s = 5.0`, …), as
    /// the lab definition wrote them, by name.
    pub fn profile_settings(&self) -> Vec<(String, String)> {
        self.profile_table()
            .map(|t| {
                t.iter()
                    .map(|(k, v)| {
                        let v = match v {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), v)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The profile's coefficient of variation above which an aggregate is
    /// flagged noisy (`cv_threshold`), or the default.
    pub fn cv_threshold(&self) -> f64 {
        self.profile_table()
            .and_then(|t| t.get("cv_threshold")?.as_float())
            .unwrap_or(DEFAULT_CV_THRESHOLD)
    }

    /// `[lab.profiles.<profile>]`, the profile the run used.
    fn profile_table(&self) -> Option<&toml::Table> {
        self.lab.get("profiles")?.get(&self.profile)?.as_table()
    }

    /// The host in one line: `vm (AMD EPYC, 2 cores)`.
    pub fn host_line(&self) -> String {
        let h = &self.host;
        format!("{} ({}, {} cores)", h.hostname, h.cpu_model, h.cores)
    }

    /// The git revision, `(dirty)` after it when the tree was.
    pub fn revision_line(&self) -> String {
        format!(
            "{}{}",
            self.git_revision,
            if self.git_dirty { " (dirty)" } else { "" }
        )
    }
}

/// The machine the orchestrator ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    pub memory_gib: f64,
    pub docker_version: String,
}

/// How the load client is compiled for a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientBuild {
    /// cargo's `release` profile: what every profile whose numbers are
    /// read uses.
    #[default]
    Release,
    /// cargo's `quick` profile (no optimisation, no debug info): for checks
    /// whose numbers are not read (`smoke`). It compiles in a fraction of
    /// the release build's time, which is most of a cold check's wait; the
    /// code is the same, and debug assertions and overflow checks are on.
    Quick,
}

impl ClientBuild {
    /// The cargo profile, which is also its folder under the target dir.
    pub fn cargo_profile(self) -> &'static str {
        match self {
            ClientBuild::Release => "release",
            ClientBuild::Quick => "quick",
        }
    }
}

/// Which CPUs each side ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuPinning {
    pub server: String,
    /// The registry's (ZooKeeper's) set. Default: empty, in the snapshots
    /// written before the registry had a set of its own.
    #[serde(default)]
    pub registry: String,
    pub client: String,
    pub note: String,
}

/// One server variant of the lab, run or not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerRecord {
    pub name: String,
    pub framework: String,
    pub protocol: String,
    pub variant: String,
    pub version: String,
    pub jvm_flags: Vec<String>,
    /// The JVM the variant ran on (`17`), for a Java server. Default: none,
    /// also in the snapshots written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jvm: Option<String>,
    pub image: String,
    /// Why the variant was not run, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The port it listened on, when not its manifest's (an interleaved
    /// run moves the second variant of a server folder elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Scenarios not run for this variant because it cannot carry their
    /// operation: `<scenario>: <reason>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_scenarios: Vec<String>,
    /// How the server's container is confined (user, capabilities, limits,
    /// read-only root, tmpfs), for the variants that run. Default: none,
    /// also in the snapshots written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<Policy>,
    /// The method of the user's own service its cells called, for a server
    /// of a generic protocol (`grpc-generic`: `package.Service/Method`);
    /// absent for the contract's servers. Its cells' scenarios are named
    /// `<scenario>:<call>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// Where its folder came from when it is not one of the lab's
    /// `servers/` (`lab run --servers-dir`, a lab's `servers_dirs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<ServerFolder>,
    /// A service the lab did not start (`lab bench --target`): its
    /// address. Nothing of it was built, started, pinned, confined or
    /// costed: its `image` is empty, its cells have no server cost, and
    /// the client's CPU set and host are all the run controlled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// A server folder from outside the repository, as a run read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerFolder {
    /// The folder, as the command line or the lab file gave it.
    pub path: String,
    /// SHA-256 (hex) of its `server.toml`, its `Dockerfile` and every file
    /// its client options name (a descriptor set, a request's JSON), by
    /// their path in the folder. The image's own inputs are in its id.
    pub files: BTreeMap<String, String>,
}

/// The confinement of one container, as the orchestrator applied it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `uid:gid` the container's processes run as.
    pub user: String,
    pub cap_drop: Vec<String>,
    pub cap_add: Vec<String>,
    /// Why `cap_add` is not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_add_reason: Option<String>,
    pub no_new_privileges: bool,
    pub pids_limit: u32,
    pub memory_bytes: u64,
    /// How the memory limit was arrived at.
    pub memory_basis: String,
    pub read_only_rootfs: bool,
    /// Why the root filesystem is writable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writable_rootfs_reason: Option<String>,
    /// tmpfs mount point → mount options.
    pub tmpfs: BTreeMap<String, String>,
}

/// One Pod of a run on Kubernetes, under `[[pods]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PodRecord {
    pub namespace: String,
    pub pod: String,
    /// `server`, `registry`, `client` or `calibration`.
    pub role: String,
    pub node: String,
    /// Its QoS class as the API server gave it (`Guaranteed`, `Burstable`).
    pub qos: String,
    /// What it asked for (`1 whole CPU`, `shared pool`).
    pub cpu: String,
    /// Its CPUs as read from inside it; `unknown` when it exited first.
    pub cpuset: String,
    /// Whether its node runs the static CPU manager policy.
    pub static_policy: bool,
    /// The image the Pod named: the lab's tag, or its reference in the
    /// registry it was pushed to (`--image-registry`).
    pub image: String,
    /// Its pull policy (`Never`: loaded into the node; `IfNotPresent`:
    /// pulled from the registry it was pushed to).
    #[serde(default)]
    pub pull: String,
    /// The digest the push gave, for a pushed image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_digest: Option<String>,
    /// The image as the Pod ran it (its status' `imageID`, a digest).
    pub image_id: String,
    /// Its address on the cluster's network.
    pub ip: String,
}

/// One machine of a run, under `[[hosts]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    /// The roles its engine ran: `server`, `registry`, `client`.
    pub roles: Vec<String>,
    /// The Docker endpoint, as given (`unix:///var/run/docker.sock` for
    /// the environment's default).
    pub endpoint: String,
    /// The engine's id (`docker info`); two engines on one machine may
    /// share it, and differ by `data_root`.
    pub engine_id: String,
    /// Where the engine keeps its images and containers (`DockerRootDir`).
    pub data_root: String,
    /// The machine's name as its engine reports it.
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub kernel: String,
    pub operating_system: String,
    pub docker_version: String,
    /// Its clock against the orchestrator's, measured at the run's start.
    pub clock: ClockOffset,
    /// Whether the client's measurement windows were moved by `clock`
    /// before the server's samples were placed on them (only when the
    /// client is on another machine than the orchestrator).
    pub clock_applied: bool,
    /// The calibration of the CPU sets its roles used, by role (`server`,
    /// `client`). Default: none measured.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub calibration: BTreeMap<String, CalibrationFigures>,
    /// Image tag → id on this engine (each engine builds its own; the
    /// content-hash labels match, the ids need not).
    pub images: BTreeMap<String, String>,
}

/// How far a machine's clock is ahead of the orchestrator's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Its clock minus the orchestrator's, in milliseconds.
    pub offset_ms: f64,
    /// Half the round trip of the request that measured it: the offset is
    /// known to within this much.
    pub uncertainty_ms: f64,
}

/// Why and when a run stopped before its end ([`RunManifest::stopped`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// When (RFC 3339, UTC).
    pub utc: String,
    /// Why, as the run said it (`the Docker engine at
    /// unix:///var/run/docker.sock stopped answering and did not answer
    /// again within 1 min`).
    pub why: String,
}

/// What the host did beside the lab over the run's windows, for the
/// manifest: medians and maxima over every window that has a
/// [`crate::result::HostLoad`], in cores. Flat, so that it is one TOML
/// table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoadSummary {
    /// Windows with a host load, and how many of them were host-busy.
    pub windows: usize,
    pub busy_windows: usize,
    pub other_server_cores_median: f64,
    pub other_server_cores_max: f64,
    pub other_client_cores_median: f64,
    pub other_client_cores_max: f64,
    pub steal_cores_median: f64,
    pub steal_cores_max: f64,
    /// The thresholds the windows were judged by.
    pub threshold_cores: f64,
    pub steal_threshold_cores: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every `results/*/manifest.toml` committed in the repository.
    fn committed_manifests() -> Vec<std::path::PathBuf> {
        let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let mut found: Vec<_> = std::fs::read_dir(&results)
            .unwrap()
            .map(|e| e.unwrap().path().join("manifest.toml"))
            .filter(|p| p.exists())
            .collect();
        found.sort();
        found
    }

    #[test]
    fn every_committed_manifest_reads() {
        let manifests = committed_manifests();
        assert!(manifests.len() > 10, "found only {manifests:?}");
        for path in manifests {
            let text = std::fs::read_to_string(&path).unwrap();
            let m = RunManifest::from_toml(&text)
                .unwrap_or_else(|e| panic!("{} does not read: {e}", path.display()));
            assert!(!m.servers.is_empty(), "{}", path.display());
            assert!(
                !m.profile_settings().is_empty(),
                "{}: no settings for profile {}",
                path.display(),
                m.profile
            );
        }
    }

    #[test]
    fn the_oldest_committed_manifest_reads_with_its_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../results/20261129T235428Z-vm-c20a70e/manifest.toml");
        let m = RunManifest::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(m.profile, "standard");
        assert_eq!(m.host_line(), "vm (AMD EPYC, 2 cores)");
        assert_eq!(
            (m.cpus.server.as_str(), m.cpus.registry.as_str()),
            ("0", "")
        );
        assert_eq!(m.client_build, None);
        assert!(m.hosts.is_empty() && m.lab_confinement.is_empty());
        assert_eq!(m.phases, None);
        assert!(m
            .servers
            .iter()
            .any(|v| v.name == "grpc-java" && v.not_run.is_none()));
        assert!(m
            .profile_settings()
            .iter()
            .any(|(k, v)| k == "repetitions" && v == "3"));
        assert_eq!(m.cv_threshold(), 0.1);
    }

    /// A manifest with every optional part filled.
    fn full() -> RunManifest {
        let policy = Policy {
            user: "1000:1000".into(),
            cap_drop: vec!["ALL".into()],
            cap_add: vec!["NET_BIND_SERVICE".into()],
            cap_add_reason: Some("port 80".into()),
            no_new_privileges: true,
            pids_limit: 512,
            memory_bytes: 1 << 30,
            memory_basis: "-Xmx512m".into(),
            read_only_rootfs: true,
            writable_rootfs_reason: None,
            tmpfs: BTreeMap::from([("/tmp".into(), "rw,exec".into())]),
        };
        let figures = CalibrationFigures {
            cpus: "0".into(),
            cpu_rounds_per_s: 1000.0,
            loopback_round_trips_per_s: 20_000.0,
        };
        let lab = toml::from_str(
            "name = \"x\"\nscenarios = [\"echo\"]\n[profiles.standard]\nwarmup_s = 5.0\ncv_threshold = 0.2\n",
        )
        .unwrap();
        RunManifest {
            run_id: "r1".into(),
            rpclab_version: "0.1.0".into(),
            git_revision: "abc1234".into(),
            git_dirty: true,
            git_dirty_files: vec!["compose/x.toml".into()],
            started_utc: "20261205T011016Z".into(),
            resumed_utc: vec!["20261205T021016Z".into()],
            profile: "standard".into(),
            client_build: Some(ClientBuild::Quick),
            only: vec!["grpc-java".into()],
            variants: vec!["grpc-java/1.83".into()],
            thresholds: vec!["p99<2ms".into()],
            host: HostInfo {
                hostname: "vm".into(),
                cpu_model: "AMD EPYC".into(),
                cores: 2,
                kernel: "6.1".into(),
                memory_gib: 23.4,
                docker_version: "26.1".into(),
            },
            cpus: CpuPinning {
                server: "0".into(),
                registry: "0".into(),
                client: "1".into(),
                note: "auto".into(),
            },
            calibration: Some(Calibration {
                server: figures.clone(),
                client: figures.clone(),
                across: Some(figures.clone()),
            }),
            hosts: vec![HostRecord {
                roles: vec!["server".into()],
                endpoint: "unix:///var/run/docker.sock".into(),
                engine_id: "E".into(),
                data_root: "/var/lib/docker".into(),
                hostname: "vm".into(),
                cpu_model: "AMD EPYC".into(),
                cores: 2,
                memory_gib: 23.4,
                kernel: "6.1".into(),
                operating_system: "Debian".into(),
                docker_version: "26.1".into(),
                clock: ClockOffset {
                    offset_ms: 0.5,
                    uncertainty_ms: 0.1,
                },
                clock_applied: false,
                calibration: BTreeMap::from([("server".into(), figures)]),
                images: BTreeMap::from([("rpclab/jdk:17".into(), "sha256:1".into())]),
            }],
            pods: vec![PodRecord {
                namespace: "rpclab-r1".into(),
                pod: "rpclab-grpc-java-r1".into(),
                role: "server".into(),
                node: "node-1".into(),
                qos: "Guaranteed".into(),
                cpu: "1 whole CPU".into(),
                cpuset: "1".into(),
                static_policy: true,
                image: "rpclab/server-grpc-java:1.83".into(),
                pull: "Never".into(),
                pushed_digest: None,
                image_id: "sha256:1".into(),
                ip: "10.244.0.7".into(),
            }],
            images: BTreeMap::from([("rpclab/jdk:17".into(), "sha256:1".into())]),
            servers: vec![ServerRecord {
                name: "grpc-java".into(),
                framework: "gRPC".into(),
                protocol: "grpc".into(),
                variant: "1.85".into(),
                version: "1.85.0".into(),
                jvm_flags: vec!["-Xmx512m".into()],
                jvm: Some("17".into()),
                image: "rpclab/server-grpc-java:1.85".into(),
                not_run: None,
                notes: Some("n".into()),
                port: Some(50052),
                skipped_scenarios: vec!["stream: no streams".into()],
                confinement: Some(policy.clone()),
                call: Some("shop.v1.Inventory/Reserve".into()),
                folder: Some(ServerFolder {
                    path: "fixtures/servers/grpc-shop".into(),
                    files: BTreeMap::from([("shop.protoset".into(), "ab12".into())]),
                }),
                target: Some("127.0.0.1:50071".into()),
            }],
            lab_confinement: BTreeMap::from([("client".into(), policy)]),
            rounds_seed: Some(7),
            plan: None,
            network: Some("private: the run's own namespace".into()),
            host_load: Some(HostLoadSummary {
                windows: 10,
                busy_windows: 1,
                ..HostLoadSummary::default()
            }),
            stopped: Some(Stopped {
                utc: "2026-12-05T02:10:16Z".into(),
                why: "interrupted (Ctrl-C)".into(),
            }),
            capacity: Some(crate::capacity::Asked {
                scenario: "order-echo".into(),
                percentile: crate::capacity::Percentile::P99,
                slo_us: 5000.0,
                slo: "5ms".into(),
                tolerance: 0.05,
                budget: 12,
                start_rate: None,
                min_rate: 1,
            }),
            phases: Some(crate::phases::Phases {
                build: 60.5,
                windows: 120.0,
                other: 2.25,
                wall: 182.75,
                ..crate::phases::Phases::default()
            }),
            lab,
        }
    }

    #[test]
    fn a_written_manifest_reads_back_equal() {
        let m = full();
        let text = m.to_toml().unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert_eq!(RunManifest::from_toml(&text).unwrap(), m);
        assert_eq!(m.cv_threshold(), 0.2);
        assert_eq!(m.revision_line(), "abc1234 (dirty)");
    }
}
