//! What the end-to-end tests share: the repository they run in and the
//! `xtask` binary they drive, started there as a reader would.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

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
