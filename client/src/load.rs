//! Load models: how calls are issued over a cell's connections.
//!
//! A [`LoadModel`] is handed a [`Run`] (the open connections, the prepared
//! call and the shared phase clock) and returns the per-worker stats of the
//! measurement window. Every protocol works with every load model: both are
//! generic, and the compiler makes one copy per protocol, so there is no
//! dynamic dispatch on the hot path.
//!
//! The runner owns the clock: it moves the [`Phase`] from warm-up to
//! measurement to done. Workers read the phase with one relaxed atomic load
//! per call; a call is recorded when the phase was `Measure` when it started.

use crate::protocol::{CallError, Connection};
use crate::stats::WorkerStats;
use rpclab_model::contract::Call;
use rpclab_model::spec::{ClosedLoop, Stop};
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Where a run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Warmup = 0,
    Measure = 1,
    Cooldown = 2,
    Done = 3,
}

/// The phase shared by the runner and all workers, plus the bookkeeping the
/// runner needs to know when a call-count window is over.
#[derive(Debug)]
pub struct Clock {
    phase: AtomicU8,
    /// Workers that have finished their share of the measurement window.
    finished: AtomicUsize,
    all_finished: Notify,
    workers: usize,
    /// Measured calls completed so far, per worker (progress display only).
    progress: Box<[PaddedCounter]>,
}

/// A counter alone on its cache line, so workers on different cores never
/// contend when they bump their own progress.
#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCounter(AtomicU64);

impl Clock {
    pub fn new(workers: usize, start: Phase) -> Arc<Clock> {
        Arc::new(Clock {
            phase: AtomicU8::new(start as u8),
            finished: AtomicUsize::new(0),
            all_finished: Notify::new(),
            workers,
            progress: (0..workers).map(|_| PaddedCounter::default()).collect(),
        })
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Warmup,
            1 => Phase::Measure,
            2 => Phase::Cooldown,
            _ => Phase::Done,
        }
    }

    pub fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Called once by each worker when its share of the window is done.
    fn worker_finished(&self) {
        if self.finished.fetch_add(1, Ordering::AcqRel) + 1 == self.workers {
            self.all_finished.notify_one();
        }
    }

    /// Resolves when every worker has finished its share of the window.
    pub async fn wait_all_finished(&self) {
        while self.finished.load(Ordering::Acquire) < self.workers {
            let notified = self.all_finished.notified();
            if self.finished.load(Ordering::Acquire) >= self.workers {
                break;
            }
            notified.await;
        }
    }

    /// Measured calls so far, summed over workers.
    pub fn measured_calls(&self) -> u64 {
        self.progress
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }
}

/// Everything a load model needs to drive a cell.
pub struct Run<C> {
    pub connections: Vec<Arc<C>>,
    pub call: Arc<Call>,
    pub timeout: Duration,
    pub clock: Arc<Clock>,
    /// Keep calling, unrecorded, after a worker's share is done, until the
    /// runner ends the run (the cool-down).
    pub keep_load_until_done: bool,
}

/// A way of issuing calls.
pub trait LoadModel {
    /// Number of concurrent workers (the `clock` must be built for as many).
    fn workers(&self) -> usize;

    /// Whether the window ends by time (the runner ends it) or by calls (the
    /// workers end it).
    fn timed_window(&self) -> Option<Duration>;

    /// Drives calls until the run is done; returns each worker's stats.
    fn drive<C: Connection>(&self, run: Run<C>) -> impl Future<Output = Vec<WorkerStats>> + Send;
}

/// One call, timed, with its failure classified. Verification happens here,
/// once for every protocol and load model.
pub async fn timed_call<C: Connection>(
    conn: &C,
    call: &Call,
    timeout: Duration,
) -> (Duration, Result<(), CallError>) {
    let start = Instant::now();
    let outcome = match tokio::time::timeout(timeout, conn.call(call)).await {
        Err(_) => Err(CallError::Timeout),
        Ok(Err(e)) => Err(e),
        Ok(Ok(reply)) if reply == call.expected => Ok(()),
        Ok(Ok(reply)) => Err(CallError::WrongResponse(describe_mismatch(&reply, call))),
    };
    (start.elapsed(), outcome)
}

fn describe_mismatch(reply: &rpclab_model::contract::Value, call: &Call) -> String {
    let mut got = format!("{reply:?}");
    got.truncate(160);
    format!("{} returned {got}", call.operation)
}

impl LoadModel for ClosedLoop {
    fn workers(&self) -> usize {
        self.workers as usize
    }

    fn timed_window(&self) -> Option<Duration> {
        match self.stop {
            Stop::Seconds(s) => Some(Duration::from_secs_f64(s)),
            _ => None,
        }
    }

    async fn drive<C: Connection>(&self, run: Run<C>) -> Vec<WorkerStats> {
        // A shared budget only for the thread-pool shape (seed 003): one
        // atomic per call, taken only when the window is a total count.
        let budget = match self.stop {
            Stop::TotalCalls(n) => Some(Arc::new(AtomicU64::new(n))),
            _ => None,
        };
        let per_worker = match self.stop {
            Stop::CallsPerWorker(n) => n,
            _ => u64::MAX,
        };
        let handles: Vec<_> = (0..self.workers as usize)
            .map(|w| {
                let conn = Arc::clone(&run.connections[w % run.connections.len()]);
                let call = Arc::clone(&run.call);
                let clock = Arc::clone(&run.clock);
                let budget = budget.clone();
                let (timeout, keep_load) = (run.timeout, run.keep_load_until_done);
                tokio::spawn(async move {
                    let mut stats = WorkerStats::default();
                    let mut measured = 0u64;
                    let mut finished = false;
                    loop {
                        let phase = clock.phase();
                        if phase == Phase::Done {
                            break;
                        }
                        let mut record = phase == Phase::Measure && !finished;
                        if record {
                            let over_quota = measured >= per_worker
                                || budget.as_ref().is_some_and(|b| {
                                    b.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                                        n.checked_sub(1)
                                    })
                                    .is_err()
                                });
                            if over_quota {
                                finished = true;
                                clock.worker_finished();
                                if !keep_load {
                                    break;
                                }
                                record = false;
                            }
                        }
                        let (latency, outcome) = timed_call(&*conn, &call, timeout).await;
                        if record {
                            measured += 1;
                            clock.progress[w].0.store(measured, Ordering::Relaxed);
                            match outcome {
                                Ok(()) => stats.record_ok(latency),
                                Err(e) => stats.record_failure(&e),
                            }
                        }
                    }
                    if !finished {
                        clock.worker_finished();
                    }
                    stats
                })
            })
            .collect();
        let mut all = Vec::with_capacity(handles.len());
        for h in handles {
            match h.await {
                Ok(stats) => all.push(stats),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(_) => {}
            }
        }
        all
    }
}
