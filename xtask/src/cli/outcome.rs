//! What `lab run` and `lab reproduce` do once the run returns: write the
//! snapshot's rendered files ([`rpclab_report::write_all`]), print its tables,
//! regenerate the snapshot index, and say where everything is.

use crate::engine::run::RunOutcome;
use anyhow::Result;

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
