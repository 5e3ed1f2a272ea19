//! The `rpclab-client` binary as the generic-call tests run it, as a user
//! would: a command that must succeed, a run's JSON report, and the one
//! error line of a run refused before any load.

use serde_json::Value;
use std::process::{Command, Output};

/// Runs `cmd`, which must succeed (`what` names it in the failure).
pub fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The client binary, its error one line as a user sees it (without the
/// backtrace an environment's `RUST_BACKTRACE` would add).
pub fn client() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpclab-client"));
    cmd.env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE");
    cmd
}

/// The JSON report of a run with `args` (given `--json`) that must succeed.
pub fn report(out: Output, args: &[&str]) -> Value {
    assert!(
        out.status.success(),
        "rpclab-client {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// The one error line of a run with `args` that must fail before any
/// load: nothing on standard output.
pub fn refusal(out: Output, args: &[&str]) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
    assert!(
        stdout.trim().is_empty(),
        "{args:?}: something was measured:\n{stdout}"
    );
    // The phase and progress markers the lab reads (`rpclab-phase:
    // warmup`) are not error lines.
    let lines: Vec<&str> = stderr
        .trim()
        .lines()
        .filter(|line| {
            !line.starts_with(rpclab_client::runner::PHASE_MARKER)
                && !line.starts_with(rpclab_client::runner::PROGRESS_MARKER)
        })
        .collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line:\n{stderr}");
    lines[0].to_owned()
}

/// The flags of a run whose every reply is compared with `expect` partially
/// (only the keys it has), from two workers making `calls` calls each: the
/// partial runs of the generic-call tests.
pub fn partially_expected<'a>(expect: &'a str, calls: &'a str) -> [&'a str; 7] {
    [
        "--expect",
        expect,
        "--expect-partial",
        "--concurrency",
        "2",
        "--calls",
        calls,
    ]
}

/// A run refused after its first call (a verified call that failed):
/// nothing measured, and the one line says `says`.
pub fn assert_unmeasured(line: &str, says: &str) {
    assert!(
        line.contains("nothing was measured") && line.contains(says),
        "{line}"
    );
}

/// The arguments of a verified run of 200 calls, 4 callers making 50 each:
/// `data` sent, the reply `expect`ed (`[..4]`: the data and expectation
/// alone).
pub fn verified_run<'a>(data: &'a str, expect: &'a str) -> [&'a str; 8] {
    [
        "--data",
        data,
        "--expect",
        expect,
        "--concurrency",
        "4",
        "--calls",
        "50",
    ]
}

/// The report of a generic call of `protocol` to `method`, every call of
/// which was verified (`calls`: how many, or `None`: at least one); its
/// `call` section, for what a protocol adds.
pub fn assert_generic_calls_verified<'r>(
    report: &'r Value,
    protocol: &str,
    method: &str,
    calls: Option<u64>,
) -> &'r Value {
    assert_eq!(report["protocol"], protocol);
    assert_eq!(report["calls_failed"], 0, "{report:#}");
    match calls {
        Some(calls) => assert_eq!(report["calls_ok"], calls, "{report:#}"),
        None => assert!(report["calls_ok"].as_u64().unwrap() > 0, "{report:#}"),
    }
    assert_eq!(report["verified"], true);
    let call = &report["call"];
    assert_eq!(call["method"], method);
    assert!(call["request_bytes"].as_u64().unwrap() > 0, "{call:#}");
    call
}
