//! End-to-end: the real `cargo xtask lab` code path against real servers in
//! real containers. Needs a running Docker engine (CI starts one).
//!
//! Two lab runs cover every server, each half of them, one in each of the
//! engine's two slots: alone, the every-server run was the longest test
//! (1,127 s of a 1,175 s lab lane in a cold CI) while the other slot's
//! tests were done in half that. While the half with thrift-java runs,
//! watchers inspect a server's confinement and probe its port from the
//! host; once each run ends, the assertions check each server's cells, the
//! snapshot and the threshold that had to breach.
//! Nothing here depends on timing: the watchers poll, bounded only by the
//! run itself.

use crate::common;

use bollard::query_parameters::{InspectContainerOptions, ListContainersOptionsBuilder};
use bollard::Docker;
use common::lab::{cells_so_far, check_cell_consistency, spawn_logged};
use common::{
    assert_run_left_nothing, engine_share, engine_share_first, only_snapshot, repo_root, run_id_in,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

/// Every server folder's name, read the way the lab reads them.
fn server_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo_root().join("servers"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("server.toml").is_file())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// The every-server run's thresholds: one no cell can hold, one every
/// cell holds.
const THRESHOLDS: [&str; 2] = ["p99<1ns", "errors<=100%"];

/// The servers of half `half` (0 or 1) of the every-server check: every
/// other one of [`server_names`], so that each half has servers from the
/// start and the end of the order in which CI builds their images.
fn servers_of_half(half: usize) -> Vec<String> {
    server_names()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == half)
        .map(|(_, s)| s)
        .collect()
}

/// Every server is in exactly one half: the two runs together are the
/// every-server check.
#[test]
fn the_two_halves_of_the_smoke_check_hold_every_server_once() {
    let mut both = servers_of_half(0);
    both.extend(servers_of_half(1));
    both.sort();
    assert_eq!(both, server_names());
    assert!(servers_of_half(0).len().abs_diff(servers_of_half(1).len()) <= 1);
}

/// The first half of every server ([`smoke_run_of`]), in a slot at once:
/// it measures each server while the later ones' images build (or while
/// CI's build of them goes on beside the tests).
#[test]
fn smoke_run_of_every_server_first_half_verifies_every_call_and_writes_a_snapshot() {
    let _engine = engine_share_first();
    smoke_run_of(&servers_of_half(0));
}

/// The second half of every server ([`smoke_run_of`]), in the other slot
/// among the other lab tests, whose images are built first: holding it
/// from the start, it would wait there for the last server images while
/// they queue.
#[test]
fn smoke_run_of_every_server_second_half_verifies_every_call_and_writes_a_snapshot() {
    let _engine = engine_share();
    smoke_run_of(&servers_of_half(1));
}

/// One smoke run of every variant of `servers` (compose/full.toml),
/// watched while it runs and checked once it ends:
///
/// - every call verified, every cell consistent, the snapshot whole
///   (manifest, calibration, report, charts, interval logs, priming);
/// - with thrift-java among them: a thrift-java server, inspected while it
///   serves, runs confined ([`inspect_confined`]) and the manifest records
///   what was applied; the run's servers answer its client and no host
///   process: while a thrift-java server serves the run (a cell of it
///   measured, its container running before and after), 127.0.0.1:9090
///   refuses the host;
/// - a threshold no server can hold and one every server holds: the run
///   measures every cell, exits 99 (k6's code), names each breach in one
///   line, and the snapshot keeps the thresholds and the breaches;
/// - nothing is left behind.
fn smoke_run_of(servers: &[String]) {
    let results = tempfile::tempdir().unwrap();
    let only = servers.join(",");
    // One repetition: this test is about every variant's calls, and it
    // starts each of the 41 once; the spread of repetitions is the thrift
    // runs' to exercise (`thrift_smoke_args`: the smoke profile's two).
    let mut args = vec![
        "lab",
        "run",
        "--lab",
        "compose/full.toml",
        "--profile",
        "smoke",
        "--only",
        &only,
        "--repetitions",
        "1",
        "--results-dir",
        results.path().to_str().unwrap(),
    ];
    for t in THRESHOLDS {
        args.extend(["--threshold", t]);
    }
    let (mut run, log_path) = spawn_logged(&args, results.path());
    let watched = watch(&mut run, results.path(), &log_path);
    let status = run.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    // Exit 99 is the breach and nothing else: a run with errors exits 1.
    assert_eq!(status.code(), Some(99), "lab run failed:\n{log}");
    assert!(!log.contains("the run finished with errors"), "{log}");
    assert!(log.contains("threshold p99<1ns breached"), "{log}");
    assert!(!log.contains("threshold errors<=100% breached"), "{log}");
    // The watchers saw what they watch, in the half with thrift-java.
    if servers.iter().any(|s| s == "thrift-java") {
        assert!(
            watched.confined,
            "no thrift-java server was seen running to inspect:\n{log}"
        );
        assert!(
            watched.probed,
            "no thrift-java server was seen serving the run to probe from the host:\n{log}"
        );
    }
    assert!(log.contains("probe in the run's network"), "{log}");

    let snap = only_snapshot(results.path());
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    assert_eq!(manifest["profile"].as_str(), Some("smoke"));
    check_confinement_recorded(&manifest);
    let manifest_text = std::fs::read_to_string(snap.join("manifest.toml")).unwrap();
    assert!(
        manifest_text.contains("network = \"private:"),
        "{manifest_text}"
    );
    assert!(manifest_text.contains("p99<1ns"), "{manifest_text}");
    assert_ne!(manifest["cpus"]["server"].as_str(), None);
    // The host calibration of both CPU sets is recorded.
    for side in ["server", "client"] {
        let figures = &manifest["calibration"][side];
        assert!(
            figures["cpu_rounds_per_s"].as_float().unwrap() > 0.0,
            "{manifest}"
        );
        assert!(figures["loopback_round_trips_per_s"].as_float().unwrap() > 0.0);
    }
    // Where the time went: every phase, none negative, adding up to the
    // wall (structure only, never how long a phase took).
    let phases = manifest["phases"].as_table().expect("[phases]");
    let keys = rpclab_model::phases::Phase::ALL.map(|p| p.key());
    let sum: f64 = keys
        .iter()
        .map(|k| {
            let s = phases[*k]
                .as_float()
                .unwrap_or_else(|| panic!("{k}: {phases:?}"));
            assert!(s >= 0.0, "{k}: {phases:?}");
            s
        })
        .sum();
    let wall = phases["wall"].as_float().unwrap();
    assert!((sum - wall).abs() <= 1e-6 * wall.max(1.0), "{phases:?}");
    assert!(phases["windows"].as_float().unwrap() > 0.0, "{phases:?}");
    let summary = std::fs::read_to_string(snap.join("summary.md")).unwrap();
    assert!(summary.contains("order-echo"));
    assert!(summary.contains("## Where the time went"), "{summary}");
    // The snapshot's page and charts are written with it.
    let page = std::fs::read_to_string(snap.join("report.html")).unwrap_or_default();
    assert!(
        page.contains("<svg"),
        "no report.html with charts in {}",
        snap.display()
    );
    // A throughput chart per scenario (per level when it has two:
    // `throughput-order-echo-at-1.svg`), in parts when it has more series
    // than the charts have distinct styles (`throughput-order-echo-1.svg`, ...).
    let charts: Vec<String> = std::fs::read_dir(snap.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for kind in ["throughput", "efficiency"] {
        let stem = format!("{kind}-order-echo");
        assert!(
            charts.iter().any(|c| c == &format!("{stem}.svg")
                || is_part_of(c, &stem)
                || is_per_level(c, &stem)),
            "no {stem} chart among {charts:?}"
        );
    }

    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], Value::Bool(true), "{log}");
    let cells = results["cells"].as_array().unwrap();
    assert!(
        common::lab::bytes_counted_somewhere(cells),
        "no cell counted wire bytes both ways"
    );
    for required in ["grpc-java", "thrift-java", "dubbo-3.3", "dubbo-2.6"] {
        assert!(
            server_names().iter().any(|s| s == required),
            "servers/{required} is missing"
        );
    }
    assert!(
        cells
            .iter()
            .all(|c| servers.iter().any(|s| c["server"] == s.as_str())),
        "a cell of a server not asked for:\n{log}"
    );
    for server in servers {
        let mine: Vec<_> = cells
            .iter()
            .filter(|c| c["server"] == server.as_str())
            .collect();
        assert!(!mine.is_empty(), "no cell for {server}:\n{log}");
        for c in mine {
            check_cell_consistency(server, c);
            // The interval log exists and has the HdrHistogram header and data lines.
            let cell_dir = snap
                .join("cells")
                .join(format!(
                    "{}-{}",
                    c["server"].as_str().unwrap(),
                    c["variant"].as_str().unwrap()
                ))
                .join(format!(
                    "{}-c{}-r{}",
                    c["scenario"].as_str().unwrap(),
                    c["concurrency"],
                    c["repetition"]
                ));
            let hlog = std::fs::read_to_string(cell_dir.join("latency.hlog")).unwrap_or_default();
            assert!(
                hlog.contains("#[Histogram log format version 1.3]"),
                "{server}: no hlog in {}",
                cell_dir.display()
            );
            // A window with successful calls has interval lines.
            if c["calls_ok"].as_u64().unwrap() > 0 {
                assert!(hlog.lines().any(|l| !l.starts_with('#')
                    && !l.starts_with('"')
                    && l.split(',').count() == 4));
            }
        }
    }

    // The profile primes: each variant's first cell, and only that one,
    // carries the priming run, whose calls were verified and whose files
    // are in the snapshot.
    let mut seen = std::collections::BTreeSet::new();
    for c in cells {
        let variant = format!(
            "{}-{}",
            c["server"].as_str().unwrap(),
            c["variant"].as_str().unwrap()
        );
        let primed = &c["primed"];
        if seen.insert(variant.clone()) {
            assert!(
                primed["calls_ok"].as_u64().unwrap_or(0) > 0,
                "{variant}: its first cell has no priming run: {primed}"
            );
            // The smoke profile's prime_s (compose/full.toml).
            assert!(primed["warmup"]["seconds"].as_f64().unwrap() >= 0.1);
            let dir = snap.join("cells").join(&variant).join(format!(
                "prime-{}-c{}-r1",
                primed["scenario"].as_str().unwrap(),
                primed["concurrency"]
            ));
            assert!(
                dir.join("report.json").is_file(),
                "{variant}: no priming report in {}",
                dir.display()
            );
            jit_rule_was_judged(&variant, primed, c);
        } else {
            assert!(primed.is_null(), "{variant}: a later cell is primed too");
        }
    }

    // Both load models ran: an open-loop cell reports its three views.
    assert!(
        cells
            .iter()
            .any(|c| c["report"]["load"]["model"] == "open"
                && c["report"]["send_lag_us"].is_object()),
        "no open-loop cell"
    );
    assert!(!results["aggregates"].as_array().unwrap().is_empty());

    // The thresholds and their breaches: p99<1ns by every cell that has a
    // p99 (a cell without a successful call has none to judge),
    // errors<=100% by none.
    let check = &results["thresholds"];
    assert_eq!(check["asked"], serde_json::json!(THRESHOLDS));
    let breaches = check["breaches"].as_array().unwrap();
    let with_calls = cells
        .iter()
        .filter(|c| c["calls_ok"].as_u64().unwrap() > 0)
        .count();
    assert!(with_calls > 0, "nothing measured: {log}");
    assert_eq!(breaches.len(), with_calls, "one breach a cell: {check}");
    assert!(
        breaches.iter().all(|b| b["threshold"] == "p99<1ns"),
        "{check}"
    );

    // Nothing of the run is left behind.
    assert_run_left_nothing(snap.parent().unwrap());
}

/// What the watchers of the every-server run saw: a thrift-java server
/// inspected while it ran (and found confined), and one probed from the
/// host while it served the run.
struct Watched {
    confined: bool,
    probed: bool,
}

/// Watches `run` until both watchers have seen what they watch, or the run
/// ends: the run's thrift-java server containers, found through the
/// engine's API by the run's id (from the snapshot's manifest) and their
/// role label.
fn watch(run: &mut Child, results: &Path, log: &Path) -> Watched {
    common::with_docker(async |docker| {
        let mut watched = Watched {
            confined: false,
            probed: false,
        };
        while !(watched.confined && watched.probed) {
            if run.try_wait().expect("xtask can be waited for").is_some() {
                break;
            }
            if let Some(run_id) = run_id_in(results) {
                for (id, variant) in thrift_servers(&docker, &run_id).await {
                    if !watched.confined {
                        watched.confined = inspect_confined(&docker, &id, log).await;
                    }
                    if !watched.probed && served_a_cell(results, &variant) {
                        // The server answered the run's client; now a
                        // process of the host tries its port.
                        let reached = std::net::TcpStream::connect_timeout(
                            &"127.0.0.1:9090".parse().unwrap(),
                            Duration::from_secs(5),
                        );
                        // Conclusive only if it served throughout.
                        if running(&docker, &id).await {
                            assert!(
                                reached.is_err(),
                                "a host process connected to the run's server: {reached:?}\n{}",
                                std::fs::read_to_string(log).unwrap_or_default()
                            );
                            watched.probed = true;
                        }
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        watched
    })
}

/// The running thrift-java server containers of run `run_id`: each one's
/// id and (sanitized) variant, from its name
/// (`rpclab-thrift-java-<variant>-<run>`).
async fn thrift_servers(docker: &Docker, run_id: &str) -> Vec<(String, String)> {
    let filters = HashMap::from([(
        "label".to_owned(),
        vec![
            format!("io.rpclab.run={run_id}"),
            "io.rpclab.role=server".to_owned(),
        ],
    )]);
    let opts = ListContainersOptionsBuilder::default()
        .filters(&filters)
        .build();
    let suffix = format!("-{run_id}");
    let Ok(list) = docker.list_containers(Some(opts)).await else {
        return Vec::new();
    };
    list.into_iter()
        .filter_map(|c| {
            let name = c.names?.first()?.trim_start_matches('/').to_owned();
            let variant = name
                .strip_prefix("rpclab-thrift-java-")?
                .strip_suffix(&suffix)?
                .to_owned();
            Some((c.id?, variant))
        })
        .collect()
}

/// Whether results.json holds a cell of thrift-java's `variant` (as a
/// container name spells it).
fn served_a_cell(results: &Path, variant: &str) -> bool {
    let sanitize = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    cells_so_far(results).iter().any(|c| {
        c["server"] == "thrift-java"
            && c["variant"].as_str().map(sanitize).as_deref() == Some(variant)
    })
}

/// Whether container `id` still runs.
async fn running(docker: &Docker, id: &str) -> bool {
    docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .ok()
        .and_then(|i| i.state?.running)
        .unwrap_or(false)
}

/// Inspects the running server container `id`: false when it is gone (or
/// not yet running a process) before it could be inspected; else it must
/// run confined: a non-root user (in its config and in its processes),
/// every capability dropped, no-new-privileges, pids and memory limits, a
/// read-only root with tmpfs scratch, no Docker socket.
async fn inspect_confined(docker: &Docker, id: &str, log: &Path) -> bool {
    // Its processes, as the host's kernel sees them.
    let Ok(processes) = docker
        .top_processes(id, None::<bollard::query_parameters::TopOptions>)
        .await
    else {
        return false;
    };
    if processes.processes.as_ref().is_none_or(|p| p.is_empty()) {
        return false;
    }
    let Ok(info) = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
    else {
        return false;
    };
    let said = || std::fs::read_to_string(log).unwrap_or_default();
    let config = info.config.unwrap();
    let host = info.host_config.unwrap();

    // A non-root user, in the config and in every process.
    let user = config.user.unwrap_or_default();
    assert_eq!(user, "10001:10001", "server user\n{}", said());
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
    true
}

/// The manifest records the confinement applied: every server's that ran
/// (a variant not run says why instead), and the client's and the
/// registry's.
fn check_confinement_recorded(manifest: &toml::Value) {
    let ran: Vec<&toml::Value> = manifest["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("not_run").is_none())
        .collect();
    assert!(!ran.is_empty(), "{manifest}");
    for server in ran {
        let name = server["name"].as_str().unwrap_or_default();
        let c = server
            .get("confinement")
            .unwrap_or_else(|| panic!("{name}: the server's record has no confinement"));
        assert_eq!(c["user"].as_str(), Some("10001:10001"), "{name}");
        assert_eq!(c["cap_drop"][0].as_str(), Some("ALL"), "{name}");
        assert_eq!(c["no_new_privileges"].as_bool(), Some(true), "{name}");
        assert_eq!(c["read_only_rootfs"].as_bool(), Some(true), "{name}");
        assert_eq!(c["memory_bytes"].as_integer(), Some(5 << 30), "{name}");
        assert!(c["tmpfs"].get("/tmp").is_some(), "{name}");
    }
    for role in ["client", "registry"] {
        let c = &manifest["lab_confinement"][role];
        assert_eq!(c["cap_drop"][0].as_str(), Some("ALL"), "{role}");
        assert_eq!(c["read_only_rootfs"].as_bool(), Some(true), "{role}");
    }
}

/// `<stem>-at-<level>.svg`, or a part of it: one chart per level.
fn is_per_level(file: &str, stem: &str) -> bool {
    file.strip_prefix(stem)
        .and_then(|rest| rest.strip_prefix("-at-"))
        .and_then(|rest| rest.strip_suffix(".svg"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

/// `stem-<k>.svg`: part k of a chart split by its series.
fn is_part_of(file: &str, stem: &str) -> bool {
    file.strip_prefix(stem)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".svg"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// The smoke profile's JIT rule (`prime_jit_quiet_cores = 0.05`,
/// compose/full.toml) on a variant's first cell: every server here is a
/// JVM whose threads this host sees, so each pass's compiler cores were
/// read, the verdict follows from the last of them, and only a pass after
/// the first adds `more_passes_s`. The cell's own window has its
/// compiler time too.
fn jit_rule_was_judged(variant: &str, primed: &serde_json::Value, cell: &serde_json::Value) {
    let passes: Vec<f64> = primed["compiler_cores_by_pass"]
        .as_array()
        .unwrap_or_else(|| panic!("{variant}: no compiler cores in its priming: {primed}"))
        .iter()
        .map(|c| c.as_f64().unwrap())
        .collect();
    let last = *passes
        .last()
        .unwrap_or_else(|| panic!("{variant}: no pass judged"));
    assert!(
        passes.iter().all(|c| (0.0..=64.0).contains(c)),
        "{variant}: {passes:?}"
    );
    assert_eq!(
        primed["jit_quiet"].as_bool(),
        Some(last <= 0.05),
        "{variant}: {primed}"
    );
    let more = primed["more_passes_s"].as_f64().unwrap_or(0.0);
    assert_eq!(passes.len() > 1, more > 0.0, "{variant}: {primed}");
    assert!(
        cell["server_cost"]["compiler_cpu_ms"]
            .as_f64()
            .is_some_and(|ms| ms >= 0.0),
        "{variant}: no compiler time in its window: {}",
        cell["server_cost"]
    );
}
