//! What `lab run` and `lab reproduce` do once the run returns: write the
//! snapshot's rendered files ([`rpclab_report::write_all`]), print its tables,
//! regenerate the snapshot index, say where everything is, judge the
//! thresholds, and give the command that continues a run an engine that
//! did not come back stopped ([`resumable`]).

use crate::engine::outage::EngineGone;
use crate::engine::run::RunOutcome;
use anyhow::Result;
use rpclab_model::threshold::{Breached, ThresholdCheck};
use std::borrow::Cow;
use std::path::Path;

/// Exit code of a run stopped by a Docker engine that stopped answering
/// and did not come back within `--engine-wait`: its snapshot is
/// incomplete and `--resume` completes it. 75 is `EX_TEMPFAIL` of
/// `sysexits.h`, a temporary failure that the user is invited to retry.
pub const RESUMABLE_EXIT_CODE: i32 = 75;

/// A run that stopped with a resumable snapshot: one line, ending with the
/// command that continues it (exit code [`RESUMABLE_EXIT_CODE`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Resumable(String);

/// When `run` stopped because an engine did not come back
/// ([`EngineGone`]): the command's error, [`Resumable`], whose one line
/// gives the exact command that continues the snapshot. `args` is the
/// command line that ran it, without the program (`lab run --only ...`).
pub fn resumable(run: &RunOutcome, args: &[String]) -> Option<anyhow::Error> {
    let gone = run.stopped.as_ref()?.downcast_ref::<EngineGone>()?;
    Some(
        Resumable(format!(
            "{gone}; the run stopped with {} kept in {}; continue it with: {}",
            match run.results.cells.len() {
                1 => "1 cell".to_owned(),
                n => format!("{n} cells"),
            },
            run.snapshot.display(),
            resume_command(args, &run.snapshot)
        ))
        .into(),
    )
}

/// `cargo xtask` with `args` (a run's command line, without the program),
/// any `--resume` and `--results-dir` taken out (the two exclude each
/// other) and `--resume <snapshot>` added, the snapshot's path absolute
/// and every word quoted for a POSIX shell where it needs it.
pub fn resume_command(args: &[String], snapshot: &Path) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        match arg {
            "--resume" | "--results-dir" => {
                args.next();
            }
            _ if arg.starts_with("--resume=") || arg.starts_with("--results-dir=") => {}
            _ => kept.push(arg),
        }
    }
    let snapshot = std::path::absolute(snapshot).unwrap_or_else(|_| snapshot.to_owned());
    let snapshot = snapshot.to_string_lossy().into_owned();
    ["cargo", "xtask"]
        .into_iter()
        .chain(kept)
        .chain(["--resume", snapshot.as_str()])
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as a POSIX shell reads it back: as it is when it has nothing the
/// shell would interpret, else in single quotes.
fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@%+".contains(&b));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
    }
}

/// Renders a run's snapshot and regenerates the index of its results folder,
/// `README.md` (an index that cannot be written is a warning). The run's
/// own errors are [`RunOutcome::into_result`]'s.
pub fn publish(run: &RunOutcome) -> Result<()> {
    let name = rpclab_report::snapshot::name_of(&run.snapshot);
    let setup = rpclab_report::snapshot::read_manifest(&run.snapshot);
    rpclab_report::write_all(&run.snapshot, &name, &run.results, &setup)?;
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
    if let Some((phases, resumed)) = setup
        .ok()
        .and_then(|m| Some((m.phases?, !m.resumed_utc.is_empty())))
    {
        // A resumed snapshot's phases are every invocation's.
        let whose = if resumed { " (every invocation)" } else { "" };
        eprintln!("{}{whose}", rpclab_report::phases::line(&phases));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cli::words;

    #[test]
    fn the_resume_command_is_the_run_s_own_with_resume_in_place_of_its_folder() {
        let args = words("lab run --only thrift-java --profile smoke --results-dir /tmp/r --threshold p99<2ms --resume=/old");
        assert_eq!(
            resume_command(&args, Path::new("/tmp/r/20261205T000000Z-vm-abc")),
            "cargo xtask lab run --only thrift-java --profile smoke --threshold 'p99<2ms' --resume /tmp/r/20261205T000000Z-vm-abc"
        );
        // A relative snapshot is made absolute, a quote in a word escaped.
        let line = resume_command(&words("lab reproduce it's"), Path::new("target/x"));
        assert!(
            line.starts_with("cargo xtask lab reproduce 'it'\\''s' --resume /"),
            "{line}"
        );
        assert!(line.ends_with("/target/x"), "{line}");
    }
}
