//! What one measurement cell asks of the load client.
//!
//! A [`CellSpec`] is written by the orchestrator as JSON into the client
//! container's work directory (or built from command-line flags when the
//! client is used on its own, like `ghz` or `wrk`). It makes the experiment
//! explicit: which load model, how many workers and connections, when the
//! measurement window starts and ends. Nothing about a cell is implicit.

use crate::contract::Operation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One cell: one protocol endpoint, one operation, one load.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellSpec {
    /// Protocol module of the client, e.g. `grpc` or `thrift`.
    pub protocol: String,
    /// `host:port` of the server. The lab only ever uses loopback.
    pub target: String,
    pub operation: Operation,
    pub load: Load,
    /// Seconds of load before the measurement window (JIT warm-up), at
    /// least; calls completed then are not counted. The window opens only
    /// once every connection has completed a verified call and, with a
    /// [`Steady`] rule, once the last intervals agree.
    #[serde(default)]
    pub warmup_s: f64,
    /// Calls the warm-up completes at least before the window opens, as
    /// ghz's `--skipFirst` leaves the first replies out (0: none asked;
    /// the window still waits for every connection's first call).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warmup_calls: u64,
    /// The longest warm-up: the window opens then whatever the rule says,
    /// and the cell is flagged not steady. Absent: `warmup_s` plus a minute
    /// for connections that have not answered yet (a cold JVM's first call
    /// can take seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_max_s: Option<f64>,
    /// Steady-state rule of the warm-up; absent: a fixed warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// Fewer calls than this in the window flag the cell too-few-calls.
    #[serde(default = "default_min_calls")]
    pub min_calls: u64,
    /// Latency percentiles to report beyond those every report keeps
    /// (`result::Latency`): the ones a threshold or a capacity search
    /// judges (`p(97.5)<2ms`), in `ClientReport::percentiles_us`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<crate::percentile::Percentile>,
    /// Seconds of load after the measurement window, so that the last
    /// measured calls do not see the load drop as other workers finish.
    /// With a call-count stop, workers that reach their count keep calling,
    /// unrecorded, until every worker has reached it and this has elapsed.
    #[serde(default)]
    pub cooldown_s: f64,
    /// Per-call timeout; a call slower than this is a failed call (timeout).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// When true, connection set-up happens inside the measurement window and
    /// its time is part of the reported elapsed time (seed 000's second
    /// table); warm-up is then skipped. Otherwise connections are opened
    /// before warm-up.
    #[serde(default)]
    pub include_connect: bool,
    /// Protocol-specific knobs (e.g. Thrift's transport), passed through
    /// verbatim to the protocol module, which rejects unknown keys.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Which of the client's engines may make the calls (`auto`: the poll
    /// engine where it can run the cell, else tasks).
    #[serde(default, skip_serializing_if = "EngineChoice::is_auto")]
    pub engine: EngineChoice,
}

/// Which of the load client's engines a cell may run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// The poll engine where it can run the cell (a closed loop with one
    /// call in flight per connection, on a protocol with a sans-IO
    /// exchange), else tokio tasks.
    #[default]
    Auto,
    /// Tokio tasks always: to compare the engines on one cell.
    Tasks,
}

impl EngineChoice {
    pub fn is_auto(&self) -> bool {
        *self == EngineChoice::Auto
    }

    /// Parses `auto` or `tasks`.
    pub fn parse(text: &str) -> Result<EngineChoice, String> {
        match text {
            "auto" => Ok(EngineChoice::Auto),
            "tasks" => Ok(EngineChoice::Tasks),
            other => Err(format!("engine `{other}`: expected `auto` or `tasks`")),
        }
    }
}

fn default_timeout_ms() -> u64 {
    5_000
}

/// Calls a window needs at least before its figures are read (a window of
/// a handful of calls measures its first call, not the server).
pub const DEFAULT_MIN_CALLS: u64 = 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn default_min_calls() -> u64 {
    DEFAULT_MIN_CALLS
}

/// When a warm-up has reached steady state: the mean signal of the last
/// `intervals` intervals of `interval_s` each is within `tolerance` of the
/// mean of the `intervals` before them, so the signal no longer drifts.
/// The signal is the throughput for a closed loop, the mean service time
/// for an open one (whose throughput is set by its schedule).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steady {
    pub intervals: u32,
    /// Relative half-width, e.g. 0.03 for ±3 %.
    pub tolerance: f64,
    #[serde(default = "default_interval_s")]
    pub interval_s: f64,
}

fn default_interval_s() -> f64 {
    1.0
}

impl Steady {
    /// Whether the signal has stopped drifting: the mean of the last
    /// `intervals` values lies within the band of the mean of the
    /// `intervals` values before them.
    ///
    /// Why two blocks and not a band around each value: on a shared host a
    /// latency-bound loop's 1 s intervals scatter by ±5-10 % around a flat
    /// mean (thrift-java at one client: 40550, 40174, 43304, 45330, 43270,
    /// 41103 calls/s), so a ±3 % band around every value flagged cells
    /// not-steady whose level did not move (docs/methodology.md has the
    /// figures of a real run). Scatter is what the
    /// repetitions' spread and the `noisy` flag report; the warm-up's
    /// question is whether the JIT is still raising the level, and a JIT
    /// still compiling shows as a difference between consecutive blocks
    /// (hessian at one client, cold: 1937, 9568, 11084, 11743, 14056, 12715
    /// calls/s). So the rule needs `2 × intervals` intervals.
    ///
    /// A block of N calls carries counting noise of about 1/sqrt(N) (a
    /// closed loop completes more regularly than a Poisson count), so the
    /// band is never narrower than that: a slow server is not held in
    /// warm-up by noise no warm-up can remove. An interval without a call
    /// is never steady.
    pub fn reached(&self, values: &[f64], calls: &[u64]) -> bool {
        let k = self.intervals.max(1) as usize;
        let n = values.len().min(calls.len());
        if n < 2 * k {
            return false;
        }
        let (values, calls) = (&values[n - 2 * k..n], &calls[n - 2 * k..n]);
        if calls.contains(&0) {
            return false;
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (before, last) = (mean(&values[..k]), mean(&values[k..]));
        // NaN is not steady either.
        if !(before > 0.0 && last > 0.0) {
            return false;
        }
        let fewest = calls[..k]
            .iter()
            .sum::<u64>()
            .min(calls[k..].iter().sum::<u64>());
        let band = self.tolerance.max(1.0 / (fewest as f64).sqrt());
        ((last - before) / last).abs() <= band
    }

    /// Intervals the rule needs before it can be met.
    pub fn intervals_needed(&self) -> u32 {
        2 * self.intervals.max(1)
    }
}

/// The load model of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Load {
    /// Each worker sends its next call when the previous one has returned.
    Closed(ClosedLoop),
    /// Calls are sent on a schedule, whether or not earlier calls returned.
    Open(OpenLoop),
}

impl Load {
    pub fn connections(&self) -> u32 {
        match self {
            Load::Closed(c) => c.connections,
            Load::Open(o) => o.connections,
        }
    }

    /// Connections that carry calls: a pool larger than its callers (seed
    /// 004's minimum of 100 connections for 50 users) keeps the rest open
    /// and idle, and the warm-up waits only for the ones in use.
    pub fn used_connections(&self) -> u32 {
        match self {
            Load::Closed(c) => c.connections.min(c.workers.max(1)),
            Load::Open(o) => o.connections.min(o.max_in_flight.max(1)),
        }
    }

    /// The load's level as the tables show it: callers for a closed loop,
    /// the target rate (calls/s) for an open one.
    pub fn level(&self) -> u32 {
        match self {
            Load::Closed(c) => c.workers,
            Load::Open(o) => o.schedule.peak_rate().round() as u32,
        }
    }

    /// A short description for tables.
    pub fn describe(&self) -> String {
        match self {
            Load::Closed(c) if c.outstanding > 1 => {
                format!(
                    "closed loop, {:?} shape, async style ({} in flight per worker)",
                    c.shape, c.outstanding
                )
            }
            Load::Closed(c) => format!("closed loop, {:?} shape", c.shape),
            Load::Open(o) => format!("open loop, {}", o.schedule.describe()),
        }
    }
}

/// Open loop: calls are due at times set by the schedule, and each call's
/// latency is measured from when it was *due*, not from when it was sent
/// (wrk2's correction for coordinated omission). A stalled server therefore
/// shows as latency, not as fewer requests.
///
/// `max_in_flight` senders share `connections` connections; when all are
/// busy, due calls wait and their waiting counts (the send lag).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenLoop {
    pub schedule: Schedule,
    pub connections: u32,
    pub max_in_flight: u32,
    /// Length of the measurement window.
    pub seconds: f64,
}

/// When calls are due.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "arrival", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Schedule {
    /// Evenly spaced calls at `rate` per second.
    Constant { rate: f64 },
    /// A Poisson process of `rate` calls per second (exponential gaps).
    Poisson { rate: f64 },
    /// Constant rates held for given durations, one after the other; the
    /// last rate holds until the window ends.
    Steps { steps: Vec<Step> },
    /// A rate changing linearly from `from` to `to` over the window.
    Ramp { from: f64, to: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub rate: f64,
    pub seconds: f64,
}

impl Schedule {
    /// The rate due `t` seconds into the window (`window` long).
    pub fn rate_at(&self, t: f64, window: f64) -> f64 {
        match self {
            Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate,
            Schedule::Steps { steps } => {
                let mut start = 0.0;
                for step in steps {
                    if t < start + step.seconds {
                        return step.rate;
                    }
                    start += step.seconds;
                }
                steps.last().map_or(0.0, |s| s.rate)
            }
            Schedule::Ramp { from, to } => {
                let f = if window > 0.0 {
                    (t / window).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                from + (to - from) * f
            }
        }
    }

    pub fn peak_rate(&self) -> f64 {
        match self {
            Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate,
            Schedule::Steps { steps } => steps.iter().map(|s| s.rate).fold(0.0, f64::max),
            Schedule::Ramp { from, to } => from.max(*to),
        }
    }

    pub fn is_poisson(&self) -> bool {
        matches!(self, Schedule::Poisson { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Schedule::Constant { rate } => format!("constant {rate}/s"),
            Schedule::Poisson { rate } => format!("Poisson {rate}/s"),
            Schedule::Steps { steps } => {
                let parts: Vec<String> = steps
                    .iter()
                    .map(|s| format!("{}/s for {} s", s.rate, s.seconds))
                    .collect();
                format!("steps {}", parts.join(", "))
            }
            Schedule::Ramp { from, to } => format!("ramp {from}/s to {to}/s"),
        }
    }
}

/// Closed loop: `workers` concurrent callers over `connections` connections
/// (worker `i` uses connection `i % connections`).
///
/// The seeds' shapes are all instances of this (see [`Shape`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    pub shape: Shape,
    pub workers: u32,
    pub connections: u32,
    pub stop: Stop,
    /// Calls each worker keeps in flight. 1 is the synchronous style (a
    /// thread blocked on its call); more is the asynchronous, callback style
    /// of seed 003, where a worker fires calls without waiting for replies.
    #[serde(default = "one_outstanding")]
    pub outstanding: u32,
}

fn one_outstanding() -> u32 {
    1
}

impl ClosedLoop {
    /// The asynchronous style: each worker keeps `outstanding` calls in flight.
    pub fn with_outstanding(mut self, outstanding: u32) -> ClosedLoop {
        self.outstanding = outstanding.max(1);
        self
    }

    /// Concurrent callers in all: workers times calls in flight per worker.
    pub fn callers(&self) -> u32 {
        self.workers * self.outstanding.max(1)
    }
}

/// When the measurement window of a closed loop ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Stop {
    /// Every worker makes this many calls (seed 001: 300000 per client).
    CallsPerWorker(u64),
    /// The workers drain a shared queue of this many calls (seed 003).
    TotalCalls(u64),
    /// The window lasts this long.
    Seconds(f64),
}

/// How the seeds arranged their concurrent callers. Each maps to a number of
/// workers and connections; the name is kept in results so a reader knows
/// which shape produced a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// N threads sharing one client and its connection (seeds 000, 002).
    SharedClient,
    /// N independent client programs, each with its own connection (seed 001).
    ClientPrograms,
    /// N pool workers draining queued calls over one shared proxy (seed 003).
    ThreadPool,
    /// N users sharing a pool of connections (seed 004).
    Users,
}

/// The connection pool the users of the `users` shape share: at least
/// `min` connections are open whatever the users, and it grows with them
/// up to `max` (seed 004: "最大连接数：200；最小连接数：100", a maximum of
/// 200 and a minimum of 100 connections).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    pub min: u32,
    pub max: u32,
}

impl Pool {
    /// A pool of exactly `n` connections.
    pub fn fixed(n: u32) -> Pool {
        Pool { min: n, max: n }
    }

    /// Open connections for `users` users: the users' number, kept within
    /// [`min`, `max`]. Fewer users than `min` leave connections idle.
    pub fn connections(self, users: u32) -> u32 {
        users.min(self.max).max(self.min).max(1)
    }

    pub fn validate(self) -> Result<(), String> {
        if self.min == 0 || self.max < self.min {
            return Err(format!(
                "a pool needs 1 <= min <= max, got min {} and max {}",
                self.min, self.max
            ));
        }
        Ok(())
    }
}

impl Shape {
    /// Workers and connections for `concurrency` callers. `pool` is the
    /// connection pool of the `users` shape (absent: one connection per
    /// user).
    pub fn closed(self, concurrency: u32, pool: Option<Pool>, stop: Stop) -> ClosedLoop {
        let connections = match self {
            Shape::SharedClient | Shape::ThreadPool => 1,
            Shape::ClientPrograms => concurrency,
            Shape::Users => pool.map_or(concurrency, |p| p.connections(concurrency)),
        };
        ClosedLoop {
            shape: self,
            workers: concurrency.max(1),
            connections: connections.max(1),
            stop,
            outstanding: 1,
        }
    }
}

impl CellSpec {
    /// Checks what serde cannot: positive counts and durations.
    pub fn validate(&self) -> Result<(), String> {
        let c = match &self.load {
            Load::Closed(c) => c,
            Load::Open(o) => {
                if o.connections == 0 || o.max_in_flight == 0 {
                    return Err("connections and max_in_flight must be at least 1".into());
                }
                if !(o.seconds > 0.0 && o.seconds.is_finite()) {
                    return Err("the open-loop window needs a positive duration".into());
                }
                let rates_ok = match &o.schedule {
                    Schedule::Constant { rate } | Schedule::Poisson { rate } => *rate > 0.0,
                    Schedule::Steps { steps } => {
                        !steps.is_empty() && steps.iter().all(|s| s.rate > 0.0 && s.seconds > 0.0)
                    }
                    Schedule::Ramp { from, to } => *from > 0.0 && *to > 0.0,
                };
                if !rates_ok {
                    return Err(
                        "every rate (and step duration) of the schedule must be positive".into(),
                    );
                }
                return self.validate_common();
            }
        };
        if c.workers == 0 || c.connections == 0 || c.outstanding == 0 {
            return Err("workers, connections and outstanding calls must be at least 1".into());
        }
        match c.stop {
            Stop::CallsPerWorker(0) | Stop::TotalCalls(0) => {
                return Err("the measurement window needs at least one call".into())
            }
            Stop::Seconds(s) if s <= 0.0 || !s.is_finite() => {
                return Err("the measurement window needs a positive duration".into())
            }
            _ => {}
        }
        self.validate_common()
    }

    fn validate_common(&self) -> Result<(), String> {
        if !(self.warmup_s >= 0.0 && self.cooldown_s >= 0.0) {
            return Err("warm-up and cool-down must be zero or positive seconds".into());
        }
        if self.timeout_ms == 0 {
            return Err("timeout_ms must be positive".into());
        }
        if let Some(max) = self.warmup_max_s {
            if !(max >= self.warmup_s && max.is_finite()) {
                return Err("warmup_max_s must be at least warmup_s".into());
            }
        }
        if let Some(s) = self.steady {
            let positive = |x: f64| x.is_finite() && x > 0.0;
            if s.intervals == 0 || !positive(s.tolerance) || !positive(s.interval_s) {
                return Err(
                    "the steady rule needs intervals >= 1, a positive tolerance and a positive interval"
                        .into(),
                );
            }
            let needed = f64::from(s.intervals_needed()) * s.interval_s;
            // A cell that measures its connection set-up has no warm-up.
            if !self.include_connect && self.warmup_limit_s() < needed {
                return Err(format!(
                    "the steady rule compares two blocks of {} interval(s) of {} s, so it needs a warm-up of at least {needed} s, and warmup_max_s is {} s: raise warmup_max_s or lower steady_intervals",
                    s.intervals,
                    s.interval_s,
                    self.warmup_limit_s()
                ));
            }
        }
        Ok(())
    }
}

impl CellSpec {
    /// The longest the warm-up may last (see [`CellSpec::warmup_max_s`]).
    pub fn warmup_limit_s(&self) -> f64 {
        warmup_limit_s(self.warmup_s, self.warmup_max_s)
    }
}

/// The longest warm-up: `warmup_max_s`, or without it `warmup_s` plus a
/// minute for connections that have not answered yet.
pub fn warmup_limit_s(warmup_s: f64, warmup_max_s: Option<f64>) -> f64 {
    warmup_max_s.unwrap_or(warmup_s + 60.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_needs_two_blocks_of_k_intervals_that_do_not_drift() {
        let rule = Steady {
            intervals: 3,
            tolerance: 0.03,
            interval_s: 1.0,
        };
        let many = [40_000u64; 12];
        // Fewer than 2k intervals: not yet.
        assert!(!rule.reached(&[3000.0; 5], &many[..5]));
        assert!(rule.reached(&[3000.0; 6], &many[..6]));
        // A flat level that scatters by ±6 % from one interval to the next
        // is steady (thrift-java 0.9.2 at one client, measured, in another
        // order: as measured, its halves are 4.4 % apart)...
        let flat = [40550.0, 45330.0, 41103.0, 43304.0, 40174.0, 43270.0];
        assert!(rule.reached(&flat, &many[..6]));
        let measured = [40550.0, 40174.0, 43304.0, 45330.0, 43270.0, 41103.0];
        assert!(!rule.reached(&measured, &many[..6]));
        // ...a climb is not, however regular (a cold servlet, measured)...
        let cold = [1937.0, 9568.0, 11084.0, 11743.0, 14056.0, 12715.0];
        assert!(!rule.reached(&cold, &many[..6]));
        assert!(!rule.reached(
            &[1000.0, 1020.0, 1040.0, 1060.0, 1080.0, 1100.0],
            &many[..6]
        ));
        // ...and only the last 2k intervals count: a plateau after a climb.
        let settled = [
            500.0, 1000.0, 2000.0, 3000.0, 2990.0, 3010.0, 3000.0, 3005.0, 3000.0,
        ];
        assert!(!rule.reached(&settled[..8], &many[..8]));
        assert!(rule.reached(&settled, &many[..9]));
        // Blocks of 150 calls carry ±8 % of counting noise: within it...
        assert!(rule.reached(
            &[50.0, 45.0, 54.0, 48.0, 52.0, 47.0],
            &[50, 45, 54, 48, 52, 47]
        ));
        // ...but a doubling through a few hundred calls per second is not.
        assert!(!rule.reached(
            &[150.0, 183.0, 216.0, 190.0, 260.0, 320.0],
            &[150, 183, 216, 190, 260, 320]
        ));
        // An interval without calls is never steady.
        assert!(!rule.reached(&[0.0; 6], &[0; 6]));
        let mut one_empty = many;
        one_empty[3] = 0;
        assert!(!rule.reached(&[3000.0; 6], &one_empty[..6]));
    }

    #[test]
    fn a_warm_up_limit_too_short_for_the_steady_rule_is_refused() {
        let spec = |intervals| CellSpec {
            protocol: "grpc".into(),
            target: "127.0.0.1:1".into(),
            operation: Operation::Hello,
            load: Load::Closed(Shape::ClientPrograms.closed(1, None, Stop::Seconds(1.0))),
            warmup_s: 0.0,
            warmup_calls: 0,
            warmup_max_s: Some(3.0),
            steady: Some(Steady {
                intervals,
                tolerance: 0.05,
                interval_s: 1.0,
            }),
            min_calls: DEFAULT_MIN_CALLS,
            percentiles: Vec::new(),
            cooldown_s: 0.0,
            timeout_ms: 5000,
            include_connect: false,
            options: BTreeMap::new(),
            engine: EngineChoice::Auto,
        };
        let err = spec(2).validate().unwrap_err();
        assert!(err.contains("at least 4 s"), "{err}");
        spec(1).validate().unwrap();
    }

    #[test]
    fn users_share_a_pool_kept_within_its_minimum_and_maximum() {
        let pool = Pool { min: 100, max: 200 };
        let stop = Stop::Seconds(1.0);
        let open = |users| Shape::Users.closed(users, Some(pool), stop);
        // 50 users: the pool's minimum is open, half of it idle.
        assert_eq!(open(50).connections, 100);
        assert_eq!(Load::Closed(open(50)).used_connections(), 50);
        assert_eq!(open(100).connections, 100);
        assert_eq!(open(150).connections, 150);
        assert_eq!(open(200).connections, 200);
        // More users than the maximum share its connections.
        assert_eq!(open(300).connections, 200);
        assert_eq!(Load::Closed(open(300)).used_connections(), 200);
        assert_eq!(Shape::Users.closed(8, None, stop).connections, 8);
        assert_eq!(
            Shape::Users
                .closed(64, Some(Pool::fixed(4)), stop)
                .connections,
            4
        );
        assert!(Pool { min: 3, max: 2 }.validate().is_err());
        assert!(Pool { min: 0, max: 2 }.validate().is_err());
        assert!(pool.validate().is_ok());
    }

    #[test]
    fn steps_hold_each_rate_for_its_duration_then_the_last() {
        let s = Schedule::Steps {
            steps: vec![
                Step {
                    rate: 100.0,
                    seconds: 1.0,
                },
                Step {
                    rate: 200.0,
                    seconds: 2.0,
                },
            ],
        };
        assert_eq!(s.rate_at(0.5, 10.0), 100.0);
        assert_eq!(s.rate_at(1.5, 10.0), 200.0);
        assert_eq!(s.rate_at(9.0, 10.0), 200.0);
        assert_eq!(s.peak_rate(), 200.0);
    }

    #[test]
    fn ramp_interpolates_over_the_window() {
        let s = Schedule::Ramp {
            from: 100.0,
            to: 300.0,
        };
        assert_eq!(s.rate_at(0.0, 10.0), 100.0);
        assert_eq!(s.rate_at(5.0, 10.0), 200.0);
        assert_eq!(s.rate_at(20.0, 10.0), 300.0);
    }

    #[test]
    fn load_specs_round_trip_through_json() {
        let load = Load::Open(OpenLoop {
            schedule: Schedule::Poisson { rate: 1000.0 },
            connections: 2,
            max_in_flight: 64,
            seconds: 5.0,
        });
        let json = serde_json::to_string(&load).unwrap();
        assert!(
            json.contains("\"model\":\"open\"") && json.contains("\"arrival\":\"poisson\""),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Load>(&json).unwrap(), load);
    }
}
