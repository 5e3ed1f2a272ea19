//! End-to-end: a server started the lab's way (`cargo xtask lab run`) runs
//! confined. While the run measures thrift-java, the test finds the run's
//! server container through the engine's API and inspects it: a non-root
//! user (in its config and in its processes), every capability dropped,
//! no-new-privileges, pids and memory limits, a read-only root with tmpfs
//! scratch, no Docker socket. Needs a running Docker engine.
//!
//! Nothing here depends on timing: the test polls until the container
//! exists, bounded only by the run itself.

mod common;

use bollard::query_parameters::{InspectContainerOptions, ListContainersOptionsBuilder};
use bollard::Docker;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

const SERVER: &str = "thrift-java";

fn start_run(results: &Path, log: &Path) -> Child {
    let log = std::fs::File::create(log).unwrap();
    common::xtask_command(&["lab", "run", "--only", SERVER, "--profile", "smoke"])
        .arg("--results-dir")
        .arg(results)
        // Another lab run on this engine may hold the port for a while.
        .args(["--wait-for-ports", "1800"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .expect("xtask starts")
}

/// The run id in the snapshot's manifest.toml, once it is written.
fn run_id(results: &Path) -> Option<String> {
    let snap = std::fs::read_dir(results)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())?;
    let text = std::fs::read_to_string(snap.join("manifest.toml")).ok()?;
    let manifest: toml::Value = toml::from_str(&text).ok()?;
    manifest["run_id"].as_str().map(str::to_owned)
}

fn snapshot(results: &Path) -> PathBuf {
    std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a snapshot folder")
}

fn finished(child: &mut Child) -> bool {
    child.try_wait().expect("xtask can be waited for").is_some()
}

fn failure(what: &str, log: &Path) -> String {
    format!(
        "{what}\n--- lab run output ---\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_by_the_lab_runs_confined() {
    let _engine = common::engine_lock();
    let results = tempfile::tempdir().unwrap();
    let log = results.path().join("lab-run.log");
    let mut child = start_run(results.path(), &log);
    let docker = Docker::connect_with_local_defaults()
        .unwrap()
        .negotiate_version()
        .await
        .expect("a Docker engine answers");

    // The run's id, then its server container, then a process in it.
    let run = loop {
        if let Some(id) = run_id(results.path()) {
            break id;
        }
        assert!(
            !finished(&mut child),
            "{}",
            failure("the run ended before writing its manifest", &log)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let filters = HashMap::from([(
        "label".to_owned(),
        vec![
            format!("io.rpclab.run={run}"),
            "io.rpclab.role=server".to_owned(),
        ],
    )]);
    let opts = ListContainersOptionsBuilder::default()
        .filters(&filters)
        .build();
    let (id, processes) = loop {
        let running = docker.list_containers(Some(opts.clone())).await.unwrap();
        if let Some(id) = running.into_iter().find_map(|c| c.id) {
            // Its processes, as the host's kernel sees them.
            if let Ok(top) = docker
                .top_processes(&id, None::<bollard::query_parameters::TopOptions>)
                .await
            {
                if top.processes.as_ref().is_some_and(|p| !p.is_empty()) {
                    break (id, top);
                }
            }
        }
        assert!(
            !finished(&mut child),
            "{}",
            failure(
                "the run ended before its server container was seen running",
                &log
            )
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let info = docker
        .inspect_container(&id, None::<InspectContainerOptions>)
        .await
        .unwrap();
    let config = info.config.unwrap();
    let host = info.host_config.unwrap();

    // A non-root user, in the config and in every process.
    let user = config.user.unwrap_or_default();
    assert_eq!(user, "10001:10001", "server user");
    let titles = processes.titles.unwrap_or_default();
    let uid_col = titles
        .iter()
        .position(|t| t == "UID")
        .expect("docker top has a UID column");
    for p in processes.processes.unwrap() {
        let uid = &p[uid_col];
        assert!(
            uid != "root" && uid != "0",
            "a server process runs as {uid}: {p:?}"
        );
    }
    // Every capability dropped, none added.
    assert_eq!(host.cap_drop.as_deref(), Some(&["ALL".to_owned()][..]));
    assert!(host.cap_add.unwrap_or_default().is_empty());
    // no-new-privileges.
    assert!(
        host.security_opt
            .unwrap_or_default()
            .iter()
            .any(|o| o == "no-new-privileges:true" || o == "no-new-privileges"),
        "no no-new-privileges in SecurityOpt"
    );
    // Limits: thrift-java's -Xmx2G gives 2 GiB heap + 2 GiB direct + 1 GiB.
    assert!(host.pids_limit.unwrap_or(0) > 0, "no PidsLimit");
    assert_eq!(host.memory, Some(5 << 30), "Memory");
    // A read-only root, with tmpfs scratch.
    assert_eq!(host.readonly_rootfs, Some(true), "ReadonlyRootfs");
    let tmpfs = host.tmpfs.unwrap_or_default();
    assert!(
        tmpfs.contains_key("/tmp") && tmpfs.contains_key("/home/rpclab"),
        "{tmpfs:?}"
    );
    // No Docker socket, by bind or by mount.
    for bind in host.binds.unwrap_or_default() {
        assert!(!bind.contains("docker.sock"), "bind {bind}");
    }
    for m in info.mounts.unwrap_or_default() {
        let source = m.source.unwrap_or_default();
        assert!(!source.contains("docker.sock"), "mount {source}");
    }

    // The run completes, and its manifest records what was applied.
    let status = child.wait().unwrap();
    assert!(status.success(), "{}", failure("the lab run failed", &log));
    let snap = snapshot(results.path());
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    let server = manifest["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str() == Some(SERVER) && s.get("confinement").is_some())
        .expect("the server's record has its confinement");
    let c = &server["confinement"];
    assert_eq!(c["user"].as_str(), Some("10001:10001"));
    assert_eq!(c["cap_drop"][0].as_str(), Some("ALL"));
    assert_eq!(c["no_new_privileges"].as_bool(), Some(true));
    assert_eq!(c["read_only_rootfs"].as_bool(), Some(true));
    assert_eq!(c["memory_bytes"].as_integer(), Some(5 << 30));
    assert!(c["tmpfs"].get("/tmp").is_some());
    for role in ["client", "registry"] {
        let c = &manifest["lab_confinement"][role];
        assert_eq!(c["cap_drop"][0].as_str(), Some("ALL"), "{role}");
        assert_eq!(c["read_only_rootfs"].as_bool(), Some(true), "{role}");
    }
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], serde_json::Value::Bool(true));
}
