//! What `lab run` and `lab reproduce` do once the run returns: write the
//! snapshot's rendered files ([`rpclab_report::write_all`]), print its tables,
//! regenerate the snapshot index, say where everything is, and judge the
//! thresholds.

use crate::engine::run::RunOutcome;
use anyhow::Result;
use rpclab_model::threshold::{Breached, ThresholdCheck};

/// Renders a run's snapshot and regenerates the index of its results folder,
/// `README.md` (an index that cannot be written is a warning). The run's
/// own errors are [`RunOutcome::into_result`]'s.
pub fn publish(run: &RunOutcome) -> Result<()> {
    let name = rpclab_report::snapshot::name_of(&run.snapshot);
    rpclab_report::write_all(
        &run.snapshot,
        &name,
        &run.results,
        &rpclab_report::snapshot::read_manifest(&run.snapshot),
    )?;
    println!(
        "{}",
        rpclab_report::tables::render(&run.results, false, None)
    );
    // The snapshot index is generated, never hand-edited.
    if let Err(e) = rpclab_report::index::write(&run.results_dir, false) {
        eprintln!("warning: the snapshot index was not updated: {e:#}");
    }
    if run.cleanup.is_some() {
        return Ok(());
    }
    let took = run.took.as_secs();
    eprintln!(
        "snapshot written to {} ({} cells{}); the run took {} min {} s",
        run.snapshot.display(),
        run.results.cells.len(),
        if run.results.complete {
            ""
        } else {
            ", partial"
        },
        took / 60,
        took % 60
    );
    if run.scratch {
        eprintln!(
            "{} is a scratch folder (profile `{}`): nothing under {}/ changed; \
             pass --results-dir {} to keep a snapshot",
            run.results_dir.display(),
            run.profile,
            crate::definitions::lab::RESULTS_DIR,
            crate::definitions::lab::RESULTS_DIR
        );
    }
    Ok(())
}

/// The breaches of a run's thresholds, one line each on standard error;
/// any breach is the command's error ([`Breached`]: exit code 99).
pub fn thresholds(check: Option<&ThresholdCheck>) -> Result<()> {
    let Some(check) = check else {
        return Ok(());
    };
    for breach in &check.breaches {
        eprintln!("{breach}");
    }
    if check.breaches.is_empty() {
        eprintln!("every cell held the thresholds {}", check.asked.join(" "));
        return Ok(());
    }
    Err(Breached(check.breaches.len()).into())
}
