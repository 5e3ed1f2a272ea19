//! A run's scope: its id, the engines it claimed, and the promise that no
//! container it started outlives it.
//!
//! `lab run`, `bench client` and `bench peers` open one at their start and
//! pass it along; nothing about the run lives in a global. Every container
//! is labelled with the scope's id ([`RunScope::id`]), so three paths find
//! them again:
//!
//! * [`RunScope::close`], called by the run once it is over, whether it
//!   finished, failed or was stopped by Ctrl-C (the run races its work
//!   against the signal and closes the scope after either);
//! * the scope's `Drop` while the process panics: a panic unwinds past the
//!   run's own clean-up, so the scope removes its containers on a runtime
//!   of its own, on a thread of its own (the panicking runtime may be this
//!   thread's);
//! * [`RunScope::claim`] by the next run, for what neither could remove (a
//!   `kill -9`, a closed terminal): containers whose owner is gone are
//!   removed, a live owner's refuse the new run ([`crate::basics::owner`]).

use crate::basics::owner;
use crate::basics::run_id::RunId;

use crate::definitions::hosts::Endpoint;
use crate::engine::containers::{Containers, LabContainer};
use crate::engine::docker::Engine;
use crate::engine::run_engine::RunEngine;
use anyhow::Result;
use std::sync::atomic::{AtomicBool, Ordering};

/// One run's id and engines.
pub struct RunScope {
    id: RunId,
    /// Every engine the run may start containers on, each once.
    engines: Vec<Engine>,
    /// The other engines it claimed (a cluster, whose run's namespace goes
    /// with its Pods).
    others: Vec<RunEngine>,
    /// The run removed its containers itself.
    closed: AtomicBool,
}

impl RunScope {
    /// The scope of the run `id` (the label its containers carry), with no
    /// engine yet.
    pub fn open(id: RunId) -> RunScope {
        RunScope {
            id,
            engines: Vec::new(),
            others: Vec::new(),
            closed: AtomicBool::new(false),
        }
    }

    /// The run's id, as its containers' run label and names carry it.
    pub fn id(&self) -> &RunId {
        &self.id
    }

    /// Makes `engine` this run's: removes what runs whose orchestrator is
    /// gone left behind (one line each), refuses to go on while another
    /// run is alive or cannot be judged (unless both are checks that share,
    /// [`owner::Sharing`]), and then [`RunScope::watch`]es it.
    pub async fn claim(&mut self, engine: &Engine) -> Result<()> {
        let _removed = remove_stale(engine, self.id.sharing()).await?;
        self.watch(engine);
        Ok(())
    }

    /// [`RunScope::claim`] of a run's engine: Docker's as above, another
    /// (a cluster) through [`Containers`], its run's objects removed on
    /// [`RunScope::close`].
    pub async fn claim_run_engine(&mut self, engine: &RunEngine) -> Result<()> {
        match engine.docker() {
            Some(docker) => self.claim(docker).await,
            None => {
                // A dead run's Pods are gone; its namespace goes too.
                for run in remove_stale(engine, self.id.sharing()).await? {
                    engine.remove_lab_containers(Some(&run)).await?;
                }
                self.others.push(engine.clone());
                Ok(())
            }
        }
    }

    /// Adds `engine` to those the run's containers are removed from.
    pub fn watch(&mut self, engine: &Engine) {
        if !self.engines.iter().any(|e| e.same_engine(engine)) {
            self.engines.push(engine.clone());
        }
    }

    /// Removes every container of the run on every engine it watches. An
    /// error names the (last) engine where removing failed; the others are
    /// cleaned all the same.
    pub async fn close(&self) -> Result<()> {
        let mut removed = Ok(());
        for engine in &self.engines {
            if let Err(e) = Containers::remove_lab_containers(engine, Some(&self.id)).await {
                removed = Err(e.context(format!("on {}", engine.endpoint)));
            }
        }
        for engine in &self.others {
            if let Err(e) = engine.remove_lab_containers(Some(&self.id)).await {
                removed = Err(e.context("on the cluster"));
            }
        }
        self.closed.store(true, Ordering::SeqCst);
        removed
    }
}

/// Removes from `engine` what runs whose orchestrator is gone left behind
/// (one line each); refuses to go on while another run is alive or cannot
/// be judged, unless both are checks that share (`sharing`). The ids of the
/// runs it removed.
pub async fn remove_stale(
    engine: &impl Containers,
    sharing: owner::Sharing,
) -> Result<Vec<String>> {
    let containers = engine.lab_containers(None).await?;
    let stale = owner::stale_runs(containers.iter().map(LabContainer::seen), sharing)?;
    let mut removed = Vec::new();
    for run in stale {
        eprintln!("{}", run.message());
        for id in &run.ids {
            engine.remove(id).await?;
        }
        removed.push(run.run);
    }
    Ok(removed)
}

impl Drop for RunScope {
    /// After a panic that skipped [`RunScope::close`]: best-effort removal
    /// of the run's containers, on fresh connections (the old ones belong
    /// to the runtime that is unwinding).
    fn drop(&mut self) {
        if self.closed.load(Ordering::SeqCst) || !std::thread::panicking() {
            return;
        }
        let id = self.id.to_string();
        let endpoints: Vec<Endpoint> = self.engines.iter().map(|e| e.endpoint.clone()).collect();
        let cluster = !self.others.is_empty();
        let _ =
            std::thread::spawn(move || remove_on_fresh_runtime(&id, &endpoints, cluster)).join();
    }
}

/// Removes the containers of run `id` on each of `endpoints` (and with
/// `cluster`, its namespace on the cluster of the kubeconfig), connecting
/// anew on a runtime of this thread's own; failures are ignored.
fn remove_on_fresh_runtime(id: &str, endpoints: &[Endpoint], cluster: bool) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        for endpoint in endpoints {
            if let Ok(engine) = Engine::connect_to(endpoint, None).await {
                let _ = engine.remove_lab_containers(Some(id)).await;
            }
        }
        #[cfg(feature = "kubernetes")]
        if cluster {
            if let Ok(cluster) = crate::engine::kubernetes::Cluster::connect().await {
                let _ = cluster.remove_lab_containers(Some(id)).await;
            }
        }
        let _ = cluster;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_is_watched_once_whatever_its_spelling() {
        let mut scope = RunScope::open(RunId::new(
            "20260101T000000Z-1".into(),
            owner::Sharing::Alone,
        ));
        let a = Engine::unconnected("a", Endpoint::Default);
        scope.watch(&a);
        scope.watch(&Engine::unconnected(
            "a",
            Endpoint::Unix("/run/a.sock".into()),
        ));
        scope.watch(&Engine::unconnected("b", Endpoint::Default));
        assert_eq!(scope.engines.len(), 2);
        assert_eq!(&**scope.id(), "20260101T000000Z-1");
        // Not panicking: dropping the scope asks no engine anything.
        drop(scope);
    }
}
