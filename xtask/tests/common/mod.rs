//! What the end-to-end tests share: the repository they run in and the
//! `xtask` binary they drive, started there as a reader would.

#![allow(dead_code)]

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

/// One lab run at a time on the engine: a second one would be refused
/// (and would share CPUs and ports). Tests that run the lab hold this.
static ENGINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the engine for one test (a panicked holder's lock is taken over).
pub fn engine_lock() -> std::sync::MutexGuard<'static, ()> {
    ENGINE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `cargo xtask <args>` to its end.
pub fn xtask(args: &[&str]) -> Output {
    xtask_command(args).output().expect("xtask runs")
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
