//! `cargo xtask` (a `-p xtask` build) and `cargo test --workspace` compile
//! every shared dependency with the same features, so that one compile
//! serves both (crates/workspace-hack): every crate and feature set of
//! xtask's build is one the workspace's test build has too. When a member
//! adds a dev-dependency that turns on a new feature of a shared crate,
//! this fails and names it; add that feature to crates/workspace-hack.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// `cargo tree` with `args`, as `package version → its feature sets`.
fn features(args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
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
