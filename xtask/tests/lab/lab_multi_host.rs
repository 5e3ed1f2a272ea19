//! End-to-end: a run whose client is on a second Docker engine (both on
//! this machine). Needs a running Docker engine; the second one is started
//! here when absent (root only; else the test says SKIPPED).

use crate::common;

use common::dockerd::{Dockerd, ENGINE_B};
use common::lab::check_cell_consistency;
use common::lab::lab_ps_on;
use common::{assert_run_left_nothing, engine_share, lab_build, only_snapshot, text, xtask};
use serde_json::Value;

/// Server and registry on the default engine, the client on a second one
/// (both on this machine, so every call still goes over 127.0.0.1): every
/// call is verified, every cell is consistent, the manifest names both
/// engines, and neither keeps a container.
#[test]
fn a_client_on_a_second_engine_verifies_every_call_and_the_manifest_names_both_engines() {
    let second = match Dockerd::running_or_started(ENGINE_B) {
        Ok(e) => e,
        Err(why) => {
            eprintln!("SKIPPED a_client_on_a_second_engine_...: {why}");
            return;
        }
    };
    // The servers' images before a slot is taken; the second engine's
    // chain (base, runtime, client) is the run's to build there.
    lab_build(&["--only", "thrift-java,dubbo-2.6", "--profile", "smoke"]);
    // A slot, not the whole engine: the run is a check, and its servers'
    // ports on the host's network are no other lab test's (theirs are in
    // private networks; the CI page's service is on 50091).
    let _engine = engine_share();
    let results_dir = tempfile::tempdir().unwrap();
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
        results_dir.path().to_str().unwrap(),
    ]);
    let log = text(&out);
    assert!(out.status.success(), "lab run failed:\n{log}");
    let snap = only_snapshot(results_dir.path());
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

    // Nothing of the run is left on either engine (the machine's may run
    // other tests' checks: only this run's containers are looked for).
    assert_run_left_nothing(results_dir.path());
    let ps = text(&lab_ps_on(ENGINE_B));
    assert!(ps.contains("no lab container"), "{ENGINE_B}: {ps}");
    drop(second);
}
