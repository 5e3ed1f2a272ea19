//! `--engine kubernetes`: the lab's commands on a Kubernetes cluster
//! (`engine::kubernetes`), in an xtask built with the `kubernetes` feature
//! (`cargo xtask-kube`); `cli::kube` dispatches to them.
//!
//! * `lab kube-check`: the engine's end-to-end check on a real cluster,
//!   with the lab's own image and confinement and the run's own code where
//!   it is engine-neutral: connect and check the cluster (permissions, the
//!   static CPU manager policy, allocatable CPU), a server Pod
//!   (`rpclab-echo`) on an exclusive core, a verified call made inside it
//!   by exec, the run's host calibration (`engine::calibration`, as Pods),
//!   a Pod started with files and its folder read back, with
//!   `--with-registry` ZooKeeper started and waited for by the run's
//!   registry code (`engine::registry`), every Pod's
//!   record (node, QoS, cpuset read from inside, static policy, image
//!   digest), then the run's namespace deleted and checked gone. It prints
//!   one JSON object, which `xtask/tests/kube` reads. With
//!   `--image-registry REGISTRY`, the registry is asked first (`GET /v2/`),
//!   and every image the check uses is pushed to it from the Docker engine
//!   (`engine::kubernetes::push`) once the cluster passed its checks; its
//!   Pods then pull them from there (`IfNotPresent`).
//! * `lab run --engine kubernetes` is the run itself (`engine::run`, with
//!   the cluster as every role's engine, `engine::run_engine`).
//! * `lab ps` and `lab clean` with `--engine kubernetes`: the lab's Pods,
//!   and the deletion of every lab namespace.

use crate::basics::owner::{CleanPlan, Seen, Sharing};
use crate::basics::role::Role;
use crate::basics::run_id::RunId;
use crate::definitions::manifest::Registry;
use crate::engine::containers::{ContainerSpec, Containers, Network, LABEL_RUN};
use crate::engine::docker::Engine;
use crate::engine::kubernetes::push::{self, ImageRegistry};
use crate::engine::kubernetes::{pod, preflight, Cluster};
use crate::engine::{calibration, images, registry};
use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// The server's cpuset in the check: its CPU count is what its Pod
/// asks (one whole CPU; the kubelet picks which).
const SERVER_CPUS: &str = "1";

/// The port `rpclab-echo` listens on in the check's server Pod.
const ECHO_PORT: u16 = 50051;

/// Connects and checks the cluster for a run whose servers take
/// `exclusive_cpus` whole CPUs; one line for what is missing.
pub async fn connect_checked(run_id: &str, exclusive_cpus: u32) -> Result<Cluster> {
    Ok(preflight::connect_checked(run_id, exclusive_cpus).await?.0)
}

/// `lab ps --engine kubernetes`.
pub async fn ps() -> Result<()> {
    let cluster = Cluster::connect().await?;
    let pods = cluster.lab_containers(None).await?;
    if pods.is_empty() {
        println!("no lab pod");
    }
    for p in pods {
        println!("{}  run {}", p.id, p.run);
    }
    Ok(())
}

/// `lab clean --engine kubernetes`: every lab namespace, and its Pods, but
/// a live run's of this machine (`owner::CleanPlan`, as on Docker): two
/// users of one cluster no longer end each other's runs.
pub async fn clean() -> Result<()> {
    let cluster = Cluster::connect().await?;
    let namespaces = cluster.lab_namespaces(None).await?;
    let runs: Vec<(String, BTreeMap<String, String>)> = namespaces
        .into_iter()
        .map(|ns| {
            let labels = ns.metadata.labels.unwrap_or_default();
            let run = labels.get(LABEL_RUN).cloned().unwrap_or_default();
            (run, labels)
        })
        .collect();
    let plan = CleanPlan::of(runs.iter().map(|(run, labels)| Seen {
        id: run,
        name: run,
        run,
        labels,
    }));
    let pods = cluster.lab_containers(None).await?;
    let (mut removed, mut their_pods) = (0, 0);
    for run in plan.remove.iter().collect::<BTreeSet<_>>() {
        their_pods += pods.iter().filter(|p| &p.run == run).count();
        removed += cluster.remove_namespaces(Some(run)).await?;
    }
    println!("removed {removed} lab namespace(s) and their {their_pods} pod(s)");
    for line in plan.live_lines() {
        println!("{line}");
    }
    Ok(())
}

/// `lab kube-check`: see the module's documentation.
pub async fn check(image: &str, with_registry: bool, image_registry: Option<&str>) -> Result<()> {
    let started = Instant::now();
    // The image registry answers, before anything else is asked.
    let image_registry = match image_registry {
        Some(r) => {
            let r = ImageRegistry::parse(r)?;
            r.check().await?;
            Some(r)
        }
        None => None,
    };
    let run_id = RunId::new(format!("kube-check-{}", std::process::id()), Sharing::Alone);
    let mut cluster = connect_checked(&run_id, 1).await?;
    // The server's set, exclusive: its calibration measures it so too.
    cluster.exclusive_sets.insert(SERVER_CPUS.into());
    let pushed = match &image_registry {
        Some(r) => push_images(&mut cluster, r, image, with_registry).await?,
        None => Vec::new(),
    };
    let namespace = pod::namespace_of(&run_id);
    // Ctrl-C stops the work, not the clean-up.
    let outcome = tokio::select! {
        outcome = exercise(&cluster, &run_id, image, with_registry) => outcome,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted; the check's namespace is deleted")),
    };
    // Whatever happened, the run's namespace goes, and must be gone.
    let removed = cluster.remove_lab_containers(Some(&run_id)).await;
    let left = cluster.lab_namespaces(Some(&run_id)).await?.len();
    let mut report = outcome?;
    removed.context("cannot remove the check's namespace")?;
    if left > 0 {
        bail!("namespace {namespace} is still there after its deletion");
    }
    report["namespace"] = namespace.into();
    report["namespace_gone"] = true.into();
    report["image_registry"] = image_registry.map(|r| r.address().to_owned()).into();
    report["pushed"] = serde_json::to_value(&pushed)?;
    report["seconds"] = started.elapsed().as_secs_f64().round().into();
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Pushes every image the check uses to `registry` (the client image, the
/// calibration's, ZooKeeper's with `--with-registry`), from the Docker
/// engine; the cluster's Pods name them there from now on.
async fn push_images(
    cluster: &mut Cluster,
    registry: &ImageRegistry,
    image: &str,
    with_registry: bool,
) -> Result<Vec<push::Pushed>> {
    let mut wanted = vec![image, images::CLIENT];
    if with_registry {
        wanted.push(images::ZOOKEEPER);
    }
    wanted.dedup();
    let engine = Engine::connect().await?;
    let pushed = push::push_all(&engine, registry, &wanted).await?;
    cluster.use_pushed(pushed.clone());
    Ok(pushed)
}

/// The check's work on the cluster, before the clean-up: its report.
async fn exercise(
    cluster: &Cluster,
    run_id: &RunId,
    image: &str,
    with_registry: bool,
) -> Result<serde_json::Value> {
    // The run's own calibration code, its containers as Pods, before the
    // server starts (as in a run: the server's core is the calibration's).
    let calibration =
        calibration::measure(cluster, cluster, run_id, SERVER_CPUS, "0", false).await?;
    crate::say!(
        "calibration: server set {:.0} rounds/s, client set {:.0} rounds/s",
        calibration.server.cpu_rounds_per_s,
        calibration.client.cpu_rounds_per_s
    );
    let network = Network::Own;
    let (server, server_ip, said, labels) =
        serve_and_probe(cluster, run_id, image, &network).await?;
    let log = files_in_and_out(cluster, run_id, image, &network).await?;
    // The run's own registry code: ZooKeeper as a Pod, ready by `srvr`
    // sent inside it.
    let registry = if with_registry {
        let started = registry::launch(
            cluster,
            Registry::Zookeeper,
            run_id,
            "0",
            "kube-check",
            &network,
        )
        .await?
        .context("a ZooKeeper registry")?;
        registry::ready(cluster, &started, &network).await?;
        Some(started.id)
    } else {
        None
    };
    let records = cluster.records();
    Ok(serde_json::json!({
        "kubernetes": cluster.version,
        "server": server,
        "server_ip": server_ip,
        "probe": said.trim(),
        "labels": labels,
        "client_uid": log.trim(),
        "calibration": {
            "server_rounds_per_s": calibration.server.cpu_rounds_per_s,
            "client_rounds_per_s": calibration.client.cpu_rounds_per_s,
        },
        "registry": registry,
        "pods": records,
    }))
}

/// The lab's echo server as the run's server Pod, on its exclusive core,
/// and a verified call of the contract made inside that Pod: the server's
/// id, its Pod IP, what the probe said, and the labels it is listed with.
async fn serve_and_probe(
    cluster: &Cluster,
    run_id: &RunId,
    image: &str,
    network: &Network,
) -> Result<(
    String,
    String,
    String,
    std::collections::BTreeMap<String, String>,
)> {
    let echo = crate::basics::confine::echo();
    let server = cluster
        .start(ContainerSpec {
            name: format!("rpclab-echo-{run_id}"),
            image,
            role: Role::Server.into(),
            run_id,
            env: vec![format!("RPCLAB_PORT={ECHO_PORT}")],
            entrypoint: Some(vec![crate::basics::host::ECHO_BINARY.to_owned()]),
            cmd: None,
            cpuset: SERVER_CPUS,
            binds: Vec::new(),
            confinement: &echo,
            network,
        })
        .await?;
    let server_ip = cluster.address(&server).await?;
    crate::say!("server pod {server} runs at {server_ip}");
    // A verified call of the contract, made inside the server's Pod.
    let target = format!("127.0.0.1:{ECHO_PORT}");
    let (code, said) = cluster
        .exec(
            &server,
            &[
                "rpclab-client",
                "probe",
                "--protocol",
                "grpc",
                "--target",
                &target,
                "--wait-s",
                "30",
            ],
        )
        .await?;
    if code != 0 {
        bail!("the probe in {server} exited with {code}: {said}");
    }
    crate::say!("verified call in {server}: {}", said.trim());
    // The labels and the owner, as the run's containers carry them.
    let listed = cluster.lab_containers(Some(run_id)).await?;
    let labels = listed
        .iter()
        .find(|c| c.id == server)
        .map(|c| c.labels.clone())
        .context("the server pod is not listed with the run's labels")?;
    Ok((server, server_ip, said, labels))
}

/// A client Pod given a folder of files, which copies one and ends; the
/// folder copied back out must hold it (a client's cell goes so). What
/// the Pod printed (its user id).
async fn files_in_and_out(
    cluster: &Cluster,
    run_id: &RunId,
    image: &str,
    network: &Network,
) -> Result<String> {
    // Files in, a folder back out (the client's cell goes so).
    let mut tar = tar::Builder::new(Vec::new());
    let body = br#"{"check":"kube"}"#;
    let mut header = tar::Header::new_gnu();
    header.set_size(body.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, "spec.json", &body[..])?;
    let tar = tar.into_inner()?;
    let client_policy = crate::basics::confine::client();
    let client = cluster
        .start_with_files(
            ContainerSpec {
                name: format!("rpclab-client-{run_id}"),
                image,
                role: Role::Client.into(),
                run_id,
                env: Vec::new(),
                entrypoint: Some(vec!["/bin/sh".into(), "-c".into()]),
                // Long enough for its cpuset to be read inside it while
                // the server holds its core.
                cmd: Some(vec![
                    "cp /cell/spec.json /cell/report.json && id -u && sleep 3".into(),
                ]),
                cpuset: "0",
                binds: Vec::new(),
                confinement: &client_policy,
                network,
            },
            "/cell",
            tar,
        )
        .await?;
    let code = cluster.wait(&client).await?;
    let log = cluster.log_tail(&client, 5).await;
    if code != 0 {
        bail!("the client pod exited with {code}: {log}");
    }
    let folder = cluster.download(&client, "/cell").await?;
    let mut back = tar::Archive::new(&folder[..]);
    let mut report = None;
    for entry in back.entries()? {
        let mut entry = entry?;
        if entry.path()?.ends_with("report.json") {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text)?;
            report = Some(text);
        }
    }
    if report.as_deref().map(str::as_bytes) != Some(&body[..]) {
        bail!("the client pod's /cell/report.json came back as {report:?}");
    }
    crate::say!("files in and out of {client}: /cell/report.json came back");
    cluster.remove(&client).await?;
    Ok(log)
}
