//! The lab's command line, refusing what it cannot run before anything
//! starts (no Docker needed for these: nothing is started).

use crate::common;

use common::{text, xtask};

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

#[test]
fn overlapping_cpu_sets_are_refused_before_anything_starts() {
    let results = tempfile::tempdir().unwrap();
    let mut args = common::lab::thrift_smoke_args(results.path());
    args.extend(["--server-cpus", "0", "--client-cpus", "0"].map(String::from));
    let out = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!out.status.success());
    let s = text(&out);
    assert!(s.contains("server CPUs 0 overlap the client CPUs 0"), "{s}");
    assert_eq!(
        std::fs::read_dir(results.path()).unwrap().count(),
        0,
        "a snapshot folder was created"
    );
    let out = xtask(&[
        "lab",
        "run",
        "--only",
        "thrift-java",
        "--server-cpus",
        "4096",
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no CPU 4096"), "{}", text(&out));
}
