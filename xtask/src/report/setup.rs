//! How a snapshot was made, as its report shows it: host, CPU split,
//! calibration, profile, rpclab's and every server's versions. Read from
//! the snapshot's `manifest.toml` (written by the run, see
//! [`crate::store::snapshot::RunManifest`]) leniently: every field is optional, so
//! a manifest from an older rpclab, or none at all, still renders.
//!
//! Data only; [`crate::report::html`] renders it and
//! [`crate::report::index`] takes its row of `results/README.md` from it.

use rpclab_model::result::Calibration;
use serde::Deserialize;
use std::path::Path;

/// What `manifest.toml` says about the run, as far as it says it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Setup {
    pub started_utc: Option<String>,
    pub rpclab_version: Option<String>,
    pub git_revision: Option<String>,
    pub git_dirty: bool,
    pub profile: Option<String>,
    /// The cargo profile the load client was built with.
    pub client_build: Option<String>,
    pub host: Host,
    pub cpus: Cpus,
    pub calibration: Option<Calibration>,
    /// What the host did beside the lab over the run's windows.
    pub host_load: Option<crate::store::snapshot::HostLoadSummary>,
    /// Seed of an interleaved run's order.
    pub rounds_seed: Option<u64>,
    pub servers: Vec<ServerVersion>,
    /// The lab definition as run (its profiles are read from it).
    lab: Option<toml::Value>,
    /// Why the manifest could not be read, when it could not.
    #[serde(skip)]
    pub unreadable: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Host {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    pub cores: Option<u32>,
    pub kernel: Option<String>,
    pub memory_gib: Option<f64>,
    pub docker_version: Option<String>,
}

/// Which CPUs each side ran on.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Cpus {
    pub server: Option<String>,
    pub registry: Option<String>,
    pub client: Option<String>,
    pub note: Option<String>,
}

/// One server variant of the lab, run or not.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ServerVersion {
    pub name: String,
    pub framework: String,
    pub protocol: String,
    pub variant: String,
    pub version: String,
    pub jvm: Option<String>,
    pub jvm_flags: Vec<String>,
    pub not_run: Option<String>,
}

impl Setup {
    /// The setup of the snapshot in `dir` (its `manifest.toml`); an empty
    /// one, saying why, when there is no readable manifest.
    pub fn read(dir: &Path) -> Setup {
        let path = dir.join("manifest.toml");
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| format!("no {}: {e}", path.display()))
            .and_then(|text| {
                toml::from_str::<Setup>(&text)
                    .map_err(|e| format!("{} does not parse: {e}", path.display()))
            });
        parsed.unwrap_or_else(|why| Setup {
            unreadable: Some(why),
            ..Setup::default()
        })
    }

    /// The settings of the profile the run used (`warmup_s = 5.0`, …), as
    /// the lab definition wrote them.
    pub fn profile_settings(&self) -> Vec<(String, String)> {
        let Some(profile) = &self.profile else {
            return Vec::new();
        };
        self.lab
            .as_ref()
            .and_then(|lab| lab.get("profiles")?.get(profile)?.as_table())
            .map(|t| {
                t.iter()
                    .map(|(k, v)| {
                        let v = match v {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), v)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The host in one line: `vm (AMD EPYC, 2 cores)`.
    pub fn host_line(&self) -> String {
        let h = &self.host;
        format!(
            "{} ({}, {} cores)",
            h.hostname.as_deref().unwrap_or("?"),
            h.cpu_model.as_deref().unwrap_or("?"),
            h.cores.map_or("?".to_owned(), |c| c.to_string())
        )
    }

    /// The git revision, `(dirty)` after it when the tree was.
    pub fn revision_line(&self) -> String {
        format!(
            "{}{}",
            self.git_revision.as_deref().unwrap_or("?"),
            if self.git_dirty { " (dirty)" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_snapshot_manifest_reads() {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/20261129T235428Z-vm-c20a70e");
        let s = Setup::read(&dir);
        assert!(s.unreadable.is_none(), "{:?}", s.unreadable);
        assert_eq!(s.profile.as_deref(), Some("standard"));
        assert_eq!(s.host_line(), "vm (AMD EPYC, 2 cores)");
        assert_eq!(s.cpus.server.as_deref(), Some("0"));
        assert!(s
            .servers
            .iter()
            .any(|v| v.name == "grpc-java" && v.not_run.is_none()));
        let settings = s.profile_settings();
        assert!(settings.iter().any(|(k, v)| k == "repetitions" && v == "3"));
    }

    #[test]
    fn a_missing_manifest_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = Setup::read(dir.path());
        assert!(s.unreadable.as_ref().unwrap().contains("manifest.toml"));
        assert_eq!(s.host_line(), "? (?, ? cores)");
        assert!(s.profile_settings().is_empty());
    }
}
