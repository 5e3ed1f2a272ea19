//! End-to-end: the real `cargo xtask lab` code path against real servers in
//! real containers. Needs a running Docker engine (CI starts one).
//!
//! One lab run covers every server, to share the image builds and the JVM
//! start-ups; the assertions then check each server's cells.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("xtask runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn only_snapshot(results: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one snapshot in {}",
        results.display()
    );
    dirs.into_iter().next().unwrap()
}

/// Every server folder's name, read the way the lab reads them.
fn server_names() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(root.join("servers"))
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
    let results = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "lab",
        "run",
        "--lab",
        "compose/full.toml",
        "--profile",
        "smoke",
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
    assert!(snap.join("charts/throughput-order-echo.svg").is_file());

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
            let ok = c["calls_ok"].as_u64().unwrap();
            assert!(ok > 0, "{server}: no successful call in {c}");
            assert_eq!(
                c["calls_failed"].as_u64(),
                Some(0),
                "{server}: failed calls in {c}"
            );
            assert_eq!(c["report"]["verified"], Value::Bool(true));
            assert!(c["latency_us"]["p99"].as_f64().unwrap() > 0.0);
            assert!(c["report"]["bytes_received_per_call"].as_f64().unwrap() > 0.0);
            assert!(
                c["server_cost"]["cpu_us_per_call"].as_f64().unwrap() > 0.0,
                "{server}: no server cost in {c}"
            );
            assert!(
                c["client_cost"]["cpu_us_per_call"].as_f64().unwrap() > 0.0,
                "{server}: no client cost in {c}"
            );
            assert!(
                c["latency_us"]["p999"].as_f64().unwrap()
                    >= c["latency_us"]["p99"].as_f64().unwrap()
            );
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
            assert!(hlog
                .lines()
                .any(|l| !l.starts_with('#') && !l.starts_with('"') && l.split(',').count() == 4));
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
