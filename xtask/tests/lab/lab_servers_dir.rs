//! End-to-end: a server folder from outside the repository's `servers/`
//! (`lab run --servers-dir`), the worked example of docs/your-own-service.md:
//! `fixtures/servers/grpc-shop`, whose service is not the lab's contract
//! (fixtures/grpc-shop's `shop.v1.Inventory`) and whose manifest names
//! the generic call, its descriptor set, its request and the reply every
//! call must get.
//!
//! The fixture's binary is built statically on the host (its Dockerfile
//! copies it into an image `FROM scratch`), then the lab runs the folder
//! with the quickest settings, in the run's private network: the probe
//! and the client read the folder's files from its read-only mount. The
//! test checks that the snapshot is a normal one (verified calls, no
//! error, the manifest naming the folder, its files and the call, the
//! server confined as the lab's own) and that
//! it renders, exports and compares. Needs a Docker engine. No timing is
//! asserted.

use crate::common;

use common::{engine_share, only_snapshot, repo_root, text, xtask};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const METHOD: &str = "shop.v1.Inventory/Reserve";
/// The cells' scenario: the lab's `order-echo` load, calling the method.
const SCENARIO: &str = "order-echo:shop.v1.Inventory/Reserve";

/// The example's folder.
fn folder() -> PathBuf {
    repo_root().join("fixtures/servers/grpc-shop")
}

/// Builds the fixture statically (glibc with crt-static, in the target
/// folder and cargo profile of the lab's quick static client, so that
/// they share what they can) and puts it where the folder's Dockerfile
/// copies it from, `bin/grpc-shop`.
pub fn build_the_static_fixture() {
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let target_dir = repo_root().join("target/static");
    // As .ci/run builds it, without the variables `cargo xtask test` gave
    // this test (a build script watching one would run again, and the
    // crates above it be compiled again: xtask's `cargo_command`).
    let mut cargo = Command::new(env!("CARGO"));
    for (name, _) in std::env::vars() {
        if name.starts_with("CARGO_PKG_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
            ]
            .contains(&name.as_str())
        {
            cargo.env_remove(&name);
        }
    }
    let status = cargo
        .args(["build", "--profile", "quick", "--locked", "-p", "grpc-shop"])
        .args(["--bins", "--target", &triple, "--target-dir"])
        .arg(&target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .current_dir(repo_root())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the static grpc-shop failed");
    let built = target_dir.join(&triple).join("quick/grpc-shop");
    let bin = folder().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(&built, bin.join("grpc-shop")).unwrap();
}

/// The folder's descriptor set is the one the fixture serves (a change
/// to its .proto files must be written here too: `grpc-shop
/// --write-protoset fixtures/servers/grpc-shop/shop.protoset`).
fn the_committed_protoset_is_the_fixture_s(scratch: &Path) {
    let written = scratch.join("shop.protoset");
    let status = Command::new(folder().join("bin/grpc-shop"))
        .arg("--write-protoset")
        .arg(&written)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        std::fs::read(&written).unwrap() == std::fs::read(folder().join("shop.protoset")).unwrap(),
        "fixtures/servers/grpc-shop/shop.protoset is stale: write it again with \
         grpc-shop --write-protoset fixtures/servers/grpc-shop/shop.protoset"
    );
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_server_folder_from_outside_runs_end_to_end_into_a_normal_snapshot() {
    // Built before a slot is taken: in a cold CI this compile waits for
    // the static client's target folder, and held the slot idle 780 s
    // while the other lab tests queued behind it.
    build_the_static_fixture();
    let _engine = engine_share();
    let results = tempfile::tempdir().unwrap();
    the_committed_protoset_is_the_fixture_s(results.path());
    let out_dir = results.path().join("snapshots");
    let out = xtask(&[
        "lab",
        "run",
        "--servers-dir",
        "fixtures/servers",
        "--only",
        "grpc-shop",
        "--profile",
        "smoke",
        "--duration",
        "1s",
        "--repetitions",
        "1",
        "--levels",
        "1",
        "--results-dir",
        out_dir.to_str().unwrap(),
    ]);
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    // The readiness probe made the generic call, from the run's network.
    assert!(
        log.contains(&format!(
            "probe in the run's network: ok: {METHOD} verified"
        )),
        "{log}"
    );

    let snapshot = only_snapshot(&out_dir);
    let results_json = json(&snapshot.join("results.json"));
    assert_eq!(results_json["complete"], true, "{log}");
    // `errors` is left out when there is none.
    assert!(
        results_json["errors"].as_array().is_none_or(Vec::is_empty),
        "{log}"
    );
    let cells = results_json["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "nothing measured: {log}");
    for c in cells {
        assert_eq!(c["server"], "grpc-shop", "{c}");
        assert_eq!(c["protocol"], "grpc-generic", "{c}");
        assert_eq!(c["scenario"], SCENARIO, "{c}");
        assert_eq!(c["concurrency"], 1, "{c}");
        assert!(c["calls_ok"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(c["calls_failed"], 0, "{c}");
        let report = &c["report"];
        assert_eq!(report["verified"], true, "{c}");
        assert_eq!(report["call"]["method"], METHOD, "{c}");
        assert_eq!(report["call"]["expected_reply"], true, "{c}");
        assert_eq!(
            report["call"]["descriptors"], "protoset /server/shop.protoset",
            "the client read the folder's file from its mount: {c}"
        );
        assert_eq!(
            report["call"]["templates"],
            serde_json::json!(["req-{{.RequestNumber}}", "{{.RequestNumber}}"]),
            "{c}"
        );
    }

    let manifest: toml::Table = std::fs::read_to_string(snapshot.join("manifest.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let servers = manifest["servers"].as_array().unwrap();
    let [shop] = &servers[..] else {
        panic!("one server: {servers:?}")
    };
    assert_eq!(shop["name"].as_str(), Some("grpc-shop"));
    assert_eq!(shop["call"].as_str(), Some(METHOD));
    assert_eq!(
        shop["folder"]["path"].as_str(),
        Some("fixtures/servers/grpc-shop")
    );
    let files = shop["folder"]["files"].as_table().unwrap();
    for file in [
        "server.toml",
        "Dockerfile",
        "shop.protoset",
        "request.json",
        "reply.json",
    ] {
        let hash = files[file].as_str().unwrap_or_default();
        assert_eq!(hash.len(), 64, "{file}: {files:?}");
    }
    // Confined as the lab's own servers, in the run's private network.
    let confinement = &shop["confinement"];
    assert_eq!(confinement["user"].as_str(), Some("10001:10001"));
    assert_eq!(
        confinement["cap_drop"].as_array().map(Vec::as_slice),
        Some(&[toml::Value::from("ALL")][..])
    );
    assert_eq!(confinement["cap_add"].as_array().map(Vec::len), Some(0));
    assert_eq!(confinement["read_only_rootfs"].as_bool(), Some(true));
    assert!(
        manifest["network"]
            .as_str()
            .is_some_and(|n| n.starts_with("private")),
        "{manifest:?}"
    );
    assert_eq!(
        manifest["lab"]["servers_dirs"].as_array().map(Vec::len),
        Some(1),
        "{manifest:?}"
    );

    // It renders, exports and compares like any snapshot.
    let rendered = results.path().join("rendered");
    let report = xtask(&[
        "lab",
        "report",
        snapshot.to_str().unwrap(),
        "--out",
        rendered.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", text(&report));
    let summary = std::fs::read_to_string(rendered.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("scenario {SCENARIO}: call {METHOD}")),
        "{summary}"
    );
    let page = std::fs::read_to_string(rendered.join("report.html")).unwrap();
    assert!(page.contains(&format!("call {METHOD}")), "report.html");
    let bmf = xtask(&[
        "lab",
        "report",
        snapshot.to_str().unwrap(),
        "--format",
        "bmf",
    ]);
    assert!(bmf.status.success(), "{}", text(&bmf));
    let bmf: Value = serde_json::from_slice(&bmf.stdout).unwrap();
    let names: Vec<&String> = bmf.as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [&format!("grpc-shop/0.1 {SCENARIO} c=1")],
        "one benchmark, named by the call"
    );
    let compared = xtask(&[
        "lab",
        "compare",
        snapshot.to_str().unwrap(),
        snapshot.to_str().unwrap(),
    ]);
    assert!(compared.status.success(), "{}", text(&compared));
    assert!(text(&compared).contains(SCENARIO), "{}", text(&compared));
}

/// A folder that does not exist is one line, and nothing starts.
#[test]
fn a_servers_dir_that_does_not_exist_is_one_line_and_nothing_runs() {
    let results = tempfile::tempdir().unwrap();
    let out = xtask(&[
        "lab",
        "run",
        "--servers-dir",
        "fixtures/no-such-folder",
        "--only",
        "grpc-shop",
        "--results-dir",
        results.path().to_str().unwrap(),
    ]);
    let log = text(&out);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert_eq!(log.trim().lines().count(), 1, "{log}");
    assert!(
        log.contains("server folder fixtures/no-such-folder does not exist"),
        "{log}"
    );
    assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
}
