//! A service the lab did not start (`lab bench --target`, `lab capacity
//! --target`), measured into normal snapshots: docs/ci.md's job script,
//! run as the page writes it, against the example service in a container
//! the script starts itself; then a target that does not answer.

use crate::common::lab::check_cell;
use crate::common::{engine_share, repo_root, text, xtask};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The script between docs/ci.md's `ci-example` markers, without its
/// code fence.
fn the_pages_script() -> String {
    let page = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    let begin = page
        .find("<!-- ci-example:begin -->")
        .expect("the begin marker");
    let end = page
        .find("<!-- ci-example:end -->")
        .expect("the end marker");
    let block = &page[begin..end];
    let body = block
        .split_once("```bash\n")
        .and_then(|(_, rest)| rest.rsplit_once("```"))
        .map(|(body, _)| body)
        .expect("a bash block between the markers");
    body.to_owned()
}

/// The one snapshot folder in `dir`.
fn snapshot_in(dir: &Path) -> PathBuf {
    crate::common::only_snapshot(dir)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a snapshot of the target holds: every cell the service's, verified
/// calls and none failed, and a manifest that says the lab did not start it.
fn check_target_snapshot(snapshot: &Path) {
    let results = json(&snapshot.join("results.json"));
    let cells = results["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{}", snapshot.display());
    for c in cells {
        check_cell("shop", c, false);
        assert_eq!(c["server"], "shop");
        assert_eq!(
            c["scenario"].as_str().unwrap(),
            "order-echo:shop.v1.Inventory/Reserve"
        );
        assert_eq!(c["calls_failed"], 0, "{c:#}");
        assert!(c["report"]["verified"].as_bool().unwrap_or(false), "{c:#}");
        assert!(c.get("server_cost").is_none_or(Value::is_null), "{c:#}");
    }
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snapshot.join("manifest.toml")).unwrap()).unwrap();
    let server = &manifest["servers"].as_array().unwrap()[0];
    assert_eq!(server["target"].as_str(), Some("127.0.0.1:50091"));
    assert_eq!(server["image"].as_str(), Some(""));
    assert!(snapshot.join("report.html").is_file());
}

/// Removes the script's service container, whatever happened.
struct Service;

impl Drop for Service {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", "shop-under-test"])
            .output();
    }
}

#[test]
fn the_ci_page_s_job_measures_a_running_service_into_snapshots_it_compares() {
    let _engine = engine_share();
    crate::lab_servers_dir::build_the_static_fixture();
    let out = tempfile::tempdir().unwrap();
    let _service = Service;
    // `cargo xtask` as the page writes it, to this build's xtask.
    let script = format!(
        "cargo() {{ if [ \"$1\" = xtask ]; then shift; \"$XTASK\" \"$@\"; else command cargo \"$@\"; fi; }}\n{}",
        the_pages_script()
    );
    let run = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(repo_root())
        .env("XTASK", env!("CARGO_BIN_EXE_xtask"))
        .env("PROFILE", "smoke")
        .env("OUT", out.path())
        .output()
        .expect("bash runs");
    let said = text(&run);
    // 0: no regression and a rate found; 3: a cell slower beyond its
    // noise (a busy host may make one); 99: no rate held the SLO (a busy
    // host may make that too). Anything else is the script's failure.
    let code = run.status.code();
    assert!(
        matches!(code, Some(0) | Some(3) | Some(99)),
        "exit {code:?}:\n{said}"
    );
    // The comparison's count: "N regression(s), M improvement(s), ...".
    let regressions: u64 = said
        .lines()
        .find_map(|l| {
            l.split_once(" regression(s), ")
                .map(|(n, _)| n.trim().to_owned())
        })
        .and_then(|n| n.rsplit(' ').next().and_then(|n| n.parse().ok()))
        .unwrap_or_else(|| panic!("no comparison in:\n{said}"));
    assert_eq!(
        code == Some(3),
        regressions > 0,
        "the exit code and the comparison disagree:\n{said}"
    );
    let baseline = snapshot_in(&out.path().join("baseline"));
    let candidate = snapshot_in(&out.path().join("candidate"));
    check_target_snapshot(&baseline);
    check_target_snapshot(&candidate);
    // Levels 1 and 4, three repetitions each.
    let cells = json(&candidate.join("results.json"))["cells"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(cells, 6, "{said}");
    // The BMF export: a benchmark per level, with throughput and latency.
    let bmf = json(&out.path().join("bmf.json"));
    let benches = bmf.as_object().unwrap();
    assert_eq!(benches.len(), 2, "{bmf:#}");
    for (name, measures) in benches {
        assert!(name.starts_with("shop/service "), "{name}");
        assert!(measures["throughput"]["value"].as_f64().unwrap() > 0.0);
        assert!(measures["latency"]["value"].as_f64().unwrap() > 0.0);
    }
    // The capacity search: its steps on the service, and an outcome.
    let capacity = snapshot_in(&out.path().join("capacity"));
    let search = &json(&capacity.join("results.json"))["capacity"];
    assert!(
        !search["steps"].as_array().unwrap().is_empty(),
        "{search:#}"
    );
    // The script's 99 is the search's own answer, never a lost run.
    let no_rate = search["outcome"].as_str() == Some("no-rate");
    assert!(search["outcome"].is_string(), "{search:#}");
    assert_eq!(
        code == Some(99),
        no_rate && regressions == 0,
        "the exit code and the search disagree:\n{search:#}\n{said}"
    );
}

/// `lab bench` of the example's method at 127.0.0.1:9 (discard: nothing
/// of the lab's listens there), with `extra` flags.
fn bench_nothing_there(extra: &[&str]) -> (Option<i32>, String) {
    let args = [
        &[
            "lab",
            "bench",
            "--target",
            "127.0.0.1:9",
            "--call",
            "shop.v1.Inventory/Reserve",
            "--protoset",
            "fixtures/servers/grpc-shop/shop.protoset",
        ][..],
        extra,
    ]
    .concat();
    let run = xtask(&args);
    (run.status.code(), text(&run))
}

#[test]
fn a_target_that_does_not_answer_is_one_error_naming_it() {
    let _engine = engine_share();
    let out = tempfile::tempdir().unwrap();
    let results = out.path().display().to_string();
    let (code, said) = bench_nothing_there(&["--profile", "smoke", "--results-dir", &results]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("check that the service at 127.0.0.1:9 runs"),
        "{said}"
    );
    // Refused before anything runs: a private network cannot reach it.
    let (code, said) = bench_nothing_there(&["--network", "private"]);
    assert_eq!(code, Some(1), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(said.contains("leave out --network private"), "{said}");
}
