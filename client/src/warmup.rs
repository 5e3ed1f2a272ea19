//! Deciding when the warm-up is over, from what the load does.
//!
//! A JVM compiles in waves: its first seconds are a different program, and a
//! cold server's first call can take longer than a short fixed warm-up. So
//! the window opens only when all of these hold:
//!
//! 1. the minimum warm-up (`warmup_s`) has passed, and at least
//!    `warmup_calls` calls have completed (ghz's `--skipFirst`);
//! 2. every connection has completed at least one verified call;
//! 3. with a [`Steady`] rule, the signal no longer drifts: the mean of the
//!    last `k` intervals agrees with the mean of the `k` before them
//!    (closed loop: throughput; open loop: mean service time, since its
//!    throughput is the schedule's), as JMH's warm-up iterations would, but
//!    adaptively.
//!
//! At the maximum (`warmup_max_s`) the window opens anyway, and the record
//! says the warm-up was not steady, so the cell is flagged rather than lost.
//! A server that fails every call (hangs up, times out) is measured too:
//! its failures are the result (the posts' failure claims count them). A
//! service whose every reply is *wrong* is a misconfiguration, not a
//! result: it ends the warm-up at once ([`crate::wrong_replies`]).

use crate::load::Clock;
use rpclab_model::result::Warmup;
use rpclab_model::spec::{CellSpec, Steady};
use rpclab_protocols::protocol::CallError;
use std::time::{Duration, Instant};

/// How often the warm-up looks at the clock when it has no steady rule (it
/// then only waits for the minimum and for every connection's first reply).
const POLL: Duration = Duration::from_millis(50);

/// What the warm-up compares from one interval to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Calls completed per second (closed loop).
    Throughput,
    /// Mean service time of the calls completed, µs (open loop).
    ServiceTime,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Signal::Throughput => "throughput",
            Signal::ServiceTime => "service-time",
        }
    }
}

/// Runs the warm-up until the window may open; returns how it went, or why
/// no window may open (a service that answers only wrong replies).
pub async fn warm_up(clock: &Clock, spec: &CellSpec, signal: Signal) -> Result<Warmup, CallError> {
    let rule = spec.steady;
    let tick = rule.map_or(POLL, |r| Duration::from_secs_f64(r.interval_s));
    let min = Duration::from_secs_f64(spec.warmup_s);
    let max = Duration::from_secs_f64(spec.warmup_limit_s());
    let start = Instant::now();
    let mut intervals = Intervals::new(signal, clock, start);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if let Some(why) = clock.wrong_service() {
            return Err(CallError::WrongResponse(why));
        }
        if rule.is_some() {
            intervals.sample(clock);
        }
        let elapsed = start.elapsed();
        let answered = clock.answered_connections() >= clock.connections();
        let steady = rule.is_none_or(|r| intervals.steady(&r));
        let skipped = clock.completed_calls() >= spec.warmup_calls;
        if (elapsed >= min && answered && steady && skipped) || elapsed >= max {
            return Ok(Warmup {
                seconds: elapsed.as_secs_f64(),
                calls: clock.completed_calls(),
                every_connection_answered: answered,
                steady: answered && steady,
                signal: signal.name().to_owned(),
                intervals: intervals.values,
            });
        }
    }
}

/// The warm-up's intervals: each one's signal and how many calls it had.
struct Intervals {
    signal: Signal,
    values: Vec<f64>,
    calls: Vec<u64>,
    last_at: Instant,
    last_completed: u64,
    last_service: Duration,
}

impl Intervals {
    fn new(signal: Signal, clock: &Clock, now: Instant) -> Intervals {
        Intervals {
            signal,
            values: Vec::new(),
            calls: Vec::new(),
            last_at: now,
            last_completed: clock.completed_calls(),
            last_service: clock.service_time(),
        }
    }

    fn sample(&mut self, clock: &Clock) {
        let now = Instant::now();
        let completed = clock.completed_calls();
        let service = clock.service_time();
        let n = completed.saturating_sub(self.last_completed);
        let value = match self.signal {
            Signal::Throughput => {
                n as f64 / now.duration_since(self.last_at).as_secs_f64().max(1e-9)
            }
            Signal::ServiceTime if n > 0 => {
                service.saturating_sub(self.last_service).as_secs_f64() * 1e6 / n as f64
            }
            Signal::ServiceTime => 0.0,
        };
        self.values.push(value);
        self.calls.push(n);
        self.last_at = now;
        self.last_completed = completed;
        self.last_service = service;
    }

    fn steady(&self, rule: &Steady) -> bool {
        rule.reached(&self.values, &self.calls)
    }
}
