//! What the end-to-end tests share: the repository they run in and the
//! `xtask` binary they drive, started there as a reader would.

#![allow(dead_code)]

pub mod dockerd;
pub mod lab;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root (xtask's parent folder).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// `cargo xtask <args>`, from the repository's root.
pub fn xtask_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.args(args).current_dir(repo_root());
    cmd
}

/// Where every test process takes an engine: one fixed file per engine
/// (`default` for the machine's own), so that the lab tests of every test
/// binary (run one after the other or at the same time) and of every
/// process share it.
pub fn engine_lock_path(engine: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rpclab-engine-{engine}.lock"))
}

/// An engine, held for as long as this lives (an exclusive lock on
/// [`engine_lock_path`], released when dropped or when the process ends,
/// however it ends).
///
/// When dropped it writes one line to the process's stderr, past
/// libtest's capture: which test held which engine, how long it waited for
/// it and how long it held it. Where a suite's time goes is then read from
/// the lab lane's log (`target/xtask-test/xtask-test-lab.log`), test by test; nothing
/// is asserted of those times.
pub struct EngineLock {
    _file: std::fs::File,
    engine: String,
    waited: std::time::Duration,
    taken: std::time::Instant,
}

impl Drop for EngineLock {
    fn drop(&mut self) {
        use std::io::Write;
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        let _ = writeln!(
            std::io::stderr(),
            "engine {}: {test} waited {:.0} s for it, held it {:.0} s",
            self.engine,
            self.waited.as_secs_f64(),
            self.taken.elapsed().as_secs_f64()
        );
    }
}

/// One lab run at a time on the machine's engine: a second one would be
/// refused (and would share ports). Every test that starts a lab run there
/// holds this for its whole life; it waits while another test, in this
/// process or another, holds it.
pub fn engine_lock() -> EngineLock {
    engine_lock_of("default")
}

/// [`engine_lock`] of a test's own engine (`c`: the private `dockerd` of
/// the resume tests). Runs on different engines go on side by side: they
/// share the machine's CPUs, which the tests never time, and nothing else.
pub fn engine_lock_of(engine: &str) -> EngineLock {
    let path = engine_lock_path(engine);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open the engine lock {}: {e}", path.display()));
    let asked = std::time::Instant::now();
    // A lock on a fresh open file description: threads of one process
    // exclude each other just as processes do.
    file.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}: {e}", path.display()));
    EngineLock {
        _file: file,
        engine: engine.to_string(),
        waited: asked.elapsed(),
        taken: std::time::Instant::now(),
    }
}

/// `cargo xtask <args>` to its end.
pub fn xtask(args: &[&str]) -> Output {
    xtask_command(args).output().expect("xtask runs")
}

/// `cargo xtask lab build <args>`, which must succeed: the images a test's
/// run needs, built (or found) before the test takes an engine.
pub fn lab_build(args: &[&str]) {
    let build = xtask(&[&["lab", "build"], args].concat());
    assert!(
        build.status.success(),
        "lab build failed:\n{}",
        text(&build)
    );
}

/// What a command printed, both streams.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The one snapshot folder under `results`.
pub fn only_snapshot(results: &Path) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one snapshot in {}",
        results.display()
    );
    dirs.into_iter().next().unwrap()
}
