//! What the lab's end-to-end tests share: the runs they start, how they
//! wait for them, and what every cell of every snapshot must satisfy.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

use super::xtask_command;

/// `args` followed by `--results-dir results`.
pub fn into_results(args: &[&str], results: &Path) -> Vec<String> {
    args.iter()
        .map(|s| s.to_string())
        .chain([
            "--results-dir".to_owned(),
            results.to_str().unwrap().to_owned(),
        ])
        .collect()
}

/// `lab run --only thrift-java --profile smoke` into `results`.
pub fn thrift_smoke_args(results: &Path) -> Vec<String> {
    into_results(
        &["lab", "run", "--only", "thrift-java", "--profile", "smoke"],
        results,
    )
}

/// A quick run of thrift-java 0.20 (`--duration`, `--repetitions` and
/// `--levels` over the smoke profile, no TOML edited) with `extra`, into
/// `results`.
pub fn quick_thrift_args(
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
pub fn rounds_smoke_args(results: &Path) -> Vec<String> {
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

/// What every cell must satisfy whatever the machine's speed: every call
/// verified, the warm-up's promise kept, and every per-call figure resting
/// on the same calls (docs/methodology.md, "What a window counts").
pub fn check_cell_consistency(server: &str, c: &Value) {
    check_cell(server, c, false);
}

/// [`check_cell_consistency`], but a server's own refusals (a Dubbo
/// provider's "thread pool is exhausted" reply to the async scenario's
/// 3,200 calls in flight, which a busy machine makes likelier) may be among
/// the failed calls when `refusals_allowed`: they are replies, decoded and
/// classified, never a wrong or unparsed one.
pub fn check_cell(server: &str, c: &Value, refusals_allowed: bool) {
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
        // Wire bytes per call are figures, never negative. Whether a
        // window sees either direction depends on the host's speed: on an
        // overloaded host, with calls slower than a short window, every
        // call it counts was written before it opened, and the replies can
        // have been read before it too (CI saw both zero, with calls of
        // 2 s in a 0.4 s window). That bytes are counted at all is the
        // run's to show, over its cells ([`bytes_counted_somewhere`]).
        for direction in ["bytes_received_per_call", "bytes_sent_per_call"] {
            let per_call = f(&c["report"][direction]);
            assert!(per_call.is_finite() && per_call >= 0.0, "{server}: {c}");
        }
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

/// Starts `xtask args` in the background with its output in `run.log` in
/// `dir`; returns the process and the log's path.
pub fn spawn_logged(args: &[&str], dir: &Path) -> (std::process::Child, PathBuf) {
    let log_path = dir.join("run.log");
    let log_file = std::fs::File::create(&log_path).unwrap();
    let child = xtask_command(args)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .unwrap();
    (child, log_path)
}

/// The cells measured so far by the runs writing snapshots under
/// `results` (results.json is written after every cell): none while no
/// snapshot, or no readable results.json, is there yet.
pub fn cells_so_far(results: &Path) -> Vec<Value> {
    let Ok(dirs) = std::fs::read_dir(results) else {
        return Vec::new();
    };
    dirs.flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("results.json")).ok())
        .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
        .flat_map(|r| r["cells"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Waits until a snapshot under `results` holds a measured cell
/// (results.json is written after every cell), however long the builds and
/// the priming take, up to an hour; fails, with the run's log at
/// `log_path`, if the run ends first.
pub fn wait_for_a_cell(run: &mut std::process::Child, results: &Path, log_path: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    while cells_so_far(results).is_empty() {
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

/// A cell's identity in a snapshot: server, variant, scenario, level,
/// repetition (or round).
pub fn cell_id(c: &Value) -> (String, String, String, u64, u64) {
    (
        c["server"].as_str().unwrap().to_owned(),
        c["variant"].as_str().unwrap().to_owned(),
        c["scenario"].as_str().unwrap().to_owned(),
        c["concurrency"].as_u64().unwrap(),
        c["repetition"].as_u64().unwrap(),
    )
}

/// `lab ps` against `endpoint` (through DOCKER_HOST, as a user would).
pub fn lab_ps_on(endpoint: &str) -> Output {
    xtask_command(&["lab", "ps"])
        .env("DOCKER_HOST", endpoint)
        .output()
        .expect("xtask runs")
}

/// Some cell of a run counted wire bytes both ways: the counters work.
/// (A single cell may see neither on a slow host: [`check_cell_consistency`].)
#[allow(dead_code)]
pub fn bytes_counted_somewhere(cells: &[serde_json::Value]) -> bool {
    cells.iter().any(|c| {
        let r = &c["report"];
        r["bytes_received_per_call"].as_f64().unwrap_or(0.0) > 0.0
            && r["bytes_sent_per_call"].as_f64().unwrap_or(0.0) > 0.0
    })
}
