//! An engine that stops answering in the middle of a run (its `dockerd`
//! restarted, its machine rebooted): what the run says, how long it waits,
//! and what it does then. The one place that knows what "the engine is
//! gone" means.
//!
//! When the work of a server variant fails (a cell, its server's start,
//! readiness or priming, removing its containers), the run asks
//! [`Outage::after_failure`] before it blames the server:
//!
//! * every engine of the run answers: the failure is the server's, and is
//!   recorded as before;
//! * one does not: the run says so in one line naming it (`the Docker
//!   engine at unix:///var/run/docker.sock stopped answering`), however
//!   many servers are left, and asks it again every second for at most
//!   `--engine-wait` ([`DEFAULT_WAIT`]);
//! * it answers again in time: every container of the run is removed on
//!   every engine (a restarted engine has stopped them all, and with no
//!   restart policy they stay stopped), and the caller starts the
//!   interrupted work over through its normal path: the variant's server
//!   started afresh, its readiness checked and it primed again, then its
//!   cells not yet in `results.json`, from the interrupted one on. Cells
//!   already written are kept;
//! * it does not: [`EngineGone`] stops the run. Its snapshot holds every
//!   finished cell, its manifest says why it stopped (`stopped`), `--resume`
//!   completes it, and the containers left on the engine are removed by the
//!   next run's claim ([`crate::engine::scope`]), their orchestrator being
//!   gone.
//!
//! "Does not answer" is a transport error on a fresh connection (refused,
//! no socket, no answer in time), never an API error such as 404 or 409:
//! [`crate::engine::docker::Engine::answers`]. The failed call's own error
//! is not trusted to tell: a stopping `dockerd` closes its listener first,
//! then stops every container while the connections already open still
//! answer, so the failure the run sees first may well be "the load client
//! exited with code 143" or "server exited", an answer of the engine.

use crate::basics::run_id::RunId;
use crate::engine::containers::Containers;
use crate::engine::docker::Engine;
use crate::engine::engines::Engines;
use anyhow::{Context, Result};
use std::time::{Duration, Instant};

/// How long a run waits for an engine that stopped answering, unless
/// `--engine-wait` says otherwise: long enough for a `dockerd` restart
/// (seconds) or a package upgrade that restarts it, short enough that an
/// engine that is gone for good stops the run within a minute.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// How long one ping may take.
const PING_WITHIN: Duration = Duration::from_secs(10);

/// Time between two pings of an engine being waited for.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// The run stopped because an engine stopped answering and did not answer
/// again within the wait: the snapshot is incomplete and resumable.
#[derive(Debug, thiserror::Error)]
#[error(
    "the Docker engine at {endpoint} stopped answering and did not answer again within {}",
    shown(*.waited)
)]
pub struct EngineGone {
    /// The engine, as the run names it (`unix:///var/run/docker.sock`).
    pub endpoint: String,
    /// How long the run waited for it.
    pub waited: Duration,
}

/// What a failure of the run's work turned out to be.
#[derive(Debug, PartialEq)]
pub enum AfterFailure {
    /// Every engine answers: the failure is the work's own.
    EnginesAnswer,
    /// An engine had stopped answering and answers again; the run's
    /// containers are removed, so the interrupted work starts over.
    EngineBack,
}

/// The engines of a run, watched for one that stops answering.
pub struct Outage<'a> {
    engines: Vec<&'a Engine>,
    run_id: &'a RunId,
    wait: Duration,
}

impl<'a> Outage<'a> {
    /// Watches every engine of `engines` for the run `run_id`, waiting up
    /// to `wait` for one that stops answering.
    pub fn new(engines: &'a Engines, run_id: &'a RunId, wait: Duration) -> Outage<'a> {
        Outage {
            engines: engines.distinct().into_iter().map(|(e, _)| e).collect(),
            run_id,
            wait,
        }
    }

    /// Whether every engine of the run answers now (no wait): where a
    /// failure would be recorded against one server and the run would go
    /// on, one that does not is left to the caller's
    /// [`Outage::after_failure`] instead.
    pub async fn answering(&self) -> bool {
        for engine in &self.engines {
            if !Containers::answers(*engine, PING_WITHIN).await {
                return false;
            }
        }
        true
    }

    /// After the run's work failed: whether an engine had gone, and if so,
    /// whether it came back (see the module's documentation). Err: an
    /// engine did not come back in time ([`EngineGone`]), or the run's
    /// containers could not be removed once it did.
    pub async fn after_failure(&self) -> Result<AfterFailure> {
        let mut back = false;
        for engine in &self.engines {
            if Containers::answers(*engine, PING_WITHIN).await {
                continue;
            }
            crate::say!(
                "the Docker engine at {} stopped answering; waiting up to {} for it (--engine-wait)",
                engine.endpoint,
                shown(self.wait)
            );
            let waited = self.wait_for(engine).await?;
            crate::say!(
                "the Docker engine at {} answers again after {}; the interrupted server starts again, from its interrupted cell",
                engine.endpoint,
                shown(waited)
            );
            back = true;
        }
        if !back {
            return Ok(AfterFailure::EnginesAnswer);
        }
        for engine in &self.engines {
            Containers::remove_lab_containers(*engine, Some(self.run_id))
                .await
                .with_context(|| {
                    format!(
                        "cannot remove the interrupted run's containers on {}",
                        engine.endpoint
                    )
                })?;
        }
        Ok(AfterFailure::EngineBack)
    }

    /// Pings `engine` until it answers (how long that took) or the wait
    /// is over ([`EngineGone`]).
    async fn wait_for(&self, engine: &Engine) -> Result<Duration> {
        let started = Instant::now();
        let deadline = started + self.wait;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(EngineGone {
                    endpoint: engine.endpoint.to_string(),
                    waited: self.wait,
                }
                .into());
            }
            tokio::time::sleep(POLL_EVERY.min(deadline - now)).await;
            let left = deadline.saturating_duration_since(Instant::now());
            if Containers::answers(engine, PING_WITHIN.min(left.max(POLL_EVERY))).await {
                return Ok(started.elapsed());
            }
        }
    }
}

/// A wait as people write it: `45 s`, `2 min`, `2 min 30 s`.
fn shown(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::hosts::{Endpoint, Roles};

    #[test]
    fn a_wait_reads_as_people_write_it() {
        assert_eq!(shown(Duration::from_secs(45)), "45 s");
        assert_eq!(shown(Duration::from_secs(60)), "1 min");
        assert_eq!(shown(Duration::from_secs(150)), "2 min 30 s");
        assert_eq!(shown(Duration::from_millis(400)), "0 s");
    }

    /// An engine that does not answer (nothing listens where it points)
    /// and does not come back within the wait stops the run with
    /// [`EngineGone`], naming it.
    #[tokio::test]
    async fn an_engine_that_does_not_come_back_is_engine_gone() {
        let nowhere = Endpoint::Unix("/nonexistent/rpclab-outage.sock".into());
        let engine = Engine::unconnected("gone", nowhere);
        assert!(!engine.answers(Duration::from_secs(2)).await);
        let engines = Engines {
            server: engine.clone(),
            registry: engine.clone(),
            client: engine,
            roles: Roles::single(),
        };
        let run = RunId::new(
            "20260101T000000Z-1".into(),
            crate::basics::owner::Sharing::Alone,
        );
        let outage = Outage::new(&engines, &run, Duration::from_millis(1));
        let e = outage.after_failure().await.unwrap_err();
        let gone = e.downcast_ref::<EngineGone>().expect("EngineGone");
        assert_eq!(
            e.to_string(),
            "the Docker engine at unix:///nonexistent/rpclab-outage.sock stopped answering and did not answer again within 0 s"
        );
        assert_eq!(gone.waited, Duration::from_millis(1));
    }
}
