//! Reading a snapshot folder (`results/<UTC time>-<host>-<git sha>/`): its
//! `results.json` and its `manifest.toml`. The orchestrator's store writes
//! them; reading is here, in the report, since the report is what reads
//! old snapshots, and the lab's commands that read one (`lab report`,
//! `lab compare`, `readme`) go through it. The types are the model's
//! ([`rpclab_model::result::Results`], [`RunManifest`]), so the writer and
//! this reader cannot drift.

use anyhow::{Context, Result};
use rpclab_model::aggregate::{aggregate, DEFAULT_CV_THRESHOLD};
use rpclab_model::manifest::RunManifest;
use rpclab_model::result::Results;
use std::path::Path;

/// How a snapshot was made, as the report shows it: its `manifest.toml`,
/// or why it could not be read (the report says so instead of the setup).
pub type Setup = std::result::Result<RunManifest, String>;

/// The manifest of the snapshot in `dir`, or why there is none to read.
pub fn read_manifest(dir: &Path) -> Setup {
    let path = dir.join("manifest.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("no {}: {e}", path.display()))?;
    RunManifest::from_toml(&text).map_err(|e| format!("{} does not parse: {e}", path.display()))
}

/// Reads a snapshot's `results.json` and recomputes its aggregates from
/// its cells (with the profile's CV threshold from `manifest.toml`), so
/// that a snapshot written by an older rpclab is rendered with today's
/// aggregate rules. A results file without cells keeps its aggregates.
pub fn read_snapshot(dir: &Path) -> Result<Results> {
    let mut results = read_results(dir)?;
    if !results.cells.is_empty() {
        let cv_threshold = read_manifest(dir).map_or(DEFAULT_CV_THRESHOLD, |m| m.cv_threshold());
        results.aggregates = aggregate(&results.cells, cv_threshold);
    }
    Ok(results)
}

/// Reads `results.json` of a snapshot, as written.
pub fn read_results(dir: &Path) -> Result<Results> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} does not parse", path.display()))
}

/// A snapshot's name, its folder's (`<UTC time>-<host>-<sha>`), also for
/// a relative path such as `.`.
pub fn name_of(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_snapshot_manifest_reads() {
        let m = read_manifest(&crate::fixture::committed("20261129T235428Z-vm-c20a70e")).unwrap();
        assert_eq!(m.profile, "standard");
        assert_eq!(m.host_line(), "vm (AMD EPYC, 2 cores)");
    }

    #[test]
    fn a_missing_manifest_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let why = read_manifest(dir.path()).unwrap_err();
        assert!(why.contains("manifest.toml"), "{why}");
    }
}
