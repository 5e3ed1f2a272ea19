//! Result snapshots: `results/<UTC time>-<host>-<git sha>/`.
//!
//! A snapshot is created when a run starts and rewritten after every cell,
//! so a run that fails or is interrupted still leaves every cell it measured
//! (with `complete = false` and the error). It holds:
//!
//! * `manifest.toml`: how the numbers were made (lab definition as run,
//!   host, images, versions, JVM flags, CPU pinning, each container's
//!   confinement, rpclab's git state);
//! * `results.json`: one cell per server × scenario × concurrency × repetition;
//! * `cells/<server>-<variant>/<scenario>-c<N>-r<R>/`: each cell's spec and
//!   the client's report.
//!
//! The store is data only: `summary.md`, `report.html` and `charts/` are
//! the report's, written from these results by `report::write_all`.

use crate::basics::host::HostInfo;
use crate::definitions::lab::LabDef;
use anyhow::{Context, Result};
use rpclab_model::result::{Cell, Results, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Everything `manifest.toml` records.
#[derive(Serialize)]
pub struct RunManifest {
    /// Label value on every container of the run (`io.rpclab.run`).
    pub run_id: String,
    pub rpclab_version: String,
    pub git_revision: String,
    pub git_dirty: bool,
    /// The lab inputs (tracked or not) that differ from `git_revision`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_dirty_files: Vec<String>,
    pub started_utc: String,
    /// When the run was resumed (`--resume`), each time, after it stopped
    /// before its end; absent in a run never resumed, and in older snapshots.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resumed_utc: Vec<String>,
    pub profile: String,
    /// The cargo profile the load client was compiled with (`quick` only
    /// for checks whose numbers are not read).
    pub client_build: crate::basics::host::ClientBuild,
    pub only: Vec<String>,
    pub host: HostInfo,
    pub cpus: CpuPinning,
    /// A fixed CPU and loopback measurement of the server's and the
    /// client's CPU sets, taken at the start of the run (`lab compare`
    /// uses it to tell a slower host from slower code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<rpclab_model::result::Calibration>,
    /// Every machine (engine) of the run, with the roles it ran, its CPU,
    /// kernel, Docker version, clock offset and calibration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::definitions::hosts::HostRecord>,
    /// Image tag → image id (on the server's engine).
    pub images: BTreeMap<String, String>,
    pub servers: Vec<ServerRecord>,
    /// How the lab's own containers were confined: `registry`, `client`.
    pub lab_confinement: BTreeMap<String, crate::basics::confine::Policy>,
    /// Seed of the rounds' order, in a run measured in interleaved rounds
    /// (every round's order is in `results.json`, `rounds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds_seed: Option<u64>,
    /// What the host did beside the lab over the run's windows (written
    /// when the run ends; absent where no window could be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_load: Option<HostLoadSummary>,
    pub lab: LabDef,
}

/// What the host did beside the lab over the run's windows
/// (`host_load::summarise`), for the manifest: medians and maxima over
/// every window that has a [`rpclab_model::result::HostLoad`], in cores.
/// Flat, so that it is one TOML table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostLoadSummary {
    /// Windows with a host load, and how many of them were host-busy.
    pub windows: usize,
    pub busy_windows: usize,
    pub other_server_cores_median: f64,
    pub other_server_cores_max: f64,
    pub other_client_cores_median: f64,
    pub other_client_cores_max: f64,
    pub steal_cores_median: f64,
    pub steal_cores_max: f64,
    /// The thresholds the windows were judged by.
    pub threshold_cores: f64,
    pub steal_threshold_cores: f64,
}

#[derive(Clone, Serialize)]
pub struct CpuPinning {
    pub server: String,
    pub registry: String,
    pub client: String,
    pub note: String,
}

#[derive(Serialize)]
pub struct ServerRecord {
    pub name: String,
    pub framework: String,
    pub protocol: String,
    pub variant: String,
    pub version: String,
    pub jvm_flags: Vec<String>,
    /// The JVM the variant ran on (`17`), for a Java server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jvm: Option<String>,
    pub image: String,
    /// Why the variant was not run, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The port it listened on, when not its manifest's (an interleaved
    /// run moves the second variant of a server folder elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Scenarios not run for this variant because it cannot carry their
    /// operation: `<scenario>: <reason>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_scenarios: Vec<String>,
    /// How the server's container is confined (user, capabilities, limits,
    /// read-only root, tmpfs), for the variants that run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confinement: Option<crate::basics::confine::Policy>,
}

pub struct Snapshot {
    pub dir: PathBuf,
    pub results: Results,
    /// Coefficient of variation above which an aggregate is flagged noisy.
    pub cv_threshold: f64,
}

impl Snapshot {
    pub fn create(
        results_root: &Path,
        started: &str,
        host: &str,
        sha: &str,
        cv_threshold: f64,
    ) -> Result<Snapshot> {
        let dir = results_root.join(format!("{started}-{host}-{sha}"));
        std::fs::create_dir_all(dir.join("cells"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Snapshot {
            dir,
            results: Results {
                schema_version: SCHEMA_VERSION,
                complete: false,
                errors: Vec::new(),
                cells: Vec::new(),
                aggregates: Vec::new(),
                reproduction: None,
                rounds: None,
            },
            cv_threshold,
        })
    }

    /// Continues the incomplete snapshot `dir`, whose results are
    /// `results`: its cells stay; the errors of the attempt that stopped
    /// are dropped, since the resumed run measures again what they cost.
    pub fn reopen(dir: PathBuf, results: Results, cv_threshold: f64) -> Snapshot {
        Snapshot {
            dir,
            results: Results {
                complete: false,
                errors: Vec::new(),
                ..results
            },
            cv_threshold,
        }
    }

    pub fn cell_dir(
        &self,
        server: &str,
        variant: &str,
        scenario: &str,
        concurrency: u32,
        rep: u32,
    ) -> PathBuf {
        self.dir
            .join("cells")
            .join(format!("{server}-{variant}"))
            .join(format!("{scenario}-c{concurrency}-r{rep}"))
    }

    pub fn write_manifest(&self, manifest: &RunManifest) -> Result<()> {
        let text = toml::to_string_pretty(manifest).context("cannot render manifest.toml")?;
        let header =
            "# How this snapshot was made. Written by `cargo xtask lab run`; do not edit.\n";
        std::fs::write(self.dir.join("manifest.toml"), format!("{header}{text}"))?;
        Ok(())
    }

    pub fn push(&mut self, cell: Cell) -> Result<()> {
        self.results.cells.push(cell);
        self.results.aggregates =
            crate::store::aggregate::aggregate(&self.results.cells, self.cv_threshold);
        self.write_results()
    }

    pub fn error(&mut self, message: String) -> Result<()> {
        self.results.errors.push(message);
        self.write_results()
    }

    pub fn write_results(&self) -> Result<()> {
        write_results(&self.dir, &self.results)
    }

    /// Marks the results complete (or not) and writes them a last time.
    /// Rendering them is the report's (`report::write_all`).
    pub fn finish(&mut self, complete: bool) -> Result<()> {
        self.results.complete = complete;
        self.write_results()
    }
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

/// Writes a snapshot's `results.json` (through a temporary file, so a
/// reader never sees half of it).
pub fn write_results(dir: &Path, results: &Results) -> Result<()> {
    let path = dir.join("results.json");
    let tmp = dir.join(".results.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(results)?)?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Reads a snapshot's `results.json` and recomputes its aggregates from
/// its cells (with the profile's CV threshold from `manifest.toml`), so
/// that a snapshot written by an older rpclab is rendered with today's
/// aggregate rules. A results file without cells keeps its aggregates.
pub fn read_snapshot(dir: &Path) -> Result<Results> {
    let mut results = read_results(dir)?;
    if !results.cells.is_empty() {
        let manifest: toml::Value = std::fs::read_to_string(dir.join("manifest.toml"))
            .ok()
            .and_then(|t| toml::from_str(&t).ok())
            .unwrap_or(toml::Value::Table(Default::default()));
        results.aggregates = crate::store::aggregate::aggregate(
            &results.cells,
            crate::store::aggregate::cv_threshold_of(&manifest),
        );
    }
    Ok(results)
}

/// Reads `results.json` of a snapshot.
pub fn read_results(dir: &Path) -> Result<Results> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} does not parse", path.display()))
}
