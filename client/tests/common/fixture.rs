//! A fixture server that is not rpclab's contract (`fixtures/grpc-shop`,
//! `fixtures/thrift-shop`), in a container, and the client run against it
//! as a user runs it: what the generic-call tests share.
//!
//! The fixture is built by cargo (the same profile as the test) and put in
//! an image of its own: `FROM scratch` with the binary and the shared
//! libraries `ldd` names, so no base image or registry is needed. A
//! fixture runs in a [`Container`] on the host network, on 127.0.0.1,
//! confined as the lab's servers are, and removed when dropped. The client runs
//! as the `rpclab-client` binary; a test reads its JSON report or its one
//! error line. No timing is asserted.

pub use super::containers::run;
use super::containers::{self, Container};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// What both shop fixtures answer to their tests' reservation request:
/// ada (GOLD) reserves 3 apples and 100 of the 150 pears asked, numbered
/// with the call (the thrift fixture adds the note's length).
pub fn shop_reply() -> Value {
    serde_json::json!({
        "requestId": "req-{{.RequestNumber}}",
        "sequence": "{{.RequestNumber}}",
        "status": "PARTIAL",
        "lines": [{"sku": "apple", "reserved": 3}, {"sku": "pear", "reserved": 100}],
        "totalQuantity": 103,
        "total": {"currency": "EUR", "units": 156},
        "customer": "ada (GOLD)",
    })
}

/// A folder of this test process's own.
pub fn scratch() -> PathBuf {
    containers::scratch("generic")
}

/// The binary `package` builds (its binary of the same name): the one
/// `cargo xtask test` built with the whole workspace, which it names in
/// `RPCLAB_BIN_<PACKAGE>`; else built by cargo with the test's own profile
/// (a `cargo build -p` of its own, which resolves the package's features
/// alone and so compiles much of the workspace's dependencies again).
pub fn binary(package: &str) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(p, _)| p == package) {
        return path.clone();
    }
    let variable = format!("RPCLAB_BIN_{}", package.to_uppercase().replace('-', "_"));
    if let Some(path) = std::env::var_os(&variable).map(PathBuf::from) {
        if path.is_file() {
            built.push((package.to_owned(), path.clone()));
            return path;
        }
    }
    let out = run(
        Command::new(env!("CARGO"))
            .args([
                "build",
                "-p",
                package,
                "--bin",
                package,
                "--message-format=json",
            ])
            .stderr(Stdio::inherit()),
        &format!("cargo build -p {package}"),
    );
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .next_back()
        .unwrap_or_else(|| panic!("cargo names the {package} executable"));
    built.push((package.to_owned(), path.clone()));
    path
}

/// The image `rpclab-test/<package>:latest` of `package`'s binary and the
/// libraries it links, on no base; built once per test process. Its id is
/// returned, not the tag: the engine is shared, and another checkout's
/// tests may tag their own build of the fixture meanwhile.
pub fn image(package: &str) -> String {
    static BUILT: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let tag = format!("rpclab-test/{package}:latest");
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, id)) = built.iter().find(|(t, _)| *t == tag) {
        return id.clone();
    }
    let binary = binary(package);
    let context = scratch().join(format!("image-{package}"));
    let root = context.join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::copy(&binary, root.join(package)).unwrap();
    let ldd = run(Command::new("ldd").arg(&binary), "ldd");
    for line in String::from_utf8_lossy(&ldd.stdout).lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` or
        // `/lib64/ld-linux-x86-64.so.2 (0x…)`.
        let path = line
            .split("=>")
            .last()
            .and_then(|rest| rest.split_whitespace().next())
            .filter(|p| p.starts_with('/'));
        if let Some(path) = path {
            let dest = root.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(path, &dest).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
    std::fs::write(
        context.join("Dockerfile"),
        format!("FROM scratch\nCOPY root/ /\nUSER 65534:65534\nENTRYPOINT [\"/{package}\"]\n"),
    )
    .unwrap();
    let output = run(
        containers::docker_build(&tag).arg(&context),
        &format!("docker build (the {package} fixture)"),
    );
    // The engine has it now: the binary's copy is not kept.
    let _ = std::fs::remove_dir_all(&context);
    let id = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(id.starts_with("sha256:"), "docker build -q printed `{id}`");
    built.push((tag, id.clone()));
    id
}

/// Starts `package`'s image with `--listen <target>` and `args`; `mount`,
/// if any, is mounted read-only at `/certs`. Returns once it listens.
pub fn start(package: &str, args: &[&str], mount: Option<&Path>) -> Container {
    let image = image(package);
    let fixture = Container::start(package, &image, |cmd, port| {
        if let Some(dir) = mount {
            cmd.arg("-v").arg(format!("{}:/certs:ro", dir.display()));
        }
        cmd.arg(&image)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(args);
    });
    fixture.wait_listening();
    fixture
}

/// `rpclab-client --target <fixture> <args>`, as a user runs it.
pub fn client(fixture: &Container, args: &[&str]) -> Output {
    containers::client(&fixture.target, args)
}

/// A run that must succeed: its JSON report.
pub fn report(fixture: &Container, args: &[&str]) -> Value {
    containers::report(&fixture.target, args)
}

/// A run that must fail before any load: its one error line.
pub fn refusal(fixture: &Container, args: &[&str]) -> String {
    containers::refusal(&fixture.target, args)
}

/// The flags of a short open-loop run: 200 calls/s for 1 s on 2
/// connections.
pub const OPEN_LOOP: &[&str] = &["--rate", "200", "--duration-s", "1", "--connections", "2"];

/// A threshold no run holds (a billion calls a second), for the tests that
/// a breached threshold ends a verified run with exit code 99.
pub const UNREACHABLE_THRESHOLD: &[&str] = &["--threshold", "throughput>1000000000"];

/// A run that ended with exit code 99: a threshold breached.
pub fn assert_threshold_breached(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(99),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A report in which calls were made and none failed (each was verified).
pub fn assert_all_verified(report: &Value) {
    assert_eq!(report["calls_failed"], 0, "{report:#}");
    assert!(report["calls_ok"].as_u64().unwrap() > 0, "{report:#}");
}

/// The matcher refusals every generic protocol gives alike, through its
/// test's `refusal` (which adds the call): a range the replies break
/// (nothing measured, and the field named), and a matcher that does not
/// exist (one line before any load).
pub fn assert_matcher_refusals(data: &str, refusal: impl Fn(&[&str]) -> String) {
    let too_many = serde_json::json!({"totalQuantity": {"$range": [0, 10]}}).to_string();
    let line = refusal(&[
        "--data",
        data,
        "--expect",
        &too_many,
        "--expect-partial",
        "--calls",
        "10",
    ]);
    super::cli::assert_unmeasured(
        &line,
        "totalQuantity: expected a number in [0, 10], got 103",
    );
    let unknown = serde_json::json!({"status": {"$oneOf": ["PARTIAL"]}}).to_string();
    let line = refusal(&["--data", data, "--expect", &unknown]);
    assert!(
        line.contains("--expect: status: unknown matcher `$oneOf`; the matchers are"),
        "{line}"
    );
}
