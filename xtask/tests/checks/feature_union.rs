//! `cargo xtask` (a `-p xtask` build) and `cargo test --workspace` compile
//! every shared dependency with the same features, so that one compile
//! serves both (crates/workspace-hack): every crate and feature set of
//! xtask's build is one the workspace's test build has too. When a member
//! adds a dev-dependency that turns on a new feature of a shared crate,
//! this fails and names it; add that feature to crates/workspace-hack.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// What the cargo running this test prints for `args` in xtask's folder;
/// a failure fails the test with cargo's own words.
fn cargo_stdout(args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `cargo tree` with `args`, as `package version → its feature sets`.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut tree = vec!["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"];
    tree.extend_from_slice(args);
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(cargo_stdout(&tree)).unwrap().lines() {
        let line = line.replace(" (*)", "").replace(" (proc-macro)", "");
        if let Some((package, features)) = line.split_once('|') {
            map.entry(package.trim().to_owned())
                .or_default()
                .insert(features.trim().to_owned());
        }
    }
    map
}

#[test]
fn xtask_s_build_has_the_features_of_the_workspace_s_test_build() {
    let xtask = features(&["-p", "xtask", "-e", "normal,build"]);
    let workspace = features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(xtask.len() > 50, "cargo tree read: {xtask:?}");
    let mut drifted = Vec::new();
    for (package, sets) in &xtask {
        let theirs = workspace.get(package);
        for set in sets {
            if !theirs.is_some_and(|t| t.contains(set)) {
                drifted.push(format!(
                    "{package}: xtask builds [{set}], the tests build {:?}",
                    theirs.map(|t| t.iter().collect::<Vec<_>>())
                ));
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "these crates would be compiled twice (add the tests' features to \
         crates/workspace-hack/Cargo.toml):\n{}",
        drifted.join("\n")
    );
}

/// The direct dependencies of every workspace member with `kind`
/// (`"build"`, `"dev"` or `null` for normal), by name.
fn dependencies_of_kind(metadata: &serde_json::Value, kind: Option<&str>) -> BTreeSet<String> {
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.as_str())
        .collect();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| members.contains(p["id"].as_str().unwrap_or_default()))
        .flat_map(|p| p["dependencies"].as_array().unwrap().iter())
        .filter(|d| d["kind"].as_str() == kind && d["path"].is_null())
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A crate that one member builds with (a build-dependency) and another's
/// tests link (a dev-dependency) is one artifact in the tests' build but
/// two in xtask's unless xtask's build links it too: then everything above
/// the build script's crate is compiled twice, with the same features (the
/// test above cannot see it). Such a crate must be a normal dependency of
/// xtask's build (crates/workspace-hack).
#[test]
fn a_build_dependency_the_tests_also_link_is_linked_by_xtask_s_build_too() {
    let out = cargo_stdout(&["metadata", "--locked", "--format-version", "1", "--no-deps"]);
    let metadata: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let build = dependencies_of_kind(&metadata, Some("build"));
    let dev = dependencies_of_kind(&metadata, Some("dev"));
    let both: Vec<&String> = build.intersection(&dev).collect();
    let linked: BTreeSet<String> = features(&["-p", "xtask", "-e", "normal"])
        .keys()
        .filter_map(|p| p.split_whitespace().next().map(str::to_owned))
        .collect();
    let missing: Vec<&&String> = both
        .iter()
        .filter(|name| !linked.contains(**name))
        .collect();
    assert!(
        missing.is_empty(),
        "built twice, once per role (add them to crates/workspace-hack's [dependencies]): {missing:?}"
    );
}

/// xtask's `kubernetes` feature (CI builds it beside the tests,
/// xtask/src/tools/test.rs) adds kube-rs and its own dependencies and
/// changes no crate the rest of the workspace shares: a shared crate with
/// one more feature is another artifact, and everything above it (the
/// protocols, the client, the report, xtask) was compiled a second time.
/// When this fails, add the named features to crates/workspace-hack.
#[test]
fn the_kubernetes_feature_adds_crates_and_changes_no_shared_one() {
    let tests = features(&["--workspace", "-e", "normal,build,dev"]);
    let with_kubernetes = features(&[
        "--workspace",
        "--features",
        "xtask/kubernetes",
        "-e",
        "normal,build,dev",
    ]);
    assert!(
        with_kubernetes
            .keys()
            .any(|p| p.starts_with("kube-client ")),
        "cargo tree with the feature read: {with_kubernetes:?}"
    );
    let changed: Vec<String> = tests
        .iter()
        .filter(|(package, _)| !package.starts_with("xtask "))
        .filter_map(|(package, sets)| {
            let theirs = with_kubernetes.get(package)?;
            (theirs != sets).then(|| format!("{package}: {sets:?} becomes {theirs:?}"))
        })
        .collect();
    assert!(
        changed.is_empty(),
        "xtask's kubernetes feature changes the features of shared crates, \
         so its build compiles them and their dependents again (add the \
         features to crates/workspace-hack/Cargo.toml):\n{}",
        changed.join("\n")
    );
}
