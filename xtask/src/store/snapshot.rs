//! Result snapshots: `results/<UTC time>-<host>-<git sha>/`.
//!
//! A snapshot is created when a run starts and rewritten after every cell,
//! so a run that fails or is interrupted still leaves every cell it measured
//! (with `complete = false` and the error). It holds:
//!
//! * `manifest.toml`: how the numbers were made (lab definition as run,
//!   host, images, versions, JVM flags, CPU pinning, each container's
//!   confinement, rpclab's git state), the model's
//!   [`rpclab_model::manifest::RunManifest`];
//! * `results.json`: one cell per server × scenario × concurrency × repetition;
//! * `cells/<server>-<variant>/<scenario>-c<N>-r<R>/`: each cell's spec and
//!   the client's report.
//!
//! The store writes, and is data only: reading a snapshot back, and
//! `summary.md`, `report.html` and `charts/`, are the report's
//! (`rpclab_report::snapshot`, `rpclab_report::write_all`).

use anyhow::{Context, Result};
use rpclab_model::manifest::RunManifest;
use rpclab_model::result::{Cell, Results, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// A run's results folder as the run fills it.
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
            results: Results::empty(),
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

    /// Writes `manifest.toml` through a temporary file, as
    /// [`write_results`]: a reader (a watcher, `--resume` after a kill)
    /// never sees half of it.
    pub fn write_manifest(&self, manifest: &RunManifest) -> Result<()> {
        let text = manifest.to_toml().context("cannot render manifest.toml")?;
        let path = self.dir.join("manifest.toml");
        let tmp = self.dir.join(".manifest.toml.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }

    pub fn push(&mut self, cell: Cell) -> Result<()> {
        self.results.cells.push(cell);
        self.results.aggregates =
            rpclab_model::aggregate::aggregate(&self.results.cells, self.cv_threshold);
        self.write_results()
    }

    pub fn error(&mut self, error: rpclab_model::run_error::RunError) -> Result<()> {
        self.results.errors.push(error);
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

/// Writes a snapshot's `results.json` (through a temporary file, so a
/// reader never sees half of it).
pub fn write_results(dir: &Path, results: &Results) -> Result<()> {
    let path = dir.join("results.json");
    let tmp = dir.join(".results.json.tmp");
    // Written in this version's form whatever the form it was read in (an
    // older snapshot re-decided or resumed), so it says this version.
    let text = if results.schema_version == SCHEMA_VERSION {
        serde_json::to_vec_pretty(results)?
    } else {
        let mut now = results.clone();
        now.schema_version = SCHEMA_VERSION;
        serde_json::to_vec_pretty(&now)?
    };
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
