//! One bench run from its id to its clean-up, the same for `bench client`
//! and `bench peers`: both build the load client and its image, measure
//! under Ctrl-C, remove every container they started whatever happened,
//! show what they measured even after a failure, and only then say why
//! they failed.

use crate::basics::host::{self, StaticBinaries};
use crate::basics::owner::Sharing;
use crate::basics::run_id::RunId;
use crate::engine::docker::Engine;
use crate::engine::images::Builder;
use crate::engine::scope::RunScope;
use anyhow::{anyhow, Context, Result};
use std::future::Future;
use std::path::{Path, PathBuf};

/// A bench run: its id (the label and name part of its containers), the
/// scope that removes them, and the folder its files go to.
pub(super) struct Session {
    pub(super) run_id: RunId,
    pub(super) dir: PathBuf,
    /// The folder was asked for (`--out`) and stays; else it is removed
    /// when the run closes.
    kept: bool,
    scope: RunScope,
}

impl Session {
    /// Opens the run `{name}-{UTC time}-{pid}` on `engine`, its files in
    /// `out` or, without it, in a temporary folder.
    pub(super) fn open(name: &str, engine: &Engine, out: Option<&Path>) -> Result<Session> {
        let stamp = time::OffsetDateTime::now_utc()
            .format(time::macros::format_description!(
                "[year][month][day]T[hour][minute][second]Z"
            ))
            .expect("static format");
        // A bench measures: it shares its engine with no other run.
        let run_id = RunId::new(
            format!("{name}-{stamp}-{}", std::process::id()),
            Sharing::Alone,
        );
        // Removes the bench's containers should the process panic.
        let mut scope = RunScope::open(run_id.clone());
        scope.watch(engine);
        let (dir, kept) = match out {
            Some(dir) => (dir.to_owned(), true),
            None => (std::env::temp_dir().join(format!("rpclab-{run_id}")), false),
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Session {
            run_id,
            dir,
            kept,
            scope,
        })
    }

    /// Runs `work` until it ends or Ctrl-C stops it, then removes every
    /// container of the run. The work's outcome comes back with the
    /// clean-up's, so that the caller can show what was measured before
    /// [`Session::close`] reports either.
    pub(super) async fn run<T>(
        &self,
        work: impl Future<Output = Result<T>>,
    ) -> (Result<T>, Result<()>) {
        let outcome = tokio::select! {
            r = work => r,
            _ = tokio::signal::ctrl_c() => Err(anyhow!("interrupted (Ctrl-C)")),
        };
        (outcome, self.scope.close().await)
    }

    /// Removes a temporary folder (or names the kept one) and returns the
    /// run's outcome: a failed clean-up first, then the work's.
    pub(super) fn close(self, outcome: Result<()>, removed: Result<()>) -> Result<()> {
        if self.kept {
            eprintln!("cells written to {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
        removed.context("cleaning up the bench's containers failed")?;
        outcome
    }
}

/// The images every bench starts from (base, runtime and the client's)
/// and the release build of the static binaries they hold: the load
/// client, the echo server and the raw-socket floor beside them.
pub(super) async fn build_client(builder: &mut Builder<'_>, root: &Path) -> Result<StaticBinaries> {
    builder.base().await?;
    builder.runtime().await?;
    let binaries = host::build_static_client(root, rpclab_model::manifest::ClientBuild::Release)?;
    builder.client(&binaries).await?;
    Ok(binaries)
}
