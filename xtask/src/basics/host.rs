//! Facts about the host the lab runs on, recorded in every snapshot, and the
//! few host-side actions the lab needs (port checks, building the
//! static client binary).

use anyhow::{bail, Context, Result};
use rpclab_model::manifest::{ClientBuild, HostInfo};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The facts of the machine the orchestrator runs on (the manifest's
/// `[host]`), with the version of its Docker engine.
pub fn host_info(docker_version: &str) -> HostInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: f64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    HostInfo {
        hostname: hostname(),
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_owned(),
        memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        docker_version: docker_version.to_owned(),
    }
}

/// The repository's root: xtask lives in `<root>/xtask`, and cargo sets
/// `CARGO_MANIFEST_DIR` at build time.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the repository")
        .to_owned()
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// Fails with a clear message when something already listens on `port`.
pub fn check_port_free(port: u16, server: &str) -> Result<()> {
    match TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(e) => bail!(
            "port {port} on 127.0.0.1, which server `{server}` needs, is already in use ({e}).\n\
             Stop whatever listens there (`ss -ltnp 'sport = :{port}'` shows it; `cargo xtask lab clean` removes \
             leftover lab containers), or change `port` in servers/{server}/server.toml."
        ),
    }
}

/// The folders whose contents make the numbers: a change in any of them,
/// tracked or not, means the snapshot did not run its recorded revision.
pub const LAB_INPUTS: [&str; 8] = [
    "client",
    "compose",
    "contract",
    "crates",
    "images",
    "servers",
    "xtask",
    "Cargo.lock",
];

/// The rpclab that decides a reproduction's verdicts: its git revision,
/// `(dirty)` after it when lab inputs differ from it.
pub fn decider(root: &Path) -> String {
    let (sha, dirty) = git_state(root);
    if dirty.is_empty() {
        sha
    } else {
        format!("{sha} (dirty)")
    }
}

/// The git revision of the work tree: (short sha, the lab inputs that
/// differ from it, untracked files included).
pub fn git_state(root: &Path) -> (String, Vec<String>) {
    let sha = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "nogit".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all", "--"])
        .args(LAB_INPUTS)
        .current_dir(root)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.get(3..))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    (sha, dirty)
}

/// The files git tracks under `dir` (a folder of `root`; committed or
/// staged), as paths relative to `root`; None outside a git checkout. The
/// READMEs' generated blocks are made from tracked snapshots only, so that a
/// user's own uncommitted run never makes the committed README stale.
pub fn tracked_files(root: &Path, dir: &str) -> Option<std::collections::BTreeSet<PathBuf>> {
    let out = Command::new("git")
        .args(["ls-files", "-z", "--", dir])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(
        out.stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect(),
    )
}

/// Where `rpclab-echo` is in the client image (the gRPC echo server the
/// benchmarks measure the client against).
pub const ECHO_BINARY: &str = "/usr/local/bin/rpclab-echo";

/// The host's 1-minute load average (Linux), a sign of other work on it.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The statically linked binaries of the client package.
pub struct StaticBinaries {
    /// The load client, `rpclab-client`.
    pub client: PathBuf,
    /// `rpclab-echo`, the tonic server `bench client` measures the client against.
    pub echo: PathBuf,
}

/// A static build of the client package started in the background, so
/// that compiling (CPU) overlaps with the image builds (mostly downloads).
/// Its output goes to a log file, shown if the build fails.
pub struct StaticBuild {
    child: std::process::Child,
    log: PathBuf,
    release: PathBuf,
}

impl StaticBuild {
    /// Starts `cargo build` of the client package's binaries (the load
    /// client and the echo server of `bench client`) and of the floor
    /// package's (`rpclab-floor`, beside them for the benches), statically linked
    /// (glibc with `crt-static`), in one cargo invocation, so they run in
    /// any image whatever glibc the building host has.
    pub fn start(root: &Path, build: ClientBuild) -> Result<StaticBuild> {
        let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
        let target_dir = root.join("target/static");
        std::fs::create_dir_all(&target_dir)
            .with_context(|| format!("cannot create {}", target_dir.display()))?;
        let log = target_dir.join(format!("build-{}.log", build.cargo_profile()));
        let out = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        eprintln!(
            "building the static load client ({triple}, cargo profile `{}`) in the background; log: {}",
            build.cargo_profile(),
            log.display()
        );
        let child = cargo_command()
            .args(["build", "--profile", build.cargo_profile()])
            .args([
                "--locked",
                "-p",
                "rpclab-client",
                "-p",
                "rpclab-floor",
                "--bins",
                "--target",
                &triple,
            ])
            .arg("--target-dir")
            .arg(&target_dir)
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            .current_dir(root)
            .stdin(std::process::Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .context("cannot run cargo to build the client")?;
        Ok(StaticBuild {
            child,
            log,
            release: target_dir.join(&triple).join(build.cargo_profile()),
        })
    }

    /// Waits for the build; the binaries, checked to be static.
    pub fn finish(mut self) -> Result<StaticBinaries> {
        let status = self.child.wait().context("cannot wait for cargo")?;
        if !status.success() {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "building the static client failed ({status}); the end of {}:\n{}",
                self.log.display(),
                tail.join("\n")
            );
        }
        let binaries = StaticBinaries {
            client: self.release.join("rpclab-client"),
            echo: self.release.join("rpclab-echo"),
        };
        for binary in [&binaries.client, &binaries.echo] {
            if !is_static_elf(binary)? {
                bail!(
                    "{} is dynamically linked; it would fail in images with another glibc",
                    binary.display()
                );
            }
        }
        Ok(binaries)
    }
}

impl Drop for StaticBuild {
    /// A run that fails before waiting (an image build error, Ctrl-C)
    /// leaves no cargo behind.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Builds the client's static binaries in the foreground.
/// The variables `cargo run` (and so `cargo xtask`) sets for the program
/// it runs, of the package it ran; a cargo this program starts must not
/// inherit them. A build script that watches one (ring's watches
/// `CARGO_MANIFEST_DIR`) sees it change between a cargo started from a
/// shell and one started from here, and is run again, with everything
/// above it: ring, rustls, tonic, bollard, the protocols, the client and
/// xtask were compiled a second time in every CI run (4.5 minutes on two
/// busy cores).
pub const CARGO_RUN_VARIABLES: [&str; 5] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
];

/// `cargo` (the one that runs this program, else the `PATH`'s) as a shell
/// would start it: without [`CARGO_RUN_VARIABLES`] and `CARGO_PKG_*`.
pub fn cargo_command() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_") || CARGO_RUN_VARIABLES.contains(&name) {
            cmd.env_remove(name);
        }
    }
    cmd
}

pub fn build_static_client(root: &Path, build: ClientBuild) -> Result<StaticBinaries> {
    StaticBuild::start(root, build)?.finish()
}

/// True when an ELF file has no program interpreter (PT_INTERP), i.e. it
/// is statically linked.
pub fn is_static_elf(path: &Path) -> Result<bool> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if data.len() < 64 || &data[..4] != b"\x7fELF" || data[4] != 2 {
        bail!("{} is not a 64-bit ELF file", path.display());
    }
    let u16_at = |o: usize| u16::from_le_bytes([data[o], data[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(data[32..40].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (u16_at(54), u16_at(56));
    const PT_INTERP: u32 = 3;
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let Some(bytes) = data.get(at..at + 4) else {
            bail!("truncated ELF header")
        };
        if u32::from_le_bytes(bytes.try_into().expect("4 bytes")) == PT_INTERP {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untracked_file_under_the_inputs_makes_the_tree_dirty() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("servers/a")).unwrap();
        std::fs::write(dir.path().join("servers/a/server.toml"), "x").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not an input").unwrap();
        let (_, dirty) = git_state(dir.path());
        assert_eq!(dirty, vec!["servers/a/server.toml".to_owned()]);
    }

    #[test]
    fn a_taken_port_is_reported_with_what_to_do() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let err = check_port_free(port, "grpc-java").unwrap_err().to_string();
        assert!(
            err.contains("already in use") && err.contains("servers/grpc-java/server.toml"),
            "{err}"
        );
    }

    #[test]
    fn the_running_test_binary_is_recognised_as_dynamic() {
        // Test binaries are linked dynamically; the static check must see it.
        let me = std::env::current_exe().unwrap();
        assert!(!is_static_elf(&me).unwrap());
    }
}
