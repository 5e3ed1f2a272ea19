//! End-to-end: the real `cargo xtask lab` code path against real servers in
//! real containers. Needs a running Docker engine (CI starts one).
//!
//! One lab run covers every server, to share the image builds and the JVM
//! start-ups; the assertions then check each server's cells. Beside it, a
//! quick thrift-java run with a threshold that breaches, and one probed
//! from the host.

mod common;

use common::lab::{
    check_cell, check_cell_consistency, quick_thrift_args, spawn_logged, wait_for_a_cell,
};
use common::{engine_lock, only_snapshot, repo_root, text, xtask};
use serde_json::Value;

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
    assert!(std::fs::read_to_string(snap.join("summary.md"))
        .unwrap()
        .contains("order-echo"));
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
