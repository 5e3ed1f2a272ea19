//! A fixture server that is not rpclab's contract (`fixtures/grpc-shop`,
//! `fixtures/thrift-shop`), in a container, and the client run against it
//! as a user runs it: what the generic-call tests share.
//!
//! The fixture is built by cargo (the same profile as the test) and put in
//! an image of its own: `FROM scratch` with the binary and the shared
//! libraries `ldd` names, so no base image or registry is needed. A
//! [`Fixture`] container runs on the host network, on 127.0.0.1, confined
//! as the lab's servers are, and is removed when dropped. The client runs
//! as the `rpclab-client` binary; a test reads its JSON report or its one
//! error line. No timing is asserted.

use serde_json::Value;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A folder of this test process's own.
pub fn scratch() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rpclab-generic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

/// Runs `cmd`, which must succeed.
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

/// The binary `package` builds (its binary of the same name), built by
/// cargo with the test's own profile.
pub fn binary(package: &str) -> PathBuf {
    static BUILT: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(p, _)| p == package) {
        return path.clone();
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
/// libraries it links, on no base; built once per test process.
pub fn image(package: &str) -> String {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let tag = format!("rpclab-test/{package}:latest");
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if built.contains(&tag) {
        return tag;
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
    run(
        Command::new("docker")
            .args(["build", "-q", "-t", &tag])
            .arg(&context),
        &format!("docker build (the {package} fixture)"),
    );
    // The engine has it now: the binary's copy is not kept.
    let _ = std::fs::remove_dir_all(&context);
    built.push(tag.clone());
    tag
}

/// A running fixture container, removed when dropped.
pub struct Fixture {
    pub name: String,
    /// `127.0.0.1:<port>`, where it listens.
    pub target: String,
}

impl Fixture {
    /// Starts `package`'s image with `--listen <target>` and `args`;
    /// `mount`, if any, is mounted read-only at `/certs`.
    pub fn start(package: &str, args: &[&str], mount: Option<&Path>) -> Fixture {
        static N: AtomicUsize = AtomicUsize::new(0);
        let image = image(package);
        let port = super::free_port();
        let target = format!("127.0.0.1:{port}");
        let name = format!(
            "rpclab-test-{package}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut cmd = Command::new("docker");
        cmd.args(["run", "-d", "--rm", "--name", &name, "--network", "host"])
            .args(["--read-only", "--cap-drop", "ALL"])
            .args(["--security-opt", "no-new-privileges", "--pids-limit", "256"]);
        if let Some(dir) = mount {
            cmd.arg("-v").arg(format!("{}:/certs:ro", dir.display()));
        }
        cmd.arg(&image).args(["--listen", &target]).args(args);
        // Removed on drop even if it never listens.
        let fixture = Fixture { name, target };
        run(&mut cmd, &format!("docker run (the {package} fixture)"));
        fixture.wait_listening();
        fixture
    }

    /// Until the server accepts connections, bounded (a slow machine may
    /// take a while; nothing here measures it).
    fn wait_listening(&self) {
        let give_up = Instant::now() + Duration::from_secs(120);
        while TcpStream::connect(&self.target).is_err() {
            assert!(
                Instant::now() < give_up,
                "the container {} never listened on {}",
                self.name,
                self.target
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// `rpclab-client --target <fixture> <args>`, as a user runs it.
pub fn client(fixture: &Fixture, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rpclab-client"));
    // An error is one line, as a user sees it (a backtrace asked for by
    // the environment would add its own).
    cmd.env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE");
    cmd.args(["--target", &fixture.target]);
    cmd.args(args).output().expect("rpclab-client starts")
}

/// A run that must succeed: its JSON report.
pub fn report(fixture: &Fixture, args: &[&str]) -> Value {
    let out = client(fixture, &[args, &["--json"]].concat());
    assert!(
        out.status.success(),
        "rpclab-client {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// A run that must fail before any load: its one error line.
pub fn refusal(fixture: &Fixture, args: &[&str]) -> String {
    let out = client(fixture, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
    assert!(
        stdout.trim().is_empty(),
        "{args:?}: something was measured:\n{stdout}"
    );
    let lines: Vec<&str> = stderr.trim().lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: not one line:\n{stderr}");
    lines[0].to_owned()
}
