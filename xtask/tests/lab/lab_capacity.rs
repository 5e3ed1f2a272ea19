//! End-to-end: `cargo xtask lab capacity` against a real server (Thrift's
//! Java server, with the quick `smoke` profile and 1 s windows) in its
//! container. Needs a running Docker engine (CI starts one).
//!
//! What is asserted is the search's structure and consistency, never a
//! timing or a rate: the rate found is the last passing step's, every
//! passing rate lies below every failing one, every step has its cell and
//! its percentile, every reply was verified, the chart names every rate,
//! and `lab report` renders the snapshot again. A second search with a
//! bound no server can hold, started at the lowest rate, ends as "no rate
//! holds the SLO" with exit code 99 (the halving down to that rate is the
//! search's unit tests'). Bad input is refused in one line before
//! anything starts.

use crate::common;

use common::{engine_share, only_snapshot, text, xtask};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `lab capacity thrift-java --profile smoke --duration 1s` with `extra`,
/// into `results`.
fn capacity(results: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "lab",
        "capacity",
        "thrift-java",
        "--profile",
        "smoke",
        "--duration",
        "1s",
        "--results-dir",
        results.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    xtask(&args)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn rate(step: &Value) -> u64 {
    step["offered_per_s"].as_u64().unwrap()
}

/// What every search must satisfy whatever the machine: numbered steps
/// within the budget, each with its cell, its percentile and every reply
/// verified, and the bracket consistent with the steps.
fn check_search(results: &Value, budget: u64) -> Value {
    let search = results["capacity"].clone();
    assert!(search.is_object(), "no capacity in {results}");
    let steps = search["steps"].as_array().unwrap();
    assert!(
        !steps.is_empty() && steps.len() as u64 <= budget,
        "{search}"
    );
    let scenario = search["scenario"].as_str().unwrap();
    let cells = results["cells"].as_array().unwrap();
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step"].as_u64(), Some(i as u64 + 1), "{s}");
        let p = s["percentile_us"].as_f64().unwrap();
        assert!(p.is_finite() && p >= 0.0, "{s}");
        assert_eq!(
            s["verified"],
            Value::Bool(true),
            "every reply verified: {s}"
        );
        let pass = s["pass"].as_bool().unwrap();
        let failures = s["failures"].as_array().map_or(0, Vec::len);
        assert_eq!(
            pass,
            failures == 0,
            "a step passes exactly when nothing failed it: {s}"
        );
        if pass {
            assert_eq!(s["calls_failed"].as_u64(), Some(0), "{s}");
            assert!(p < search["asked"]["slo_us"].as_f64().unwrap(), "{s}");
        }
        // Its cell, a normal one of the snapshot, with the same figures.
        let cell = cells
            .iter()
            .find(|c| {
                c["scenario"] == scenario
                    && c["concurrency"].as_u64() == Some(rate(s))
                    && c["repetition"] == s["repetition"]
            })
            .unwrap_or_else(|| panic!("no cell for step {s}"));
        assert_eq!(cell["report"]["verified"], Value::Bool(true), "{cell}");
        assert_eq!(cell["report"]["load"]["model"], "open", "{cell}");
        assert_eq!(cell["calls_ok"], s["calls_ok"]);
        assert_eq!(cell["calls_failed"], s["calls_failed"]);
    }
    // Every passing rate lies below every failing one.
    let passing: Vec<u64> = steps
        .iter()
        .filter(|s| s["pass"] == true)
        .map(rate)
        .collect();
    let failing: Vec<u64> = steps
        .iter()
        .filter(|s| s["pass"] == false)
        .map(rate)
        .collect();
    if let (Some(top), Some(bottom)) = (passing.iter().max(), failing.iter().min()) {
        assert!(
            top < bottom,
            "a pass at {top} above a fail at {bottom}: {search}"
        );
    }
    // The bracket: the last pass is the highest passing step, the first
    // fail the lowest failing one above it.
    let step = |n: &Value| &steps[n.as_u64().unwrap() as usize - 1];
    if let Some(top) = passing.iter().max() {
        let last = step(&search["last_pass"]);
        assert_eq!(rate(last), *top);
        let later_pass = steps.iter().rev().find(|s| s["pass"] == true).unwrap();
        assert_eq!(later_pass, last, "the last step to pass is the highest");
    } else {
        assert!(search.get("last_pass").is_none(), "{search}");
    }
    if let Some(bottom) = failing.iter().min() {
        assert_eq!(rate(step(&search["first_fail"])), *bottom);
    }
    search
}

#[test]
fn lab_capacity_finds_a_rate_on_a_real_server_and_writes_its_curve() {
    let _engine = engine_share();
    let results = tempfile::tempdir().unwrap();
    // A bound no machine misses at a fraction of its closed-loop rate,
    // however slow or busy (a test must not depend on the machine's
    // speed); failing comes from the rates near the closed-loop
    // throughput, where the queue grows without bound or the rate is not
    // carried.
    let out = capacity(results.path(), &["--slo", "1s", "--budget", "4"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let step_lines = said
        .lines()
        .filter(|l| l.trim_start().starts_with("step "))
        .count();
    let snapshot = only_snapshot(results.path());
    let json = read_json(&snapshot.join("results.json"));
    let search = check_search(&json, 4);
    let steps = search["steps"].as_array().unwrap();
    assert_eq!(step_lines, steps.len(), "one line per step: {said}");
    // A rate was found: the last passing step's.
    assert!(
        matches!(search["outcome"].as_str(), Some("found" | "budget-spent")),
        "{search}"
    );
    let last = &steps[search["last_pass"].as_u64().unwrap() as usize - 1];
    assert_eq!(search["found_per_s"], last["offered_per_s"], "{search}");
    // The closed-loop hint came first, as a cell of its own.
    let hint = &search["hint"];
    assert!(hint["throughput_per_s"].as_f64().unwrap() > 0.0, "{search}");
    assert!(json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["scenario"] == hint["scenario"] && c["report"]["load"]["model"] == "closed"));
    // The final line: the rate found, the last pass and the first fail.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let final_line = stdout.lines().last().unwrap_or_default();
    let found = search["found_per_s"].as_u64().unwrap();
    // A budget spent before any rate failed found a floor, not the rate:
    // on a busy machine the closed-loop hint is low and every step up to
    // the budget may still pass.
    let floor = search["outcome"] == "budget-spent" && search.get("first_fail").is_none();
    let found_said = if floor {
        format!(": at least {found} calls/s")
    } else {
        format!(": {found} calls/s")
    };
    assert!(
        final_line.starts_with("capacity of thrift-java")
            && final_line.contains(&found_said)
            && final_line.contains("last pass")
            && final_line.contains("first fail"),
        "{final_line}"
    );
    // manifest.toml says how the snapshot was made.
    let manifest = std::fs::read_to_string(snapshot.join("manifest.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&manifest).unwrap();
    assert_eq!(manifest["capacity"]["slo"].as_str(), Some("1s"));
    assert_eq!(manifest["capacity"]["percentile"].as_str(), Some("p99"));
    assert_eq!(manifest["capacity"]["budget"].as_integer(), Some(4));
    // The curve names every rate measured.
    let svg = std::fs::read_to_string(snapshot.join("charts/capacity.svg")).unwrap();
    for s in steps {
        assert!(svg.contains(&format!("offered {} calls/s", rate(s))), "{s}");
    }
    assert!(svg.contains(&format!("found {found} calls/s")));
    let page = std::fs::read_to_string(snapshot.join("report.html")).unwrap();
    assert!(page.contains("Capacity under an SLO") && page.contains("id=\"capacity-search\""));
    // `lab report` renders it again, from its files alone.
    let again = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "lab",
        "report",
        snapshot.to_str().unwrap(),
        "--out",
        again.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(final_line));
    assert_eq!(
        std::fs::read_to_string(again.path().join("charts/capacity.svg")).unwrap(),
        svg
    );
}

#[test]
fn when_even_the_lowest_rate_fails_no_rate_holds_the_slo_and_the_exit_code_says_so() {
    let _engine = engine_share();
    let results = tempfile::tempdir().unwrap();
    // No server answers within a microsecond: the one step, at the lowest
    // rate, fails. (The halving from a start rate down to the lowest rate,
    // every step failing, is the search's rule, which the unit test
    // engine::capacity::tests::when_even_the_lowest_rate_fails_no_rate_holds
    // replays: 80, 40, 20, 10 and no rate; a real server adds nothing to
    // it but minutes.)
    let out = capacity(
        results.path(),
        &[
            "--slo",
            "1us",
            "--start-rate",
            "10",
            "--min-rate",
            "10",
            "--budget",
            "6",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(99), "{said}");
    assert!(said.contains("no rate holds the SLO p99 < 1us"), "{said}");
    let json = read_json(&only_snapshot(results.path()).join("results.json"));
    let search = check_search(&json, 6);
    assert_eq!(search["outcome"], "no-rate", "{search}");
    assert!(search.get("found_per_s").is_none() && search.get("last_pass").is_none());
    let rates: Vec<u64> = search["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(rate)
        .collect();
    assert_eq!(rates, [10], "the lowest rate, failed, ends the search");
    for s in search["steps"].as_array().unwrap() {
        assert!(
            s["failures"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "latency" || f == "no-calls"),
            "{s}"
        );
    }
    // A start rate was given: no closed-loop hint.
    assert!(search.get("hint").is_none());
}

/// The one line of a command refused before anything started.
fn refused(args: &[&str]) -> String {
    let results = tempfile::tempdir().unwrap();
    let mut all = args.to_vec();
    all.extend(["--results-dir", results.path().to_str().unwrap()]);
    let out = xtask(&all);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "nothing written"
    );
    stderr
}

#[test]
fn a_missing_or_unreadable_slo_and_an_unknown_server_are_refused_in_one_line() {
    let grammar = rpclab_model::capacity::SLO_GRAMMAR;
    let missing = refused(&["lab", "capacity", "thrift-java"]);
    assert!(
        missing.contains("needs --slo") && missing.contains(grammar),
        "{missing}"
    );
    let bad = refused(&["lab", "capacity", "thrift-java", "--slo", "5"]);
    assert!(
        bad.contains("cannot read --slo `5`") && bad.contains(grammar),
        "{bad}"
    );
    let percentile = refused(&[
        "lab",
        "capacity",
        "thrift-java",
        "--slo",
        "5ms",
        "--percentile",
        "101",
    ]);
    assert!(
        percentile.contains("--percentile: cannot read percentile `101`")
            && percentile.contains(grammar),
        "{percentile}"
    );
    let unknown = refused(&["lab", "capacity", "no-such-server", "--slo", "5ms"]);
    assert!(
        unknown.contains("no server or framework called `no-such-server`; known:"),
        "{unknown}"
    );
}
