//! What the end-to-end tests against servers in containers share: a folder
//! of the test process's own, commands that must succeed, a confined
//! container removed when dropped (so a failing test leaves nothing
//! running), and the `rpclab-client` binary run as a user runs it, its
//! JSON report or its one error line read back. Needs the `docker` command
//! and an engine; the tests wrap their engine use in nothing else.

use super::cli;
use serde_json::Value;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A folder of this test process's own (`name` tells whose).
#[allow(dead_code)]
pub fn scratch(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("rpclab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

pub use super::cli::run;

/// The label of the lab's images (xtask's `LABEL_MANAGED`): a test's
/// image carries it too, so `cargo xtask lab clean --images` removes it.
/// Its build runs on the host's network (`--network host`), as the lab's
/// builds do: a second engine started with `--bridge none` (the
/// multi-host and engine-restart tests') removes the host's `docker0`,
/// and with it the default bridge a build's `RUN` would use. `--force-rm`
/// removes a failed step's container too.
#[allow(dead_code)]
pub const LAB_IMAGE: &str = "io.rpclab.managed=true";

/// `docker build -q -t <tag>` as every test image is built: with the
/// [`LAB_IMAGE`] label, on the host's network, a failed step's container
/// removed. The caller adds its build arguments and the context.
#[allow(dead_code)]
pub fn docker_build(tag: &str) -> Command {
    let mut cmd = Command::new("docker");
    cmd.args(["build", "-q", "-t", tag]).args([
        "--label",
        LAB_IMAGE,
        "--network",
        "host",
        "--force-rm",
    ]);
    cmd
}

/// A running container, removed when dropped.
#[allow(dead_code)]
pub struct Container {
    pub name: String,
    /// `127.0.0.1:<port>`, where it serves.
    pub target: String,
}

#[allow(dead_code)]
impl Container {
    /// Starts `image` on a free port of the host network, confined as the
    /// lab's servers are (read-only root, no capabilities, no new
    /// privileges, a pids limit); `setup` adds the
    /// `docker run` arguments before the image (mounts, environment) and
    /// after it (the command's), given the port. `prefix` names it.
    pub fn start(prefix: &str, image: &str, setup: impl FnOnce(&mut Command, u16)) -> Container {
        static N: AtomicUsize = AtomicUsize::new(0);
        let port = free_port();
        let name = format!(
            "rpclab-test-{prefix}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut cmd = Command::new("docker");
        cmd.args(["run", "-d", "--rm", "--name", &name, "--network", "host"])
            .arg("--read-only")
            .args(["--cap-drop", "ALL", "--security-opt", "no-new-privileges"])
            .args(["--pids-limit", "512"]);
        let container = Container {
            name,
            target: format!("127.0.0.1:{port}"),
        };
        // Removed even if `docker run` fails half-way.
        setup(&mut cmd, port);
        run(&mut cmd, &format!("docker run ({image})"));
        container
    }

    /// Until the server accepts connections, bounded (a slow machine may
    /// take a while; nothing here measures it).
    pub fn wait_listening(&self) {
        let give_up = Instant::now() + Duration::from_secs(120);
        while TcpStream::connect(&self.target).is_err() {
            assert!(
                Instant::now() < give_up,
                "the container {} never listened on {}:\n{}",
                self.name,
                self.target,
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Until the server's output holds `line` (its ready line), bounded;
    /// a server that stops first fails with its output.
    pub fn wait_for_line(&self, line: &str) {
        let give_up = Instant::now() + Duration::from_secs(180);
        loop {
            let logs = self.logs();
            if logs.contains(line) {
                return;
            }
            let running = Command::new("docker")
                .args(["inspect", "-f", "{{.State.Running}}", &self.name])
                .output()
                .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"true"));
            assert!(running, "the container {} stopped:\n{logs}", self.name);
            assert!(
                Instant::now() < give_up,
                "the container {} never printed {line:?}:\n{logs}",
                self.name
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// What the container printed so far, both streams.
    pub fn logs(&self) -> String {
        match Command::new("docker").args(["logs", &self.name]).output() {
            Ok(out) => format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => format!("(docker logs: {e})"),
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Panics, saying how to get it, unless the engine has every image of
/// `images` (the lab's own base images: `build` is the `cargo xtask lab
/// build ...` that makes them).
#[allow(dead_code)]
pub fn require_images(images: &[&str], build: &str) {
    for image in images {
        let found = Command::new("docker")
            .args(["image", "inspect", image])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "the engine has no {image}: build the lab's images once with `{build}`"
        );
    }
}

/// The `docker run` flags of a JVM container as the lab confines it
/// beyond [`Container::start`]'s: the image's user, a writable `/tmp`
/// (the JIT's and Netty's native files) and home, a memory limit.
#[allow(dead_code)]
pub fn jvm_confined(cmd: &mut Command) {
    cmd.args(["--user", "10001:10001", "--memory", "1g"])
        .args(["--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=256m"])
        .args([
            "--tmpfs",
            "/home/rpclab:rw,noexec,nosuid,nodev,size=64m,uid=10001,gid=10001",
        ]);
}

/// A local port nothing listens on (bound, then released).
#[allow(dead_code)]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `rpclab-client --target <target> <args>`, as a user runs it.
#[allow(dead_code)]
pub fn client(target: &str, args: &[&str]) -> Output {
    cli::client()
        .args(["--target", target])
        .args(args)
        .output()
        .expect("rpclab-client starts")
}

/// A run that must succeed: its JSON report.
#[allow(dead_code)]
pub fn report(target: &str, args: &[&str]) -> Value {
    cli::report(client(target, &[args, &["--json"]].concat()), args)
}

/// A run that must fail before any load: its one error line.
#[allow(dead_code)]
pub fn refusal(target: &str, args: &[&str]) -> String {
    cli::refusal(client(target, args), args)
}
