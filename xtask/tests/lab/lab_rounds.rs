//! End-to-end: `lab reproduce` in interleaved rounds (profile
//! `smoke-rounds`, seed 003's two Dubbo 2.6 variants side by side), whole
//! and with a server killed mid-way. Needs a running Docker engine.
//!
//! Two runs of the same command, not one: the whole one must succeed with
//! both variants in every round, the other must fail with one variant
//! lost, so no one run can be both. The killed one costs no more than the
//! whole one: a server that exits under a cell ends that cell at once
//! (before, the client waited out `warmup_max_s`, 120 s, for a call no
//! server would answer).

use crate::common;

use common::lab::{check_cell, rounds_smoke_args, spawn_logged, wait_for_a_cell};
use common::{containers_of_run, engine_share, only_snapshot, run_id_in, text, xtask};
use serde_json::Value;

/// `lab reproduce` in interleaved rounds (profile `smoke-rounds`), on seed
/// 003's two variants of one server folder: both run side by side (the
/// second on a moved port, one ZooKeeper for both), and every round
/// measures each once, in the recorded order.
#[test]
fn a_reproduction_in_rounds_runs_every_variant_side_by_side_once_per_round() {
    let _engine = engine_share();
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
    assert!(
        common::lab::bytes_counted_somewhere(cells),
        "no cell counted wire bytes both ways"
    );
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

    let run = manifest["run_id"].as_str().unwrap();
    let left = containers_of_run(run);
    assert!(left.is_empty(), "the run left containers: {left:?}");
}

/// Kills the running container of the run in `results` whose name
/// contains `part` (SIGKILL, over the engine's API), as a crash of that
/// server would end it; returns its name. Only that run's: another run
/// beside it may have a server of the same name.
fn kill_lab_container(results: &std::path::Path, part: &str) -> String {
    let run = run_id_in(results).expect("the running snapshot's manifest names its run");
    let theirs = containers_of_run(&run);
    common::with_docker(async |docker| {
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
            .find(|n| theirs.contains(n) && n.contains(part))
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
    let _engine = engine_share();
    let results = tempfile::tempdir().unwrap();
    let args = rounds_smoke_args(results.path());
    let (mut run, log_path) = spawn_logged(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        results.path(),
    );
    wait_for_a_cell(&mut run, results.path(), &log_path);
    let killed = kill_lab_container(results.path(), "2.6-kryo");
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
        errors.iter().any(|e| e["kind"] == "variant"
            && e["server"] == "dubbo-2.6"
            && e["variant"] == "2.6-kryo"
            && e["message"].as_str().is_some_and(|m| !m.is_empty())),
        "the error names the dead variant, as data: {errors:?}"
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
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(snap.join("manifest.toml")).unwrap()).unwrap();
    let left = containers_of_run(manifest["run_id"].as_str().unwrap());
    assert!(left.is_empty(), "the run left containers: {left:?}");
}
