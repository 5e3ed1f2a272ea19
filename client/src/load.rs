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
//! when a call completes.
//!
//! **A call belongs to the window in which it completed.** Every figure of a
//! cell (calls, throughput, the latency histogram, bytes and CPU per call)
//! is computed from that one set of calls (see [`crate::window`]). A call
//! issued during warm-up that completes after the window opened counts; a
//! call still in flight when the window closes does not. With a call-count
//! window, a call holds one of the window's places from when it is issued
//! (or, if issued before the window, from when it completes), and the window
//! closes when the last of those calls completes.

use crate::stats::{IntervalSink, WorkerStats};
use crate::wrong_replies::WrongReplies;
use rpclab_model::contract::Call;
use rpclab_model::spec::{ClosedLoop, OpenLoop, Schedule, Stop};
use rpclab_protocols::protocol::{CallError, Connection, Messages};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;
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
/// runner needs to end a warm-up and a call-count window.
#[derive(Debug)]
pub struct Clock {
    phase: AtomicU8,
    /// Workers that have finished their share of the measurement window.
    finished: AtomicUsize,
    all_finished: Notify,
    workers: usize,
    /// Per task: calls completed so far in any phase, and the sum of their
    /// service times (the warm-up's signals and the progress display).
    progress: Box<[TaskCounters]>,
    /// Per connection: whether it has completed a verified call yet.
    answered: Box<[AtomicBool]>,
    answered_count: AtomicUsize,
    /// The wrong replies that stop a run ([`crate::wrong_replies`]).
    wrong: WrongReplies,
    /// Told once a rule of [`crate::wrong_replies`] stopped the run.
    stop: Notify,
    /// The interval log, which starts with the measurement window.
    sink: OnceLock<IntervalSink>,
}

/// Width of one interval of the `.hlog`.
pub const HLOG_INTERVAL: Duration = Duration::from_secs(1);

/// A task's counters alone on their cache line, so workers on different
/// cores never contend when they bump their own. Only the owning task
/// writes them (plain stores, no read-modify-write).
#[derive(Debug, Default)]
#[repr(align(64))]
struct TaskCounters {
    completed: AtomicU64,
    service_ns: AtomicU64,
    /// Of the completed calls, those that failed (the live view's).
    failed: AtomicU64,
}

impl Clock {
    /// A clock for `workers` workers over `connections` connections;
    /// `measuring` starts it in the measurement window (no warm-up).
    pub fn new(workers: usize, connections: usize, measuring: bool) -> Arc<Clock> {
        let clock = Clock {
            phase: AtomicU8::new(Phase::Warmup as u8),
            finished: AtomicUsize::new(0),
            all_finished: Notify::new(),
            workers,
            progress: (0..workers).map(|_| TaskCounters::default()).collect(),
            answered: (0..connections).map(|_| AtomicBool::new(false)).collect(),
            answered_count: AtomicUsize::new(0),
            wrong: WrongReplies::new(connections),
            stop: Notify::new(),
            sink: OnceLock::new(),
        };
        if measuring {
            clock.start_measuring();
        }
        Arc::new(clock)
    }

    /// Opens the measurement window now.
    pub fn start_measuring(&self) {
        let _ = self
            .sink
            .set(IntervalSink::new(Instant::now(), HLOG_INTERVAL));
        self.set(Phase::Measure);
    }

    /// When the measurement window opened, once it has: the warm-up's
    /// length is decided while it runs, so an open loop's schedule learns
    /// here where its window starts.
    pub fn window_opened(&self) -> Option<Instant> {
        self.sink.get().map(IntervalSink::start)
    }

    /// The interval log, once the measurement window has opened.
    pub fn sink(&self) -> Option<&IntervalSink> {
        self.sink.get()
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

    /// Calls completed so far in any phase, summed over workers.
    pub fn completed_calls(&self) -> u64 {
        self.progress
            .iter()
            .map(|c| c.completed.load(Ordering::Relaxed))
            .sum()
    }

    /// Of the calls completed so far, those that failed.
    pub fn failed_calls(&self) -> u64 {
        self.progress
            .iter()
            .map(|c| c.failed.load(Ordering::Relaxed))
            .sum()
    }

    /// Service time of the calls completed so far, summed over workers.
    pub fn service_time(&self) -> Duration {
        Duration::from_nanos(
            self.progress
                .iter()
                .map(|c| c.service_ns.load(Ordering::Relaxed))
                .sum(),
        )
    }

    /// Connections that have completed at least one verified call.
    pub fn answered_connections(&self) -> usize {
        self.answered_count.load(Ordering::Acquire)
    }

    /// Number of connections the clock tracks.
    pub fn connections(&self) -> usize {
        self.answered.len()
    }

    /// Why the run must stop without measuring: every connection answered
    /// only wrong replies in the warm-up, or too many wrong replies came in
    /// a row ([`crate::wrong_replies`]).
    pub fn wrong_service(&self) -> Option<String> {
        self.wrong.verdict()
    }

    /// Resolves once a rule of [`crate::wrong_replies`] stopped the run
    /// (the window's wait ends with it).
    pub async fn stopped(&self) {
        self.stop.notified().await;
    }

    /// Ends the run at once: every caller stops at its next call, and the
    /// runner's wait ends.
    fn stop_wrong(&self) {
        self.set(Phase::Done);
        self.stop.notify_one();
    }

    /// A failed call, in the warm-up or the window: the wrong reply that
    /// makes [`crate::wrong_replies::STOP_AFTER_IN_A_ROW`] in a row ends
    /// the run.
    fn failed(&self, error: &CallError) {
        if matches!(self.phase(), Phase::Warmup | Phase::Measure) && self.wrong.failed(error) {
            self.stop_wrong();
        }
    }

    /// A failed call on `connection` before it verified one, in the
    /// warm-up; the last wrong reply the verdict needs ends the run at
    /// once (every caller stops at its next call).
    fn failed_unanswered(&self, connection: usize, error: &CallError) {
        if self.phase() != Phase::Warmup {
            return;
        }
        let answered = |i: usize| {
            self.answered
                .get(i)
                .is_some_and(|a| a.load(Ordering::Acquire))
        };
        if self.wrong.record(connection, error, answered) {
            self.stop_wrong();
        }
    }

    fn connection_answered(&self, connection: usize) {
        if let Some(flag) = self.answered.get(connection) {
            if !flag.swap(true, Ordering::AcqRel) {
                self.answered_count.fetch_add(1, Ordering::AcqRel);
            }
        }
    }
}

/// What one task tells the clock about each completed call; it remembers
/// locally what it already said, so after the first verified call the cost
/// per call is two plain stores.
struct TaskProgress {
    task: usize,
    connection: usize,
    completed: u64,
    service_ns: u64,
    failed: u64,
    answered: bool,
}

impl TaskProgress {
    fn new(task: usize, connection: usize) -> TaskProgress {
        TaskProgress {
            task,
            connection,
            completed: 0,
            service_ns: 0,
            failed: 0,
            answered: false,
        }
    }

    fn completed(&mut self, clock: &Clock, service: Duration, outcome: &Result<(), CallError>) {
        self.completed += 1;
        self.service_ns += service.as_nanos() as u64;
        let counters = &clock.progress[self.task];
        counters.completed.store(self.completed, Ordering::Relaxed);
        counters
            .service_ns
            .store(self.service_ns, Ordering::Relaxed);
        match outcome {
            Ok(()) => {
                clock.wrong.verified();
                if !self.answered {
                    self.answered = true;
                    clock.connection_answered(self.connection);
                }
            }
            Err(e) => {
                self.failed += 1;
                counters.failed.store(self.failed, Ordering::Relaxed);
                if !self.answered {
                    clock.failed_unanswered(self.connection, e);
                }
                clock.failed(e);
            }
        }
    }
}

/// A worker's places in a call-count window: its own quota, or the shared
/// budget of a thread pool. Unlimited for a timed window.
struct Places {
    quota: u64,
    taken: u64,
    budget: Option<Arc<AtomicU64>>,
}

impl Places {
    fn take(&mut self) -> bool {
        if self.taken >= self.quota {
            return false;
        }
        if let Some(b) = &self.budget {
            if b.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_err()
            {
                return false;
            }
        }
        self.taken += 1;
        true
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

/// One call, timed, with its failure classified; made as
/// [`Connection::verified_call`], so every load model verifies every reply.
pub async fn timed_call<C: Connection>(
    conn: &C,
    call: &Call,
    timeout: Duration,
) -> (Duration, Result<(), CallError>) {
    let timed = Deadline::new().timed_call(conn, call, timeout).await;
    (timed.latency, timed.outcome)
}

/// A call as [`Deadline::timed_call`] saw it.
pub struct Timed {
    /// When the call was made.
    pub start: Instant,
    /// When the call ended (its reply was read and checked, or it failed):
    /// the clock read that also gives `latency`, so that recording the call
    /// needs no third one.
    pub end: Instant,
    pub latency: Duration,
    pub outcome: Result<(), CallError>,
}

/// A task's one timer for the timeouts of all its calls, one after the
/// other.
///
/// `tokio::time::timeout` registers a new entry in tokio's timer wheel per
/// call and removes it after, each time under the wheel's lock. This timer
/// is registered once and moved **lazily**: a call whose deadline is later
/// than the timer's leaves the timer where it is, and only when the timer
/// fires is it moved to the deadline of the call then in flight (or the
/// call times out, if that deadline has passed). Calls that end in time, as
/// almost all do, touch the timer about once per `timeout`, not once per
/// call. The timeout itself is as exact as `tokio::time::timeout`'s: the
/// timer never fires later than the call's deadline.
pub struct Deadline {
    sleep: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// The waker the timer was last polled with, since it was last moved
    /// or fired: while a call is polled with the same one, the timer holds
    /// it and needs no polling on every wake-up.
    armed: Option<std::task::Waker>,
}

impl Default for Deadline {
    fn default() -> Deadline {
        Deadline::new()
    }
}

impl Deadline {
    pub fn new() -> Deadline {
        // Moved to the first call's deadline, which is earlier.
        Deadline {
            sleep: Box::pin(tokio::time::sleep(Duration::from_secs(86_400))),
            armed: None,
        }
    }

    /// One call, timed, failing with [`CallError::Timeout`] after
    /// `timeout`, its reply verified ([`Connection::verified_call`]).
    pub async fn timed_call<C: Connection>(
        &mut self,
        conn: &C,
        call: &Call,
        timeout: Duration,
    ) -> Timed {
        self.timed_call_recording(conn, call, timeout, &mut Messages::default())
            .await
    }

    /// [`Deadline::timed_call`], a streaming call's messages recorded in
    /// `messages` ([`Connection::verified_call_recording`]) for the caller
    /// to record once it knows whether the call is the window's.
    pub async fn timed_call_recording<C: Connection>(
        &mut self,
        conn: &C,
        call: &Call,
        timeout: Duration,
        messages: &mut Messages,
    ) -> Timed {
        let start = Instant::now();
        let due = tokio::time::Instant::from_std(start + timeout);
        if self.sleep.deadline() > due {
            self.sleep.as_mut().reset(due);
            self.armed = None;
        }
        let mut reply = std::pin::pin!(conn.verified_call_recording(call, messages));
        let armed = &mut self.armed;
        let sleep = &mut self.sleep;
        let outcome = std::future::poll_fn(|cx| {
            if let Poll::Ready(outcome) = reply.as_mut().poll(cx) {
                return Poll::Ready(outcome);
            }
            loop {
                // The timer keeps the waker of its last poll: while that is
                // this task's, it is polled again only once it fired (or
                // was moved).
                let holds_ours = armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
                if holds_ours && !sleep.is_elapsed() {
                    return Poll::Pending;
                }
                match sleep.as_mut().poll(cx) {
                    Poll::Pending => {
                        if !holds_ours {
                            *armed = Some(cx.waker().clone());
                        }
                        return Poll::Pending;
                    }
                    // Set for an earlier call: move it to this one's deadline.
                    Poll::Ready(()) if tokio::time::Instant::now() < due => {
                        sleep.as_mut().reset(due);
                        *armed = None;
                    }
                    Poll::Ready(()) => return Poll::Ready(Err(CallError::Timeout)),
                }
            }
        })
        .await;
        let end = Instant::now();
        Timed {
            start,
            end,
            latency: end.saturating_duration_since(start),
            outcome,
        }
    }
}

impl LoadModel for ClosedLoop {
    fn workers(&self) -> usize {
        self.callers() as usize
    }

    fn timed_window(&self) -> Option<Duration> {
        match self.stop {
            Stop::Seconds(s) => Some(Duration::from_secs_f64(s)),
            _ => None,
        }
    }

    /// One task per call in flight: a synchronous worker is one task, an
    /// asynchronous one with `outstanding` calls in flight is that many
    /// tasks sharing the worker's connection and its share of the calls.
    async fn drive<C: Connection>(&self, run: Run<C>) -> Vec<WorkerStats> {
        let callers = closed_loop_callers(
            self,
            run.connections.len(),
            &run.clock,
            run.keep_load_until_done,
        );
        let handles: Vec<_> = callers
            .into_iter()
            .map(|mut caller| {
                let conn = Arc::clone(&run.connections[caller.connection()]);
                let call = Arc::clone(&run.call);
                let timeout = run.timeout;
                tokio::spawn(async move {
                    let mut deadline = Deadline::new();
                    while let Some(issued) = caller.issue() {
                        let Timed {
                            end,
                            latency,
                            outcome,
                            ..
                        } = deadline
                            .timed_call_recording(&*conn, &call, timeout, caller.messages())
                            .await;
                        let failed = outcome.is_err();
                        if !caller.complete(issued, latency, end, outcome) {
                            break;
                        }
                        // A call that fails without ever waiting (a refused
                        // request, a closed connection) would otherwise let
                        // this task spin without yielding, starving the
                        // phase timer and every other task.
                        if failed {
                            tokio::task::yield_now().await;
                        }
                    }
                    caller.into_stats()
                })
            })
            .collect();
        join_all(handles).await
    }
}

/// The callers of a closed loop over `connections` connections, one per
/// call in flight (an asynchronous worker with `outstanding` calls is that
/// many callers on the worker's connection, sharing its calls).
pub(crate) fn closed_loop_callers(
    model: &ClosedLoop,
    connections: usize,
    clock: &Arc<Clock>,
    keep_load: bool,
) -> Vec<Caller> {
    // A shared budget only for the thread-pool shape (seed 003): one
    // atomic per call, taken only when the window is a total count.
    let budget = match model.stop {
        Stop::TotalCalls(n) => Some(Arc::new(AtomicU64::new(n))),
        _ => None,
    };
    let outstanding = model.outstanding.max(1) as usize;
    (0..model.callers() as usize)
        .map(|task| {
            let worker = task / outstanding;
            let quota = match model.stop {
                // The worker's calls, split over its calls in flight.
                Stop::CallsPerWorker(n) => {
                    let (k, i) = (outstanding as u64, (task % outstanding) as u64);
                    n / k + u64::from(i < n % k)
                }
                _ => u64::MAX,
            };
            let connection = worker % connections.max(1);
            Caller {
                clock: Arc::clone(clock),
                stats: WorkerStats::default(),
                progress: TaskProgress::new(task, connection),
                places: Places {
                    quota,
                    taken: 0,
                    budget: budget.clone(),
                },
                finished: false,
                messages: Messages::default(),
                keep_load,
            }
        })
        .collect()
}

/// One closed-loop caller's bookkeeping, the same whichever engine makes
/// its calls (tasks here, or [`crate::poll_loop`]): which calls are the
/// window's, what is recorded, when its share of the window is done.
pub(crate) struct Caller {
    clock: Arc<Clock>,
    stats: WorkerStats,
    progress: TaskProgress,
    places: Places,
    /// Its share of the window is done (told to the clock).
    finished: bool,
    /// The messages of its call in flight, if it streams; recorded with
    /// the call, emptied after each.
    messages: Messages,
    /// Keep calling, unrecorded, once finished, until the run is done.
    keep_load: bool,
}

/// A call as its [`Caller`] issued it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Issued {
    phase: Phase,
    /// It holds one of the window's places.
    placed: bool,
}

impl Caller {
    /// The index of the connection this caller calls on.
    pub(crate) fn connection(&self) -> usize {
        self.progress.connection
    }

    /// The next call to make, or `None`: stop calling.
    pub(crate) fn issue(&mut self) -> Option<Issued> {
        let phase = self.clock.phase();
        if phase == Phase::Done {
            return None;
        }
        let mut placed = false;
        if phase == Phase::Measure && !self.finished {
            placed = self.places.take();
            if !placed && !self.finish() {
                return None;
            }
        }
        Some(Issued { phase, placed })
    }

    /// Where its call in flight records its messages, if it streams.
    pub(crate) fn messages(&mut self) -> &mut Messages {
        &mut self.messages
    }

    /// Records a call that ended at `end` after `latency` (and its
    /// messages, if it streamed); false: stop calling.
    pub(crate) fn complete(
        &mut self,
        issued: Issued,
        latency: Duration,
        end: Instant,
        outcome: Result<(), CallError>,
    ) -> bool {
        let completed_in = self.clock.phase();
        self.progress.completed(&self.clock, latency, &outcome);
        let mut placed = issued.placed;
        // Issued before the window, completed in it: it is the window's if
        // a place is left.
        if completed_in == Phase::Measure && issued.phase != Phase::Measure && !self.finished {
            placed = self.places.take();
            if !placed && !self.finish() {
                return false;
            }
        }
        if placed && completed_in == Phase::Measure {
            if outcome.is_ok() {
                self.stats.record_messages(&self.messages);
            }
            match (outcome, self.clock.sink()) {
                (Ok(()), Some(sink)) => self.stats.record_ok_at(latency, end, sink),
                (Ok(()), None) => self.stats.record_ok(latency),
                (Err(e), _) => self.stats.record_failure(&e),
            }
        }
        self.messages.clear();
        true
    }

    /// Ends this caller's share of the window; false: stop calling.
    fn finish(&mut self) -> bool {
        self.finished = true;
        self.clock.worker_finished();
        self.keep_load
    }

    /// The caller's stats, once it has stopped calling.
    pub(crate) fn into_stats(mut self) -> WorkerStats {
        if !self.finished {
            self.clock.worker_finished();
        }
        if let Some(sink) = self.clock.sink() {
            self.stats.flush_interval(sink);
        }
        self.stats
    }
}

/// Waits for every task and collects its stats; a panic in a task is
/// re-raised here rather than lost.
async fn join_all(handles: Vec<tokio::task::JoinHandle<WorkerStats>>) -> Vec<WorkerStats> {
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

/// The due times of an open loop, shared by its senders.
///
/// A single cursor (nanoseconds since the load started) is advanced by
/// compare-and-swap, each claim drawing the gap to the next call from the
/// schedule's rate at that moment, so the sequence of due times is the
/// schedule's whatever sender claims it and no sender ever waits on a lock.
///
/// Until the window opens the schedule stays at its first rate; once the
/// pacer learns when the window opened ([`Arrivals::window_starts_at`]),
/// the schedule's time runs from there.
pub struct Arrivals {
    schedule: Schedule,
    window_s: f64,
    /// Nanoseconds since the load started at which the window opened;
    /// `u64::MAX` while it has not.
    window_ns: AtomicU64,
    next_ns: AtomicU64,
}

impl Arrivals {
    /// `window_start`: when the window opens, if known in advance.
    pub fn new(schedule: Schedule, window_s: f64, window_start: Option<Duration>) -> Arrivals {
        Arrivals {
            schedule,
            window_s,
            window_ns: AtomicU64::new(window_start.map_or(u64::MAX, |d| d.as_nanos() as u64)),
            next_ns: AtomicU64::new(0),
        }
    }

    /// The window opened `at` after the load started.
    pub fn window_starts_at(&self, at: Duration) {
        self.window_ns
            .store(at.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Claims the next due time, in nanoseconds since the load started.
    pub fn claim(&self, rng: &mut Rng) -> u64 {
        let mut current = self.next_ns.load(Ordering::Relaxed);
        loop {
            let window_ns = self.window_ns.load(Ordering::Relaxed);
            let t = current.saturating_sub(window_ns) as f64 / 1e9;
            let rate = self.schedule.rate_at(t, self.window_s).max(1e-9);
            let mean_gap_ns = 1e9 / rate;
            let gap = if self.schedule.is_poisson() {
                // Exponential gap by inversion; 1 - u is in (0, 1].
                -(1.0 - rng.next_f64()).ln() * mean_gap_ns
            } else {
                mean_gap_ns
            };
            let next = current + (gap.round() as u64).max(1);
            match self.next_ns.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return current,
                Err(actual) => current = actual,
            }
        }
    }
}

/// A small, fast pseudo-random generator (xorshift64*), one per sender: the
/// Poisson gaps need randomness, not cryptography, and no shared state.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl LoadModel for OpenLoop {
    fn workers(&self) -> usize {
        self.max_in_flight as usize
    }

    fn timed_window(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.seconds))
    }

    /// One pacer thread releases calls at their due times; `max_in_flight`
    /// sender tasks take them and make the calls.
    ///
    /// The pacer is an OS thread sleeping in the kernel (`nanosleep`, tens
    /// of microseconds of precision) rather than a task on tokio's 1 ms
    /// timer wheel, so calls leave on time without any task spinning. When
    /// every sender is busy, due calls queue in the channel and then the
    /// pacer waits: the calls are late, and their lateness is measured.
    async fn drive<C: Connection>(&self, run: Run<C>) -> Vec<WorkerStats> {
        let origin = Instant::now();
        let arrivals = Arrivals::new(self.schedule.clone(), self.seconds, None);
        let (due_tx, due_rx) = async_channel::bounded::<Instant>(self.max_in_flight as usize);
        let pacer_clock = Arc::clone(&run.clock);
        let pacer = std::thread::Builder::new()
            .name("rpclab-pacer".into())
            .spawn(move || {
                // Sleeps in short slices so that the end of the run is noticed
                // even at very low rates.
                const SLICE: Duration = Duration::from_millis(50);
                let mut rng = Rng::new(0x5EED);
                let mut window_known = false;
                'calls: loop {
                    if !window_known {
                        if let Some(at) = pacer_clock.window_opened() {
                            arrivals.window_starts_at(at.saturating_duration_since(origin));
                            window_known = true;
                        }
                    }
                    let due = origin + Duration::from_nanos(arrivals.claim(&mut rng));
                    loop {
                        if pacer_clock.phase() == Phase::Done {
                            break 'calls;
                        }
                        let now = Instant::now();
                        if due <= now {
                            break;
                        }
                        std::thread::sleep((due - now).min(SLICE));
                    }
                    if due_tx.send_blocking(due).is_err() {
                        break;
                    }
                }
            });
        if let Err(e) = pacer {
            panic!("cannot start the open loop's pacer thread: {e}");
        }
        let handles: Vec<_> = (0..self.max_in_flight as usize)
            .map(|w| {
                let connection = w % run.connections.len();
                let conn = Arc::clone(&run.connections[connection]);
                let call = Arc::clone(&run.call);
                let clock = Arc::clone(&run.clock);
                let due_rx = due_rx.clone();
                let timeout = run.timeout;
                tokio::spawn(async move {
                    let mut stats = WorkerStats::default();
                    let mut progress = TaskProgress::new(w, connection);
                    let mut deadline = Deadline::new();
                    let mut messages = Messages::default();
                    // The channel closes when the pacer stops at the end of the run.
                    while let Ok(due) = due_rx.recv().await {
                        if clock.phase() == Phase::Done {
                            break;
                        }
                        messages.clear();
                        let Timed {
                            start: sent,
                            end,
                            latency: service,
                            outcome,
                        } = deadline
                            .timed_call_recording(&*conn, &call, timeout, &mut messages)
                            .await;
                        let completed_in = clock.phase();
                        progress.completed(&clock, service, &outcome);
                        if completed_in != Phase::Measure {
                            continue;
                        }
                        match (outcome, clock.sink()) {
                            (Ok(()), sink) => {
                                stats.record_messages(&messages);
                                let corrected = end.duration_since(due);
                                match sink {
                                    Some(sink) => stats.record_ok_at(corrected, end, sink),
                                    None => stats.record_ok(corrected),
                                }
                                stats.record_open_loop(service, sent.duration_since(due));
                            }
                            (Err(e), _) => stats.record_failure(&e),
                        }
                    }
                    clock.worker_finished();
                    if let Some(sink) = clock.sink() {
                        stats.flush_interval(sink);
                    }
                    stats
                })
            })
            .collect();
        drop(due_rx);
        join_all(handles).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::contract::{Operation, Value};
    use rpclab_model::spec::Step;

    /// The first `n` arrival times (ns) of `schedule` over a 10 s window
    /// with no warm-up, drawn from a generator seeded with `seed`.
    fn first_arrivals(schedule: Schedule, seed: u64, n: usize) -> Vec<u64> {
        let a = Arrivals::new(schedule, 10.0, Some(Duration::ZERO));
        let mut rng = Rng::new(seed);
        (0..n).map(|_| a.claim(&mut rng)).collect()
    }

    #[test]
    fn constant_arrivals_are_evenly_spaced_from_zero() {
        let times = first_arrivals(Schedule::Constant { rate: 1000.0 }, 1, 5);
        assert_eq!(times, vec![0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn poisson_arrivals_have_the_mean_rate_and_vary() {
        let n = 100_000;
        let times = first_arrivals(Schedule::Poisson { rate: 10_000.0 }, 7, n);
        let gaps: Vec<u64> = std::iter::once(times[0])
            .chain(times.windows(2).map(|w| w[1] - w[0]))
            .collect();
        let last = times[n - 1];
        let mean = last as f64 / (n - 1) as f64;
        assert!(
            (mean - 100_000.0).abs() / 100_000.0 < 0.02,
            "mean gap {mean} ns"
        );
        // Exponential gaps: standard deviation close to the mean.
        let var = gaps[1..]
            .iter()
            .map(|&g| (g as f64 - mean).powi(2))
            .sum::<f64>()
            / (n - 2) as f64;
        assert!(
            (var.sqrt() - mean).abs() / mean < 0.05,
            "sd {} vs mean {mean}",
            var.sqrt()
        );
    }

    #[test]
    fn steps_change_the_spacing_after_warmup_and_each_step() {
        let schedule = Schedule::Steps {
            steps: vec![
                Step {
                    rate: 1000.0,
                    seconds: 0.01,
                },
                Step {
                    rate: 100.0,
                    seconds: 1.0,
                },
            ],
        };
        let a = Arrivals::new(schedule, 1.0, Some(Duration::from_millis(5)));
        let mut rng = Rng::new(3);
        let times: Vec<u64> = (0..25).map(|_| a.claim(&mut rng)).collect();
        // Warm-up (5 ms) and the first step (10 ms) at 1 ms spacing, then 10 ms.
        assert_eq!(times[15] - times[14], 1_000_000);
        assert_eq!(times[16] - times[15], 10_000_000);
    }

    /// A connection that answers correctly after a fixed delay, to check the
    /// open loop's arithmetic without a network.
    struct Delayed(Duration);

    impl Connection for Delayed {
        async fn call(&self, call: &Call) -> Result<Value, CallError> {
            tokio::time::sleep(self.0).await;
            Ok(call.expected.clone())
        }
    }

    /// A connection that counts the calls in flight on it.
    #[derive(Default)]
    struct Tracking {
        now: AtomicUsize,
        max: AtomicUsize,
    }

    impl Connection for Tracking {
        async fn call(&self, call: &Call) -> Result<Value, CallError> {
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(5)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Ok(call.expected.clone())
        }
    }

    fn closed_run(conn: Arc<Tracking>, callers: usize) -> (Run<Tracking>, Arc<Clock>) {
        let clock = Clock::new(callers, 1, true);
        let run = Run {
            connections: vec![conn],
            call: Arc::new(Operation::Hello.call()),
            timeout: Duration::from_secs(5),
            clock: Arc::clone(&clock),
            keep_load_until_done: false,
        };
        (run, clock)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn sync_workers_keep_one_call_each_in_flight_and_make_exactly_their_calls() {
        let conn = Arc::new(Tracking::default());
        let model =
            rpclab_model::spec::Shape::SharedClient.closed(3, None, Stop::CallsPerWorker(7));
        let (run, _clock) = closed_run(Arc::clone(&conn), model.workers());
        let stats = model.drive(run).await;
        assert_eq!(stats.iter().map(|s| s.ok).sum::<u64>(), 21);
        assert_eq!(conn.max.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn async_workers_keep_their_outstanding_calls_in_flight() {
        let conn = Arc::new(Tracking::default());
        let model = rpclab_model::spec::Shape::SharedClient
            .closed(2, None, Stop::CallsPerWorker(10))
            .with_outstanding(4);
        let (run, _clock) = closed_run(Arc::clone(&conn), model.workers());
        let stats = model.drive(run).await;
        assert_eq!(
            stats.iter().map(|s| s.ok).sum::<u64>(),
            20,
            "10 calls per worker, split over its 4 in flight"
        );
        assert_eq!(conn.max.load(Ordering::SeqCst), 8);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_thread_pool_drains_exactly_its_shared_budget() {
        let conn = Arc::new(Tracking::default());
        let model = rpclab_model::spec::Shape::ThreadPool.closed(8, None, Stop::TotalCalls(50));
        let (run, _clock) = closed_run(Arc::clone(&conn), model.workers());
        let stats = model.drive(run).await;
        assert_eq!(stats.iter().map(|s| s.ok).sum::<u64>(), 50);
        assert_eq!(conn.max.load(Ordering::SeqCst), 8);
    }

    /// A connection whose calls take the next delay of a script and fail
    /// where the script says, and which notes, when each call completes,
    /// whether the window was open: the truth the stats must match.
    struct Scripted {
        clock: Arc<Clock>,
        script: Vec<(u64, bool)>,
        next: AtomicUsize,
        in_window_ok: AtomicU64,
        in_window_failed: AtomicU64,
    }

    impl Connection for Scripted {
        async fn call(&self, call: &Call) -> Result<Value, CallError> {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let (delay_ms, fails) = self.script[i % self.script.len()];
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            // No await between here and the worker's phase read: on a
            // current-thread runtime both see the same phase.
            let in_window = self.clock.phase() == Phase::Measure;
            match (in_window, fails) {
                (true, false) => self.in_window_ok.fetch_add(1, Ordering::Relaxed),
                (true, true) => self.in_window_failed.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
            if fails {
                // A broken socket, not a wrong reply: a script of failures
                // only must not end the warm-up (crate::wrong_replies).
                Err(CallError::Io(std::io::Error::other("scripted failure")))
            } else {
                Ok(call.expected.clone())
            }
        }
    }

    /// Drives `model` through warm-up, window, cool-down on paused time, as
    /// the runner does, and returns the merged stats and the connection.
    fn drive_scripted(
        model: ClosedLoop,
        script: Vec<(u64, bool)>,
        warmup_ms: u64,
        window_ms: u64,
        cooldown_ms: u64,
    ) -> (WorkerStats, Arc<Scripted>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        runtime.block_on(async {
            let clock = Clock::new(model.workers(), 1, false);
            let conn = Arc::new(Scripted {
                clock: Arc::clone(&clock),
                script,
                next: AtomicUsize::new(0),
                in_window_ok: AtomicU64::new(0),
                in_window_failed: AtomicU64::new(0),
            });
            let run = Run {
                connections: vec![Arc::clone(&conn)],
                call: Arc::new(Operation::Hello.call()),
                timeout: Duration::from_secs(60),
                clock: Arc::clone(&clock),
                keep_load_until_done: cooldown_ms > 0,
            };
            let timed = model.timed_window().is_some();
            let controller = async {
                tokio::time::sleep(Duration::from_millis(warmup_ms)).await;
                clock.start_measuring();
                if timed {
                    tokio::time::sleep(Duration::from_millis(window_ms)).await;
                } else {
                    clock.wait_all_finished().await;
                }
                clock.set(Phase::Cooldown);
                tokio::time::sleep(Duration::from_millis(cooldown_ms)).await;
                clock.set(Phase::Done);
            };
            let (stats, ()) = tokio::join!(model.drive(run), controller);
            let mut total = WorkerStats::default();
            for s in stats {
                total.merge(s);
            }
            (total, conn)
        })
    }

    fn script() -> impl proptest::strategy::Strategy<Value = Vec<(u64, bool)>> {
        // Fast and slow calls (some longer than the whole window), some failing.
        proptest::collection::vec(
            (
                proptest::prop_oneof![1u64..5, 5u64..50, 200u64..2000],
                proptest::bool::weighted(0.2),
            ),
            1..40,
        )
    }

    /// A scripted closed loop ([`drive_scripted`]): its calls, its
    /// workers, and the warm-up before its window and the cool-down after.
    fn scripted_loop(
    ) -> impl proptest::strategy::Strategy<Value = (Vec<(u64, bool)>, u32, u64, u64)> {
        (script(), 1u32..6, 0u64..600, 0u64..300)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// A timed window counts exactly the calls that completed in it,
        /// and every figure rests on that one count.
        #[test]
        fn a_timed_window_counts_the_calls_completed_in_it(
            (script, workers, warmup_ms, cooldown_ms) in scripted_loop(),
            window_ms in 1u64..800,
        ) {
            let model = rpclab_model::spec::Shape::SharedClient
                .closed(workers, None, Stop::Seconds(window_ms as f64 / 1e3));
            let (stats, conn) = drive_scripted(model, script, warmup_ms, window_ms, cooldown_ms);
            proptest::prop_assert_eq!(stats.ok, conn.in_window_ok.load(Ordering::Relaxed));
            proptest::prop_assert_eq!(
                stats.failures.total(),
                conn.in_window_failed.load(Ordering::Relaxed)
            );
            proptest::prop_assert_eq!(stats.latency.len(), stats.ok);
            let edges = crate::window::Edges {
                duration: Duration::from_millis(window_ms),
                cpu: Duration::from_millis(7),
                bytes_sent: 1234,
                bytes_received: 5678,
                memory_peak: 0,
                context_switches: 0,
            };
            let f = crate::window::Figures::of(&stats, &edges);
            let calls = (f.calls_ok + f.calls_failed) as f64;
            if calls > 0.0 {
                proptest::prop_assert!((f.bytes_sent_per_call * calls - 1234.0).abs() < 1e-6);
                proptest::prop_assert!((f.client_cost.cpu_us_per_call * calls - 7000.0).abs() < 1e-6);
            }
            proptest::prop_assert!(
                (f.throughput_per_s * window_ms as f64 / 1e3 - f.calls_ok as f64).abs() < 1e-6
            );
        }

        /// A call-count window holds exactly its calls, each completed in it,
        /// whatever was in flight when it opened.
        #[test]
        fn a_count_window_holds_exactly_its_calls(
            (script, workers, warmup_ms, cooldown_ms) in scripted_loop(),
            calls in 1u64..30,
            pool in proptest::bool::ANY,
        ) {
            let model = if pool {
                rpclab_model::spec::Shape::ThreadPool.closed(workers, None, Stop::TotalCalls(calls))
            } else {
                rpclab_model::spec::Shape::SharedClient.closed(workers, None, Stop::CallsPerWorker(calls))
            };
            let expected = if pool { calls } else { calls * workers as u64 };
            let (stats, conn) = drive_scripted(model, script, warmup_ms, 0, cooldown_ms);
            proptest::prop_assert_eq!(stats.ok + stats.failures.total(), expected);
            // Every counted call completed in the window (calls beyond the
            // count, made to keep the load up, completed there too).
            proptest::prop_assert!(stats.ok <= conn.in_window_ok.load(Ordering::Relaxed));
            proptest::prop_assert!(
                stats.failures.total() <= conn.in_window_failed.load(Ordering::Relaxed)
            );
            proptest::prop_assert_eq!(stats.latency.len(), stats.ok);
        }
    }

    /// 1 sender, 200 calls/s due, but each call takes at least 20 ms:
    /// calls fall further and further behind their due time, so the
    /// corrected latency grows while the service time stays at the call's
    /// own. The run ends after 20 calls, not after a time, and every bound
    /// below holds however slowly the machine runs (slower only makes the
    /// backlog larger): call k is due at 5k ms and sent at 20k ms or later.
    /// The per-worker timer is moved only when it fires: a call that runs
    /// across the deadline of an earlier call (where the timer still is)
    /// is not a timeout, a call past its own deadline is, and the timer
    /// works on after that. The margins (0.8 s on 1.2 s sleeps) only allow
    /// for a slow machine; nothing here is a speed the test expects.
    #[tokio::test(flavor = "current_thread")]
    async fn the_lazy_deadline_times_out_only_a_call_past_its_own() {
        struct Scripted(std::sync::Mutex<std::collections::VecDeque<Option<u64>>>);
        impl Connection for Scripted {
            async fn call(&self, call: &Call) -> Result<Value, CallError> {
                let next = self.0.lock().unwrap().pop_front().expect("a scripted call");
                match next {
                    Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                    None => std::future::pending::<()>().await,
                }
                Ok(call.expected.clone())
            }
        }
        let conn = Scripted(std::sync::Mutex::new(
            [Some(0), Some(1200), Some(1200), None, Some(0)].into(),
        ));
        let call = Operation::Hello.call();
        let timeout = Duration::from_secs(2);
        let mut deadline = Deadline::new();
        // The first call sets the timer at +2 s; the third runs across it.
        for k in 1..=3 {
            let timed = deadline.timed_call(&conn, &call, timeout).await;
            assert!(timed.outcome.is_ok(), "call {k}: {:?}", timed.outcome.err());
            assert_eq!(timed.latency, timed.end - timed.start);
        }
        let timed = deadline.timed_call(&conn, &call, timeout).await;
        assert!(matches!(timed.outcome, Err(CallError::Timeout)));
        assert!(timed.latency >= timeout, "{:?}", timed.latency);
        let timed = deadline.timed_call(&conn, &call, timeout).await;
        assert!(timed.outcome.is_ok());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_stalled_server_shows_as_latency_not_as_fewer_calls() {
        let model = OpenLoop {
            schedule: Schedule::Constant { rate: 200.0 },
            connections: 1,
            max_in_flight: 1,
            seconds: 0.5,
        };
        let clock = Clock::new(1, 1, true);
        let run = Run {
            connections: vec![Arc::new(Delayed(Duration::from_millis(20)))],
            call: Arc::new(Operation::Hello.call()),
            timeout: Duration::from_secs(60),
            clock: Arc::clone(&clock),
            keep_load_until_done: false,
        };
        let stopper = async {
            while clock.completed_calls() < 20 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            clock.set(Phase::Done);
        };
        let (stats, ()) = tokio::join!(model.drive(run), stopper);
        let s = &stats[0];
        assert!(s.ok >= 20, "{} calls", s.ok);
        assert!(
            s.service.value_at_quantile(0.5) >= 19_000,
            "service p50 {} us",
            s.service.value_at_quantile(0.5)
        );
        // The 20th call was due at 95 ms and left at 380 ms or later.
        assert!(
            s.latency.max() >= 280_000,
            "corrected max {} us should include the backlog",
            s.latency.max()
        );
        assert!(s.latency.max() > s.service.max());
        assert!(
            s.send_lag.max() >= 260_000,
            "send lag {} us",
            s.send_lag.max()
        );
    }
}
