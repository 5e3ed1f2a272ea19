//! End-to-end: the real `cargo xtask lab` code path against real servers in
//! real containers. Needs a running Docker engine (CI starts one).
//!
//! One lab run covers every server, to share the image builds and the JVM
//! start-ups; the assertions then check each server's cells.

mod common;

use common::{engine_lock, only_snapshot, repo_root, text, xtask, xtask_command};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `args` followed by `--results-dir results`.
fn into_results(args: &[&str], results: &Path) -> Vec<String> {
    args.iter()
        .map(|s| s.to_string())
        .chain([
            "--results-dir".to_owned(),
            results.to_str().unwrap().to_owned(),
        ])
        .collect()
}

/// `lab run --only thrift-java --profile smoke` into `results`.
fn thrift_smoke_args(results: &Path) -> Vec<String> {
    into_results(
        &["lab", "run", "--only", "thrift-java", "--profile", "smoke"],
        results,
    )
}

/// A quick run of thrift-java 0.20 (`--duration`, `--repetitions` and
/// `--levels` over the smoke profile, no TOML edited) with `extra`, into
/// `results`.
fn quick_thrift_args(
    results: &Path,
    duration: &str,
    repetitions: &str,
    levels: &str,
    extra: &[&str],
) -> Vec<String> {
    let mut args = thrift_smoke_args(results);
    let quick = [
        "--variant",
        "0.20",
        "--duration",
        duration,
        "--repetitions",
        repetitions,
        "--levels",
        levels,
    ];
    args.extend(quick.iter().chain(extra).map(|a| a.to_string()));
    args
}

/// Seed 003 (two Dubbo 2.6 variants) reproduced in interleaved rounds with
/// the quick `smoke-rounds` profile and a fixed order seed, into `results`.
fn rounds_smoke_args(results: &Path) -> Vec<String> {
    into_results(
        &[
            "lab",
            "reproduce",
            "dubbo-vs-hsf",
            "--profile",
            "smoke-rounds",
            "--rounds-seed",
            "7",
        ],
        results,
    )
}

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

/// What every cell must satisfy whatever the machine's speed: every call
/// verified, the warm-up's promise kept, and every per-call figure resting
/// on the same calls (docs/methodology.md, "What a window counts").
fn check_cell_consistency(server: &str, c: &Value) {
    check_cell(server, c, false);
}

/// [`check_cell_consistency`], but a server's own refusals (a Dubbo
/// provider's "thread pool is exhausted" reply to the async scenario's
/// 3,200 calls in flight, which a busy machine makes likelier) may be among
/// the failed calls when `refusals_allowed`: they are replies, decoded and
/// classified, never a wrong or unparsed one.
fn check_cell(server: &str, c: &Value, refusals_allowed: bool) {
    let f = |v: &Value| {
        v.as_f64()
            .unwrap_or_else(|| panic!("{server}: not a number in {c}"))
    };
    let ok = c["calls_ok"].as_u64().unwrap();
    let failed = c["calls_failed"].as_u64().unwrap();
    let calls = (ok + failed) as f64;
    let refused = c["report"]["failures"]["server_error"]
        .as_u64()
        .unwrap_or(0);
    let allowed = if refusals_allowed { refused } else { 0 };
    assert_eq!(failed, allowed, "{server}: failed calls in {c}");
    assert_eq!(c["report"]["verified"], Value::Bool(true));
    assert_eq!(c["report"]["calls_ok"], c["calls_ok"]);
    // Throughput is the window's successful calls over its length.
    let duration = f(&c["duration_s"]);
    assert!(duration > 0.0, "{server}: {c}");
    assert!(
        (f(&c["throughput_per_s"]) * duration - ok as f64).abs() <= 1e-6 * (ok as f64).max(1.0),
        "{server}: throughput is not calls_ok / duration in {c}"
    );
    // Per-call costs are the window's totals over the same calls.
    for side in ["client_cost", "server_cost"] {
        if let Some(cost) = c[side].as_object() {
            let per_call = f(&cost["cpu_us_per_call"]);
            let total_us = f(&cost["cpu_ms"]) * 1e3;
            if calls > 0.0 {
                assert!(
                    (per_call * calls - total_us).abs() <= 1e-6 * total_us.max(1.0),
                    "{server}: {side} per call is not its total over the window's calls in {c}"
                );
            } else {
                assert_eq!(per_call, 0.0, "{server}: {c}");
            }
        }
    }
    assert!(
        c["client_cost"].is_object(),
        "{server}: no client cost in {c}"
    );
    // The warm-up did not open the window before every connection had
    // answered, unless it reached its limit, which flags the cell.
    let flags: Vec<&str> = c["flags"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default();
    if let Some(w) = c["report"]["warmup"].as_object() {
        let answered = w["every_connection_answered"].as_bool().unwrap();
        let steady = w["steady"].as_bool().unwrap();
        assert_eq!(steady, !flags.contains(&"not-steady"), "{server}: {c}");
        if answered {
            assert!(w["calls"].as_u64().unwrap() >= 1, "{server}: {c}");
        } else {
            assert!(!steady, "{server}: {c}");
        }
    } else {
        assert!(
            c["report"]["connect_ms"].is_number(),
            "{server}: only a cell that counts connection set-up skips the warm-up: {c}"
        );
    }
    // Too few calls is a flag, never a silent zero.
    let min_calls = c["report"]["min_calls"].as_u64().unwrap();
    assert_eq!(
        (ok + failed) < min_calls,
        flags.contains(&"too-few-calls"),
        "{server}: {c}"
    );
    if ok > 0 {
        let p99 = f(&c["latency_us"]["p99"]);
        assert!(
            p99 > 0.0 && f(&c["latency_us"]["p999"]) >= p99,
            "{server}: {c}"
        );
        assert!(f(&c["latency_us"]["max"]) >= f(&c["latency_us"]["min"]));
        // Wire bytes are counted. Which direction a window sees depends on
        // the host's speed: on an overloaded host, with calls slower than a
        // short window, a multiplexed connection's replies can all have been
        // read before the window opened (and the requests written after it
        // closed), so one direction may be zero, never both.
        assert!(
            f(&c["report"]["bytes_received_per_call"]) > 0.0
                || f(&c["report"]["bytes_sent_per_call"]) > 0.0,
            "{server}: {c}"
        );
    }
    // Where the limit was is always said.
    let limit = c["limit"]
        .as_object()
        .unwrap_or_else(|| panic!("{server}: no limit in {c}"));
    let side = limit["side"].as_str().unwrap();
    assert_eq!(
        side == "client",
        flags.contains(&"client-bound"),
        "{server}: {c}"
    );
    assert_eq!(
        side == "server",
        flags.contains(&"server-bound"),
        "{server}: {c}"
    );
}

#[test]
fn smoke_run_of_every_server_verifies_every_call_and_writes_a_snapshot() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    // One repetition: this test is about every variant's calls, and it
    // starts each of the 41 once; the spread of repetitions is the thrift
    // runs' to exercise (`thrift_smoke_args`: the smoke profile's two).
    let out = xtask(&[
        "lab",
        "run",
        "--lab",
        "compose/full.toml",
        "--profile",
        "smoke",
        "--repetitions",
        "1",
        "--results-dir",
        results.path().to_str().unwrap(),
    ]);
    let log = text(&out);
    assert!(out.status.success(), "lab run failed:\n{log}");

    let snap = only_snapshot(results.path());
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    assert_eq!(manifest["profile"].as_str(), Some("smoke"));
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
    let servers = server_names();
    for required in ["grpc-java", "thrift-java", "dubbo-3.3", "dubbo-2.6"] {
        assert!(
            servers.iter().any(|s| s == required),
            "servers/{required} is missing"
        );
    }
    for server in &servers {
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
            assert!(primed["warmup"]["seconds"].as_f64().unwrap() >= 0.3);
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

    // Nothing of the run is left behind.
    let clean = xtask(&["lab", "clean"]);
    assert!(clean.status.success(), "{}", text(&clean));
    assert!(
        text(&clean).contains("removed 0 lab container"),
        "the run left containers: {}",
        text(&clean)
    );
}

#[test]
fn list_shows_every_server_and_its_variants() {
    let out = xtask(&["lab", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    let s = text(&out);
    for name in [
        "grpc-java",
        "thrift-java",
        "dubbo-3.3",
        "dubbo-2.6",
        "order-echo",
    ] {
        assert!(s.contains(name), "`lab list` does not show {name}:\n{s}");
    }
}

#[test]
fn an_unknown_server_is_a_clear_error() {
    let out = xtask(&["lab", "run", "--only", "nosuch", "--profile", "smoke"]);
    assert!(!out.status.success());
    let s = text(&out);
    assert!(
        s.contains("no server or framework called `nosuch`") && s.contains("grpc-java"),
        "{s}"
    );
}

#[test]
fn a_broken_lab_definition_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let lab = dir.path().join("lab.toml");
    std::fs::write(
        &lab,
        "name = \"x\"\nscenarios = [\"order-echo\"\nprofile = \"smoke\"\n",
    )
    .unwrap();
    let out = xtask(&["lab", "run", "--lab", lab.to_str().unwrap()]);
    assert!(!out.status.success());
    let s = text(&out);
    assert!(
        s.contains(&format!("{}:", lab.display())) && s.contains(":3:"),
        "{s}"
    );
}

#[test]
fn a_wrong_flag_is_rejected_with_usage() {
    let out = xtask(&["lab", "run", "--profil", "smoke"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--profile"), "{}", text(&out));
}

#[test]
fn overlapping_cpu_sets_are_refused_before_anything_starts() {
    let results = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "lab",
        "run",
        "--only",
        "thrift-java",
        "--profile",
        "smoke",
        "--server-cpus",
        "0",
        "--client-cpus",
        "0",
        "--results-dir",
        results.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let s = text(&out);
    assert!(s.contains("server CPUs 0 overlap the client CPUs 0"), "{s}");
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "a snapshot folder was created"
    );
    let out = xtask(&[
        "lab",
        "run",
        "--only",
        "thrift-java",
        "--server-cpus",
        "4096",
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no CPU 4096"), "{}", text(&out));
}

/// `kill -9` of a running orchestrator leaves its containers; the next run
/// recognises them as a dead run's, removes them, and runs.
#[test]
fn a_run_after_a_killed_one_cleans_up_and_succeeds() {
    let _engine = engine_lock();
    let first = tempfile::tempdir().unwrap();
    let args = thrift_smoke_args(first.path());
    let mut killed = xtask_command(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (however long the image builds take) until its server runs.
    let mut seen = false;
    for _ in 0..3600 {
        if let Some(status) = killed.try_wait().unwrap() {
            panic!("the first run ended by itself ({status}) before its server was seen");
        }
        if text(&xtask(&["lab", "ps"])).contains("rpclab-thrift-java") {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(seen, "the first run's server never appeared");
    killed.kill().unwrap();
    killed.wait().unwrap();
    let left = text(&xtask(&["lab", "ps"]));
    assert!(
        left.contains("rpclab-thrift-java"),
        "kill -9 should leave its containers: {left}"
    );

    let second = tempfile::tempdir().unwrap();
    let args = thrift_smoke_args(second.path());
    let out = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let log = text(&out);
    assert!(
        out.status.success(),
        "the run after the killed one failed:\n{log}"
    );
    assert!(log.contains("no longer running"), "{log}");
    assert!(text(&xtask(&["lab", "ps"])).contains("no lab container"));
}

/// The second engine of the multi-host test: its socket, and the
/// `dockerd` arguments that give it a data root, exec root and pid file of
/// its own beside the default engine (docs/multi-host.md).
const ENGINE_B: &str = "unix:///run/rpclab-b.sock";
const ENGINE_B_ARGS: &[&str] = &[
    "--host",
    "unix:///run/rpclab-b.sock",
    "--data-root",
    "/var/lib/rpclab-b",
    "--exec-root",
    "/run/rpclab-b-exec",
    "--pidfile",
    "/run/rpclab-b.pid",
    "--bridge",
    "none",
    "--iptables=false",
];

/// `lab ps` against `endpoint` (through DOCKER_HOST, as a user would).
fn lab_ps_on(endpoint: &str) -> Output {
    xtask_command(&["lab", "ps"])
        .env("DOCKER_HOST", endpoint)
        .output()
        .expect("xtask runs")
}

/// The second engine, running: already, or started here (then stopped when
/// dropped). Err says why it cannot be had on this machine.
struct SecondEngine {
    started: Option<std::process::Child>,
}

impl SecondEngine {
    fn get() -> Result<SecondEngine, String> {
        if lab_ps_on(ENGINE_B).status.success() {
            return Ok(SecondEngine { started: None });
        }
        let root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        if !root {
            return Err(format!(
                "{ENGINE_B} does not answer and starting a second dockerd needs root"
            ));
        }
        let log_path = std::env::temp_dir().join("rpclab-dockerd-b.log");
        let log = std::fs::File::create(&log_path).unwrap();
        let child = match Command::new("dockerd")
            .args(ENGINE_B_ARGS)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                return Err(format!(
                    "{ENGINE_B} does not answer and dockerd cannot be started: {e}"
                ))
            }
        };
        let mut engine = SecondEngine {
            started: Some(child),
        };
        for _ in 0..120 {
            if lab_ps_on(ENGINE_B).status.success() {
                return Ok(engine);
            }
            if let Some(status) = engine.started.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "the second dockerd exited ({status}):\n{}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!(
            "the second dockerd started but {ENGINE_B} did not answer in 60 s:\n{}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        );
    }
}

impl Drop for SecondEngine {
    fn drop(&mut self) {
        if let Some(mut child) = self.started.take() {
            // SIGTERM: dockerd shuts down cleanly and removes its socket.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }
}

/// Server and registry on the default engine, the client on a second one
/// (both on this machine, so every call still goes over 127.0.0.1): every
/// call is verified, every cell is consistent, the manifest names both
/// engines, and neither keeps a container.
#[test]
fn a_client_on_a_second_engine_verifies_every_call_and_the_manifest_names_both_engines() {
    let _engine = engine_lock();
    let second = match SecondEngine::get() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED a_client_on_a_second_engine_...: {why}");
            return;
        }
    };
    let results = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "lab",
        "run",
        "--only",
        "thrift-java,dubbo-2.6",
        "--profile",
        "smoke",
        "--client-host",
        ENGINE_B,
        "--results-dir",
        results.path().to_str().unwrap(),
    ]);
    let log = text(&out);
    assert!(out.status.success(), "lab run failed:\n{log}");
    let snap = only_snapshot(results.path());
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], Value::Bool(true), "{log}");
    let cells = results["cells"].as_array().unwrap();
    for server in ["thrift-java", "dubbo-2.6"] {
        let mine: Vec<_> = cells.iter().filter(|c| c["server"] == server).collect();
        assert!(!mine.is_empty(), "no cell for {server}:\n{log}");
        for c in mine {
            // A server cost, sampled on the server's engine and placed on
            // the client's window, is consistent where present (a short
            // window on a busy machine may have none: never asserted).
            check_cell_consistency(server, c);
        }
    }

    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    let hosts = manifest["hosts"]
        .as_array()
        .expect("[[hosts]] in the manifest");
    assert_eq!(hosts.len(), 2, "{manifest}");
    let roles = |h: &toml::Value| -> Vec<String> {
        h["roles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(roles(&hosts[0]), ["server", "registry"]);
    assert_eq!(roles(&hosts[1]), ["client"]);
    assert_eq!(hosts[1]["endpoint"].as_str(), Some(ENGINE_B));
    // Two engines of one machine may share an id; their data roots differ.
    assert_ne!(hosts[0]["data_root"], hosts[1]["data_root"]);
    assert_eq!(hosts[1]["data_root"].as_str(), Some("/var/lib/rpclab-b"));
    for (h, role) in [(&hosts[0], "server"), (&hosts[1], "client")] {
        for key in [
            "cpu_model",
            "kernel",
            "docker_version",
            "engine_id",
            "hostname",
        ] {
            assert!(!h[key].as_str().unwrap().is_empty(), "{key} of {h}");
        }
        assert!(h["cores"].as_integer().unwrap() > 0);
        assert!(h["clock"]["uncertainty_ms"].as_float().unwrap() >= 0.0);
        assert!(h["clock"]["offset_ms"].as_float().unwrap().is_finite());
        // A unix socket is this machine: its clock is the orchestrator's.
        assert_eq!(h["clock_applied"].as_bool(), Some(false));
        assert!(
            h["calibration"][role]["cpu_rounds_per_s"]
                .as_float()
                .unwrap()
                > 0.0,
            "{h}"
        );
        // Each engine holds the client image it ran, built there.
        assert!(
            h["images"]["rpclab/client:latest"].as_str().is_some(),
            "{h}"
        );
    }
    assert!(hosts[0]["images"]["rpclab/zookeeper:3.9"]
        .as_str()
        .is_some());
    assert!(hosts[1]["images"].get("rpclab/zookeeper:3.9").is_none());

    // Nothing of the run is left on either engine.
    for endpoint in ["", ENGINE_B] {
        let mut ps = xtask_command(&["lab", "ps"]);
        if !endpoint.is_empty() {
            ps.env("DOCKER_HOST", endpoint);
        }
        let ps = text(&ps.output().unwrap());
        assert!(ps.contains("no lab container"), "{endpoint}: {ps}");
    }
    drop(second);
}

/// `stem-<k>.svg`: part k of a chart split by its series.
/// `<stem>-at-<level>.svg`, or a part of it: one chart per level.
fn is_per_level(file: &str, stem: &str) -> bool {
    file.strip_prefix(stem)
        .and_then(|rest| rest.strip_prefix("-at-"))
        .and_then(|rest| rest.strip_suffix(".svg"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

fn is_part_of(file: &str, stem: &str) -> bool {
    file.strip_prefix(stem)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".svg"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// `lab reproduce` in interleaved rounds (profile `smoke-rounds`), on seed
/// 003's two variants of one server folder: both run side by side (the
/// second on a moved port, one ZooKeeper for both), and every round
/// measures each once, in the recorded order.
#[test]
fn a_reproduction_in_rounds_runs_every_variant_side_by_side_once_per_round() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    let args = rounds_smoke_args(results.path());
    let out = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let log = text(&out);
    assert!(out.status.success(), "lab reproduce failed:\n{log}");
    let snap = only_snapshot(results.path());
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    assert_eq!(manifest["rounds_seed"].as_integer(), Some(7));
    let moved: Vec<i64> = manifest["servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("port").and_then(|p| p.as_integer()))
        .collect();
    assert_eq!(
        moved.len(),
        1,
        "the second variant of dubbo-2.6 moves: {manifest}"
    );
    assert!(
        log.matches("starting ZooKeeper").count() == 1,
        "one registry:\n{log}"
    );

    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    let cells = results["cells"].as_array().unwrap();
    let rounds = &results["rounds"];
    assert_eq!(rounds["seed"], 7);
    let orders = rounds["orders"].as_array().unwrap();
    assert!(!orders.is_empty());
    for o in orders {
        let order: Vec<&str> = o["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(order.len(), 2, "both variants in every round: {o}");
        // The cells of the round are those of the order, in its positions.
        for (i, key) in order.iter().enumerate() {
            let matching: Vec<&Value> = cells
                .iter()
                .filter(|c| {
                    c["scenario"] == o["scenario"]
                        && c["concurrency"] == o["concurrency"]
                        && c["repetition"] == o["round"]
                        && format!(
                            "{}/{}",
                            c["server"].as_str().unwrap(),
                            c["variant"].as_str().unwrap()
                        ) == *key
                })
                .collect();
            assert_eq!(matching.len(), 1, "{key} once in {o}");
            assert_eq!(matching[0]["round_position"], i as u64 + 1, "{o}");
        }
    }
    let least = rounds["min"].as_u64().unwrap();
    for c in cells {
        check_cell(c["server"].as_str().unwrap(), c, true);
    }
    // Every level got at least the least rounds.
    let mut levels: std::collections::BTreeMap<String, u64> = Default::default();
    for o in orders {
        let key = format!("{}@{}", o["scenario"], o["concurrency"]);
        let n = levels.entry(key).or_default();
        *n = (*n).max(o["round"].as_u64().unwrap());
    }
    assert!(levels.values().all(|n| *n >= least), "{levels:?}");
    // Two JVM starts (smoke-rounds' design): every cell says which, each
    // start measured both variants, and each variant was primed once per
    // start, before its first cell there.
    assert_eq!(rounds["starts"], 2);
    for start in [1, 2] {
        let of_start: Vec<&Value> = cells.iter().filter(|c| c["start"] == start).collect();
        for variant in ["2.6", "2.6-kryo"] {
            assert!(
                of_start.iter().any(|c| c["variant"] == variant),
                "start {start} measured {variant}: {cells:?}"
            );
        }
        assert_eq!(
            of_start.iter().filter(|c| !c["primed"].is_null()).count(),
            2,
            "start {start}"
        );
    }
    assert!(cells.iter().all(|c| c["start"].is_u64()), "{cells:?}");
    assert_eq!(log.matches("JVM start ").count(), 2, "{log}");
    // The seed's plan is recorded with its hash, and every verdict names
    // it; a smoke-rounds run is not the plan's own design.
    let plan = &manifest["plan"];
    assert_eq!(plan["rule"].as_str(), Some("starts-t-bonferroni/1"));
    let hash = plan["hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    let reproduction = &results["reproduction"];
    assert_eq!(reproduction["plan"]["hash"].as_str(), Some(hash));
    assert_eq!(
        reproduction["under_plan"],
        Value::Null,
        "smoke-rounds is not the plan's profile"
    );
    for v in reproduction["verdicts"].as_array().unwrap() {
        assert_eq!(
            v["plan"].as_str().map(|p| p.starts_with("dubbo-vs-hsf@")),
            Some(true),
            "{v}"
        );
    }

    let clean = xtask(&["lab", "clean"]);
    assert!(
        text(&clean).contains("removed 0 lab container"),
        "the run left containers: {}",
        text(&clean)
    );
}

/// Starts `xtask args` in the background with its output in `run.log` in
/// `dir`; returns the process and the log's path.
fn spawn_logged(args: &[&str], dir: &Path) -> (std::process::Child, PathBuf) {
    let log_path = dir.join("run.log");
    let log_file = std::fs::File::create(&log_path).unwrap();
    let child = xtask_command(args)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .unwrap();
    (child, log_path)
}

/// Waits until a snapshot under `results` holds a measured cell
/// (results.json is written after every cell), however long the builds and
/// the priming take, up to an hour; fails, with the run's log at
/// `log_path`, if the run ends first.
fn wait_for_a_cell(run: &mut std::process::Child, results: &Path, log_path: &Path) {
    let a_cell = || -> bool {
        let Ok(dirs) = std::fs::read_dir(results) else {
            return false;
        };
        dirs.flatten().any(|d| {
            std::fs::read_to_string(d.path().join("results.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|r| r["cells"].as_array().is_some_and(|c| !c.is_empty()))
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    while !a_cell() {
        if let Some(status) = run.try_wait().unwrap() {
            panic!(
                "the run ended ({status}) before its first cell:\n{}",
                std::fs::read_to_string(log_path).unwrap_or_default()
            );
        }
        if std::time::Instant::now() > deadline {
            let _ = run.kill();
            panic!(
                "no cell in {} after an hour:\n{}",
                results.display(),
                std::fs::read_to_string(log_path).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Kills the running lab container whose name contains `part` (SIGKILL,
/// over the engine's API), as a crash of that server would end it; returns
/// its name.
fn kill_lab_container(part: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        let list = docker
            .list_containers(Some(
                bollard::query_parameters::ListContainersOptionsBuilder::default()
                    .all(false)
                    .build(),
            ))
            .await
            .unwrap();
        let name = list
            .into_iter()
            .filter_map(|c| c.names.and_then(|n| n.first().cloned()))
            .map(|n| n.trim_start_matches('/').to_owned())
            .find(|n| n.starts_with("rpclab-") && n.contains(part))
            .unwrap_or_else(|| panic!("no running lab container named *{part}*"));
        docker
            .kill_container(
                &name,
                None::<bollard::query_parameters::KillContainerOptions>,
            )
            .await
            .unwrap();
        name
    })
}

/// A server that dies in the middle of a run in rounds (killed over the
/// engine's API after the first cell): the run says which server exited and
/// that the cells measured before are kept, goes on with the servers left
/// for every round, ends with an error and a partial snapshot, and leaves
/// no container behind.
#[test]
fn a_server_that_dies_between_rounds_keeps_its_cells_and_the_others_run_every_round() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    let args = rounds_smoke_args(results.path());
    let (mut run, log_path) = spawn_logged(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        results.path(),
    );
    wait_for_a_cell(&mut run, results.path(), &log_path);
    let killed = kill_lab_container("2.6-kryo");
    let status = run.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        !status.success(),
        "a run that lost a server must fail:\n{log}"
    );
    assert!(log.contains("the run finished with errors"), "{log}");
    assert!(
        log.contains("server dubbo-2.6 exited with code") || log.contains("dubbo-2.6/2.6-kryo"),
        "the log names the server that died ({killed}):\n{log}"
    );

    let snap = only_snapshot(results.path());
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], false, "a partial snapshot");
    let errors = results["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("dubbo-2.6/2.6-kryo:")),
        "the error names the dead variant: {errors:?}"
    );
    // The survivor ran every round of its level; every cell kept is whole.
    let cells = results["cells"].as_array().unwrap();
    for c in cells {
        check_cell(c["server"].as_str().unwrap(), c, true);
    }
    let survivor: Vec<&Value> = cells.iter().filter(|c| c["variant"] == "2.6").collect();
    let least = results["rounds"]["min"].as_u64().unwrap();
    assert!(
        survivor.len() as u64 >= least,
        "dubbo-2.6/2.6 measured in every round ({} of at least {least}): {cells:?}",
        survivor.len()
    );
    let clean = xtask(&["lab", "clean"]);
    assert!(
        text(&clean).contains("removed 0 lab container"),
        "the run left containers: {}",
        text(&clean)
    );
}

/// A cell's identity in a snapshot: server, variant, scenario, level,
/// repetition (or round).
fn cell_id(c: &Value) -> (String, String, String, u64, u64) {
    (
        c["server"].as_str().unwrap().to_owned(),
        c["variant"].as_str().unwrap().to_owned(),
        c["scenario"].as_str().unwrap().to_owned(),
        c["concurrency"].as_u64().unwrap(),
        c["repetition"].as_u64().unwrap(),
    )
}

/// `lab run` of two servers, killed (SIGKILL) once results.json holds a
/// cell, then `--resume`d: the snapshot ends complete, with every cell
/// measured before the kill as it was, every planned cell exactly once,
/// the resume in its manifest, and no lab container left.
#[test]
fn a_run_killed_mid_way_resumes_to_every_planned_cell_exactly_once() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    let args = [
        "lab",
        "run",
        "--only",
        "thrift-java,rmi-jdk",
        "--profile",
        "smoke",
    ];
    let results_dir = results.path().to_str().unwrap();
    let (mut run, log_path) = spawn_logged(
        &[&args[..], &["--results-dir", results_dir]].concat(),
        results.path(),
    );
    wait_for_a_cell(&mut run, results.path(), &log_path);
    run.kill().unwrap();
    run.wait().unwrap();
    let snap = only_snapshot(results.path());
    let read = |file: &str| std::fs::read_to_string(snap.join(file)).unwrap();
    let before: Value = serde_json::from_str(&read("results.json")).unwrap();
    assert_eq!(before["complete"], false, "a killed run is incomplete");
    let kept = before["cells"].as_array().unwrap().clone();
    assert!(!kept.is_empty());

    let out = xtask(&[&args[..], &["--resume", snap.to_str().unwrap()]].concat());
    let log = text(&out);
    assert!(out.status.success(), "the resumed run failed:\n{log}");
    assert!(log.contains("resuming"), "{log}");
    assert_eq!(
        only_snapshot(results.path()),
        snap,
        "the resume writes into the same snapshot"
    );
    let after: Value = serde_json::from_str(&read("results.json")).unwrap();
    assert_eq!(after["complete"], true, "{log}");
    let cells = after["cells"].as_array().unwrap();
    for c in &kept {
        assert!(
            cells.iter().any(|d| d == c),
            "a cell measured before the kill is kept as it was: {:?}",
            cell_id(c)
        );
    }
    // The plan: every variant that ran, at each (scenario, level), each
    // repetition of the profile.
    let manifest: toml::Value = toml::from_str(&read("manifest.toml")).unwrap();
    assert_eq!(
        manifest["resumed_utc"].as_array().map(Vec::len),
        Some(1),
        "the manifest records the resume"
    );
    let lab: toml::Value = toml::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../compose/lab.toml"))
            .unwrap(),
    )
    .unwrap();
    let repetitions = lab["profiles"]["smoke"]["repetitions"]
        .as_integer()
        .unwrap() as u64;
    let levels: std::collections::BTreeSet<(String, u64)> = cells
        .iter()
        .map(|c| {
            let (_, _, scenario, level, _) = cell_id(c);
            (scenario, level)
        })
        .collect();
    let mut planned = Vec::new();
    for s in manifest["servers"].as_array().unwrap() {
        if s.get("not_run").is_some() {
            continue;
        }
        for (scenario, level) in &levels {
            for rep in 1..=repetitions {
                planned.push((
                    s["name"].as_str().unwrap().to_owned(),
                    s["variant"].as_str().unwrap().to_owned(),
                    scenario.clone(),
                    *level,
                    rep,
                ));
            }
        }
    }
    let mut measured: Vec<_> = cells.iter().map(cell_id).collect();
    measured.sort();
    planned.sort();
    assert_eq!(measured, planned, "every planned cell exactly once");
    assert!(
        text(&xtask(&["lab", "ps"])).contains("no lab container"),
        "the killed run's containers were removed"
    );
}

/// A quick run (`--duration`, `--repetitions`, `--levels`, `--variant`,
/// no TOML edited) with one threshold no server can hold and one every
/// server holds: the run exits 99 (k6's code) after measuring every cell,
/// names each breach in one line, and the snapshot keeps the thresholds,
/// the breaches and the overrides.
#[test]
fn a_breached_threshold_exits_99_and_the_snapshot_keeps_it() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    let args = quick_thrift_args(
        results.path(),
        "1s",
        "1",
        "2",
        &["--threshold", "p99<1ns", "--threshold", "errors<=100%"],
    );
    let out = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let log = text(&out);
    assert_eq!(out.status.code(), Some(99), "{log}");
    assert!(log.contains("threshold p99<1ns breached"), "{log}");
    assert!(!log.contains("threshold errors<=100% breached"), "{log}");

    let snapshot = only_snapshot(results.path());
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot.join("results.json")).unwrap())
            .unwrap();
    let cells = json["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "nothing measured: {log}");
    for c in cells {
        assert_eq!(c["variant"], "0.20", "{c}");
        assert_eq!(c["concurrency"], 2, "{c}");
    }
    let check = &json["thresholds"];
    assert_eq!(
        check["asked"],
        serde_json::json!(["p99<1ns", "errors<=100%"])
    );
    let breaches = check["breaches"].as_array().unwrap();
    assert_eq!(breaches.len(), cells.len(), "one breach a cell: {check}");
    assert!(
        breaches.iter().all(|b| b["threshold"] == "p99<1ns"),
        "{check}"
    );

    let manifest = std::fs::read_to_string(snapshot.join("manifest.toml")).unwrap();
    assert!(manifest.contains("p99<1ns"), "{manifest}");
    assert!(manifest.contains("thrift-java/0.20"), "{manifest}");
}

/// By default a run's containers share a network namespace of their own:
/// while thrift-java serves the run's client on 127.0.0.1:9090 (every call
/// verified), a process of the host connecting to 127.0.0.1:9090 finds
/// nothing there, and the manifest says what the run exposed.
#[test]
fn a_run_s_servers_answer_its_client_and_no_host_process() {
    let _engine = engine_lock();
    let results = tempfile::tempdir().unwrap();
    let args = quick_thrift_args(results.path(), "2s", "3", "1", &[]);
    let (mut run, log_path) = spawn_logged(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        results.path(),
    );
    wait_for_a_cell(&mut run, results.path(), &log_path);
    // The server is up for the cells still to come.
    let reached = std::net::TcpStream::connect_timeout(
        &"127.0.0.1:9090".parse().unwrap(),
        std::time::Duration::from_secs(5),
    );
    let status = run.wait().unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    assert!(status.success(), "{log}");
    assert!(
        reached.is_err(),
        "a host process connected to the run's server: {reached:?}\n{log}"
    );
    assert!(log.contains("probe in the run's network"), "{log}");

    let snapshot = only_snapshot(results.path());
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot.join("results.json")).unwrap())
            .unwrap();
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(
        cells.len(),
        3,
        "order-echo at level 1, three repetitions: {log}"
    );
    for c in cells {
        check_cell("thrift-java", c, false);
    }
    let manifest = std::fs::read_to_string(snapshot.join("manifest.toml")).unwrap();
    assert!(manifest.contains("network = \"private:"), "{manifest}");
}

/// The engine the engine-restart test stops and starts: a `dockerd` of
/// the test's own beside the default engine (other runs use that one), with
/// a socket, data root, exec root and pid file of its own, no bridge and
/// no iptables (the lab uses the host's network only), as `.ci/run` starts
/// the multi-host test's second engine.
const ENGINE_C: &str = "unix:///run/rpclab-c.sock";
const ENGINE_C_ARGS: &[&str] = &[
    "--host",
    "unix:///run/rpclab-c.sock",
    "--data-root",
    "/var/lib/rpclab-c",
    "--exec-root",
    "/run/rpclab-c-exec",
    "--pidfile",
    "/run/rpclab-c.pid",
    "--bridge",
    "none",
    "--iptables=false",
];
const ENGINE_C_PIDFILE: &str = "/run/rpclab-c.pid";

/// A `dockerd` this test starts and stops; dropped, it is stopped (also
/// when the test fails).
struct PrivateEngine {
    dockerd: Option<std::process::Child>,
    log: PathBuf,
}

impl PrivateEngine {
    /// Starts it; Err says why no `dockerd` can be started here.
    fn start() -> Result<PrivateEngine, String> {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        if !root {
            return Err("starting a dockerd of the test's own needs root".into());
        }
        // One left by a test run that was killed is this test's own.
        if let Some(pid) = std::fs::read_to_string(ENGINE_C_PIDFILE)
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("/run/rpclab-c.sock") {
                terminate(pid);
            }
        }
        let mut engine = PrivateEngine {
            dockerd: None,
            log: std::env::temp_dir().join("rpclab-dockerd-c.log"),
        };
        engine.start_again()?;
        Ok(engine)
    }

    /// Starts `dockerd` and waits until the engine answers.
    fn start_again(&mut self) -> Result<(), String> {
        assert!(self.dockerd.is_none(), "dockerd runs already");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new("dockerd")
            .args(ENGINE_C_ARGS)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("dockerd cannot be started: {e}"))?;
        self.dockerd = Some(child);
        for _ in 0..240 {
            if lab_ps_on(ENGINE_C).status.success() {
                return Ok(());
            }
            if let Some(status) = self.dockerd.as_mut().unwrap().try_wait().unwrap() {
                self.dockerd = None;
                return Err(format!(
                    "dockerd exited at its start ({status}):\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!(
            "dockerd started but {ENGINE_C} did not answer in 2 min:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// Stops `dockerd` as a restart of the engine does (SIGTERM: it stops
    /// its containers, then exits) and waits until it has exited.
    fn stop(&mut self) {
        if let Some(mut child) = self.dockerd.take() {
            terminate(child.id() as i32);
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateEngine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// SIGTERM to `pid`, then waits (up to 2 min) until it is gone.
fn terminate(pid: i32) {
    // SAFETY: kill(2) with a signal number, no memory involved.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        return;
    }
    for _ in 0..1200 {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return;
        }
        // Reaps it when it is this process's child (else nothing happens).
        // SAFETY: waitpid on one pid, no memory involved.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The images a run of thrift-java 0.20 needs, copied from the default
/// engine (where `lab build` made them) to `endpoint` unless it has them.
/// A copy keeps each image's id and labels, so the run on that engine
/// finds every image by its input hash and builds nothing; a build there
/// would repeat the whole chain (debootstrap, the JDK, Maven's downloads).
fn copy_thrift_images_to(endpoint: &str) {
    let tags = [
        "rpclab/base:bookworm",
        "rpclab/runtime:bookworm",
        "rpclab/jdk:17",
        "rpclab/maven:17",
        "rpclab/client:latest",
        "rpclab/server-thrift-java:0.20",
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use futures_util::StreamExt;
        let from = bollard::Docker::connect_with_local_defaults()
            .unwrap()
            .negotiate_version()
            .await
            .unwrap();
        let path = endpoint.strip_prefix("unix://").unwrap();
        let to = bollard::Docker::connect_with_unix(path, 600, bollard::API_DEFAULT_VERSION)
            .unwrap()
            .negotiate_version()
            .await
            .unwrap();
        let mut missing = Vec::new();
        for tag in tags {
            let id = from
                .inspect_image(tag)
                .await
                .unwrap_or_else(|e| panic!("{tag} is not on the default engine: {e}"))
                .id;
            let there = to.inspect_image(tag).await.ok().and_then(|i| i.id);
            if there != id {
                missing.push(tag);
            }
        }
        if missing.is_empty() {
            return;
        }
        let saved = from
            .export_images(&missing)
            .take_while(|chunk| std::future::ready(chunk.is_ok()))
            .map(|chunk| chunk.unwrap());
        let mut loading = to.import_image_stream(
            bollard::query_parameters::ImportImageOptions::default(),
            saved,
            None,
        );
        while let Some(step) = loading.next().await {
            step.unwrap_or_else(|e| panic!("loading {missing:?} into {endpoint} failed: {e}"));
        }
        for tag in missing {
            let (a, b) = (
                from.inspect_image(tag).await.unwrap().id,
                to.inspect_image(tag).await.ok().and_then(|i| i.id),
            );
            assert_eq!(Some(a), Some(b), "{tag} was not copied whole");
        }
    });
}

/// The test's own engine, started, with the images of a thrift-java 0.20
/// run (built, or found, on the default engine, then copied); None, said
/// as `test` SKIPPED, where no `dockerd` can be started here.
fn engine_c_with_thrift(test: &str) -> Option<PrivateEngine> {
    let engine = match PrivateEngine::start() {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED {test}: {why}");
            return None;
        }
    };
    let build = xtask(&[
        "lab",
        "build",
        "--only",
        "thrift-java",
        "--profile",
        "smoke",
    ]);
    assert!(
        build.status.success(),
        "lab build failed:\n{}",
        text(&build)
    );
    copy_thrift_images_to(ENGINE_C);
    Some(engine)
}

/// `xtask args` on the engine at `endpoint` (through DOCKER_HOST), in the
/// background, its output in `dir/<name>.log`.
fn spawn_on(
    endpoint: &str,
    args: &[&str],
    dir: &Path,
    name: &str,
) -> (std::process::Child, PathBuf) {
    let log_path = dir.join(format!("{name}.log"));
    let log_file = std::fs::File::create(&log_path).unwrap();
    let child = xtask_command(args)
        .env("DOCKER_HOST", endpoint)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .unwrap();
    (child, log_path)
}

/// Waits (up to 30 min) for `run` to end; its exit status and log.
fn wait_for_end(
    run: &mut std::process::Child,
    log_path: &Path,
) -> (std::process::ExitStatus, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1800);
    loop {
        if let Some(status) = run.try_wait().unwrap() {
            return (status, std::fs::read_to_string(log_path).unwrap());
        }
        if std::time::Instant::now() > deadline {
            let _ = run.kill();
            panic!(
                "the run did not end in 30 min:\n{}",
                std::fs::read_to_string(log_path).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The engine-restart test's run: thrift-java 0.20 at levels 1 and 2, two
/// repetitions, 1 s windows, into `results`, waiting `engine_wait` for an
/// engine that stops answering.
fn restart_run_args(results: &Path, engine_wait: &str) -> Vec<String> {
    quick_thrift_args(results, "1s", "2", "1,2", &["--engine-wait", engine_wait])
}

/// The engine-restart test's run on the test's engine, in the background,
/// once its first cell is written: the run, its log, the cells so far.
fn restart_run_to_first_cell(
    results: &Path,
    engine_wait: &str,
    name: &str,
) -> (std::process::Child, PathBuf, Vec<Value>) {
    let args = restart_run_args(results, engine_wait);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut run, log_path) = spawn_on(ENGINE_C, &args, results, name);
    wait_for_a_cell(&mut run, results, &log_path);
    let kept = cells_so_far(results);
    (run, log_path, kept)
}

/// The engine-restart test's plan: compose/lab.toml's one scenario
/// (order-echo, closed loop), levels 1 and 2, repetitions 1 and 2.
fn restart_run_plan() -> Vec<(String, String, String, u64, u64)> {
    let mut plan = Vec::new();
    for level in [1, 2] {
        for rep in [1, 2] {
            plan.push((
                "thrift-java".to_owned(),
                "0.20".to_owned(),
                "order-echo".to_owned(),
                level,
                rep,
            ));
        }
    }
    plan
}

/// A finished snapshot of the engine-restart test's run: complete, every
/// cell consistent, every planned cell exactly once, every cell of `kept`
/// as it was, and no `stopped` left in its manifest.
fn check_restarted_snapshot(snap: &Path, kept: &[Value], log: &str) {
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], true, "{log}");
    let cells = results["cells"].as_array().unwrap();
    for c in cells {
        check_cell_consistency("thrift-java", c);
    }
    for c in kept {
        assert!(
            cells.iter().any(|d| d == c),
            "a cell written before the engine stopped is kept as it was: {:?}",
            cell_id(c)
        );
    }
    let mut measured: Vec<_> = cells.iter().map(cell_id).collect();
    measured.sort();
    assert_eq!(
        measured,
        restart_run_plan(),
        "every planned cell exactly once:\n{log}"
    );
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    assert!(manifest.get("stopped").is_none(), "{manifest}");
}

/// The cells of the only snapshot under `results`, once it has one.
fn cells_so_far(results: &Path) -> Vec<Value> {
    let snap = only_snapshot(results);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    json["cells"].as_array().unwrap().clone()
}

/// How many lines of `log` say that an engine stopped answering.
fn stopped_answering_lines(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains("stopped answering"))
        .filter(|l| !l.starts_with("error:"))
        .collect()
}

/// A real engine restarted in the middle of a run, twice over, on a
/// `dockerd` of the test's own (never the default engine, which other runs
/// share). Both runs measure thrift-java with the real client.
///
/// 1. Stopped once the first cell is in `results.json` and started again
///    at once (the run waits up to 10 min): the run says in one line that
///    the engine stopped answering, starts the server again and goes on
///    to a complete snapshot (or, should the engine take longer, stops
///    with a resumable one that its `--resume` line completes).
/// 2. Stopped for good (the run waits 1 s): the run stops with exit code
///    75, its last line the `--resume` command, its manifest saying why;
///    with the engine started again, that command completes the snapshot.
///
/// Each time: every planned cell exactly once, the cells written before
/// the stop kept as they were, and no lab container left on the engine.
#[test]
fn an_engine_restarted_mid_run_goes_on_or_leaves_a_snapshot_that_resumes() {
    let _engine = engine_lock();
    let Some(mut engine) = engine_c_with_thrift("an_engine_restarted_mid_run_...") else {
        return;
    };

    // 1. A restart: the run goes on.
    let results = tempfile::tempdir().unwrap();
    let (mut run, log_path, kept) = restart_run_to_first_cell(results.path(), "10m", "restart");
    engine.stop();
    engine.start_again().unwrap();
    let (status, mut log) = wait_for_end(&mut run, &log_path);
    let said = stopped_answering_lines(&log);
    assert_eq!(
        said.len(),
        1,
        "one line says the engine stopped answering:\n{log}"
    );
    assert!(
        said[0].contains(&format!(
            "the Docker engine at {ENGINE_C} stopped answering"
        )),
        "{log}"
    );
    let snap = only_snapshot(results.path());
    if status.code() == Some(75) {
        // It did not come back in time after all: its line resumes it.
        let resumed = resume_from_last_line(&log, &snap);
        log.push_str(&resumed);
    } else {
        assert!(status.success(), "the run after the restart failed:\n{log}");
        assert!(log.contains("answers again"), "{log}");
    }
    check_restarted_snapshot(&snap, &kept, &log);
    let ps = text(&lab_ps_on(ENGINE_C));
    assert!(ps.contains("no lab container"), "{ps}");

    // 2. Stopped for good: a resumable snapshot, then resumed.
    let results = tempfile::tempdir().unwrap();
    let (mut run, log_path, kept) = restart_run_to_first_cell(results.path(), "1s", "stop");
    engine.stop();
    let (status, log) = wait_for_end(&mut run, &log_path);
    assert_eq!(
        status.code(),
        Some(75),
        "an engine that is gone: exit 75\n{log}"
    );
    assert_eq!(stopped_answering_lines(&log).len(), 1, "{log}");
    assert!(!log.contains("cannot create container"), "{log}");
    let snap = only_snapshot(results.path());
    let before: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(before["complete"], false, "{log}");
    for c in &kept {
        assert!(before["cells"].as_array().unwrap().contains(c), "{log}");
    }
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    assert!(
        manifest["stopped"]["why"]
            .as_str()
            .is_some_and(|why| why.contains(&format!(
                "the Docker engine at {ENGINE_C} stopped answering"
            ))),
        "the manifest says why the run stopped: {manifest}"
    );
    engine.start_again().unwrap();
    let resumed = resume_from_last_line(&log, &snap);
    assert!(
        resumed.contains("no longer running"),
        "the stopped run's containers are removed by the next run:\n{resumed}"
    );
    check_restarted_snapshot(&snap, &kept, &format!("{log}{resumed}"));
    let ps = text(&lab_ps_on(ENGINE_C));
    assert!(ps.contains("no lab container"), "{ps}");
    drop(engine);
}

/// Runs the `--resume` command that the last line of `log` gives (for the
/// snapshot `snap`) on the test's engine; it must succeed. Its output.
fn resume_from_last_line(log: &str, snap: &Path) -> String {
    let last = log.lines().last().unwrap_or_default();
    let (_, command) = last
        .split_once("continue it with: cargo xtask ")
        .unwrap_or_else(|| panic!("the last line gives the --resume command:\n{log}"));
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(
        words[words.len() - 2..],
        ["--resume", snap.to_str().unwrap()],
        "{last}"
    );
    run_on_engine_c(&words, "the resumed run")
}

/// `xtask args` on the test's engine to its end; it must succeed (else the
/// test fails with its output and `context`). Its output.
fn run_on_engine_c<S: AsRef<str>>(args: &[S], context: &str) -> String {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let out = xtask_command(&args)
        .env("DOCKER_HOST", ENGINE_C)
        .output()
        .unwrap();
    let said = text(&out);
    assert!(
        out.status.success(),
        "`xtask {}` failed:\n{said}\n{context}",
        args.join(" ")
    );
    said
}

/// How a kill-at-random iteration ends the orchestrator's run.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// SIGKILL to the orchestrator: no clean-up of its own at all.
    Sigkill,
    /// Its engine stopped (SIGTERM to `dockerd`, as a restart does) and
    /// not back within the run's `--engine-wait 1s`.
    EngineStop,
}

/// SplitMix64: the kill points' generator, seeded and printed so that a
/// failing sequence can be run again (`RPCLAB_KILL_SEED`).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The cells of `results`'s snapshot so far, and the snapshot; none
/// before the run has written `results.json`.
fn written_so_far(results: &Path) -> Option<(PathBuf, Vec<Value>)> {
    let snap = std::fs::read_dir(results)
        .ok()?
        .flatten()
        .map(|d| d.path())
        .find(|p| p.join("results.json").is_file())?;
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).ok()?).ok()?;
    Some((snap, json["cells"].as_array()?.clone()))
}

/// Waits until `results` holds `cells` measured cells or the run ends.
fn wait_for_cells(run: &mut std::process::Child, results: &Path, cells: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1800);
    while written_so_far(results).map_or(0, |(_, c)| c.len()) < cells
        && run.try_wait().unwrap().is_none()
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 32's "nothing lost, ever": a run of thrift-java (four cells) on
/// an engine of the test's own, ended at a random point by SIGKILL to the
/// orchestrator or by stopping its engine, iteration after iteration
/// (`RPCLAB_KILL_ITERATIONS`, default 3, each bounded by the waits'
/// 30 min). A point is a number of cells already written (0 to 3) and a
/// random delay after it (0 to 1 s; 0 to 6 s from the start for 0 cells,
/// which lands in the claim, the builds' checks, the calibration or the
/// priming). Each time: every cell written before the kill is still in
/// `results.json` as it was; `--resume` (or, killed before the snapshot
/// held a cell, a fresh run) completes a snapshot with every planned cell
/// exactly once; no lab container is left on the engine afterwards.
#[test]
fn killed_at_random_points_a_run_loses_nothing_and_resumes_to_every_cell_once() {
    let _engine = engine_lock();
    let Some(mut engine) = engine_c_with_thrift("killed_at_random_points_...") else {
        return;
    };

    let seed = std::env::var("RPCLAB_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    let iterations: u64 = std::env::var("RPCLAB_KILL_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    eprintln!("kill-at-random: RPCLAB_KILL_SEED={seed}, {iterations} iterations");
    let mut rng = SplitMix(seed);
    for i in 0..iterations {
        let kill = if i % 2 == 0 {
            Kill::Sigkill
        } else {
            Kill::EngineStop
        };
        let after_cells = rng.below(4) as usize;
        let delay_ms = if after_cells == 0 {
            rng.below(6000)
        } else {
            rng.below(1000)
        };
        let point =
            format!("iteration {i} (seed {seed}): {kill:?} {delay_ms} ms after cell {after_cells}");
        eprintln!("kill-at-random: {point}");

        let results = tempfile::tempdir().unwrap();
        let args = restart_run_args(results.path(), "1s");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (mut run, log_path) = spawn_on(ENGINE_C, &args, results.path(), "run");
        wait_for_cells(&mut run, results.path(), after_cells);
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        // What was written before the kill (the run may write more before
        // it lands: kept is a floor).
        let kept = written_so_far(results.path()).map_or(Vec::new(), |(_, c)| c);
        match kill {
            Kill::Sigkill => {
                let _ = run.kill();
                let _ = run.wait();
            }
            Kill::EngineStop => {
                engine.stop();
                let _ = wait_for_end(&mut run, &log_path);
                engine.start_again().unwrap();
            }
        }
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        let context = format!("{point}\n--- the killed run ---\n{log}");

        let finished = match written_so_far(results.path()) {
            Some((snap, cells)) => {
                for c in &kept {
                    assert!(
                        cells.contains(c),
                        "a cell written before the kill is kept as it was: {:?}\n{context}",
                        cell_id(c)
                    );
                }
                let complete: Value = serde_json::from_str(
                    &std::fs::read_to_string(snap.join("results.json")).unwrap(),
                )
                .unwrap();
                let next: Vec<String> = if complete["complete"] != true {
                    // The same command, its snapshot named by --resume
                    // instead of its folder by --results-dir.
                    let mut resume: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                    let at = resume.iter().position(|a| a == "--results-dir").unwrap();
                    resume.drain(at..at + 2);
                    resume.extend(["--resume".to_owned(), snap.display().to_string()]);
                    resume
                } else {
                    // Killed after its last cell (a fast machine): the next
                    // run is a fresh one, which must still find nothing
                    // left behind once it ends.
                    restart_run_args(&results.path().join("again"), "1s")
                };
                run_on_engine_c(&next, &context);
                (snap, results)
            }
            None => {
                // Killed before a cell was written: a fresh run, into a
                // folder of its own, completes (and removes what the
                // killed one left).
                let fresh = tempfile::tempdir().unwrap();
                run_on_engine_c(&restart_run_args(fresh.path(), "1s"), &context);
                (only_snapshot(fresh.path()), fresh)
            }
        };
        check_restarted_snapshot(&finished.0, &kept, &context);
        let ps = text(&lab_ps_on(ENGINE_C));
        assert!(ps.contains("no lab container"), "{ps}\n{context}");
    }
    drop(engine);
}
