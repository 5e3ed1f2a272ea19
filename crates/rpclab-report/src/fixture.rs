//! The files the tests read: the fixture snapshot's results and the
//! snapshots committed under `results/`.

use std::path::{Path, PathBuf};

/// `xtask/tests/fixtures/results.json`, a real smoke reproduction's
/// results (its README says why it is never regenerated).
pub fn results_json() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/tests/fixtures/results.json")
}

/// The committed snapshot `results/<name>`.
pub fn committed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../results")
        .join(name)
}
