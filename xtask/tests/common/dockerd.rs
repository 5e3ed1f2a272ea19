//! A `dockerd` beside the machine's engine, for the tests that need a
//! second engine (the multi-host test's `b`) or one they may stop and start
//! (the resume tests' `c`): a socket, data root, exec root and pid file of
//! its own, no bridge and no iptables (the lab uses the host's network
//! only), as `.ci/run` starts engine `b`.

use super::lab::lab_ps_on;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The multi-host test's second engine (`.ci/run` starts it beforehand).
pub const ENGINE_B: &str = "unix:///run/rpclab-b.sock";
/// The engine the resume tests stop and start, theirs alone.
pub const ENGINE_C: &str = "unix:///run/rpclab-c.sock";
/// The kill-and-resume test's engine, its alone: the run it kills leaves
/// containers that any other run's clean-up would remove first.
pub const ENGINE_D: &str = "unix:///run/rpclab-d.sock";

/// How long a started `dockerd` may take to answer.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// A `dockerd` at one of the endpoints above; dropped, the one it started
/// is stopped (also when the test fails).
pub struct Dockerd {
    endpoint: &'static str,
    child: Option<Child>,
    log: PathBuf,
}

impl Dockerd {
    /// The engine at `endpoint` as it is when it answers already (a
    /// running one is not this test's to stop), else started here. Err
    /// says why none can be had on this machine.
    pub fn running_or_started(endpoint: &'static str) -> Result<Dockerd, String> {
        let mut engine = Dockerd::at(endpoint);
        if lab_ps_on(endpoint).status.success() {
            return Ok(engine);
        }
        engine.start()?;
        Ok(engine)
    }

    /// A `dockerd` of this test's own at `endpoint`, started here: one
    /// that a killed test run left is stopped first. Err says why none can
    /// be started on this machine.
    pub fn own(endpoint: &'static str) -> Result<Dockerd, String> {
        let mut engine = Dockerd::at(endpoint);
        if let Some(pid) = std::fs::read_to_string(engine.path("/run/rpclab-", ".pid"))
            .ok()
            .and_then(|p| p.trim().parse::<i32>().ok())
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&endpoint["unix://".len()..]) {
                terminate(pid);
            }
        }
        engine.start()?;
        Ok(engine)
    }

    fn at(endpoint: &'static str) -> Dockerd {
        Dockerd {
            endpoint,
            child: None,
            log: std::env::temp_dir().join(format!("rpclab-dockerd-{}.log", name_of(endpoint))),
        }
    }

    /// `<prefix><name><suffix>`: this engine's file of a kind.
    fn path(&self, prefix: &str, suffix: &str) -> String {
        format!("{prefix}{}{suffix}", name_of(self.endpoint))
    }

    /// Starts `dockerd` and waits until the engine answers.
    pub fn start(&mut self) -> Result<(), String> {
        assert!(self.child.is_none(), "dockerd runs already");
        if !is_root() {
            return Err(format!(
                "{} does not answer and starting a dockerd needs root",
                self.endpoint
            ));
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new("dockerd")
            .args(["--host", self.endpoint])
            .args(["--data-root", &self.path("/var/lib/rpclab-", "")])
            .args(["--exec-root", &self.path("/run/rpclab-", "-exec")])
            .args(["--pidfile", &self.path("/run/rpclab-", ".pid")])
            .args(["--bridge", "none", "--iptables=false"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("dockerd cannot be started: {e}"))?;
        self.child = Some(child);
        let started = std::time::Instant::now();
        while started.elapsed() < ANSWER_WITHIN {
            if lab_ps_on(self.endpoint).status.success() {
                return Ok(());
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return Err(format!(
                    "dockerd exited at its start ({status}):\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        panic!(
            "dockerd started but {} did not answer in {} s:\n{}",
            self.endpoint,
            ANSWER_WITHIN.as_secs(),
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }

    /// Stops the `dockerd` started here as a restart of the engine does
    /// (SIGTERM: it stops its containers, removes its socket, then exits)
    /// and waits until it has exited.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            terminate(child.id() as i32);
            let _ = child.wait();
        }
    }
}

impl Drop for Dockerd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `b` of `unix:///run/rpclab-b.sock`.
fn name_of(endpoint: &str) -> &str {
    endpoint
        .trim_start_matches("unix:///run/rpclab-")
        .trim_end_matches(".sock")
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// SIGTERM to `pid`, then waits (up to 2 min) until it is gone.
fn terminate(pid: i32) {
    // SAFETY: kill(2) with a signal number, no memory involved.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        return;
    }
    for _ in 0..1200 {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return;
        }
        // Reaps it when it is this process's child (else nothing happens).
        // SAFETY: waitpid on one pid, no memory involved.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `tags`, copied from the default engine (where `lab build` made them)
/// to the engine at `endpoint`, each unless it has it already. A copy
/// keeps each image's id and labels, so a run on that engine finds every
/// image by its input hash and builds nothing; a build there would repeat
/// the whole chain (debootstrap, the JDK, Maven's downloads).
pub fn copy_images_to(endpoint: &str, tags: &[&str]) {
    super::with_docker(async |from| {
        use futures_util::StreamExt;
        let path = endpoint.strip_prefix("unix://").unwrap();
        let to = bollard::Docker::connect_with_unix(path, 600, bollard::API_DEFAULT_VERSION)
            .unwrap()
            .negotiate_version()
            .await
            .unwrap();
        let mut missing = Vec::new();
        for &tag in tags {
            let id = from
                .inspect_image(tag)
                .await
                .unwrap_or_else(|e| panic!("{tag} is not on the default engine: {e}"))
                .id;
            let there = to.inspect_image(tag).await.ok().and_then(|i| i.id);
            if there != id {
                missing.push(tag);
            }
        }
        if missing.is_empty() {
            return;
        }
        let saved = from
            .export_images(&missing)
            .take_while(|chunk| std::future::ready(chunk.is_ok()))
            .map(|chunk| chunk.unwrap());
        let mut loading = to.import_image_stream(
            bollard::query_parameters::ImportImageOptions::default(),
            saved,
            None,
        );
        while let Some(step) = loading.next().await {
            step.unwrap_or_else(|e| panic!("loading {missing:?} into {endpoint} failed: {e}"));
        }
        for tag in missing {
            let (a, b) = (
                from.inspect_image(tag).await.unwrap().id,
                to.inspect_image(tag).await.ok().and_then(|i| i.id),
            );
            assert_eq!(Some(a), Some(b), "{tag} was not copied whole");
        }
    });
}
