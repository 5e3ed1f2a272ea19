//! `cargo xtask test`: the tests `cargo test --workspace` runs, in three
//! lanes side by side instead of one binary after another.
//!
//! Why: `cargo test` runs its test binaries in turn. The lab's end-to-end
//! tests (xtask's test binary `lab`) spend most of their time waiting on
//! Docker and JVM starts; the codec and Maven tests are CPU-bound and use
//! no lab run; the client's end-to-end tests (`client/tests/integration`)
//! wait on image builds and servers. In turn, the suite's time is the sum
//! of all; in three lanes side by side (lab, client end-to-end, the rest),
//! about the longest one. The lab binary
//! is built first and its lane starts while the rest compiles. Its tests
//! take the engine's locks across processes (xtask/tests/common): a test
//! whose runs are checks (scratch profiles, which the lab lets share an
//! engine) takes one of two slots, so two checks run side by side; a test
//! that needs the engine alone takes it whole.
//!
//! The binaries are the ones `cargo test --workspace --no-run` builds (read
//! from its JSON messages), run as cargo runs them: from their package's
//! folder, with `CARGO_MANIFEST_DIR` and `CARGO` set, every argument after
//! `--` passed on. Each binary's whole output is kept in
//! `target/xtask-test/<binary>.log`; a line is printed as each ends, and a
//! failed one's output is printed whole. The doc-tests run last in the
//! other lane (`cargo test --workspace --doc`); xtask's with its
//! `kubernetes` feature (the Kubernetes engine's unit tests and its
//! cluster test binary) are built and run beside that lane.
//!
//! The same build makes the workspace's programs (the fixtures' servers
//! among them); each test binary gets their paths as `RPCLAB_BIN_<NAME>`
//! (`RPCLAB_BIN_GRPC_SHOP`), so that a test that needs one runs the one
//! built here instead of asking cargo for it: a `cargo build -p grpc-shop`
//! resolves features for that package alone and compiled some fifty
//! crates again.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args, Debug, Default)]
pub struct TestArgs {
    /// Passed to cargo: fail if Cargo.lock needs an update (as CI runs).
    #[arg(long)]
    locked: bool,
    /// Arguments for every test binary (a name filter, `--ignored`, ...).
    #[arg(last = true)]
    args: Vec<String>,
}

/// One test binary cargo built.
#[derive(Debug, Clone, PartialEq)]
struct Binary {
    package: String,
    /// The target's name (`lab_smoke`, or the package's for unit tests).
    target: String,
    /// `lib`, `bin` or `test`.
    kind: String,
    executable: PathBuf,
    /// The package's folder: cargo runs its tests from there.
    folder: PathBuf,
}

impl Binary {
    /// The lab lane: xtask's test binary of lab runs.
    fn is_lab(&self) -> bool {
        self.package == "xtask" && self.kind == "test" && self.target == LAB_TARGET
    }

    /// The client lane: the load client's end-to-end tests against real
    /// servers in containers, the longest binary after the lab's (most of
    /// it image builds and JVM starts, waited on).
    fn is_client_end_to_end(&self) -> bool {
        self.package == CLIENT_PACKAGE && self.kind == "test" && self.target == CLIENT_TARGET
    }

    fn label(&self) -> String {
        match self.kind.as_str() {
            "test" => format!("{} ({})", self.target, self.package),
            kind => format!("{} {kind} ({})", self.target, self.package),
        }
    }
}

/// What one binary (or the doc-tests) did.
struct Ended {
    /// The lane it ran in.
    lane: String,
    label: String,
    passed: bool,
    counts: String,
    seconds: f64,
}

/// xtask's test binary of lab runs (`xtask/tests/lab`). It is built
/// first and its lane starts at once: its tests wait mostly on Docker
/// and JVM starts, so the rest of the workspace's tests compile beside it.
const LAB_TARGET: &str = "lab";

/// The client's test binary of calls to real servers
/// (`client/tests/integration`): a lane of its own, beside the lab's and
/// the rest's, since alone it took about as long as all the others
/// together (450 s of 629 in a cold CI), mostly waiting.
const CLIENT_PACKAGE: &str = "rpclab-client";
const CLIENT_TARGET: &str = "integration";

/// The lab binary's libtest threads: one for each of its tests, so that
/// none waits for a thread. Its tests wait on each engine's locks
/// (`xtask/tests/common`), at most two lab runs at a time per engine: the tests of
/// a test's own engine run beside the default engine's, where a thread
/// per CPU would leave them queued behind tests blocked on the default
/// engine's lock.
const LAB_THREADS: usize = 32;

/// The variable every JVM a test starts on this machine reads (Maven and
/// the Java golden generators and verifiers; the lab's servers run in
/// containers, which do not inherit it).
const JAVA_TOOL_OPTIONS: &str = "JAVA_TOOL_OPTIONS";

/// Those JVMs live for seconds, and no test times them: C1 alone compiles
/// enough, where C2's compiling was most of such a JVM's CPU (a Maven build
/// with its tests: 18 CPU-s, 11 with these; images/maven/Dockerfile sets
/// the same for the image builds). A value the caller set is kept.
const SHORT_JVMS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

pub fn run(root: &Path, args: TestArgs) -> Result<()> {
    let started = Instant::now();
    let (lab, lab_programs) = build(root, args.locked, &["--test", LAB_TARGET])?;
    let lab: Vec<Binary> = lab.into_iter().filter(Binary::is_lab).collect();
    if lab.is_empty() {
        bail!("cargo built no xtask test binary `{LAB_TARGET}` (xtask/tests/{LAB_TARGET}/main.rs)");
    }
    let logs = root.join("target/xtask-test");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let print = Mutex::new(());
    let (lab_ended, rest_ended) = std::thread::scope(|s| {
        let lab_lane = Lane {
            name: "lab",
            binaries: &lab,
            args: &args.args,
            programs: &lab_programs,
            logs: &logs,
            print: &print,
            last: None,
            threads: Some(LAB_THREADS),
        };
        let lab_lane = s.spawn(move || lab_lane.run());
        // The rest compiles while the lab lane runs.
        let rest_ended = build(root, args.locked, &[]).map(|(all, programs)| {
            let (client, rest): (Vec<Binary>, Vec<Binary>) = all
                .into_iter()
                .filter(|b| !b.is_lab())
                .partition(Binary::is_client_end_to_end);
            eprintln!(
                "the lab lane ({} binary) runs beside the client's end-to-end lane ({}) and the rest ({}, then the doc-tests)",
                lab.len(),
                client.len(),
                rest.len()
            );
            let lane = |name, binaries, last| Lane {
                name,
                binaries,
                args: &args.args,
                programs: &programs,
                logs: &logs,
                print: &print,
                last,
                threads: None,
            };
            std::thread::scope(|inner| {
                let client_lane = lane("e2e ", &client, None);
                let client_lane = inner.spawn(move || client_lane.run());
                let kubernetes = inner.spawn(|| kubernetes(root, &args, &logs, &print));
                let mut ended = lane("rest", &rest, Some(doc_tests(root, args.locked))).run();
                ended.extend(kubernetes.join().expect("kubernetes build"));
                ended.extend(client_lane.join().expect("client lane"));
                ended
            })
        });
        (lab_lane.join().expect("lab lane"), rest_ended)
    });
    let rest_ended = rest_ended?;
    let busy = |lane: &str| {
        lab_ended
            .iter()
            .chain(&rest_ended)
            .filter(|e| e.lane == lane)
            .map(|e| e.seconds)
            .sum::<f64>()
    };
    eprintln!(
        "\n{} binaries in {:.0} s (lab lane {:.0} s, client end-to-end {:.0} s, rest {:.0} s): {} passed, {} failed",
        lab_ended.len() + rest_ended.len(),
        started.elapsed().as_secs_f64(),
        busy("lab"),
        busy("e2e"),
        busy("rest"),
        lab_ended.len() + rest_ended.len() - failed_count(&lab_ended, &rest_ended),
        failed_count(&lab_ended, &rest_ended)
    );
    let failed: Vec<&Ended> = lab_ended
        .iter()
        .chain(&rest_ended)
        .filter(|e| !e.passed)
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    for e in &failed {
        eprintln!("  failed: {} ({})", e.label, e.counts);
    }
    bail!(
        "{} test binaries failed (their whole output: {})",
        failed.len(),
        logs.display()
    )
}

/// What xtask's `kubernetes` feature adds (the Kubernetes engine,
/// docs/kubernetes.md): xtask's unit tests with the engine compiled in, and
/// the test binary against a real cluster, which says SKIPPED where none
/// answers. Built beside the rest's lane once the workspace's tests are
/// built (the doc-tests' cargo waits for it), so that the engine's compile
/// (kube-rs and the API's types, minutes on a cold 2-core machine) is on
/// no test's way: run after the rest, it ended a cold CI 155 s after the
/// lab lane. Its logs go to `kubernetes/` beside the others.
fn kubernetes(root: &Path, args: &TestArgs, logs: &Path, print: &Mutex<()>) -> Vec<Ended> {
    const BUILD: &[&str] = &[
        "--features",
        "xtask/kubernetes",
        "--bin",
        "xtask",
        "--test",
        "kube",
    ];
    let logs = logs.join("kubernetes");
    let built = std::fs::create_dir_all(&logs)
        .context("cannot create the kubernetes logs' folder")
        .and_then(|()| build(root, args.locked, BUILD));
    match built {
        Ok((binaries, programs)) => {
            let binaries: Vec<Binary> = binaries
                .into_iter()
                .filter(|b| b.package == "xtask")
                .collect();
            Lane {
                name: "rest",
                binaries: &binaries,
                args: &args.args,
                programs: &programs,
                logs: &logs,
                print,
                last: None,
                threads: None,
            }
            .run()
        }
        Err(e) => {
            eprintln!("[rest] FAILED xtask with its kubernetes feature: {e:#}");
            vec![Ended {
                lane: "rest".into(),
                label: "xtask --features kubernetes (build)".into(),
                passed: false,
                counts: format!("{e:#}"),
                seconds: 0.0,
            }]
        }
    }
}

fn failed_count(a: &[Ended], b: &[Ended]) -> usize {
    a.iter().chain(b).filter(|e| !e.passed).count()
}

/// A program of the workspace (a binary target), as the test build made it.
type Program = (String, PathBuf);

/// `cargo test --workspace --no-run` with `targets` (none: all): the test
/// binaries it names, and the programs it built beside them. The whole
/// workspace is named either way, so that cargo picks the same features
/// and a first build of some targets is part of the build of all.
fn build(root: &Path, locked: bool, targets: &[&str]) -> Result<(Vec<Binary>, Vec<Program>)> {
    let mut cargo = cargo();
    cargo
        .args([
            "test",
            "--workspace",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(targets)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if locked {
        cargo.arg("--locked");
    }
    let out = cargo
        .output()
        .context("cannot run cargo test --no-run (is cargo on PATH?)")?;
    if !out.status.success() {
        bail!("cargo test --workspace --no-run failed: fix the build first (above)");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let binaries: Vec<Binary> = text.lines().filter_map(binary_of).collect();
    if binaries.is_empty() {
        bail!("cargo test --no-run named no test binary");
    }
    Ok((binaries, text.lines().filter_map(program_of).collect()))
}

/// The program (a binary target, not a test) a cargo JSON message
/// announces, if it is one.
fn program_of(line: &str) -> Option<Program> {
    let m: serde_json::Value = serde_json::from_str(line).ok()?;
    if m["reason"] != "compiler-artifact"
        || m["profile"]["test"] != false
        || m["target"]["kind"][0] != "bin"
    {
        return None;
    }
    let name = m["target"]["name"].as_str()?.to_owned();
    Some((name, PathBuf::from(m["executable"].as_str()?)))
}

/// The variable a test binary finds `program`'s path in.
fn program_variable(program: &str) -> String {
    format!("RPCLAB_BIN_{}", program.to_uppercase().replace('-', "_"))
}

/// The test binary a cargo JSON message announces, if it is one.
fn binary_of(line: &str) -> Option<Binary> {
    let m: serde_json::Value = serde_json::from_str(line).ok()?;
    if m["reason"] != "compiler-artifact" || m["profile"]["test"] != true {
        return None;
    }
    let executable = PathBuf::from(m["executable"].as_str()?);
    let manifest = Path::new(m["manifest_path"].as_str()?);
    Some(Binary {
        package: package_name(m["package_id"].as_str()?),
        target: m["target"]["name"].as_str()?.to_owned(),
        kind: m["target"]["kind"][0].as_str()?.to_owned(),
        executable,
        folder: manifest.parent()?.to_owned(),
    })
}

/// A package's name from cargo's package id: `path+file:///…/xtask#0.1.0`,
/// `path+file:///…/kryo#kryo@0.1.0`, or the older `xtask 0.1.0 (path+…)`.
fn package_name(id: &str) -> String {
    if let Some((_, tail)) = id.rsplit_once('#') {
        if let Some((name, _)) = tail.split_once('@') {
            return name.to_owned();
        }
        let folder = id[..id.len() - tail.len() - 1].rsplit('/').next();
        return folder.unwrap_or(tail).to_owned();
    }
    id.split(' ').next().unwrap_or(id).to_owned()
}

/// The doc-tests, as one more entry of a lane.
fn doc_tests(root: &Path, locked: bool) -> Command {
    let mut c = cargo();
    c.args(["test", "--workspace", "--doc"]).current_dir(root);
    if locked {
        c.arg("--locked");
    }
    c
}

fn cargo() -> Command {
    crate::basics::host::cargo_command()
}

/// One lane: its binaries run one after another, then `last`.
struct Lane<'a> {
    name: &'a str,
    binaries: &'a [Binary],
    /// Arguments for every binary.
    args: &'a [String],
    /// The workspace's programs, each binary told where they are.
    programs: &'a [Program],
    logs: &'a Path,
    print: &'a Mutex<()>,
    last: Option<Command>,
    /// libtest's threads for each binary, unless the arguments or
    /// `RUST_TEST_THREADS` say otherwise (None: libtest's default, a
    /// thread per CPU).
    threads: Option<usize>,
}

impl Lane<'_> {
    fn run(self) -> Vec<Ended> {
        let mut ended = Vec::new();
        for b in self.binaries {
            let mut cmd = Command::new(&b.executable);
            cmd.args(self.args)
                .current_dir(&b.folder)
                .env("CARGO_MANIFEST_DIR", &b.folder)
                .env("CARGO_PKG_NAME", &b.package);
            for (program, path) in self.programs {
                cmd.env(program_variable(program), path);
            }
            let asked = self.args.iter().any(|a| a.starts_with("--test-threads"))
                || std::env::var_os("RUST_TEST_THREADS").is_some();
            if let (Some(threads), false) = (self.threads, asked) {
                cmd.env("RUST_TEST_THREADS", threads.to_string());
            }
            if std::env::var_os(JAVA_TOOL_OPTIONS).is_none() {
                cmd.env(JAVA_TOOL_OPTIONS, SHORT_JVMS);
            }
            let log = self
                .logs
                .join(format!("{}-{}-{}.log", b.package, b.kind, b.target));
            ended.push(run_one(self.name, b.label(), cmd, &log, self.print));
        }
        if let Some(cmd) = self.last {
            let log = self.logs.join("doc-tests.log");
            ended.push(run_one(
                self.name,
                "doc-tests".to_owned(),
                cmd,
                &log,
                self.print,
            ));
        }
        ended
    }
}

/// Runs one command with its output into `log`, and says how it ended.
fn run_one(lane: &str, label: String, mut cmd: Command, log: &Path, print: &Mutex<()>) -> Ended {
    let started = Instant::now();
    let result = std::fs::File::create(log).and_then(|file| {
        let err = file.try_clone()?;
        cmd.stdout(file).stderr(err).status()
    });
    let seconds = started.elapsed().as_secs_f64();
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let (passed, counts) = match result {
        Ok(status) => (status.success(), counts_of(&output)),
        Err(e) => (false, format!("did not start: {e}")),
    };
    let _guard = print.lock().unwrap_or_else(|p| p.into_inner());
    eprintln!(
        "[{lane:<4}] {} {label}: {counts} ({seconds:.0} s)",
        if passed { "ok    " } else { "FAILED" }
    );
    if !passed {
        eprintln!(
            "---- {label}, whole output ({}) ----\n{output}\n---- end of {label} ----",
            log.display()
        );
    }
    Ended {
        lane: lane.trim().to_owned(),
        label,
        passed,
        counts,
        seconds,
    }
}

/// The counts of every `test result:` line, summed (`12 passed; 0 failed;
/// 1 ignored`), or what the output ended with when there is none.
fn counts_of(output: &str) -> String {
    let mut sums = [0u64; 3];
    let mut any = false;
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        any = true;
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(what), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => sums[0] += n,
                "failed" => sums[1] += n,
                "ignored" => sums[2] += n,
                _ => {}
            }
        }
    }
    if !any {
        let tail = output.lines().last().unwrap_or("no output");
        return format!("no test result line; last: {tail}");
    }
    format!(
        "{} passed; {} failed; {} ignored",
        sums[0], sums[1], sums[2]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_artifact_message_names_its_binary_and_package_folder() {
        let line = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/kryo#kryo@0.1.0","manifest_path":"/w/crates/kryo/Cargo.toml","target":{"kind":["test"],"name":"golden"},"profile":{"test":true},"executable":"/w/target/debug/deps/golden-1"}"#;
        let b = binary_of(line).unwrap();
        assert_eq!(b.package, "kryo");
        assert_eq!(b.target, "golden");
        assert_eq!(b.kind, "test");
        assert_eq!(b.folder, Path::new("/w/crates/kryo"));
        assert!(!b.is_lab());
        let lab = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/xtask#0.1.0","manifest_path":"/w/xtask/Cargo.toml","target":{"kind":["test"],"name":"lab"},"profile":{"test":true},"executable":"/w/target/debug/deps/lab-2"}"#;
        let b = binary_of(lab).unwrap();
        assert_eq!(b.package, "xtask");
        assert!(b.is_lab());
        // xtask's other test binary runs in the other lane.
        let checks = lab.replace(r#""name":"lab""#, r#""name":"checks""#);
        assert!(!binary_of(&checks).unwrap().is_lab());
    }

    #[test]
    fn programs_are_the_built_binary_targets_and_named_for_the_tests() {
        let bin = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/fixtures/grpc-shop#0.1.0","manifest_path":"/w/fixtures/grpc-shop/Cargo.toml","target":{"kind":["bin"],"name":"grpc-shop"},"profile":{"test":false},"executable":"/w/target/debug/grpc-shop"}"#;
        assert_eq!(
            program_of(bin),
            Some((
                "grpc-shop".to_owned(),
                PathBuf::from("/w/target/debug/grpc-shop")
            ))
        );
        let test = bin.replace(r#""test":false"#, r#""test":true"#);
        assert_eq!(program_of(&test), None);
        let lib = r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"kryo"},"profile":{"test":false},"executable":null}"#;
        assert_eq!(program_of(lib), None);
        assert_eq!(program_variable("grpc-shop"), "RPCLAB_BIN_GRPC_SHOP");
    }

    #[test]
    fn builds_that_are_not_test_binaries_are_skipped() {
        let lib = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/xtask#0.1.0","manifest_path":"/w/xtask/Cargo.toml","target":{"kind":["bin"],"name":"xtask"},"profile":{"test":false},"executable":"/w/target/debug/xtask"}"#;
        assert_eq!(binary_of(lib), None);
        assert_eq!(
            binary_of(r#"{"reason":"build-finished","success":true}"#),
            None
        );
        assert_eq!(binary_of("not json"), None);
    }

    #[test]
    fn package_ids_of_every_cargo_form_give_the_name() {
        assert_eq!(package_name("path+file:///w/xtask#0.1.0"), "xtask");
        assert_eq!(
            package_name("path+file:///w/crates/jsonb#fastjson2-jsonb@0.1.0"),
            "fastjson2-jsonb"
        );
        assert_eq!(package_name("xtask 0.1.0 (path+file:///w/xtask)"), "xtask");
    }

    #[test]
    fn counts_sum_every_result_line_and_say_when_there_is_none() {
        let out = "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured\n\
                   test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured";
        assert_eq!(counts_of(out), "5 passed; 1 failed; 1 ignored");
        assert!(counts_of("thread main panicked").contains("thread main panicked"));
    }
}
